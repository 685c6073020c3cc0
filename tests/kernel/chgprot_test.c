// SPDX-License-Identifier: GPL-2.0
/*
 * Per-page protections of nonlinear shmem mappings:
 * remap_file_pages(start, size, PROT_NONE, pgoff, MAP_CHGPROT) makes guard
 * pages inside one VMA.  A guard raises SIGSEGV (SEGV_ACCERR, exact
 * si_addr) on any access, costs no page, survives fork, mprotect,
 * MADV_DONTNEED and MADV_PAGEOUT of its neighbours, and a remap with the
 * VMA's protection (or without MAP_CHGPROT) brings the data back.
 *
 * With the VMA's protection minus PROT_WRITE (PROT_READ in a RW VMA,
 * PROT_READ|PROT_EXEC in an RWX one) the pages are read-only: they read
 * their data and a write raises SIGSEGV/SEGV_ACCERR; GUP writes fail
 * (process_vm_writev EFAULT, /proc/pid/mem and ptrace POKEDATA EIO).  The
 * page keeps the protection across MADV_PAGEOUT, MADV_DONTNEED, fork,
 * mremap, mlock, migration and mprotect() of the VMA (the page's
 * protection is the VMA's minus the access withheld from it).
 *
 * Without PROT_EXEC in an RWX VMA (PROT_READ|PROT_WRITE, or PROT_READ for
 * read-only too) the pages do not run: executing them raises
 * SIGSEGV/SEGV_ACCERR, kept across the same paths.  Withholding read from
 * a page that stays accessible is EINVAL, as is a protection beyond the
 * VMA's current one.
 *
 * Not run on the stock kernel (tests/kernel/run.sh): it has no MAP_CHGPROT.
 */
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "nonlinear_util.h" /* includes kselftest_harness.h */

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
	/* More than the VMA's protection (within VM_MAY*): EINVAL. */
	errno = 0;
	EXPECT_EQ(-1, nl_remap(self->map, self->page, PROT_READ | PROT_WRITE | PROT_EXEC, 0, MAP_CHGPROT));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(-1, nl_remap(self->map, self->page, PROT_READ | PROT_EXEC, 0, MAP_CHGPROT));
	EXPECT_EQ(EINVAL, errno);
	/* Withholding read from a page that stays accessible: EINVAL. */
	errno = 0;
	EXPECT_EQ(-1, nl_remap(self->map, self->page, PROT_WRITE, 0, MAP_CHGPROT));
	EXPECT_EQ(EINVAL, errno);
	/* The page is untouched by the failed calls. */
	EXPECT_EQ(0, nl_check_pages(self->map, NP, self->want, true));
	EXPECT_EQ(0, nl_probe(self->map, NULL, true, self->want[0]));

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

/* --- read-only pages ----------------------------------------------------------- */

/* Make pages [first, first + n) of @map read-only, naming file page @pgoff on. */
static int rdonly(char *map, size_t first, size_t n, size_t pgoff, int flags)
{
	return nl_remap(map + first * nl_pagesize(), n * nl_pagesize(), PROT_READ, pgoff, flags | MAP_CHGPROT);
}

/* Give pages [first, first + n) the VMA's protection (RW) again. */
static int rdwrite(char *map, size_t first, size_t n, size_t pgoff, int flags)
{
	return nl_remap(map + first * nl_pagesize(), n * nl_pagesize(), PROT_READ | PROT_WRITE, pgoff,
			flags | MAP_CHGPROT);
}

/*
 * Check page @i of @map: its data is @want (every word) and a write at
 * some word faults with SIGSEGV/SEGV_ACCERR at that address when @ro, or
 * succeeds (writing the value already there) when not.  0 if so.
 */
static int check_page(char *map, size_t i, uint64_t want, bool ro)
{
	uint64_t *p = (uint64_t *)(map + i * nl_pagesize()) + (i * 37) % (nl_pagesize() / 8);
	int sig;

	if (nl_check_pages(map + i * nl_pagesize(), 1, &want, true))
		return 1;
	sig = nl_probe(p, NULL, true, want);
	if (ro && (sig != SIGSEGV || nl_code != SEGV_ACCERR || nl_fault_addr != (void *)p)) {
		fprintf(stderr, "#   page %zu: write: signal %d code %d addr %p (want SEGV_ACCERR at %p)\n", i,
			sig, (int)nl_code, nl_fault_addr, (void *)p);
		return 1;
	}
	if (!ro && sig) {
		fprintf(stderr, "#   page %zu: write raised signal %d code %d\n", i, sig, (int)nl_code);
		return 1;
	}
	/* Still the same data after the write (or the failed write). */
	return nl_check_pages(map + i * nl_pagesize(), 1, &want, true) != 0;
}

/* check_page() for pages [0, n), read-only where @ro[i]; returns the number of bad pages. */
static long check_ro(char *map, const uint64_t *want, const bool *ro, size_t n)
{
	long bad = 0;

	for (size_t i = 0; i < n; i++) {
		if (check_page(map, i, want[i], ro[i])) {
			fprintf(stderr, "#   page %zu (%s) wrong\n", i, ro[i] ? "read-only" : "writable");
			bad++;
		}
	}
	return bad;
}

#define PM_UFFD_WP_BIT (1ULL << 57)

