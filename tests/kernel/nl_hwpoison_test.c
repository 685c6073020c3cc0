// SPDX-License-Identifier: GPL-2.0
/*
 * Memory failure in nonlinear mappings.  A poisoned
 * file page shown at a nonlinear address must:
 *   - be reported there: the SIGBUS of MADV_HWPOISON (BUS_MCEERR_AR for
 *     the caller, BUS_MCEERR_AO for an early-kill process) and of a later
 *     access name the nonlinear address, not the page's linear one;
 *   - keep the layout: neither the poisoning nor a later MADV_DONTNEED or
 *     truncation may make the address show its linear page, and a
 *     MAP_CHGPROT read-only page never becomes writable;
 *   - survive soft offlining (migration) at its place, read-only.
 * Needs CONFIG_MEMORY_FAILURE and CAP_SYS_ADMIN (skipped otherwise).
 * Every test poisons one page of the guest for good (HardwareCorrupted).
 */
#include <sys/prctl.h>
#include <sys/wait.h>

#include "nonlinear_util.h" /* includes kselftest_harness.h */

#ifndef MADV_HWPOISON
#define MADV_HWPOISON 100
#endif
#ifndef MADV_SOFT_OFFLINE
#define MADV_SOFT_OFFLINE 101
#endif
#ifndef BUS_MCEERR_AR
#define BUS_MCEERR_AR 4
#endif
#ifndef BUS_MCEERR_AO
#define BUS_MCEERR_AO 5
#endif

#define N 8
/* The page at address 0 shows file page NL_OFF (its linear place: page NL_OFF). */
#define NL_OFF 5

NL_MEMFD_FIXTURE(hwp, "nl_hwpoison", N)

/* Memory failure is configured (the sysctl exists) and we may inject it. */
static bool memory_failure_available(void)
{
	return geteuid() == 0 && access("/proc/sys/vm/memory_failure_recovery", F_OK) == 0;
}

#define SKIP_WITHOUT_MEMORY_FAILURE()                                                        \
	do {                                                                                 \
		if (!memory_failure_available())                                             \
			SKIP(return, "no CONFIG_MEMORY_FAILURE or not root: no MADV_HWPOISON"); \
	} while (0)

/*
 * madvise(@p, page, @advice), catching the SIGBUS memory failure sends to
 * the caller (MF_ACTION_REQUIRED): returns the signal (0 if none), its
 * si_code and si_addr in nl_code and nl_fault_addr; *@ret = madvise's value.
 */
static int madvise_catching(void *p, int advice, volatile int *ret)
{
	struct nl_sigsave save;
	int sig = 0;

	nl_catch(&save);
	nl_sig = 0;
	*ret = 0;
	if (sigsetjmp(nl_jmp, 0) == 0)
		*ret = madvise(p, nl_pagesize(), advice);
	else
		sig = nl_sig;
	nl_uncatch(&save);
	return sig;
}

/* An access to @p must raise SIGBUS BUS_MCEERR_AR at @p exactly. */
#define EXPECT_POISONED(p, write)                                                             \
	do {                                                                                  \
		uint64_t v_ = 0;                                                              \
		int sig_ = nl_probe((p), &v_, (write), 0x5a5a);                               \
		EXPECT_EQ(SIGBUS, sig_) TH_LOG("%s %p: got %#" PRIx64 ", signal %d", \
					       (write) ? "write" : "read", (void *)(p), v_, sig_); \
		if (sig_ == SIGBUS) {                                                         \
			EXPECT_EQ(BUS_MCEERR_AR, nl_code);                                    \
			EXPECT_EQ((void *)(p), nl_fault_addr);                                \
		}                                                                             \
	} while (0)

/*
 * The SIGBUS of MADV_HWPOISON, if any, and every later access name the
 * nonlinear address; MADV_DONTNEED keeps the layout (it exposed linear
 * page 0); the page's linear place shows the poison too; others are intact.
 */
