// SPDX-License-Identifier: GPL-2.0
/*
 * Walkers that act on the file offsets a nonlinear range shows:
 * smaps Swap, MADV_WILLNEED swap-in readahead and mbind() must
 * use the offsets the range's entries and pages name (and the linear
 * offset of its none ptes), not the range's linear offsets.
 *
 * Layout of every test: a memfd of 2 * N pages, mapped linearly in full
 * (lin) and by a nonlinear vma of N pages at offset 0 (nl) whose address
 * 0 keeps its linear page (a none pte) and whose address i (1 <= i < N)
 * shows file page 2N - i (an entry).  So nl shows offsets {0, N+1 ..
 * 2N-1}; its linear offsets 1 .. N-1 are shown nowhere in nl.
 */
#include <sys/syscall.h>

#include "nonlinear_util.h" /* includes kselftest_harness.h */

#define N 32

#ifndef MPOL_DEFAULT
#define MPOL_DEFAULT 0
#define MPOL_BIND 2
#define MPOL_F_NODE (1 << 0)
#define MPOL_F_ADDR (1 << 1)
#endif

#define CG_ROOT "/sys/fs/cgroup"

/* File offset that address i of nl shows */
static size_t shown(size_t i)
{
	return i ? 2 * N - i : 0;
}

FIXTURE(walk)
{
	int fd;
	char *lin, *nl;
	size_t page;
};

FIXTURE_SETUP(walk)
{
	self->page = nl_pagesize();
	self->lin = self->nl = MAP_FAILED;
	self->fd = nl_memfd("nl_walkers", 2 * N, false);
	ASSERT_LE(0, self->fd);
	if (!nonlinear_supported())
		SKIP(return, "no nonlinear remap_file_pages() on this kernel");
	self->lin = mmap(NULL, 2 * N * self->page, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, self->lin);
	self->nl = nl_map_with_hole(N * self->page, self->fd);
	ASSERT_NE(MAP_FAILED, self->nl);
	/* Entries only (MAP_NONBLOCK): nl maps no page, lin is the only mapper. */
	for (size_t i = 1; i < N; i++)
		ASSERT_EQ(0, nl_remap(self->nl + i * self->page, self->page, 0, shown(i), MAP_NONBLOCK));
	EXPECT_NONLINEAR(self->nl, N * self->page);
}

FIXTURE_TEARDOWN(walk)
{
	if (self->nl != MAP_FAILED)
		munmap(self->nl, N * self->page);
	if (self->lin != MAP_FAILED)
		munmap(self->lin, 2 * N * self->page);
	if (self->fd >= 0)
		close(self->fd);
}

/* Whether file page @off is swapped out: smaps Swap of a 1-page linear mapping. */
static long swapped_kb(int fd, size_t off)
{
	size_t page = nl_pagesize();
	char *m = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, (off_t)(off * page));
	long kb;

	if (m == MAP_FAILED)
		return -1;
	kb = nl_smaps_kb(m, "Swap");
	munmap(m, page);
	return kb;
}

/* Write file pages @off[0..n) through lin, then page all of lin out. */
static long long fill_and_page_out(FIXTURE_DATA(walk) *self, const size_t *off, size_t n)
{
	long long out0 = nl_vmstat("pswpout");

	for (size_t k = 0; k < n; k++)
		nl_stamp_mem(self->lin + off[k] * self->page, off[k], 0, false);
	nl_lru_drain_all(); /* a folio in another CPU's batch is not paged out */
	if (madvise(self->lin, 2 * N * self->page, MADV_PAGEOUT))
		return -1;
	return nl_vmstat("pswpout") - out0;
}

/*
 * smaps Swap of nl counts the swapped-out pages of the offsets nl shows
 * (entries and the none pte at address 0), not those of its linear range.
 */
