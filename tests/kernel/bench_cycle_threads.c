// SPDX-License-Identifier: GPL-2.0
/*
 * bench_cycle_threads: how do threads that all free and reuse pages of one
 * nonlinear VMA scale, by guard remaps against MADV_DONTNEED?
 *
 * This is the pattern of an allocator that guards every freed block, with
 * every thread doing it at once.  T threads (one pinned to each CPU) each
 * cycle on their own window of one shared memfd mapping, one page at a
 * time, in one of two ways:
 *
 *   guard     remap_file_pages(MAP_CHGPROT, PROT_NONE) installs a guard
 *             (the zap and its TLB flush), remap_file_pages(MAP_CHGPROT |
 *             MAP_NONBLOCK, the VMA's protection) removes it, a write
 *             faults the page in again;
 *   dontneed  madvise(MADV_DONTNEED), then a write: the same zap, TLB
 *             flush and fault, with mmap_lock held for reading.
 *
 * Each round runs both modes, with 1 thread and with T threads, for the
 * same time.  Printed per mode: cycles per second of all threads, the
 * scaling of T threads over 1, and the TLB shootdown interrupts per cycle
 * (the "TLB" row of /proc/interrupts, summed over CPUs).  A remap under
 * the read side should scale as MADV_DONTNEED does; with mmap_lock held
 * for writing, the threads take turns instead, and a TLB flush finds the
 * other CPUs idle.
 *
 *   bench_cycle_threads [-t THREADS] [-r ROUNDS] [-s SECONDS] [-w PAGES] [-k]
 *       default: -t (online CPUs) -r 3 -s 1 -w 64
 *     -k  also print one "benchcycle key=value ..." line (for scripts)
 *
 * Figures, not pass/fail; the exit status is 1 only when the setup fails
 * (no nonlinear remap_file_pages()) or a call fails, 2 on bad options.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench_nonlinear.h"

#define MAX_THREADS 64

enum cycle_mode { CYCLE_GUARD, CYCLE_DONTNEED };
static const char *const mode_name[] = { "guard", "dontneed" };

struct bench {
	char *map;		/* the whole mapping: one window per thread */
	size_t page, window;	/* bytes per page, pages per window */
	enum cycle_mode mode;
	pthread_barrier_t start;
	atomic_bool stop;
	atomic_int failed;	/* errno of a failing call in a thread, or 0 */
};

struct worker {
	struct bench *b;
	int index;		/* its window, and its CPU */
	long cycles;
	double seconds;
};

/* TLB shootdown interrupts so far, all CPUs; -1 where /proc has no row. */
static long tlb_shootdowns(void)
{
	FILE *f = fopen("/proc/interrupts", "r");
	char line[4096];
	long sum = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end;

		while (*p == ' ')
			p++;
		if (strncmp(p, "TLB:", 4))
			continue;
		sum = 0;
		p += 4;
		for (;;) {
			long n = strtol(p, &end, 10);

			if (end == p)
				break;
			sum += n;
			p = end;
		}
		break;
	}
	fclose(f);
	return sum;
}

static void *cycler(void *arg)
{
	struct worker *w = arg;
	struct bench *b = w->b;
	size_t first = (size_t)w->index * b->window, i = 0;
	long cycles = 0;
	double t0;

	pin(w->index);
	pthread_barrier_wait(&b->start);
	t0 = now_s();
	while (!atomic_load_explicit(&b->stop, memory_order_relaxed)) {
		char *p = b->map + (first + i) * b->page;
		int err;

		if (b->mode == CYCLE_GUARD)
			err = remap(p, b->page, PROT_NONE, first + i, MAP_CHGPROT) ||
			      remap(p, b->page, PROT_READ | PROT_WRITE, first + i,
				    MAP_CHGPROT | MAP_NONBLOCK);
		else
			err = madvise(p, b->page, MADV_DONTNEED);
		if (err) {
			atomic_store(&b->failed, errno);
			break;
		}
		*(volatile char *)p = 1;
		cycles++;
		i = i + 1 == b->window ? 0 : i + 1;
	}
	w->seconds = now_s() - t0;
	w->cycles = cycles;
	return NULL;
}

