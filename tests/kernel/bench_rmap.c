// SPDX-License-Identifier: GPL-2.0
/*
 * bench_rmap: the reverse map of nonlinear mappings against linear ones
 * (the figures), in one guest run:
 *
 *   pageout   MADV_PAGEOUT of K pages spread evenly over an M-page mapping
 *             of a memfd, one call per page (each runs one rmap walk and
 *             writes the page to swap), linear and nonlinear, ms per page;
 *             then the nonlinear one again with a sparse 64 TiB nonlinear
 *             vma on the same file (one page every 16 GiB: 4096 page
 *             tables) -- "+64T"
 *   migrate   move_pages() of K spread pages of an M-page mapping to the
 *             other NUMA node (the guest has two), ms per page
 *   punch     fallocate(PUNCH_HOLE) of K mapped pages, ms per page
 *   truncate  ftruncate() away K mapped pages at the end of the file
 *   first64T  the first remap_file_pages() into a fresh 64 TiB vma (the
 *             one that makes it nonlinear), against one into a 2 MiB vma
 *   remap     remap_file_pages() of the nonlinear layout (512 pages per
 *             call), ns per page, and the index memory of faulting in up
 *             to 100,000 of its pages (radix_tree_node slab growth, less
 *             that of a linear mapping faulted in alike, bytes per page)
 *
 * Page-outs and migrations run linear, nonlinear, nonlinear, linear on
 * the same two mappings and report the best of each kind's two runs.
 *
 * The nonlinear layout swaps the two halves of the mapping, 512 pages per
 * call: every page is away from its linear place.
 *
 *   bench_rmap [-k] [-m M,M..] [-n K,K..] [-x K] [-t] [-M] [-s S] [-K lin|nl]
 *              [-R N]
 *     -m  mapping sizes in pages      (default 100000,1000000)
 *     -n  pages paged out per run     (default 2000,20000)
 *     -x  pages migrated/punched      (default 10000)
 *     -k  also print key=value lines (for scripts)
 *     -t  skip the +64T rows
 *     -M  the migrate row only (of the last mapping size), e.g. to profile it
 *     -s  migrate pages S apart      (default: spread over the mapping)
 *     -K  migrate one kind only, 4 times (lin or nl; for perf record)
 *     -R  rounds of the migrate row (default 1, at most 64)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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

#ifndef MAP_NONBLOCK
#define MAP_NONBLOCK 0x10000
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#ifndef MPOL_MF_MOVE
#define MPOL_MF_MOVE (1 << 1)
#endif
#ifndef FALLOC_FL_PUNCH_HOLE
#define FALLOC_FL_KEEP_SIZE 0x01
#define FALLOC_FL_PUNCH_HOLE 0x02
#endif

#define CHUNK 512UL
#define BIG (64ULL << 40)
#define BIG_STEP (16ULL << 30)

static size_t page;
static bool keys;

static int remap(void *start, size_t size, size_t pgoff, int flags)
{
	return (int)syscall(__NR_remap_file_pages, start, size, 0, pgoff, flags);
}

static void die(const char *what)
{
	fprintf(stderr, "bench_rmap: %s: %s\n", what, strerror(errno));
	exit(1);
}

static long slab_bytes(const char *name)
{
	FILE *f = fopen("/proc/slabinfo", "r");
	char line[512];
	long objs = -1, size = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char n[64];
		long active, num, sz;

		if (sscanf(line, "%63s %ld %ld %ld", n, &active, &num, &sz) == 4 && !strcmp(n, name)) {
			objs = active;
			size = sz;
			break;
		}
	}
	fclose(f);
	return objs < 0 ? -1 : objs * size;
}

struct map {
	int fd;
	char *p;
	size_t n;
	double remap_ns;	/* per page, nonlinear layout */
};

/* A memfd of @n pages mapped shared, linear or with its halves swapped */
static struct map map_new(size_t n, bool nonlinear)
{
	struct map m = { .n = n };
	size_t half = n / 2 / CHUNK * CHUNK;
	double t0;

	m.fd = memfd_create("bench_rmap", 0);
	if (m.fd < 0 || ftruncate(m.fd, (off_t)(n * page)))
		die("memfd");
	m.p = mmap(NULL, n * page, PROT_READ | PROT_WRITE, MAP_SHARED, m.fd, 0);
	if (m.p == MAP_FAILED)
		die("mmap");
	if (!nonlinear)
		return m;
	t0 = now_ns();
	for (size_t a = 0; a + CHUNK <= 2 * half; a += CHUNK) {
		size_t o = a < half ? a + half : a - half;

		if (remap(m.p + a * page, CHUNK * page, o, MAP_NONBLOCK))
			die("remap_file_pages");
	}
	m.remap_ns = (now_ns() - t0) / (2 * half);
	return m;
}

