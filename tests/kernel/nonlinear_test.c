// SPDX-License-Identifier: GPL-2.0
/*
 * Nonlinear remap_file_pages() on shmem: remaps rearrange pages
 * through page tables only, the mapping stays one VMA marked "nl", and
 * every page-table walker keeps the layout.  Each file page carries its
 * offset (nonlinear_util.h) and every page is checked after each step.
 *
 * These tests assert the feature: on a stock kernel (one VMA per call) the
 * VMA-count and "nl" checks fail, by design.  The error cases are in
 * nonlinear_errors_test.c, swap in nonlinear_swap_test.c, concurrency in
 * nonlinear_threads_test.c.
 */
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "nonlinear_util.h" /* includes kselftest_harness.h */

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif
#ifndef RAMFS_MAGIC
#define RAMFS_MAGIC 0x858458f6
#endif

/* Remap page i of @map to file page off[i], one call per page, last first. */
static int remap_each(char *map, const size_t *off, size_t n, int flags)
{
	for (size_t i = n; i-- > 0;)
		if (nl_remap(map + i * nl_pagesize(), nl_pagesize(), 0, off[i], flags))
			return -1;
	return 0;
}

/* ========================================================================= */
/* Every shmem backing: memfd, a /dev/shm file, a tmpfs file, MAP_SHARED|ANON. */

#define BP 64 /* pages in the backing object and its mapping */
#define BW 32 /* LTP window: the first BW pages are remapped */
#define BW0 17 /* ... to file pages BW0 .. BW0 + BW - 1 */

FIXTURE(backing)
{
	int fd;
	char *map;
	size_t page;
	uint64_t want[BP];
	size_t off[BP];
};

FIXTURE_VARIANT(backing)
{
	int kind; /* 0 memfd, 1 /dev/shm, 2 $TMPDIR, 3 shared anonymous */
};

FIXTURE_VARIANT_ADD(backing, memfd) { .kind = 0 };
FIXTURE_VARIANT_ADD(backing, dev_shm) { .kind = 1 };
FIXTURE_VARIANT_ADD(backing, tmpfs_file) { .kind = 2 };
FIXTURE_VARIANT_ADD(backing, shared_anon) { .kind = 3 };

FIXTURE_SETUP(backing)
{
	char path[256];
	struct statfs sfs;
	const char *dir;

	self->page = nl_pagesize();
	self->fd = -1;
	self->map = MAP_FAILED;
	switch (variant->kind) {
	case 0:
		self->fd = memfd_create("nl_backing", MFD_CLOEXEC);
		break;
	case 1:
	case 2:
		dir = variant->kind == 1 ? "/dev/shm" : getenv("TMPDIR") ?: "/tmp";
		snprintf(path, sizeof(path), "%s/nl_backing.%d", dir, getpid());
		self->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (self->fd >= 0)
			unlink(path);
		if (self->fd >= 0 && (fstatfs(self->fd, &sfs) || sfs.f_type != TMPFS_MAGIC))
			SKIP(return, "%s is not a tmpfs", dir);
		break;
	}
	if (variant->kind != 3) {
		ASSERT_LE(0, self->fd) TH_LOG("cannot create the backing file: %s", strerror(errno));
		ASSERT_EQ(0, ftruncate(self->fd, BP * self->page));
		ASSERT_EQ(0, nl_stamp_fd(self->fd, 0, BP, 0, true));
	}
	self->map = nl_map_with_hole(BP * self->page, self->fd);
	ASSERT_NE(MAP_FAILED, self->map);
	if (variant->kind == 3)
		for (size_t i = 0; i < BP; i++)
			nl_stamp_mem(self->map + i * self->page, i, 0, true);
	for (size_t i = 0; i < BP; i++) {
		self->off[i] = i;
		self->want[i] = NL_STAMP(i, 0);
	}
}

FIXTURE_TEARDOWN(backing)
{
	if (self->map != MAP_FAILED)
		munmap(self->map, BP * self->page);
	if (self->fd >= 0)
		close(self->fd);
}

/*
 * LTP remap_file_pages01 style: the window's two-page chunks in reverse
 * order, each chunk from a shifted file offset; every byte of every page is
 * checked; then one call restores the linear layout.
 */
TEST_F(backing, ltp_reverse_two_page_chunks)
{
	for (size_t i = 0; i < BW; i += 2) {
		size_t pg = BW0 + BW - i - 2;

		ASSERT_EQ(0, nl_remap(self->map + i * self->page, 2 * self->page, 0, pg, 0))
			TH_LOG("chunk %zu: %s", i / 2, strerror(errno));
		self->want[i] = NL_STAMP(pg, 0);
		self->want[i + 1] = NL_STAMP(pg + 1, 0);
	}
	EXPECT_EQ(0, nl_check_pages(self->map, BP, self->want, true));
	EXPECT_NONLINEAR(self->map, BP * self->page);
	/* Remapping the window to its own offsets makes it linear again. */
	ASSERT_EQ(0, nl_remap(self->map, BW * self->page, 0, 0, 0));
	for (size_t i = 0; i < BP; i++)
		self->want[i] = NL_STAMP(i, 0);
	EXPECT_EQ(0, nl_check_pages(self->map, BP, self->want, true));
	EXPECT_EQ(1, nl_count_vmas(self->map, BP * self->page));
}

/* Single-page remaps, all pages reversed: one VMA, "nl", every page right. */
TEST_F(backing, reverse_single_pages_one_vma)
{
	for (size_t i = 0; i < BP; i++)
		self->off[i] = BP - 1 - i;
	ASSERT_EQ(0, remap_each(self->map, self->off, BP, 0));
	nl_want_from(self->want, self->off, BP);
	EXPECT_EQ(0, nl_check_pages(self->map, BP, self->want, true));
	EXPECT_NONLINEAR(self->map, BP * self->page);
	/* Writes through the nonlinear mapping land in the remapped file page. */
	nl_stamp_mem(self->map + 3 * self->page, BP - 1 - 3, 1, false);
	self->want[3] = NL_STAMP(BP - 1 - 3, 1);
	if (self->fd >= 0) {
		EXPECT_EQ(NL_STAMP(BP - 1 - 3, 1), nl_file_word(self->fd, BP - 1 - 3));
		EXPECT_EQ(NL_STAMP(3, 0), nl_file_word(self->fd, 3));
	}
	EXPECT_EQ(0, nl_check_pages(self->map, BP, self->want, false));
}

