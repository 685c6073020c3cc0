/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers of the nonlinear remap_file_pages() tests
 * (tests/kernel/nonlinear*_test.c).
 *
 * Conventions: every file page at offset j carries a stamp, NL_STAMP(j, gen),
 * in its first, middle and last 64-bit word (optionally in every word), so
 * a page's contents say which file page it is.  A test keeps, for every
 * address of a mapping, the 64-bit value the page there must show (want[]);
 * NL_WANT_ZERO is a page of zeroes, NL_WANT_SIGBUS a page whose access must
 * raise SIGBUS (beyond EOF).  nl_check_pages() compares a whole mapping,
 * catching SIGBUS/SIGSEGV so a wrong page never kills the harness.
 */
#ifndef NONLINEAR_UTIL_H
#define NONLINEAR_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/*
 * kselftest_harness.h does not build with -Wextra -Werror (unused
 * parameters in its SIGALRM handler and TEST() wrappers): include it
 * through this header.
 */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#include "read_number.h"
/*
 * The harness's TEST_F() wrappers (expanded in each test file) trip
 * -Wclobbered on their own setjmp(); the variables of ours that live
 * across sigsetjmp() are volatile.
 */
#pragma GCC diagnostic ignored "-Wclobbered"

#define NL_UNUSED __attribute__((unused))

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
#ifndef MAP_NONBLOCK
#define MAP_NONBLOCK 0x10000
#endif

#define NL_MAGIC 0x4e4c000000000000ULL /* "NL" */
/* The value file page @off carries, for a given write generation (< 0xffff). */
#define NL_STAMP(off, gen) ((uint64_t)(NL_MAGIC | ((uint64_t)(gen) & 0xffff) << 32 | ((uint64_t)(off) & 0xffffffff)))
#define NL_WANT_ZERO 0ULL
#define NL_WANT_SIGBUS (~0ULL)
/* Is @v a stamp of some offset below @n (any generation)? */
#define NL_IS_STAMP(v, n) (((v) & 0xffff000000000000ULL) == NL_MAGIC && ((v) & 0xffffffffULL) < (uint64_t)(n))

static NL_UNUSED size_t nl_page;

static inline size_t nl_pagesize(void)
{
	if (!nl_page)
		nl_page = (size_t)sysconf(_SC_PAGESIZE);
	return nl_page;
}

#ifndef MAP_CHGPROT
#define MAP_CHGPROT 0x400000	/* remap_file_pages(): set the pages' protection */
#endif
#ifndef MAP_VECTOR
#define MAP_VECTOR 0x800000	/* remap_file_pages(): an array of entries */
#endif

static inline int nl_remap(void *start, size_t size, unsigned long prot, size_t pgoff, int flags)
{
	return (int)syscall(__NR_remap_file_pages, start, size, prot, pgoff, flags);
}

/* struct remap_file_pages_entry, the uapi layout of the series */
struct nl_vec_entry {
	uint64_t addr, size, pgoff;
	uint32_t prot, flags;
};

/* remap_file_pages(MAP_VECTOR | @flags) of @n entries */
static inline long nl_remap_vec(struct nl_vec_entry *e, unsigned long n, unsigned long flags)
{
	return syscall(__NR_remap_file_pages, e, n, 0, 0, MAP_VECTOR | flags);
}

/* Writes @text to @path (a cgroup or /proc/sys file): 0, or -1 with errno */
static inline int nl_write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t len = (ssize_t)strlen(text), w;

	if (fd < 0)
		return -1;
	w = write(fd, text, (size_t)len);
	close(fd);
	return w == len ? 0 : -1;
}

#define NL_FAILSLAB "/sys/kernel/debug/failslab/"

/*
 * Arms slab fault injection (CONFIG_FAILSLAB, root): the next @times slab
 * allocations of tasks with make-it-fail set fail, silently, whatever
 * their gfp flags; with @cache_filter, only in caches marked failslab.
 * Returns 0, or -1 if a setting could not be written.
 */
