// SPDX-License-Identifier: GPL-2.0
/*
 * Fault-around in nonlinear VMAs: a fault on a none pte
 * of a nonlinear VMA is a fault on the linear page and maps its cached
 * neighbours at their none ptes, as in a linear VMA (the series turned
 * fault-around off for every fault of a nonlinear VMA); neighbours that
 * hold nonlinear entries stay entries and keep their pages; a fault on a
 * nonlinear entry maps only its own page (its neighbours' offsets do not
 * follow from its own).
 */
#include "nonlinear_util.h" /* includes kselftest_harness.h */

#define N 32
/* The fault-around window (fault_around_bytes, 64 KiB by default) in pages */
#define WINDOW 16

NL_MEMFD_FIXTURE(fa, "nl_faultaround", N)

/* Pages of [first, first + n) of @map present in pagemap */
static long present_in(const char *map, size_t first, size_t n)
{
	long c = 0;

	for (size_t i = first; i < first + n; i++)
		c += !!(nl_pagemap(map + i * nl_pagesize()) & PM_PRESENT);
	return c;
}

/*
 * A shared mapping of @len bytes of @fd at an address aligned to the
 * fault-around window, so that a fault on page 8 covers pages 0-15
 * (do_fault_around() aligns the window by address).
 */
static char *map_window_aligned(size_t len, int fd)
{
	size_t align = WINDOW * nl_pagesize();
	char *r = mmap(NULL, len + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *m;

	if (r == MAP_FAILED)
		return MAP_FAILED;
	m = (char *)(((uintptr_t)r + align - 1) & ~(uintptr_t)(align - 1));
	return mmap(m, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
}

/* The window fault-around uses here (4 KiB pages, 64 KiB default) or 0 */
static size_t fault_around_pages(void)
{
	unsigned long bytes = 65536;
	FILE *f = fopen("/sys/kernel/debug/fault_around_bytes", "r");

	if (f) {
		if (fscanf(f, "%lu", &bytes) != 1)
			bytes = 65536;
		fclose(f);
	}
	return bytes / nl_pagesize();
}

TEST_F(fa, linear_fault_in_nonlinear_vma_faults_around)
{
	char *lin, *p;
	long want, got;
	uint64_t v = 0;

	if (fault_around_pages() < WINDOW)
		SKIP(return, "fault_around_bytes below %d pages", WINDOW);
	/* A linear mapping of the same file: what fault-around maps there. */
	lin = map_window_aligned(N * self->page, self->fd);
	ASSERT_NE(MAP_FAILED, lin);
	ASSERT_EQ(0, nl_probe(lin + 8 * self->page, &v, false, 0));
	/* Without page 9: it holds an entry below. */
	want = present_in(lin, 1, WINDOW - 1) - present_in(lin, 9, 1);
	munmap(lin, N * self->page);
	ASSERT_LE(WINDOW / 2, want) TH_LOG("fault-around maps only %ld pages of a linear mapping", want);
	p = map_window_aligned(N * self->page, self->fd);
	ASSERT_NE(MAP_FAILED, p);

	/* Page 0 shows file page 31, page 9 file page 30; nothing mapped. */
	ASSERT_EQ(0, nl_remap(p, self->page, 0, 31, MAP_NONBLOCK));
	ASSERT_EQ(0, nl_remap(p + 9 * self->page, self->page, 0, 30, MAP_NONBLOCK));
	ASSERT_EQ(0, madvise(p, N * self->page, MADV_DONTNEED));
	ASSERT_EQ(0, present_in(p, 0, N));

	ASSERT_EQ(0, nl_probe(p + 8 * self->page, &v, false, 0));
	EXPECT_EQ(NL_STAMP(8, 0), v);
	got = present_in(p, 1, WINDOW - 1) - present_in(p, 9, 1);
	EXPECT_EQ(want, got) TH_LOG("a linear fault in the nonlinear VMA mapped %ld neighbours, a linear VMA %ld",
				    got, want);
	/* The entries were left alone, and still name their pages. */
	EXPECT_EQ(0, present_in(p, 0, 1));
	EXPECT_EQ(0, present_in(p, 9, 1));
	self->want[0] = NL_STAMP(31, 0);
	self->want[9] = NL_STAMP(30, 0);
	EXPECT_EQ(0, nl_check_pages(p, N, self->want, true));
	EXPECT_NONLINEAR(p, N * self->page);
}

TEST_F(fa, nonlinear_fault_maps_one_page)
{
	char *p = self->map;
	uint64_t v = 0;

	ASSERT_EQ(0, nl_remap(p + 4 * self->page, self->page, 0, 20, MAP_NONBLOCK));
	ASSERT_EQ(0, madvise(p, N * self->page, MADV_DONTNEED));
	ASSERT_EQ(0, nl_probe(p + 4 * self->page, &v, false, 0));
	EXPECT_EQ(NL_STAMP(20, 0), v);
	EXPECT_EQ(1, present_in(p, 0, N));
	self->want[4] = NL_STAMP(20, 0);
	EXPECT_EQ(0, nl_check_pages(p, N, self->want, true));
}

NL_HARNESS_MAIN