TEST_F(chg, readonly_page_reads_and_faults_on_write)
{
	bool ro[NP] = { false };
	uint64_t *w;

	/* A present page made read-only in place, populated again. */
	ASSERT_EQ(0, nl_check_pages(self->map, NP, self->want, true));
	ASSERT_EQ(0, rdonly(self->map, 5, 1, 5, 0));
	ro[5] = true;
	EXPECT_EQ(0, check_ro(self->map, self->want, ro, NP));
	EXPECT_NE(0, !!(nl_pagemap(self->map + 5 * self->page) & PM_PRESENT));
	/* The marker of the read-only pte is not userfaultfd's. */
	EXPECT_EQ(0, !!(nl_pagemap(self->map + 5 * self->page) & PM_UFFD_WP_BIT));
	EXPECT_EQ(NL_STAMP(5, 0), nl_file_word(self->fd, 5));
	/* A write at the last byte faults there. */
	w = (uint64_t *)(self->map + 6 * self->page) - 1;
	EXPECT_EQ(SIGSEGV, nl_probe(w, NULL, true, 1));
	EXPECT_EQ(SEGV_ACCERR, nl_code);
	EXPECT_EQ((void *)w, nl_fault_addr);

	/* Nonlinear read-only pages, not populated. */
	ASSERT_EQ(0, rdonly(self->map, 9, 2, 3, MAP_NONBLOCK));
	EXPECT_EQ(0, nl_count_present(self->map + 9 * self->page, 2));
	self->want[9] = NL_STAMP(3, 0);
	self->want[10] = NL_STAMP(4, 0);
	ro[9] = ro[10] = true;
	EXPECT_EQ(0, check_ro(self->map, self->want, ro, NP));
	/* A write to a not yet present read-only page faults too. */
	ASSERT_EQ(0, madvise(self->map + 9 * self->page, self->page, MADV_DONTNEED));
	EXPECT_EQ(0, check_page(self->map, 9, self->want[9], true));
	EXPECT_NONLINEAR(self->map, NP * self->page);
	EXPECT_EQ(1, nl_count_vmas(self->map, NP * self->page));

	/* Back to the VMA's protection: writes work and reach the file. */
	ASSERT_EQ(0, rdwrite(self->map, 5, 1, 5, 0));
	ro[5] = false;
	EXPECT_EQ(0, check_ro(self->map, self->want, ro, NP));
	nl_stamp_mem(self->map + 5 * self->page, 5, 3, true);
	self->want[5] = NL_STAMP(5, 3);
	EXPECT_EQ(NL_STAMP(5, 3), nl_file_word(self->fd, 5));
	/* ... or a plain remap (no MAP_CHGPROT). */
	ASSERT_EQ(0, nl_remap(self->map + 9 * self->page, 2 * self->page, 0, 3, 0));
	ro[9] = ro[10] = false;
	EXPECT_EQ(0, check_ro(self->map, self->want, ro, NP));
	nl_stamp_mem(self->map + 10 * self->page, 4, 2, true);
	self->want[10] = self->want[4] = NL_STAMP(4, 2); /* page 4 shows it too */
	EXPECT_EQ(NL_STAMP(4, 2), nl_file_word(self->fd, 4));
	EXPECT_EQ(0, check_ro(self->map, self->want, ro, NP));
}

TEST_F(chg, readonly_survives_pageout_and_dontneed)
{
	bool ro[NP] = { false };

	for (size_t i = 0; i < NP; i += 3) {
		/* Linear and nonlinear, populated and not. */
		ASSERT_EQ(0, rdonly(self->map, i, 1, NP - 1 - i, i % 2 ? MAP_NONBLOCK : 0));
		self->want[i] = NL_STAMP(NP - 1 - i, 0);
		ro[i] = true;
	}
	ASSERT_EQ(0, rdonly(self->map, 7, 1, 7, 0));
	ro[7] = true;
	ASSERT_EQ(0, check_ro(self->map, self->want, ro, NP));
	for (int round = 0; round < 3; round++) {
		EXPECT_EQ(0, madvise(self->map, NP * self->page, MADV_PAGEOUT));
		EXPECT_EQ(0, check_ro(self->map, self->want, ro, NP)) TH_LOG("after MADV_PAGEOUT %d", round);
		EXPECT_EQ(0, madvise(self->map, NP * self->page, MADV_DONTNEED));
		EXPECT_EQ(0, check_ro(self->map, self->want, ro, NP)) TH_LOG("after MADV_DONTNEED %d", round);
	}
	/* Data written to the file meanwhile shows through the read-only page. */
	ASSERT_EQ(0, nl_stamp_fd(self->fd, 7, 1, 9, true));
	self->want[7] = NL_STAMP(7, 9);
	EXPECT_EQ(0, madvise(self->map, NP * self->page, MADV_PAGEOUT));
	EXPECT_EQ(0, check_ro(self->map, self->want, ro, NP));
	/* A hole punched under read-only pages: they read zeros, still read-only. */
	ASSERT_EQ(0, fallocate(self->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (NP - 1) * self->page,
			       self->page));
	ASSERT_EQ(0, fallocate(self->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 7 * self->page,
			       self->page));
	self->want[0] = self->want[7] = NL_WANT_ZERO;
	EXPECT_EQ(0, check_ro(self->map, self->want, ro, NP));
}

/* MADV_REMOVE punches the file pages the range shows; read-only pages stay read-only. */
TEST_F(chg, readonly_madv_remove)
{
	bool ro[NP] = { false };

	ASSERT_EQ(0, rdonly(self->map, 4, 1, 12, 0));	/* address 4 shows file page 12 */
	ASSERT_EQ(0, rdonly(self->map, 5, 1, 5, 0));
	ro[4] = ro[5] = true;
	self->want[4] = NL_STAMP(12, 0);
	ASSERT_EQ(0, madvise(self->map + 4 * self->page, 2 * self->page, MADV_REMOVE));
	/* File pages 12 and 5 are punched, wherever they show; page 4 is kept. */
	self->want[4] = self->want[5] = self->want[12] = NL_WANT_ZERO;
	EXPECT_EQ(0, check_ro(self->map, self->want, ro, NP));
	EXPECT_EQ(NL_STAMP(4, 0), nl_file_word(self->fd, 4));
	EXPECT_EQ(0ULL, nl_file_word(self->fd, 12));
}

