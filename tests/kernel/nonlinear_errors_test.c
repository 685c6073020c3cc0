// SPDX-License-Identifier: GPL-2.0
/*
 * remap_file_pages() ABI: the error cases and argument rounding of the 6.12
 * emulation, which the nonlinear implementation must keep.  These tests pass
 * on the stock kernel and on the patched one alike.  After a failed call the
 * mapping must be untouched (same VMAs, same pages).
 */
#include "nonlinear_util.h" /* includes kselftest_harness.h */

#define N 8

FIXTURE(abi)
{
	int fd;
	char *map;
	size_t page;
	uint64_t want[N];
	long vmas;
};

FIXTURE_SETUP(abi)
{
	self->page = nl_pagesize();
	self->fd = nl_memfd("nl_abi", N, true);
	ASSERT_LE(0, self->fd);
	/* The mapping is followed by an unmapped page (a hole). */
	self->map = nl_map_with_hole(N * self->page, self->fd);
	ASSERT_NE(MAP_FAILED, self->map);
	for (size_t i = 0; i < N; i++)
		self->want[i] = NL_STAMP(i, 0);
	self->vmas = nl_count_vmas(self->map, N * self->page);
	ASSERT_EQ(1, self->vmas);
}

FIXTURE_TEARDOWN(abi)
{
	if (self->map && self->map != MAP_FAILED)
		munmap(self->map, N * self->page);
	if (self->fd >= 0)
		close(self->fd);
}

/* The call failed with @err and left the mapping as it was. */
#define EXPECT_FAILS_CLEANLY(call, err)                                        \
	do {                                                                   \
		errno = 0;                                                     \
		EXPECT_EQ(-1, (call));                                         \
		EXPECT_EQ(err, errno);                                         \
		EXPECT_EQ(self->vmas, nl_count_vmas(self->map, N * self->page)); \
		EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false)); \
	} while (0)

/* prot must be 0 (any non-zero prot was EINVAL in the emulation). */
TEST_F(abi, prot_nonzero_einval)
{
	EXPECT_FAILS_CLEANLY(nl_remap(self->map, self->page, PROT_READ, 1, 0), EINVAL);
	EXPECT_FAILS_CLEANLY(nl_remap(self->map, self->page, PROT_READ | PROT_WRITE, 1, 0), EINVAL);
	EXPECT_FAILS_CLEANLY(nl_remap(self->map, self->page, PROT_NONE + 0x100, 1, 0), EINVAL);
}

/* size 0, or smaller than a page (rounded down to 0), is EINVAL. */
TEST_F(abi, size_zero_einval)
{
	EXPECT_FAILS_CLEANLY(nl_remap(self->map, 0, 0, 1, 0), EINVAL);
	EXPECT_FAILS_CLEANLY(nl_remap(self->map, self->page - 1, 0, 1, 0), EINVAL);
	EXPECT_FAILS_CLEANLY(nl_remap(self->map + 5, 100, 0, 1, 0), EINVAL);
}

/* start + size wrapping around the address space is EINVAL. */
TEST_F(abi, address_wrap_einval)
{
	EXPECT_FAILS_CLEANLY(nl_remap(self->map, -(uintptr_t)self->map, 0, 0, 0), EINVAL);
	EXPECT_FAILS_CLEANLY(nl_remap((void *)(-self->page), 2 * self->page, 0, 0, 0), EINVAL);
}

/* pgoff + pages wrapping past ULONG_MAX is EINVAL. */
TEST_F(abi, pgoff_wrap_einval)
{
	EXPECT_FAILS_CLEANLY(nl_remap(self->map, self->page, 0, ~0UL, 0), EINVAL);
	EXPECT_FAILS_CLEANLY(nl_remap(self->map, 2 * self->page, 0, ~0UL, MAP_NONBLOCK), EINVAL);
	EXPECT_FAILS_CLEANLY(nl_remap(self->map, N * self->page, 0, ~0UL - (N - 2), 0), EINVAL);
}

/*
 * A pgoff that does not wrap but lies far beyond anything a file can hold
 * fails: EOVERFLOW from the emulation's do_mmap(), EINVAL from a
 * nonlinear implementation that cannot encode it in a pte (as 3.x did).
 * Either way the call fails and the mapping is left alone.
 */
