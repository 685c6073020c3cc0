// SPDX-License-Identifier: GPL-2.0
/*
 * bench_memcg_heap: a heap of many live blocks for the memcg row,
 * run under LD_PRELOAD=libmemdbg.so by tests/kernel/bench_memcg.sh.
 *
 *   allocate  N blocks of 16..512 bytes, each filled with a pattern of its
 *             index and generation (every block sits on its own page under
 *             memdbg, so N blocks are about N pages plus guards)
 *   rounds    R times: free and reallocate every F-th block (a different
 *             stride offset each round) with a new generation, then read
 *             every live block back and compare its pattern
 *
 * Under a memory.max well below the heap's size each check pass has to
 * fault most pages back in from swap, which walks the reverse map (for
 * the reclaim) and the page tables (for the fault) of whatever VMA layout
 * the backend built: one nonlinear VMA, or one VMA per block and guard.
 *
 * Prints a human line per phase and one key=value line ("benchmemcg ...")
 * with the seconds of each phase, VmHWM, VmRSS and VmSwap in KiB and the
 * cgroup's unswappable ("kernel") charge with the heap live.  Exits
 * 1 on a content mismatch or an allocation failure.
 *
 *   bench_memcg_heap [-n BLOCKS] [-r ROUNDS] [-f EVERY]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../lib/proc_kb.h"

struct block {
	uint64_t *p;
	uint32_t words;
	uint32_t gen;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t pattern(size_t i, uint32_t gen, uint32_t w)
{
	return ((uint64_t)i << 32 | (uint64_t)gen << 16 | w) * 0x9e3779b97f4a7c15ULL;
}

/* 16..512 bytes, from a fixed sequence so every backend gets the same sizes */
static uint32_t words_for(size_t i, uint32_t gen)
{
	return 2 + (uint32_t)(pattern(i, gen, 0xffff) >> 58);
}

static int fill(struct block *b, size_t i, uint32_t gen)
{
	b->words = words_for(i, gen);
	b->gen = gen;
	b->p = malloc(b->words * sizeof(uint64_t));
	if (!b->p)
		return -1;
	for (uint32_t w = 0; w < b->words; w++)
		b->p[w] = pattern(i, gen, w);
	return 0;
}

/*
 * The unswappable part of the cgroup's charge while the heap is live:
 * "kernel" of memory.stat (slab, page tables, vmalloc, ...), in KiB, or -1.
 * The mprotect backend's VMAs (two per block) count there; swap cannot
 * make room for them.
 */
static long cgroup_kernel_kb(void)
{
	char line[512], path[600];
	long kb = -1;
	FILE *f = fopen("/proc/self/cgroup", "r");

	if (!f)
		return -1;
	if (!fgets(line, sizeof(line), f) || strncmp(line, "0::", 3)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	line[strcspn(line, "\n")] = 0;
	snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.stat", line + 3);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "kernel ", 7)) {
			kb = atol(line + 7) / 1024;
			break;
		}
	if (f)
		fclose(f);
	return kb;
}

static size_t check(const struct block *bl, size_t n)
{
	size_t bad = 0;

	for (size_t i = 0; i < n; i++)
		for (uint32_t w = 0; w < bl[i].words; w++)
			if (bl[i].p[w] != pattern(i, bl[i].gen, w)) {
				if (!bad)
					fprintf(stderr, "bench_memcg_heap: block %zu word %u: %#llx\n", i,
						w, (unsigned long long)bl[i].p[w]);
				bad++;
				break;
			}
	return bad;
}

int main(int argc, char **argv)
{
	size_t n = 300000, every = 10, bad = 0;
	unsigned int rounds = 3;
	struct block *bl;
	double t0, t_alloc, t_churn = 0, t_check = 0;
	int c;

	while ((c = getopt(argc, argv, "n:r:f:")) != -1) {
		switch (c) {
		case 'n': n = strtoull(optarg, NULL, 10); break;
		case 'r': rounds = (unsigned int)strtoul(optarg, NULL, 10); break;
		case 'f': every = strtoull(optarg, NULL, 10); break;
		default:
			fprintf(stderr, "usage: %s [-n BLOCKS] [-r ROUNDS] [-f EVERY]\n", argv[0]);
			return 2;
		}
	}
	if (!n || !every)
		return 2;
	/* The block table itself is one big allocation: memdbg maps it apart */
	bl = calloc(n, sizeof(*bl));
	if (!bl) {
		perror("calloc");
		return 1;
	}
	t0 = now_s();
	for (size_t i = 0; i < n; i++)
		if (fill(&bl[i], i, 1)) {
			fprintf(stderr, "bench_memcg_heap: malloc failed at block %zu\n", i);
			return 1;
		}
	t_alloc = now_s() - t0;
	printf("allocated %zu blocks in %.2f s, VmRSS %ld KiB\n", n, t_alloc,
	       proc_kb("/proc/self/status", "VmRSS:"));
	fflush(stdout);

	for (unsigned int r = 0; r < rounds; r++) {
		size_t churned = 0;

		t0 = now_s();
		for (size_t i = r % every; i < n; i += every) {
			free(bl[i].p);
			if (fill(&bl[i], i, bl[i].gen + 1)) {
				fprintf(stderr, "bench_memcg_heap: malloc failed in round %u\n", r);
				return 1;
			}
			churned++;
		}
		t_churn += now_s() - t0;
		t0 = now_s();
		bad += check(bl, n);
		t_check += now_s() - t0;
		printf("round %u: %zu blocks reallocated, all %zu checked, %zu bad, VmSwap %ld KiB\n",
		       r + 1, churned, n, bad, proc_kb("/proc/self/status", "VmSwap:"));
		fflush(stdout);
	}
	printf("benchmemcg blocks=%zu rounds=%u alloc_s=%.2f churn_s=%.2f check_s=%.2f total_s=%.2f "
	       "hwm_kb=%ld rss_kb=%ld swap_kb=%ld cg_kernel_kb=%ld bad=%zu\n",
	       n, rounds, t_alloc, t_churn, t_check, t_alloc + t_churn + t_check,
	       proc_kb("/proc/self/status", "VmHWM:"), proc_kb("/proc/self/status", "VmRSS:"),
	       proc_kb("/proc/self/status", "VmSwap:"), cgroup_kernel_kb(), bad);
	for (size_t i = 0; i < n; i++)
		free(bl[i].p);
	free(bl);
	return bad ? 1 : 0;
}
