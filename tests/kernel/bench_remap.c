// SPDX-License-Identifier: GPL-2.0
/*
 * bench_remap: what it costs to rearrange the pages of a shared memfd
 * mapping, per page, four ways (the benchmark):
 *
 *   remap     remap_file_pages() of one page per call, reverse order, with
 *             MAP_NONBLOCK (offsets only: nonlinear ptes, or one VMA per
 *             call with the stock emulation)
 *   fault     then touching every remapped page once (one fault each)
 *   remap+pop remap_file_pages() without MAP_NONBLOCK (each call also
 *             populates its page), on an already nonlinear mapping
 *   mmap      mmap(MAP_FIXED|MAP_SHARED) of one file page per call, reverse
 *             order (the userspace way: one VMA per page)
 *   mprotect  mprotect(PROT_READ) of every other page of one big VMA (one
 *             call per protected page; splits the VMA each time)
 *
 * with the number of VMAs the mapping has afterwards.  File pages are
 * allocated (written) beforehand, so faults only map existing pages.  Each
 * figure is the median of the repetitions (at least REPS, and enough for
 * ~60000 pages per column: 60 runs of 1000 pages).  A call failing (ENOMEM at
 * vm.max_map_count on the stock kernel) stops that measurement and is
 * reported.
 *
 *   bench_remap [-r REPS] [-k] [-t SECONDS] [PAGES...]
 *                                      default: -r 3 1000 10000 60000
 *     -k   also print one "key=value" line per size (for scripts)
 *     -t   time mode, for comparing kernels: for each size, repeat only the
 *          remap / fault / remap+pop cycle on fresh mappings for SECONDS
 *          and print the mean of each column (a median of a few short runs
 *          moves too much in a TCG guest to show a 10% change)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench_clock.h"

#ifndef MAP_NONBLOCK
#define MAP_NONBLOCK 0x10000
#endif

static size_t page;

static long count_vmas(const char *start, size_t len)
{
	uintptr_t lo0 = (uintptr_t)start, hi0 = lo0 + len;
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[512];
	long count = 0;

	if (!maps)
		return -1;
	while (fgets(line, sizeof(line), maps)) {
		uintptr_t lo, hi;

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR, &lo, &hi) == 2 && lo < hi0 && hi > lo0)
			count++;
	}
	fclose(maps);
	return count;
}

static int remap(void *start, size_t size, size_t pgoff, int flags)
{
	return (int)syscall(__NR_remap_file_pages, start, size, 0, pgoff, flags);
}

/* One measurement: ns per operation, VMAs after, and how it ended. */
struct result {
	double ns;
	long vmas;
	long done, want;
	int err;
	int bad; /* pages with wrong contents (remap and fault) */
};

struct row {
	struct result remap, fault, remap_pop, mmap, mprotect;
};

