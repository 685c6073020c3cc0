// SPDX-License-Identifier: GPL-2.0
/*
 * Swappable nonlinear ptes (A1 point 2): when reclaim unmaps a
 * nonlinearly mapped shmem page, the pte keeps its file offset and the next
 * fault brings back that page.  Pages are pushed out by MADV_PAGEOUT and by
 * real memory pressure (a memory cgroup whose memory.max is below the
 * working set); /proc/vmstat pswpout shows they really went to swap, and
 * every page is checked after coming back.  Needs active swap (the guest
 * has it); skips otherwise.
 */
#include <sys/wait.h>

#include "nonlinear_util.h" /* includes kselftest_harness.h */

FIXTURE(swap)
{
	int fd;
	char *map;
	size_t page, n, len;
	uint64_t *want;
	size_t *off;
	char cgroup[128];
};

FIXTURE_SETUP(swap)
{
	self->fd = -1;
	self->map = MAP_FAILED;
	self->cgroup[0] = 0;
	self->page = nl_pagesize();
	if (nl_meminfo_kb("SwapTotal") <= 0)
		SKIP(return, "no active swap");
	if (nl_vmstat("pswpout") < 0)
		SKIP(return, "no pswpout in /proc/vmstat");
}

FIXTURE_TEARDOWN(swap)
{
	if (self->map != MAP_FAILED)
		munmap(self->map, self->len);
	if (self->fd >= 0)
		close(self->fd);
	free(self->want);
	free(self->off);
	if (self->cgroup[0])
		nl_memcg_leave(self->cgroup);
}

/*
 * A memfd of @n pages mapped once; page i remapped to file page n-1-i.
 * With @stamp the file is stamped first (pages allocated now); without,
 * the remaps use MAP_NONBLOCK and the caller writes through the mapping.
 */
static int setup_reversed(FIXTURE_DATA(swap) *self, size_t n, bool stamp)
{
	self->n = n;
	self->len = n * self->page;
	self->want = calloc(n, sizeof(*self->want));
	self->off = calloc(n, sizeof(*self->off));
	if (!self->want || !self->off)
		return -1;
	self->fd = nl_memfd("nl_swap", n, stamp);
	if (self->fd < 0)
		return -1;
	self->map = nl_map_with_hole(self->len, self->fd);
	if (self->map == MAP_FAILED)
		return -1;
	for (size_t i = 0; i < n; i++) {
		self->off[i] = n - 1 - i;
		self->want[i] = NL_STAMP(self->off[i], 0);
	}
	for (size_t i = n; i-- > 0;)
		if (nl_remap(self->map + i * self->page, self->page, 0, self->off[i], stamp ? 0 : MAP_NONBLOCK))
			return -1;
	return 0;
}

/* MADV_PAGEOUT swaps the nonlinear pages out; reads and writes bring them back. */
TEST_F_TIMEOUT(swap, madv_pageout_and_refault, 120)
{
	const size_t n = 1024; /* 4 MiB */
	long long out0, out1, in0, in1;
	long present;

	ASSERT_EQ(0, setup_reversed(self, n, true));
	EXPECT_EQ(0, nl_check_pages(self->map, n, self->want, false));
	EXPECT_EQ((long)n, nl_count_present(self->map, n));
	out0 = nl_vmstat("pswpout");
	in0 = nl_vmstat("pswpin");
	ASSERT_EQ(0, madvise(self->map, self->len, MADV_PAGEOUT)) TH_LOG("MADV_PAGEOUT: %s", strerror(errno));
	out1 = nl_vmstat("pswpout");
	present = nl_count_present(self->map, n);
	TH_LOG("MADV_PAGEOUT: pswpout +%lld, %ld of %zu pages still mapped", out1 - out0, present, n);
	EXPECT_LE((long long)(n * 9 / 10), out1 - out0) TH_LOG("the pages did not go to swap");
	EXPECT_GE((long)(n / 10), present) TH_LOG("rmap did not unmap the nonlinear pages");
	/* Every page comes back from its own offset, whole. */
	EXPECT_EQ(0, nl_check_pages(self->map, n, self->want, true));
	in1 = nl_vmstat("pswpin");
	TH_LOG("refault: pswpin +%lld", in1 - in0);
	/* Out again, then write faults: the writes land in the right file pages. */
	ASSERT_EQ(0, madvise(self->map, self->len, MADV_PAGEOUT));
	EXPECT_GE((long)(n / 10), nl_count_present(self->map, n));
	for (size_t i = 0; i < n; i += 2) {
		*(volatile uint64_t *)(self->map + i * self->page) = NL_STAMP(self->off[i], 1);
		self->want[i] = NL_STAMP(self->off[i], 1);
	}
	for (size_t i = 0; i < n; i += 2)
		EXPECT_EQ(NL_STAMP(self->off[i], 1), nl_file_word(self->fd, self->off[i]));
	for (size_t i = 1; i < n; i += 2)
		EXPECT_EQ(NL_STAMP(self->off[i], 0), *(volatile uint64_t *)(self->map + i * self->page));
	EXPECT_NONLINEAR(self->map, self->len);
}

/*
 * Real memory pressure: in a memory cgroup with memory.max = 8 MiB, write a
 * 32 MiB nonlinear mapping page by page, then read it all back twice.
 */