/* MADV_DONTNEED drops the ptes; the next faults repopulate the same layout. */
TEST_F(backing, dontneed_refaults_same_layout)
{
	for (size_t i = 0; i < BP; i++)
		self->off[i] = (i * 7 + 3) % BP;
	ASSERT_EQ(0, remap_each(self->map, self->off, BP, 0));
	nl_want_from(self->want, self->off, BP);
	EXPECT_EQ(0, nl_check_pages(self->map, BP, self->want, false));
	ASSERT_EQ(0, madvise(self->map, BP * self->page, MADV_DONTNEED));
	EXPECT_EQ(0, nl_count_present(self->map, BP));
	EXPECT_EQ(0, nl_check_pages(self->map, BP, self->want, true));
	EXPECT_NONLINEAR(self->map, BP * self->page);
}

/* ========================================================================= */
/* A memfd of 2N stamped pages; its first N pages mapped, then reversed.     */

#define N 64

FIXTURE(nl)
{
	int fd;
	char *map;
	size_t page, len;
	uint64_t want[N];
	size_t off[N];
};

FIXTURE_SETUP(nl)
{
	self->page = nl_pagesize();
	self->len = N * self->page;
	self->fd = nl_memfd("nl", 2 * N, true);
	ASSERT_LE(0, self->fd);
	self->map = nl_map_with_hole(self->len, self->fd);
	ASSERT_NE(MAP_FAILED, self->map);
	for (size_t i = 0; i < N; i++)
		self->off[i] = N - 1 - i;
	ASSERT_EQ(0, remap_each(self->map, self->off, N, 0));
	nl_want_from(self->want, self->off, N);
}

FIXTURE_TEARDOWN(nl)
{
	if (self->map != MAP_FAILED)
		munmap(self->map, self->len);
	if (self->fd >= 0)
		close(self->fd);
}

/* The basic claim: one VMA, "nl", one /proc/self/maps line, right pages. */
TEST_F(nl, one_vma_and_nl_flag)
{
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	EXPECT_NONLINEAR(self->map, self->len);
	/* Remapping again over nonlinear ptes replaces them. */
	for (size_t i = 0; i < N; i++)
		self->off[i] = N + i;
	ASSERT_EQ(0, nl_remap(self->map, self->len, 0, N, 0));
	nl_want_from(self->want, self->off, N);
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	EXPECT_NONLINEAR(self->map, self->len);
	/* smaps accounts every mapped page once. */
	EXPECT_EQ((long)(self->len / 1024), nl_smaps_kb(self->map, "Rss"));
}

/* Remapping a page to its own offset restores the linear page there. */
TEST_F(nl, linear_remap_restores_linear_page)
{
	ASSERT_EQ(0, nl_remap(self->map + 5 * self->page, self->page, 0, 5, 0));
	ASSERT_EQ(0, nl_remap(self->map + 9 * self->page, 3 * self->page, 0, 9, MAP_NONBLOCK));
	self->off[5] = 5;
	for (size_t i = 9; i < 12; i++)
		self->off[i] = i;
	nl_want_from(self->want, self->off, N);
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	/* And stays so across a drop and refault of all ptes. */
	ASSERT_EQ(0, madvise(self->map, self->len, MADV_DONTNEED));
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	EXPECT_NONLINEAR(self->map, self->len);
}

/*
 * pagemap: each address maps exactly the physical page of its file
 * offset, as seen through a second, linear mapping of the same memfd.
 */
TEST_F(nl, pagemap_shows_remapped_pfns)
{
	char *lin = mmap(NULL, 2 * self->len, PROT_READ, MAP_SHARED, self->fd, 0);
	size_t pfn_checked = 0;

	ASSERT_NE(MAP_FAILED, lin);
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	for (size_t i = 0; i < 2 * N; i++)
		(void)*(volatile char *)(lin + i * self->page);
	for (size_t i = 0; i < N; i++) {
		uint64_t e = nl_pagemap(self->map + i * self->page);
		uint64_t l = nl_pagemap(lin + self->off[i] * self->page);

		EXPECT_TRUE(!!(e & PM_PRESENT)) TH_LOG("page %zu not present", i);
		EXPECT_TRUE(!!(e & PM_FILE)) TH_LOG("page %zu: no file/shared bit", i);
		if ((e & PM_PFN_MASK) && (l & PM_PFN_MASK)) {
			EXPECT_EQ(l & PM_PFN_MASK, e & PM_PFN_MASK) TH_LOG("page %zu", i);
			pfn_checked++;
		}
	}
	if (!pfn_checked)
		TH_LOG("pagemap hides PFNs (not root?): presence bits checked only");
	/* Dropped ptes: not present, no swap bit, layout intact. */
	ASSERT_EQ(0, madvise(self->map, self->len, MADV_DONTNEED));
	for (size_t i = 0; i < N; i++)
		EXPECT_EQ(0ULL, nl_pagemap(self->map + i * self->page) & (PM_PRESENT | PM_SWAP));
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	EXPECT_NONLINEAR(self->map, self->len);
	munmap(lin, 2 * self->len);
}

/* MADV_DONTNEED keeps the layout (file ptes), as older kernels did. */
TEST_F(nl, madv_dontneed_keeps_layout)
{
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	ASSERT_EQ(0, madvise(self->map + 8 * self->page, 16 * self->page, MADV_DONTNEED));
	EXPECT_EQ(N - 16, nl_count_present(self->map, N));
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	ASSERT_EQ(0, madvise(self->map, self->len, MADV_DONTNEED));
	EXPECT_EQ(0, nl_count_present(self->map, N));
	/* Write faults too go to the remapped offsets. */
	for (size_t i = 0; i < N; i += 3) {
		nl_stamp_mem(self->map + i * self->page, self->off[i], 2, false);
		self->want[i] = NL_STAMP(self->off[i], 2);
	}
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	for (size_t i = 0; i < N; i += 3)
		EXPECT_EQ(NL_STAMP(self->off[i], 2), nl_file_word(self->fd, self->off[i]));
	EXPECT_NONLINEAR(self->map, self->len);
}