static int memfd_pages(size_t n)
{
	int fd = memfd_create("bench_remap", MFD_CLOEXEC);
	char *m;

	if (fd < 0 || ftruncate(fd, (off_t)(n * page)))
		return -1;
	/* Allocate and stamp every page: page j holds j. */
	m = mmap(NULL, n * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return -1;
	for (size_t j = 0; j < n; j++)
		*(uint64_t *)(m + j * page) = j;
	munmap(m, n * page);
	return fd;
}

/* remap (MAP_NONBLOCK), fault, remap+populate. */
static void bench_remap(int fd, size_t n, struct row *row)
{
	char *m = mmap(NULL, n * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	double t0, t1;
	size_t i, done = 0;
	uint64_t sum = 0;

	memset(row, 0, sizeof(*row) - 2 * sizeof(struct result));
	if (m == MAP_FAILED) {
		row->remap.err = errno;
		return;
	}
	row->remap.want = row->fault.want = row->remap_pop.want = (long)n;
	t0 = now_ns();
	for (i = n; i-- > 0;) {
		if (remap(m + i * page, page, n - 1 - i, MAP_NONBLOCK)) {
			row->remap.err = errno;
			break;
		}
		done++;
	}
	t1 = now_ns();
	row->remap.done = (long)done;
	row->remap.ns = (t1 - t0) / (done ?: 1);
	row->remap.vmas = count_vmas(m, n * page);

	/* Touch every page once: remapped ones fault in their new page. */
	t0 = now_ns();
	for (i = 0; i < n; i++)
		sum += *(volatile uint64_t *)(m + i * page);
	t1 = now_ns();
	row->fault.done = (long)n;
	row->fault.ns = (t1 - t0) / n;
	row->fault.vmas = row->remap.vmas;
	for (i = 0; i < n; i++) {
		uint64_t want = i >= n - done ? n - 1 - i : i;

		row->fault.bad += *(uint64_t *)(m + i * page) != want;
	}
	(void)sum;

	/* Back to the linear order, populating, on the (nonlinear) mapping. */
	done = 0;
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		if (remap(m + i * page, page, i, 0)) {
			row->remap_pop.err = errno;
			break;
		}
		done++;
	}
	t1 = now_ns();
	row->remap_pop.done = (long)done;
	row->remap_pop.ns = (t1 - t0) / (done ?: 1);
	row->remap_pop.vmas = count_vmas(m, n * page);
	munmap(m, n * page);
}

/* mmap(MAP_FIXED) of one file page per call, reverse order. */
static void bench_mmap(int fd, size_t n, struct result *r)
{
	char *m = mmap(NULL, n * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	size_t i, done = 0;
	double t0, t1;

	memset(r, 0, sizeof(*r));
	r->want = (long)n;
	if (m == MAP_FAILED) {
		r->err = errno;
		return;
	}
	t0 = now_ns();
	for (i = n; i-- > 0;) {
		if (mmap(m + i * page, page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
			 (off_t)((n - 1 - i) * page)) == MAP_FAILED) {
			r->err = errno;
			break;
		}
		done++;
	}
	t1 = now_ns();
	r->done = (long)done;
	r->ns = (t1 - t0) / (done ?: 1);
	r->vmas = count_vmas(m, n * page);
	for (i = 0; i < n; i++)
		r->bad += *(volatile uint64_t *)(m + i * page) != (i >= n - done ? n - 1 - i : i);
	munmap(m, n * page);
}

/* mprotect(PROT_READ) of every other page of one populated VMA. */
static void bench_mprotect(int fd, size_t n, struct result *r)
{
	char *m = mmap(NULL, n * page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	size_t i, done = 0;
	double t0, t1;

	memset(r, 0, sizeof(*r));
	r->want = (long)(n / 2);
	if (m == MAP_FAILED) {
		r->err = errno;
		return;
	}
	t0 = now_ns();
	for (i = 0; i < n; i += 2) {
		if (mprotect(m + i * page, page, PROT_READ)) {
			r->err = errno;
			break;
		}
		done++;
	}
	t1 = now_ns();
	r->done = (long)done;
	r->ns = (t1 - t0) / (done ?: 1);
	r->vmas = count_vmas(m, n * page);
	munmap(m, n * page);
}

/*
 * Time mode: remap, fault and remap+pop of @n pages on fresh mappings for
 * @secs seconds; the mean ns per page of each column.  Returns 0, or 1
 * after printing why a cycle failed.
 */
static int bench_remap_for(int fd, size_t n, int secs, struct row *mean, long *cycles)
{
	double end = now_ns() + secs * 1e9;
	struct row one;

	memset(mean, 0, sizeof(*mean));
	*cycles = 0;
	do {
		bench_remap(fd, n, &one);
		if (one.remap.err || one.remap_pop.err || one.fault.bad) {
			printf("# %zu pages: a cycle failed: %s, %d pages with wrong contents\n", n,
			       strerror(one.remap.err ?: one.remap_pop.err), one.fault.bad);
			return 1;
		}
		mean->remap.ns += one.remap.ns;
		mean->fault.ns += one.fault.ns;
		mean->remap_pop.ns += one.remap_pop.ns;
		mean->remap.vmas = one.remap.vmas;
		mean->remap_pop.vmas = one.remap_pop.vmas;
		(*cycles)++;
	} while (now_ns() < end);
	mean->remap.ns /= (double)*cycles;
	mean->fault.ns /= (double)*cycles;
	mean->remap_pop.ns /= (double)*cycles;
	return 0;
}

/* The repetition with the median ns of one column. */
static struct result median(struct row *rows, int reps, size_t column)
{
	double ns[64];
	int k;

	for (k = 0; k < reps; k++)
		ns[k] = ((struct result *)((char *)&rows[k] + column))->ns;
	qsort(ns, reps, sizeof(ns[0]), cmp_double);
	for (k = 0; k < reps; k++)
		if (((struct result *)((char *)&rows[k] + column))->ns == ns[reps / 2])
			break;
	return *(struct result *)((char *)&rows[k] + column);
}

static void cell(char *buf, size_t size, const struct result *r)
{
	if (r->done == 0 && r->err)
		snprintf(buf, size, "%s", strerrorname_np(r->err) ?: "error");
	else
		snprintf(buf, size, "%.0f%s", r->ns, r->done < r->want ? "*" : "");
}

int main(int argc, char **argv)
{
	size_t sizes[16] = { 1000, 10000, 60000 };
	int nsizes = 3, reps = 3, keys = 0, secs = 0, opt;
	struct row rows[64], med;
	struct utsname u;
	long max_map = -1;
	FILE *f;

	page = (size_t)sysconf(_SC_PAGESIZE);
	while ((opt = getopt(argc, argv, "r:kt:h")) != -1) {
		switch (opt) {
		case 'r':
			reps = atoi(optarg);
			break;
		case 'k':
			keys = 1;
			break;
		case 't':
			secs = atoi(optarg);
			if (secs < 1 || secs > 3600) {
				fprintf(stderr, "%s: -t takes 1..3600 seconds\n", argv[0]);
				return 2;
			}
			break;
		default:
			fprintf(stderr, "usage: %s [-r REPS] [-k] [-t SECONDS] [PAGES...]\n", argv[0]);
			return 2;
		}
	}
	if (reps < 1 || reps > 64) {
		fprintf(stderr, "%s: -r takes 1..64\n", argv[0]);
		return 2;
	}
	if (optind < argc) {
		nsizes = 0;
		for (; optind < argc && nsizes < 16; optind++) {
			long v = atol(argv[optind]);

			if (v < 2) {
				fprintf(stderr, "%s: bad page count '%s'\n", argv[0], argv[optind]);
				return 2;
			}
			sizes[nsizes++] = (size_t)v;
		}
	}
	if (uname(&u))
		strcpy(u.release, "unknown");
	f = fopen("/proc/sys/vm/max_map_count", "r");
	if (f) {
		if (fscanf(f, "%ld", &max_map) != 1)
			max_map = -1;
		fclose(f);
	}

	pick_timer();
	if (secs) {
		printf("# bench_remap: kernel %s, %ld CPUs, time mode: mean over %d s of remap / fault / "
		       "remap+pop cycles on fresh mappings\n# ns per page\n%8s | %9s %9s %9s | %7s\n",
		       u.release, sysconf(_SC_NPROCESSORS_ONLN), secs, "pages", "remap", "fault",
		       "remap+pop", "cycles");
		for (int s = 0; s < nsizes; s++) {
			int fd = memfd_pages(sizes[s]);
			long cycles;

			if (fd < 0) {
				printf("%8zu | cannot create the memfd: %s\n", sizes[s], strerror(errno));
				return 1;
			}
			if (bench_remap_for(fd, sizes[s], secs, &med, &cycles))
				return 1;
			printf("%8zu | %9.0f %9.0f %9.0f | %7ld\n", sizes[s], med.remap.ns, med.fault.ns,
			       med.remap_pop.ns, cycles);
			if (keys)
				printf("bench kernel=%s pages=%zu mode=time seconds=%d cycles=%ld remap_ns=%.1f "
				       "fault_ns=%.1f remap_pop_ns=%.1f remap_vmas=%ld\n",
				       u.release, sizes[s], secs, cycles, med.remap.ns, med.fault.ns,
				       med.remap_pop.ns, med.remap.vmas);
			fflush(stdout);
			close(fd);
		}
		return 0;
	}
	printf("# bench_remap: kernel %s, %ld CPUs, vm.max_map_count %ld, median of %d runs (more for small sizes)\n",
	       u.release, sysconf(_SC_NPROCESSORS_ONLN), max_map, reps);
	if (tsc_per_ns > 0)
		printf("# timer: TSC at %.3f GHz (CLOCK_MONOTONIC has a %ld ns resolution)\n", tsc_per_ns, clock_res_ns);
	else
		printf("# timer: CLOCK_MONOTONIC (resolution %ld ns)\n", clock_res_ns);
	printf("# ns per page (per call); VMAs: the mapping's VMAs afterwards; * = stopped early (see notes)\n");
	printf("%8s | %9s %9s %6s | %9s %6s | %9s %6s | %9s %6s\n", "pages", "remap", "fault", "VMAs",
	       "remap+pop", "VMAs", "mmap", "VMAs", "mprotect", "VMAs");
	for (int s = 0; s < nsizes; s++) {
		size_t n = sizes[s];
		int fd = memfd_pages(n);
		char c[5][32];

		if (fd < 0) {
			printf("%8zu | cannot create the memfd: %s\n", n, strerror(errno));
			continue;
		}
		/* Small sizes get more runs: at least ~60000 pages per column in all. */
		int r = reps;

		if ((size_t)r * n < 60000)
			r = (int)((60000 + n - 1) / n);
		if (r > 63)
			r = 63;
		for (int k = 0; k < r; k++) {
			bench_remap(fd, n, &rows[k]);
			bench_mmap(fd, n, &rows[k].mmap);
			bench_mprotect(fd, n, &rows[k].mprotect);
		}
		med.remap = median(rows, r, offsetof(struct row, remap));
		med.fault = median(rows, r, offsetof(struct row, fault));
		med.remap_pop = median(rows, r, offsetof(struct row, remap_pop));
		med.mmap = median(rows, r, offsetof(struct row, mmap));
		med.mprotect = median(rows, r, offsetof(struct row, mprotect));
		cell(c[0], sizeof(c[0]), &med.remap);
		cell(c[1], sizeof(c[1]), &med.fault);
		cell(c[2], sizeof(c[2]), &med.remap_pop);
		cell(c[3], sizeof(c[3]), &med.mmap);
		cell(c[4], sizeof(c[4]), &med.mprotect);
		printf("%8zu | %9s %9s %6ld | %9s %6ld | %9s %6ld | %9s %6ld\n", n, c[0], c[1], med.remap.vmas,
		       c[2], med.remap_pop.vmas, c[3], med.mmap.vmas, c[4], med.mprotect.vmas);
		{
			const char *names[5] = { "remap", "fault", "remap+pop", "mmap", "mprotect" };
			struct result *rs[5] = { &med.remap, &med.fault, &med.remap_pop, &med.mmap, &med.mprotect };

			for (int k = 0; k < 5; k++) {
				if (rs[k]->done < rs[k]->want)
					printf("#   %zu pages, %s: stopped after %ld of %ld calls: %s\n", n, names[k],
					       rs[k]->done, rs[k]->want, strerror(rs[k]->err));
				if (rs[k]->bad)
					printf("#   %zu pages, %s: %d pages with wrong contents!\n", n, names[k], rs[k]->bad);
			}
		}
		if (keys)
			printf("bench kernel=%s pages=%zu remap_ns=%.1f remap_done=%ld remap_vmas=%ld fault_ns=%.1f "
			       "remap_pop_ns=%.1f remap_pop_vmas=%ld mmap_ns=%.1f mmap_done=%ld mmap_vmas=%ld "
			       "mprotect_ns=%.1f mprotect_done=%ld mprotect_vmas=%ld\n",
			       u.release, n, med.remap.ns, med.remap.done, med.remap.vmas, med.fault.ns,
			       med.remap_pop.ns, med.remap_pop.vmas, med.mmap.ns, med.mmap.done, med.mmap.vmas,
			       med.mprotect.ns, med.mprotect.done, med.mprotect.vmas);
		fflush(stdout);
		close(fd);
	}
	return 0;
}
