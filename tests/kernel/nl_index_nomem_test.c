// SPDX-License-Identifier: GPL-2.0
/*
 * The nonlinear reverse index when its allocations fail (slab fault
 * injection, CONFIG_FAILSLAB, which the debug kernel has).  The index must
 * stay complete, so each operation that cannot allocate what the index
 * needs fails as a whole, as any other allocation failure on its path
 * would make it fail, and works once memory is back:
 *   - a fault that cannot record its page is VM_FAULT_OOM: it maps
 *     nothing and the access is retried;
 *   - a first remap_file_pages() that cannot create the index, a fork()
 *     that cannot copy it and an mremap() that cannot give the grown part
 *     an index of its own return ENOMEM and change nothing.
 * The series marked the index incomplete instead, for good: every rmap
 * walk of its vmas went back to scanning their page tables, the index
 * stopped growing (NonlinearIndex in smaps stayed where it was), a child
 * of fork() or a vma made nonlinear had no index at all.
 * Needs root and /sys/kernel/debug/failslab (skipped otherwise).
 */
#include <sys/wait.h>

#include "nonlinear_util.h" /* includes kselftest_harness.h */

#ifndef FALLOC_FL_PUNCH_HOLE
#define FALLOC_FL_KEEP_SIZE 0x01
#define FALLOC_FL_PUNCH_HOLE 0x02
#endif

#define N 512 /* file pages */
#define FAILSLAB "/sys/kernel/debug/failslab/"

/*
 * Failed node allocations that make one store into the index fail: the
 * store under the index lock (GFP_NOWAIT), then xa_reserve() outside it,
 * which tries GFP_NOWAIT under the xarray lock and GFP_KERNEL after it.
 */
#define FAILS_PER_STORE 3

/*
 * Makes the next @times slab allocations of this task fail (only those
 * from the radix_tree_node cache, the index's xarray nodes, when
 * @xarray_only), silently.  Returns 0 or -1.
 */
static int failslab_arm(int times, bool xarray_only)
{
	if (nl_write_file(NL_RADIX_SLAB_DIR "/failslab", xarray_only ? "1" : "0") ||
	    nl_failslab_arm(times, xarray_only))
		return -1;
	return nl_write_file("/proc/self/make-it-fail", "1");
}

/* Stops the injection; returns how many of the failures were not used */
static long failslab_disarm(void)
{
	long left;

	nl_write_file("/proc/self/make-it-fail", "0");
	left = read_long(FAILSLAB "times");
	nl_write_file(FAILSLAB "times", "0");
	nl_write_file(FAILSLAB "cache-filter", "N");
	nl_write_file(NL_RADIX_SLAB_DIR "/failslab", "0");
	return left;
}

FIXTURE(nomem)
{
	int fd;
	size_t page;
};

FIXTURE_SETUP(nomem)
{
	self->page = nl_pagesize();
	self->fd = nl_memfd("nl_index_nomem", N, true);
	ASSERT_LE(0, self->fd);
	if (!nonlinear_supported())
		SKIP(return, "no nonlinear remap_file_pages() on this kernel");
	if (geteuid() || access(FAILSLAB "times", W_OK) ||
	    access(NL_RADIX_SLAB_DIR "/failslab", W_OK))
		SKIP(return, "needs root and CONFIG_FAILSLAB (the debug kernel)");
}

FIXTURE_TEARDOWN(nomem)
{
	failslab_disarm();
	if (self->fd >= 0)
		close(self->fd);
}

/*
 * @n pages of the file at a new address, address i showing page n - 1 - i,
 * none of them faulted in yet: MAP_NONBLOCK, since remap_file_pages()
 * otherwise populates the range and the faults that add the index's slots
 * would all happen here, before a test arms the injection.
 */
static char *map_reversed(int fd, size_t n)
{
	char *m = nl_map_with_hole(n * nl_pagesize(), fd);

	if (m == MAP_FAILED)
		return m;
	for (size_t i = 0; i < n; i++)
		if (nl_remap(m + i * nl_pagesize(), nl_pagesize(), 0, n - 1 - i,
			     MAP_NONBLOCK)) {
			munmap(m, n * nl_pagesize());
			return MAP_FAILED;
		}
	return m;
}

/* Reads every page of a map_reversed() mapping; returns the wrong ones */
static size_t read_reversed(const char *m, size_t n)
{
	size_t bad = 0;

	for (size_t i = 0; i < n; i++)
		bad += *(volatile const uint64_t *)(m + i * nl_pagesize()) != NL_STAMP(n - 1 - i, 0);
	return bad;
}

/*
 * Hole-punches page n - 1 - @i and checks that address @i reads zeroes:
 * truncation found it through the index.  Restamps the page.
 */
static bool punch_found(int fd, const char *m, size_t n, size_t i)
{
	bool zero;

	if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		      (off_t)((n - 1 - i) * nl_pagesize()), (off_t)nl_pagesize()))
		return false;
	zero = *(volatile const uint64_t *)(m + i * nl_pagesize()) == 0;
	nl_stamp_fd(fd, n - 1 - i, 1, 0, false);
	return zero;
}

/*
 * The first faults find no memory for the index: they are retried until
 * there is, and the index ends up as large as one built without failures.
 */