TEST_F_TIMEOUT(walk, smaps_swap_counts_shown_offsets, 120)
{
	size_t off[N];
	long want = 0, linear = 0, got, kb;

	if (nl_meminfo_kb("SwapTotal") <= 0)
		SKIP(return, "no active swap");
	/* Only the shown offsets get pages: the linear ones 1..N-1 stay holes. */
	for (size_t i = 0; i < N; i++)
		off[i] = shown(i);
	TH_LOG("MADV_PAGEOUT: pswpout +%lld", fill_and_page_out(self, off, N));
	for (size_t i = 0; i < N; i++) {
		kb = swapped_kb(self->fd, shown(i));
		ASSERT_LE(0, kb);
		want += kb;
		kb = swapped_kb(self->fd, i);
		ASSERT_LE(0, kb);
		linear += kb;
	}
	TH_LOG("swapped out: %ld kB of the shown offsets, %ld kB of the linear ones", want, linear);
	ASSERT_LE((long)(N / 2 * self->page / 1024), want) TH_LOG("MADV_PAGEOUT swapped too little to tell");
	got = nl_smaps_kb(self->nl, "Swap");
	EXPECT_EQ(want, got) TH_LOG("smaps Swap of the nonlinear vma");

	/* Bring one shown page back through nl: it no longer counts. */
	ASSERT_EQ(NL_STAMP(shown(1), 0), *(volatile uint64_t *)(self->nl + self->page));
	want = 0;
	for (size_t i = 0; i < N; i++)
		want += swapped_kb(self->fd, shown(i));
	EXPECT_EQ(want, nl_smaps_kb(self->nl, "Swap")) TH_LOG("after a fault at address 1");
}

/*
 * smaps Swap counts a swapped-out page once per VMA, as for a linear
 * shmem mapping, however many addresses of the VMA show it: offset 0 at
 * address 0 (its none pte) and at addresses 1-8 (entries), offset 2N-11
 * at addresses 9, 10 and 11 (entries only).  The series counted it once
 * per address (36 kB for one 4 kB page at 9 addresses).
 */
TEST_F_TIMEOUT(walk, smaps_swap_counts_aliases_once, 120)
{
	size_t off[N], nshown = 0, i, j;
	long want = 0, got, per_address = 0, kb;

	if (nl_meminfo_kb("SwapTotal") <= 0)
		SKIP(return, "no active swap");
	for (i = 1; i <= 8; i++)
		ASSERT_EQ(0, nl_remap(self->nl + i * self->page, self->page, 0, 0, MAP_NONBLOCK));
	for (i = 9; i <= 10; i++)
		ASSERT_EQ(0, nl_remap(self->nl + i * self->page, self->page, 0, shown(11),
				      MAP_NONBLOCK));
	/* The distinct offsets nl shows now */
	off[nshown++] = 0;
	off[nshown++] = shown(11);
	for (i = 12; i < N; i++)
		off[nshown++] = shown(i);
	TH_LOG("MADV_PAGEOUT: pswpout +%lld", fill_and_page_out(self, off, nshown));
	for (j = 0; j < nshown; j++) {
		kb = swapped_kb(self->fd, off[j]);
		ASSERT_LE(0, kb);
		want += kb;
	}
	for (i = 0; i < N; i++)
		per_address += swapped_kb(self->fd, i <= 8 ? 0 : i <= 10 ? shown(11) : shown(i));
	ASSERT_LT(0, swapped_kb(self->fd, 0)) TH_LOG("offset 0 did not go to swap");
	TH_LOG("swapped out: %ld kB of distinct offsets, %ld kB counted per address",
	       want, per_address);
	got = nl_smaps_kb(self->nl, "Swap");
	EXPECT_EQ(want, got) TH_LOG("smaps Swap of the nonlinear vma");
}

/* mincore() of every file page through lin: vec[j] bit 0 = in memory. */
static int file_incore(FIXTURE_DATA(walk) *self, unsigned char *vec)
{
	return mincore(self->lin, 2 * N * self->page, vec);
}