struct result {
	double cycles_s;	/* all threads' cycles per second */
	double ipis_per_cycle;	/* -1: /proc/interrupts has no TLB row */
};

/* One timed run of @threads threads in @mode: 0, or -1 with a message. */
static int run_mode(struct bench *b, enum cycle_mode mode, int threads, double seconds,
		    struct result *res)
{
	struct worker w[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	long ipis0, ipis1, cycles = 0;
	double rate = 0;

	b->mode = mode;
	atomic_store(&b->stop, false);
	pthread_barrier_init(&b->start, NULL, (unsigned int)threads + 1);
	for (int t = 0; t < threads; t++) {
		w[t] = (struct worker){ .b = b, .index = t };
		if (pthread_create(&tid[t], NULL, cycler, &w[t])) {
			fprintf(stderr, "bench_cycle_threads: pthread_create failed\n");
			exit(1);
		}
	}
	ipis0 = tlb_shootdowns();
	pthread_barrier_wait(&b->start);
	usleep((useconds_t)(seconds * 1e6));
	atomic_store(&b->stop, true);
	for (int t = 0; t < threads; t++) {
		pthread_join(tid[t], NULL);
		cycles += w[t].cycles;
		if (w[t].seconds > 0)
			rate += w[t].cycles / w[t].seconds;
	}
	ipis1 = tlb_shootdowns();
	pthread_barrier_destroy(&b->start);
	if (atomic_load(&b->failed)) {
		fprintf(stderr, "bench_cycle_threads: a call failed in mode %s: %s\n", mode_name[mode],
			strerror(atomic_load(&b->failed)));
		return -1;
	}
	res->cycles_s = rate;
	res->ipis_per_cycle = ipis0 < 0 || ipis1 < 0 || !cycles ? -1 :
			      (double)(ipis1 - ipis0) / (double)cycles;
	return 0;
}

static bool parse_positive(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0))
		return false;
	*out = v;
	return true;
}

