// SPDX-License-Identifier: GPL-2.0
/*
 * Guard pages of nonlinear shmem mappings (MAP_CHGPROT) against
 * everything else the kernel does to a mapping.  The case list follows the
 * guard-regions selftest of Linux 6.13+ (MADV_GUARD_INSTALL), adapted to
 * remap_file_pages(..., PROT_NONE, pgoff, MAP_CHGPROT):
 *
 *   munmap, mprotect over guards, VMA split and merge, MADV_DONTNEED and
 *   fault-around, populate (EFAULT), MAP_LOCKED/mlock2, mremap move /
 *   expand / shrink / single pages / MREMAP_DONTUNMAP, memory-cgroup
 *   pressure, swapoff, userfaultfd, truncation, hole punch, transparent
 *   huge pages, write-sealed memfds and mseal, pagemap/PAGEMAP_SCAN/
 *   mincore and the other /proc walkers, remote GUP (process_vm_*,
 *   /proc/PID/mem, ptrace), futex, read/write/O_DIRECT/vmsplice with a
 *   guard as buffer, core dumps, and the signal a read, write or
 *   instruction fetch gets at the first and last byte of a guard.
 *
 * madv_remove_nonlinear_offsets reproduces a kernel bug found here
 * (MADV_REMOVE punches the linear offsets of a nonlinear VMA) and fails
 * until it is fixed; see docs/testing-kernel.md, "Findings".
 *
 * What tests/kernel/chgprot_test.c already proves (basic SIGSEGV, restoring
 * data, fork, local GUP, EINVAL/EACCES, neighbours paged out or dropped,
 * mlock stepping over guards, 100,000 guards) is not repeated here.
 *
 * Every page of the memfd is stamped (nonlinear_util.h); each test keeps
 * what every address must show, a stamp, zeroes, SIGBUS, or GUARD (SIGSEGV
 * with SEGV_ACCERR at the exact address, for a read and a write).
 *
 * Not run on the stock kernel (tests/kernel/run.sh): it has no MAP_CHGPROT.
 */
#include <elf.h>
#include <linux/fs.h>
#include <linux/futex.h>
#include <linux/userfaultfd.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/swap.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "nonlinear_util.h" /* includes kselftest_harness.h */

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#define MADV_POPULATE_WRITE 23
#endif
#ifndef MADV_COLD
#define MADV_COLD 20
#endif
#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT 1
#endif
#ifndef __NR_mseal
#define __NR_mseal 462
#endif

/* want[] value of a guard page (the helpers' other markers are 0 and ~0). */
#define GUARD (~1ULL)
#define NP 32

static size_t pg(void)
{
	return nl_pagesize();
}

/* Make pages [first, first + n) of @map guards naming file page @pgoff on. */
static int guard(char *map, size_t first, size_t n, size_t pgoff)
{
	return nl_remap(map + first * pg(), n * pg(), PROT_NONE, pgoff, MAP_CHGPROT | MAP_NONBLOCK);
}

/* Show file pages [pgoff, pgoff + n) at pages [first, first + n) (no populate). */
static int show(char *map, size_t first, size_t n, size_t pgoff)
{
	return nl_remap(map + first * pg(), n * pg(), 0, pgoff, MAP_NONBLOCK);
}

/*
 * One access of kind 'r' (read a byte), 'w' (write a byte) or 'x' (call the
 * address) at @p.  Returns 0, or the signal; its si_code and si_addr are in
 * nl_code and nl_fault_addr.
 */
static int access_at(void *p, int kind)
{
	struct nl_sigsave save;
	int sig = 0;

	nl_catch(&save);
	nl_sig = 0;
	nl_fault_addr = NULL;
	if (sigsetjmp(nl_jmp, 1) == 0) {
		if (kind == 'w')
			*(volatile char *)p = 0x5a;
		else if (kind == 'x')
			((void (*)(void))p)();
		else
			(void)*(volatile char *)p;
	} else {
		sig = nl_sig;
	}
	nl_uncatch(&save);
	return sig;
}

/* Does the access fault exactly as a guard must: SIGSEGV, SEGV_ACCERR, si_addr == p? */
static bool guard_fault(void *p, int kind)
{
	int sig = access_at(p, kind);

	if (sig == SIGSEGV && nl_code == SEGV_ACCERR && nl_fault_addr == p)
		return true;
	fprintf(stderr, "#   %c at %p: signal %d code %d addr %p (want SIGSEGV/SEGV_ACCERR there)\n", kind, p, sig,
		(int)nl_code, nl_fault_addr);
	return false;
}

/* A guard: reads and writes at the first and last byte and in the middle all fault. */
static bool is_guard(char *p)
{
	return guard_fault(p, 'r') && guard_fault(p + pg() - 1, 'r') && guard_fault(p + pg() / 2 + 8, 'w') &&
	       guard_fault(p, 'w') && guard_fault(p + pg() - 1, 'w');
}

/* Check pages [0, n) of @map against @want (stamps, 0, NL_WANT_SIGBUS, GUARD). */
static long check_map(char *map, const uint64_t *want, size_t n)
{
	long bad = 0;

	for (size_t i = 0; i < n; i++) {
		if (want[i] == GUARD) {
			if (!is_guard(map + i * pg())) {
				fprintf(stderr, "#   page %zu is not a guard\n", i);
				bad++;
			}
		} else if (nl_check_pages(map + i * pg(), 1, &want[i], false)) {
			fprintf(stderr, "#   (that was page %zu)\n", i);
			bad++;
		}
	}
	return bad;
}

static long vmas_of(const void *map, size_t pages)
{
	return nl_count_vmas(map, pages * pg());
}

static void linear_want(uint64_t *want, size_t n)
{
	for (size_t i = 0; i < n; i++)
		want[i] = NL_STAMP(i, 0);
}

FIXTURE(gr)
{
	int fd;
	char *map;
	uint64_t want[4 * NP];
};

FIXTURE_SETUP(gr)
{
	self->fd = nl_memfd("guard_regions", NP, true);
	ASSERT_LE(0, self->fd);
	self->map = nl_map_with_hole(NP * pg(), self->fd);
	ASSERT_NE(MAP_FAILED, self->map);
	linear_want(self->want, NP);
}

FIXTURE_TEARDOWN(gr)
{
	if (self->map != MAP_FAILED)
		munmap(self->map, NP * pg());
	if (self->fd >= 0)
		close(self->fd);
}

/*
 * munmap drops guards: after munmap and a new mmap at the same place the
 * pages are the file's again.  A partial munmap leaves the other guards.
 */
TEST_F(gr, munmap_drops_guards)
{
	char *m = self->map, *again;
	struct stat st;

	ASSERT_EQ(0, guard(m, 0, 1, 0));
	ASSERT_EQ(0, guard(m, 9, 1, 9));
	ASSERT_EQ(0, guard(m, NP - 1, 1, 3)); /* a guard naming another offset */
	self->want[0] = self->want[9] = self->want[NP - 1] = GUARD;
	ASSERT_EQ(0, check_map(m, self->want, NP));

	/* Unmap the first and the last page, map the file there again. */
	ASSERT_EQ(0, munmap(m, pg()));
	ASSERT_EQ(0, munmap(m + (NP - 1) * pg(), pg()));
	again = mmap(m, pg(), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, self->fd, 0);
	ASSERT_EQ(m, again);
	again = mmap(m + (NP - 1) * pg(), pg(), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, self->fd,
		     (off_t)((NP - 1) * pg()));
	ASSERT_EQ(m + (NP - 1) * pg(), again);
	self->want[0] = NL_STAMP(0, 0);
	self->want[NP - 1] = NL_STAMP(NP - 1, 0);
	EXPECT_EQ(0, check_map(m, self->want, NP)) TH_LOG("page 9 must still be a guard, 0 and 31 data");

	/* The whole mapping: no guard survives. */
	ASSERT_EQ(0, munmap(m, NP * pg()));
	again = mmap(m, NP * pg(), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE, self->fd, 0);
	ASSERT_EQ(m, again);
	linear_want(self->want, NP);
	EXPECT_EQ(0, check_map(m, self->want, NP));
	EXPECT_FALSE(nl_has_vmflag(m, "nl")) TH_LOG("a fresh mapping is not nonlinear");
	/* Guards never allocated anything: the file has its NP pages. */
	ASSERT_EQ(0, fstat(self->fd, &st));
	EXPECT_EQ((long)(NP * pg() / 512), (long)st.st_blocks);
}

/*
 * mprotect of a range holding guards: guards stay guards (SEGV_ACCERR for
 * a read even under PROT_READ), the data pages take the new protection.
 * MAP_CHGPROT restores with the VMA's current protection only.
 */
