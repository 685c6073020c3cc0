// SPDX-License-Identifier: GPL-2.0
/*
 * The life cycle of the nonlinear reverse index (kernel patches
 * "mm: index nonlinear ptes by file offset" and the next): rmap walks and
 * truncation find a nonlinear page through an index keyed by file offset,
 * kept per vma (shared by the halves of a split and by mremap() copies,
 * copied by fork()).  After each change of the vma (fork, mremap move,
 * expand, shrink, mprotect split and merge, munmap of a part, exit,
 * truncation racing remap and faults) every address must still be found:
 *
 *   - move_pages(MPOL_MF_MOVE_ALL) to the other NUMA node: a folio whose
 *     pte rmap misses stays mapped and does not move (status != node), or
 *     a restored pte lands at a wrong address (wrong contents);
 *   - a hole punched at an offset: every address showing it must read a
 *     new zero page; an address the index missed keeps showing the old
 *     page (its contents, not zeroes);
 *   - ftruncate() to 0: every address must raise SIGBUS.
 *
 * Several addresses per offset (aliases, more than one batch of a walk)
 * are part of every layout.  The guest boots with numa=fake=2; with one
 * node the migration step is skipped, the others still run.
 */
#include <pthread.h>
#include <sys/wait.h>

#include "nonlinear_util.h"

#ifndef MPOL_MF_MOVE_ALL
#define MPOL_MF_MOVE_ALL (1 << 2)
#endif
#ifndef FALLOC_FL_PUNCH_HOLE
#define FALLOC_FL_KEEP_SIZE 0x01
#define FALLOC_FL_PUNCH_HOLE 0x02
#endif
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

#define N 256		/* file pages */
#define ALIAS_OFF 7	/* shown at ALIASES addresses */
#define ALIASES 40	/* more than a walk's batch of 16 */

/* The node of the page at @p, or a negative errno. */
static int node_of(void *p)
{
	int status = -1;

	if (syscall(__NR_move_pages, 0, 1UL, &p, NULL, &status, 0))
		return -errno;
	return status;
}

/*
 * Moves the pages shown at the @n addresses @map (offsets off[]) to @node
 * with MPOL_MF_MOVE_ALL, each folio once (move_pages() fails a folio it
 * meets again with EBUSY), then asks where each address's page is; returns
 * how many addresses do not show a page on @node.  A folio rmap did not
 * fully unmap does not move.
 */
static size_t move_all(char *map, const size_t *off, size_t n, int node)
{
	void **pages = calloc(n, sizeof(*pages));
	int *nodes = calloc(n, sizeof(*nodes)), *status = calloc(n, sizeof(*status));
	bool seen[N] = { false };
	size_t bad = n, k = 0;

	if (!pages || !nodes || !status)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (seen[off[i]])
			continue;
		seen[off[i]] = true;
		pages[k] = map + i * nl_pagesize();
		nodes[k++] = node;
	}
	syscall(__NR_move_pages, 0, k, pages, nodes, status, MPOL_MF_MOVE_ALL);
	for (size_t i = 0; i < k; i++)
		if (status[i] != node)
			fprintf(stderr, "# move_pages: %p status %d, wanted node %d\n", pages[i],
				status[i], node);
	for (size_t i = 0; i < n; i++)
		pages[i] = map + i * nl_pagesize();
	bad = 0;
	if (syscall(__NR_move_pages, 0, n, pages, NULL, status, 0))
		bad = n;
	for (size_t i = 0; i < n && !bad; i++)
		bad += status[i] != node;
	if (bad)
		fprintf(stderr, "# %zu of %zu addresses not on node %d\n", bad, n, node);
out:
	free(pages);
	free(nodes);
	free(status);
	return bad;
}

static bool two_nodes(void)
{
	return !geteuid() && !access("/sys/devices/system/node/node1", F_OK);
}

/*
 * The layout of the tests: address i shows file page (i * 37 + 11) % N,
 * except ALIASES addresses from @n / 4 that all show ALIAS_OFF and every
 * 16th address, which shows 9: many aliases of two pages.
 */
static void layout_offsets(size_t *off, size_t n)
{
	for (size_t i = 0; i < n; i++)
		off[i] = (i * 37 + 11) % N;
	for (size_t i = n / 4; i < n / 4 + ALIASES && i < n; i++)
		off[i] = ALIAS_OFF;
	for (size_t i = 3; i < n; i += 16)
		off[i] = 9;
}