/* MAP_NONBLOCK installs offsets without reading or allocating any page. */
TEST_F(nl, map_nonblock_allocates_nothing)
{
	const size_t n = 512;
	int fd = nl_memfd("nl_nonblock", n, false);
	long shmem0, shmem1;
	uint64_t *want;
	size_t *off;
	struct stat st;
	char *m;

	ASSERT_LE(0, fd);
	want = calloc(n, sizeof(*want));
	off = calloc(n, sizeof(*off));
	ASSERT_TRUE(want && off);
	m = nl_map_with_hole(n * self->page, fd);
	ASSERT_NE(MAP_FAILED, m);
	shmem0 = nl_meminfo_kb("Shmem");
	for (size_t i = 0; i < n; i++)
		off[i] = n - 1 - i;
	ASSERT_EQ(0, remap_each(m, off, n, MAP_NONBLOCK));
	shmem1 = nl_meminfo_kb("Shmem");
	ASSERT_EQ(0, fstat(fd, &st));
	EXPECT_EQ(0, st.st_blocks) TH_LOG("MAP_NONBLOCK allocated file pages");
	EXPECT_GT(512, shmem1 - shmem0) TH_LOG("Shmem grew by %ld kB", shmem1 - shmem0);
	EXPECT_EQ(0, nl_count_present(m, n));
	EXPECT_NONLINEAR(m, n * self->page);
	/* Touching allocates them, at the remapped offsets. */
	for (size_t i = 0; i < n; i++)
		nl_stamp_mem(m + i * self->page, off[i], 0, false);
	ASSERT_EQ(0, fstat(fd, &st));
	EXPECT_EQ((long)(n * self->page / 512), (long)st.st_blocks);
	for (size_t i = 0; i < n; i += 17)
		EXPECT_EQ(NL_STAMP(i, 0), nl_file_word(fd, i));
	nl_want_from(want, off, n);
	EXPECT_EQ(0, nl_check_pages(m, n, want, false));
	munmap(m, n * self->page);
	close(fd);
	free(want);
	free(off);
}

/*
 * fork: the child gets the same nonlinear layout, present and non-present
 * (file) ptes alike; its writes reach the shared pages the parent sees.
 */
TEST_F(nl, fork_child_sees_layout)
{
	int status;
	pid_t pid;

	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	/* Half the ptes present, half dropped to file ptes. */
	ASSERT_EQ(0, madvise(self->map, self->len / 2, MADV_DONTNEED));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int bad = 0;

		if (nl_count_vmas(self->map, self->len) != 1 || !nl_has_vmflag(self->map, "nl")) {
			fprintf(stderr, "#   child: %ld VMAs, nl %d\n", nl_count_vmas(self->map, self->len),
				nl_has_vmflag(self->map, "nl"));
			bad |= 1;
		}
		if (nl_check_pages(self->map, N, self->want, false))
			bad |= 2;
		for (size_t i = 0; i < N; i += 2)
			nl_stamp_mem(self->map + i * self->page, self->off[i], 3, false);
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("child killed by signal %d", WTERMSIG(status));
	EXPECT_EQ(0, WEXITSTATUS(status) & 1) TH_LOG("child's mapping is not one nonlinear VMA");
	EXPECT_EQ(0, WEXITSTATUS(status) & 2) TH_LOG("child saw wrong pages");
	for (size_t i = 0; i < N; i += 2)
		self->want[i] = NL_STAMP(self->off[i], 3);
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	EXPECT_NONLINEAR(self->map, self->len);
}

/* munmap of a part: the rest keeps its layout and stays nonlinear. */
TEST_F(nl, munmap_part_keeps_rest)
{
	ASSERT_EQ(0, munmap(self->map + 16 * self->page, 16 * self->page));
	EXPECT_EQ(0, nl_check_pages(self->map, 16, self->want, false));
	EXPECT_EQ(0, nl_check_pages(self->map + 32 * self->page, N - 32, self->want + 32, false));
	EXPECT_EQ(2, nl_count_vmas(self->map, self->len));
	EXPECT_TRUE(nl_has_vmflag(self->map, "nl"));
	EXPECT_TRUE(nl_has_vmflag(self->map + 32 * self->page, "nl"));
}

/* The Shmem of a big nonlinear mapping: grows when touched, back at munmap+close. */
TEST_F(nl, munmap_returns_shmem_to_baseline)
{
	const size_t n = 4096; /* 16 MiB */
	long base, during, after;
	size_t *off = calloc(n, sizeof(*off));
	char *m;
	int fd;

	ASSERT_NE(NULL, off);
	base = nl_meminfo_kb("Shmem");
	fd = nl_memfd("nl_munmap", n, true);
	ASSERT_LE(0, fd);
	m = mmap(NULL, n * self->page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	for (size_t i = 0; i < n; i++)
		off[i] = (i * 2053) % n;
	ASSERT_EQ(0, remap_each(m, off, n, 0));
	for (size_t i = 0; i < n; i += 512)
		EXPECT_EQ(NL_STAMP(off[i], 0), *(uint64_t *)(m + i * self->page));
	EXPECT_EQ(1, nl_count_vmas(m, n * self->page));
	during = nl_meminfo_kb("Shmem");
	EXPECT_LE(base + 15 * 1024, during) TH_LOG("Shmem %ld -> %ld kB", base, during);
	ASSERT_EQ(0, munmap(m, n * self->page));
	close(fd);
	after = nl_meminfo_kb("Shmem");
	EXPECT_GT(2048, labs(after - base)) TH_LOG("Shmem %ld kB before, %ld after", base, after);
	free(off);
}

/* A process exiting with a nonlinear mapping (present and file ptes) leaks nothing. */
TEST_F(nl, exit_returns_shmem_to_baseline)
{
	long base, after;
	int status;
	pid_t pid;

	base = nl_meminfo_kb("Shmem");
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		const size_t n = 4096;
		int fd = nl_memfd("nl_exit", n, true);
		char *m;

		if (fd < 0)
			_exit(1);
		m = mmap(NULL, n * nl_pagesize(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED)
			_exit(1);
		for (size_t i = 0; i < n; i++)
			if (nl_remap(m + i * nl_pagesize(), nl_pagesize(), 0, n - 1 - i, 0))
				_exit(2);
		madvise(m, n / 2 * nl_pagesize(), MADV_DONTNEED);
		_exit(nl_count_vmas(m, n * nl_pagesize()) == 1 ? 0 : 3);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("child: 1 setup, 2 remap failed, 3 not one VMA");
	after = nl_meminfo_kb("Shmem");
	EXPECT_GT(2048, labs(after - base)) TH_LOG("Shmem %ld kB before, %ld after", base, after);
}

/*
 * truncate: pages whose file offset is now beyond EOF raise SIGBUS,
 * present or not; the others keep their page.  Growing the file again
 * gives zero pages at those offsets (the layout is kept, not reverted to
 * linear: with the reversed layout, linear would show live data).
 */
TEST_F(nl, truncate_sigbus_beyond_eof)
{
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	/* Some remapped ptes present, some not. */
	ASSERT_EQ(0, madvise(self->map + 8 * self->page, 8 * self->page, MADV_DONTNEED));
	ASSERT_EQ(0, ftruncate(self->fd, N / 2 * self->page));
	/* Reverse layout: addresses < N/2 show offsets >= N/2, now beyond EOF. */
	for (size_t i = 0; i < N / 2; i++)
		self->want[i] = NL_WANT_SIGBUS;
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	EXPECT_EQ(SIGBUS, nl_probe(self->map + 20 * self->page, NULL, true, 7));
	EXPECT_EQ(BUS_ADRERR, nl_code);
	ASSERT_EQ(0, ftruncate(self->fd, 2 * N * self->page));
	for (size_t i = 0; i < N / 2; i++)
		self->want[i] = NL_WANT_ZERO;
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, true));
	EXPECT_NONLINEAR(self->map, self->len);
}