TEST_F(gr, mprotect_over_guards)
{
	char *m = self->map;
	const uint64_t stamp11 = NL_STAMP(11, 0);

	ASSERT_EQ(0, guard(m, 10, 2, 10));
	ASSERT_EQ(0, show(m, 12, 1, 20));
	self->want[10] = self->want[11] = GUARD;
	self->want[12] = NL_STAMP(20, 0);
	ASSERT_EQ(0, check_map(m, self->want, NP));

	/* Read-only: guards still fault on read; data reads, write faults. */
	ASSERT_EQ(0, mprotect(m + 8 * pg(), 8 * pg(), PROT_READ));
	EXPECT_EQ(3, vmas_of(m, NP));
	EXPECT_TRUE(guard_fault(m + 10 * pg(), 'r'));
	EXPECT_TRUE(guard_fault(m + 12 * pg() - 1, 'r'));
	EXPECT_EQ(0, nl_check_pages(m + 8 * pg(), 1, &self->want[8], true));
	EXPECT_EQ(0, nl_check_pages(m + 12 * pg(), 1, &self->want[12], true));
	EXPECT_TRUE(guard_fault(m + 9 * pg() + 5, 'w')) TH_LOG("a data page of a PROT_READ range must not be writable");
	EXPECT_TRUE(guard_fault(m + 12 * pg(), 'w'));

	/* Restoring in the PROT_READ part: only PROT_READ is the VMA's protection now. */
	errno = 0;
	EXPECT_EQ(-1, nl_remap(m + 11 * pg(), pg(), PROT_READ | PROT_WRITE, 11, MAP_CHGPROT));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_TRUE(is_guard(m + 11 * pg()));
	EXPECT_EQ(0, nl_remap(m + 11 * pg(), pg(), PROT_READ, 11, MAP_CHGPROT));
	EXPECT_EQ(0, nl_check_pages(m + 11 * pg(), 1, &stamp11, true));
	EXPECT_TRUE(guard_fault(m + 11 * pg(), 'w'));
	ASSERT_EQ(0, guard(m, 11, 1, 11));

	/* PROT_NONE, then back to read-write: guards are still guards, data writable again. */
	ASSERT_EQ(0, mprotect(m + 8 * pg(), 8 * pg(), PROT_NONE));
	EXPECT_TRUE(guard_fault(m + 10 * pg(), 'r'));
	EXPECT_TRUE(guard_fault(m + 9 * pg(), 'r'));
	/*
	 * In a PROT_NONE VMA, MAP_CHGPROT with PROT_NONE still means "guard"
	 * (page 13 is one once the VMA is read-write again); only a plain
	 * remap gives the file page back (page 10).
	 */
	ASSERT_EQ(0, nl_remap(m + 13 * pg(), pg(), PROT_NONE, 13, MAP_CHGPROT));
	ASSERT_EQ(0, nl_remap(m + 10 * pg(), pg(), 0, 10, 0));
	self->want[13] = GUARD;
	self->want[10] = NL_STAMP(10, 0);
	ASSERT_EQ(0, mprotect(m + 8 * pg(), 8 * pg(), PROT_READ | PROT_WRITE));
	EXPECT_EQ(1, vmas_of(m, NP)) TH_LOG("the three parts should merge back");
	EXPECT_EQ(0, check_map(m, self->want, NP));
	nl_stamp_mem(m + 12 * pg(), 20, 3, false);
	EXPECT_EQ(NL_STAMP(20, 3), nl_file_word(self->fd, 20));
	EXPECT_NONLINEAR(m, NP * pg());
}

/*
 * Splitting the VMA (mprotect of other ranges, munmap of single pages) and
 * merging it back keeps every guard in every part; pages mapped again
 * over the holes are plain.
 */
TEST_F(gr, split_merge_keeps_guards)
{
	char *m = self->map;

	for (size_t i = 0; i < NP; i += 3) {
		ASSERT_EQ(0, guard(m, i, 1, i));
		self->want[i] = GUARD;
	}
	ASSERT_EQ(0, mprotect(m, 4 * pg(), PROT_READ));
	ASSERT_EQ(0, mprotect(m + 24 * pg(), 8 * pg(), PROT_READ));
	EXPECT_EQ(3, vmas_of(m, NP));
	EXPECT_TRUE(nl_has_vmflag(m, "nl") && nl_has_vmflag(m + 10 * pg(), "nl") && nl_has_vmflag(m + 30 * pg(), "nl"));
	for (size_t i = 0; i < NP; i++) {
		if (self->want[i] == GUARD) {
			EXPECT_TRUE(guard_fault(m + i * pg(), 'r'));
		}
	}
	ASSERT_EQ(0, mprotect(m, 4 * pg(), PROT_READ | PROT_WRITE));
	ASSERT_EQ(0, mprotect(m + 24 * pg(), 8 * pg(), PROT_READ | PROT_WRITE));
	EXPECT_EQ(1, vmas_of(m, NP)) TH_LOG("mprotect back should merge the parts");
	EXPECT_EQ(0, check_map(m, self->want, NP));

	/* Holes at pages 6 (a guard) and 14 (data): three VMAs... */
	ASSERT_EQ(0, munmap(m + 6 * pg(), pg()));
	ASSERT_EQ(0, munmap(m + 14 * pg(), pg()));
	EXPECT_EQ(3, vmas_of(m, NP));
	EXPECT_EQ(SIGSEGV, access_at(m + 6 * pg(), 'r'));
	EXPECT_EQ(SEGV_MAPERR, nl_code) TH_LOG("an unmapped page must be SEGV_MAPERR");
	/* ...mapped again: those two are plain file pages, the rest unchanged. */
	ASSERT_EQ(m + 6 * pg(), mmap(m + 6 * pg(), pg(), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, self->fd,
				     (off_t)(6 * pg())));
	ASSERT_EQ(m + 14 * pg(), mmap(m + 14 * pg(), pg(), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
				      self->fd, (off_t)(14 * pg())));
	self->want[6] = NL_STAMP(6, 0);
	EXPECT_EQ(0, check_map(m, self->want, NP));
	/* Guards can be set again in a part of the split VMA. */
	ASSERT_EQ(0, guard(m, 7, 1, 7));
	self->want[7] = GUARD;
	EXPECT_EQ(0, check_map(m, self->want, NP));
}

/*
 * MADV_DONTNEED and MADV_COLD over guards keep them; the data pages come
 * back from the page cache; a fault next to guards (fault-around) maps
 * nothing over them; MADV_POPULATE_* fail with EFAULT on a guard.
 */
TEST_F(gr, dontneed_cold_populate)
{
	char *m = self->map;

	ASSERT_EQ(0, check_map(m, self->want, NP)); /* everything present */
	for (size_t i = 0; i < NP; i += 2) {
		ASSERT_EQ(0, guard(m, i, 1, i));
		self->want[i] = GUARD;
	}
	EXPECT_EQ(NP / 2, nl_count_present(m, NP));
	ASSERT_EQ(0, madvise(m, NP * pg(), MADV_DONTNEED));
	EXPECT_EQ(0, nl_count_present(m, NP));
	/* Read the odd pages only: fault-around would map even ones if it ran. */
	for (size_t i = 1; i < NP; i += 2)
		EXPECT_EQ(0, nl_check_pages(m + i * pg(), 1, &self->want[i], false));
	EXPECT_EQ(NP / 2, nl_count_present(m, NP));
	EXPECT_EQ(0, check_map(m, self->want, NP));
	ASSERT_EQ(0, madvise(m, NP * pg(), MADV_COLD));
	EXPECT_EQ(0, check_map(m, self->want, NP));

	/* Populating a range with a guard stops there: EFAULT. */
	errno = 0;
	EXPECT_EQ(-1, madvise(m, NP * pg(), MADV_POPULATE_READ));
	EXPECT_EQ(EFAULT, errno);
	errno = 0;
	EXPECT_EQ(-1, madvise(m + pg(), 2 * pg(), MADV_POPULATE_WRITE));
	EXPECT_EQ(EFAULT, errno);
	/* A range of data pages only populates fine. */
	ASSERT_EQ(0, madvise(m, NP * pg(), MADV_DONTNEED));
	EXPECT_EQ(0, madvise(m + pg(), pg(), MADV_POPULATE_WRITE));
	EXPECT_EQ(1, nl_count_present(m, NP));
	EXPECT_EQ(0, check_map(m, self->want, NP));
}

/*
 * MAP_LOCKED: guards replace locked pages (and are never populated), the
 * pages restored in a locked VMA are populated even with MAP_NONBLOCK,
 * mlock2(MLOCK_ONFAULT) over guards works, munmap returns Mlocked to its
 * baseline (no page stays mlocked behind a guard), and mlock of a range of
 * guards only succeeds without populating anything.
 */
