// SPDX-License-Identifier: GPL-2.0
/*
 * bench_guard: what a guard page costs, installed and removed, three ways,
 * with G guards on every other page of one large shared memfd mapping
 * (2G + 1 pages; the benchmark):
 *
 *   chgprot   remap_file_pages(page, PROT_NONE, pgoff, MAP_CHGPROT) to
 *             install, the same with the VMA's PROT_READ|PROT_WRITE (and
 *             MAP_NONBLOCK: nothing is faulted in) to remove; one VMA
 *   mprotect  mprotect(page, PROT_NONE), then back to PROT_READ|PROT_WRITE:
 *             each guard splits the VMA (2G + 1 VMAs), removal merges back
 *   mmap      munmap(page) + mmap(MAP_FIXED|MAP_PRIVATE|MAP_ANONYMOUS,
 *             PROT_NONE) to install, munmap + mmap(MAP_FIXED|MAP_SHARED) of
 *             the file page to remove: the way page-guard allocators do it
 *
 * For each: ns per guard installed and removed (median of the runs), the
 * process's VMAs (lines of /proc/self/maps) with the guards in place, and
 * the vm_area_struct slab's active objects (/proc/slabinfo, root only)
 * then, as a difference from before the install.  A call failing (ENOMEM
 * at vm.max_map_count) stops that column and is reported with the guard it
 * stopped at.  Three guards of each run are probed (SIGSEGV) and three data
 * pages read, so a method that does not really guard is reported.
 *
 *   bench_guard [-r REPS] [-M MAX_MAP_COUNT] [-k] [GUARDS...]
 *       default: -r 3 1000 10000 50000
 *     -M  set vm.max_map_count first (root; restored at exit), so that the
 *         VMA-splitting methods can reach 50,000 guards (~100,000 VMAs)
 *     -k  also print one "key=value" line per size and method (for scripts)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench_clock.h"
#include "bench_nonlinear.h"

static size_t page;

/* Lines of /proc/self/maps: the process's VMAs. */
static long total_vmas(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	long n = 0;
	int c;

	if (!f)
		return -1;
	while ((c = getc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/* Active objects of the vm_area_struct slab (-1 when /proc/slabinfo is not readable). */
static long vma_slab_active(void)
{
	FILE *f = fopen("/proc/slabinfo", "r");
	char line[512];
	long v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "vm_area_struct ", 15) && sscanf(line + 15, "%ld", &v) == 1)
			break;
	fclose(f);
	return v;
}

/*
 * The vm_area_struct count once freed VMAs have left the slab: 6.12 frees
 * them after an RCU grace period, so a count taken right after many
 * munmap()s or merges still holds them.  Waits until two readings 20 ms
 * apart agree (at most about a second).
 */
static long vma_slab_settled(void)
{
	long prev = vma_slab_active(), cur;

	for (int i = 0; i < 50 && prev >= 0; i++) {
		usleep(20000);
		cur = vma_slab_active();
		if (cur == prev)
			break;
		prev = cur;
	}
	return prev;
}

static int write_long(const char *path, long v)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -1;
	ret = fprintf(f, "%ld\n", v) < 0;
	return fclose(f) || ret ? -1 : 0;
}

/* --- probing that a guard is one ---------------------------------------------- */

static sigjmp_buf probe_jmp;

static void probe_handler(int sig)
{
	siglongjmp(probe_jmp, sig);
}

/* 0 if the byte at @p reads fine, else the signal. */
static int probe(const char *p)
{
	struct sigaction sa, old_segv, old_bus;
	int sig;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = probe_handler;
	sa.sa_flags = SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old_segv);
	sigaction(SIGBUS, &sa, &old_bus);
	sig = sigsetjmp(probe_jmp, 0);
	if (!sig)
		(void)*(const volatile char *)p;
	sigaction(SIGSEGV, &old_segv, NULL);
	sigaction(SIGBUS, &old_bus, NULL);
	return sig;
}

/* --- the three methods ---------------------------------------------------------- */

enum method { M_CHGPROT, M_MPROTECT, M_MMAP, M_COUNT };
static const char *const method_name[M_COUNT] = { "chgprot", "mprotect", "mmap" };