int main(int argc, char **argv)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	double seconds = 1, rounds_d = 3, threads_d = (double)cpus, window_d = 64;
	struct result best[2][2];	/* [mode][1 thread, T threads] */
	int rounds, threads, opt, fd;
	bool keys = false;
	struct utsname u;
	struct bench b;
	size_t len;

	memset(&b, 0, sizeof(b));
	memset(best, 0, sizeof(best));
	while ((opt = getopt(argc, argv, "t:r:s:w:kh")) != -1) {
		bool ok = true;

		switch (opt) {
		case 't':
			ok = parse_positive(optarg, &threads_d);
			break;
		case 'r':
			ok = parse_positive(optarg, &rounds_d);
			break;
		case 's':
			ok = parse_positive(optarg, &seconds);
			break;
		case 'w':
			ok = parse_positive(optarg, &window_d);
			break;
		case 'k':
			keys = true;
			break;
		default:
			fprintf(stderr, "usage: %s [-t THREADS] [-r ROUNDS] [-s SECONDS] [-w PAGES] [-k]\n",
				argv[0]);
			return opt == 'h' ? 0 : 2;
		}
		if (!ok) {
			fprintf(stderr, "bench_cycle_threads: -%c needs a positive number, not '%s'\n", opt,
				optarg);
			return 2;
		}
	}
	threads = (int)threads_d;
	rounds = (int)rounds_d;
	b.window = (size_t)window_d;
	if (threads < 1 || threads > MAX_THREADS || threads > cpus || rounds < 1 || b.window < 1) {
		fprintf(stderr, "bench_cycle_threads: THREADS must be 1..%ld (one per online CPU), ROUNDS and PAGES at least 1\n",
			cpus < MAX_THREADS ? cpus : MAX_THREADS);
		return 2;
	}
	if (uname(&u))
		strcpy(u.release, "unknown");
	b.page = (size_t)sysconf(_SC_PAGESIZE);
	len = (size_t)threads * b.window * b.page;
	fd = memfd_create("bench_cycle_threads", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)len)) {
		perror("bench_cycle_threads: memfd");
		return 1;
	}
	b.map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (b.map == MAP_FAILED) {
		perror("bench_cycle_threads: mmap");
		return 1;
	}
	/* One guard installed and removed turns the VMA nonlinear before timing. */
	if (remap(b.map, b.page, PROT_NONE, 0, MAP_CHGPROT) ||
	    remap(b.map, b.page, PROT_READ | PROT_WRITE, 0, MAP_CHGPROT | MAP_NONBLOCK) ||
	    !vma_is_nonlinear(b.map)) {
		fprintf(stderr, "bench_cycle_threads: no nonlinear remap_file_pages() with MAP_CHGPROT on %s\n",
			u.release);
		return 1;
	}
	memset(b.map, 1, len);

	printf("# bench_cycle_threads: kernel %s, %ld CPUs, %d threads, %zu pages each, %d rounds of %.1f s per run\n",
	       u.release, cpus, threads, b.window, rounds, seconds);
	printf("%5s | %-8s | %7s | %12s | %14s\n", "round", "mode", "threads", "cycles/s", "TLB IPIs/cycle");
	for (int round = 1; round <= rounds; round++) {
		for (int m = CYCLE_GUARD; m <= CYCLE_DONTNEED; m++) {
			for (int k = 0; k < 2; k++) {
				int n = k ? threads : 1;
				struct result r;

				if (run_mode(&b, (enum cycle_mode)m, n, seconds, &r))
					return 1;
				printf("%5d | %-8s | %7d | %12.0f | %14.2f\n", round, mode_name[m], n, r.cycles_s,
				       r.ipis_per_cycle);
				if (r.cycles_s > best[m][k].cycles_s)
					best[m][k] = r;
			}
		}
	}
	for (int m = CYCLE_GUARD; m <= CYCLE_DONTNEED; m++)
		printf("best %-8s: %.0f cycles/s with 1 thread, %.0f with %d (scaling %.2f), %.2f TLB IPIs per cycle\n",
		       mode_name[m], best[m][0].cycles_s, best[m][1].cycles_s, threads,
		       best[m][0].cycles_s > 0 ? best[m][1].cycles_s / best[m][0].cycles_s : 0,
		       best[m][1].ipis_per_cycle);
	printf("guard over dontneed with %d threads: %.2f\n", threads,
	       best[CYCLE_DONTNEED][1].cycles_s > 0 ?
	       best[CYCLE_GUARD][1].cycles_s / best[CYCLE_DONTNEED][1].cycles_s : 0);
	if (keys)
		printf("benchcycle kernel=%s cpus=%ld threads=%d guard_1_s=%.0f guard_t_s=%.0f dontneed_1_s=%.0f "
		       "dontneed_t_s=%.0f guard_ipis=%.2f dontneed_ipis=%.2f ratio=%.3f\n",
		       u.release, cpus, threads, best[CYCLE_GUARD][0].cycles_s, best[CYCLE_GUARD][1].cycles_s,
		       best[CYCLE_DONTNEED][0].cycles_s, best[CYCLE_DONTNEED][1].cycles_s,
		       best[CYCLE_GUARD][1].ipis_per_cycle, best[CYCLE_DONTNEED][1].ipis_per_cycle,
		       best[CYCLE_DONTNEED][1].cycles_s > 0 ?
		       best[CYCLE_GUARD][1].cycles_s / best[CYCLE_DONTNEED][1].cycles_s : 0);
	return 0;
}