TEST_F(chg, readonly_fork)
{
	bool ro[NP] = { false };
	pid_t pid;
	int status;

	ASSERT_EQ(0, rdonly(self->map, 2, 1, 2, 0));		/* present, linear */
	ASSERT_EQ(0, rdonly(self->map, 6, 1, 11, 0));		/* present, nonlinear */
	ASSERT_EQ(0, rdonly(self->map, 12, 2, 12, MAP_NONBLOCK)); /* entries */
	ro[2] = ro[6] = ro[12] = ro[13] = true;
	self->want[6] = NL_STAMP(11, 0);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(check_ro(self->map, self->want, ro, NP) ? 1 : 0);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(0, check_ro(self->map, self->want, ro, NP));
	/* A child of a child, after the pages were faulted in the first. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		pid_t pid2 = fork();

		if (pid2 < 0)
			_exit(2);
		if (pid2 == 0)
			_exit(check_ro(self->map, self->want, ro, NP) ? 1 : 0);
		if (waitpid(pid2, &status, 0) != pid2 || !WIFEXITED(status))
			_exit(3);
		_exit(WEXITSTATUS(status));
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(readonly_mremap)
{
	size_t page = nl_pagesize(), n = NP;
	bool ro[2 * NP] = { false };
	uint64_t want[2 * NP];
	int fd = nl_memfd("chgprot_mremap", 2 * n, true);
	char *map, *dst, *m;

	ASSERT_LE(0, fd);
	for (size_t i = 0; i < 2 * n; i++)
		want[i] = NL_STAMP(i, 0);
	map = mmap(NULL, n * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, rdonly(map, 1, 1, 1, 0));
	ASSERT_EQ(0, rdonly(map, 4, 1, 9, 0));
	ASSERT_EQ(0, rdonly(map, 5, 1, 5, MAP_NONBLOCK));
	ro[1] = ro[4] = ro[5] = true;
	want[4] = NL_STAMP(9, 0);
	ASSERT_EQ(0, check_ro(map, want, ro, n));

	/* Move to a fixed place. */
	dst = mmap(NULL, 4 * n * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, dst);
	m = mremap(map, n * page, n * page, MREMAP_MAYMOVE | MREMAP_FIXED, dst + n * page);
	ASSERT_EQ(dst + n * page, m);
	EXPECT_EQ(0, check_ro(m, want, ro, n)) TH_LOG("after moving");
	EXPECT_NONLINEAR(m, n * page);

	/* Expand (the file has 2n pages): the new pages are writable. */
	munmap(dst + 2 * n * page, n * page);
	map = mremap(m, n * page, 2 * n * page, MREMAP_MAYMOVE);
	ASSERT_NE(MAP_FAILED, map);
	EXPECT_EQ(0, check_ro(map, want, ro, 2 * n)) TH_LOG("after expanding");

	/* Shrink to the first few pages. */
	m = mremap(map, 2 * n * page, 6 * page, 0);
	ASSERT_EQ(map, m);
	EXPECT_EQ(0, check_ro(m, want, ro, 6)) TH_LOG("after shrinking");
	/* Then move it once more, with the pages swapped out. */
	EXPECT_EQ(0, madvise(m, 6 * page, MADV_PAGEOUT));
	map = mremap(m, 6 * page, 6 * page, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	ASSERT_EQ(dst, map);
	EXPECT_EQ(0, check_ro(map, want, ro, 6)) TH_LOG("after paging out and moving");
	munmap(dst, 4 * n * page);
	munmap(map, 2 * n * page);
	close(fd);
}

/*
 * mprotect() of the VMA: a page's protection is the VMA's minus the access
 * withheld from it, so a read-only page stays read-only when the VMA
 * becomes writable again.
 */
TEST_F(chg, readonly_mprotect_vma)
{
	bool ro[NP] = { false }, all[NP];

	ASSERT_EQ(0, rdonly(self->map, 3, 1, 3, 0));
	ASSERT_EQ(0, rdonly(self->map, 8, 1, 14, MAP_NONBLOCK));
	ASSERT_EQ(0, guard(self->map, 11, 1, 11, MAP_NONBLOCK));
	ro[3] = ro[8] = true;
	self->want[8] = NL_STAMP(14, 0);
	for (size_t i = 0; i < NP; i++)
		all[i] = true;

	ASSERT_EQ(0, mprotect(self->map, NP * self->page, PROT_READ));
	for (size_t i = 0; i < NP; i++) {
		if (i != 11) {
			EXPECT_EQ(0, check_page(self->map, i, self->want[i], all[i]));
		}
	}
	EXPECT_EQ(2, probe_guard(self->map + 11 * self->page, false));
	/* A protection beyond the VMA's: mprotect() the VMA first. */
	errno = 0;
	EXPECT_EQ(-1, rdwrite(self->map, 3, 1, 3, 0));
	EXPECT_EQ(EINVAL, errno);
	/* PROT_READ in a read-only VMA withholds nothing. */
	ASSERT_EQ(0, rdonly(self->map, 13, 1, 13, 0));

	ASSERT_EQ(0, mprotect(self->map, NP * self->page, PROT_READ | PROT_WRITE));
	for (size_t i = 0; i < NP; i++) {
		if (i != 11) {
			EXPECT_EQ(0, check_page(self->map, i, self->want[i], ro[i])) TH_LOG("page %zu", i);
		}
	}
	EXPECT_EQ(2, probe_guard(self->map + 11 * self->page, true));

	/* Through PROT_NONE and back, with the pages present. */
	ASSERT_EQ(0, mprotect(self->map, NP * self->page, PROT_NONE));
	ASSERT_EQ(0, mprotect(self->map, NP * self->page, PROT_READ | PROT_WRITE));
	for (size_t i = 0; i < NP; i++) {
		if (i != 11) {
			EXPECT_EQ(0, check_page(self->map, i, self->want[i], ro[i])) TH_LOG("page %zu", i);
		}
	}
	EXPECT_EQ(1, nl_count_vmas(self->map, NP * self->page));
}

/* mprotect() of another range splits the VMA and merges it back. */
TEST_F(chg, readonly_vma_split_and_merge)
{
	bool ro[NP] = { false };

	ASSERT_EQ(0, rdonly(self->map, 1, 1, 1, 0));
	ASSERT_EQ(0, rdonly(self->map, 6, 1, 6, MAP_NONBLOCK));
	ASSERT_EQ(0, rdonly(self->map, 12, 1, 2, 0));
	ro[1] = ro[6] = ro[12] = true;
	self->want[12] = NL_STAMP(2, 0);
	ASSERT_EQ(0, mprotect(self->map + 4 * self->page, 4 * self->page, PROT_READ));
	EXPECT_EQ(3, nl_count_vmas(self->map, NP * self->page));
	for (size_t i = 0; i < NP; i++) {
		EXPECT_EQ(0, check_page(self->map, i, self->want[i], ro[i] || (i >= 4 && i < 8)))
			TH_LOG("page %zu", i);
	}
	ASSERT_EQ(0, mprotect(self->map + 4 * self->page, 4 * self->page, PROT_READ | PROT_WRITE));
	EXPECT_EQ(1, nl_count_vmas(self->map, NP * self->page));
	EXPECT_EQ(0, check_ro(self->map, self->want, ro, NP));
	/* Split by munmap of the first page as well. */
	ASSERT_EQ(0, munmap(self->map, self->page));
	EXPECT_EQ(0, check_ro(self->map + self->page, self->want + 1, ro + 1, NP - 1));
	self->map += self->page;
	munmap(self->map, (NP - 1) * self->page);
	self->map = MAP_FAILED;
}

TEST_F(chg, readonly_mlock)
{
	bool ro[NP] = { false };

	ASSERT_EQ(0, rdonly(self->map, 2, 3, 2, MAP_NONBLOCK));
	ASSERT_EQ(0, rdonly(self->map, 9, 1, 15, MAP_NONBLOCK));
	ro[2] = ro[3] = ro[4] = ro[9] = true;
	self->want[9] = NL_STAMP(15, 0);
	ASSERT_EQ(0, madvise(self->map, NP * self->page, MADV_DONTNEED));
	ASSERT_EQ(0, mlock(self->map, NP * self->page)) TH_LOG("mlock: %s", strerror(errno));
	EXPECT_EQ(NP, nl_count_present(self->map, NP));
	EXPECT_EQ(0, check_ro(self->map, self->want, ro, NP));
	/* Remapping read-only inside a locked VMA populates the page, read-only. */
	ASSERT_EQ(0, rdonly(self->map, 13, 1, 13, MAP_NONBLOCK));
	ro[13] = true;
	EXPECT_EQ(NP, nl_count_present(self->map, NP));
	EXPECT_EQ(0, check_ro(self->map, self->want, ro, NP));
	ASSERT_EQ(0, munlock(self->map, NP * self->page));
	EXPECT_EQ(0, check_ro(self->map, self->want, ro, NP));
	/* MADV_POPULATE_READ works on read-only pages, MADV_POPULATE_WRITE does not. */
	ASSERT_EQ(0, madvise(self->map, NP * self->page, MADV_DONTNEED));
	EXPECT_EQ(0, madvise(self->map, NP * self->page, MADV_POPULATE_READ));
	EXPECT_EQ(NP, nl_count_present(self->map, NP));
	errno = 0;
	EXPECT_EQ(-1, madvise(self->map + 9 * self->page, self->page, MADV_POPULATE_WRITE));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(0, madvise(self->map + 10 * self->page, self->page, MADV_POPULATE_WRITE));
	EXPECT_EQ(0, check_ro(self->map, self->want, ro, NP));
}

/* GUP: writes to a read-only page fail, even with FOLL_FORCE; reads work. */
TEST_F(chg, readonly_gup_writes_fail)
{
	uint64_t buf[8], junk[8];
	struct iovec local = { buf, sizeof(buf) };
	struct iovec remote = { self->map + 4 * self->page + 64, sizeof(buf) };
	int memfd;

	memset(junk, 0x5a, sizeof(junk));
	for (int present = 0; present < 2; present++) {
		ASSERT_EQ(0, rdonly(self->map, 4, 1, 4, present ? 0 : MAP_NONBLOCK));
		remote.iov_base = self->map + 4 * self->page + 64;
		local.iov_base = junk;
		errno = 0;
		EXPECT_EQ(-1, process_vm_writev(getpid(), &local, 1, &remote, 1, 0));
		EXPECT_EQ(EFAULT, errno);
		local.iov_base = buf;
		EXPECT_EQ((ssize_t)sizeof(buf), process_vm_readv(getpid(), &local, 1, &remote, 1, 0));
		EXPECT_EQ(NL_STAMP(4, 0), buf[0]);

		memfd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, memfd);
		errno = 0;
		EXPECT_EQ(-1, pwrite(memfd, junk, sizeof(junk), (off_t)(uintptr_t)remote.iov_base));
		EXPECT_EQ(EIO, errno);
		EXPECT_EQ((ssize_t)sizeof(buf), pread(memfd, buf, sizeof(buf), (off_t)(uintptr_t)remote.iov_base));
		EXPECT_EQ(NL_STAMP(4, 0), buf[0]);
		/* A writable neighbour is written through /proc/self/mem. */
		buf[0] = NL_STAMP(3, 5);
		EXPECT_EQ(8, pwrite(memfd, buf, 8, (off_t)(uintptr_t)(self->map + 3 * self->page)));
		EXPECT_EQ(NL_STAMP(3, 5), nl_file_word(self->fd, 3));
		buf[0] = NL_STAMP(3, 0);
		EXPECT_EQ(8, pwrite(memfd, buf, 8, (off_t)(uintptr_t)(self->map + 3 * self->page)));
		close(memfd);
		EXPECT_EQ(0, check_page(self->map, 4, NL_STAMP(4, 0), true));
		EXPECT_EQ(NL_STAMP(4, 0), nl_file_word(self->fd, 4));
	}
	/* read(2) into the page: EFAULT; write(2) from it works. */
	{
		int pfd[2];

		ASSERT_EQ(0, pipe(pfd));
		ASSERT_EQ(8, write(pfd[1], self->map + 4 * self->page, 8));
		errno = 0;
		EXPECT_EQ(-1, read(pfd[0], self->map + 4 * self->page + 8, 8));
		EXPECT_EQ(EFAULT, errno);
		close(pfd[0]);
		close(pfd[1]);
	}
	EXPECT_EQ(0, check_page(self->map, 4, NL_STAMP(4, 0), true));
}