TEST(map_locked_guards)
{
	const size_t n = 64;
	int fd = nl_memfd("gr_locked", n, true);
	long mlocked0, locked;
	uint64_t want[64];
	char *m;

	ASSERT_LE(0, fd);
	linear_want(want, n);
	mlocked0 = nl_mlocked_settled_kb(-1, 0); /* one drain, no wait */
	m = mmap(NULL, n * pg(), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_LOCKED, fd, 0);
	if (m == MAP_FAILED && errno == EAGAIN)
		SKIP(return, "RLIMIT_MEMLOCK too small for MAP_LOCKED");
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_EQ((long)n, nl_count_present(m, n));
	for (size_t i = 5; i < n; i += 8) {
		ASSERT_EQ(0, guard(m, i, 2, i));
		want[i] = want[i + 1] = GUARD;
	}
	EXPECT_EQ((long)n - 16, nl_count_present(m, n));
	locked = nl_smaps_kb(m, "Locked");
	EXPECT_EQ((long)((n - 16) * pg() / 1024), locked) TH_LOG("smaps Locked %ld kB", locked);
	EXPECT_EQ(0, check_map(m, want, n));
	/* Restoring in a locked VMA populates, MAP_NONBLOCK or not. */
	ASSERT_EQ(0, show(m, 5, 1, 5));
	want[5] = NL_STAMP(5, 0);
	EXPECT_TRUE(!!(nl_pagemap(m + 5 * pg()) & PM_PRESENT)) TH_LOG("a restored page of a locked VMA must be present");
	/* MADV_DONTNEED_LOCKED drops the locked ptes, not the guards. */
	if (madvise(m, n * pg(), 24 /* MADV_DONTNEED_LOCKED */) == 0) {
		EXPECT_EQ(0, nl_count_present(m, n));
		EXPECT_EQ(0, check_map(m, want, n));
	}
	/* munlock, then lock on fault only: nothing new populated, guards intact. */
	ASSERT_EQ(0, munlock(m, n * pg()));
	ASSERT_EQ(0, madvise(m, n * pg(), MADV_DONTNEED));
	ASSERT_EQ(0, (int)syscall(__NR_mlock2, m, n * pg(), MLOCK_ONFAULT));
	EXPECT_EQ(0, nl_count_present(m, n));
	EXPECT_EQ(0, check_map(m, want, n));
	EXPECT_EQ((long)n - 15, nl_count_present(m, n));
	ASSERT_EQ(0, munmap(m, n * pg()));
	EXPECT_EQ(mlocked0, nl_mlocked_settled_kb(mlocked0, 10)) TH_LOG("Mlocked must return to its baseline");

	/* A range of guards only (first, last, all): mlock succeeds and populates nothing. */
	m = nl_map_with_hole(8 * pg(), fd);
	ASSERT_NE(MAP_FAILED, m);
	ASSERT_EQ(0, guard(m, 0, 8, 0));
	EXPECT_EQ(0, mlock(m, 8 * pg())) TH_LOG("mlock over guards only: %s", strerror(errno));
	EXPECT_EQ(0, nl_count_present(m, 8));
	EXPECT_TRUE(is_guard(m) && is_guard(m + 7 * pg()));
	EXPECT_EQ(0, munlock(m, 8 * pg()));
	ASSERT_EQ(0, munmap(m, 8 * pg()));
	close(fd);
}

/* mremap moving the VMA: the guards move with it, the old place is gone. */
TEST_F(gr, mremap_move)
{
	char *m = self->map, *dst;

	ASSERT_EQ(0, guard(m, 0, 1, 0));
	ASSERT_EQ(0, guard(m, NP - 1, 1, NP - 1));
	ASSERT_EQ(0, guard(m, 7, 3, 25));
	ASSERT_EQ(0, show(m, 12, 2, 28));
	self->want[0] = self->want[NP - 1] = self->want[7] = self->want[8] = self->want[9] = GUARD;
	self->want[12] = NL_STAMP(28, 0);
	self->want[13] = NL_STAMP(29, 0);
	ASSERT_EQ(0, check_map(m, self->want, 14)); /* half present, half entries */
	dst = mmap(NULL, NP * pg(), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, dst);
	ASSERT_EQ(dst, mremap(m, NP * pg(), NP * pg(), MREMAP_MAYMOVE | MREMAP_FIXED, dst));
	self->map = dst;
	EXPECT_TRUE(access_at(m, 'r') == SIGSEGV && nl_code == SEGV_MAPERR);
	EXPECT_EQ(0, check_map(dst, self->want, NP));
	EXPECT_NONLINEAR(dst, NP * pg());
}

/*
 * mremap growing: in place the guards stay where they were and the new
 * tail is linear; moving while growing keeps them at the same offsets
 * from the start.
 */
TEST(mremap_expand)
{
	const size_t n = 16;
	int fd = nl_memfd("gr_expand", 4 * n, true);
	uint64_t want[64];
	char *m, *m2, *dst;

	ASSERT_LE(0, fd);
	linear_want(want, 4 * n);
	m = nl_map_with_hole(2 * n * pg(), fd);
	ASSERT_NE(MAP_FAILED, m);
	ASSERT_EQ(0, munmap(m + n * pg(), n * pg())); /* room to grow in place */
	ASSERT_EQ(0, guard(m, 0, 1, 0));
	ASSERT_EQ(0, guard(m, n - 1, 1, n - 1));
	ASSERT_EQ(0, show(m, 3, 1, 40));
	want[0] = want[n - 1] = GUARD;
	want[3] = NL_STAMP(40, 0);
	m2 = mremap(m, n * pg(), 2 * n * pg(), 0);
	ASSERT_EQ(m, m2);
	EXPECT_EQ(0, check_map(m, want, 2 * n)) TH_LOG("grown in place: old guards kept, new tail linear");
	EXPECT_NONLINEAR(m, 2 * n * pg());
	/* A guard can be set in the new tail. */
	ASSERT_EQ(0, guard(m, 2 * n - 2, 1, 2 * n - 2));
	want[2 * n - 2] = GUARD;

	dst = mmap(NULL, 4 * n * pg(), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, dst);
	m2 = mremap(m, 2 * n * pg(), 4 * n * pg(), MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	ASSERT_EQ(dst, m2);
	EXPECT_EQ(0, check_map(dst, want, 4 * n));
	EXPECT_NONLINEAR(dst, 4 * n * pg());
	munmap(dst, 4 * n * pg());
	close(fd);
}

/*
 * mremap shrinking drops the guards of the cut tail: grown back, those
 * pages are linear data again; the guards of what stayed are kept.
 */
TEST_F(gr, mremap_shrink)
{
	char *m = self->map, *m2;

	ASSERT_EQ(0, guard(m, 0, 1, 0));
	ASSERT_EQ(0, guard(m, 20, 1, 20));
	ASSERT_EQ(0, guard(m, NP - 1, 1, 2));
	self->want[0] = self->want[20] = self->want[NP - 1] = GUARD;
	m2 = mremap(m, NP * pg(), 16 * pg(), 0);
	ASSERT_EQ(m, m2);
	EXPECT_EQ(0, check_map(m, self->want, 16));
	EXPECT_TRUE(access_at(m + 20 * pg(), 'r') == SIGSEGV && nl_code == SEGV_MAPERR);
	m2 = mremap(m, 16 * pg(), NP * pg(), MREMAP_MAYMOVE);
	ASSERT_NE(MAP_FAILED, m2);
	self->map = m2;
	self->want[20] = NL_STAMP(20, 0);
	self->want[NP - 1] = NL_STAMP(NP - 1, 0);
	EXPECT_EQ(0, check_map(m2, self->want, NP)) TH_LOG("the cut tail's guards must be gone");
}

/*
 * MADV_PAGEOUT, then real memory pressure: a memory cgroup with
 * memory.max = 4 MiB, a 16 MiB nonlinear mapping with every fourth page a
 * guard and the data pages reversed, written and read back twice.  The
 * pages go to swap (pswpout), every data page comes back right, every guard
 * stays a guard, no OOM kill.  Guest only (it changes the root cgroup).
 */
/* A fixture only for TEST_F_TIMEOUT: the harness has no plain TEST with a timeout. */
FIXTURE(slow)
{
	int unused;
};

FIXTURE_SETUP(slow)
{
	self->unused = 0;
}

FIXTURE_TEARDOWN(slow)
{
}

TEST_F_TIMEOUT(slow, memcg_pressure_with_guards, 150)
{
	const size_t n = 4096;
	char cg[128], path[192];
	long long out0, out1, in0, in1;
	int fd = nl_memfd("gr_memcg", n, false);
	uint64_t *want = calloc(n, sizeof(*want));
	long bad, oom;
	char *m;

	ASSERT_LE(0, fd);
	ASSERT_NE(NULL, want);
	if (nl_meminfo_kb("SwapTotal") <= 0)
		SKIP(return, "no active swap");
	m = nl_map_with_hole(n * pg(), fd);
	ASSERT_NE(MAP_FAILED, m);
	for (size_t i = 0; i < n; i++) {
		if (i % 4 == 1) {
			ASSERT_EQ(0, guard(m, i, 1, n - 1 - i));
			want[i] = GUARD;
		} else {
			ASSERT_EQ(0, show(m, i, 1, n - 1 - i));
			want[i] = NL_STAMP(n - 1 - i, 1);
		}
	}

	/* MADV_PAGEOUT of a small part first. */
	for (size_t i = 0; i < 256; i++)
		if (want[i] != GUARD)
			nl_stamp_mem(m + i * pg(), n - 1 - i, 1, false);
	out0 = nl_vmstat("pswpout");
	ASSERT_EQ(0, madvise(m, 256 * pg(), MADV_PAGEOUT));
	out1 = nl_vmstat("pswpout");
	EXPECT_LE(150, out1 - out0) TH_LOG("MADV_PAGEOUT: pswpout +%lld for 192 data pages", out1 - out0);
	EXPECT_EQ(0, check_map(m, want, 256));

	if (nl_memcg_unavailable())
		SKIP(return, "the cgroup part: %s", nl_memcg_unavailable());
	ASSERT_EQ(0, nl_memcg_enter("gr_memcg", "4M", cg, sizeof(cg)))
		TH_LOG("cgroup %s: %s", cg, strerror(errno));

	out0 = nl_vmstat("pswpout");
	in0 = nl_vmstat("pswpin");
	for (size_t i = 0; i < n; i++)
		if (want[i] != GUARD)
			nl_stamp_mem(m + i * pg(), n - 1 - i, 1, false);
	out1 = nl_vmstat("pswpout");
	TH_LOG("wrote %zu data pages under memory.max=4M: pswpout +%lld", n - n / 4, out1 - out0);
	/* 12 MiB of data through a 4 MiB limit: at least half of it must go out. */
	EXPECT_LE((long long)((n - n / 4) / 2), out1 - out0) TH_LOG("the nonlinear pages were not swapped out");
	/* Spot-check through the file, then every page through the mapping, twice. */
	for (size_t j = 0; j < n; j += 61) {
		if ((n - 1 - j) % 4 != 1) {
			EXPECT_EQ(NL_STAMP(j, 1), nl_file_word(fd, j)) TH_LOG("file page %zu", j);
		}
	}
	for (int round = 0; round < 2; round++) {
		bad = check_map(m, want, n);
		EXPECT_EQ(0, bad) TH_LOG("round %d: %ld wrong pages", round, bad);
	}
	in1 = nl_vmstat("pswpin");
	EXPECT_LT(0, in1 - in0) TH_LOG("nothing was swapped back in");
	snprintf(path, sizeof(path), "%s/memory.events", cg);
	oom = nl_cg_key(path, "oom_kill");
	EXPECT_GE(0, oom) TH_LOG("%ld OOM kills in the cgroup", oom);
	EXPECT_NONLINEAR(m, n * pg());
	/* Guards hold no page and no swap: the file has exactly the data pages. */
	ASSERT_EQ(0, munmap(m, n * pg()));
	EXPECT_EQ(0, nl_memcg_leave(cg));
	free(want);
	close(fd);
}

/*
 * userfaultfd cannot register a nonlinear VMA (EINVAL) and the guards are
 * untouched; a mapping already registered cannot get guards (the
 * emulation it falls back to has no per-page protection: EINVAL).
 */
TEST_F(gr, userfaultfd_refused)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	int uffd = (int)syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	char *lin;

	if (uffd < 0)
		SKIP(return, "userfaultfd: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api));
	ASSERT_EQ(0, guard(self->map, 4, 2, 4));
	self->want[4] = self->want[5] = GUARD;
	reg.range.start = (uintptr_t)self->map;
	reg.range.len = NP * pg();
	errno = 0;
	EXPECT_EQ(-1, ioctl(uffd, UFFDIO_REGISTER, &reg));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, check_map(self->map, self->want, NP));

	lin = mmap(NULL, NP * pg(), PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, lin);
	reg.range.start = (uintptr_t)lin;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg));
	errno = 0;
	EXPECT_EQ(-1, guard(lin, 3, 1, 3));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(1, vmas_of(lin, NP));
	EXPECT_FALSE(nl_has_vmflag(lin, "nl"));
	EXPECT_EQ(NL_STAMP(3, 0), *(volatile uint64_t *)(lin + 3 * pg()));
	munmap(lin, NP * pg());
	close(uffd);
}

