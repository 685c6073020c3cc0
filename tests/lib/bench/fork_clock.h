/* SPDX-License-Identifier: MIT */
/* Clocks and the median sort shared by bench_fork and fork_pages, so the
 * two programs whose fork times the latency test compares measure alike. */
#ifndef FORK_CLOCK_H
#define FORK_CLOCK_H

#include <time.h>

static double clock_us(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}
static double now_us(void) { return clock_us(CLOCK_MONOTONIC); }
/* CPU time of this thread (user + kernel, fork's page-table copy
 * included): unlike the wall time, it does not grow when other programs
 * take the CPU away, so it compares runs on a loaded machine. */
static double cpu_us(void) { return clock_us(CLOCK_THREAD_CPUTIME_ID); }

/* qsort() order for doubles */
static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#endif