/* ptrace(PTRACE_POKEDATA), FOLL_FORCE on a shared mapping: EIO on a read-only page. */
TEST_F(chg, readonly_ptrace_poke)
{
	char *ro = self->map + 7 * self->page, *rw = self->map + 8 * self->page;
	int status;
	long v;
	pid_t pid;

	ASSERT_EQ(0, rdonly(self->map, 7, 1, 7, 0));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(1);
		raise(SIGSTOP);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSTOPPED(status));
	errno = 0;
	v = ptrace(PTRACE_PEEKDATA, pid, ro + 8, NULL);
	EXPECT_EQ(0, errno);
	EXPECT_EQ((long)NL_STAMP(7, 0), v);
	errno = 0;
	EXPECT_EQ(-1, ptrace(PTRACE_POKEDATA, pid, ro + 8, (void *)0x1234));
	EXPECT_EQ(EIO, errno);
	/* The writable neighbour takes the poke. */
	EXPECT_EQ(0, ptrace(PTRACE_POKEDATA, pid, rw + 8, (void *)(long)NL_STAMP(8, 0)));
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	EXPECT_EQ(NL_STAMP(7, 0), nl_file_word(self->fd, 7));
	EXPECT_EQ(0, check_page(self->map, 7, NL_STAMP(7, 0), true));
}

#ifndef MPOL_MF_MOVE
#define MPOL_MF_MOVE (1 << 1)
#endif