TEST_F(hwp, poisoned_nonlinear_page_sigbus_at_its_address)
{
	char *p = self->map;
	volatile int ret;
	uint64_t v = 0;
	int sig;

	SKIP_WITHOUT_MEMORY_FAILURE();
	ASSERT_EQ(0, nl_remap(p, self->page, 0, NL_OFF, 0));
	ASSERT_EQ(0, nl_probe(p, &v, false, 0));
	ASSERT_EQ(NL_STAMP(NL_OFF, 0), v);

	sig = madvise_catching(p, MADV_HWPOISON, &ret);
	EXPECT_EQ(0, ret) TH_LOG("MADV_HWPOISON: %s", strerror(errno));
	if (sig) {
		EXPECT_EQ(SIGBUS, sig);
		EXPECT_EQ(BUS_MCEERR_AR, nl_code);
		EXPECT_EQ((void *)p, nl_fault_addr)
			TH_LOG("SIGBUS named %p, the page's linear address is %p",
			       nl_fault_addr, p + NL_OFF * self->page);
	}
	EXPECT_POISONED(p, false);
	EXPECT_POISONED(p, true);
	EXPECT_POISONED(p + NL_OFF * self->page, false);

	EXPECT_EQ(0, madvise(p, self->page, MADV_DONTNEED));
	EXPECT_POISONED(p, false);
	EXPECT_POISONED(p + 3, false); /* any word of the page, exact address */

	/* The other pages, linear, read their data. */
	self->want[0] = self->want[NL_OFF] = NL_WANT_SIGBUS;
	EXPECT_EQ(0, nl_check_pages(p, N, self->want, false));
	EXPECT_NONLINEAR(p, N * self->page);
}

/*
 * A read-only page (MAP_CHGPROT) poisoned: a write is an access error
 * before and after MADV_DONTNEED (the hwpoison entry used to lose the
 * protection and the layout: the write landed in file page 0).
 */
TEST_F(hwp, poisoned_readonly_page_never_writable)
{
	char *p = self->map;
	volatile int ret;
	int round;

	SKIP_WITHOUT_MEMORY_FAILURE();
	ASSERT_EQ(0, nl_remap(p, self->page, PROT_READ, NL_OFF, MAP_CHGPROT));
	ASSERT_EQ(0, nl_probe(p, NULL, false, 0));
	madvise_catching(p, MADV_HWPOISON, &ret);
	EXPECT_EQ(0, ret);

	for (round = 0; round < 2; round++) {
		uint64_t v = 0;
		int sig = nl_probe(p, &v, true, 0x5a5a);

		EXPECT_EQ(SIGSEGV, sig) TH_LOG("round %d: write to the read-only page: signal %d", round, sig);
		if (sig == SIGSEGV) {
			EXPECT_EQ(SEGV_ACCERR, nl_code);
			EXPECT_EQ((void *)p, nl_fault_addr);
		}
		EXPECT_POISONED(p, false);
		EXPECT_EQ(0, madvise(p, self->page, MADV_DONTNEED));
	}
	EXPECT_EQ(NL_STAMP(0, 0), nl_file_word(self->fd, 0));
	EXPECT_NONLINEAR(p, N * self->page);
}

/*
 * Truncation over the poisoned page keeps the entry: the address raises
 * SIGBUS beyond EOF and, once the file grows again, shows the new (zero)
 * page at that offset, never linear file page 0.
 */
TEST_F(hwp, truncation_after_poison_keeps_layout)
{
	char *p = self->map;
	volatile int ret;
	uint64_t v = 1;
	int sig;

	SKIP_WITHOUT_MEMORY_FAILURE();
	ASSERT_EQ(0, nl_remap(p, self->page, 0, NL_OFF, 0));
	ASSERT_EQ(0, nl_probe(p, NULL, false, 0));
	madvise_catching(p, MADV_HWPOISON, &ret);
	EXPECT_EQ(0, ret);

	ASSERT_EQ(0, ftruncate(self->fd, (off_t)(NL_OFF * self->page)));
	sig = nl_probe(p, &v, false, 0);
	EXPECT_EQ(SIGBUS, sig) TH_LOG("after truncation: read %#" PRIx64, v);
	if (sig == SIGBUS)
		EXPECT_EQ(BUS_ADRERR, nl_code);

	ASSERT_EQ(0, ftruncate(self->fd, (off_t)(N * self->page)));
	v = 1;
	EXPECT_EQ(0, nl_probe(p, &v, false, 0));
	EXPECT_EQ(NL_WANT_ZERO, v) TH_LOG("got %#" PRIx64 " (linear page 0 is %#" PRIx64 ")",
					  v, (uint64_t)NL_STAMP(0, 0));
	EXPECT_NONLINEAR(p, N * self->page);
}

