/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Timing for the kernel benchmarks (bench_remap.c, bench_guard.c).
 *
 * A TCG guest may run on the jiffies clocksource (4 ms steps), which would
 * make per-page figures meaningless: when CLOCK_MONOTONIC is coarse, the
 * TSC times the calls, calibrated against it over one second.
 */
#ifndef BENCH_CLOCK_H
#define BENCH_CLOCK_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static double tsc_per_ns;
static long clock_res_ns;

static inline double clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

#if defined(__x86_64__) || defined(__i386__)
static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}
#else
static inline uint64_t rdtsc(void)
{
	return 0;
}
#endif

/* Use the TSC when the clock's resolution is coarser than a microsecond. */
static inline void pick_timer(void)
{
	struct timespec res;
	double t0, t1, start;
	uint64_t c0, c1;

	if (!clock_getres(CLOCK_MONOTONIC, &res))
		clock_res_ns = res.tv_sec * 1000000000L + res.tv_nsec;
	if (clock_res_ns <= 1000 || !rdtsc())
		return;
	/* Start and stop on a clock step, so the coarse clock adds no error. */
	start = clock_ns();
	while ((t0 = clock_ns()) == start)
		;
	c0 = rdtsc();
	while ((t1 = clock_ns()) - t0 < 1e9)
		;
	c1 = rdtsc();
	if (c1 > c0)
		tsc_per_ns = (c1 - c0) / (t1 - t0);
}

static inline double now_ns(void)
{
	return tsc_per_ns > 0 ? rdtsc() / tsc_per_ns : clock_ns();
}

static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#endif /* BENCH_CLOCK_H */