static inline int nl_failslab_arm(long times, bool cache_filter)
{
	char n[32];

	snprintf(n, sizeof(n), "%ld", times);
	return nl_write_file(NL_FAILSLAB "cache-filter", cache_filter ? "Y" : "N") ||
	       nl_write_file(NL_FAILSLAB "probability", "100") ||
	       nl_write_file(NL_FAILSLAB "interval", "1") ||
	       nl_write_file(NL_FAILSLAB "space", "0") ||
	       nl_write_file(NL_FAILSLAB "verbose", "0") ||
	       nl_write_file(NL_FAILSLAB "task-filter", "Y") ||
	       nl_write_file(NL_FAILSLAB "ignore-gfp-wait", "N") ||
	       nl_write_file(NL_FAILSLAB "times", n) ? -1 : 0;
}

/*
 * The number after @key and @sep at the start of a line of @path
 * (/proc/meminfo "Key:", /proc/vmstat and memory.events "key "); -1: none
 */
static inline long long nl_file_value(const char *path, const char *key, char sep)
{
	FILE *f = fopen(path, "r");
	size_t len = strlen(key);
	char line[256];
	long long v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == sep) {
			v = strtoll(line + len + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* The value of a "key value" line of a file such as memory.events (-1: none) */
static inline long nl_cg_key(const char *path, const char *key)
{
	return (long)nl_file_value(path, key, ' ');
}

#define NL_CG_ROOT "/sys/fs/cgroup"

/*
 * Why a test cannot use a memory cgroup here (it skips), or NULL: it must
 * run in a memdbg guest (MEMDBG_GUEST=1: the test changes the root
 * cgroup), with cgroup2 and its memory controller.
 */
static inline const char *nl_memcg_unavailable(void)
{
	if (!getenv("MEMDBG_GUEST"))
		return "changes the root cgroup: only in a memdbg guest (MEMDBG_GUEST=1)";
	if (access(NL_CG_ROOT "/cgroup.controllers", F_OK))
		return "no cgroup2 at " NL_CG_ROOT;
	if (nl_write_file(NL_CG_ROOT "/cgroup.subtree_control", "+memory"))
		return "cannot enable the memory controller";
	return NULL;
}

/*
 * Moves the calling process into a new memory cgroup NL_CG_ROOT/@name.PID
 * with memory.max = @max; its path in @cg.  0, or -1 with errno.
 */
static inline int nl_memcg_enter(const char *name, const char *max, char *cg, size_t size)
{
	char path[256], pid[32];

	snprintf(cg, size, NL_CG_ROOT "/%s.%d", name, getpid());
	if (mkdir(cg, 0755))
		return -1;
	snprintf(path, sizeof(path), "%s/memory.max", cg);
	if (nl_write_file(path, max))
		return -1;
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	snprintf(pid, sizeof(pid), "%d\n", getpid());
	return nl_write_file(path, pid);
}

/* Moves the calling process back to the root cgroup and removes @cg */
static inline int nl_memcg_leave(const char *cg)
{
	char pid[32];

	snprintf(pid, sizeof(pid), "%d\n", getpid());
	nl_write_file(NL_CG_ROOT "/cgroup.procs", pid);
	return rmdir(cg);
}

static inline double nl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * mmap(MAP_SHARED) @len bytes of @fd (anonymous shared memory when @fd < 0)
 * at a place followed by an unmapped page, so that running off its end
 * cannot reach another mapping.
 */
static inline void *nl_map_with_hole(size_t len, int fd)
{
	char *r = mmap(NULL, len + 2 * nl_pagesize(), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *m;

	if (r == MAP_FAILED)
		return MAP_FAILED;
	m = mmap(r + nl_pagesize(), len, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED | (fd < 0 ? MAP_ANONYMOUS : 0), fd, 0);
	munmap(r, nl_pagesize());
	munmap(r + nl_pagesize() + len, nl_pagesize());
	return m;
}

/* --- stamping pages ---------------------------------------------------------- */

/* Write the stamp of the page at @p (file offset @off). @full: every word. */
static inline void nl_stamp_mem(void *p, size_t off, unsigned int gen, bool full)
{
	uint64_t *w = p, v = NL_STAMP(off, gen);
	size_t words = nl_pagesize() / 8, i;

	if (full) {
		for (i = 0; i < words; i++)
			w[i] = v;
	} else {
		w[0] = v;
		w[words / 2] = v;
		w[words - 1] = v;
	}
}

/* Stamp file pages [first, first + count) of @fd with pwrite(). */
static inline int nl_stamp_fd(int fd, size_t first, size_t count, unsigned int gen, bool full)
{
	size_t page = nl_pagesize(), i;
	char *buf = calloc(1, page);
	int ret = 0;

	if (!buf)
		return -1;
	for (i = first; i < first + count; i++) {
		nl_stamp_mem(buf, i, gen, full);
		if (pwrite(fd, buf, page, (off_t)(i * page)) != (ssize_t)page) {
			ret = -1;
			break;
		}
	}
	free(buf);
	return ret;
}

/* The first word of file page @off of @fd, read with pread() (no mapping). */
static inline uint64_t nl_file_word(int fd, size_t off)
{
	uint64_t v = 0xdeadULL;

	if (pread(fd, &v, sizeof(v), (off_t)(off * nl_pagesize())) != (ssize_t)sizeof(v))
		return 0xdeadULL;
	return v;
}

/* A memfd of @pages pages; with @stamp every word of page j is NL_STAMP(j, 0). */
static inline int nl_memfd(const char *name, size_t pages, bool stamp)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (ftruncate(fd, (off_t)(pages * nl_pagesize())) ||
	    (stamp && nl_stamp_fd(fd, 0, pages, 0, true))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* --- catching SIGBUS / SIGSEGV --------------------------------------------------- */

static NL_UNUSED sigjmp_buf nl_jmp;
static NL_UNUSED volatile sig_atomic_t nl_sig, nl_code;
static NL_UNUSED void *volatile nl_fault_addr;

static inline void nl_handler(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	nl_sig = sig;
	nl_code = si->si_code;
	nl_fault_addr = si->si_addr;
	siglongjmp(nl_jmp, 1);
}

struct nl_sigsave {
	struct sigaction bus, segv;
};

static inline void nl_catch(struct nl_sigsave *save)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = nl_handler;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &save->bus);
	sigaction(SIGSEGV, &sa, &save->segv);
}

static inline void nl_uncatch(struct nl_sigsave *save)
{
	sigaction(SIGBUS, &save->bus, NULL);
	sigaction(SIGSEGV, &save->segv, NULL);
}

/*
 * Read (or write, when @write) one 64-bit word at @p; returns 0 or the
 * signal it raised (its si_code in nl_code).
 */
static inline int nl_probe(void *p, uint64_t *val, bool write, uint64_t wval)
{
	struct nl_sigsave save;
	int sig = 0;

	nl_catch(&save);
	nl_sig = 0;
	if (sigsetjmp(nl_jmp, 0) == 0) {
		if (write)
			*(volatile uint64_t *)p = wval;
		else if (val)
			*val = *(volatile uint64_t *)p;
		else
			(void)*(volatile uint64_t *)p;
	} else {
		sig = nl_sig;
	}
	nl_uncatch(&save);
	return sig;
}

/*
 * Compare pages [0, n) of @map with @want.  Checks the first, middle and
 * last word (every word when @full).  Returns the number of wrong pages; the
 * first few are described on stderr as TAP diagnostics.
 */
static inline long nl_check_pages(const void *map, size_t n, const uint64_t *want, bool full)
{
	size_t page = nl_pagesize(), words = page / 8;
	struct nl_sigsave save;
	volatile size_t i;
	long bad = 0;

	nl_catch(&save);
	for (i = 0; i < n; i++) {
		const volatile uint64_t *w = (const volatile uint64_t *)((const char *)map + i * page);
		volatile uint64_t first = 0, badval = 0;
		volatile int got_bad = 0;
		volatile size_t at = 0;
		size_t k, idx[3] = { 0, words / 2, words - 1 };
		int sig = 0;

		nl_sig = 0;
		if (sigsetjmp(nl_jmp, 0) == 0) {
			first = w[0];
			if (want[i] == NL_WANT_SIGBUS) {
				got_bad = 1, badval = first;
			} else if (full) {
				for (k = 0; k < words; k++)
					if (w[k] != want[i]) {
						got_bad = 1, at = k, badval = w[k];
						break;
					}
			} else {
				for (k = 0; k < 3; k++)
					if (w[idx[k]] != want[i]) {
						got_bad = 1, at = idx[k], badval = w[idx[k]];
						break;
					}
			}
		} else {
			sig = nl_sig;
		}
		if (want[i] == NL_WANT_SIGBUS)
			got_bad = sig != SIGBUS;
		else if (sig)
			got_bad = 1;
		if (got_bad) {
			if (bad < 5) {
				if (sig)
					fprintf(stderr, "#   page %zu: want %#" PRIx64 ", got %s\n", (size_t)i, want[i],
						sig == SIGBUS ? "SIGBUS" : sig == SIGSEGV ? "SIGSEGV" : "a signal");
				else
					fprintf(stderr, "#   page %zu: want %#" PRIx64 "%s, got %#" PRIx64 " in word %zu\n",
						(size_t)i, want[i], want[i] == NL_WANT_SIGBUS ? " (SIGBUS)" : "",
						(uint64_t)badval, (size_t)at);
			}
			bad++;
		}
	}
	nl_uncatch(&save);
	if (bad > 5)
		fprintf(stderr, "#   ... %ld wrong pages in all\n", bad);
	return bad;
}

/* Fill want[] for a mapping whose page i shows file page off[i] (gen 0). */
static inline void nl_want_from(uint64_t *want, const size_t *off, size_t n)
{
	for (size_t i = 0; i < n; i++)
		want[i] = NL_STAMP(off[i], 0);
}

/* --- /proc parsing --------------------------------------------------------------- */

/* Number of /proc/self/maps lines overlapping [start, end). */
static inline long nl_count_vmas(const void *startp, size_t len)
{
	uintptr_t start = (uintptr_t)startp, end = start + len;
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[512];
	long count = 0;

	if (!maps)
		return -1;
	while (fgets(line, sizeof(line), maps)) {
		uintptr_t lo, hi;

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR, &lo, &hi) == 2 && lo < end && hi > start)
			count++;
	}
	fclose(maps);
	return count;
}