TEST_F(abi, pgoff_unrepresentable_fails)
{
	errno = 0;
	EXPECT_EQ(-1, nl_remap(self->map, self->page, 0, ~0UL - 16, 0));
	EXPECT_TRUE(errno == EINVAL || errno == EOVERFLOW)
		TH_LOG("errno %d (%s)", errno, strerror(errno));
	EXPECT_EQ(self->vmas, nl_count_vmas(self->map, N * self->page));
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
}

/*
 * A pgoff far beyond EOF that a file could still reach (2^48 pages): the
 * emulation maps it (touching raises SIGBUS); the nonlinear kernel refuses
 * offsets its ptes cannot hold (>= 2^47 pages on x86_64) with EINVAL.
 * Either is accepted; which one is logged.
 */
TEST_F(abi, pgoff_huge_beyond_eof)
{
	int ret;

	errno = 0;
	ret = nl_remap(self->map + 2 * self->page, self->page, 0, 1UL << 48, 0);
	if (ret) {
		EXPECT_EQ(EINVAL, errno);
		TH_LOG("pgoff 2^48: EINVAL");
	} else {
		self->want[2] = NL_WANT_SIGBUS;
		TH_LOG("pgoff 2^48: accepted, SIGBUS on touch");
	}
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
}

/* A sealed mapping (mseal) cannot be remapped: EPERM. */
TEST_F(abi, sealed_mapping_eperm)
{
#ifndef __NR_mseal
#define __NR_mseal 462
#endif
	if (syscall(__NR_mseal, self->map, N * self->page, 0))
		SKIP(return, "mseal: %s", strerror(errno));
	EXPECT_FAILS_CLEANLY(nl_remap(self->map, self->page, 0, 1, 0), EPERM);
	EXPECT_FAILS_CLEANLY(nl_remap(self->map + self->page, 2 * self->page, 0, 5, MAP_NONBLOCK), EPERM);
	/* The teardown's munmap fails on a sealed mapping: nothing to undo. */
	self->map = MAP_FAILED;
}

/* A start address in no mapping is EINVAL. */
TEST_F(abi, start_unmapped_einval)
{
	char *hole = mmap(NULL, 4 * self->page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, hole);
	ASSERT_EQ(0, munmap(hole, 4 * self->page));
	EXPECT_FAILS_CLEANLY(nl_remap(hole, self->page, 0, 0, 0), EINVAL);
	EXPECT_FAILS_CLEANLY(nl_remap(NULL, self->page, 0, 0, 0), EINVAL);
	/* Just past the end of the mapping. */
	EXPECT_FAILS_CLEANLY(nl_remap(self->map + N * self->page, self->page, 0, 0, 0), EINVAL);
}

/* A range running off the end of the mapping into a hole is EINVAL. */
TEST_F(abi, range_into_hole_einval)
{
	ASSERT_EQ(0, nl_count_vmas(self->map + N * self->page, self->page));
	EXPECT_FAILS_CLEANLY(nl_remap(self->map + (N - 1) * self->page, 2 * self->page, 0, 0, 0), EINVAL);
	EXPECT_FAILS_CLEANLY(nl_remap(self->map, (N + 1) * self->page, 0, 0, MAP_NONBLOCK), EINVAL);
}