/* Drop clean swap cache pages (left by MADV_PAGEOUT's async writes). */
static void reclaim_some(void)
{
	int fd = open(CG_ROOT "/memory.reclaim", O_WRONLY);

	if (fd < 0)
		return;
	if (write(fd, "16M", 3) < 0) { /* EAGAIN when less was reclaimed: fine */
	}
	close(fd);
}

/*
 * MADV_WILLNEED on nl reads the swapped-out pages of the offsets nl shows
 * into memory, and not those of its linear offsets.
 */
TEST_F_TIMEOUT(walk, willneed_reads_shown_offsets, 120)
{
	unsigned char vec[2 * N];
	size_t off[2 * N], shown_out = 0, linear_out = 0, back = 0, wrong = 0;
	bool was_out[2 * N];

	if (nl_meminfo_kb("SwapTotal") <= 0)
		SKIP(return, "no active swap");
	for (size_t j = 0; j < 2 * N; j++)
		off[j] = j;
	TH_LOG("MADV_PAGEOUT: pswpout +%lld", fill_and_page_out(self, off, 2 * N));
	/* Written pages stay in the swap cache until reclaim frees them. */
	for (int tries = 0; tries < 20; tries++) {
		size_t in = 0;

		ASSERT_EQ(0, file_incore(self, vec));
		for (size_t j = 0; j < 2 * N; j++)
			in += vec[j] & 1;
		if (!in)
			break;
		reclaim_some();
		usleep(50000);
	}
	ASSERT_EQ(0, file_incore(self, vec));
	for (size_t j = 0; j < 2 * N; j++)
		was_out[j] = !(vec[j] & 1);
	for (size_t i = 0; i < N; i++)
		shown_out += was_out[shown(i)];
	for (size_t j = 1; j < N; j++)
		linear_out += was_out[j];
	TH_LOG("before MADV_WILLNEED: %zu of %d shown and %zu of %d linear-only offsets out of memory",
	       shown_out, N, linear_out, N - 1);
	ASSERT_LE((size_t)N / 2, shown_out) TH_LOG("swap cache not reclaimed: cannot tell");
	ASSERT_LE((size_t)N / 2, linear_out) TH_LOG("swap cache not reclaimed: cannot tell");

	ASSERT_EQ(0, madvise(self->nl, N * self->page, MADV_WILLNEED));
	/* The reads are asynchronous: wait until the shown pages are in. */
	for (int tries = 0; tries < 100; tries++) {
		back = 0;
		ASSERT_EQ(0, file_incore(self, vec));
		for (size_t i = 0; i < N; i++)
			back += was_out[shown(i)] && (vec[shown(i)] & 1);
		if (back == shown_out)
			break;
		usleep(20000);
	}
	for (size_t j = 1; j < N; j++)
		wrong += was_out[j] && (vec[j] & 1);
	TH_LOG("after MADV_WILLNEED: %zu of %zu shown offsets read in, %zu of %zu linear-only ones",
	       back, shown_out, wrong, linear_out);
	EXPECT_EQ(shown_out, back) TH_LOG("the offsets nl shows were not read in");
	EXPECT_EQ((size_t)0, wrong) TH_LOG("linear offsets nl does not show were read in");
	/* Offset N is shown nowhere in nl and is not linear there either. */
	if (was_out[N])
		EXPECT_EQ(0, vec[N] & 1);
}

static bool node_online(int node)
{
	char path[64];

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d", node);
	return access(path, F_OK) == 0;
}

static long sys_mbind(void *addr, size_t len, int mode, const unsigned long *mask,
		      unsigned long maxnode, unsigned int flags)
{
	return syscall(__NR_mbind, addr, len, mode, mask, maxnode, flags);
}

static long sys_get_mempolicy(int *mode, unsigned long *mask, unsigned long maxnode,
			      void *addr, unsigned long flags)
{
	return syscall(__NR_get_mempolicy, mode, mask, maxnode, addr, flags);
}