TEST_F_TIMEOUT(swap, memcg_pressure, 240)
{
	const size_t n = 8192; /* 32 MiB */
	char path[192];
	long long out0, out1, in0, in1;
	long oom;

	if (nl_memcg_unavailable())
		SKIP(return, "%s", nl_memcg_unavailable());
	ASSERT_EQ(0, nl_memcg_enter("nl_swap_test", "8M", self->cgroup, sizeof(self->cgroup)))
		TH_LOG("cgroup %s: %s", self->cgroup, strerror(errno));

	out0 = nl_vmstat("pswpout");
	in0 = nl_vmstat("pswpin");
	/* Offsets installed without allocating; pages allocated by the writes below. */
	ASSERT_EQ(0, setup_reversed(self, n, false));
	for (size_t i = 0; i < n; i++)
		nl_stamp_mem(self->map + i * self->page, self->off[i], 0, false);
	out1 = nl_vmstat("pswpout");
	TH_LOG("writing %zu MiB under memory.max=8M: pswpout +%lld", n * self->page >> 20, out1 - out0);
	EXPECT_LE((long long)(n / 2), out1 - out0) TH_LOG("the nonlinear pages were not swapped out");
	/* Spot-check through the file, then every page through the mapping, twice. */
	for (size_t j = 0; j < n; j += 97)
		EXPECT_EQ(NL_STAMP(j, 0), nl_file_word(self->fd, j));
	EXPECT_EQ(0, nl_check_pages(self->map, n, self->want, false));
	EXPECT_EQ(0, nl_check_pages(self->map, n, self->want, false));
	in1 = nl_vmstat("pswpin");
	TH_LOG("reading it back: pswpin +%lld, pswpout +%lld in all", in1 - in0, nl_vmstat("pswpout") - out0);
	EXPECT_LT(0, in1 - in0) TH_LOG("nothing was swapped in");
	snprintf(path, sizeof(path), "%s/memory.events", self->cgroup);
	oom = nl_cg_key(path, "oom_kill");
	EXPECT_GE(0, oom) TH_LOG("%ld OOM kills in the cgroup", oom);
	EXPECT_NONLINEAR(self->map, self->len);
}

/* fork after swap-out: the child faults the swapped nonlinear pages back in. */
TEST_F_TIMEOUT(swap, fork_after_pageout, 120)
{
	const size_t n = 512;
	int status;
	pid_t pid;

	ASSERT_EQ(0, setup_reversed(self, n, true));
	ASSERT_EQ(0, madvise(self->map, self->len, MADV_PAGEOUT));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (nl_check_pages(self->map, n, self->want, true))
			_exit(1);
		for (size_t i = 0; i < n; i += 3)
			*(volatile uint64_t *)(self->map + i * self->page) = NL_STAMP(self->off[i], 2);
		_exit(nl_count_vmas(self->map, self->len) == 1 ? 0 : 2);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("child killed by signal %d", WTERMSIG(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("child: 1 wrong pages, 2 not one VMA");
	for (size_t i = 0; i < n; i += 3)
		EXPECT_EQ(NL_STAMP(self->off[i], 2), *(volatile uint64_t *)(self->map + i * self->page));
	EXPECT_NONLINEAR(self->map, self->len);
}

/* Truncating swapped-out nonlinear pages: SIGBUS beyond EOF, zero after regrowing. */
TEST_F_TIMEOUT(swap, truncate_after_pageout, 120)
{
	const size_t n = 256;

	ASSERT_EQ(0, setup_reversed(self, n, true));
	ASSERT_EQ(0, madvise(self->map, self->len, MADV_PAGEOUT));
	ASSERT_EQ(0, ftruncate(self->fd, n / 2 * self->page));
	for (size_t i = 0; i < n / 2; i++)
		self->want[i] = NL_WANT_SIGBUS;
	EXPECT_EQ(0, nl_check_pages(self->map, n, self->want, false));
	ASSERT_EQ(0, ftruncate(self->fd, n * self->page));
	for (size_t i = 0; i < n / 2; i++)
		self->want[i] = NL_WANT_ZERO;
	EXPECT_EQ(0, nl_check_pages(self->map, n, self->want, true));
	EXPECT_NONLINEAR(self->map, self->len);
}

/* munmap + close of swapped-out nonlinear pages frees their swap and Shmem. */
TEST_F_TIMEOUT(swap, munmap_frees_swap, 120)
{
	const size_t n = 2048; /* 8 MiB */
	long swap0, swap1, swap2, shmem0, shmem2;
	long long out0;

	/* Let earlier tests' swap writeback settle. */
	sync();
	shmem0 = nl_meminfo_kb("Shmem");
	swap0 = nl_meminfo_kb("SwapFree");
	out0 = nl_vmstat("pswpout");
	ASSERT_EQ(0, setup_reversed(self, n, true));
	ASSERT_EQ(0, madvise(self->map, self->len, MADV_PAGEOUT));
	EXPECT_LE((long long)(n * 9 / 10), nl_vmstat("pswpout") - out0);
	swap1 = nl_meminfo_kb("SwapFree");
	EXPECT_LE(swap1 + (long)(n * self->page / 1024 * 8 / 10), swap0)
		TH_LOG("SwapFree %ld -> %ld kB", swap0, swap1);
	/* Half back in, half still out. */
	EXPECT_EQ(0, nl_check_pages(self->map, n / 2, self->want, false));
	EXPECT_NONLINEAR(self->map, self->len);
	ASSERT_EQ(0, munmap(self->map, self->len));
	self->map = MAP_FAILED;
	close(self->fd);
	self->fd = -1;
	swap2 = nl_meminfo_kb("SwapFree");
	shmem2 = nl_meminfo_kb("Shmem");
	TH_LOG("SwapFree %ld -> %ld -> %ld kB, Shmem %ld -> %ld kB", swap0, swap1, swap2, shmem0, shmem2);
	EXPECT_GT(1024, labs(swap2 - swap0)) TH_LOG("swap not freed");
	EXPECT_GT(2048, labs(shmem2 - shmem0)) TH_LOG("Shmem not back at baseline");
}

NL_HARNESS_MAIN
