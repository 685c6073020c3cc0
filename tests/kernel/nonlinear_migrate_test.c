// SPDX-License-Identifier: GPL-2.0
/*
 * Deterministic page migration of nonlinearly mapped shmem pages.
 *
 * Compaction (nonlinear_test.c) may or may not pick our pages; move_pages(2)
 * between two NUMA nodes migrates each one for sure.  Migration is the
 * hardest rmap user: try_to_migrate() must replace every pte that maps the
 * folio, at its nonlinear address, with a migration entry, and
 * remove_migration_ptes() must put the new folio back at exactly those
 * addresses.  A pte that rmap misses keeps the folio mapped, so the move
 * fails (-EBUSY/-EAGAIN in the status array); a pte restored at the linear
 * address shows the wrong page.
 *
 * The memdbg guest boots with numa=fake=2 (kernel/scripts/vm-run.sh), which
 * splits its memory into two nodes; elsewhere with one node the tests skip.
 */
#include <sys/wait.h>

#include "nonlinear_util.h"

#ifndef MPOL_MF_MOVE
#define MPOL_MF_MOVE (1 << 1)
#define MPOL_MF_MOVE_ALL (1 << 2)
#endif

static long move_pages_sys(int pid, unsigned long count, void **pages, const int *nodes, int *status, int flags)
{
	return syscall(__NR_move_pages, pid, count, pages, nodes, status, flags);
}

/* Number of online NUMA nodes, from sysfs (0 if unknown). */
static int online_nodes(void)
{
	char buf[64];
	int lo, hi, n = 0;
	FILE *f = fopen("/sys/devices/system/node/online", "r");

	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f)) {
		/* "0" or "0-1" or "0,2-3" */
		for (char *tok = strtok(buf, ",\n"); tok; tok = strtok(NULL, ",\n")) {
			if (sscanf(tok, "%d-%d", &lo, &hi) == 2)
				n += hi - lo + 1;
			else if (sscanf(tok, "%d", &lo) == 1)
				n++;
		}
	}
	fclose(f);
	return n;
}

/* The node of each of the @n pages at @map (move_pages with nodes == NULL). */
static int query_nodes(char *map, size_t n, int *status)
{
	void **pages = calloc(n, sizeof(*pages));
	long ret;

	if (!pages)
		return -1;
	for (size_t i = 0; i < n; i++)
		pages[i] = map + i * nl_pagesize();
	ret = move_pages_sys(0, n, pages, NULL, status, 0);
	free(pages);
	return (int)ret;
}

/* Move the @n pages at @map to @node; 0 when every page says it is there. */
static long move_all(char *map, size_t n, int node, int flags, size_t *bad)
{
	void **pages = calloc(n, sizeof(*pages));
	int *nodes = calloc(n, sizeof(*nodes)), *status = calloc(n, sizeof(*status));
	long ret = -1;

	*bad = 0;
	if (!pages || !nodes || !status)
		goto out;
	for (size_t i = 0; i < n; i++) {
		pages[i] = map + i * nl_pagesize();
		nodes[i] = node;
		status[i] = -12345;
	}
	ret = move_pages_sys(0, n, pages, nodes, status, flags);
	for (size_t i = 0; i < n; i++) {
		if (status[i] != node) {
			if (!*bad)
				fprintf(stderr, "# page %zu: status %d, wanted node %d\n", i, status[i], node);
			(*bad)++;
		}
	}
out:
	free(pages);
	free(nodes);
	free(status);
	return ret;
}

FIXTURE(mig)
{
	size_t page, n;
	int fd, from, to;
	char *map;
	size_t *off;
	uint64_t *want;
};

FIXTURE_SETUP(mig)
{
	int *status;

	self->page = nl_pagesize();
	self->n = 512;
	self->map = MAP_FAILED;
	self->fd = -1;
	self->off = calloc(self->n, sizeof(*self->off));
	self->want = calloc(self->n, sizeof(*self->want));
	ASSERT_TRUE(self->off && self->want);
	if (!nonlinear_supported())
		SKIP(return, "kernel without nonlinear remap_file_pages()");
	if (online_nodes() < 2)
		SKIP(return, "needs 2 NUMA nodes (the memdbg guest boots with numa=fake=2); %d online",
		     online_nodes());
	self->fd = nl_memfd("nl_migrate", self->n, true);
	ASSERT_LE(0, self->fd);
	self->map = nl_map_with_hole(self->n * self->page, self->fd);
	ASSERT_NE(MAP_FAILED, self->map);
	/* A scrambled layout: no page at its linear address but page 0. */
	for (size_t i = 0; i < self->n; i++) {
		self->off[i] = (i * 37) % self->n;
		ASSERT_EQ(0, nl_remap(self->map + i * self->page, self->page, 0, self->off[i], 0));
	}
	nl_want_from(self->want, self->off, self->n);
	ASSERT_EQ(0, nl_check_pages(self->map, self->n, self->want, false));
	status = calloc(self->n, sizeof(*status));
	ASSERT_NE(NULL, status);
	ASSERT_EQ(0, query_nodes(self->map, self->n, status));
	ASSERT_LE(0, status[0]) TH_LOG("node of page 0: %d", status[0]);
	self->from = status[0];
	self->to = !self->from;
	free(status);
}

FIXTURE_TEARDOWN(mig)
{
	if (self->map != MAP_FAILED)
		munmap(self->map, self->n * self->page);
	if (self->fd >= 0)
		close(self->fd);
	free(self->off);
	free(self->want);
}