/* Page migration (move_pages() between the guest's two NUMA nodes) keeps read-only pages. */
TEST_F(chg, readonly_migration)
{
	bool ro[NP] = { false };
	void *pages[NP];
	int nodes[NP], status[NP];
	long moved = 0;

	ASSERT_EQ(0, rdonly(self->map, 0, 4, 0, 0));
	ASSERT_EQ(0, rdonly(self->map, 10, 2, 1, 0));
	ro[0] = ro[1] = ro[2] = ro[3] = ro[10] = ro[11] = true;
	self->want[10] = NL_STAMP(1, 0);
	self->want[11] = NL_STAMP(2, 0);
	ASSERT_EQ(0, check_ro(self->map, self->want, ro, NP));
	for (size_t i = 0; i < NP; i++)
		pages[i] = self->map + i * self->page;
	if (syscall(__NR_move_pages, 0, NP, pages, NULL, status, 0) || status[0] < 0)
		SKIP(return, "move_pages: %s", strerror(errno));
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < NP; i++) {
			syscall(__NR_move_pages, 0, 1, &pages[i], NULL, &status[i], 0);
			nodes[i] = status[i] == 0 ? 1 : 0;
		}
		if (syscall(__NR_move_pages, 0, NP, pages, nodes, status, MPOL_MF_MOVE) < 0) {
			if (errno == ENODEV || errno == EINVAL)
				SKIP(return, "one NUMA node");
			ASSERT_TRUE(0) TH_LOG("move_pages: %s", strerror(errno));
		}
		for (size_t i = 0; i < NP; i++)
			moved += status[i] == nodes[i];
		EXPECT_EQ(0, check_ro(self->map, self->want, ro, NP)) TH_LOG("after move %d", round);
	}
	if (!moved)
		SKIP(return, "no page moved (one NUMA node?)");
	TH_LOG("%ld page moves", moved);
}

/*
 * Random mix: pages of one VMA are made read-only, writable or guards at
 * random offsets, with page-outs, MADV_DONTNEED, mprotect() of the VMA
 * and of pieces of it, and a fork checking everything, in between.  After
 * each step every page is checked: data, and whether a write faults.
 */
/*
 * The random mixes check every page after every round: minutes on the debug
 * kernel in a TCG guest on a loaded host, past the harness's default 30 s.
 * This empty fixture exists only to give them a longer timeout.
 */
FIXTURE(mix) {
	int unused;
};

FIXTURE_SETUP(mix)
{
}

FIXTURE_TEARDOWN(mix)
{
}

TEST_F_TIMEOUT(mix, readonly_random_mix, 600)
{
	size_t page = nl_pagesize(), n = 128, rounds = 200;
	enum { RW, RO, GUARD } *state = calloc(n, sizeof(*state));
	uint64_t *want = calloc(n, sizeof(*want));
	unsigned int seed = (unsigned int)time(NULL);
	int fd = nl_memfd("chgprot_mix", n, true);
	long bad = 0;
	char *map;

	ASSERT_TRUE(state && want);
	ASSERT_LE(0, fd);
	map = nl_map_with_hole(n * page, fd);
	ASSERT_NE(MAP_FAILED, map);
	if (getenv("CHGPROT_SEED"))
		seed = (unsigned int)strtoul(getenv("CHGPROT_SEED"), NULL, 0);
	TH_LOG("seed %u (CHGPROT_SEED)", seed);
	srandom(seed);
	for (size_t i = 0; i < n; i++)
		want[i] = NL_STAMP(i, 0);
	for (size_t r = 0; r < rounds && !bad; r++) {
		size_t first = (size_t)random() % n, len = 1 + (size_t)random() % 8, pgoff = (size_t)random() % n;
		int op = (int)(random() % 10), flags = random() % 2 ? MAP_NONBLOCK : 0;

		if (first + len > n)
			len = n - first;
		if (pgoff + len > n)
			pgoff = n - len;
		switch (op) {
		case 0: case 1: case 2:
			ASSERT_EQ(0, rdonly(map, first, len, pgoff, flags));
			break;
		case 3: case 4:
			ASSERT_EQ(0, rdwrite(map, first, len, pgoff, flags));
			break;
		case 5:
			ASSERT_EQ(0, guard(map, first, len, pgoff, flags));
			break;
		case 6:
			ASSERT_EQ(0, madvise(map + first * page, len * page, random() % 2 ? MADV_PAGEOUT : MADV_DONTNEED));
			break;
		case 7:
			/* A piece read-only and back: splits and merges the VMA. */
			ASSERT_EQ(0, mprotect(map + first * page, len * page, PROT_READ));
			ASSERT_EQ(0, mprotect(map + first * page, len * page, PROT_READ | PROT_WRITE));
			break;
		default:
			break;
		}
		if (op <= 5) {
			for (size_t k = 0; k < len; k++) {
				state[first + k] = op <= 2 ? RO : op <= 4 ? RW : GUARD;
				want[first + k] = NL_STAMP(pgoff + k, 0);
			}
		}
		if (op == 8) {
			/* Rewrite every writable page's file page with its own stamp (no change of data). */
			for (size_t i = 0; i < n; i++)
				if (state[i] == RW)
					nl_stamp_mem(map + i * page, (size_t)(want[i] & 0xffffffff), 0, false);
		}
		for (size_t i = 0; i < n; i++) {
			int ok;

			if (state[i] == GUARD)
				ok = probe_guard(map + i * page + 8, r % 2) == 2;
			else
				ok = !check_page(map, i, want[i], state[i] == RO);
			if (!ok) {
				fprintf(stderr, "#   round %zu (op %d): page %zu (state %d) wrong\n", r, op, i, state[i]);
				bad++;
			}
		}
		if (op == 9) {
			pid_t pid = fork();
			int status;

			ASSERT_LE(0, pid);
			if (pid == 0) {
				long cbad = 0;

				for (size_t i = 0; i < n; i++)
					cbad += state[i] == GUARD ? probe_guard(map + i * page, true) != 2 :
								    check_page(map, i, want[i], state[i] == RO);
				_exit(cbad ? 1 : 0);
			}
			ASSERT_EQ(pid, waitpid(pid, &status, 0));
			EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("fork at round %zu", r);
		}
	}
	EXPECT_EQ(0, bad);
	EXPECT_EQ(1, nl_count_vmas(map, n * page));
	munmap(map, n * page);
	close(fd);
	free(state);
	free(want);
}

/* --- executable mappings (x86_64) ------------------------------------------------ */