static int apply_layout(char *map, const size_t *off, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (nl_remap(map + i * nl_pagesize(), nl_pagesize(), 0, off[i], 0))
			return -1;
	return 0;
}

/* Page contents at the @n addresses of @map: stamp of off[i] (NULL: skip) */
static long check_contents(char *map, const size_t *off, size_t n)
{
	uint64_t *want = calloc(n, sizeof(*want));
	long bad;

	if (!want)
		return -1;
	nl_want_from(want, off, n);
	bad = nl_check_pages(map, n, want, false);
	free(want);
	return bad;
}

/*
 * Every address of the @n at @map (showing off[]) is found by migration
 * and by hole punching of @fd; afterwards the file is as before (restamped)
 * and every address is faulted in again.
 */
static void check_found(struct __test_metadata *_metadata, int fd, char *map,
			const size_t *off, size_t n)
{
	uint64_t *want = calloc(n, sizeof(*want));
	size_t punched[] = { ALIAS_OFF, 9, off[n - 1], off[n / 2] };
	int node;

	ASSERT_NE(NULL, want);
	nl_want_from(want, off, n);
	/* Fault every address in: each pte maps the page cache's page. */
	ASSERT_EQ(0, nl_check_pages(map, n, want, false));
	ASSERT_EQ((long)n, nl_count_present(map, n));
	if (two_nodes()) {
		node = node_of(map);
		ASSERT_LE(0, node);
		EXPECT_EQ(0, (long)move_all(map, off, n, !node))
			TH_LOG("pages still mapped after MOVE_ALL: rmap missed a pte");
		EXPECT_EQ(0, nl_check_pages(map, n, want, false));
		EXPECT_EQ(0, (long)move_all(map, off, n, node));
		EXPECT_EQ(0, nl_check_pages(map, n, want, false));
		ASSERT_EQ((long)n, nl_count_present(map, n));
	}
	/* A hole: every address showing a punched offset reads zeroes. */
	for (size_t k = 0; k < sizeof(punched) / sizeof(punched[0]); k++) {
		ASSERT_EQ(0, fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				       (off_t)(punched[k] * nl_pagesize()), (off_t)nl_pagesize()));
		for (size_t i = 0; i < n; i++)
			if (off[i] == punched[k])
				want[i] = NL_WANT_ZERO;
	}
	EXPECT_EQ(0, nl_check_pages(map, n, want, false))
		TH_LOG("an address showing a punched page kept it: the unmap missed it");
	for (size_t k = 0; k < sizeof(punched) / sizeof(punched[0]); k++)
		ASSERT_EQ(0, nl_stamp_fd(fd, punched[k], 1, 0, false));
	nl_want_from(want, off, n);
	EXPECT_EQ(0, nl_check_pages(map, n, want, false));
	free(want);
}

FIXTURE(idx)
{
	int fd;
	size_t page;
	char *map;
	size_t off[N];
};

FIXTURE_SETUP(idx)
{
	self->page = nl_pagesize();
	self->map = MAP_FAILED;
	self->fd = nl_memfd("nl_index", N, true);
	ASSERT_LE(0, self->fd);
	if (!nonlinear_supported())
		SKIP(return, "no nonlinear remap_file_pages() on this kernel");
	self->map = nl_map_with_hole(N * self->page, self->fd);
	ASSERT_NE(MAP_FAILED, self->map);
	layout_offsets(self->off, N);
	ASSERT_EQ(0, apply_layout(self->map, self->off, N));
}

