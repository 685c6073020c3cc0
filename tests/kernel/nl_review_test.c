// SPDX-License-Identifier: GPL-2.0
/*
 * Review of the nonlinear series: each test here failed, hung
 * or was slow on the series before the fix it names, and checks the
 * fixed behaviour:
 *   - offsets a nonlinear entry may not hold safely (L1TF) or at all fall
 *     back to the emulation, as in 4.0-6.12, instead of EINVAL;
 *   - a range over adjacent VMAs of the file is emulated, not EINVAL;
 *   - MAP_CHGPROT can be detected by a side-effect-free query, unknown
 *     high flag bits are EINVAL (legacy mmap() bits stay ignored);
 *   - a linear remap of a linear VMA leaves it linear (no "nl"; THP PMD
 *     mappings stay);
 *   - a nonlinear fault on a large folio that cannot be split (pinned by
 *     vmsplice()) maps the subpage, as stock serves the access, instead of
 *     retrying forever or raising SIGBUS;
 *   - memory failure of such a pinned page names the address where a
 *     nonlinear VMA shows it, also inside the folio's own linear place;
 *   - a nonlinear VMA of 64 TiB costs neither its first remap nor the
 *     reverse map of other mappings of the file a scan of every PMD.
 */
#include <sys/mount.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "nonlinear_util.h" /* includes kselftest_harness.h */

/* A flag bit no kernel defines for remap_file_pages() (yet) */
#define RFP_UNKNOWN_FLAG 0x1000000 /* the first bit above MAP_VECTOR */

#define N 8

NL_MEMFD_FIXTURE(review, "nl_review", N)

/* Whether the kernel limits swap (and nonlinear) offsets for L1TF. */
static bool l1tf_limited(void)
{
	char buf[128] = "";
	FILE *f = fopen("/sys/devices/system/cpu/vulnerabilities/l1tf", "r");

	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return !strncmp(buf, "Mitigation", 10);
}

/*
 * The documented detection recipe: all zero but MAP_CHGPROT succeeds and
 * changes nothing; kernels without MAP_CHGPROT (4.0-6.12 included) give
 * EINVAL.  A flag bit above MAP_CHGPROT is refused, alone, with the query
 * and on a real call; bits below it (mmap() flags) stay ignored.
 */