/*
 * ftruncate down then up: a guard stays a guard (SIGSEGV, not SIGBUS) even
 * when its offset is past EOF; data past EOF is SIGBUS, then zero after
 * growing back (docs/kernel.md: truncation keeps the layout).
 */
TEST_F(gr, truncate_down_up)
{
	char *m = self->map;
	struct stat st;

	ASSERT_EQ(0, guard(m, 4, 1, 4));
	ASSERT_EQ(0, guard(m, 20, 1, 20));
	ASSERT_EQ(0, guard(m, 6, 1, 28));
	ASSERT_EQ(0, show(m, 10, 1, 24));
	self->want[4] = self->want[20] = self->want[6] = GUARD;
	self->want[10] = NL_STAMP(24, 0);
	ASSERT_EQ(0, check_map(m, self->want, NP));

	ASSERT_EQ(0, ftruncate(self->fd, 16 * pg()));
	self->want[10] = NL_WANT_SIGBUS;
	for (size_t i = 16; i < NP; i++)
		if (self->want[i] != GUARD)
			self->want[i] = NL_WANT_SIGBUS;
	EXPECT_EQ(0, check_map(m, self->want, NP));
	ASSERT_EQ(0, fstat(self->fd, &st));
	EXPECT_EQ((long)(16 * pg() / 512), (long)st.st_blocks);

	ASSERT_EQ(0, ftruncate(self->fd, NP * pg()));
	self->want[10] = NL_WANT_ZERO;
	for (size_t i = 16; i < NP; i++)
		if (self->want[i] != GUARD)
			self->want[i] = NL_WANT_ZERO;
	EXPECT_EQ(0, check_map(m, self->want, NP));
	/* The guards over truncated offsets come back as zero pages. */
	ASSERT_EQ(0, show(m, 20, 1, 20));
	ASSERT_EQ(0, show(m, 6, 1, 28));
	self->want[20] = self->want[6] = NL_WANT_ZERO;
	ASSERT_EQ(0, show(m, 4, 1, 4));
	self->want[4] = NL_STAMP(4, 0);
	EXPECT_EQ(0, check_map(m, self->want, NP));
	EXPECT_NONLINEAR(m, NP * pg());
}

/*
 * fallocate(PUNCH_HOLE) and MADV_REMOVE over guards and data: guards stay,
 * data in the hole reads zero wherever it is mapped, the rest keeps its
 * data; the file gives the blocks back.
 */
TEST_F(gr, punch_hole_over_guards)
{
	char *m = self->map;
	struct stat st;

	ASSERT_EQ(0, guard(m, 9, 1, 9));
	ASSERT_EQ(0, guard(m, 3, 1, 12));
	ASSERT_EQ(0, show(m, 2, 1, 14));
	self->want[9] = self->want[3] = GUARD;
	self->want[2] = NL_STAMP(14, 0);
	ASSERT_EQ(0, check_map(m, self->want, NP));
	ASSERT_EQ(0, fallocate(self->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)(8 * pg()),
			       (off_t)(8 * pg())));
	self->want[2] = NL_WANT_ZERO;
	for (size_t i = 8; i < 16; i++)
		if (self->want[i] != GUARD)
			self->want[i] = NL_WANT_ZERO;
	ASSERT_EQ(0, fstat(self->fd, &st));
	EXPECT_EQ((long)((NP - 8) * pg() / 512), (long)st.st_blocks) TH_LOG("the hole frees 8 pages");
	EXPECT_EQ(0, check_map(m, self->want, NP));

	/*
	 * MADV_REMOVE over a range holding a guard punches the pages the
	 * range shows; a guard shows none, so the page it names is kept.
	 */
	ASSERT_EQ(0, guard(m, 21, 1, 21));
	self->want[21] = GUARD;
	ASSERT_EQ(0, madvise(m + 20 * pg(), 4 * pg(), MADV_REMOVE));
	self->want[20] = self->want[22] = self->want[23] = NL_WANT_ZERO;
	EXPECT_EQ(0, check_map(m, self->want, NP));
	/* Restored guards show the punched (zero) or kept pages they name. */
	ASSERT_EQ(0, show(m, 9, 1, 9));
	ASSERT_EQ(0, show(m, 3, 1, 12));
	ASSERT_EQ(0, show(m, 21, 1, 21));
	self->want[9] = self->want[3] = NL_WANT_ZERO;
	self->want[21] = NL_STAMP(21, 0);
	EXPECT_EQ(0, check_map(m, self->want, NP));
	EXPECT_EQ(NL_STAMP(7, 0), nl_file_word(self->fd, 7));
	EXPECT_EQ(0ULL, nl_file_word(self->fd, 12));
}

/*
 * A write-sealed memfd (F_SEAL_WRITE) can only be mapped shared read-only
 * (no VM_MAYWRITE): guards work there, a restore with PROT_READ gives the
 * data back, PROT_WRITE is EACCES; the seal holds.  mseal(2) is different:
 * a sealed VMA cannot be changed at all, EPERM, and its guards stay.
 */