static void map_free(struct map *m)
{
	munmap(m->p, m->n * page);
	close(m->fd);
}

static size_t stride;	/* -s: pages between the pages touched, 0: spread */

/* The address of the i-th of k pages spread over the mapping (or -s apart) */
static char *spread(struct map *m, size_t i, size_t k)
{
	return m->p + i * (stride ? stride : m->n / k) * page;
}

static void touch(struct map *m, size_t k)
{
	for (size_t i = 0; i < k; i++)
		*(volatile uint64_t *)spread(m, i, k) = i + 1;
}

/* A sparse 64 TiB nonlinear vma of @fd: a page every 16 GiB */
static char *big_neighbour(int fd, size_t *size)
{
	char *b = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (b == MAP_FAILED || remap(b, page, 1, MAP_NONBLOCK))
		die("mmap/remap of the 64 TiB vma");
	b = mremap(b, page, BIG, MREMAP_MAYMOVE);
	if (b == MAP_FAILED) {
		*size = 0;
		return NULL;
	}
	for (size_t a = BIG_STEP; a < BIG; a += BIG_STEP)
		if (remap(b + a, page, 2, MAP_NONBLOCK))
			die("remap into the 64 TiB vma");
	*size = BIG;
	return b;
}

/* ms per page of MADV_PAGEOUT of k spread pages */
static double pageout(struct map *m, size_t k)
{
	double t0, t;

	touch(m, k);
	t0 = now_ns();
	for (size_t i = 0; i < k; i++)
		if (madvise(spread(m, i, k), page, MADV_PAGEOUT))
			die("MADV_PAGEOUT");
	t = (now_ns() - t0) / k / 1e6;
	return t;
}

static int node_of(void *p)
{
	int status = -1;

	if (syscall(__NR_move_pages, 0, 1UL, &p, NULL, &status, 0))
		return -1;
	return status;
}

/* ms per page of move_pages() of k spread pages to the other node */
static double migrate(struct map *m, size_t k, size_t *bad)
{
	void **pages = calloc(k, sizeof(*pages));
	int *nodes = calloc(k, sizeof(*nodes)), *status = calloc(k, sizeof(*status));
	int node;
	double t0, t;

	if (!pages || !nodes || !status)
		die("calloc");
	touch(m, k);
	node = node_of(spread(m, 0, k));
	for (size_t i = 0; i < k; i++) {
		pages[i] = spread(m, i, k);
		nodes[i] = !node;
	}
	t0 = now_ns();
	syscall(__NR_move_pages, 0, k, pages, nodes, status, MPOL_MF_MOVE);
	t = (now_ns() - t0) / k / 1e6;
	*bad = 0;
	for (size_t i = 0; i < k; i++)
		*bad += status[i] != !node;
	free(pages);
	free(nodes);
	free(status);
	return t;
}

/* Touch the k pages at file offsets [first, first + k) wherever they are mapped */
static void touch_offsets(struct map *m, bool nonlinear, size_t first, size_t k)
{
	size_t half = m->n / 2 / CHUNK * CHUNK;

	for (size_t o = first; o < first + k; o++) {
		size_t a = o;

		if (nonlinear && o < 2 * half)
			a = o < half ? o + half : o - half;
		*(volatile uint64_t *)(m->p + a * page) = o + 1;
	}
}

static double punch(struct map *m, bool nonlinear, size_t k)
{
	double t0;

	touch_offsets(m, nonlinear, 0, k);
	t0 = now_ns();
	if (fallocate(m->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)(k * page)))
		die("fallocate");
	return (now_ns() - t0) / k / 1e6;
}

static double truncate_tail(struct map *m, bool nonlinear, size_t k)
{
	double t0;

	touch_offsets(m, nonlinear, m->n - k, k);
	t0 = now_ns();
	if (ftruncate(m->fd, (off_t)((m->n - k) * page)))
		die("ftruncate");
	return (now_ns() - t0) / k / 1e6;
}

static double min_d(double a, double b)
{
	return a < b ? a : b;
}

static void row(const char *what, size_t mpages, size_t k, double lin, double nl,
		const char *note)
{
	printf("| %-10s | %8zu | %6zu | %9.4f | %9.4f | %5.2f | %s\n", what, mpages, k, lin, nl,
	       lin > 0 ? nl / lin : 0, note);
	if (keys)
		printf("benchrmap %s m=%zu k=%zu linear_ms=%.5f nonlinear_ms=%.5f ratio=%.3f\n", what,
		       mpages, k, lin, nl, lin > 0 ? nl / lin : 0);
	fflush(stdout);
}

