// SPDX-License-Identifier: GPL-2.0
/*
 * The memory of the nonlinear reverse index, shown as "NonlinearIndex:"
 * in /proc/PID/smaps (per VMA) and /proc/PID/smaps_rollup (the process):
 *   - it follows the index's xarray nodes and alias trees exactly: the
 *     test computes the nodes an xarray needs for the indices it holds;
 *   - it grows with the pages faulted in at nonlinear addresses and drops
 *     when a remap over them drops their slots;
 *   - an index shared by the parts of a split VMA counts once;
 *   - munmap() takes it back to 0.
 * On the series without the line, every test fails on the missing field.
 */
#include "nonlinear_util.h" /* includes kselftest_harness.h */

#define N 8192			/* file pages */
#define XA_NODE_BYTES 576	/* sizeof(struct xa_node), 64-bit */
#define ALIAS_BYTES 32		/* struct nl_alias: an rb_node and a slot */
#define SET_BYTES 16		/* struct nl_aliases: an rb_root and a count */

/*
 * The xarray nodes holding every index of @n ranges (lo, hi pairs in
 * ascending order): at each level, one node per distinct index >> shift.
 */
static long xa_nodes(const unsigned long (*r)[2], int n)
{
	unsigned long top = r[n - 1][1];
	long nodes = 0;
	int levels = 1;

	/* A lone entry at index 0 sits in the xarray's head: no node */
	if (top == 0)
		return 0;
	while (top >> (6 * levels))
		levels++;
	for (int l = 1; l <= levels; l++) {
		long last = -1;

		for (int i = 0; i < n; i++) {
			long a = (long)(r[i][0] >> (6 * l)), b = (long)(r[i][1] >> (6 * l));

			if (a <= last)
				a = last + 1;
			if (b >= a)
				nodes += b - a + 1;
			if (b > last)
				last = b;
		}
	}
	return nodes;
}

/* The nodes of one range of indices */
static long xa_range_nodes(unsigned long lo, unsigned long hi)
{
	const unsigned long r[1][2] = { { lo, hi } };

	return xa_nodes(r, 1);
}

static long rollup_kb(void)
{
	return (long)nl_file_value("/proc/self/smaps_rollup", "NonlinearIndex", ':');
}

/*
 * Whether @kb (what smaps shows, in kB) is @bytes of index contents plus
 * the index's own header (less than 1 kB), rounded down.
 */
static bool index_kb_is(long kb, long bytes)
{
	return kb == bytes / 1024 || kb == bytes / 1024 + 1;
}

FIXTURE(size)
{
	int fd;
	size_t page;
	char *map;
};

FIXTURE_SETUP(size)
{
	self->page = nl_pagesize();
	self->map = MAP_FAILED;
	self->fd = nl_memfd("nl_index_size", N, true);
	ASSERT_LE(0, self->fd);
	if (!nonlinear_supported())
		SKIP(return, "no nonlinear remap_file_pages() on this kernel");
	self->map = nl_map_with_hole(N * self->page, self->fd);
	ASSERT_NE(MAP_FAILED, self->map);
	/* Reversed: address i shows file page N - 1 - i (entries only) */
	for (size_t i = 0; i < N; i++)
		ASSERT_EQ(0, nl_remap(self->map + i * self->page, self->page, 0, N - 1 - i,
				      MAP_NONBLOCK));
}

FIXTURE_TEARDOWN(size)
{
	if (self->map != MAP_FAILED)
		munmap(self->map, N * self->page);
	if (self->fd >= 0)
		close(self->fd);
}

static void touch(char *map, size_t first, size_t n)
{
	for (size_t i = first; i < first + n; i++)
		(void)*(volatile char *)(map + i * nl_pagesize());
}