/*
 * fallocate(PUNCH_HOLE|KEEP_SIZE) over nonlinearly mapped pages: those
 * whose offset is in the hole read zero afterwards (present or not); the
 * rest keep their data.
 */
TEST_F(nl, punch_hole_reads_zero)
{
	size_t lo = 8, hi = 24; /* hole: file pages [8, 24) = addresses [40, 56) */

	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	ASSERT_EQ(0, madvise(self->map + 44 * self->page, 4 * self->page, MADV_DONTNEED));
	ASSERT_EQ(0, fallocate(self->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			       lo * self->page, (hi - lo) * self->page));
	for (size_t i = 0; i < N; i++)
		if (self->off[i] >= lo && self->off[i] < hi)
			self->want[i] = NL_WANT_ZERO;
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, true));
	/* A write into the hole lands at the remapped offset. */
	nl_stamp_mem(self->map + 45 * self->page, self->off[45], 4, false);
	EXPECT_EQ(NL_STAMP(self->off[45], 4), nl_file_word(self->fd, self->off[45]));
	EXPECT_NONLINEAR(self->map, self->len);
}

/* mprotect of the whole VMA keeps the layout and enforces the protection. */
TEST_F(nl, mprotect_whole_keeps_layout)
{
	ASSERT_EQ(0, mprotect(self->map, self->len, PROT_READ));
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	EXPECT_EQ(SIGSEGV, nl_probe(self->map + 3 * self->page, NULL, true, 1));
	EXPECT_EQ(SEGV_ACCERR, nl_code);
	ASSERT_EQ(0, madvise(self->map, self->len, MADV_DONTNEED));
	ASSERT_EQ(0, mprotect(self->map, self->len, PROT_READ | PROT_WRITE));
	EXPECT_EQ(0, nl_probe(self->map + 3 * self->page, NULL, true, NL_STAMP(self->off[3], 5)));
	nl_stamp_mem(self->map + 3 * self->page, self->off[3], 5, false);
	self->want[3] = NL_STAMP(self->off[3], 5);
	EXPECT_EQ(NL_STAMP(self->off[3], 5), nl_file_word(self->fd, self->off[3]));
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	EXPECT_NONLINEAR(self->map, self->len);
}

/* mprotect of a middle part splits the VMA in three; every part keeps its layout. */
TEST_F(nl, mprotect_part_splits_keeps_layout)
{
	char *mid = self->map + 16 * self->page;

	ASSERT_EQ(0, mprotect(mid, 16 * self->page, PROT_READ));
	EXPECT_EQ(3, nl_count_vmas(self->map, self->len));
	EXPECT_TRUE(nl_has_vmflag(self->map, "nl"));
	EXPECT_TRUE(nl_has_vmflag(mid, "nl"));
	EXPECT_TRUE(nl_has_vmflag(self->map + 32 * self->page, "nl"));
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	EXPECT_EQ(SIGSEGV, nl_probe(mid + 2 * self->page, NULL, true, 1));
	EXPECT_EQ(0, nl_probe(self->map + 40 * self->page, NULL, true, NL_STAMP(self->off[40], 6)));
	nl_stamp_mem(self->map + 40 * self->page, self->off[40], 6, false);
	self->want[40] = NL_STAMP(self->off[40], 6);
	EXPECT_EQ(NL_STAMP(self->off[40], 6), nl_file_word(self->fd, self->off[40]));
	/* Dropped and refaulted in each part. */
	ASSERT_EQ(0, madvise(self->map, self->len, MADV_DONTNEED));
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	/* Back to one protection: layout still right. */
	ASSERT_EQ(0, mprotect(self->map, self->len, PROT_READ | PROT_WRITE));
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
}