TEST_F(nomem, failed_fault_keeps_index_complete)
{
	char *control = map_reversed(self->fd, N), *m = map_reversed(self->fd, N);
	long want, left;

	ASSERT_NE(MAP_FAILED, control);
	ASSERT_NE(MAP_FAILED, m);
	ASSERT_EQ(0UL, read_reversed(control, N));
	want = nl_smaps_kb(control, "NonlinearIndex");
	ASSERT_LT(0, want);

	/* Two failed faults, each retried by the access */
	ASSERT_EQ(0, failslab_arm(2 * FAILS_PER_STORE, true));
	EXPECT_EQ(0UL, read_reversed(m, N));
	left = failslab_disarm();
	EXPECT_EQ(0, left) TH_LOG("%ld injected failures were not used", left);
	EXPECT_EQ(want, nl_smaps_kb(m, "NonlinearIndex"))
		TH_LOG("the index stopped growing after the failure");
	EXPECT_TRUE(punch_found(self->fd, m, N, 0));
	EXPECT_TRUE(punch_found(self->fd, m, N, N - 1));
	munmap(control, N * self->page);
	munmap(m, N * self->page);
}

/* fork() that cannot copy the index fails; the next one copies it whole */
TEST_F(nomem, fork_without_memory_fails)
{
	char *m = map_reversed(self->fd, N);
	long want, left;
	int status, err;
	pid_t pid;

	ASSERT_NE(MAP_FAILED, m);
	ASSERT_EQ(0UL, read_reversed(m, N));
	want = nl_smaps_kb(m, "NonlinearIndex");
	ASSERT_LT(0, want);

	ASSERT_EQ(0, failslab_arm(FAILS_PER_STORE, true));
	pid = fork();
	err = errno;
	if (pid == 0)
		_exit(nl_smaps_kb(m, "NonlinearIndex") == want ? 0 : 1);
	left = failslab_disarm();
	if (pid > 0) {
		waitpid(pid, &status, 0);
		TH_LOG("fork() succeeded; its child's index %s",
		       WIFEXITED(status) && !WEXITSTATUS(status) ? "is whole" : "is missing");
	}
	EXPECT_EQ(-1, pid);
	EXPECT_EQ(ENOMEM, err);
	EXPECT_EQ(0, left);

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(nl_smaps_kb(m, "NonlinearIndex") == want && !read_reversed(m, N) ? 0 : 1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	munmap(m, N * self->page);
}

/*
 * The first nonlinear remap of a vma cannot create its index: ENOMEM, and
 * the vma stays linear; the next remap makes it nonlinear, with an index.
 */
TEST_F(nomem, first_remap_without_memory_fails)
{
	char *m = nl_map_with_hole(N * self->page, self->fd);
	long left;
	int ret, err;

	ASSERT_NE(MAP_FAILED, m);
	/* The first slab allocation of the call is the index */
	ASSERT_EQ(0, failslab_arm(1, false));
	ret = nl_remap(m, self->page, 0, N - 1, 0);
	err = errno;
	left = failslab_disarm();
	EXPECT_EQ(-1, ret);
	EXPECT_EQ(ENOMEM, err);
	EXPECT_EQ(0, left);
	EXPECT_FALSE(nl_has_vmflag(m, "nl"));
	EXPECT_EQ(NL_STAMP(0, 0), *(volatile uint64_t *)m);

	munmap(m, N * self->page);
	m = map_reversed(self->fd, N);
	ASSERT_NE(MAP_FAILED, m);
	ASSERT_EQ(0UL, read_reversed(m, N));
	EXPECT_LT(0, nl_smaps_kb(m, "NonlinearIndex"));
	munmap(m, N * self->page);
}

/*
 * A part left behind by a move grows in place over the slots of the part
 * moved away, which needs an index of its own: without memory for it the
 * mremap() fails and the vma keeps its size; the next one grows it, and
 * both parts' pages are found by truncation.
 */
TEST_F(nomem, grow_without_memory_fails)
{
	const size_t half = N / 2 * self->page;
	char *r, *m, *d, *grown;
	long left;
	int err;

	r = mmap(NULL, 3 * N * self->page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, r);
	m = mmap(r, N * self->page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, self->fd, 0);
	ASSERT_EQ(r, m);
	for (size_t i = 0; i < N; i++)
		ASSERT_EQ(0, nl_remap(m + i * self->page, self->page, 0, N - 1 - i, 0));
	ASSERT_EQ(0UL, read_reversed(m, N));
	d = r + 2 * N * self->page;
	ASSERT_EQ(d, mremap(m + half, half, half, MREMAP_MAYMOVE | MREMAP_FIXED, d));

	ASSERT_EQ(0, failslab_arm(FAILS_PER_STORE, true));
	grown = mremap(m, half, 2 * half, 0);
	err = errno;
	left = failslab_disarm();
	EXPECT_EQ(MAP_FAILED, grown);
	EXPECT_EQ(ENOMEM, err);
	EXPECT_EQ(0, left);
	EXPECT_EQ(1, nl_count_vmas(m, half));
	EXPECT_EQ(0, nl_count_vmas(m + half, half));

	ASSERT_EQ(m, mremap(m, half, 2 * half, 0));
	/* The grown part shows pages of its own; the moved part keeps its */
	for (size_t i = N / 2; i < N; i++)
		ASSERT_EQ(0, nl_remap(m + i * self->page, self->page, 0, N - 1 - i, 0));
	EXPECT_EQ(0UL, read_reversed(m, N));
	EXPECT_TRUE(punch_found(self->fd, m, N, 1));
	EXPECT_TRUE(punch_found(self->fd, m, N, N - 2));
	EXPECT_EQ(NL_STAMP(N / 2 - 1, 0), *(volatile uint64_t *)d);
	EXPECT_TRUE(punch_found(self->fd, d - half, N, N / 2));
	EXPECT_LT(0, nl_smaps_kb(m, "NonlinearIndex"));
	munmap(r, 3 * N * self->page);
}

NL_HARNESS_MAIN
