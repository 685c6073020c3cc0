// SPDX-License-Identifier: GPL-2.0
/*
 * bench_fault_remap: do page faults in a nonlinear VMA wait for another
 * thread's remap_file_pages() of other pages of the same VMA?
 *
 * One shared memfd mapping, made nonlinear by one guard install and
 * removal, split into two windows.  Thread A (pinned to CPU 0) writes to
 * every page of its large window, each write a fault, then drops the
 * window with one MADV_DONTNEED and starts again, counting the faults (the
 * one zap, and its TLB flush, is spread over thousands of faults).  Thread
 * B (pinned to CPU 1) cycles on its own small window, one page at a time,
 * in one of two ways:
 *
 *   guard     remap_file_pages(MAP_CHGPROT, PROT_NONE) installs a guard,
 *             remap_file_pages(MAP_CHGPROT | MAP_NONBLOCK, the VMA's
 *             protection) removes it, a write faults the page in again;
 *   dontneed  madvise(MADV_DONTNEED) then a write: the same zap, TLB flush
 *             and fault under mmap_lock held for reading, the floor a remap
 *             can reach.
 *
 * A's fault rate with B cycling guards over its rate with B cycling
 * MADV_DONTNEED says how much the remap's locking holds A's faults back
 * (1.0: not at all).  Each round runs both modes for the same time; the
 * ratio printed is that of the best rate of each mode over the rounds.
 *
 *   bench_fault_remap [-r ROUNDS] [-s SECONDS] [-a A_PAGES] [-w B_PAGES] [-k]
 *       default: -r 3 -s 1 -a 4096 -w 64
 *     -k  also print one "benchfault key=value ..." line (for scripts)
 *
 * Figures, not pass/fail; the exit status is 1 only when the setup fails
 * (no nonlinear remap_file_pages(), fewer than 2 CPUs) or a call fails.
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

enum cycle_mode { CYCLE_GUARD, CYCLE_DONTNEED };
static const char *const mode_name[] = { "guard", "dontneed" };

struct run {
	char *map;		/* the whole mapping: A's window, then B's */
	size_t page;
	size_t a_pages, b_pages;	/* pages of A's window, of B's */
	enum cycle_mode mode;
	pthread_barrier_t start;
	atomic_bool stop;
	atomic_int failed;	/* errno of a failing call in a thread, or 0 */
	long faults, cycles;	/* A's first touches, B's cycles */
	double a_seconds, b_seconds;
};

static void *faulter(void *arg)
{
	struct run *r = arg;
	size_t len = r->a_pages * r->page, i = 0;
	long faults = 0;
	double t0;

	pin(0);
	if (madvise(r->map, len, MADV_DONTNEED))
		atomic_store(&r->failed, errno);
	pthread_barrier_wait(&r->start);
	t0 = now_s();
	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		*(volatile char *)(r->map + i * r->page) = 1;
		faults++;
		if (++i < r->a_pages)
			continue;
		i = 0;
		if (madvise(r->map, len, MADV_DONTNEED)) {
			atomic_store(&r->failed, errno);
			break;
		}
	}
	r->a_seconds = now_s() - t0;
	r->faults = faults;
	return NULL;
}

static void *cycler(void *arg)
{
	struct run *r = arg;
	char *base = r->map + r->a_pages * r->page;
	long cycles = 0;
	size_t i = 0;
	double t0;

	pin(1);
	pthread_barrier_wait(&r->start);
	t0 = now_s();
	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		char *p = base + i * r->page;
		size_t pgoff = r->a_pages + i;
		int err;

		if (r->mode == CYCLE_GUARD)
			err = remap(p, r->page, PROT_NONE, pgoff, MAP_CHGPROT) ||
			      remap(p, r->page, PROT_READ | PROT_WRITE, pgoff, MAP_CHGPROT | MAP_NONBLOCK);
		else
			err = madvise(p, r->page, MADV_DONTNEED);
		if (err) {
			atomic_store(&r->failed, errno);
			break;
		}
		*(volatile char *)p = 1;
		cycles++;
		i = i + 1 == r->b_pages ? 0 : i + 1;
	}
	r->b_seconds = now_s() - t0;
	r->cycles = cycles;
	return NULL;
}