/* mremap moving the VMA moves its layout (present and file ptes). */
TEST_F(nl, mremap_move_keeps_layout)
{
	char *dst = mmap(NULL, self->len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *moved;

	ASSERT_NE(MAP_FAILED, dst);
	ASSERT_EQ(0, madvise(self->map, self->len / 4, MADV_DONTNEED));
	moved = mremap(self->map, self->len, self->len, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	ASSERT_EQ(dst, moved) TH_LOG("mremap: %s", strerror(errno));
	self->map = moved;
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	EXPECT_NONLINEAR(self->map, self->len);
}

/*
 * mremap growing the VMA: the old part keeps its layout, the new tail is
 * linear (its own offsets: N, N+1, ...).
 */
TEST_F(nl, mremap_expand_keeps_layout)
{
	uint64_t want[2 * N];
	char *grown;

	grown = mremap(self->map, self->len, 2 * self->len, MREMAP_MAYMOVE);
	ASSERT_NE(MAP_FAILED, grown) TH_LOG("mremap: %s", strerror(errno));
	self->map = grown;
	self->len = 2 * self->len;
	memcpy(want, self->want, sizeof(self->want));
	for (size_t i = N; i < 2 * N; i++)
		want[i] = NL_STAMP(i, 0);
	EXPECT_EQ(0, nl_check_pages(self->map, 2 * N, want, false));
	EXPECT_NONLINEAR(self->map, self->len);
	/* The tail can be remapped too. */
	ASSERT_EQ(0, nl_remap(self->map + (2 * N - 1) * self->page, self->page, 0, 0, 0));
	want[2 * N - 1] = NL_STAMP(0, 0);
	EXPECT_EQ(0, nl_check_pages(self->map, 2 * N, want, false));
}

/* mremap shrinking the VMA: what is left keeps its layout. */
TEST_F(nl, mremap_shrink_keeps_layout)
{
	char *shrunk = mremap(self->map, self->len, self->len / 2, 0);

	ASSERT_EQ(self->map, shrunk) TH_LOG("mremap: %s", strerror(errno));
	EXPECT_EQ(0, nl_check_pages(self->map, N / 2, self->want, false));
	EXPECT_EQ(0, nl_count_vmas(self->map + self->len / 2, self->len / 2));
	munmap(self->map, self->len / 2);
	self->map = MAP_FAILED;
	/* Fresh mapping, shrink after the ptes were dropped. */
	self->map = mmap(NULL, self->len, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, self->map);
	ASSERT_EQ(0, remap_each(self->map, self->off, N, MAP_NONBLOCK));
	shrunk = mremap(self->map, self->len, self->len / 4, 0);
	ASSERT_EQ(self->map, shrunk);
	self->len /= 4;
	EXPECT_EQ(0, nl_check_pages(self->map, N / 4, self->want, false));
	EXPECT_NONLINEAR(self->map, self->len);
}

/* mlock populates the nonlinear pages at their remapped offsets. */
TEST_F(nl, mlock_keeps_layout)
{
	ASSERT_EQ(0, madvise(self->map, self->len, MADV_DONTNEED));
	ASSERT_EQ(0, mlock(self->map, self->len)) TH_LOG("mlock: %s", strerror(errno));
	EXPECT_EQ(N, nl_count_present(self->map, N));
	EXPECT_EQ((long)(self->len / 1024), nl_smaps_kb(self->map, "Locked"));
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	/* Remapping inside a locked VMA populates and keeps it locked. */
	ASSERT_EQ(0, nl_remap(self->map, 4 * self->page, 0, N + 10, MAP_NONBLOCK));
	for (size_t i = 0; i < 4; i++)
		self->want[i] = NL_STAMP(N + 10 + i, 0);
	EXPECT_EQ(N, nl_count_present(self->map, N));
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	EXPECT_TRUE(nl_has_vmflag(self->map, "lo"));
	ASSERT_EQ(0, munlock(self->map, self->len));
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	EXPECT_NONLINEAR(self->map, self->len);
}

/* MAP_LOCKED: remaps populate even with MAP_NONBLOCK, at the right offsets. */
TEST_F(nl, map_locked_remap_populates)
{
	char *m = mmap(NULL, self->len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_LOCKED, self->fd, 0);

	ASSERT_NE(MAP_FAILED, m) TH_LOG("mmap(MAP_LOCKED): %s", strerror(errno));
	ASSERT_EQ(0, remap_each(m, self->off, N, MAP_NONBLOCK));
	EXPECT_EQ(N, nl_count_present(m, N));
	EXPECT_EQ(0, nl_check_pages(m, N, self->want, false));
	EXPECT_NONLINEAR(m, self->len);
	munmap(m, self->len);
}

/* get_user_pages: process_vm_readv reads the remapped contents (faulting file ptes). */
TEST_F(nl, process_vm_readv_reads_remapped)
{
	char *buf = malloc(self->len);
	struct iovec local = { buf, self->len }, remote = { self->map, self->len };
	int status;
	pid_t pid;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, madvise(self->map, self->len / 2, MADV_DONTNEED));
	/* From this process... */
	ASSERT_EQ((ssize_t)self->len, process_vm_readv(getpid(), &local, 1, &remote, 1, 0));
	EXPECT_EQ(0, nl_check_pages(buf, N, self->want, false));
	/* ...and from another one, reading ours. */
	ASSERT_EQ(0, madvise(self->map, self->len, MADV_DONTNEED));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		memset(buf, 0, self->len);
		if (process_vm_readv(getppid(), &local, 1, &remote, 1, 0) != (ssize_t)self->len)
			_exit(1);
		_exit(nl_check_pages(buf, N, self->want, false) ? 2 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child: status %#x (1 readv failed, 2 wrong pages)", status);
	/* process_vm_writev writes to the remapped file page. */
	*(uint64_t *)buf = NL_STAMP(self->off[7], 8);
	local.iov_len = 8;
	remote.iov_base = self->map + 7 * self->page;
	remote.iov_len = 8;
	EXPECT_EQ(8, process_vm_writev(getpid(), &local, 1, &remote, 1, 0));
	EXPECT_EQ(NL_STAMP(self->off[7], 8), nl_file_word(self->fd, self->off[7]));
	EXPECT_NONLINEAR(self->map, self->len);
	free(buf);
}

/* /proc/pid/mem reads and writes go to the remapped pages. */
TEST_F(nl, proc_pid_mem_reads_remapped)
{
	char *buf = malloc(self->len);
	uint64_t v = NL_STAMP(self->off[11], 9);
	int fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);

	ASSERT_NE(NULL, buf);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, madvise(self->map, self->len, MADV_DONTNEED));
	ASSERT_EQ((ssize_t)self->len, pread(fd, buf, self->len, (off_t)(uintptr_t)self->map));
	EXPECT_EQ(0, nl_check_pages(buf, N, self->want, false));
	ASSERT_EQ(0, madvise(self->map, self->len, MADV_DONTNEED));
	EXPECT_EQ(8, pwrite(fd, &v, 8, (off_t)(uintptr_t)(self->map + 11 * self->page)));
	EXPECT_EQ(v, nl_file_word(self->fd, self->off[11]));
	EXPECT_EQ(NL_STAMP(11, 0), nl_file_word(self->fd, 11));
	EXPECT_NONLINEAR(self->map, self->len);
	close(fd);
	free(buf);
}