TEST(sealed_memfd)
{
	const size_t n = 8;
	int fd = memfd_create("gr_sealed", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	uint64_t want[8];
	char *m, *sealed;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, n * pg()));
	ASSERT_EQ(0, nl_stamp_fd(fd, 0, n, 0, true));
	linear_want(want, n);
	ASSERT_EQ(0, fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE));
	errno = 0;
	EXPECT_EQ(MAP_FAILED, mmap(NULL, n * pg(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	EXPECT_EQ(EPERM, errno);
	m = mmap(NULL, n * pg(), PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	for (size_t i = 0; i < n; i += 2) {
		ASSERT_EQ(0, guard(m, i, 1, i)) TH_LOG("guard on a write-sealed memfd: %s", strerror(errno));
		want[i] = GUARD;
	}
	for (size_t i = 0; i < n; i++) {
		if (want[i] == GUARD) {
			EXPECT_TRUE(guard_fault(m + i * pg(), 'r') && guard_fault(m + i * pg() + pg() - 1, 'r'));
		} else {
			EXPECT_EQ(0, nl_check_pages(m + i * pg(), 1, &want[i], true));
		}
	}
	errno = 0;
	EXPECT_EQ(-1, nl_remap(m, pg(), PROT_READ | PROT_WRITE, 0, MAP_CHGPROT));
	EXPECT_EQ(EACCES, errno);
	errno = 0;
	EXPECT_EQ(-1, mprotect(m, n * pg(), PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	ASSERT_EQ(0, nl_remap(m, n * pg(), PROT_READ, 0, MAP_CHGPROT));
	linear_want(want, n);
	EXPECT_EQ(0, nl_check_pages(m, n, want, true));
	for (size_t i = 0; i < n; i++) {
		EXPECT_TRUE(guard_fault(m + i * pg(), 'w')) TH_LOG("the seal must hold at page %zu", i);
	}
	EXPECT_EQ(NL_STAMP(0, 0), nl_file_word(fd, 0));
	munmap(m, n * pg());

	/* mseal: no change at all to a sealed VMA. */
	sealed = mmap(NULL, n * pg(), PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, sealed);
	ASSERT_EQ(0, guard(sealed, 1, 1, 1));
	if (syscall(__NR_mseal, sealed, n * pg(), 0)) {
		munmap(sealed, n * pg());
		close(fd);
		SKIP(return, "mseal: %s", strerror(errno));
	}
	errno = 0;
	EXPECT_EQ(-1, nl_remap(sealed + pg(), pg(), PROT_READ, 1, MAP_CHGPROT));
	EXPECT_EQ(EPERM, errno);
	errno = 0;
	EXPECT_EQ(-1, guard(sealed, 2, 1, 2));
	EXPECT_EQ(EPERM, errno);
	errno = 0;
	EXPECT_EQ(-1, munmap(sealed, n * pg()));
	EXPECT_EQ(EPERM, errno);
	EXPECT_TRUE(guard_fault(sealed + pg(), 'r'));
	EXPECT_EQ(0, nl_check_pages(sealed + 2 * pg(), 1, &want[2], true));
	close(fd); /* the sealed mapping stays until exit */
}

/*
 * PAGEMAP_SCAN (Linux 6.7 uapi, newer than the host's headers), under our
 * own names so that newer headers do not clash.
 */
struct gr_page_region {
	uint64_t start, end, categories;
};

struct gr_pm_scan_arg {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};

#define GR_PAGEMAP_SCAN _IOWR('f', 16, struct gr_pm_scan_arg)
#define GR_PAGE_IS_WRITTEN (1 << 1)
#define GR_PAGE_IS_FILE (1 << 2)
#define GR_PAGE_IS_PRESENT (1 << 3)
#define GR_PAGE_IS_SWAPPED (1 << 4)
#define GR_PAGE_IS_PFNZERO (1 << 5)
#define GR_PAGE_CATS (GR_PAGE_IS_WRITTEN | GR_PAGE_IS_FILE | GR_PAGE_IS_PRESENT | GR_PAGE_IS_SWAPPED | GR_PAGE_IS_PFNZERO)

/* PAGEMAP_SCAN categories of the page at @p (logged), or -1. */
static long long pm_scan_categories(char *p)
{
	struct gr_page_region regs[4];
	struct gr_pm_scan_arg arg = {
		.size = sizeof(arg),
		.start = (uintptr_t)p,
		.end = (uintptr_t)p + pg(),
		.vec = (uintptr_t)regs,
		.vec_len = 4,
		.category_anyof_mask = GR_PAGE_CATS,
		.return_mask = GR_PAGE_CATS,
	};
	int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	long r;

	if (pm < 0)
		return -1;
	r = ioctl(pm, GR_PAGEMAP_SCAN, &arg);
	close(pm);
	printf("# PAGEMAP_SCAN of %p: %ld region(s), categories %#llx\n", (void *)p, r,
	       r > 0 ? (unsigned long long)regs[0].categories : 0ULL);
	return r < 0 ? -1 : r == 0 ? 0 : (long long)regs[0].categories;
}

/*
 * /proc/self/pagemap reports a guard like a none pte: no present, swap or
 * file bit, no PFN (fs/proc/task_mmu.c: a nonlinear entry is "only a file
 * offset, no page").  mincore says not resident; smaps counts no Rss and
 * no Swap for it.  PAGEMAP_SCAN classifies ptes itself (not through
 * pte_to_pagemap_entry()) and must agree.
 */
TEST_F(gr, pagemap_mincore_smaps)
{
	char *m = self->map;
	unsigned char vec[NP];
	uint64_t e;
	long long cats;

	ASSERT_EQ(0, check_map(m, self->want, NP)); /* all present */
	ASSERT_EQ(0, guard(m, 2, 1, 2));
	ASSERT_EQ(0, guard(m, 7, 1, 30)); /* naming a page that is resident */
	self->want[2] = self->want[7] = GUARD;
	for (size_t i = 0; i < NP; i++) {
		e = nl_pagemap(m + i * pg());
		if (self->want[i] == GUARD) {
			EXPECT_EQ(0ULL, e & (PM_PRESENT | PM_SWAP | PM_FILE | PM_PFN_MASK))
			TH_LOG("page %zu: pagemap %#" PRIx64, i, e);
		} else {
			EXPECT_EQ(PM_PRESENT | PM_FILE, e & (PM_PRESENT | PM_SWAP | PM_FILE)) TH_LOG("page %zu", i);
			EXPECT_NE(0ULL, e & PM_PFN_MASK);
		}
	}
	ASSERT_EQ(0, mincore(m, NP * pg(), vec));
	for (size_t i = 0; i < NP; i++) {
		EXPECT_EQ(self->want[i] == GUARD ? 0 : 1, vec[i] & 1) TH_LOG("mincore page %zu", i);
	}
	EXPECT_EQ((long)((NP - 2) * pg() / 1024), nl_smaps_kb(m, "Rss"));
	EXPECT_EQ(0, nl_smaps_kb(m, "Swap"));
	/* After paging everything out the guards still report nothing. */
	ASSERT_EQ(0, madvise(m, NP * pg(), MADV_PAGEOUT));
	EXPECT_EQ(0ULL, nl_pagemap(m + 2 * pg()) & (PM_PRESENT | PM_SWAP | PM_FILE | PM_PFN_MASK));
	EXPECT_EQ(0, check_map(m, self->want, NP));

	/*
	 * PAGEMAP_SCAN of the guard at page 2: neither present nor swapped,
	 * as pagemap says (patch 7, formerly 13: before it, pagemap_page_category() took
	 * every non-none, non-present pte for a swap pte).
	 */
	cats = pm_scan_categories(m + 2 * pg());
	EXPECT_LE(0, cats);
	EXPECT_EQ(0, cats & GR_PAGE_IS_PRESENT);
	EXPECT_EQ(0, cats & GR_PAGE_IS_SWAPPED);
}

/* Child helper: wait for a byte on @rfd, then exit. */
static void child_wait(int rfd)
{
	char c;

	while (read(rfd, &c, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}

/*
 * Another process's guards, through GUP: process_vm_readv/writev EFAULT (a
 * read spanning data and then a guard stops at the guard), /proc/PID/mem
 * EIO for read and write; a guard the child set after fork is its own.
 */
TEST_F(gr, remote_gup_fails)
{
	char *m = self->map, buf[2 * 4096];
	int go[2], done[2], memfd;
	char path[64], c = 0;
	struct iovec local = { buf, 64 }, remote;
	pid_t pid;

	ASSERT_EQ(4096, (int)pg()) TH_LOG("the buffers assume 4 KiB pages");
	ASSERT_EQ(0, guard(m, 6, 1, 6));
	self->want[6] = GUARD;
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(done));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(go[1]);
		/* A guard of the child only. */
		if (guard(m, 9, 1, 9))
			_exit(2);
		if (write(done[1], &c, 1) != 1)
			_exit(3);
		child_wait(go[0]);
	}
	close(go[0]);
	ASSERT_EQ(1, read(done[0], &c, 1));

	remote.iov_base = m + 6 * pg() + 100;
	remote.iov_len = 64;
	errno = 0;
	EXPECT_EQ(-1, process_vm_readv(pid, &local, 1, &remote, 1, 0));
	EXPECT_EQ(EFAULT, errno);
	errno = 0;
	EXPECT_EQ(-1, process_vm_writev(pid, &local, 1, &remote, 1, 0));
	EXPECT_EQ(EFAULT, errno);
	/* The child's own guard at 9; the parent's page 9 is data. */
	remote.iov_base = m + 9 * pg();
	errno = 0;
	EXPECT_EQ(-1, process_vm_readv(pid, &local, 1, &remote, 1, 0));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(NL_STAMP(9, 0), *(volatile uint64_t *)(m + 9 * pg()));
	/* Our own guard as the local buffer: EFAULT as well. */
	local.iov_base = m + 6 * pg();
	remote.iov_base = m + 7 * pg();
	errno = 0;
	EXPECT_EQ(-1, process_vm_readv(pid, &local, 1, &remote, 1, 0));
	EXPECT_EQ(EFAULT, errno);
	local.iov_base = buf;
	/* Data page 5 then guard 6: a partial read, up to the guard. */
	remote.iov_base = m + 5 * pg();
	remote.iov_len = 2 * pg();
	local.iov_len = 2 * pg();
	EXPECT_EQ((ssize_t)pg(), process_vm_readv(pid, &local, 1, &remote, 1, 0));
	EXPECT_EQ(NL_STAMP(5, 0), *(uint64_t *)(buf + pg() - 8));

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	memfd = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, memfd);
	errno = 0;
	EXPECT_EQ(-1, pread(memfd, buf, 64, (off_t)(uintptr_t)(m + 6 * pg())));
	EXPECT_EQ(EIO, errno);
	errno = 0;
	EXPECT_EQ(-1, pwrite(memfd, buf, 64, (off_t)(uintptr_t)(m + 6 * pg() + pg() - 64)));
	EXPECT_EQ(EIO, errno);
	EXPECT_EQ(64, pread(memfd, buf, 64, (off_t)(uintptr_t)(m + 7 * pg())));
	EXPECT_EQ(NL_STAMP(7, 0), *(uint64_t *)buf);
	/* A read across data into a guard stops at the guard. */
	EXPECT_EQ(128, pread(memfd, buf, 256, (off_t)(uintptr_t)(m + 6 * pg() - 128)));
	close(memfd);
	close(go[1]);
	ASSERT_EQ(pid, waitpid(pid, NULL, 0));
	close(done[0]);
	close(done[1]);
	EXPECT_EQ(0, check_map(m, self->want, NP));
	EXPECT_EQ(NL_STAMP(6, 0), nl_file_word(self->fd, 6)) TH_LOG("process_vm_writev must not reach the file");
}

/* ptrace PEEKDATA and POKEDATA on a guard of the tracee: EIO. */
TEST_F(gr, ptrace_peek_poke_eio)
{
	char *m = self->map;
	int status;
	long v;
	pid_t pid;

	ASSERT_EQ(0, guard(m, 3, 1, 3));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(2);
		raise(SIGSTOP);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, WUNTRACED));
	ASSERT_TRUE(WIFSTOPPED(status));
	errno = 0;
	v = ptrace(PTRACE_PEEKDATA, pid, m + 3 * pg() + 8, NULL);
	EXPECT_EQ(-1, v);
	EXPECT_EQ(EIO, errno);
	errno = 0;
	EXPECT_EQ(-1, ptrace(PTRACE_POKEDATA, pid, m + 3 * pg(), (void *)0x1234L));
	EXPECT_EQ(EIO, errno);
	errno = 0;
	v = ptrace(PTRACE_PEEKDATA, pid, m + 4 * pg(), NULL);
	EXPECT_EQ(0, errno);
	EXPECT_EQ((long)NL_STAMP(4, 0), v);
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(NL_STAMP(3, 0), nl_file_word(self->fd, 3));
}

/* errno of get_mempolicy(MPOL_F_NODE | MPOL_F_ADDR) at @p, 0 on success. */
static int node_of(void *p)
{
	int node = -1;

	return syscall(SYS_get_mempolicy, &node, NULL, 0UL, p, 3UL) ? errno : 0;
}

/*
 * futex on a guard address: EFAULT for WAIT (shared and private) and a
 * shared WAKE; get_mempolicy of the guard's node: EFAULT.
 */
TEST_F(gr, futex_on_guard_efault)
{
	char *m = self->map;
	struct timespec ts = { 0, 1000000 };
	uint32_t *g = (uint32_t *)(m + 8 * pg() + 64), *d = (uint32_t *)(m + 9 * pg());

	ASSERT_EQ(0, guard(m, 8, 1, 8));
	errno = 0;
	EXPECT_EQ(-1, syscall(SYS_futex, g, FUTEX_WAIT, 0, &ts, NULL, 0));
	EXPECT_EQ(EFAULT, errno);
	errno = 0;
	EXPECT_EQ(-1, syscall(SYS_futex, g, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0));
	EXPECT_EQ(EFAULT, errno);
	errno = 0;
	EXPECT_EQ(-1, syscall(SYS_futex, g, FUTEX_WAKE, 1, NULL, NULL, 0));
	EXPECT_EQ(EFAULT, errno);
	/* A data page: the value differs, EAGAIN, as always. */
	errno = 0;
	EXPECT_EQ(-1, syscall(SYS_futex, d, FUTEX_WAIT, 0, &ts, NULL, 0));
	EXPECT_EQ(EAGAIN, errno);
	/* get_mempolicy(MPOL_F_NODE | MPOL_F_ADDR) looks the page up by GUP as well. */
	EXPECT_EQ(EFAULT, node_of(g));
	EXPECT_EQ(0, node_of(d));
}

/*
 * A guard as a syscall buffer: read() into it and write() from it EFAULT,
 * vmsplice EFAULT, an O_DIRECT read into it EFAULT (from the guest's
 * block device: tmpfs and the 9p root do not do O_DIRECT).  Nothing is
 * written to the file page behind the guard.
 */
TEST_F(gr, guard_as_io_buffer_efault)
{
	const char *dev = getenv("NL_ODIRECT_DEV") ?: "/dev/vda";
	char *m = self->map, *g = m + 5 * pg();
	struct iovec iov = { g, pg() };
	int p[2], dfd;

	ASSERT_EQ(0, guard(m, 5, 1, 5));
	self->want[5] = GUARD;
	errno = 0;
	EXPECT_EQ(-1, pread(self->fd, g, pg(), 0));
	EXPECT_EQ(EFAULT, errno);
	errno = 0;
	EXPECT_EQ(-1, pwrite(self->fd, g, pg(), (off_t)(20 * pg())));
	EXPECT_EQ(EFAULT, errno);
	/* A buffer of a data page and then the guard: a short read and write, up to the guard. */
	EXPECT_EQ((ssize_t)pg(), pread(self->fd, g - pg(), 2 * pg(), (off_t)(4 * pg())));
	EXPECT_EQ((ssize_t)pg(), pwrite(self->fd, g - pg(), 2 * pg(), (off_t)(4 * pg())));
	ASSERT_EQ(0, pipe(p));
	errno = 0;
	EXPECT_EQ(-1, vmsplice(p[1], &iov, 1, 0));
	EXPECT_EQ(EFAULT, errno);
	close(p[0]);
	close(p[1]);

	dfd = open(dev, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (dfd >= 0) {
		errno = 0;
		EXPECT_EQ(-1, pread(dfd, g, pg(), 0));
		EXPECT_EQ(EFAULT, errno);
		/* The same read into a data page works (sanity), then the stamp goes back. */
		EXPECT_EQ((ssize_t)pg(), pread(dfd, m + 6 * pg(), pg(), 0));
		EXPECT_NE(NL_STAMP(6, 0), nl_file_word(self->fd, 6));
		nl_stamp_mem(m + 6 * pg(), 6, 0, true);
		close(dfd);
	} else {
		TH_LOG("no O_DIRECT read (%s: %s): only the buffered cases ran", dev, strerror(errno));
	}
	EXPECT_EQ(NL_STAMP(5, 0), nl_file_word(self->fd, 5));
	EXPECT_EQ(NL_STAMP(20, 0), nl_file_word(self->fd, 20));
	EXPECT_EQ(0, check_map(m, self->want, NP));
	if (dfd < 0)
		SKIP(return, "O_DIRECT part skipped: no block device %s", dev);
}

/*
 * A core dump skips guards: a child with guards in a memfd mapping dies of
 * SIGSEGV on one; in its core, the mapping's PT_LOAD segment holds every
 * data page (a remapped one with the file page it shows) and zeroes for
 * the guards (get_dump_page() fails there).
 * Guest only: sets kernel.core_pattern.
 */
TEST(core_dump_skips_guards)
{
	const size_t n = 8;
	char pattern[256] = "", core[64], *m;
	int fd = nl_memfd("gr_core", n, true), cfd, status, pfd;
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	bool found = false;
	pid_t pid;

	ASSERT_LE(0, fd);
	if (!getenv("MEMDBG_GUEST"))
		SKIP(return, "changes kernel.core_pattern: only in a memdbg guest (MEMDBG_GUEST=1)");
	pfd = open("/proc/sys/kernel/core_pattern", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, pfd);
	ASSERT_LT(0, read(pfd, pattern, sizeof(pattern) - 1));
	ASSERT_EQ(0, nl_write_file("/proc/sys/kernel/core_pattern", "/tmp/gr_core.%p"));
	m = mmap(NULL, n * pg(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	ASSERT_EQ(0, guard(m, 2, 1, 2));
	ASSERT_EQ(0, guard(m, 5, 2, 1));
	ASSERT_EQ(0, show(m, 3, 1, 7)); /* a remapped page, never faulted in */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

		setrlimit(RLIMIT_CORE, &rl);
		prctl(PR_SET_DUMPABLE, 1);
		signal(SIGSEGV, SIG_DFL);
		(void)*(volatile char *)(m + 5 * pg() + 1);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	lseek(pfd, 0, SEEK_SET);
	(void)!write(pfd, pattern, strlen(pattern));
	close(pfd);
	ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV) TH_LOG("status %#x", status);
	EXPECT_TRUE(WCOREDUMP(status));
	snprintf(core, sizeof(core), "/tmp/gr_core.%d", pid);
	cfd = open(core, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, cfd) TH_LOG("no core file %s", core);
	ASSERT_EQ((ssize_t)sizeof(eh), pread(cfd, &eh, sizeof(eh), 0));
	ASSERT_EQ(0, memcmp(eh.e_ident, ELFMAG, SELFMAG));
	ASSERT_EQ(ET_CORE, eh.e_type);
	for (int i = 0; i < eh.e_phnum; i++) {
		ASSERT_EQ((ssize_t)sizeof(ph), pread(cfd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))));
		if (ph.p_type != PT_LOAD || ph.p_vaddr != (uintptr_t)m)
			continue;
		found = true;
		EXPECT_EQ(n * pg(), ph.p_filesz) TH_LOG("the memfd mapping is dumped whole (anonymous shared)");
		for (size_t j = 0; j < n && j * pg() < ph.p_filesz; j++) {
			uint64_t w[3];
			bool is_g = j == 2 || j == 5 || j == 6;

			ASSERT_EQ(8, pread(cfd, &w[0], 8, (off_t)(ph.p_offset + j * pg())));
			ASSERT_EQ(8, pread(cfd, &w[1], 8, (off_t)(ph.p_offset + j * pg() + pg() / 2)));
			ASSERT_EQ(8, pread(cfd, &w[2], 8, (off_t)(ph.p_offset + (j + 1) * pg() - 8)));
			for (int k = 0; k < 3; k++) {
				EXPECT_EQ(is_g ? 0ULL : NL_STAMP(j == 3 ? 7 : j, 0), w[k])
				TH_LOG("core page %zu word %d", j, k);
			}
		}
	}
	EXPECT_TRUE(found) TH_LOG("no PT_LOAD for the mapping at %p", m);
	close(cfd);
	unlink(core);
	munmap(m, n * pg());
	close(fd);
}

/*
 * The signal for each kind of access at the first and the last byte of a
 * guard in an executable mapping: read, write and instruction fetch all
 * get SIGSEGV with SEGV_ACCERR and si_addr = the byte.  An instruction
 * running off the end of a data page into a guard faults at the guard's
 * first byte.
 */
TEST(signal_codes_read_write_exec)
{
	const size_t n = 8;
	int fd = nl_memfd("gr_exec", n, false);
	char *m, *g, *last;

	ASSERT_LE(0, fd);
	m = mmap(NULL, n * pg(), PROT_READ | PROT_WRITE | PROT_EXEC, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		SKIP(return, "no executable memfd mapping: %s", strerror(errno));
	/* Data page 3: "ret" at its start, "nop" as its last byte, then the guard. */
	memset(m + 3 * pg(), 0xc3, pg());
	m[4 * pg() - 1] = (char)0x90;
	ASSERT_EQ(0, nl_remap(m + 4 * pg(), 2 * pg(), PROT_NONE, 4, MAP_CHGPROT));
	g = m + 4 * pg();
	last = m + 6 * pg() - 1; /* the last byte of the second guard page */

	EXPECT_EQ(0, access_at(m + 3 * pg(), 'x')) TH_LOG("executing the data page must work");
	for (int k = 0; k < 3; k++) {
		int kind = "rwx"[k];

		EXPECT_TRUE(guard_fault(g, kind)) TH_LOG("%c at the first byte", kind);
		EXPECT_TRUE(guard_fault(g + pg() - 1, kind)) TH_LOG("%c at the last byte of the first guard", kind);
		EXPECT_TRUE(guard_fault(g + pg(), kind)) TH_LOG("%c at the first byte of the second guard", kind);
		EXPECT_TRUE(guard_fault(last, kind)) TH_LOG("%c at the last byte", kind);
	}
	/* nop at the last byte of page 3, then the fetch runs into the guard. */
	EXPECT_EQ(SIGSEGV, access_at(m + 4 * pg() - 1, 'x'));
	EXPECT_EQ(SEGV_ACCERR, nl_code);
	EXPECT_EQ((void *)g, nl_fault_addr);
	/* Bytes around the guard are untouched and still executable. */
	EXPECT_EQ(0, access_at(m + 6 * pg(), 'r'));
	ASSERT_EQ(0, nl_remap(g, 2 * pg(), PROT_READ | PROT_WRITE | PROT_EXEC, 4, MAP_CHGPROT));
	EXPECT_EQ(0, access_at(g, 'w'));
	EXPECT_EQ(0x5a, *(volatile char *)g);
	munmap(m, n * pg());
	close(fd);
}

/*
 * Guards over transparent huge pages: on a huge=always tmpfs the mapping
 * is PMD-mapped until the first guard; guards inside a large folio, data
 * faults next to them, MADV_PAGEOUT, a hole punch inside the huge page and
 * a truncation through it keep every guard and every page right.  Guest
 * only (mounts a tmpfs in a private mount namespace).
 */
TEST(thp_tmpfs_guards)
{
	const size_t huge = 2 << 20, len = 2 * huge, n = len / pg();
	char dir[] = "/tmp/gr_thp.XXXXXX", path[64];
	uint64_t *want = calloc(n, sizeof(*want));
	long pmd;
	char *r, *m;
	int fd;

	ASSERT_NE(NULL, want);
	if (!getenv("MEMDBG_GUEST"))
		SKIP(return, "mounts a tmpfs: only in a memdbg guest (MEMDBG_GUEST=1)");
	if (!mkdtemp(dir))
		SKIP(return, "mkdtemp: %s", strerror(errno));
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("gr_thp", dir, "tmpfs", 0, "huge=always,size=16m")) {
		rmdir(dir);
		SKIP(return, "cannot mount a huge=always tmpfs: %s", strerror(errno));
	}
	snprintf(path, sizeof(path), "%s/f", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, (off_t)len));
	r = mmap(NULL, len + huge, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, r);
	m = (char *)(((uintptr_t)r + huge - 1) & ~(uintptr_t)(huge - 1));
	ASSERT_EQ(m, mmap(m, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0));
	for (size_t i = 0; i < n; i++) {
		nl_stamp_mem(m + i * pg(), i, 0, false);
		want[i] = NL_STAMP(i, 0);
	}
	pmd = nl_smaps_kb(m, "ShmemPmdMapped");
	if (pmd <= 0) {
		umount2(dir, MNT_DETACH);
		SKIP(return, "no PMD-mapped shmem THP here (THP off?)");
	}
	/* Guards inside both huge pages, one naming the other half. */
	ASSERT_EQ(0, guard(m, 7, 1, 7));
	ASSERT_EQ(0, guard(m, 300, 3, 300));
	ASSERT_EQ(0, guard(m, 600, 1, 20));
	want[7] = want[300] = want[301] = want[302] = want[600] = GUARD;
	EXPECT_EQ(0, nl_smaps_kb(m, "ShmemPmdMapped")) TH_LOG("a nonlinear VMA must not stay PMD-mapped");
	EXPECT_EQ(0, check_map(m, want, n));
	/* Drop the ptes and fault the neighbours of the guards only. */
	ASSERT_EQ(0, madvise(m, len, MADV_DONTNEED));
	EXPECT_EQ(0, nl_check_pages(m + 6 * pg(), 1, &want[6], false));
	EXPECT_EQ(0, nl_check_pages(m + 8 * pg(), 1, &want[8], false));
	EXPECT_EQ(0, check_map(m, want, n));
	ASSERT_EQ(0, madvise(m, len, MADV_PAGEOUT));
	EXPECT_EQ(0, check_map(m, want, n));
	/* A hole punched inside the first huge page, around a guard. */
	ASSERT_EQ(0, fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)(4 * pg()), (off_t)(8 * pg())));
	for (size_t i = 4; i < 12; i++)
		if (want[i] != GUARD)
			want[i] = NL_WANT_ZERO;
	EXPECT_EQ(0, check_map(m, want, n));
	/* Truncated in the middle of the second huge page: beyond is SIGBUS, guards stay. */
	ASSERT_EQ(0, ftruncate(fd, (off_t)(n - 200) * (off_t)pg()));
	for (size_t i = n - 200; i < n; i++)
		if (want[i] != GUARD)
			want[i] = NL_WANT_SIGBUS;
	ASSERT_EQ(0, guard(m, n - 1, 1, n - 1)); /* a guard beyond EOF */
	want[n - 1] = GUARD;
	EXPECT_EQ(0, check_map(m, want, n));
	EXPECT_EQ(0, nl_smaps_kb(m, "ShmemPmdMapped"));
	EXPECT_NONLINEAR(m, len);
	munmap(r, len + huge);
	close(fd);
	umount2(dir, MNT_DETACH);
	free(want);
}

