/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the remap benchmarks (bench_guard.c, bench_fault_remap.c,
 * bench_cycle_threads.c) share: the remap_file_pages() flags and call,
 * wall time, pinning a thread to a CPU, whether a VMA became nonlinear,
 * and reading a number from a /proc or /sys file.
 */
#ifndef BENCH_NONLINEAR_H
#define BENCH_NONLINEAR_H

#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "read_number.h"

#ifndef MAP_CHGPROT
#define MAP_CHGPROT 0x400000
#endif
#ifndef MAP_NONBLOCK
#define MAP_NONBLOCK 0x10000
#endif

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline int remap(void *addr, size_t len, unsigned long prot, size_t pgoff, int flags)
{
	return (int)syscall(__NR_remap_file_pages, addr, len, prot, pgoff, flags);
}

static inline void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* Is the VMA at @addr nonlinear ("nl" in its smaps VmFlags)? */
static inline bool vma_is_nonlinear(const void *addr)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[1024];
	bool in = false, nl = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = (unsigned long)addr >= lo && (unsigned long)addr < hi;
			continue;
		}
		if (in && !strncmp(line, "VmFlags:", 8)) {
			nl = strstr(line, " nl") != NULL;
			break;
		}
	}
	fclose(f);
	return nl;
}

#endif