/* The shared policy of file page @off, read through lin (a linear vma). */
static int policy_of(FIXTURE_DATA(walk) *self, size_t off, unsigned long *mask)
{
	int mode = -1;

	*mask = 0;
	if (sys_get_mempolicy(&mode, mask, 8 * sizeof(*mask), self->lin + off * self->page,
			      MPOL_F_ADDR))
		return -1;
	return mode;
}

/*
 * mbind() of nl binds the offsets nl shows: a page faulted in at an
 * address of the range is allocated on the bound node, and the linear
 * offsets of the range (shown nowhere in it) keep the default policy.
 */
TEST_F_TIMEOUT(walk, mbind_binds_shown_offsets, 60)
{
	unsigned long node1 = 1UL << 1, mask;
	int node = -1;

	if (!node_online(1))
		SKIP(return, "no NUMA node 1 (the guest boots with numa=fake=2)");
	/* Addresses 1..N-1 (entries) and 0 (none pte, linear offset 0). */
	ASSERT_EQ(0, sys_mbind(self->nl, N * self->page, MPOL_BIND, &node1, 8 * sizeof(node1), 0))
		TH_LOG("mbind: %s", strerror(errno));
	EXPECT_NONLINEAR(self->nl, N * self->page);
	for (size_t i = 0; i < N; i++) {
		EXPECT_EQ(MPOL_BIND, policy_of(self, shown(i), &mask)) TH_LOG("offset %zu", shown(i));
		EXPECT_EQ(node1, mask) TH_LOG("offset %zu", shown(i));
	}
	for (size_t j = 1; j < N; j++) {
		EXPECT_EQ(MPOL_DEFAULT, policy_of(self, j, &mask)) TH_LOG("linear offset %zu", j);
	}
	EXPECT_EQ(MPOL_DEFAULT, policy_of(self, N, &mask)) TH_LOG("offset %d", N);

	/* First touch through nl allocates the shown page on node 1. */
	for (size_t i = 0; i < N; i += 7) {
		*(volatile uint64_t *)(self->nl + i * self->page) = NL_STAMP(shown(i), 1);
		ASSERT_EQ(0, sys_get_mempolicy(&node, NULL, 0, self->nl + i * self->page,
					       MPOL_F_NODE | MPOL_F_ADDR));
		EXPECT_EQ(1, node) TH_LOG("page at address %zu (file page %zu)", i, shown(i));
		EXPECT_EQ(NL_STAMP(shown(i), 1), nl_file_word(self->fd, shown(i)));
	}
	/* MPOL_DEFAULT through nl clears the shown offsets again. */
	ASSERT_EQ(0, sys_mbind(self->nl, N * self->page, MPOL_DEFAULT, NULL, 0, 0));
	for (size_t i = 0; i < N; i++) {
		EXPECT_EQ(MPOL_DEFAULT, policy_of(self, shown(i), &mask)) TH_LOG("offset %zu", shown(i));
	}
}

/*
 * A guard keeps the offset it was given but shows no page.  memdbg guards
 * with offsets that live data shows elsewhere, so the walkers must skip
 * guards: here addresses GA..GA+3 of nl become guards naming file pages
 * N+1..N+4, which nl shows at addresses N-1..N-4.
 */
#define GA 5

static int guard_foreign_offsets(FIXTURE_DATA(walk) *self)
{
	return nl_remap(self->nl + GA * self->page, 4 * self->page, PROT_NONE, N + 1, MAP_CHGPROT);
}

/* smaps Swap: a guard does not count the swapped-out page it names. */
TEST_F_TIMEOUT(walk, guards_count_no_swap, 120)
{
	size_t off[N];
	long want = 0, got;

	if (nl_meminfo_kb("SwapTotal") <= 0)
		SKIP(return, "no active swap");
	ASSERT_EQ(0, guard_foreign_offsets(self));
	for (size_t i = 0; i < N; i++)
		off[i] = shown(i);
	TH_LOG("MADV_PAGEOUT: pswpout +%lld", fill_and_page_out(self, off, N));
	for (size_t i = 0; i < N; i++)
		if (i < GA || i >= GA + 4)
			want += swapped_kb(self->fd, shown(i));
	ASSERT_LE((long)(N / 2 * self->page / 1024), want) TH_LOG("MADV_PAGEOUT swapped too little to tell");
	got = nl_smaps_kb(self->nl, "Swap");
	EXPECT_EQ(want, got) TH_LOG("smaps Swap of the nonlinear vma with 4 guards");
}