TEST_F(review, chgprot_query_and_unknown_flags)
{
	long vmas = nl_total_vmas();

	EXPECT_EQ(0, nl_remap(NULL, 0, 0, 0, MAP_CHGPROT));
	EXPECT_EQ(vmas, nl_total_vmas());
	errno = 0;
	EXPECT_EQ(-1, nl_remap(NULL, 0, 0, 0, MAP_CHGPROT | RFP_UNKNOWN_FLAG));
	EXPECT_EQ(EINVAL, errno);
	/* Not a query: size 0 without MAP_CHGPROT, or other arguments */
	errno = 0;
	EXPECT_EQ(-1, nl_remap(NULL, 0, 0, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(-1, nl_remap(NULL, 0, 0, 1, MAP_CHGPROT));
	EXPECT_EQ(EINVAL, errno);
	/* An unknown flag on a real call: refused, mapping untouched */
	errno = 0;
	EXPECT_EQ(-1, nl_remap(self->map, self->page, 0, 3, RFP_UNKNOWN_FLAG));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(-1, nl_remap(self->map, self->page, 0, 3, 0x80000000UL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	/* Legacy bits are still ignored, as since 2.6 */
	EXPECT_EQ(0, nl_remap(self->map, self->page, 0, 3, MAP_PRIVATE | MAP_FIXED | MAP_POPULATE));
	self->want[0] = NL_STAMP(3, 0);
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	EXPECT_EQ(vmas, nl_total_vmas());
}

/*
 * An offset beyond what a nonlinear entry holds (2^47 pages on x86_64,
 * less with L1TF) is emulated as in 4.0-6.12: the call succeeds with a
 * VMA of its own, and the page beyond EOF raises SIGBUS.
 */
TEST_F(review, pgoff_beyond_entry_limit_emulated)
{
	const size_t big = 1UL << 47;

	/* Make the VMA nonlinear first: the fallback must work there too */
	ASSERT_EQ(0, nl_remap(self->map + 5 * self->page, self->page, 0, 1, 0));
	self->want[5] = NL_STAMP(1, 0);
	EXPECT_NONLINEAR(self->map, N * self->page);
	EXPECT_EQ(0, nl_remap(self->map + 2 * self->page, self->page, 0, big, MAP_NONBLOCK));
	self->want[2] = NL_WANT_SIGBUS;
	EXPECT_EQ(3, nl_count_vmas(self->map, N * self->page));
	EXPECT_FALSE(nl_has_vmflag(self->map + 2 * self->page, "nl"));
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	/* With MAP_CHGPROT there is no emulation: EINVAL */
	errno = 0;
	EXPECT_EQ(-1, nl_remap(self->map + 6 * self->page, self->page, PROT_NONE, big, MAP_CHGPROT));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
}

/*
 * L1TF: the review planted pgoff 0xffffffefff, whose inverted offset in a
 * non-present pte names a physical frame.  With the L1TF mitigation it
 * must be emulated (a VMA of its own), never kept in an entry; on a CPU
 * without L1TF it fits and stays nonlinear.  A small offset is always
 * nonlinear.
 */
TEST_F(review, l1tf_large_pgoff_not_planted)
{
	const size_t bad = 0xffffffefffUL;
	bool limited = l1tf_limited();

	TH_LOG("L1TF offset limit: %s", limited ? "active" : "not needed on this CPU");
	ASSERT_EQ(0, nl_remap(self->map + 1 * self->page, self->page, 0, 1UL << 20, MAP_NONBLOCK));
	self->want[1] = NL_WANT_SIGBUS;
	EXPECT_NONLINEAR(self->map, N * self->page);
	EXPECT_EQ(0, nl_remap(self->map + 3 * self->page, self->page, 0, bad, MAP_NONBLOCK));
	self->want[3] = NL_WANT_SIGBUS;
	if (limited) {
		EXPECT_EQ(3, nl_count_vmas(self->map, N * self->page));
		EXPECT_FALSE(nl_has_vmflag(self->map + 3 * self->page, "nl"));
	} else {
		EXPECT_NONLINEAR(self->map, N * self->page);
	}
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
}

/*
 * Two adjacent VMAs of the same file that cannot merge (their offsets are
 * not contiguous): a range over both is emulated as in 4.0-6.12 (the
 * series returned EINVAL).
 */
TEST_F(review, range_across_same_file_vmas_emulated)
{
	char *m2;

	m2 = mmap(self->map + N / 2 * self->page, N / 2 * self->page, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_FIXED, self->fd, 0);
	ASSERT_EQ(self->map + N / 2 * self->page, m2);
	for (size_t i = N / 2; i < N; i++)
		self->want[i] = NL_STAMP(i - N / 2, 0);
	/* One of them nonlinear already: the emulation replaces the range */
	ASSERT_EQ(0, nl_remap(self->map, self->page, 0, 7, 0));
	self->want[0] = NL_STAMP(7, 0);
	ASSERT_EQ(2, nl_count_vmas(self->map, N * self->page));
	ASSERT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	/* Both VMAs' flags must match for the emulation: use the linear pair */
	ASSERT_EQ(0, munmap(self->map, N / 2 * self->page));
	ASSERT_EQ(self->map, mmap(self->map, N / 2 * self->page, PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_FIXED, self->fd, 0));
	self->want[0] = NL_STAMP(0, 0);
	ASSERT_EQ(2, nl_count_vmas(self->map, N * self->page));
	EXPECT_EQ(0, nl_remap(self->map + (N / 2 - 1) * self->page, 2 * self->page, 0, 5, 0));
	self->want[N / 2 - 1] = NL_STAMP(5, 0);
	self->want[N / 2] = NL_STAMP(6, 0);
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
}

/* A linear remap of a linear VMA does not make it nonlinear (2.6). */
TEST_F(review, linear_remap_stays_linear)
{
	EXPECT_EQ(0, nl_remap(self->map + 2 * self->page, 3 * self->page, 0, 2, 0));
	EXPECT_EQ(0, nl_remap(self->map, N * self->page, 0, 0, MAP_NONBLOCK));
	EXPECT_EQ(0, nl_remap(self->map + 1 * self->page, self->page,
			      PROT_READ | PROT_WRITE, 1, MAP_CHGPROT));
	EXPECT_EQ(1, nl_count_vmas(self->map, N * self->page));
	EXPECT_FALSE(nl_has_vmflag(self->map, "nl"));
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	/* The first nonlinear remap still marks it */
	EXPECT_EQ(0, nl_remap(self->map, self->page, 0, 4, 0));
	self->want[0] = NL_STAMP(4, 0);
	EXPECT_NONLINEAR(self->map, N * self->page);
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
}

/*
 * The cause of the rare chgprot_stress shared_anon failure: a piece split
 * off by mprotect() while the VMA was linear does not merge back with a
 * part that became nonlinear meanwhile (VM_NONLINEAR differs).  A guard
 * over the boundary is then EINVAL (no emulation of MAP_CHGPROT); a plain
 * remap over it is emulated.  A VMA made nonlinear first keeps one VMA.
 */
TEST_F(review, linear_piece_stays_apart_from_nonlinear_part)
{
	const size_t n = 4, p = self->page;
	char *m = nl_map_with_hole(n * p, -1);

	ASSERT_NE(MAP_FAILED, m);
	ASSERT_EQ(0, mprotect(m + p, p, PROT_READ));
	ASSERT_EQ(0, nl_remap(m + 2 * p, p, 0, 3, MAP_NONBLOCK));
	ASSERT_EQ(0, mprotect(m + p, p, PROT_READ | PROT_WRITE));
	EXPECT_EQ(2, nl_count_vmas(m, n * p));
	errno = 0;
	EXPECT_EQ(-1, nl_remap(m + p, 2 * p, PROT_NONE, 0, MAP_CHGPROT));
	EXPECT_EQ(EINVAL, errno);
	munmap(m, n * p);

	m = nl_map_with_hole(n * p, -1);
	ASSERT_NE(MAP_FAILED, m);
	ASSERT_EQ(0, nl_remap(m, p, 0, 1, MAP_NONBLOCK));
	ASSERT_EQ(0, nl_remap(m, p, 0, 0, MAP_NONBLOCK));
	ASSERT_EQ(0, mprotect(m + p, p, PROT_READ));
	ASSERT_EQ(0, nl_remap(m + 2 * p, p, 0, 3, MAP_NONBLOCK));
	ASSERT_EQ(0, mprotect(m + p, p, PROT_READ | PROT_WRITE));
	EXPECT_EQ(1, nl_count_vmas(m, n * p));
	EXPECT_EQ(0, nl_remap(m + p, 2 * p, PROT_NONE, 0, MAP_CHGPROT));
	munmap(m, n * p);
}

/* --- huge tmpfs ---------------------------------------------------------------- */

#define HPAGE (2UL << 20)

FIXTURE(huge)
{
	char dir[64];
	char path[96];
	int fd;
	bool mounted;
};

FIXTURE_SETUP(huge)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	self->fd = -1;
	snprintf(self->dir, sizeof(self->dir), "%.40s/nlhugeXXXXXX", tmp);
	ASSERT_NE(NULL, mkdtemp(self->dir));
	if (mount("tmpfs", self->dir, "tmpfs", 0, "huge=always,size=16m")) {
		rmdir(self->dir);
		SKIP(return, "mount huge tmpfs: %s", strerror(errno));
	}
	self->mounted = true;
	snprintf(self->path, sizeof(self->path), "%s/f", self->dir);
	self->fd = open(self->path, O_RDWR | O_CREAT, 0600);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ftruncate(self->fd, 2 * HPAGE));
	ASSERT_EQ(0, nl_stamp_fd(self->fd, 0, 2 * HPAGE / nl_pagesize(), 0, false));
	if (!nonlinear_supported())
		SKIP(return, "no nonlinear remap_file_pages() on this kernel");
}

FIXTURE_TEARDOWN(huge)
{
	if (self->fd >= 0)
		close(self->fd);
	if (self->mounted) {
		umount2(self->dir, MNT_DETACH);
		rmdir(self->dir);
	}
}

/* A MAP_SHARED mapping of @len bytes of @fd at a 2 MiB-aligned address */
static char *map_pmd_aligned(int fd, size_t len)
{
	char *r = mmap(NULL, len + HPAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *a;

	if (r == MAP_FAILED)
		return MAP_FAILED;
	a = (char *)(((uintptr_t)r + HPAGE - 1) & ~(HPAGE - 1));
	if (a > r)
		munmap(r, a - r);
	munmap(a + len, r + HPAGE - a);
	return mmap(a, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
}

/* The linear remap of a PMD-mapped range keeps the PMD mapping. */
TEST_F(huge, linear_remap_keeps_pmd_mapping)
{
	size_t page = nl_pagesize();
	char *a = map_pmd_aligned(self->fd, 2 * HPAGE);
	long before;

	ASSERT_NE(MAP_FAILED, a);
	for (size_t i = 0; i < 2 * HPAGE; i += page)
		a[i + 8] = 1;
	before = nl_smaps_kb(a, "ShmemPmdMapped");
	if (before < 2048)
		SKIP(return, "huge tmpfs gave no PMD mapping (ShmemPmdMapped %ld kB)", before);
	EXPECT_EQ(0, nl_remap(a, HPAGE, 0, 0, 0));
	EXPECT_EQ(0, nl_remap(a + HPAGE, HPAGE, 0, HPAGE / page, MAP_NONBLOCK));
	EXPECT_EQ(before, nl_smaps_kb(a, "ShmemPmdMapped"));
	EXPECT_FALSE(nl_has_vmflag(a, "nl"));
	EXPECT_EQ(NL_STAMP(513, 0), *(uint64_t *)(a + 513 * page));
	munmap(a, 2 * HPAGE);
}

#ifndef MPOL_MF_MOVE_ALL
#define MPOL_MF_MOVE_ALL (1 << 2)
#endif

/*
 * move_pages(MPOL_MF_MOVE_ALL) of the folio holding @p to the other NUMA
 * node of the guest (numa=fake=2), if there is one; the result is logged,
 * since a pinned folio does not move.
 */
static void move_folio_to_other_node(struct __test_metadata *_metadata, void *p)
{
	int node = -1, status = -1;

	if (syscall(__NR_move_pages, 0, 1UL, &p, NULL, &node, 0) || node < 0 ||
	    access("/sys/devices/system/node/node1", F_OK)) {
		TH_LOG("no second NUMA node: migration not tried");
		return;
	}
	node = !node;
	EXPECT_LE(0, syscall(__NR_move_pages, 0, 1UL, &p, &node, &status, MPOL_MF_MOVE_ALL));
	TH_LOG("move_pages to node %d: status %d", node, status);
}

/*
 * A nonlinear fault on a large folio that another reference pins (a pipe
 * after vmsplice(), an io_uring fixed buffer, O_DIRECT in flight) cannot
 * split it.  Stock serves such an access; the series first retried the
 * fault forever, then failed it with SIGBUS.  The fault maps the subpage
 * without splitting: the access reads the file page, a write through it
 * is the page cache's, and the reverse map (migration while pinned and
 * after), a hole punch and the split once the pin is gone all find it at
 * its nonlinear address, which lies below the folio's linear place in the
 * VMA.
 */
TEST_F(huge, pinned_large_folio_fault_maps_subpage)
{
	size_t page = nl_pagesize(), n = 2 * HPAGE / page;
	char *a = map_pmd_aligned(self->fd, 2 * HPAGE);
	const size_t off = HPAGE / page + 1; /* page 1 of the second folio */
	struct iovec iov;
	volatile uint64_t *b, *c, *src;
	int pipefd[2], status;
	double t0, took;
	pid_t pid;

	ASSERT_NE(MAP_FAILED, a);
	for (size_t i = 0; i < 2 * HPAGE; i += page)
		a[i + 8] = 1;
	if (nl_smaps_kb(a, "ShmemPmdMapped") < 4096)
		SKIP(return, "huge tmpfs gave no large folios");
	/* The pages' stamps again: the loop above wrote a byte into each */
	ASSERT_EQ(0, nl_stamp_fd(self->fd, 0, n, 0, false));
	src = (volatile uint64_t *)(a + off * page);
	ASSERT_EQ(0, pipe(pipefd));
	iov.iov_base = a + off * page;
	iov.iov_len = 64;
	ASSERT_EQ(64, vmsplice(pipefd[1], &iov, 1, 0));
	/* The whole file: the second folio's linear place is b's upper half */
	b = nl_map_with_hole(n * page, self->fd);
	ASSERT_NE(MAP_FAILED, b);
	for (size_t i = n / 2; i < n; i++)
		ASSERT_EQ(NL_STAMP(i, 0), b[i * page / 8]);
	ASSERT_EQ(0, nl_remap((char *)b, page, 0, off, MAP_NONBLOCK));

	/* In a child first: on a series that fails the fault, SIGBUS */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		alarm(20);
		_exit(*b == NL_STAMP(off, 0) ? 0 : 3);
	}
	t0 = nl_now();
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	took = nl_now() - t0;
	TH_LOG("fault on a subpage of the pinned folio: %s %d after %.6f s",
	       WIFSIGNALED(status) ? "signal" : "exit",
	       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), took);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/* The subpage itself, not a copy: one page, two addresses */
	t0 = nl_now();
	ASSERT_EQ(NL_STAMP(off, 0), *b);
	took = nl_now() - t0;
	/* What stock does for this access: a linear fault on the same page */
	c = mmap(NULL, page, PROT_READ, MAP_SHARED, self->fd, (off_t)(off * page));
	ASSERT_NE(MAP_FAILED, c);
	t0 = nl_now();
	ASSERT_EQ(NL_STAMP(off, 0), *c);
	TH_LOG("first access to the pinned page: nonlinear %.6f s, linear %.6f s",
	       took, nl_now() - t0);
	munmap((void *)c, page);
	*b = NL_STAMP(off, 7);
	EXPECT_EQ(NL_STAMP(off, 7), *src);
	EXPECT_EQ(NL_STAMP(off, 7), nl_file_word(self->fd, off));
	EXPECT_NE(0ULL, nl_pagemap((void *)b) & PM_PRESENT);
	EXPECT_EQ(nl_pagemap((void *)src) & PM_PFN_MASK,
		  nl_pagemap((void *)b) & PM_PFN_MASK);
	EXPECT_TRUE(nl_has_vmflag((char *)b, "nl"));

	/* MADV_DONTNEED keeps the layout: the same page faults back */
	ASSERT_EQ(0, madvise((void *)b, page, MADV_DONTNEED));
	EXPECT_EQ(NL_STAMP(off, 7), *b);

	/*
	 * Migration unmaps the folio, fails on the pin and puts the pages
	 * back: each address gets the subpage its entry names, not the one
	 * its linear place would.
	 */
	move_folio_to_other_node(_metadata, (void *)src);
	EXPECT_EQ(NL_STAMP(off, 7), *b);
	EXPECT_EQ(nl_pagemap((void *)src) & PM_PFN_MASK,
		  nl_pagemap((void *)b) & PM_PFN_MASK);

	/* Pin gone: migration moves the folio (or splits it), same check */
	close(pipefd[0]);
	close(pipefd[1]);
	move_folio_to_other_node(_metadata, (void *)src);
	EXPECT_EQ(NL_STAMP(off, 7), *b);
	EXPECT_EQ(NL_STAMP(off, 7), *src);
	EXPECT_EQ(nl_pagemap((void *)src) & PM_PFN_MASK,
		  nl_pagemap((void *)b) & PM_PFN_MASK);

	/* A hole punch elsewhere in the folio splits it */
	ASSERT_EQ(0, fallocate(self->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			       (off + 100) * page, page));
	EXPECT_EQ(0ULL, b[(off + 100) * page / 8]);
	EXPECT_EQ(NL_STAMP(off, 7), *b);
	EXPECT_EQ(NL_STAMP(off, 7), *src);
	EXPECT_EQ(nl_pagemap((void *)src) & PM_PFN_MASK,
		  nl_pagemap((void *)b) & PM_PFN_MASK);
	*b = NL_STAMP(off, 8);
	EXPECT_EQ(NL_STAMP(off, 8), *src);

	/* A hole punch of the page itself reaches the nonlinear address */
	ASSERT_EQ(0, fallocate(self->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			       off * page, page));
	EXPECT_EQ(0ULL, *b);
	EXPECT_EQ(0ULL, *src);
	munmap((void *)b, n * page);
	munmap(a, 2 * HPAGE);
}

#ifndef MADV_HWPOISON
#define MADV_HWPOISON 100
#endif
#ifndef BUS_MCEERR_AR
#define BUS_MCEERR_AR 4
#endif

/*
 * Memory failure of a page of a large folio that cannot be split (pinned
 * by vmsplice()) signals every task mapping the page at once, naming the
 * address where it maps it.  A nonlinear VMA may show the page at another
 * address of the folio's own linear place, here one page above its linear
 * address, which shows file page 0: the SIGBUS of MADV_HWPOISON names that
 * address.  The series found no address there (it looked only outside the
 * folio's linear place), so the caller got no signal at all.  Needs
 * CONFIG_MEMORY_FAILURE and root; poisons one page of the guest for good.
 */
TEST_F(huge, poisoned_pinned_subpage_inside_its_folio_named)
{
	size_t page = nl_pagesize(), n = 2 * HPAGE / page;
	const size_t off = HPAGE / page + 1; /* page 1 of the second folio */
	const size_t at = off + 1;	     /* where b shows it: page 2's place */
	char *a = map_pmd_aligned(self->fd, 2 * HPAGE);
	struct nl_sigsave save;
	volatile int ret = 0;
	struct iovec iov;
	int pipefd[2];
	uint64_t v = 0;
	int sig = 0;
	char *b;

	if (geteuid() != 0 || access("/proc/sys/vm/memory_failure_recovery", F_OK))
		SKIP(return, "no CONFIG_MEMORY_FAILURE or not root: no MADV_HWPOISON");
	ASSERT_NE(MAP_FAILED, a);
	for (size_t i = 0; i < 2 * HPAGE; i += page)
		a[i + 8] = 1;
	if (nl_smaps_kb(a, "ShmemPmdMapped") < 4096)
		SKIP(return, "huge tmpfs gave no large folios");
	ASSERT_EQ(0, nl_stamp_fd(self->fd, 0, n, 0, false));
	ASSERT_EQ(0, pipe(pipefd));
	iov.iov_base = a + off * page;
	iov.iov_len = 64;
	ASSERT_EQ(64, vmsplice(pipefd[1], &iov, 1, 0));
	/* Only b maps the folio from here on; the pipe keeps it whole */
	munmap(a, 2 * HPAGE);
	b = nl_map_with_hole(n * page, self->fd);
	ASSERT_NE(MAP_FAILED, b);
	ASSERT_EQ(0, nl_remap(b + off * page, page, 0, 0, MAP_NONBLOCK));
	ASSERT_EQ(0, nl_remap(b + at * page, page, 0, off, MAP_NONBLOCK));
	ASSERT_EQ(0, nl_probe(b + at * page, &v, false, 0));
	ASSERT_EQ(NL_STAMP(off, 0), v);
	ASSERT_EQ(0, nl_probe(b + off * page, &v, false, 0));
	ASSERT_EQ(NL_STAMP(0, 0), v);

	nl_catch(&save);
	nl_sig = 0;
	if (sigsetjmp(nl_jmp, 0) == 0)
		ret = madvise(b + at * page, page, MADV_HWPOISON);
	else
		sig = nl_sig;
	nl_uncatch(&save);
	TH_LOG("MADV_HWPOISON of the pinned subpage: returned %d, signal %d, code %d, address %p (b + %zu pages)",
	       ret, sig, (int)nl_code, nl_fault_addr,
	       sig ? (size_t)((char *)nl_fault_addr - b) / page : 0);
	ASSERT_EQ(SIGBUS, sig);
	EXPECT_EQ(BUS_MCEERR_AR, nl_code);
	EXPECT_EQ((void *)(b + at * page), nl_fault_addr);
	munmap(b, n * page);
	close(pipefd[0]);
	close(pipefd[1]);
}

/* --- huge nonlinear VMAs ------------------------------------------------------- */

#define HUGE_VMA (64UL << 40)

/*
 * A 64 TiB nonlinear VMA with one page table: its first remap (which
 * splits PMD mappings) and the reverse map of the file's pages (here: a
 * MADV_PAGEOUT through another mapping) walk only its populated page
 * tables.  The series walked every PMD: 1.25 s and 4.5 s in the review.
 */
TEST_F(review, huge_vma_walks_only_page_tables)
{
	char *big, *lin, *last;
	double t0, remap_s, pageout_s;

	big = mmap(NULL, HUGE_VMA, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE,
		   self->fd, 0);
	if (big == MAP_FAILED)
		SKIP(return, "mmap 64 TiB: %s", strerror(errno));
	/* The page sits at the end: a scan from the start meets it last */
	last = big + HUGE_VMA - self->page;
	t0 = nl_now();
	ASSERT_EQ(0, nl_remap(last, self->page, 0, 1, 0));
	remap_s = nl_now() - t0;
	EXPECT_TRUE(nl_has_vmflag(big, "nl"));
	EXPECT_EQ(NL_STAMP(1, 0), *(volatile uint64_t *)last);

	/*
	 * Pages of the file mapped in another VMA: their rmap walk ends once
	 * they are unmapped there.  The page at big's nonlinear address is
	 * found only by the scan of big, at its very end.
	 */
	lin = mmap(NULL, 4 * self->page, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		   4 * self->page);
	ASSERT_NE(MAP_FAILED, lin);
	for (size_t i = 0; i < 4; i++)
		EXPECT_EQ(NL_STAMP(4 + i, 0), *(volatile uint64_t *)(lin + i * self->page));
	t0 = nl_now();
	EXPECT_EQ(0, madvise(lin, 4 * self->page, MADV_PAGEOUT));
	EXPECT_EQ(0, madvise(last, self->page, MADV_PAGEOUT));
	pageout_s = nl_now() - t0;
	TH_LOG("64 TiB nonlinear VMA: first remap %.1f ms, MADV_PAGEOUT of 4 + 1 pages %.1f ms",
	       remap_s * 1e3, pageout_s * 1e3);
	EXPECT_GT(0.3, remap_s);
	EXPECT_GT(0.5, pageout_s);
	EXPECT_EQ(0ULL, nl_pagemap(last) & PM_PRESENT);
	for (size_t i = 0; i < 4; i++)
		EXPECT_EQ(NL_STAMP(4 + i, 0), *(volatile uint64_t *)(lin + i * self->page));
	EXPECT_EQ(NL_STAMP(1, 0), *(volatile uint64_t *)last);
	munmap(lin, 4 * self->page);
	munmap(big, HUGE_VMA);
}

NL_HARNESS_MAIN
