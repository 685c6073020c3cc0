// SPDX-License-Identifier: GPL-2.0
/*
 * Per-page protections of nonlinear shmem mappings:
 * remap_file_pages(start, size, PROT_NONE, pgoff, MAP_CHGPROT) makes guard
 * pages inside one VMA.  A guard raises SIGSEGV (SEGV_ACCERR, exact
 * si_addr) on any access, costs no page, survives fork, mprotect,
 * MADV_DONTNEED and MADV_PAGEOUT of its neighbours, and a remap with the
 * VMA's protection (or without MAP_CHGPROT) brings the data back.
 *
 * Not run on the stock kernel (tests/kernel/run.sh): it has no MAP_CHGPROT.
 */
#include <sys/uio.h>
#include <sys/wait.h>

#include "nonlinear_util.h" /* includes kselftest_harness.h */

#ifndef MAP_CHGPROT
#define MAP_CHGPROT 0x400000
#endif

/* Make pages [first, first + n) of @map guards naming file page @pgoff on. */
static int guard(char *map, size_t first, size_t n, size_t pgoff, int flags)
{
	return nl_remap(map + first * nl_pagesize(), n * nl_pagesize(), PROT_NONE, pgoff, flags | MAP_CHGPROT);
}

/* Read (or write) the word at @p: 0 if fine, else 1 unless SIGSEGV/SEGV_ACCERR at @p exactly (then 2). */
static int probe_guard(void *p, bool write)
{
	int sig = nl_probe(p, NULL, write, 1);

	if (!sig)
		return 0;
	if (sig != SIGSEGV || nl_code != SEGV_ACCERR || nl_fault_addr != p) {
		fprintf(stderr, "#   %p: signal %d code %d addr %p\n", p, sig, (int)nl_code, nl_fault_addr);
		return 1;
	}
	return 2;
}

#define NP 16

FIXTURE(chg)
{
	int fd;
	char *map;
	size_t page;
	uint64_t want[NP];
};

FIXTURE_SETUP(chg)
{
	self->page = nl_pagesize();
	self->fd = nl_memfd("chgprot", NP, true);
	ASSERT_LE(0, self->fd);
	self->map = nl_map_with_hole(NP * self->page, self->fd);
	ASSERT_NE(MAP_FAILED, self->map);
	for (size_t i = 0; i < NP; i++)
		self->want[i] = NL_STAMP(i, 0);
}

FIXTURE_TEARDOWN(chg)
{
	if (self->map != MAP_FAILED)
		munmap(self->map, NP * self->page);
	if (self->fd >= 0)
		close(self->fd);
}

/* Check every page except guards (want == NL_WANT_SIGBUS here means a guard). */
static long check_with_guards(const char *map, const uint64_t *want, size_t n)
{
	long bad = 0;

	for (size_t i = 0; i < n; i++) {
		void *p = (char *)map + i * nl_pagesize() + 8 * (i % 7);

		if (want[i] == NL_WANT_SIGBUS) {
			if (probe_guard(p, false) != 2 || probe_guard(p, true) != 2) {
				fprintf(stderr, "#   page %zu: not a guard\n", i);
				bad++;
			}
		} else {
			bad += nl_check_pages(map + i * nl_pagesize(), 1, &want[i], true) != 0;
		}
	}
	return bad;
}

TEST_F(chg, guard_in_the_middle_segv_accerr)
{
	char *g = self->map + 5 * self->page;

	/* Touch everything first: the guard replaces a present page. */
	ASSERT_EQ(0, nl_check_pages(self->map, NP, self->want, true));
	ASSERT_EQ(0, guard(self->map, 5, 1, 5, 0));
	self->want[5] = NL_WANT_SIGBUS;
	EXPECT_EQ(2, probe_guard(g, false));
	EXPECT_EQ(2, probe_guard(g + 123 * 8, true));
	EXPECT_EQ(2, probe_guard(g + self->page - 8, false));
	EXPECT_EQ(0, check_with_guards(self->map, self->want, NP));
	EXPECT_NONLINEAR(self->map, NP * self->page);
	/* The file page itself is untouched. */
	EXPECT_EQ(NL_STAMP(5, 0), nl_file_word(self->fd, 5));
	EXPECT_EQ(0, !!(nl_pagemap(g) & PM_PRESENT));

	/* Nonlinear guard naming another page, never faulted. */
	ASSERT_EQ(0, guard(self->map, 9, 2, 3, MAP_NONBLOCK));
	self->want[9] = self->want[10] = NL_WANT_SIGBUS;
	EXPECT_EQ(0, check_with_guards(self->map, self->want, NP));
}