/*
 * Every address must map the page cache's page for its offset: the same
 * PFN a fresh linear mapping of the memfd shows.
 */
static size_t pfn_mismatches(struct _test_data_mig *self, uint64_t *pfn_out)
{
	char *lin = mmap(NULL, self->n * self->page, PROT_READ, MAP_SHARED | MAP_POPULATE, self->fd, 0);
	size_t bad = 0;

	if (lin == MAP_FAILED)
		return self->n;
	for (size_t i = 0; i < self->n; i++) {
		uint64_t p = nl_pagemap(self->map + i * self->page) & PM_PFN_MASK;

		bad += p != (nl_pagemap(lin + self->off[i] * self->page) & PM_PFN_MASK);
		if (pfn_out)
			pfn_out[i] = p;
	}
	munmap(lin, self->n * self->page);
	return bad;
}

/* All pages move to the other node and back, each time to the same addresses. */
TEST_F(mig, move_pages_keeps_layout)
{
	uint64_t *pfn0 = calloc(self->n, sizeof(*pfn0)), *pfn1 = calloc(self->n, sizeof(*pfn1));
	size_t bad, changed = 0;

	ASSERT_TRUE(pfn0 && pfn1);
	ASSERT_EQ(0, (long)pfn_mismatches(self, pfn0));
	if (!pfn0[0])
		SKIP(return, "PFNs hidden in /proc/self/pagemap (not root)");
	EXPECT_EQ(0, move_all(self->map, self->n, self->to, MPOL_MF_MOVE, &bad));
	EXPECT_EQ(0, (long)bad) TH_LOG("pages not moved: rmap missed a nonlinear pte?");
	EXPECT_EQ(0, nl_check_pages(self->map, self->n, self->want, true));
	EXPECT_EQ(0, (long)pfn_mismatches(self, pfn1));
	for (size_t i = 0; i < self->n; i++)
		changed += pfn1[i] != pfn0[i];
	EXPECT_EQ((long)self->n, (long)changed);
	/* Back again: the restored ptes are migrated as well as the first ones. */
	EXPECT_EQ(0, move_all(self->map, self->n, self->from, MPOL_MF_MOVE, &bad));
	EXPECT_EQ(0, (long)bad);
	EXPECT_EQ(0, nl_check_pages(self->map, self->n, self->want, true));
	EXPECT_EQ(0, (long)pfn_mismatches(self, NULL));
	/* Writes after migration reach the file. */
	for (size_t i = 0; i < self->n; i += 3) {
		nl_stamp_mem(self->map + i * self->page, self->off[i], 7, false);
		EXPECT_EQ(NL_STAMP(self->off[i], 7), nl_file_word(self->fd, self->off[i]));
	}
	EXPECT_NONLINEAR(self->map, self->n * self->page);
	free(pfn0);
	free(pfn1);
}

/*
 * A folio mapped by two processes at nonlinear addresses (the child's
 * copy of the layout from fork): MPOL_MF_MOVE_ALL must find both ptes;
 * the child then reads every page at its place from the new folios.
 */
TEST_F(mig, move_all_with_child_mapping)
{
	int go[2], done[2], status;
	size_t bad;
	pid_t pid;
	char c;

	if (geteuid())
		SKIP(return, "MPOL_MF_MOVE_ALL needs CAP_SYS_NICE");
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(done));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* Fault the child's ptes in before the move. */
		if (nl_check_pages(self->map, self->n, self->want, false))
			_exit(2);
		if (write(done[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(3);
		if (nl_check_pages(self->map, self->n, self->want, true))
			_exit(4);
		if (pfn_mismatches(self, NULL))
			_exit(5);
		_exit(0);
	}
	ASSERT_EQ(1, read(done[0], &c, 1));
	EXPECT_EQ(0, move_all(self->map, self->n, self->to, MPOL_MF_MOVE_ALL, &bad));
	EXPECT_EQ(0, (long)bad) TH_LOG("a folio mapped by parent and child did not move");
	EXPECT_EQ(0, nl_check_pages(self->map, self->n, self->want, true));
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("child: 2/4 wrong page, 5 wrong PFN");
	close(go[0]);
	close(go[1]);
	close(done[0]);
	close(done[1]);
}

/*
 * Pages swapped out to nonlinear entries migrate nothing (not mapped) but
 * must still come back right once faulted in on the new node: move half,
 * page out the rest, fault everything in and move it all again.
 */
TEST_F(mig, migrate_around_pageout)
{
	size_t bad;

	EXPECT_EQ(0, move_all(self->map, self->n / 2, self->to, MPOL_MF_MOVE, &bad));
	EXPECT_EQ(0, (long)bad);
	EXPECT_EQ(0, madvise(self->map + self->n / 2 * self->page, self->n / 2 * self->page, MADV_PAGEOUT));
	EXPECT_EQ(0, nl_check_pages(self->map, self->n, self->want, true));
	EXPECT_EQ(0, move_all(self->map, self->n, self->to, MPOL_MF_MOVE, &bad));
	EXPECT_EQ(0, (long)bad);
	EXPECT_EQ(0, nl_check_pages(self->map, self->n, self->want, true));
	EXPECT_EQ(0, (long)pfn_mismatches(self, NULL));
	EXPECT_NONLINEAR(self->map, self->n * self->page);
}

NL_HARNESS_MAIN