/* vmsplice pins the pages with get_user_pages: the pipe carries the remapped pages. */
TEST_F(nl, vmsplice_gup_reads_remapped)
{
	const size_t n = 16; /* a default pipe holds 16 pages */
	struct iovec iov = { self->map, n * self->page };
	char *buf = malloc(n * self->page);
	size_t got = 0;
	int p[2];

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(0, madvise(self->map, n / 2 * self->page, MADV_DONTNEED));
	ASSERT_EQ((ssize_t)(n * self->page), vmsplice(p[1], &iov, 1, 0)) TH_LOG("vmsplice: %s", strerror(errno));
	while (got < n * self->page) {
		ssize_t r = read(p[0], buf + got, n * self->page - got);

		ASSERT_LT(0, r);
		got += r;
	}
	EXPECT_EQ(0, nl_check_pages(buf, n, self->want, false));
	EXPECT_NONLINEAR(self->map, self->len);
	close(p[0]);
	close(p[1]);
	free(buf);
}

/*
 * O_DIRECT: a direct read from a block device into a nonlinear page goes
 * (through get_user_pages) to the remapped file page.  Needs a readable
 * block device: the guest's swap disk (only read), or $NL_ODIRECT_DEV.
 */
TEST_F(nl, o_direct_read_into_remapped_page)
{
	const char *dev = getenv("NL_ODIRECT_DEV") ?: "/dev/vda";
	char *ref = aligned_alloc(self->page, self->page), *filepage = malloc(self->page);
	int fd = open(dev, O_RDONLY | O_DIRECT | O_CLOEXEC), ref_fd;
	char *dst = self->map + 6 * self->page;

	ASSERT_NE(NULL, ref);
	ASSERT_NE(NULL, filepage);
	if (fd < 0)
		SKIP(return, "no block device for O_DIRECT (%s: %s)", dev, strerror(errno));
	ref_fd = open(dev, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, ref_fd);
	ASSERT_EQ((ssize_t)self->page, pread(ref_fd, ref, self->page, 0));
	ASSERT_EQ(0, madvise(self->map, self->len, MADV_DONTNEED));
	ASSERT_EQ((ssize_t)self->page, pread(fd, dst, self->page, 0)) TH_LOG("O_DIRECT read: %s", strerror(errno));
	EXPECT_EQ(0, memcmp(dst, ref, self->page));
	ASSERT_EQ((ssize_t)self->page, pread(self->fd, filepage, self->page, self->off[6] * self->page));
	EXPECT_EQ(0, memcmp(filepage, ref, self->page)) TH_LOG("the data is not in file page %zu", self->off[6]);
	/* The linear page at that address's own offset is untouched. */
	EXPECT_EQ(NL_STAMP(6, 0), nl_file_word(self->fd, 6));
	EXPECT_NONLINEAR(self->map, self->len);
	close(fd);
	close(ref_fd);
	free(ref);
	free(filepage);
}

/* userfaultfd registration on a nonlinear VMA fails (any clear errno). */
TEST_F(nl, userfaultfd_register_refused)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	char *lin;
	int uffd = (int)syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (uffd < 0)
		SKIP(return, "userfaultfd: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api));
	/* A linear mapping of the same memfd registers fine... */
	lin = mmap(NULL, self->len, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, lin);
	reg.range.start = (uintptr_t)lin;
	reg.range.len = self->len;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg)) TH_LOG("linear: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_UNREGISTER, &reg.range));
	/* ...the nonlinear one does not. */
	reg.range.start = (uintptr_t)self->map;
	reg.range.len = self->len;
	errno = 0;
	EXPECT_EQ(-1, ioctl(uffd, UFFDIO_REGISTER, &reg));
	TH_LOG("UFFDIO_REGISTER on the nonlinear VMA: errno %d (%s)", errno, strerror(errno));
	EXPECT_NE(0, errno);
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	munmap(lin, self->len);
	close(uffd);
}

/*
 * A mapping already registered with userfaultfd is not made nonlinear: the
 * remap falls back to the emulation (new VMAs, no "nl"), pages still right
 * (docs/remap_file_pages.2.md).
 */
TEST_F(nl, userfaultfd_registered_uses_emulation)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	uint64_t want[8];
	char *lin;
	int uffd = (int)syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (uffd < 0)
		SKIP(return, "userfaultfd: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api));
	lin = nl_map_with_hole(8 * self->page, self->fd);
	ASSERT_NE(MAP_FAILED, lin);
	/* Populate first: a missing-page fault would wait for the handler. */
	for (size_t i = 0; i < 8; i++) {
		(void)*(volatile char *)(lin + i * self->page);
		want[i] = NL_STAMP(i, 0);
	}
	reg.range.start = (uintptr_t)lin;
	reg.range.len = 8 * self->page;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg)) TH_LOG("register: %s", strerror(errno));
	ASSERT_EQ(0, nl_remap(lin + 2 * self->page, self->page, 0, 100, 0)) TH_LOG("remap: %s", strerror(errno));
	want[2] = NL_STAMP(100, 0);
	EXPECT_EQ(0, nl_check_pages(lin, 8, want, false));
	EXPECT_FALSE(nl_has_vmflag(lin, "nl"));
	EXPECT_EQ(3, nl_count_vmas(lin, 8 * self->page));
	close(uffd);
	munmap(lin, 8 * self->page);
}

/*
 * Fault-around must not map neighbours linearly into a nonlinear VMA:
 * with every file page in the page cache, fault one remapped page, then
 * one linear page next to remapped ones, and check every page.
 */