/* Number of VMAs of the process (lines of /proc/self/maps). */
static inline long nl_total_vmas(void)
{
	return nl_count_vmas((void *)0, ~(size_t)0);
}

/*
 * The smaps field @field ("VmFlags", "Rss", "ShmemPmdMapped", ...) of the
 * VMA containing @addr, copied to @buf.  Returns 0, or -1 if not found.
 */
static inline int nl_smaps_field(const void *addr, const char *field, char *buf, size_t size)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[1024];
	bool in = false;
	size_t flen = strlen(field), len;
	int ret = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		uintptr_t lo, hi;
		char perms[8];

		/* A VMA header "lo-hi perms ..." (lowercase hex), or a field "Name: value". */
		if (((line[0] >= '0' && line[0] <= '9') || (line[0] >= 'a' && line[0] <= 'f')) &&
		    sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s", &lo, &hi, perms) == 3) {
			in = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
			continue;
		}
		if (in && !strncmp(line, field, flen) && line[flen] == ':') {
			char *v = line + flen + 1;

			while (*v == ' ' || *v == '\t')
				v++;
			len = strcspn(v, "\n");
			if (len >= size)
				len = size - 1;
			memcpy(buf, v, len);
			buf[len] = 0;
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

/* Does the VMA containing @addr show VmFlags mnemonic @flag (e.g. "nl")? */
static inline bool nl_has_vmflag(const void *addr, const char *flag)
{
	char buf[512], *tok, *save = NULL;

	if (nl_smaps_field(addr, "VmFlags", buf, sizeof(buf)))
		return false;
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		if (!strcmp(tok, flag))
			return true;
	return false;
}

/* An smaps "NNN kB" field of the VMA containing @addr, in kB (-1: none). */
static inline long nl_smaps_kb(const void *addr, const char *field)
{
	char buf[128];

	if (nl_smaps_field(addr, field, buf, sizeof(buf)))
		return -1;
	return strtol(buf, NULL, 10);
}

/* A "Name: NNN kB" line of /proc/meminfo, in kB (-1: none). */
static inline long nl_meminfo_kb(const char *name)
{
	return (long)nl_file_value("/proc/meminfo", name, ':');
}

/*
 * Drain every CPU's LRU and mlock batches.  move_pages(2) with a node list
 * calls lru_cache_disable(), which drains them all; moving one of our own
 * pages to node 0 is harmless.  A folio still sitting in another CPU's
 * batch is not on the LRU, so MADV_PAGEOUT skips it and munlock's counter
 * update waits: tests that assert either drain first.
 */
static inline void nl_lru_drain_all(void)
{
	static char spare[1 << 16];
	void *page = (void *)(((uintptr_t)spare + nl_pagesize() - 1) & ~(uintptr_t)(nl_pagesize() - 1));
	int node = 0, status;

	*(volatile char *)page = 1;
	syscall(__NR_move_pages, 0, 1UL, &page, &node, &status, 0);
}

/*
 * Mlocked in /proc/meminfo once it has settled at @want, or its last value
 * after @secs seconds.  Besides the batches, the counter has per-CPU deltas
 * that vmstat folds in only every vm.stat_interval (1 s), later on a
 * loaded machine.
 */
static inline long nl_mlocked_settled_kb(long want, double secs)
{
	double end = nl_now() + secs;
	long kb;

	for (;;) {
		nl_lru_drain_all();
		kb = nl_meminfo_kb("Mlocked");
		if (kb == want || nl_now() > end)
			return kb;
		usleep(100000);
	}
}

/* A counter of /proc/vmstat (-1: none). */
static inline long long nl_vmstat(const char *name)
{
	return nl_file_value("/proc/vmstat", name, ' ');
}

/* --- /proc/self/pagemap ---------------------------------------------------------- */

#define PM_PRESENT (1ULL << 63)
#define PM_SWAP (1ULL << 62)
#define PM_FILE (1ULL << 61)
#define PM_PFN_MASK ((1ULL << 55) - 1)

/* The pagemap entry of the page at @addr (0 when pagemap is unreadable). */
static inline uint64_t nl_pagemap(const void *addr)
{
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (pread(fd, &e, sizeof(e), (off_t)((uintptr_t)addr / nl_pagesize() * 8)) != (ssize_t)sizeof(e))
		e = 0;
	close(fd);
	return e;
}

/* How many of the @n pages at @map pagemap shows present. */
static inline long nl_count_present(const void *map, size_t n)
{
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	uint64_t *e = calloc(n, sizeof(*e));
	size_t i;
	long present = 0;

	if (fd < 0 || !e)
		goto out;
	if (pread(fd, e, n * 8, (off_t)((uintptr_t)map / nl_pagesize() * 8)) != (ssize_t)(n * 8))
		goto out;
	for (i = 0; i < n; i++)
		present += !!(e[i] & PM_PRESENT);
out:
	free(e);
	if (fd >= 0)
		close(fd);
	return present;
}

/* --- detection ------------------------------------------------------------------- */

/*
 * Does this kernel remap shmem pages nonlinearly?  Remaps page 0 of a
 * 2-page memfd mapping to file page 1: one VMA afterwards means yes (the
 * stock emulation splits the mapping in two).
 */
static inline bool nonlinear_supported(void)
{
	size_t page = nl_pagesize();
	int fd = nl_memfd("nl_detect", 2, false);
	bool yes = false;
	char *map;

	if (fd < 0)
		return false;
	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map != MAP_FAILED) {
		if (!nl_remap(map, page, 0, 1, MAP_NONBLOCK))
			yes = nl_count_vmas(map, 2 * page) == 1;
		munmap(map, 2 * page);
	}
	close(fd);
	return yes;
}