#if defined(__x86_64__)
/* Call the code at @p; 0 if it returned, else the signal (code in nl_code). */
static int probe_exec(void *p)
{
	struct nl_sigsave save;
	int sig = 0;

	nl_catch(&save);
	nl_sig = 0;
	if (sigsetjmp(nl_jmp, 0) == 0)
		((void (*)(void))p)();
	else
		sig = nl_sig;
	nl_uncatch(&save);
	return sig;
}

TEST(exec_pages_in_rwx_mapping)
{
	size_t page = nl_pagesize(), n = 8;
	int fd = nl_memfd("chgprot_exec", n, false);
	char *map;

	ASSERT_LE(0, fd);
	map = mmap(NULL, n * page, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		SKIP(return, "no executable memfd mapping: %s", strerror(errno));
	for (size_t i = 0; i < n; i++)
		memset(map + i * page, 0xc3, page); /* ret */
	EXPECT_EQ(0, probe_exec(map + 2 * page));

	/* Read-only, executable: runs, reads, faults on write. */
	ASSERT_EQ(0, nl_remap(map + 2 * page, page, PROT_READ | PROT_EXEC, 2, MAP_CHGPROT));
	EXPECT_EQ(0, probe_exec(map + 2 * page + 100));
	EXPECT_EQ(0xc3, *(volatile unsigned char *)(map + 2 * page + 5));
	EXPECT_EQ(SIGSEGV, nl_probe(map + 2 * page + 64, NULL, true, 0));
	EXPECT_EQ(SEGV_ACCERR, nl_code);
	EXPECT_EQ((void *)(map + 2 * page + 64), nl_fault_addr);
	/* ... also nonlinear, never faulted, executed first. */
	ASSERT_EQ(0, nl_remap(map + 5 * page, page, PROT_READ | PROT_EXEC, 1, MAP_CHGPROT | MAP_NONBLOCK));
	EXPECT_EQ(0, probe_exec(map + 5 * page + 7));
	EXPECT_EQ(SIGSEGV, nl_probe(map + 5 * page, NULL, true, 0));
	EXPECT_EQ(SEGV_ACCERR, nl_code);

	/* A guard does not run. */
	ASSERT_EQ(0, nl_remap(map + 6 * page, page, PROT_NONE, 6, MAP_CHGPROT));
	EXPECT_EQ(SIGSEGV, probe_exec(map + 6 * page));
	EXPECT_EQ(SEGV_ACCERR, nl_code);
	EXPECT_EQ((void *)(map + 6 * page), nl_fault_addr);

	/* Withholding exec from a page that stays accessible: it no longer runs. */
	ASSERT_EQ(0, nl_remap(map + 3 * page, page, PROT_READ | PROT_WRITE, 3, MAP_CHGPROT));
	EXPECT_EQ(SIGSEGV, probe_exec(map + 3 * page));
	EXPECT_EQ(SEGV_ACCERR, nl_code);
	ASSERT_EQ(0, nl_remap(map + 3 * page, page, PROT_READ, 3, MAP_CHGPROT));
	EXPECT_EQ(SIGSEGV, probe_exec(map + 3 * page));
	EXPECT_EQ(SEGV_ACCERR, nl_code);
	EXPECT_EQ(SIGSEGV, nl_probe(map + 3 * page, NULL, true, 0));
	/* Withholding read from a page that stays accessible: EINVAL. */
	errno = 0;
	EXPECT_EQ(-1, nl_remap(map + 3 * page, page, PROT_WRITE | PROT_EXEC, 3, MAP_CHGPROT));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(-1, nl_remap(map + 3 * page, page, PROT_EXEC, 3, MAP_CHGPROT));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, nl_remap(map + 3 * page, page, PROT_READ | PROT_WRITE | PROT_EXEC, 3, MAP_CHGPROT));
	EXPECT_EQ(0, probe_exec(map + 3 * page));

	/* Back to RWX: writable and executable again. */
	ASSERT_EQ(0, nl_remap(map + 2 * page, page, PROT_READ | PROT_WRITE | PROT_EXEC, 2, MAP_CHGPROT));
	EXPECT_EQ(0, nl_probe(map + 2 * page + 64, NULL, true, 0xc3c3c3c3c3c3c3c3ULL));
	EXPECT_EQ(0, probe_exec(map + 2 * page + 64));

	/* mprotect(RX) and back: the read-only page stays read-only, and runs. */
	ASSERT_EQ(0, mprotect(map, n * page, PROT_READ | PROT_EXEC));
	ASSERT_EQ(0, mprotect(map, n * page, PROT_READ | PROT_WRITE | PROT_EXEC));
	EXPECT_EQ(0, probe_exec(map + 5 * page));
	EXPECT_EQ(SIGSEGV, nl_probe(map + 5 * page, NULL, true, 0));
	munmap(map, n * page);
	close(fd);
}

/*
 * Check page @i of RWX @map: it reads 0xc3 (ret); with @noexec, executing
 * it raises SIGSEGV/SEGV_ACCERR at its address, else it runs; with @ro a
 * write faults (SEGV_ACCERR), else it works.  Returns 0 if all is right.
 */
static int check_exec_page(char *map, size_t i, bool noexec, bool ro)
{
	char *p = map + i * nl_pagesize() + 16 * (i % 5);
	uint64_t v = 0;
	int sig;

	if (nl_probe(p, &v, false, 0) || v != 0xc3c3c3c3c3c3c3c3ULL) {
		fprintf(stderr, "#   page %zu: read %#llx\n", i, (unsigned long long)v);
		return 1;
	}
	sig = nl_probe(p, NULL, true, 0xc3c3c3c3c3c3c3c3ULL);
	if (ro ? (sig != SIGSEGV || nl_code != SEGV_ACCERR || nl_fault_addr != p) : sig != 0) {
		fprintf(stderr, "#   page %zu: write signal %d code %d\n", i, sig, (int)nl_code);
		return 1;
	}
	sig = probe_exec(p);
	if (noexec ? (sig != SIGSEGV || nl_code != SEGV_ACCERR || nl_fault_addr != p) : sig != 0) {
		fprintf(stderr, "#   page %zu: exec signal %d code %d addr %p (%p)\n", i, sig, (int)nl_code,
			nl_fault_addr, p);
		return 1;
	}
	return 0;
}

#define NX_PAGES 16