TEST_F(chg, removing_the_guard_restores_data)
{
	/* Write through the mapping, guard the page, bring it back. */
	nl_stamp_mem(self->map + 2 * self->page, 2, 7, true);
	self->want[2] = NL_STAMP(2, 7);
	ASSERT_EQ(0, guard(self->map, 2, 1, 2, 0));
	EXPECT_EQ(NL_STAMP(2, 7), nl_file_word(self->fd, 2));
	ASSERT_EQ(0, nl_remap(self->map + 2 * self->page, self->page, 0, 2, 0));
	EXPECT_EQ(0, nl_check_pages(self->map, NP, self->want, true));

	/* MAP_CHGPROT with the VMA's protection restores as well. */
	ASSERT_EQ(0, guard(self->map, 3, 4, 3, MAP_NONBLOCK));
	ASSERT_EQ(0, nl_remap(self->map + 3 * self->page, 4 * self->page, PROT_READ | PROT_WRITE, 3,
			      MAP_CHGPROT));
	EXPECT_EQ(0, nl_check_pages(self->map, NP, self->want, true));

	/* ... also at a nonlinear offset. */
	ASSERT_EQ(0, guard(self->map, 8, 1, 8, 0));
	ASSERT_EQ(0, nl_remap(self->map + 8 * self->page, self->page, PROT_READ | PROT_WRITE, 12,
			      MAP_CHGPROT | MAP_NONBLOCK));
	self->want[8] = NL_STAMP(12, 0);
	EXPECT_EQ(0, nl_check_pages(self->map, NP, self->want, true));
	EXPECT_NONLINEAR(self->map, NP * self->page);
}

TEST(guards_cost_no_page)
{
	size_t page = nl_pagesize(), n = 2000;
	int fd = nl_memfd("chgprot_cost", n, false);
	long shmem0, shmem1;
	struct stat st;
	char *map;

	ASSERT_LE(0, fd);
	map = mmap(NULL, n * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	shmem0 = nl_meminfo_kb("Shmem");
	/* 500 guards with MAP_NONBLOCK, 500 without (populating). */
	for (size_t i = 0; i < 1000; i++)
		ASSERT_EQ(0, guard(map, 2 * i, 1, (i * 7) % n, i < 500 ? MAP_NONBLOCK : 0));
	shmem1 = nl_meminfo_kb("Shmem");
	ASSERT_EQ(0, fstat(fd, &st));
	EXPECT_EQ(0, st.st_blocks);
	EXPECT_EQ(0, nl_smaps_kb(map, "Rss"));
	EXPECT_GT(1000L * (long)page / 1024 / 2, shmem1 - shmem0)
		TH_LOG("Shmem grew by %ld kB", shmem1 - shmem0);
	EXPECT_EQ(0, nl_count_present(map, n));
	EXPECT_EQ(2, probe_guard(map + 2 * 999 * page, false));
	ASSERT_EQ(0, fstat(fd, &st));
	EXPECT_EQ(0, st.st_blocks);
	EXPECT_NONLINEAR(map, n * page);
	munmap(map, n * page);
	close(fd);
}

TEST(hundred_thousand_guards_one_vma)
{
	size_t page = nl_pagesize(), n = 200000;
	int fd = nl_memfd("chgprot_many", n, false);
	struct stat st;
	char *map;

	ASSERT_LE(0, fd);
	map = nl_map_with_hole(n * page, fd);
	ASSERT_NE(MAP_FAILED, map);
	for (size_t i = 0; i < n / 2; i++)
		ASSERT_EQ(0, guard(map, 2 * i + 1, 1, 2 * i + 1, MAP_NONBLOCK));
	EXPECT_NONLINEAR(map, n * page);
	ASSERT_EQ(0, fstat(fd, &st));
	EXPECT_EQ(0, st.st_blocks);
	for (size_t i = 0; i < n; i += 9973) {
		EXPECT_EQ(i & 1 ? 2 : 0, probe_guard(map + i * page, i & 2));
	}
	munmap(map, n * page);
	close(fd);
}

TEST_F(chg, fork_keeps_guards)
{
	pid_t pid;
	int status;

	ASSERT_EQ(0, guard(self->map, 1, 1, 1, 0));
	ASSERT_EQ(0, guard(self->map, 7, 1, 2, MAP_NONBLOCK));
	self->want[1] = self->want[7] = NL_WANT_SIGBUS;
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(check_with_guards(self->map, self->want, NP) ? 1 : 0);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(0, check_with_guards(self->map, self->want, NP));
}

TEST_F(chg, gup_fails_on_guards)
{
	char buf[64];
	struct iovec local = { buf, sizeof(buf) };
	struct iovec remote = { self->map + 4 * self->page + 64, sizeof(buf) };
	int memfd;

	ASSERT_EQ(0, guard(self->map, 4, 1, 4, 0));
	errno = 0;
	EXPECT_EQ(-1, process_vm_readv(getpid(), &local, 1, &remote, 1, 0));
	EXPECT_EQ(EFAULT, errno);
	memfd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, memfd);
	errno = 0;
	EXPECT_EQ(-1, pread(memfd, buf, sizeof(buf), (off_t)(uintptr_t)remote.iov_base));
	EXPECT_EQ(EIO, errno);
	/* Neighbours still read through GUP. */
	remote.iov_base = self->map + 3 * self->page;
	EXPECT_EQ((ssize_t)sizeof(buf), process_vm_readv(getpid(), &local, 1, &remote, 1, 0));
	EXPECT_EQ(NL_STAMP(3, 0), *(uint64_t *)buf);
	close(memfd);
}