static inline void nl_print_kernel(const char *prog)
{
	struct utsname u;

	if (uname(&u))
		strcpy(u.release, "unknown");
	printf("# %s: kernel %s, nonlinear remap_file_pages(): %s\n", prog, u.release,
	       nonlinear_supported() ? "supported (one VMA after a remap)"
				     : "NOT supported (stock emulation: one VMA per call)");
	fflush(stdout);
}

/*
 * The fixture of tests that work on one small stamped memfd: @pages pages
 * (page j carries NL_STAMP(j, 0) in every word) mapped shared and writable
 * before a hole (nl_map_with_hole()), want[] describing that linear
 * layout.  Skips where the kernel has no nonlinear remap_file_pages().
 */
#define NL_MEMFD_FIXTURE(fixture, name, pages)                                   \
	FIXTURE(fixture)                                                         \
	{                                                                        \
		int fd;                                                          \
		char *map;                                                       \
		size_t page;                                                     \
		uint64_t want[pages];                                            \
	};                                                                       \
	FIXTURE_SETUP(fixture)                                                   \
	{                                                                        \
		self->page = nl_pagesize();                                      \
		self->fd = nl_memfd(name, pages, true);                          \
		ASSERT_LE(0, self->fd);                                          \
		self->map = nl_map_with_hole((pages) * self->page, self->fd);    \
		ASSERT_NE(MAP_FAILED, self->map);                                \
		for (size_t i = 0; i < (pages); i++)                             \
			self->want[i] = NL_STAMP(i, 0);                          \
		if (!nonlinear_supported())                                      \
			SKIP(return, "no nonlinear remap_file_pages() on this kernel"); \
	}                                                                        \
	FIXTURE_TEARDOWN(fixture)                                                \
	{                                                                        \
		if (self->fd >= 0)                                               \
			close(self->fd);                                         \
	}