/* mbind() of a range of guards binds no file page. */
TEST_F_TIMEOUT(walk, guards_bind_no_offset, 60)
{
	unsigned long node1 = 1UL << 1, mask;

	if (!node_online(1))
		SKIP(return, "no NUMA node 1 (the guest boots with numa=fake=2)");
	ASSERT_EQ(0, guard_foreign_offsets(self));
	ASSERT_EQ(0, sys_mbind(self->nl + GA * self->page, 4 * self->page, MPOL_BIND, &node1,
			       8 * sizeof(node1), 0)) TH_LOG("mbind: %s", strerror(errno));
	for (size_t j = 0; j < 2 * N; j++) {
		EXPECT_EQ(MPOL_DEFAULT, policy_of(self, j, &mask)) TH_LOG("offset %zu", j);
	}
}

/* MADV_REMOVE of a range of guards punches nothing: the data they name lives. */
TEST_F_TIMEOUT(walk, guards_punch_nothing, 60)
{
	for (size_t j = 0; j < 2 * N; j++)
		nl_stamp_mem(self->lin + j * self->page, j, 0, false);
	ASSERT_EQ(0, guard_foreign_offsets(self));
	ASSERT_EQ(0, madvise(self->nl + GA * self->page, 4 * self->page, MADV_REMOVE))
		TH_LOG("MADV_REMOVE: %s", strerror(errno));
	for (size_t j = 0; j < 2 * N; j++) {
		EXPECT_EQ(NL_STAMP(j, 0), nl_file_word(self->fd, j)) TH_LOG("file page %zu", j);
	}
	/* The guards stay guards: SIGSEGV at the first one. */
	EXPECT_EQ(SIGSEGV, nl_probe(self->nl + GA * self->page, NULL, false, 0));
}

/*
 * The walkers step over missing page tables: smaps, MADV_WILLNEED and
 * mbind() of a 1 TiB nonlinear vma that holds one entry at its far end
 * take about what a small vma takes, not a visit per page (2^28 pages).
 */
TEST_F_TIMEOUT(walk, huge_sparse_vma_walks_page_tables, 120)
{
	const size_t len = 1UL << 40, page = self->page;
	unsigned long node1 = 1UL << 1;
	double t0, t_smaps, t_willneed, t_mbind;
	int fd = nl_memfd("nl_walkers_huge", len / page, false);
	char *m;

	ASSERT_LE(0, fd);
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	ASSERT_EQ(0, nl_remap(m + len - page, page, 0, 3, MAP_NONBLOCK));
	EXPECT_NONLINEAR(m, len);
	t0 = nl_now();
	EXPECT_EQ(0, nl_smaps_kb(m, "Swap"));
	t_smaps = nl_now() - t0;
	t0 = nl_now();
	EXPECT_EQ(0, madvise(m, len, MADV_WILLNEED));
	t_willneed = nl_now() - t0;
	t0 = nl_now();
	if (node_online(1)) {
		EXPECT_EQ(0, sys_mbind(m, len, MPOL_BIND, &node1, 8 * sizeof(node1), 0));
	}
	t_mbind = nl_now() - t0;
	TH_LOG("1 TiB nonlinear vma: smaps %.1f ms, MADV_WILLNEED %.1f ms, mbind %.1f ms",
	       t_smaps * 1e3, t_willneed * 1e3, t_mbind * 1e3);
	EXPECT_GT(2.0, t_smaps);
	EXPECT_GT(2.0, t_willneed);
	EXPECT_GT(2.0, t_mbind);
	munmap(m, len);
	close(fd);
}

NL_HARNESS_MAIN