static void first_remap_64t(void)
{
	int fd = memfd_create("bench_rmap_big", 0);
	double t_small, t_big, t0;
	char *s, *b;

	if (fd < 0 || ftruncate(fd, (off_t)(4 * page)))
		die("memfd");
	s = mmap(NULL, 2 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	b = mmap(NULL, BIG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
	if (s == MAP_FAILED)
		die("mmap");
	/* Some page tables in both: the conversion looks at populated ones */
	*(volatile char *)s = 1;
	t0 = now_ns();
	if (remap(s + page, page, 3, MAP_NONBLOCK))
		die("remap");
	t_small = now_ns() - t0;
	if (b == MAP_FAILED) {
		printf("# first remap into 64 TiB: no address space\n");
		return;
	}
	*(volatile char *)b = 1;
	t0 = now_ns();
	if (remap(b + (BIG / 2), page, 3, MAP_NONBLOCK))
		die("remap 64T");
	t_big = now_ns() - t0;
	printf("| first remap | 2 MiB vma %.1f us | 64 TiB vma %.1f us | ratio %.2f\n",
	       t_small / 1e3, t_big / 1e3, t_big / t_small);
	if (keys)
		printf("benchrmap first64T small_us=%.2f big_us=%.2f\n", t_small / 1e3, t_big / 1e3);
	munmap(s, 2 << 20);
	munmap(b, BIG);
	close(fd);
}

/*
 * The migrate row: move_pages() of k pages of an mm-page mapping to the
 * other node and back, linear and nonlinear, the best of two per kind;
 * with the index memory the touching of those pages added (radix_tree_node
 * slab growth, nonlinear less linear, per page); -R rounds of that give
 * the spread of the per-round ratio.  only_kind 'l' or 'n'
 * runs one kind 4 times, for profiling.
 */
static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void migrate_row(size_t mm, size_t k, char only_kind, unsigned int rounds)
{
	size_t bad_l = 0, bad_n = 0, b2;
	struct map lin = map_new(mm, false), nl = map_new(mm, true);
	double tl = 0, tn = 0, ratios[64];
	long s0, d_lin, d_nl;
	char note[200];

	if ((stride ? stride : mm / k) * (k - 1) >= mm) {
		fprintf(stderr, "bench_rmap: %zu pages %zu apart do not fit in %zu\n", k, stride, mm);
		exit(2);
	}
	s0 = slab_bytes("radix_tree_node");
	touch(&lin, k);
	d_lin = slab_bytes("radix_tree_node") - s0;
	s0 = slab_bytes("radix_tree_node");
	touch(&nl, k);
	d_nl = slab_bytes("radix_tree_node") - s0;
	if (only_kind) {
		struct map *m = only_kind == 'l' ? &lin : &nl;
		double t = 1e9;

		for (int r = 0; r < 4; r++) {
			t = min_d(t, migrate(m, k, &b2));
			bad_n += b2;
		}
		printf("| migrate %s only | %zu | %zu | best of 4 %.4f ms/page | not moved %zu\n",
		       only_kind == 'l' ? "linear" : "nonlinear", mm, k, t, bad_n);
		map_free(&lin);
		map_free(&nl);
		return;
	}
	/* lin, nl, nl, lin per round: the best of each kind (TCG noise) */
	for (unsigned int r = 0; r < rounds; r++) {
		double a = migrate(&lin, k, &b2), b;

		bad_l += b2;
		b = migrate(&nl, k, &b2);
		bad_n += b2;
		b = min_d(b, migrate(&nl, k, &b2));
		bad_n += b2;
		a = min_d(a, migrate(&lin, k, &b2));
		bad_l += b2;
		tl = r ? min_d(tl, a) : a;
		tn = r ? min_d(tn, b) : b;
		ratios[r] = b / a;
	}
	qsort(ratios, rounds, sizeof(*ratios), cmp_d);
	snprintf(note, sizeof(note),
		 "not moved: %zu linear, %zu nonlinear; %zu apart; index %.0f B/page; %u rounds, ratio min/median/max %.2f/%.2f/%.2f",
		 bad_l, bad_n, stride ? stride : mm / k, (double)(d_nl - d_lin) / k, rounds,
		 ratios[0], ratios[rounds / 2], ratios[rounds - 1]);
	row("migrate", mm, k, tl, tn, note);
	map_free(&lin);
	map_free(&nl);
}

static size_t parse_list(char *s, size_t *out, size_t max)
{
	size_t n = 0;

	for (char *t = strtok(s, ","); t && n < max; t = strtok(NULL, ","))
		out[n++] = strtoull(t, NULL, 10);
	return n;
}

int main(int argc, char **argv)
{
	size_t ms[8] = { 100000, 1000000 }, ks[8] = { 2000, 20000 }, nm = 2, nk = 2, x = 10000;
	bool big = true, two = !access("/sys/devices/system/node/node1", F_OK);
	bool migrate_only = false;
	char only_kind = 0;
	unsigned int rounds = 1;
	struct utsname u;
	int c;

	while ((c = getopt(argc, argv, "km:n:x:tMs:K:R:")) != -1) {
		switch (c) {
		case 'k': keys = true; break;
		case 'm': nm = parse_list(optarg, ms, 8); break;
		case 'n': nk = parse_list(optarg, ks, 8); break;
		case 'x': x = strtoull(optarg, NULL, 10); break;
		case 't': big = false; break;
		case 'M': migrate_only = true; break;
		case 'R':
			rounds = (unsigned int)strtoul(optarg, NULL, 10);
			rounds = rounds < 1 ? 1 : rounds > 64 ? 64 : rounds;
			break;
		case 's': stride = strtoull(optarg, NULL, 10); break;
		case 'K': only_kind = optarg[0] == 'l' ? 'l' : 'n'; migrate_only = true; break;
		default:
			fprintf(stderr, "usage: %s [-k] [-m M,..] [-n K,..] [-x K] [-t] [-M] [-s S] [-K lin|nl] [-R N]\n",
				argv[0]);
			return 2;
		}
	}
	page = (size_t)sysconf(_SC_PAGESIZE);
	pick_timer();
	uname(&u);
	printf("# bench_rmap: kernel %s\n", u.release);
	printf("| what       | map pages | pages | linear ms | nonlin ms | ratio | note\n");
	printf("|------------|----------:|------:|----------:|----------:|------:|-----\n");
	for (size_t i = 0; i < nm && !migrate_only; i++) {
		struct map probe = map_new(ms[i], true), lprobe = map_new(ms[i], false);
		size_t t = ms[i] < 100000 ? ms[i] : 100000;
		long s0, d_lin, d_nl;
		char note[160];

		/* Index memory: slab growth faulting t pages in, less a linear map's */
		s0 = slab_bytes("radix_tree_node");
		for (size_t a = 0; a < t; a++)
			*(volatile char *)(lprobe.p + a * page) = 1;
		d_lin = slab_bytes("radix_tree_node") - s0;
		s0 = slab_bytes("radix_tree_node");
		for (size_t a = 0; a < t; a++)
			*(volatile char *)(probe.p + a * page) = 1;
		d_nl = slab_bytes("radix_tree_node") - s0;
		snprintf(note, sizeof(note),
			 "remap %.0f ns/page (512/call); faulting %zu pages: index %.1f B/page",
			 probe.remap_ns, t, (double)(d_nl - d_lin) / t);
		row("remap", ms[i], ms[i], 0, probe.remap_ns / 1e6, note);
		if (keys)
			printf("benchrmap index m=%zu bytes_per_page=%.2f remap_ns=%.1f\n", ms[i],
			       (double)(d_nl - d_lin) / t, probe.remap_ns);
		map_free(&probe);
		map_free(&lprobe);
		for (size_t j = 0; j < nk; j++) {
			struct map lin = map_new(ms[i], false), nl = map_new(ms[i], true);
			size_t bsize = 0;
			double tl, tn, tb;
			char *b;

			if (ks[j] > ms[i])
				continue;
			/* Order lin, nl, nl, lin; the best of each (TCG noise) */
			tl = pageout(&lin, ks[j]);
			tn = pageout(&nl, ks[j]);
			tn = min_d(tn, pageout(&nl, ks[j]));
			tl = min_d(tl, pageout(&lin, ks[j]));
			row("pageout", ms[i], ks[j], tl, tn, "");
			if (big) {
				b = big_neighbour(nl.fd, &bsize);
				if (b) {
					tb = pageout(&nl, ks[j]);
					tb = min_d(tb, pageout(&nl, ks[j]));
					snprintf(note, sizeof(note), "with 64 TiB neighbour: %.2fx of without",
						 tb / tn);
					row("pageout+64T", ms[i], ks[j], tl, tb, note);
					munmap(b, bsize);
				}
			}
			map_free(&lin);
			map_free(&nl);
		}
	}
	if (two)
		migrate_row(ms[nm - 1], x, only_kind, rounds);
	else
		printf("# migrate: one NUMA node\n");
	if (migrate_only)
		return 0;
	{
		size_t mm = ms[0] > 2 * x ? ms[0] : 2 * x;
		struct map lin = map_new(mm, false), nl = map_new(mm, true);

		row("punch", mm, x, punch(&lin, false, x), punch(&nl, true, x), "");
		row("truncate", mm, x, truncate_tail(&lin, false, x), truncate_tail(&nl, true, x), "");
		map_free(&lin);
		map_free(&nl);
	}
	first_remap_64t();
	return 0;
}