/*
 * mremap of single pages out of a nonlinear VMA: a guard page and a
 * remapped data page each moved alone keep what they are; with
 * MREMAP_DONTUNMAP the old place stays mapped but loses its ptes, so it
 * shows its linear file page again (the layout lived in the ptes).
 */
TEST_F(gr, mremap_single_pages_and_dontunmap)
{
	char *m = self->map, *dst;

	ASSERT_EQ(0, guard(m, 4, 1, 4));
	ASSERT_EQ(0, show(m, 5, 1, 30));
	self->want[4] = GUARD;
	self->want[5] = NL_STAMP(30, 0);
	ASSERT_EQ(0, check_map(m, self->want, NP));
	dst = mmap(NULL, 4 * pg(), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, dst);
	ASSERT_EQ(dst, mremap(m + 4 * pg(), pg(), pg(), MREMAP_MAYMOVE | MREMAP_FIXED, dst));
	ASSERT_EQ(dst + pg(), mremap(m + 5 * pg(), pg(), pg(), MREMAP_MAYMOVE | MREMAP_FIXED, dst + pg()));
	EXPECT_TRUE(is_guard(dst));
	EXPECT_EQ(0, nl_check_pages(dst + pg(), 1, &self->want[5], true));
	EXPECT_EQ(SIGSEGV, access_at(m + 4 * pg(), 'r'));
	EXPECT_EQ(SEGV_MAPERR, nl_code) TH_LOG("the guard's old place is unmapped");
	EXPECT_EQ(2, vmas_of(m, NP)) TH_LOG("[0,4) and [6,32) remain");
	/* Back where they were (adjacent VMAs with the right offsets). */
	ASSERT_EQ(m + 4 * pg(), mremap(dst, 2 * pg(), 2 * pg(), MREMAP_MAYMOVE | MREMAP_FIXED, m + 4 * pg()));
	EXPECT_EQ(0, check_map(m, self->want, NP));

	/* MREMAP_DONTUNMAP: the ptes (guard included) move, the old VMA stays empty. */
	ASSERT_EQ(0, guard(m, 20, 1, 20));
	self->want[20] = GUARD;
	dst = mmap(NULL, NP * pg(), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, dst);
	if (mremap(m + 16 * pg(), 8 * pg(), 8 * pg(), MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, dst) != dst) {
		TH_LOG("MREMAP_DONTUNMAP on a shared mapping: %s", strerror(errno));
		EXPECT_EQ(EINVAL, errno);
		EXPECT_EQ(0, check_map(m, self->want, NP));
		return;
	}
	EXPECT_TRUE(is_guard(dst + 4 * pg()));
	for (size_t i = 16; i < 24; i++) {
		uint64_t lin = NL_STAMP(i, 0);

		if (i != 20)
			EXPECT_EQ(0, nl_check_pages(dst + (i - 16) * pg(), 1, &self->want[i], false));
		/* The old place: plain linear pages, the guard gone with the ptes. */
		EXPECT_EQ(0, nl_check_pages(m + i * pg(), 1, &lin, false)) TH_LOG("old page %zu", i);
	}
	munmap(dst, NP * pg());
}