/* Pages 3 (RW, linear), 8 (R, linear) and 10 (RW, showing page 12) do not run; the others do. */
static long check_exec_pages(char *map)
{
	long bad = 0;

	for (size_t i = 0; i < NX_PAGES; i++)
		bad += check_exec_page(map, i, i == 3 || i == 8 || i == 10, i == 8);
	return bad;
}

static char *map_rwx(int fd, size_t n)
{
	char *map = mmap(NULL, n * nl_pagesize(), PROT_READ | PROT_WRITE | PROT_EXEC, MAP_SHARED, fd, 0);

	if (map != MAP_FAILED)
		memset(map, 0xc3, n * nl_pagesize()); /* ret */
	return map;
}

static int make_noexec_pages(char *map)
{
	size_t page = nl_pagesize();

	if (nl_remap(map + 3 * page, page, PROT_READ | PROT_WRITE, 3, MAP_CHGPROT) ||
	    nl_remap(map + 8 * page, page, PROT_READ, 8, MAP_CHGPROT) ||
	    nl_remap(map + 10 * page, page, PROT_READ | PROT_WRITE, 12, MAP_CHGPROT | MAP_NONBLOCK))
		return -1;
	return 0;
}

/*
 * Non-executable pages in an RWX mapping (PROT_READ|PROT_WRITE, or
 * PROT_READ for a read-only one): they read and write as their protection
 * says, and executing them raises SIGSEGV/SEGV_ACCERR at the address; the
 * pages beside them run.  Kept across MADV_PAGEOUT, MADV_DONTNEED, fork,
 * mremap and mprotect() RWX -> RX -> RWX of the VMA; mprotect() RWX -> RW
 * ends them (they run once the VMA is RWX again); restoring the VMA's
 * protection makes them executable again.
 */
TEST(noexec_pages_in_rwx_mapping)
{
	size_t page = nl_pagesize(), n = NX_PAGES;
	int fd = nl_memfd("chgprot_noexec", n, false);
	char *map, *to;
	int status;
	long bad;
	pid_t pid;

	ASSERT_LE(0, fd);
	map = map_rwx(fd, n);
	if (map == MAP_FAILED)
		SKIP(return, "no executable memfd mapping: %s", strerror(errno));
	ASSERT_EQ(0, make_noexec_pages(map));
	/* Page 10, never faulted in, executed first. */
	EXPECT_EQ(SIGSEGV, probe_exec(map + 10 * page + 32));
	EXPECT_EQ(SEGV_ACCERR, nl_code);
	EXPECT_EQ((void *)(map + 10 * page + 32), nl_fault_addr);
	EXPECT_EQ(0, check_exec_pages(map));

	for (int round = 0; round < 2; round++) {
		ASSERT_EQ(0, madvise(map, n * page, round ? MADV_DONTNEED : MADV_PAGEOUT));
		EXPECT_EQ(0, check_exec_pages(map)) TH_LOG("after %s", round ? "MADV_DONTNEED" : "MADV_PAGEOUT");
	}

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(check_exec_pages(map) ? 1 : 0);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("fork");
	EXPECT_EQ(0, check_exec_pages(map));

	/*
	 * mprotect() RWX -> RW -> RWX, mapped (ptes) and paged out (entries):
	 * a VMA that loses exec ends the exec withheld from its pages, which
	 * run again with the VMA; page 8 stays read-only.  Then set again.
	 */
	for (int round = 0; round < 2; round++) {
		if (round)
			ASSERT_EQ(0, madvise(map, n * page, MADV_PAGEOUT));
		ASSERT_EQ(0, mprotect(map, n * page, PROT_READ | PROT_WRITE));
		EXPECT_EQ(SIGSEGV, probe_exec(map + 4 * page));
		ASSERT_EQ(0, mprotect(map, n * page, PROT_READ | PROT_WRITE | PROT_EXEC));
		bad = check_exec_page(map, 3, false, false) + check_exec_page(map, 8, false, true) +
		      check_exec_page(map, 10, false, false) + check_exec_page(map, 4, false, false);
		EXPECT_EQ(0, bad) TH_LOG("after mprotect round %d: withheld exec should have ended", round);
		ASSERT_EQ(0, make_noexec_pages(map));
		EXPECT_EQ(0, check_exec_pages(map)) TH_LOG("set again after mprotect round %d", round);
	}
	/* ... and RWX -> RX -> RWX: read-only and non-executable pages stay so. */
	ASSERT_EQ(0, mprotect(map, n * page, PROT_READ | PROT_EXEC));
	ASSERT_EQ(0, mprotect(map, n * page, PROT_READ | PROT_WRITE | PROT_EXEC));
	EXPECT_EQ(0, check_exec_pages(map));

	/* mremap() moves them. */
	to = mmap(NULL, n * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, to);
	to = mremap(map, n * page, n * page, MREMAP_MAYMOVE | MREMAP_FIXED, to);
	ASSERT_NE(MAP_FAILED, to);
	map = to;
	EXPECT_EQ(0, check_exec_pages(map));
	EXPECT_EQ(1, nl_count_vmas(map, n * page));

	/* Restoring the VMA's protection makes them run (and page 8 writable) again. */
	ASSERT_EQ(0, nl_remap(map + 3 * page, page, PROT_READ | PROT_WRITE | PROT_EXEC, 3, MAP_CHGPROT));
	ASSERT_EQ(0, nl_remap(map + 8 * page, page, 0, 8, 0));
	ASSERT_EQ(0, nl_remap(map + 10 * page, page, PROT_READ | PROT_WRITE | PROT_EXEC, 10, MAP_CHGPROT));
	bad = 0;
	for (size_t i = 0; i < n; i++)
		bad += check_exec_page(map, i, false, false);
	EXPECT_EQ(0, bad);
	munmap(map, n * page);
	close(fd);
}