/* Exactly the xarray nodes of the slots and offsets faulted in */
TEST_F(size, follows_the_index)
{
	long kb0 = nl_smaps_kb(self->map, "NonlinearIndex"), kb, want;

	ASSERT_LE(0, kb0) TH_LOG("smaps has no NonlinearIndex line");
	/* Entries never faulted in cost nothing: only the header */
	EXPECT_EQ(0, kb0);
	EXPECT_EQ(kb0, rollup_kb());

	touch(self->map, 0, 1024);
	/* slots 0..1023, offsets N-1024..N-1 */
	want = XA_NODE_BYTES * (xa_range_nodes(0, 1023) + xa_range_nodes(N - 1024, N - 1));
	kb = nl_smaps_kb(self->map, "NonlinearIndex");
	TH_LOG("1024 pages faulted in: %ld kB (nodes: %ld B)", kb, want);
	EXPECT_TRUE(index_kb_is(kb, want));

	touch(self->map, 1024, N - 1024);
	want = XA_NODE_BYTES * (xa_range_nodes(0, N - 1) + xa_range_nodes(0, N - 1));
	kb = nl_smaps_kb(self->map, "NonlinearIndex");
	TH_LOG("%d pages faulted in: %ld kB (nodes: %ld B)", N, kb, want);
	EXPECT_TRUE(index_kb_is(kb, want));
	EXPECT_EQ(kb, rollup_kb());

	/*
	 * Addresses 0..511 all show file page 5, which address N - 6 shows
	 * too: one alias set of 513 slots; offsets N-512..N-1 are shown no
	 * more, the owner xarray keeps every slot.
	 */
	for (size_t i = 0; i < 512; i++)
		ASSERT_EQ(0, nl_remap(self->map + i * self->page, self->page, 0, 5, MAP_NONBLOCK));
	touch(self->map, 0, 512);
	want = XA_NODE_BYTES * (xa_range_nodes(0, N - 1) + xa_range_nodes(0, N - 513)) +
	       SET_BYTES + 513 * ALIAS_BYTES;
	kb = nl_smaps_kb(self->map, "NonlinearIndex");
	TH_LOG("with 513 aliases: %ld kB (nodes and aliases: %ld B)", kb, want);
	EXPECT_TRUE(index_kb_is(kb, want));

	/* A linear remap of the upper half drops its slots */
	ASSERT_EQ(0, nl_remap(self->map + N / 2 * self->page, N / 2 * self->page, 0, N / 2,
			      MAP_NONBLOCK));
	{
		/* offsets 5 (slots 0..511) and 4096..7679 (slots 512..4095) */
		const unsigned long shown[2][2] = { { 5, 5 }, { N / 2, N - 513 } };

		want = XA_NODE_BYTES * (xa_range_nodes(0, N / 2 - 1) + xa_nodes(shown, 2)) +
		       SET_BYTES + 512 * ALIAS_BYTES;
	}
	kb = nl_smaps_kb(self->map, "NonlinearIndex");
	TH_LOG("upper half linear again: %ld kB (%ld B)", kb, want);
	EXPECT_TRUE(index_kb_is(kb, want));

	ASSERT_EQ(0, munmap(self->map, N * self->page));
	self->map = MAP_FAILED;
	EXPECT_EQ(0, rollup_kb());
}

/* The parts of a split VMA share the index: it counts once */
TEST_F(size, split_counts_once)
{
	long whole, lo, mid, hi;

	touch(self->map, 0, N);
	whole = nl_smaps_kb(self->map, "NonlinearIndex");
	ASSERT_LT(0, whole);
	ASSERT_EQ(0, mprotect(self->map + N / 2 * self->page, self->page, PROT_READ));
	EXPECT_EQ(3, nl_count_vmas(self->map, N * self->page));
	lo = nl_smaps_kb(self->map, "NonlinearIndex");
	mid = nl_smaps_kb(self->map + N / 2 * self->page, "NonlinearIndex");
	hi = nl_smaps_kb(self->map + (N - 1) * self->page, "NonlinearIndex");
	TH_LOG("whole %ld kB; split: %ld + %ld + %ld kB", whole, lo, mid, hi);
	EXPECT_EQ(whole, lo + mid + hi);
	EXPECT_EQ(whole, rollup_kb());
	ASSERT_EQ(0, munmap(self->map, N * self->page));
	self->map = MAP_FAILED;
	EXPECT_EQ(0, rollup_kb());
}

NL_HARNESS_MAIN