/*
 * The other /proc page-table walkers over guards: clear_refs (referenced
 * and soft-dirty), numa_maps, smaps_rollup, and a soft-dirty round trip;
 * none may disturb a guard or a page.
 */
TEST_F(gr, proc_walkers_leave_guards)
{
	char *m = self->map, buf[4096];
	int fd;
	ssize_t len;

	for (size_t i = 1; i < NP; i += 4) {
		ASSERT_EQ(0, guard(m, i, 1, i));
		self->want[i] = GUARD;
	}
	ASSERT_EQ(0, show(m, 2, 1, 29));
	self->want[2] = NL_STAMP(29, 0);
	ASSERT_EQ(0, check_map(m, self->want, NP));
	for (const char *v = "1\0" "4\0" "5\0"; *v; v += 2) {
		/* 1: referenced bits, 4: soft-dirty, 5: the mm's peak RSS */
		fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
		ASSERT_LE(0, fd);
		EXPECT_EQ(1, write(fd, v, 1)) TH_LOG("clear_refs %s: %s", v, strerror(errno));
		close(fd);
		EXPECT_EQ(0, check_map(m, self->want, NP)) TH_LOG("after clear_refs %s", v);
	}
	/*
	 * A write after the clearing reaches the right file page.  (Whether
	 * pagemap's soft-dirty bit 55 follows depends on CONFIG_MEM_SOFT_DIRTY,
	 * off in the project's guest kernels: not asserted.)
	 */
	nl_stamp_mem(m + 2 * pg(), 29, 4, false);
	self->want[2] = NL_STAMP(29, 4);
	EXPECT_EQ(0ULL, nl_pagemap(m + pg()) & (PM_PRESENT | PM_SWAP | PM_PFN_MASK));
	fd = open("/proc/self/numa_maps", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		while ((len = read(fd, buf, sizeof(buf))) > 0)
			;
		EXPECT_EQ(0, len);
		close(fd);
	}
	fd = open("/proc/self/smaps_rollup", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	while ((len = read(fd, buf, sizeof(buf))) > 0)
		;
	EXPECT_EQ(0, len);
	close(fd);
	EXPECT_EQ(0, check_map(m, self->want, NP));
	EXPECT_EQ(NL_STAMP(29, 4), nl_file_word(self->fd, 29));
}

/*
 * swapoff with guards and swapped-out nonlinear pages: the shmem pages come
 * back into memory (shmem_unuse) and the nonlinear entries, guards
 * included, are left alone (their type is never a swap type).  Guest only:
 * turns the guest's swap off and on again.
 */
TEST(swapoff_with_guards)
{
	const char *dev = getenv("NL_SWAP_DEV") ?: "/dev/vda";
	const size_t n = 256;
	int fd = nl_memfd("gr_swapoff", n, true);
	uint64_t want[256];
	long swapped;
	char *m;

	ASSERT_LE(0, fd);
	if (!getenv("MEMDBG_GUEST"))
		SKIP(return, "turns swap off: only in a memdbg guest (MEMDBG_GUEST=1)");
	if (nl_meminfo_kb("SwapTotal") <= 0)
		SKIP(return, "no active swap");
	m = nl_map_with_hole(n * pg(), fd);
	ASSERT_NE(MAP_FAILED, m);
	for (size_t i = 0; i < n; i++) {
		if (i % 5 == 2) {
			ASSERT_EQ(0, guard(m, i, 1, n - 1 - i));
			want[i] = GUARD;
		} else {
			ASSERT_EQ(0, show(m, i, 1, n - 1 - i));
			want[i] = NL_STAMP(n - 1 - i, 0);
		}
	}
	ASSERT_EQ(0, check_map(m, want, n));
	ASSERT_EQ(0, madvise(m, n * pg(), MADV_PAGEOUT));
	swapped = nl_meminfo_kb("SwapTotal") - nl_meminfo_kb("SwapFree");
	TH_LOG("%ld kB in swap before swapoff", swapped);
	ASSERT_EQ(0, swapoff(dev)) TH_LOG("swapoff %s: %s", dev, strerror(errno));
	EXPECT_EQ(0, nl_meminfo_kb("SwapTotal"));
	EXPECT_EQ(0, check_map(m, want, n));
	EXPECT_EQ(0, swapon(dev, 0)) TH_LOG("swapon %s: %s", dev, strerror(errno));
	ASSERT_EQ(0, madvise(m, n * pg(), MADV_PAGEOUT));
	EXPECT_EQ(0, check_map(m, want, n));
	EXPECT_NONLINEAR(m, n * pg());
	munmap(m, n * pg());
	close(fd);
}

/*
 * KERNEL BUG (found by this suite, reported, not fixed here): MADV_REMOVE
 * on a nonlinear VMA punches the *linear* file range of the addresses
 * (mm/madvise.c madvise_remove(): offset = start - vm_start + vm_pgoff),
 * not the file pages those addresses show.  So it frees pages shown at
 * other addresses (their data reads zero) and leaves the pages shown in the
 * range allocated.  Linux 2.6-3.x refused MADV_REMOVE on VM_NONLINEAR
 * vmas (EINVAL).  This test accepts either EINVAL with nothing changed
 * (3.x) or a punch of the pages shown; it fails on the current kernel.
 */
TEST(madv_remove_nonlinear_offsets)
{
	const size_t n = 4;
	int fd = nl_memfd("gr_madv_remove", n, true);
	uint64_t w0, w3;
	char *m;
	int ret;

	ASSERT_LE(0, fd);
	m = nl_map_with_hole(n * pg(), fd);
	ASSERT_NE(MAP_FAILED, m);
	/* Address 0 shows file page 3 and address 3 file page 0. */
	ASSERT_EQ(0, show(m, 0, 1, 3));
	ASSERT_EQ(0, show(m, 3, 1, 0));
	errno = 0;
	ret = madvise(m, pg(), MADV_REMOVE); /* "free the page at address 0" */
	w0 = *(volatile uint64_t *)m;
	w3 = *(volatile uint64_t *)(m + 3 * pg());
	TH_LOG("MADV_REMOVE of address 0 (showing file page 3): %s; address 0 now %#" PRIx64
	       ", address 3 (file page 0) %#" PRIx64,
	       ret ? strerror(errno) : "0", w0, w3);
	if (ret) {
		EXPECT_EQ(EINVAL, errno);
		EXPECT_EQ(NL_STAMP(3, 0), w0);
		EXPECT_EQ(NL_STAMP(0, 0), w3);
	} else {
		EXPECT_EQ(NL_STAMP(0, 0), w3)
		TH_LOG("KERNEL BUG: MADV_REMOVE on a nonlinear VMA punched file page 0, shown at another address");
		EXPECT_EQ(0ULL, w0) TH_LOG("KERNEL BUG: the file page shown at the removed address was not punched");
	}
	munmap(m, n * pg());
	close(fd);
}

NL_HARNESS_MAIN