/* A hole in the middle of the range (munmap of one page) is EINVAL. */
TEST_F(abi, range_over_inner_hole_einval)
{
	ASSERT_EQ(0, munmap(self->map + 3 * self->page, self->page));
	self->vmas = nl_count_vmas(self->map, N * self->page);
	ASSERT_EQ(2, self->vmas);
	errno = 0;
	EXPECT_EQ(-1, nl_remap(self->map + 2 * self->page, 3 * self->page, 0, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(2, nl_count_vmas(self->map, N * self->page));
	EXPECT_EQ(0, nl_check_pages(self->map, 3, self->want, false));
	EXPECT_EQ(0, nl_check_pages(self->map + 4 * self->page, N - 4, self->want + 4, false));
}

/* A range crossing into a VMA of another file is EINVAL. */
TEST_F(abi, range_crossing_other_file_einval)
{
	int fd2 = nl_memfd("nl_abi2", N, true);
	char *m2;

	ASSERT_LE(0, fd2);
	/* Replace the upper half of the mapping with another memfd. */
	m2 = mmap(self->map + N / 2 * self->page, N / 2 * self->page, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_FIXED, fd2, N / 2 * self->page);
	ASSERT_EQ(self->map + N / 2 * self->page, m2);
	self->vmas = nl_count_vmas(self->map, N * self->page);
	ASSERT_EQ(2, self->vmas);
	EXPECT_FAILS_CLEANLY(nl_remap(self->map + (N / 2 - 1) * self->page, 2 * self->page, 0, 0, 0), EINVAL);
	close(fd2);
}

/* A range crossing into a VMA with other flags (mprotect split) is EINVAL. */
TEST_F(abi, range_crossing_other_flags_einval)
{
	ASSERT_EQ(0, mprotect(self->map + N / 2 * self->page, N / 2 * self->page, PROT_READ));
	self->vmas = nl_count_vmas(self->map, N * self->page);
	ASSERT_EQ(2, self->vmas);
	EXPECT_FAILS_CLEANLY(nl_remap(self->map + (N / 2 - 1) * self->page, 2 * self->page, 0, 0, 0), EINVAL);
	EXPECT_FAILS_CLEANLY(nl_remap(self->map, N * self->page, 0, 0, MAP_NONBLOCK), EINVAL);
}

/*
 * Two adjacent VMAs of the same memfd with the same flags that did not
 * merge (their offsets are not contiguous): the 6.12 emulation accepts a
 * range spanning both; the 3.x nonlinear code refused it (EINVAL).  The
 * issue only requires "a range crossing VMAs" to stay an error where it
 * is one today, so accept either, but never a wrong page.
 */
TEST_F(abi, range_crossing_same_file_vmas)
{
	char *m2;
	int ret;

	/* Upper half shows file pages 0.. instead of N/2.. : no merge. */
	m2 = mmap(self->map + N / 2 * self->page, N / 2 * self->page, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_FIXED, self->fd, 0);
	ASSERT_EQ(self->map + N / 2 * self->page, m2);
	for (size_t i = N / 2; i < N; i++)
		self->want[i] = NL_STAMP(i - N / 2, 0);
	self->vmas = nl_count_vmas(self->map, N * self->page);
	ASSERT_EQ(2, self->vmas);
	errno = 0;
	ret = nl_remap(self->map + (N / 2 - 1) * self->page, 2 * self->page, 0, 5, 0);
	if (ret) {
		EXPECT_EQ(EINVAL, errno);
		TH_LOG("range spanning two same-file VMAs: EINVAL");
	} else {
		self->want[N / 2 - 1] = NL_STAMP(5, 0);
		self->want[N / 2] = NL_STAMP(6, 0);
		TH_LOG("range spanning two same-file VMAs: accepted (%ld VMAs now)",
		       nl_count_vmas(self->map, N * self->page));
	}
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
}

/* A MAP_PRIVATE mapping of a memfd is EINVAL. */
TEST_F(abi, private_file_mapping_einval)
{
	char *p = mmap(NULL, N * self->page, PROT_READ | PROT_WRITE, MAP_PRIVATE, self->fd, 0);

	ASSERT_NE(MAP_FAILED, p);
	errno = 0;
	EXPECT_EQ(-1, nl_remap(p, self->page, 0, 1, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(1, nl_count_vmas(p, N * self->page));
	EXPECT_EQ(0, nl_check_pages(p, N, self->want, false));
	munmap(p, N * self->page);
}

/* A private anonymous mapping is EINVAL. */
TEST_F(abi, private_anon_mapping_einval)
{
	char *p = mmap(NULL, N * self->page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, p);
	errno = 0;
	EXPECT_EQ(-1, nl_remap(p, self->page, 0, 1, 0));
	EXPECT_EQ(EINVAL, errno);
	munmap(p, N * self->page);
}

/* MAP_SHARED of a read-only fd has no VM_SHARED: EINVAL. */
TEST_F(abi, readonly_shared_mapping_einval)
{
	char path[64];
	int ro;
	char *p;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", self->fd);
	ro = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, ro);
	p = mmap(NULL, N * self->page, PROT_READ, MAP_SHARED, ro, 0);
	ASSERT_NE(MAP_FAILED, p);
	errno = 0;
	EXPECT_EQ(-1, nl_remap(p, self->page, 0, 1, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, nl_check_pages(p, N, self->want, false));
	munmap(p, N * self->page);
	close(ro);
}

/* An unaligned start is rounded down to its page. */
TEST_F(abi, unaligned_start_rounds_down)
{
	EXPECT_EQ(0, nl_remap(self->map + 2 * self->page + 123, self->page, 0, 6, 0));
	self->want[2] = NL_STAMP(6, 0);
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
}

/* An unaligned size is rounded down: page + 100 bytes remaps one page. */
TEST_F(abi, unaligned_size_rounds_down)
{
	EXPECT_EQ(0, nl_remap(self->map + 1 * self->page, self->page + 100, 0, 5, 0));
	self->want[1] = NL_STAMP(5, 0);
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	EXPECT_EQ(0, nl_remap(self->map + 3 * self->page, 3 * self->page - 1, 0, 0, 0));
	self->want[3] = NL_STAMP(0, 0);
	self->want[4] = NL_STAMP(1, 0);
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
}

/* flags other than MAP_NONBLOCK are ignored, as in the emulation. */
TEST_F(abi, other_flags_ignored)
{
	EXPECT_EQ(0, nl_remap(self->map, self->page, 0, 7, MAP_PRIVATE | MAP_FIXED));
	self->want[0] = NL_STAMP(7, 0);
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
}

/*
 * Beyond EOF (the decision for this project): the call succeeds, with or
 * without MAP_NONBLOCK; touching such a page raises SIGBUS (BUS_ADRERR),
 * like any shmem page beyond EOF; the other pages are unaffected.
 */
TEST_F(abi, beyond_eof_sigbus_on_touch)
{
	struct stat st;
	blkcnt_t blocks;
	uint64_t v;
	int sig;

	ASSERT_EQ(0, fstat(self->fd, &st));
	blocks = st.st_blocks;
	EXPECT_EQ(0, nl_remap(self->map + 1 * self->page, self->page, 0, N + 3, MAP_NONBLOCK));
	EXPECT_EQ(0, nl_remap(self->map + 4 * self->page, 2 * self->page, 0, 2 * N, 0));
	self->want[1] = NL_WANT_SIGBUS;
	self->want[4] = NL_WANT_SIGBUS;
	self->want[5] = NL_WANT_SIGBUS;
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	sig = nl_probe(self->map + 4 * self->page + 8, &v, false, 0);
	EXPECT_EQ(SIGBUS, sig);
	EXPECT_EQ(BUS_ADRERR, nl_code);
	EXPECT_EQ(self->map + 4 * self->page + 8, (char *)nl_fault_addr);
	sig = nl_probe(self->map + 1 * self->page, NULL, true, 1);
	EXPECT_EQ(SIGBUS, sig);
	/* Nothing was allocated beyond EOF. */
	ASSERT_EQ(0, fstat(self->fd, &st));
	EXPECT_EQ((off_t)(N * self->page), st.st_size);
	EXPECT_EQ(blocks, st.st_blocks);
	/* Growing the file makes them readable: fresh zero pages. */
	ASSERT_EQ(0, ftruncate(self->fd, 3 * N * self->page));
	self->want[1] = NL_WANT_ZERO;
	self->want[4] = NL_WANT_ZERO;
	self->want[5] = NL_WANT_ZERO;
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
}

/* A nonlinear remap within an mprotect(PROT_READ) VMA works; prot stays. */
TEST_F(abi, readonly_vma_remap_allowed)
{
	ASSERT_EQ(0, mprotect(self->map, N * self->page, PROT_READ));
	EXPECT_EQ(0, nl_remap(self->map, self->page, 0, 3, 0));
	self->want[0] = NL_STAMP(3, 0);
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	EXPECT_EQ(SIGSEGV, nl_probe(self->map, NULL, true, 1));
	EXPECT_EQ(SEGV_ACCERR, nl_code);
}

NL_HARNESS_MAIN