/* One VMA over [map, map + len), marked nonlinear in smaps. */
#define EXPECT_NONLINEAR(map, len)                                                  \
	do {                                                                        \
		EXPECT_EQ(1, nl_count_vmas((map), (len)))                           \
			TH_LOG("the mapping should stay one VMA");                  \
		EXPECT_TRUE(nl_has_vmflag((map), "nl"))                             \
			TH_LOG("smaps VmFlags of the mapping should show nl");      \
	} while (0)

/* The main() of every nonlinear test program: a diagnostic, then the harness. */
#define NL_HARNESS_MAIN                                 \
	int main(int argc, char **argv)                 \
	{                                               \
		nl_print_kernel(argv[0]);               \
		return test_harness_run(argc, argv);    \
	}

#define NL_RADIX_SLAB_DIR "/sys/kernel/slab/radix_tree_node"

/*
 * radix_tree_node objects in use, after the cache gave back its empty
 * slabs and the per-CPU slabs were flushed; -1 if unreadable.  xarray
 * nodes are freed after an RCU grace period: the count is read every
 * 100 ms until it has not fallen for 5 readings (at most 5 s).
 */
static inline long nl_radix_nodes(void)
{
	long last = -1, now;
	int steady = 0;

	for (int i = 0; i < 50; i++) {
		char line[512], name[64];
		long n;
		FILE *f;

		now = -1;
		nl_write_file(NL_RADIX_SLAB_DIR "/shrink", "1");
		f = fopen("/proc/slabinfo", "r");
		if (!f)
			return -1;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "%63s %ld", name, &n) == 2 &&
			    !strcmp(name, "radix_tree_node")) {
				now = n;
				break;
			}
		fclose(f);
		if (now < 0)
			return -1;
		steady = last >= 0 && now >= last ? steady + 1 : 0;
		if (steady == 5)
			return now;
		last = now;
		usleep(100000);
	}
	return last;
}

#endif /* NONLINEAR_UTIL_H */