TEST_F(nl, faultaround_maps_no_linear_neighbours)
{
	char *m = nl_map_with_hole(self->len, self->fd);

	ASSERT_NE(MAP_FAILED, m);
	for (size_t i = 0; i < N; i++)
		self->off[i] = i;
	/* Addresses 8..11 and 40 show far-away pages, the rest are linear. */
	for (size_t i = 8; i < 12; i++)
		self->off[i] = N + 20 + i;
	self->off[40] = N + 1;
	ASSERT_EQ(0, nl_remap(m + 8 * self->page, 4 * self->page, 0, N + 28, MAP_NONBLOCK));
	ASSERT_EQ(0, nl_remap(m + 40 * self->page, self->page, 0, N + 1, MAP_NONBLOCK));
	nl_want_from(self->want, self->off, N);
	/* A nonlinear fault first... */
	EXPECT_EQ(NL_STAMP(N + 29, 0), *(volatile uint64_t *)(m + 9 * self->page));
	EXPECT_EQ(0, nl_check_pages(m, N, self->want, false));
	/* ...then, after dropping everything, a linear fault next to remapped pages. */
	ASSERT_EQ(0, madvise(m, self->len, MADV_DONTNEED));
	EXPECT_EQ(NL_STAMP(39, 0), *(volatile uint64_t *)(m + 39 * self->page));
	EXPECT_EQ(NL_STAMP(7, 0), *(volatile uint64_t *)(m + 7 * self->page));
	EXPECT_EQ(0, nl_check_pages(m, N, self->want, false));
	EXPECT_NONLINEAR(m, self->len);
	munmap(m, self->len);
}

/* THP: a nonlinear VMA on a huge=always tmpfs is never PMD-mapped. */
TEST_F_TIMEOUT(nl, thp_never_pmd_mapped, 60)
{
	const size_t huge = 2 << 20, len = 2 * huge, n = len / self->page;
	char dir[] = "/tmp/nl_thp.XXXXXX", path[64];
	uint64_t *want = calloc(n, sizeof(*want));
	char *r, *m;
	long pmd;
	int fd;

	ASSERT_NE(NULL, want);
	if (!mkdtemp(dir))
		SKIP(return, "mkdtemp: %s", strerror(errno));
	/* A private mount namespace: the mount goes away with this process. */
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("nl_thp", dir, "tmpfs", 0, "huge=always,size=16m")) {
		rmdir(dir);
		SKIP(return, "cannot mount a huge=always tmpfs: %s", strerror(errno));
	}
	snprintf(path, sizeof(path), "%s/f", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, len));
	r = mmap(NULL, len + huge, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, r);
	m = (char *)(((uintptr_t)r + huge - 1) & ~(uintptr_t)(huge - 1));
	ASSERT_EQ(m, mmap(m, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0));
	for (size_t i = 0; i < n; i++)
		nl_stamp_mem(m + i * self->page, i, 0, false);
	pmd = nl_smaps_kb(m, "FilePmdMapped");
	if (pmd <= 0)
		pmd = nl_smaps_kb(m, "ShmemPmdMapped");
	if (pmd <= 0) {
		umount2(dir, MNT_DETACH);
		rmdir(dir);
		SKIP(return, "no PMD-mapped shmem THP here (THP off?)");
	}
	/* Swap two pages in the first huge page and two across the halves. */
	ASSERT_EQ(0, nl_remap(m + 1 * self->page, self->page, 0, 2, 0));
	ASSERT_EQ(0, nl_remap(m + 2 * self->page, self->page, 0, 1, 0));
	ASSERT_EQ(0, nl_remap(m + 600 * self->page, self->page, 0, n - 5, 0));
	for (size_t i = 0; i < n; i++)
		want[i] = NL_STAMP(i, 0);
	want[1] = NL_STAMP(2, 0);
	want[2] = NL_STAMP(1, 0);
	want[600] = NL_STAMP(n - 5, 0);
	EXPECT_EQ(0, nl_check_pages(m, n, want, false));
	EXPECT_EQ(0, nl_smaps_kb(m, "FilePmdMapped") > 0 ? 1 : 0) TH_LOG("nonlinear VMA PMD-mapped");
	EXPECT_EQ(0, nl_smaps_kb(m, "ShmemPmdMapped") > 0 ? 1 : 0) TH_LOG("nonlinear VMA PMD-mapped");
	/* Neither refaults nor MADV_COLLAPSE may PMD-map it. */
	madvise(m, len, MADV_DONTNEED);
	madvise(m, len, MADV_COLLAPSE);
	EXPECT_EQ(0, nl_check_pages(m, n, want, false));
	EXPECT_EQ(0, nl_smaps_kb(m, "FilePmdMapped") > 0 ? 1 : 0) TH_LOG("nonlinear VMA PMD-mapped");
	EXPECT_EQ(0, nl_smaps_kb(m, "ShmemPmdMapped") > 0 ? 1 : 0) TH_LOG("nonlinear VMA PMD-mapped");
	EXPECT_NONLINEAR(m, len);
	munmap(r, len + huge);
	close(fd);
	umount2(dir, MNT_DETACH);
	rmdir(dir);
	free(want);
}

/*
 * Migration (compaction) of nonlinearly mapped pages: rmap must find and
 * update the nonlinear ptes.  After /proc/sys/vm/compact_memory every page
 * is still right, each address still maps the page cache's page (same PFN
 * as a fresh linear mapping of the memfd) and writes reach the file.  How
 * many of our pages compaction moved is logged: in the idle guest it moves
 * none (compaction leaves whole free blocks alone, so it has few targets),
 * on stock and patched alike; the test then checks integrity only.
 */