struct result {
	double install_ns, remove_ns; /* per guard */
	long installed, want;	      /* guards installed / asked for */
	int err;		      /* errno of the call that stopped the install */
	long vmas, vmas_before;	      /* /proc/self/maps lines with the guards in place / before */
	long slab, slab_before;	      /* vm_area_struct active objects */
	int bad;		      /* probes that went wrong */
};

static int install(enum method m, int fd, char *map, size_t i)
{
	char *p = map + i * page;

	switch (m) {
	case M_CHGPROT:
		return (int)syscall(__NR_remap_file_pages, p, page, PROT_NONE, i, MAP_CHGPROT);
	case M_MPROTECT:
		return mprotect(p, page, PROT_NONE);
	default:
		(void)fd;
		if (munmap(p, page))
			return -1;
		return mmap(p, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == p ? 0 : -1;
	}
}

static int uninstall(enum method m, int fd, char *map, size_t i)
{
	char *p = map + i * page;

	switch (m) {
	case M_CHGPROT:
		return (int)syscall(__NR_remap_file_pages, p, page, PROT_READ | PROT_WRITE, i,
				    MAP_CHGPROT | MAP_NONBLOCK);
	case M_MPROTECT:
		return mprotect(p, page, PROT_READ | PROT_WRITE);
	default:
		if (munmap(p, page))
			return -1;
		return mmap(p, page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, (off_t)(i * page)) == p ? 0
														      : -1;
	}
}

/* One run: @g guards on the odd pages of a fresh (2g + 1)-page mapping of @fd. */
static void run(enum method m, int fd, size_t g, struct result *r)
{
	size_t n = 2 * g + 1, done = 0, k;
	double t0, t1;
	char *map;

	memset(r, 0, sizeof(*r));
	r->want = (long)g;
	map = mmap(NULL, n * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		r->err = errno;
		return;
	}
	r->vmas_before = total_vmas();
	r->slab_before = vma_slab_settled();
	t0 = now_ns();
	for (k = 0; k < g; k++) {
		if (install(m, fd, map, 2 * k + 1)) {
			r->err = errno;
			break;
		}
		done++;
	}
	t1 = now_ns();
	r->installed = (long)done;
	r->install_ns = (t1 - t0) / (done ?: 1);
	r->vmas = total_vmas();
	r->slab = vma_slab_settled();
	/* The first, a middle and the last guard fault; their neighbours read. */
	if (done) {
		size_t idx[3] = { 0, done / 2, done - 1 };

		for (int j = 0; j < 3; j++) {
			r->bad += probe(map + (2 * idx[j] + 1) * page) != SIGSEGV;
			r->bad += probe(map + 2 * idx[j] * page) != 0;
		}
	}
	t0 = now_ns();
	for (k = 0; k < done; k++)
		if (uninstall(m, fd, map, 2 * k + 1)) {
			r->bad++;
			break;
		}
	t1 = now_ns();
	r->remove_ns = (t1 - t0) / (done ?: 1);
	if (done)
		r->bad += probe(map + (2 * (done / 2) + 1) * page) != 0;
	munmap(map, n * page);
}

/* The run with the median install time (its other figures with it). */
static struct result median(struct result *rs, int reps)
{
	double ns[32];
	int k;

	for (k = 0; k < reps; k++)
		ns[k] = rs[k].install_ns;
	qsort(ns, (size_t)reps, sizeof(ns[0]), cmp_double);
	for (k = 0; k < reps; k++)
		if (rs[k].install_ns == ns[reps / 2])
			break;
	return rs[k];
}

static int memfd_pages(size_t n)
{
	int fd = memfd_create("bench_guard", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	/* Allocate every page: removal by mmap must find the file page there. */
	if (ftruncate(fd, (off_t)(n * page)) || fallocate(fd, 0, 0, (off_t)(n * page))) {
		close(fd);
		return -1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	size_t sizes[16] = { 1000, 10000, 50000 };
	int nsizes = 3, reps = 3, keys = 0, opt;
	long max_map, new_max = -1;
	struct utsname u;

	page = (size_t)sysconf(_SC_PAGESIZE);
	while ((opt = getopt(argc, argv, "r:M:kh")) != -1) {
		switch (opt) {
		case 'r':
			reps = atoi(optarg);
			break;
		case 'M':
			new_max = atol(optarg);
			break;
		case 'k':
			keys = 1;
			break;
		default:
			fprintf(stderr, "usage: %s [-r REPS] [-M MAX_MAP_COUNT] [-k] [GUARDS...]\n", argv[0]);
			return 2;
		}
	}
	if (reps < 1 || reps > 31) {
		fprintf(stderr, "%s: -r takes 1..31\n", argv[0]);
		return 2;
	}
	if (optind < argc) {
		nsizes = 0;
		for (; optind < argc && nsizes < 16; optind++) {
			long v = atol(argv[optind]);

			if (v < 1) {
				fprintf(stderr, "%s: bad guard count '%s'\n", argv[0], argv[optind]);
				return 2;
			}
			sizes[nsizes++] = (size_t)v;
		}
	}
	if (uname(&u))
		strcpy(u.release, "unknown");
	max_map = read_long("/proc/sys/vm/max_map_count");
	if (new_max > 0 && write_long("/proc/sys/vm/max_map_count", new_max)) {
		fprintf(stderr, "%s: cannot set vm.max_map_count to %ld (root only)\n", argv[0], new_max);
		return 2;
	}
	pick_timer();
	printf("# bench_guard: kernel %s, %ld CPUs, vm.max_map_count %ld%s, median of %d runs\n", u.release,
	       sysconf(_SC_NPROCESSORS_ONLN), new_max > 0 ? new_max : max_map,
	       new_max > 0 ? " (raised with -M)" : "", reps);
	if (tsc_per_ns > 0)
		printf("# timer: TSC at %.3f GHz (CLOCK_MONOTONIC resolution %ld ns)\n", tsc_per_ns, clock_res_ns);
	printf("# G guards on every other page of one (2G+1)-page shared memfd mapping; ns per guard;\n"
	       "# VMAs: /proc/self/maps lines with the guards in place (before: in parentheses);\n"
	       "# slab: vm_area_struct active objects then, difference from before\n");
	printf("%7s | %-8s | %10s %10s | %15s | %16s | %s\n", "guards", "method", "install", "remove", "VMAs",
	       "slab (+diff)", "result");
	for (int s = 0; s < nsizes; s++) {
		size_t g = sizes[s];
		int fd = memfd_pages(2 * g + 1);
		struct result rs[32], med;

		if (fd < 0) {
			printf("%7zu | cannot create the memfd: %s\n", g, strerror(errno));
			continue;
		}
		for (int m = 0; m < M_COUNT; m++) {
			char res[96], vm[48], sl[48];

			for (int k = 0; k < reps; k++)
				run((enum method)m, fd, g, &rs[k]);
			med = median(rs, reps);
			if (med.installed < med.want)
				snprintf(res, sizeof(res), "%s at guard %ld", strerrorname_np(med.err) ?: "error",
					 med.installed + 1);
			else
				snprintf(res, sizeof(res), "ok");
			if (med.bad)
				snprintf(res + strlen(res), sizeof(res) - strlen(res), ", %d BAD probes", med.bad);
			snprintf(vm, sizeof(vm), "%ld (%ld)", med.vmas, med.vmas_before);
			if (med.slab >= 0)
				snprintf(sl, sizeof(sl), "%ld (%+ld)", med.slab, med.slab - med.slab_before);
			else
				snprintf(sl, sizeof(sl), "n/a");
			printf("%7zu | %-8s | %10.0f %10.0f | %15s | %16s | %s\n", g, method_name[m], med.install_ns,
			       med.remove_ns, vm, sl, res);
			if (keys)
				printf("benchguard kernel=%s guards=%zu method=%s install_ns=%.1f remove_ns=%.1f "
				       "installed=%ld vmas=%ld vmas_before=%ld slab=%ld slab_before=%ld bad=%d "
				       "max_map_count=%ld\n",
				       u.release, g, method_name[m], med.install_ns, med.remove_ns, med.installed,
				       med.vmas, med.vmas_before, med.slab, med.slab_before, med.bad,
				       new_max > 0 ? new_max : max_map);
			fflush(stdout);
		}
		close(fd);
	}
	if (new_max > 0 && max_map > 0)
		write_long("/proc/sys/vm/max_map_count", max_map);
	return 0;
}
