// SPDX-License-Identifier: GPL-2.0
/*
 * Implementation checks for the nonlinear rmap (kernel/patches 0004/0005):
 * one file page mapped at several nonlinear addresses of one VMA must be
 * found at all of them by reclaim and by hole punching; a large nonlinear
 * VMA must still page out and refault correctly after mremap.  Written by
 * the kernel series' author; the feature tests are nonlinear_*_test.c.
 */
#include "nonlinear_util.h" /* includes kselftest_harness.h */

#ifndef FALLOC_FL_PUNCH_HOLE
#define FALLOC_FL_KEEP_SIZE 0x01
#define FALLOC_FL_PUNCH_HOLE 0x02
#endif

#define N 64

FIXTURE(rmap)
{
	int fd;
	char *map;
	size_t page;
};

FIXTURE_SETUP(rmap)
{
	self->page = nl_pagesize();
	self->fd = nl_memfd("nl_impl_rmap", N, true);
	ASSERT_LE(0, self->fd);
	self->map = nl_map_with_hole(N * self->page, self->fd);
	ASSERT_NE(MAP_FAILED, self->map);
	if (!nonlinear_supported())
		SKIP(return, "no nonlinear remap_file_pages() on this kernel");
}

FIXTURE_TEARDOWN(rmap)
{
	if (self->map != MAP_FAILED)
		munmap(self->map, N * self->page);
	if (self->fd >= 0)
		close(self->fd);
}

/* File page 5 at addresses 10..19 and at its linear place 5; 20.. reversed. */
static int alias_page5(FIXTURE_DATA(rmap) *self, uint64_t *want)
{
	for (size_t i = 0; i < N; i++)
		want[i] = NL_STAMP(i, 0);
	/* Addresses 20..N-1 show their pages in reverse order. */
	for (size_t i = 20; i < N; i++) {
		if (nl_remap(self->map + i * self->page, self->page, 0, N + 19 - i, 0))
			return -1;
		want[i] = NL_STAMP(N + 19 - i, 0);
	}
	for (size_t i = 10; i < 20; i++) {
		if (nl_remap(self->map + i * self->page, self->page, 0, 5, 0))
			return -1;
		want[i] = NL_STAMP(5, 0);
	}
	return 0;
}

TEST_F(rmap, one_page_many_addresses_survives_pageout)
{
	uint64_t want[N];
	long long out0;

	if (nl_meminfo_kb("SwapTotal") <= 0)
		SKIP(return, "no active swap");
	ASSERT_EQ(0, alias_page5(self, want));
	EXPECT_EQ(0, nl_check_pages(self->map, N, want, false));
	EXPECT_EQ(N, nl_count_present(self->map, N));
	out0 = nl_vmstat("pswpout");
	nl_lru_drain_all();
	ASSERT_EQ(0, madvise(self->map, N * self->page, MADV_PAGEOUT));
	TH_LOG("pswpout +%lld, %ld of %d still mapped", nl_vmstat("pswpout") - out0,
	       nl_count_present(self->map, N), N);
	/*
	 * MADV_PAGEOUT leaves page 5 alone (mapped more than once); the
	 * others went out and must come back from their own offsets.
	 */
	for (size_t i = 20; i < N; i++) {
		EXPECT_EQ(0ULL, nl_pagemap(self->map + i * self->page) & PM_PRESENT)
			TH_LOG("address %zu still mapped", i);
	}
	EXPECT_EQ(0, nl_check_pages(self->map, N, want, true));
	/* A write through one alias shows through all of them. */
	*(volatile uint64_t *)(self->map + 13 * self->page) = NL_STAMP(5, 3);
	for (size_t i = 10; i < 20; i++)
		EXPECT_EQ(NL_STAMP(5, 3), *(volatile uint64_t *)(self->map + i * self->page));
	EXPECT_EQ(NL_STAMP(5, 3), *(volatile uint64_t *)(self->map + 5 * self->page));
	EXPECT_EQ(1, nl_count_vmas(self->map, N * self->page));
}

TEST_F(rmap, one_page_many_addresses_punch_hole)
{
	uint64_t want[N];

	ASSERT_EQ(0, alias_page5(self, want));
	EXPECT_EQ(0, nl_check_pages(self->map, N, want, false));
	ASSERT_EQ(0, fallocate(self->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			       5 * self->page, self->page));
	for (size_t i = 10; i < 20; i++)
		want[i] = NL_WANT_ZERO;
	want[5] = NL_WANT_ZERO;
	EXPECT_EQ(0, nl_check_pages(self->map, N, want, false));
	/* Refilled through an alias: every alias sees the new page. */
	*(volatile uint64_t *)(self->map + 17 * self->page) = NL_STAMP(5, 4);
	EXPECT_EQ(NL_STAMP(5, 4), nl_file_word(self->fd, 5));
	EXPECT_EQ(NL_STAMP(5, 4), *(volatile uint64_t *)(self->map + 11 * self->page));
	EXPECT_EQ(1, nl_count_vmas(self->map, N * self->page));
}

/* A large reversed VMA: page out a sparse set after mremap, refault all. */
TEST_F_TIMEOUT(rmap, big_vma_mremap_pageout, 240)
{
	const size_t n = 16384, step = 61;
	size_t sampled = 0;
	double t0, t1;
	char *m, *m2;
	int fd;

	if (nl_meminfo_kb("SwapTotal") <= 0)
		SKIP(return, "no active swap");
	fd = nl_memfd("nl_impl_big", n, true);
	ASSERT_LE(0, fd);
	m = mmap(NULL, n * self->page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	for (size_t i = 0; i < n; i++)
		ASSERT_EQ(0, nl_remap(m + i * self->page, self->page, 0, n - 1 - i, 0));
	/* Move it: onto a reserved range of the same size. */
	m2 = mmap(NULL, n * self->page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, m2);
	ASSERT_EQ(m2, mremap(m, n * self->page, n * self->page, MREMAP_MAYMOVE | MREMAP_FIXED, m2));
	nl_lru_drain_all();
	t0 = nl_now();
	for (size_t i = 0; i < n; i += step, sampled++)
		ASSERT_EQ(0, madvise(m2 + i * self->page, self->page, MADV_PAGEOUT));
	t1 = nl_now();
	TH_LOG("MADV_PAGEOUT of %zu pages in a %zu-page nonlinear VMA: %.0f us/page", sampled, n,
	       (t1 - t0) / sampled * 1e6);
	for (size_t i = 0; i < n; i += step)
		EXPECT_EQ(0ULL, nl_pagemap(m2 + i * self->page) & PM_PRESENT);
	for (size_t i = 0; i < n; i++) {
		uint64_t v = *(volatile uint64_t *)(m2 + i * self->page);

		if (v != NL_STAMP(n - 1 - i, 0)) {
			EXPECT_EQ(NL_STAMP(n - 1 - i, 0), v) TH_LOG("page %zu", i);
			break;
		}
	}
	EXPECT_EQ(1, nl_count_vmas(m2, n * self->page));
	munmap(m2, n * self->page);
	close(fd);
}

NL_HARNESS_MAIN