/* One timed run of A against B in @mode: 0, or -1 with a message. */
static int run_mode(struct run *r, enum cycle_mode mode, double seconds)
{
	pthread_t a, b;

	r->mode = mode;
	atomic_store(&r->stop, false);
	pthread_barrier_init(&r->start, NULL, 3);
	if (pthread_create(&a, NULL, faulter, r) || pthread_create(&b, NULL, cycler, r)) {
		fprintf(stderr, "bench_fault_remap: pthread_create failed\n");
		exit(1);
	}
	pthread_barrier_wait(&r->start);
	usleep((useconds_t)(seconds * 1e6));
	atomic_store(&r->stop, true);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	pthread_barrier_destroy(&r->start);
	if (atomic_load(&r->failed)) {
		fprintf(stderr, "bench_fault_remap: a call failed in mode %s: %s\n", mode_name[mode],
			strerror(atomic_load(&r->failed)));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	double seconds = 1, best_rate[2] = { 0, 0 }, best_cycles[2] = { 0, 0 };
	int rounds = 3, opt, fd;
	bool keys = false;
	struct utsname u;
	struct run r;

	memset(&r, 0, sizeof(r));
	r.a_pages = 4096;
	r.b_pages = 64;
	while ((opt = getopt(argc, argv, "r:s:a:w:kh")) != -1) {
		switch (opt) {
		case 'r':
			rounds = atoi(optarg);
			break;
		case 's':
			seconds = atof(optarg);
			break;
		case 'a':
			r.a_pages = strtoul(optarg, NULL, 0);
			break;
		case 'w':
			r.b_pages = strtoul(optarg, NULL, 0);
			break;
		case 'k':
			keys = true;
			break;
		default:
			fprintf(stderr, "usage: %s [-r ROUNDS] [-s SECONDS] [-a A_PAGES] [-w B_PAGES] [-k]\n", argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (rounds < 1 || seconds <= 0 || r.a_pages < 1 || r.b_pages < 1) {
		fprintf(stderr, "bench_fault_remap: ROUNDS, SECONDS, A_PAGES and B_PAGES must be positive\n");
		return 2;
	}
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		fprintf(stderr, "bench_fault_remap: needs 2 CPUs (one per thread)\n");
		return 1;
	}
	if (uname(&u))
		strcpy(u.release, "unknown");
	r.page = (size_t)sysconf(_SC_PAGESIZE);
	fd = memfd_create("bench_fault_remap", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)((r.a_pages + r.b_pages) * r.page))) {
		perror("bench_fault_remap: memfd");
		return 1;
	}
	r.map = mmap(NULL, (r.a_pages + r.b_pages) * r.page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r.map == MAP_FAILED) {
		perror("bench_fault_remap: mmap");
		return 1;
	}
	/* One guard installed and removed turns the VMA nonlinear before timing. */
	if (remap(r.map, r.page, PROT_NONE, 0, MAP_CHGPROT) ||
	    remap(r.map, r.page, PROT_READ | PROT_WRITE, 0, MAP_CHGPROT | MAP_NONBLOCK) ||
	    !vma_is_nonlinear(r.map)) {
		fprintf(stderr, "bench_fault_remap: no nonlinear remap_file_pages() with MAP_CHGPROT on %s\n",
			u.release);
		return 1;
	}
	memset(r.map, 1, (r.a_pages + r.b_pages) * r.page);

	printf("# bench_fault_remap: kernel %s, %ld CPUs, A %zu pages, B %zu pages, %d rounds of %.1f s per mode\n",
	       u.release, sysconf(_SC_NPROCESSORS_ONLN), r.a_pages, r.b_pages, rounds, seconds);
	printf("%5s | %-8s | %14s | %14s\n", "round", "B cycles", "A faults/s", "B cycles/s");
	for (int round = 1; round <= rounds; round++) {
		for (int m = CYCLE_GUARD; m <= CYCLE_DONTNEED; m++) {
			double rate, crate;

			if (run_mode(&r, (enum cycle_mode)m, seconds))
				return 1;
			rate = r.faults / r.a_seconds;
			crate = r.cycles / r.b_seconds;
			printf("%5d | %-8s | %14.0f | %14.0f\n", round, mode_name[m], rate, crate);
			if (rate > best_rate[m])
				best_rate[m] = rate;
			if (crate > best_cycles[m])
				best_cycles[m] = crate;
		}
	}
	printf("best: A faults/s %.0f with B cycling guards, %.0f with B cycling MADV_DONTNEED: ratio %.2f (goal >= 0.9)\n",
	       best_rate[CYCLE_GUARD], best_rate[CYCLE_DONTNEED],
	       best_rate[CYCLE_DONTNEED] > 0 ? best_rate[CYCLE_GUARD] / best_rate[CYCLE_DONTNEED] : 0);
	if (keys)
		printf("benchfault kernel=%s cpus=%ld a_pages=%zu b_pages=%zu guard_faults_s=%.0f dontneed_faults_s=%.0f "
		       "ratio=%.3f guard_cycles_s=%.0f dontneed_cycles_s=%.0f\n",
		       u.release, sysconf(_SC_NPROCESSORS_ONLN), r.a_pages, r.b_pages, best_rate[CYCLE_GUARD],
		       best_rate[CYCLE_DONTNEED],
		       best_rate[CYCLE_DONTNEED] > 0 ? best_rate[CYCLE_GUARD] / best_rate[CYCLE_DONTNEED] : 0,
		       best_cycles[CYCLE_GUARD], best_cycles[CYCLE_DONTNEED]);
	return 0;
}