/*
 * An early-kill process (PR_MCE_KILL_EARLY) that shows the page at a
 * nonlinear address gets BUS_MCEERR_AO naming that address when another
 * process poisons the page through its linear mapping.
 */
TEST_F(hwp, early_kill_names_nonlinear_address)
{
	char *p = self->map;
	int ready[2];
	volatile int ret;
	int status;
	pid_t pid;

	SKIP_WITHOUT_MEMORY_FAILURE();
	ASSERT_EQ(0, pipe(ready));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char *m = nl_map_with_hole(N * self->page, self->fd);
		siginfo_t si;
		sigset_t set;
		struct timespec ts = { 10, 0 };

		sigemptyset(&set);
		sigaddset(&set, SIGBUS);
		sigprocmask(SIG_BLOCK, &set, NULL);
		/*
		 * Only m shows the page here: the fixture's mapping, inherited,
		 * would be signalled too (at its linear address), and a second
		 * SIGBUS is not queued.
		 */
		munmap(self->map, N * self->page);
		if (m == MAP_FAILED || prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_EARLY, 0, 0) ||
		    nl_remap(m, self->page, 0, NL_OFF, 0) || *(volatile uint64_t *)m != NL_STAMP(NL_OFF, 0))
			_exit(10);
		if (write(ready[1], &m, sizeof(m)) != sizeof(m))
			_exit(11);
		if (sigtimedwait(&set, &si, &ts) != SIGBUS)
			_exit(12);
		if (si.si_code != BUS_MCEERR_AO)
			_exit(13);
		if (si.si_addr != m) {
			fprintf(stderr, "#   child: SIGBUS at %p, nonlinear address %p, linear %p\n",
				si.si_addr, m, m + NL_OFF * self->page);
			_exit(14);
		}
		_exit(0);
	}
	close(ready[1]);
	{
		char *childmap;

		ASSERT_EQ((ssize_t)sizeof(childmap), read(ready[0], &childmap, sizeof(childmap)));
	}
	/* Poison file page NL_OFF through our linear mapping. */
	ASSERT_EQ(0, nl_probe(p + NL_OFF * self->page, NULL, false, 0));
	madvise_catching(p + NL_OFF * self->page, MADV_HWPOISON, &ret);
	EXPECT_EQ(0, ret);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status)) TH_LOG("child status %#x", status);
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("child: 10 setup, 12 no SIGBUS, 13 not BUS_MCEERR_AO, 14 wrong address");
	close(ready[0]);
}

/*
 * MADV_SOFT_OFFLINE migrates the page away: it stays at its nonlinear
 * address with its data and stays read-only.
 */
TEST_F(hwp, soft_offline_keeps_nonlinear_readonly_page)
{
	char *p = self->map;
	uint64_t before, after;

	SKIP_WITHOUT_MEMORY_FAILURE();
	ASSERT_EQ(0, nl_remap(p, self->page, PROT_READ, NL_OFF, MAP_CHGPROT));
	ASSERT_EQ(0, nl_probe(p, NULL, false, 0));
	before = nl_pagemap(p) & PM_PFN_MASK;
	ASSERT_EQ(0, madvise(p, self->page, MADV_SOFT_OFFLINE)) TH_LOG("%s", strerror(errno));
	self->want[0] = NL_STAMP(NL_OFF, 0);
	EXPECT_EQ(0, nl_check_pages(p, N, self->want, true));
	after = nl_pagemap(p) & PM_PFN_MASK;
	EXPECT_NE(before, after) TH_LOG("the page did not move (pfn %#" PRIx64 ")", after);
	EXPECT_EQ(SIGSEGV, nl_probe(p, NULL, true, 1));
	EXPECT_EQ(NL_STAMP(NL_OFF, 0), nl_file_word(self->fd, NL_OFF));
	EXPECT_NONLINEAR(p, N * self->page);
}

NL_HARNESS_MAIN