TEST_F(chg, einval_and_eacces)
{
	char path[64];
	int rofd, rwfd;
	char *ro;

	/* A non-zero prot without MAP_CHGPROT stays EINVAL. */
	errno = 0;
	EXPECT_EQ(-1, nl_remap(self->map, self->page, PROT_READ, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(-1, nl_remap(self->map, self->page, PROT_NONE | 0x10, 0, MAP_CHGPROT));
	EXPECT_EQ(EINVAL, errno);
	/* A protection other than PROT_NONE and the VMA's: EINVAL for now. */
	errno = 0;
	EXPECT_EQ(-1, nl_remap(self->map, self->page, PROT_READ, 0, MAP_CHGPROT));
	EXPECT_EQ(EINVAL, errno);

	/* PROT_WRITE on a file opened O_RDONLY: EACCES. */
	snprintf(path, sizeof(path), "/dev/shm/chgprot_ro.%d", getpid());
	rwfd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	ASSERT_LE(0, rwfd);
	unlink(path);
	ASSERT_EQ(0, ftruncate(rwfd, 4 * self->page));
	ASSERT_EQ(0, nl_stamp_fd(rwfd, 0, 4, 0, true));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", rwfd);
	rofd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, rofd);
	ro = mmap(NULL, 4 * self->page, PROT_READ, MAP_SHARED, rofd, 0);
	ASSERT_NE(MAP_FAILED, ro);
	errno = 0;
	EXPECT_EQ(-1, nl_remap(ro, self->page, PROT_READ | PROT_WRITE, 1, MAP_CHGPROT));
	EXPECT_EQ(EACCES, errno);
	errno = 0;
	EXPECT_EQ(-1, nl_remap(ro, self->page, PROT_WRITE, 1, MAP_CHGPROT));
	EXPECT_EQ(EACCES, errno);
	/*
	 * Within VM_MAY*, such a mapping (no VM_SHARED) cannot be nonlinear:
	 * EINVAL, as remap_file_pages() always gave for it.
	 */
	errno = 0;
	EXPECT_EQ(-1, nl_remap(ro + self->page, self->page, PROT_NONE, 1, MAP_CHGPROT));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NL_STAMP(1, 0), *(volatile uint64_t *)(ro + self->page));
	munmap(ro, 4 * self->page);
	close(rofd);
	close(rwfd);
}

TEST_F(chg, neighbours_paged_out_or_dropped)
{
	for (size_t i = 1; i < NP; i += 2) {
		ASSERT_EQ(0, guard(self->map, i, 1, i, i % 4 == 1 ? MAP_NONBLOCK : 0));
		self->want[i] = NL_WANT_SIGBUS;
	}
	for (size_t i = 0; i < NP; i += 2) /* the even pages are read back reversed */
		ASSERT_EQ(0, nl_remap(self->map + i * self->page, self->page, 0, NP - 2 - i, 0));
	for (size_t i = 0; i < NP; i += 2)
		self->want[i] = NL_STAMP(NP - 2 - i, 0);
	ASSERT_EQ(0, check_with_guards(self->map, self->want, NP));
	EXPECT_EQ(0, madvise(self->map, NP * self->page, MADV_PAGEOUT));
	EXPECT_EQ(0, check_with_guards(self->map, self->want, NP));
	EXPECT_EQ(0, madvise(self->map, NP * self->page, MADV_DONTNEED));
	EXPECT_EQ(0, check_with_guards(self->map, self->want, NP));
	/* mprotect of (part of) the VMA: guards stay guards. */
	ASSERT_EQ(0, mprotect(self->map, NP / 2 * self->page, PROT_READ));
	ASSERT_EQ(0, mprotect(self->map, NP / 2 * self->page, PROT_READ | PROT_WRITE));
	EXPECT_EQ(0, check_with_guards(self->map, self->want, NP));
	/* munmap with guards in place. */
	EXPECT_EQ(0, munmap(self->map, NP * self->page));
	self->map = MAP_FAILED;
}

/* mlock() steps over guards and populates the pages around them. */
TEST_F(chg, mlock_skips_guards)
{
	ASSERT_EQ(0, guard(self->map, 3, 1, 3, MAP_NONBLOCK));
	ASSERT_EQ(0, guard(self->map, 9, 2, 9, MAP_NONBLOCK));
	self->want[3] = self->want[9] = self->want[10] = NL_WANT_SIGBUS;
	ASSERT_EQ(0, madvise(self->map, NP * self->page, MADV_DONTNEED));
	ASSERT_EQ(0, nl_count_present(self->map, NP));
	ASSERT_EQ(0, mlock(self->map, NP * self->page)) TH_LOG("mlock: %s", strerror(errno));
	EXPECT_EQ(NP - 3, nl_count_present(self->map, NP));
	EXPECT_EQ(0, check_with_guards(self->map, self->want, NP));
	ASSERT_EQ(0, munlock(self->map, NP * self->page));
	EXPECT_EQ(0, check_with_guards(self->map, self->want, NP));
}

NL_HARNESS_MAIN