TEST_F_TIMEOUT(nl, compaction_keeps_layout, 120)
{
	const size_t n = 4096;
	uint64_t *want = calloc(n, sizeof(*want)), *pfn0 = calloc(n, sizeof(*pfn0));
	size_t *off = calloc(n, sizeof(*off)), moved = 0, mismatched = 0;
	long long mig0, mig1, scan0, scan1;
	char *m, *lin;
	int fd, cfd;

	ASSERT_TRUE(want && pfn0 && off);
	if (!getenv("MEMDBG_GUEST"))
		SKIP(return, "system-wide compaction: only in a memdbg guest (MEMDBG_GUEST=1)");
	cfd = open("/proc/sys/vm/compact_memory", O_WRONLY | O_CLOEXEC);
	if (cfd < 0)
		SKIP(return, "cannot trigger compaction: %s", strerror(errno));
	fd = nl_memfd("nl_compact", n, true);
	ASSERT_LE(0, fd);
	m = nl_map_with_hole(n * self->page, fd);
	ASSERT_NE(MAP_FAILED, m);
	for (size_t i = 0; i < n; i++)
		off[i] = (i * 1031) % n;
	ASSERT_EQ(0, remap_each(m, off, n, 0));
	nl_want_from(want, off, n);
	EXPECT_EQ(0, nl_check_pages(m, n, want, false));
	for (size_t i = 0; i < n; i++)
		pfn0[i] = nl_pagemap(m + i * self->page) & PM_PFN_MASK;
	mig0 = nl_vmstat("pgmigrate_success");
	scan0 = nl_vmstat("compact_migrate_scanned");
	ASSERT_EQ(2, write(cfd, "1\n", 2));
	close(cfd);
	mig1 = nl_vmstat("pgmigrate_success");
	scan1 = nl_vmstat("compact_migrate_scanned");
	EXPECT_EQ(0, nl_check_pages(m, n, want, true));
	lin = mmap(NULL, n * self->page, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
	ASSERT_NE(MAP_FAILED, lin);
	for (size_t i = 0; i < n; i++) {
		uint64_t p = nl_pagemap(m + i * self->page) & PM_PFN_MASK;
		uint64_t l = nl_pagemap(lin + off[i] * self->page) & PM_PFN_MASK;

		moved += p != pfn0[i];
		mismatched += p != l;
	}
	TH_LOG("compaction moved %zu of %zu nonlinearly mapped pages%s (system: %lld pages migrated, %lld scanned; ours at PFN %#" PRIx64 "..)",
	       moved, n, pfn0[0] ? "" : " (PFNs hidden: not root?)", mig1 - mig0, scan1 - scan0, pfn0[0]);
	EXPECT_EQ(0, (long)mismatched) TH_LOG("addresses mapping a page that is not the file's");
	for (size_t i = 0; i < n; i += 2) {
		nl_stamp_mem(m + i * self->page, off[i], 1, false);
		EXPECT_EQ(NL_STAMP(off[i], 1), nl_file_word(fd, off[i]));
	}
	EXPECT_NONLINEAR(m, n * self->page);
	munmap(lin, n * self->page);
	munmap(m, n * self->page);
	close(fd);
	free(want);
	free(pfn0);
	free(off);
}

/*
 * Other file systems keep today's emulation: on ramfs (not shmem) a remap
 * still works, through new VMAs, without "nl".
 */
TEST(non_shmem_file_keeps_emulation)
{
	size_t page = nl_pagesize();
	char dir[] = "/tmp/nl_ramfs.XXXXXX", path[64];
	uint64_t want[4];
	struct statfs sfs;
	char *m;
	int fd;

	ASSERT_NE(NULL, mkdtemp(dir));
	/* A private mount namespace (in a user namespace if unprivileged). */
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("nl_ramfs", dir, "ramfs", 0, NULL)) {
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) || mount("nl_ramfs", dir, "ramfs", 0, NULL)) {
			rmdir(dir);
			SKIP(return, "cannot mount ramfs: %s", strerror(errno));
		}
	}
	snprintf(path, sizeof(path), "%s/f", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fstatfs(fd, &sfs));
	ASSERT_EQ(RAMFS_MAGIC, (unsigned long)sfs.f_type);
	ASSERT_EQ(0, ftruncate(fd, 4 * page));
	ASSERT_EQ(0, nl_stamp_fd(fd, 0, 4, 0, false));
	m = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	ASSERT_EQ(0, nl_remap(m, page, 0, 3, 0));
	ASSERT_EQ(0, nl_remap(m + 3 * page, page, 0, 0, 0));
	want[0] = NL_STAMP(3, 0);
	want[1] = NL_STAMP(1, 0);
	want[2] = NL_STAMP(2, 0);
	want[3] = NL_STAMP(0, 0);
	EXPECT_EQ(0, nl_check_pages(m, 4, want, false));
	EXPECT_EQ(3, nl_count_vmas(m, 4 * page)) TH_LOG("ramfs should keep the VMA-per-call emulation");
	EXPECT_FALSE(nl_has_vmflag(m, "nl"));
	munmap(m, 4 * page);
	close(fd);
	umount2(dir, MNT_DETACH);
	rmdir(dir);
}

/*
 * 100,000 single-page remaps leave one VMA (the stock emulation stops
 * with ENOMEM near vm.max_map_count = 65530).  The addresses show a few
 * thousand stamped file pages, each at many places; every page is checked.
 */
FIXTURE(big) {};
FIXTURE_SETUP(big) {}
FIXTURE_TEARDOWN(big) {}

TEST_F_TIMEOUT(big, many_remaps_one_vma, 240)
{
	const size_t n = 100000, distinct = 4096, page = nl_pagesize();
	uint64_t *want = calloc(n, sizeof(*want));
	size_t i, done = 0;
	double t0, t1;
	int fd, err = 0;
	char *m;

	ASSERT_NE(NULL, want);
	fd = nl_memfd("nl_many", n, false);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, nl_stamp_fd(fd, 0, distinct, 0, false));
	m = nl_map_with_hole(n * page, fd);
	ASSERT_NE(MAP_FAILED, m);
	t0 = nl_now();
	for (i = n; i-- > 0;) {
		if (nl_remap(m + i * page, page, 0, (n - 1 - i) % distinct, 0)) {
			err = errno;
			break;
		}
		done++;
	}
	t1 = nl_now();
	TH_LOG("%zu of %zu remaps done in %.2f s (%.0f ns each), %ld VMAs%s%s", done, n, t1 - t0,
	       (t1 - t0) * 1e9 / (done ?: 1), nl_count_vmas(m, n * page), err ? ", stopped by " : "",
	       err ? strerror(err) : "");
	EXPECT_EQ(n, done);
	EXPECT_EQ(1, nl_count_vmas(m, n * page));
	EXPECT_TRUE(nl_has_vmflag(m, "nl"));
	for (i = 0; i < n; i++)
		want[i] = i >= n - done ? NL_STAMP((n - 1 - i) % distinct, 0)
		       : i < distinct ? NL_STAMP(i, 0) : NL_WANT_ZERO;
	EXPECT_EQ(0, nl_check_pages(m, n, want, false));
	munmap(m, n * page);
	close(fd);
	free(want);
}

NL_HARNESS_MAIN
