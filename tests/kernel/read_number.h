/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading one number from a /proc, /sys or debugfs file, for the kernel
 * tests (nonlinear_util.h) and benchmarks (bench_nonlinear.h) alike.
 */
#ifndef READ_NUMBER_H
#define READ_NUMBER_H

#include <stdio.h>

/* The number @path holds (failslab/times, vm/max_map_count); -1: none */
static inline long read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

#endif
