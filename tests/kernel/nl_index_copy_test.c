// SPDX-License-Identifier: GPL-2.0
/*
 * Copies of the nonlinear reverse index cost what they cover:
 *
 *   - fork() of a nonlinear vma split into PIECES pieces (which share one
 *     index) gives each child piece the slots of its own range, not a copy
 *     of the whole index per piece: the xarray nodes fork() adds stay
 *     within a small multiple of the parent's index;
 *   - after mremap() moves part of a nonlinear vma, both the moved part
 *     and the part left behind keep a working index: MADV_PAGEOUT of their
 *     pages costs about what it cost before the move, not a scan of every
 *     populated page table of the vma per page.
 */
#include <sys/utsname.h>
#include <sys/wait.h>

#include "nonlinear_util.h"

#define FORK_PAGES 8192
#define PIECES 256

/*
 * 8,192 pages laid out in reverse and faulted in, split into 256 pieces
 * by mprotect(): fork() must add about one index's worth of nodes.
 */
TEST(fork_copies_each_piece_range_only)
{
	size_t page = nl_pagesize(), len = FORK_PAGES * page, per = FORK_PAGES / PIECES, i;
	long n0, n1, n2;
	int fd, go[2], status;
	double t0, took;
	char *map;
	pid_t pid;

	if (!nonlinear_supported())
		SKIP(return, "no nonlinear remap_file_pages() on this kernel");
	if (nl_radix_nodes() < 0 || access(NL_RADIX_SLAB_DIR "/shrink", W_OK))
		SKIP(return, "needs /proc/slabinfo and " NL_RADIX_SLAB_DIR "/shrink (root, SLUB)");
	fd = nl_memfd("nl_fork", FORK_PAGES, false);
	ASSERT_LE(0, fd);
	n0 = nl_radix_nodes();
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	for (i = 0; i < FORK_PAGES; i++)
		ASSERT_EQ(0, nl_remap(map + i * page, page, 0, FORK_PAGES - 1 - i, 0));
	for (i = 0; i < FORK_PAGES; i++)
		*(uint64_t *)(map + i * page) = NL_STAMP(FORK_PAGES - 1 - i, 0);
	for (i = 1; i < PIECES; i += 2)
		ASSERT_EQ(0, mprotect(map + i * per * page, per * page, PROT_READ));
	ASSERT_EQ(PIECES, nl_count_vmas(map, len));
	n1 = nl_radix_nodes();
	ASSERT_EQ(0, pipe(go));
	t0 = nl_now();
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		/* Every address of every piece still shows its page */
		for (i = 0; i < FORK_PAGES; i++)
			if (*(volatile uint64_t *)(map + i * page) != NL_STAMP(FORK_PAGES - 1 - i, 0))
				_exit(3);
		_exit(0);
	}
	took = nl_now() - t0;
	n2 = nl_radix_nodes();
	close(go[0]);
	ASSERT_EQ(1, write(go[1], "x", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	printf("# parent's layout: %ld xarray nodes; fork() of %d pieces: %ld more, %.3f s\n",
	       n1 - n0, PIECES, n2 - n1, took);
	/* Each piece's own small index may straddle a node or two */
	EXPECT_GE(2 * (n1 - n0) + 4 * PIECES, n2 - n1)
		TH_LOG("fork() copied %ld xarray nodes for an index of %ld", n2 - n1, n1 - n0);
	munmap(map, len);
	close(fd);
}

#define PMD (2UL << 20)
#define OUT 64			/* pages paged out per measurement */

/*
 * Populated page tables per half: 8192, or 512 on the debug kernel, where
 * KASAN makes each fault and page-table allocation several times slower
 * and the full size outlasts the harness's timeout.
 */
static size_t tables(void)
{
	struct utsname u;

	if (!uname(&u) && strstr(u.release, "-debug"))
		return 512;
	return 8192;
}

/* Seconds that MADV_PAGEOUT of OUT pages, one every 2 MiB from @p, takes */
static double pageout_time(char *p)
{
	double t0;

	/* Fault them back in (and every alias of the file with them) */
	for (size_t i = 0; i < OUT; i++)
		(void)*(volatile uint64_t *)(p + i * PMD);
	nl_lru_drain_all();
	t0 = nl_now();
	for (size_t i = 0; i < OUT; i++)
		madvise(p + i * PMD, nl_pagesize(), MADV_PAGEOUT);
	return nl_now() - t0;
}

/*
 * A nonlinear vma with one remapped page per 2 MiB (2 * tables() populated
 * page tables); mremap() moves its upper half away.  The page-out of a
 * few pages on either side then costs what it cost before (index), not
 * the scan of every populated page table per page.
 */
TEST(partial_mremap_keeps_index)
{
	size_t page = nl_pagesize(), n = tables(), len = 2 * n * PMD, i;
	double before_low, before_high, after_low, after_high;
	char *map, *moved, *dest;
	int fd;

	if (!nonlinear_supported())
		SKIP(return, "no nonlinear remap_file_pages() on this kernel");
	fd = nl_memfd("nl_mremap", 2 * n, true);
	ASSERT_LE(0, fd);
	/* Room for the moved half, aligned like the original */
	map = mmap(NULL, 2 * len + PMD, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	map = (char *)(((uintptr_t)map + PMD - 1) & ~(PMD - 1));
	dest = map + len;
	ASSERT_EQ(map, mmap(map, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0));
	/* Page i * 2 MiB shows file page 2 * n - 1 - i */
	for (i = 0; i < 2 * n; i++) {
		ASSERT_EQ(0, nl_remap(map + i * PMD, page, 0, 2 * n - 1 - i, 0));
		ASSERT_EQ(NL_STAMP(2 * n - 1 - i, 0), *(volatile uint64_t *)(map + i * PMD));
	}
	EXPECT_NONLINEAR(map, len);
	before_low = pageout_time(map);
	before_high = pageout_time(map + len / 2);
	moved = mremap(map + len / 2, len / 2, len / 2, MREMAP_MAYMOVE | MREMAP_FIXED, dest);
	ASSERT_EQ(dest, moved);
	after_low = pageout_time(map);
	after_high = pageout_time(moved);
	printf("# MADV_PAGEOUT of %d pages: %.1f/%.1f ms before, %.1f/%.1f ms after moving half\n", OUT,
	       before_low * 1e3, before_high * 1e3, after_low * 1e3, after_high * 1e3);
	/* Both halves still show their pages */
	for (i = 0; i < n; i++) {
		ASSERT_EQ(NL_STAMP(2 * n - 1 - i, 0), *(volatile uint64_t *)(map + i * PMD));
		ASSERT_EQ(NL_STAMP(n - 1 - i, 0), *(volatile uint64_t *)(moved + i * PMD));
	}
	EXPECT_GT(4 * before_low + 0.05, after_low)
		TH_LOG("the part left behind lost its index");
	EXPECT_GT(4 * before_high + 0.05, after_high)
		TH_LOG("the moved part lost its index");
	munmap(map, len);
	munmap(moved, len / 2);
	close(fd);
}

NL_HARNESS_MAIN