/* move_pages() between the guest's two NUMA nodes keeps non-executable pages. */
TEST(noexec_migration)
{
	size_t page = nl_pagesize(), n = NX_PAGES;
	int fd = nl_memfd("chgprot_noexec_mig", n, false);
	void *pages[NX_PAGES];
	int nodes[NX_PAGES], status[NX_PAGES];
	long moved = 0;
	char *map;

	ASSERT_LE(0, fd);
	map = map_rwx(fd, n);
	if (map == MAP_FAILED)
		SKIP(return, "no executable memfd mapping: %s", strerror(errno));
	ASSERT_EQ(0, make_noexec_pages(map));
	ASSERT_EQ(0, check_exec_pages(map));
	for (size_t i = 0; i < n; i++)
		pages[i] = map + i * page;
	if (syscall(__NR_move_pages, 0, n, pages, NULL, status, 0) || status[0] < 0)
		SKIP(return, "move_pages: %s", strerror(errno));
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < n; i++) {
			/* Fault every page in first: a moved non-executable page is an entry. */
			(void)*(volatile char *)pages[i];
			syscall(__NR_move_pages, 0, 1, &pages[i], NULL, &status[i], 0);
			nodes[i] = status[i] == 0 ? 1 : 0;
		}
		if (syscall(__NR_move_pages, 0, n, pages, nodes, status, MPOL_MF_MOVE) < 0) {
			if (errno == ENODEV || errno == EINVAL)
				SKIP(return, "one NUMA node");
			ASSERT_TRUE(0) TH_LOG("move_pages: %s", strerror(errno));
		}
		for (size_t i = 0; i < n; i++)
			moved += status[i] == nodes[i];
		EXPECT_EQ(0, check_exec_pages(map)) TH_LOG("after move %d", round);
	}
	if (!moved)
		SKIP(return, "no page moved (one NUMA node?)");
	TH_LOG("%ld page moves", moved);
	munmap(map, n * page);
	close(fd);
}

/*
 * Random mix in an RWX mapping: pages made ordinary, non-executable,
 * read-only, read-only non-executable or guards at random offsets, with
 * page-outs, MADV_DONTNEED, mprotect() RWX -> RX -> RWX and RWX -> RW ->
 * RWX of the VMA (which ends withheld exec), migration and a fork
 * checking everything.  Every page is checked after each step.
 */
TEST_F_TIMEOUT(mix, noexec_random_mix, 600)
{
	static const int prots[] = { PROT_READ | PROT_WRITE | PROT_EXEC, PROT_READ | PROT_WRITE, PROT_READ,
				     PROT_READ | PROT_EXEC, PROT_NONE };
	size_t page = nl_pagesize(), n = 64, rounds = 150;
	int fd = nl_memfd("chgprot_noexec_mix", n, false);
	unsigned int seed = (unsigned int)time(NULL);
	int *state = calloc(n, sizeof(*state));
	void **pages = calloc(n, sizeof(*pages));
	int *nodes = calloc(n, sizeof(*nodes)), *status = calloc(n, sizeof(*status));
	long bad = 0;
	char *map;

	ASSERT_TRUE(state && pages && nodes && status);
	ASSERT_LE(0, fd);
	map = map_rwx(fd, n);
	if (map == MAP_FAILED)
		SKIP(return, "no executable memfd mapping: %s", strerror(errno));
	if (getenv("CHGPROT_SEED"))
		seed = (unsigned int)strtoul(getenv("CHGPROT_SEED"), NULL, 0);
	TH_LOG("seed %u (CHGPROT_SEED)", seed);
	srandom(seed);
	for (size_t i = 0; i < n; i++)
		pages[i] = map + i * page;
	for (size_t r = 0; r < rounds && !bad; r++) {
		size_t first = (size_t)random() % n, len = 1 + (size_t)random() % 6;
		int op = (int)(random() % 10), st = (int)(random() % 5);

		if (first + len > n)
			len = n - first;
		switch (op) {
		case 0: case 1: case 2: case 3:
			/* All pages show file page 0..n-1 at their own offset: every page holds ret. */
			ASSERT_EQ(0, nl_remap(map + first * page, len * page, prots[st], (first + 7) % (n - len + 1),
					      MAP_CHGPROT | (random() % 2 ? MAP_NONBLOCK : 0)));
			for (size_t k = 0; k < len; k++)
				state[first + k] = st;
			break;
		case 4:
			ASSERT_EQ(0, madvise(map + first * page, len * page, random() % 2 ? MADV_PAGEOUT : MADV_DONTNEED));
			break;
		case 5:
			ASSERT_EQ(0, mprotect(map, n * page, PROT_READ | PROT_EXEC));
			ASSERT_EQ(0, mprotect(map, n * page, PROT_READ | PROT_WRITE | PROT_EXEC));
			break;
		case 6:
			ASSERT_EQ(0, mprotect(map + first * page, len * page, PROT_READ | PROT_WRITE));
			ASSERT_EQ(0, mprotect(map + first * page, len * page, PROT_READ | PROT_WRITE | PROT_EXEC));
			/* Losing exec ended the withheld exec; guards stay guards. */
			for (size_t k = 0; k < len; k++) {
				if (state[first + k] == 1)
					state[first + k] = 0;
				else if (state[first + k] == 2)
					state[first + k] = 3;
			}
			break;
		case 7:
			for (size_t i = 0; i < n; i++) {
				syscall(__NR_move_pages, 0, 1, &pages[i], NULL, &status[i], 0);
				nodes[i] = status[i] == 0 ? 1 : 0;
			}
			syscall(__NR_move_pages, 0, n, pages, nodes, status, MPOL_MF_MOVE);
			break;
		default:
			break;
		}
		for (size_t i = 0; i < n; i++) {
			int ok;

			if (state[i] == 4)
				ok = probe_guard(map + i * page + 8, r % 2) == 2 && probe_exec(map + i * page) == SIGSEGV;
			else
				ok = !check_exec_page(map, i, state[i] == 1 || state[i] == 2,
						      state[i] == 2 || state[i] == 3);
			if (!ok) {
				fprintf(stderr, "#   round %zu (op %d): page %zu (state %d) wrong\n", r, op, i, state[i]);
				bad++;
			}
		}
		if (op == 9) {
			pid_t pid = fork();
			int wstatus;

			ASSERT_LE(0, pid);
			if (pid == 0) {
				long cbad = 0;

				for (size_t i = 0; i < n; i++)
					cbad += state[i] == 4 ? probe_exec(map + i * page) != SIGSEGV :
						check_exec_page(map, i, state[i] == 1 || state[i] == 2,
								state[i] == 2 || state[i] == 3);
				_exit(cbad ? 1 : 0);
			}
			ASSERT_EQ(pid, waitpid(pid, &wstatus, 0));
			EXPECT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) TH_LOG("fork at round %zu", r);
		}
	}
	EXPECT_EQ(0, bad);
	EXPECT_EQ(1, nl_count_vmas(map, n * page));
	munmap(map, n * page);
	close(fd);
	free(state);
	free(pages);
	free(nodes);
	free(status);
}
#endif

NL_HARNESS_MAIN