FIXTURE_TEARDOWN(idx)
{
	if (self->map != MAP_FAILED)
		munmap(self->map, N * self->page);
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(idx, aliases)
{
	check_found(_metadata, self->fd, self->map, self->off, N);
	EXPECT_NONLINEAR(self->map, N * self->page);
	/* Again after a second layout over the first (entries replaced) */
	for (size_t i = 0; i < N; i++)
		self->off[i] = (self->off[i] * 5 + 3) % N;
	for (size_t i = N / 2; i < N / 2 + 20; i++)
		self->off[i] = ALIAS_OFF;
	ASSERT_EQ(0, apply_layout(self->map, self->off, N));
	check_found(_metadata, self->fd, self->map, self->off, N);
}

/* Parent and child map the same pages; each finds both, whoever exits */
TEST_F(idx, fork)
{
	int status;
	pid_t pid;

	ASSERT_EQ(0, check_contents(self->map, self->off, N));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* The child's ptes are the parent's, found through its copy */
		check_found(_metadata, self->fd, self->map, self->off, N);
		/* Change the child's layout: the parent's must not change */
		for (size_t i = 0; i < N; i++)
			self->off[i] = N - 1 - i;
		if (apply_layout(self->map, self->off, N))
			_exit(3);
		check_found(_metadata, self->fd, self->map, self->off, N);
		_exit(_metadata->exit_code ? 2 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	check_found(_metadata, self->fd, self->map, self->off, N);
	EXPECT_NONLINEAR(self->map, N * self->page);
}

/* A child that maps the pages, then exits with the layout in place */
TEST_F(idx, exit)
{
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char *m = mmap(NULL, N * self->page, PROT_READ | PROT_WRITE, MAP_SHARED,
			       self->fd, 0);
		size_t off[N];

		if (m == MAP_FAILED)
			_exit(2);
		for (size_t i = 0; i < N; i++)
			off[i] = (i * 3 + 1) % N;
		if (apply_layout(m, off, N) || check_contents(m, off, N))
			_exit(3);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	check_found(_metadata, self->fd, self->map, self->off, N);
}

TEST_F(idx, mremap_move)
{
	char *r, *m;

	r = mmap(NULL, 3 * N * self->page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, r);
	ASSERT_EQ(0, check_contents(self->map, self->off, N));
	m = mremap(self->map, N * self->page, N * self->page, MREMAP_MAYMOVE | MREMAP_FIXED, r);
	ASSERT_EQ(r, m);
	self->map = MAP_FAILED;
	check_found(_metadata, self->fd, m, self->off, N);
	EXPECT_NONLINEAR(m, N * self->page);
	/* Move the middle half away: two vmas sharing the index */
	ASSERT_EQ(r + 2 * N * self->page,
		  mremap(m + N / 4 * self->page, N / 2 * self->page, N / 2 * self->page,
			 MREMAP_MAYMOVE | MREMAP_FIXED, r + 2 * N * self->page));
	check_found(_metadata, self->fd, m, self->off, N / 4);
	check_found(_metadata, self->fd, r + 2 * N * self->page, self->off + N / 4, N / 2);
	check_found(_metadata, self->fd, m + 3 * N / 4 * self->page, self->off + 3 * N / 4,
		    N / 4);
	/* And back: the pieces merge again */
	ASSERT_EQ(m + N / 4 * self->page,
		  mremap(r + 2 * N * self->page, N / 2 * self->page, N / 2 * self->page,
			 MREMAP_MAYMOVE | MREMAP_FIXED, m + N / 4 * self->page));
	check_found(_metadata, self->fd, m, self->off, N);
	EXPECT_NONLINEAR(m, N * self->page);
	munmap(r, 3 * N * self->page);
}

TEST_F(idx, mremap_expand_shrink)
{
	size_t off[2 * N];
	char *r, *m;

	/* Room to grow in place */
	r = mmap(NULL, 4 * N * self->page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, r);
	ASSERT_EQ(r, mremap(self->map, N * self->page, N * self->page,
			    MREMAP_MAYMOVE | MREMAP_FIXED, r));
	self->map = MAP_FAILED;
	ASSERT_EQ(0, munmap(r + N * self->page, 3 * N * self->page));
	m = mremap(r, N * self->page, 2 * N * self->page, 0);
	ASSERT_EQ(r, m);
	memcpy(off, self->off, sizeof(self->off));
	for (size_t i = N; i < 2 * N; i++)
		off[i] = (i * 13) % N;
	off[N + 5] = ALIAS_OFF;
	ASSERT_EQ(0, apply_layout(m + N * self->page, off + N, N));
	check_found(_metadata, self->fd, m, off, 2 * N);
	EXPECT_NONLINEAR(m, 2 * N * self->page);
	/* Shrink: the tail's entries go */
	ASSERT_EQ(m, mremap(m, 2 * N * self->page, N / 2 * self->page, 0));
	check_found(_metadata, self->fd, m, off, N / 2);
	/* Expand with a move: no room after it */
	ASSERT_NE(MAP_FAILED, mmap(m + N / 2 * self->page, self->page, PROT_NONE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	r = mremap(m, N / 2 * self->page, N * self->page, MREMAP_MAYMOVE);
	ASSERT_NE(MAP_FAILED, r);
	ASSERT_EQ(0, apply_layout(r + N / 2 * self->page, off + N / 2, N / 2));
	check_found(_metadata, self->fd, r, off, N);
	EXPECT_NONLINEAR(r, N * self->page);
	munmap(r, N * self->page);
	munmap(m + N / 2 * self->page, self->page);
}

/*
 * A part moved away keeps its slots (its vm_pgoff); the part left behind
 * then grows in place over the slots of the moved one.  Both share the
 * index, which knows an address only by its slot: the remap into the
 * grown part must not drop what the moved part maps, or truncation and
 * migration miss the moved part's ptes.
 */
TEST_F(idx, mremap_part_then_grow)
{
	size_t off[N];
	char *r, *m, *d;

	r = mmap(NULL, 3 * N * self->page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, r);
	m = mremap(self->map, N * self->page, N * self->page, MREMAP_MAYMOVE | MREMAP_FIXED, r);
	ASSERT_EQ(r, m);
	self->map = MAP_FAILED;
	ASSERT_EQ(0, check_contents(m, self->off, N));
	/* The second half to r + 2N: m keeps the first half */
	d = r + 2 * N * self->page;
	ASSERT_EQ(d, mremap(m + N / 2 * self->page, N / 2 * self->page, N / 2 * self->page,
			    MREMAP_MAYMOVE | MREMAP_FIXED, d));
	/* The first half grows back over the place the second half left */
	ASSERT_EQ(m, mremap(m, N / 2 * self->page, N * self->page, 0));
	memcpy(off, self->off, sizeof(off));
	for (size_t i = N / 2; i < N; i++)
		off[i] = (i * 7 + 3) % N;
	ASSERT_EQ(0, apply_layout(m + N / 2 * self->page, off + N / 2, N / 2));
	/* The moved half's pages are found, and the grown one's */
	check_found(_metadata, self->fd, d, self->off + N / 2, N / 2);
	check_found(_metadata, self->fd, m, off, N);
	EXPECT_NONLINEAR(m, N * self->page);
	munmap(r, 3 * N * self->page);
}

TEST_F(idx, mprotect_split_merge)
{
	char *m = self->map;

	ASSERT_EQ(0, mprotect(m + N / 8 * self->page, N / 2 * self->page, PROT_READ));
	EXPECT_EQ(3, nl_count_vmas(m, N * self->page));
	check_found(_metadata, self->fd, m, self->off, N);
	/* A remap into one half and into the other */
	self->off[1] = ALIAS_OFF;
	self->off[N - 2] = ALIAS_OFF;
	self->off[N / 4 + 1] = 9;
	ASSERT_EQ(0, apply_layout(m, self->off, N));
	check_found(_metadata, self->fd, m, self->off, N);
	ASSERT_EQ(0, mprotect(m + N / 8 * self->page, N / 2 * self->page,
			      PROT_READ | PROT_WRITE));
	EXPECT_NONLINEAR(m, N * self->page);
	check_found(_metadata, self->fd, m, self->off, N);
}

TEST_F(idx, munmap_part)
{
	char *m = self->map;

	ASSERT_EQ(0, check_contents(m, self->off, N));
	ASSERT_EQ(0, munmap(m + N / 4 * self->page, N / 4 * self->page));
	check_found(_metadata, self->fd, m, self->off, N / 4);
	check_found(_metadata, self->fd, m + N / 2 * self->page, self->off + N / 2, N / 2);
	/* The offsets the hole showed are mapped by nothing there now */
	ASSERT_NE(MAP_FAILED, mmap(m + N / 4 * self->page, N / 4 * self->page,
				   PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, self->fd,
				   (off_t)(N / 4 * self->page)));
	for (size_t i = N / 4; i < N / 2; i++)
		self->off[i] = i;
	EXPECT_EQ(0, check_contents(m, self->off, N));
}

/*
 * munmap() of a vma showing one offset at 131,072 addresses.  The zap
 * used to unlink each address from the offset's chain, walking it from
 * its highest slot while it unmapped the lowest: n^2/2 steps, which did
 * not finish in minutes in a TCG guest.  An index no other vma shares
 * now goes with the vma in one piece.  The offset is still found and
 * punched correctly afterwards through the first mapping.
 */
TEST_F_TIMEOUT(idx, munmap_many_aliases, 300)
{
	const size_t n = 131072;
	uint64_t want = NL_STAMP(ALIAS_OFF, 0), bad = 0;
	double t0, t_setup, t_unmap;
	char *m;

	ASSERT_EQ(0, check_contents(self->map, self->off, N));
	m = mmap(NULL, n * self->page, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	t0 = nl_now();
	for (size_t i = 0; i < n; i++)
		ASSERT_EQ(0, nl_remap(m + i * self->page, self->page, 0, ALIAS_OFF,
				      MAP_NONBLOCK));
	/* Faulting each address in adds it to the offset's chain */
	for (size_t i = 0; i < n; i++)
		bad += *(volatile uint64_t *)(m + i * self->page) != want;
	t_setup = nl_now() - t0;
	EXPECT_EQ(0, (long)bad);
	t0 = nl_now();
	ASSERT_EQ(0, munmap(m, n * self->page));
	t_unmap = nl_now() - t0;
	TH_LOG("%zu aliases of one offset: %.2f s to remap and fault in, munmap %.3f s",
	       n, t_setup, t_unmap);
	EXPECT_GT(t_setup + 1.0, t_unmap)
		TH_LOG("munmap costs O(aliases^2)");
	check_found(_metadata, self->fd, self->map, self->off, N);
}

#define NOWAIT_SLOTS 515	/* below xa_to_value(XA_ZERO_ENTRY) */
#define NOWAIT_BASE (1UL << 20)
#define NOWAIT_STEP 64		/* a new xarray node for every offset */

/*
 * The index adds a slot with GFP_NOWAIT stores under its lock; one that
 * fails reserves the node (xa_reserve(), GFP_KERNEL) and tries again.
 * Under a memory cgroup kept at its limit by a sibling process, that
 * happens often.  A version of the index that loaded entries with
 * xas_load() took the reservation (XA_ZERO_ENTRY, whose value reads as
 * 515) for a chain head: a slot below 515 was linked after "515" and the
 * offset kept no head, so a hole punch missed the mapped page
 * (VM_BUG_ON_FOLIO(folio_mapped()) on the debug kernel, within seconds;
 * found in review, session 10).  Each round: a fresh mapping, 515 pages
 * remapped to sparse offsets (each fault needs a node), faulted in,
 * written, every offset punched: every page must read zero.  Guest only
 * (it changes the root cgroup).
 */
TEST_F_TIMEOUT(idx, nowait_failures_under_memcg, 180)
{
	const size_t pg = self->page, span = 1024;
	char cg[128];
	long rounds = 0, missing = 0;
	pid_t hog;
	double t0;
	int fd;

	if (nl_memcg_unavailable())
		SKIP(return, "%s", nl_memcg_unavailable());
	ASSERT_EQ(0, nl_memcg_enter("nl_index", "24M", cg, sizeof(cg)))
		TH_LOG("cgroup %s: %s", cg, strerror(errno));

	hog = fork();
	ASSERT_LE(0, hog);
	if (hog == 0) {
		/* Keeps the cgroup at its limit (and reclaiming) */
		const size_t len = 96UL << 20;
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			_exit(1);
		for (unsigned int v = 1;; v++)
			for (size_t o = 0; o < len; o += pg)
				p[o] = (char)v;
	}
	fd = memfd_create("nl_index_nowait", MFD_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, (off_t)((NOWAIT_BASE + NOWAIT_SLOTS * NOWAIT_STEP + 1) * pg)));
	for (t0 = nl_now(); nl_now() - t0 < 15 && !missing; rounds++) {
		/* A fresh vma each round: an index once incomplete stays so */
		char *m = mmap(NULL, span * pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

		ASSERT_NE(MAP_FAILED, m);
		for (size_t i = 0; i < NOWAIT_SLOTS; i++)
			ASSERT_EQ(0, nl_remap(m + i * pg, pg, 0, NOWAIT_BASE + i * NOWAIT_STEP,
					      MAP_NONBLOCK));
		for (size_t i = 0; i < NOWAIT_SLOTS; i++)
			m[i * pg] = 0x5a;
		for (size_t i = 0; i < NOWAIT_SLOTS; i++)
			ASSERT_EQ(0, fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
					       (off_t)((NOWAIT_BASE + i * NOWAIT_STEP) * pg),
					       (off_t)pg));
		for (size_t i = 0; i < NOWAIT_SLOTS; i++)
			missing += m[i * pg] != 0;
		ASSERT_EQ(0, munmap(m, span * pg));
	}
	kill(hog, SIGKILL);
	waitpid(hog, NULL, 0);
	close(fd);
	TH_LOG("%ld rounds of %d faults under memory.max=24M", rounds, NOWAIT_SLOTS);
	EXPECT_EQ(0, missing) TH_LOG("pages the hole punch missed (not in the index)");
	EXPECT_EQ(0, nl_memcg_leave(cg));
}

struct race {
	int fd;
	char *map;
	size_t *off;
	volatile bool stop;
	unsigned long remaps, truncates, faults;
};

static void *race_truncate(void *arg)
{
	struct race *r = arg;

	while (!r->stop) {
		if (ftruncate(r->fd, (off_t)(N / 3 * nl_pagesize())) ||
		    ftruncate(r->fd, (off_t)(N * nl_pagesize())))
			break;
		r->truncates++;
	}
	return NULL;
}

static void *race_remap(void *arg)
{
	struct race *r = arg;
	unsigned int seed = 1;

	while (!r->stop) {
		size_t i = (size_t)rand_r(&seed) % N, o = (size_t)rand_r(&seed) % N;

		/* Mostly within the truncated size; beyond EOF it fails */
		if (i & 1)
			o %= N / 3;
		if (nl_remap(r->map + i * nl_pagesize(), nl_pagesize(), 0, o, 0))
			continue;
		r->off[i] = o;
		r->remaps++;
	}
	return NULL;
}

static void *race_fault(void *arg)
{
	struct race *r = arg;
	unsigned int seed = 2;

	while (!r->stop) {
		size_t i = (size_t)rand_r(&seed) % (N - 8);

		/* Beyond EOF: EFAULT, no signal */
		madvise(r->map + i * nl_pagesize(), 8 * nl_pagesize(), MADV_POPULATE_READ);
		r->faults++;
	}
	return NULL;
}

/*
 * Truncation racing remap and faults: afterwards a truncation to 0 must
 * leave no page mapped anywhere (every access raises SIGBUS).
 */
TEST_F_TIMEOUT(idx, truncate_race, 300)
{
	struct race r = { .fd = self->fd, .map = self->map, .off = self->off };
	uint64_t *want = calloc(N, sizeof(*want));
	pthread_t t[3];
	double end;

	ASSERT_NE(NULL, want);
	ASSERT_EQ(0, pthread_create(&t[0], NULL, race_truncate, &r));
	ASSERT_EQ(0, pthread_create(&t[1], NULL, race_remap, &r));
	ASSERT_EQ(0, pthread_create(&t[2], NULL, race_fault, &r));
	/* 3 s, and at least 51 remaps (up to 120 s on a slow, loaded guest) */
	end = nl_now() + 3;
	while (nl_now() < end || (r.remaps <= 50 && nl_now() < end + 117))
		usleep(10000);
	r.stop = true;
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	TH_LOG("%lu truncations, %lu remaps, %lu populate calls", r.truncates, r.remaps,
	       r.faults);
	EXPECT_LT(50UL, r.remaps);
	/* Fault every address in, then truncate the file away under them */
	ASSERT_EQ(0, ftruncate(self->fd, (off_t)(N * self->page)));
	ASSERT_EQ(0, nl_stamp_fd(self->fd, 0, N, 0, false));
	ASSERT_EQ(0, check_contents(self->map, self->off, N));
	ASSERT_EQ((long)N, nl_count_present(self->map, N));
	ASSERT_EQ(0, ftruncate(self->fd, 0));
	for (size_t i = 0; i < N; i++)
		want[i] = NL_WANT_SIGBUS;
	EXPECT_EQ(0, nl_check_pages(self->map, N, want, false))
		TH_LOG("a page survived truncation: the unmap missed its address");
	EXPECT_EQ(0L, nl_count_present(self->map, N));
	ASSERT_EQ(0, ftruncate(self->fd, (off_t)(N * self->page)));
	ASSERT_EQ(0, nl_stamp_fd(self->fd, 0, N, 0, false));
	check_found(_metadata, self->fd, self->map, self->off, N);
	free(want);
}

/*
 * A sparse 64 TiB nonlinear vma of the same file must not slow down the
 * rmap walks of the file's pages: migrating (or unmapping, by hole punch)
 * pages of a small mapping costs about the same with it as without.  The
 * page-table scan this index replaced visited every populated page table of
 * the big vma for every folio.
 */
/*
 * fork() copies the index of the split half it is at while a fault under
 * the per-vma lock in the other half (not yet write-locked by dup_mmap())
 * links a slot into a chain that mixes both halves' slots.  Offset Q(i) is
 * shown at FR_S1(i) in the lower half and at FR_S3(i) > FR_S2(i) in the
 * upper one; the racing fault at FR_S2(i) sets next[S2] = S1, then
 * next[S3] = S2.  A copy of `next` in key order that has passed S2 but
 * not S3 ends the child's chain at S2: S1, mapped in the child, is lost,
 * and a hole punch at Q(i) in the child misses it (VM_BUG_ON_FOLIO in
 * filemap_unaccount_folio() on a DEBUG_VM kernel, else the child keeps
 * reading the old page).  FR_K aliases of one offset between S2 and S3
 * widen the window; the child punches and checks every Q(i).  Before the
 * seqcount in nonlinear_index_fork(), the second round hit it.
 */
#define FR_M 1024UL		/* offsets raced per fork */
#define FR_K 16384UL		/* aliases of FR_R between S2 and S3 */
#define FR_A1 8192UL		/* pages of the lower half */
#define FR_S1(i) (16 + (i))
#define FR_S2(i) (FR_A1 + (i))
#define FR_S3(i) (FR_A1 + FR_M + FR_K + (i))
#define FR_TOTAL (FR_A1 + FR_M + FR_K + FR_M)
#define FR_R 1UL
#define FR_Q(i) (2 + (i))
#define FR_ROUNDS 64

/*
 * How long the rounds may take: NL_FORK_RACE_SECONDS, default 90.  The
 * debug kernel's suite asks for less (a round takes it several seconds
 * there, and the checkers want each path run, not many rounds).
 */
static double fork_race_seconds(void)
{
	const char *v = getenv("NL_FORK_RACE_SECONDS");
	double secs = v && *v ? strtod(v, NULL) : 90;

	return secs > 0 ? secs : 90;
}

struct fork_racer {
	char *map;
	volatile int go;
	double delay;		/* seconds between two faults */
};

static void *fault_upper(void *arg)
{
	struct fork_racer *r = arg;
	size_t page = nl_pagesize();

	while (!r->go)
		;
	for (size_t i = 0; i < FR_M; i++) {
		double t = nl_now();

		(void)*(volatile char *)(r->map + FR_S2(i) * page);
		while (nl_now() - t < r->delay)
			;
	}
	return NULL;
}

TEST_F_TIMEOUT(idx, fork_races_sibling_fault, 600)
{
	struct fork_racer racer = { 0 };
	size_t page = self->page;
	int fd, status, round;
	double t0;
	char *map;

	fd = nl_memfd("nl_fork_race", FR_M + 2, true);
	ASSERT_LE(0, fd);
	map = nl_map_with_hole(FR_TOTAL * page, fd);
	ASSERT_NE(MAP_FAILED, map);
	for (size_t i = 0; i < FR_M; i++) {
		ASSERT_EQ(0, nl_remap(map + FR_S1(i) * page, page, 0, FR_Q(i), MAP_NONBLOCK));
		ASSERT_EQ(0, nl_remap(map + FR_S3(i) * page, page, 0, FR_Q(i), MAP_NONBLOCK));
	}
	for (size_t k = 0; k < FR_K; k++)
		ASSERT_EQ(0, nl_remap(map + (FR_A1 + FR_M + k) * page, page, 0, FR_R,
				      MAP_NONBLOCK));
	ASSERT_EQ(0, madvise(map + (FR_A1 + FR_M) * page, FR_K * page, MADV_POPULATE_READ));
	/* Two halves, one index */
	ASSERT_EQ(0, mprotect(map + FR_A1 * page, (FR_TOTAL - FR_A1) * page, PROT_READ));
	ASSERT_EQ(2, nl_count_vmas(map, FR_TOTAL * page));
	/* Rounds until FR_ROUNDS or the time is up, at least one */
	t0 = nl_now();
	for (round = 0; round < FR_ROUNDS &&
	     (!round || nl_now() - t0 < fork_race_seconds()); round++) {
		pthread_t t;
		pid_t pid;

		/* S2: entries not faulted in yet; S1 and S3 present */
		for (size_t i = 0; i < FR_M; i++)
			ASSERT_EQ(0, nl_remap(map + FR_S2(i) * page, page, 0, FR_Q(i),
					      MAP_NONBLOCK));
		ASSERT_EQ(0, madvise(map + FR_S1(0) * page, FR_M * page, MADV_POPULATE_READ));
		ASSERT_EQ(0, madvise(map + FR_S3(0) * page, FR_M * page, MADV_POPULATE_READ));
		racer.map = map;
		racer.go = 0;
		racer.delay = (5 << (round % 4)) * 1e-6;
		ASSERT_EQ(0, pthread_create(&t, NULL, fault_upper, &racer));
		racer.go = 1;
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			for (size_t i = 0; i < FR_M; i++) {
				if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
					      (off_t)(FR_Q(i) * page), (off_t)page))
					_exit(2);
				if (*(volatile uint64_t *)(map + FR_S1(i) * page) != 0)
					_exit(1);
			}
			_exit(0);
		}
		pthread_join(t, NULL);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
			TH_LOG("round %d: the child %s %d: its copy of the index lost an address",
			       round, WIFEXITED(status) ? "exited" : "was killed by signal",
			       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		if (_metadata->exit_code)
			break;
		ASSERT_EQ(0, nl_stamp_fd(fd, FR_Q(0), FR_M, 0, true));
	}
	TH_LOG("%d forks raced in %.1f s", round, nl_now() - t0);
	/* The aliases' chain, from its head (highest slot) down: O(1) each */
	for (size_t k = FR_K; k-- > 0;)
		ASSERT_EQ(0, nl_remap(map + (FR_A1 + FR_M + k) * page, page, 0,
				      FR_A1 + FR_M + k, MAP_NONBLOCK));
	munmap(map, FR_TOTAL * page);
	close(fd);
}

/*
 * The 64 TiB vma is made nonlinear by a single call, or (@vector) by a
 * MAP_VECTOR call, which must give it its index all the same.
 */
static void sparse_neighbour(struct __test_metadata *_metadata,
			     FIXTURE_DATA(idx) *self, bool vector)
{
	const size_t big = 64ULL << 40, step = 16ULL << 30, n = 64;
	double t_without, t_with, t0;
	size_t tables = 0;
	int node;
	char *b;

	if (!two_nodes())
		SKIP(return, "needs 2 NUMA nodes and root for move_pages");
	node = node_of(self->map);
	ASSERT_LE(0, node);
	ASSERT_EQ(0, check_contents(self->map, self->off, N));
	/* Without: move the first 64 pages there and back */
	t0 = nl_now();
	ASSERT_EQ(0, (long)move_all(self->map, self->off, n, !node));
	ASSERT_EQ(0, (long)move_all(self->map, self->off, n, node));
	t_without = nl_now() - t0;
	b = mmap(NULL, self->page, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, b);
	if (vector) {
		struct nl_vec_entry e = {
			.addr = (uintptr_t)b, .size = self->page, .pgoff = 3,
			.prot = PROT_READ | PROT_WRITE,
		};

		ASSERT_EQ(1, nl_remap_vec(&e, 1, MAP_CHGPROT));
	} else {
		ASSERT_EQ(0, nl_remap(b, self->page, 0, 3, 0));
	}
	b = mremap(b, self->page, big, MREMAP_MAYMOVE);
	if (b == MAP_FAILED)
		SKIP(return, "no 64 TiB of address space");
	/* A page every 16 GiB: 4096 page tables, each with one entry */
	t0 = nl_now();
	for (size_t a = step; a < big; a += step, tables++)
		ASSERT_EQ(0, nl_remap(b + a, self->page, 0, (a / step) % N, MAP_NONBLOCK));
	TH_LOG("%zu remaps into the 64 TiB vma: %.1f us each", tables,
	       (nl_now() - t0) / tables * 1e6);
	for (size_t a = step; a < big; a += 64 * step)
		(void)*(volatile char *)(b + a);
	t0 = nl_now();
	ASSERT_EQ(0, (long)move_all(self->map, self->off, n, !node));
	ASSERT_EQ(0, (long)move_all(self->map, self->off, n, node));
	t_with = nl_now() - t0;
	TH_LOG("move_pages of %zu pages twice: %.1f ms without, %.1f ms with the 64 TiB vma",
	       n, t_without * 1e3, t_with * 1e3);
	EXPECT_GT(5 * t_without + 0.05, t_with)
		TH_LOG("the rmap walk costs O(size of the other vma)");
	check_found(_metadata, self->fd, self->map, self->off, N);
	munmap(b, big);
}

TEST_F_TIMEOUT(idx, sparse_64tib_neighbour, 600)
{
	sparse_neighbour(_metadata, self, false);
}

TEST_F_TIMEOUT(idx, sparse_64tib_neighbour_vector, 600)
{
	sparse_neighbour(_metadata, self, true);
}

NL_HARNESS_MAIN
