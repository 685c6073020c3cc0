// SPDX-License-Identifier: GPL-2.0
/*
 * Races on one nonlinear shmem mapping: threads remap overlapping ranges
 * (plain, populating, guards, read-only, MAP_VECTOR batches) while others
 * fault the same pages in, drop and page them out, migrate them between
 * NUMA nodes (where the guest has two), punch holes in the file, shrink
 * and regrow it, fork children that read the mapping, and move a second
 * nonlinear mapping of the file around with mremap().
 *
 * Nobody knows the exact layout while the storm runs, so the checks are
 * what must hold whatever the interleaving:
 *   - a read shows a stamp of some file page (generation 0), or zero (a
 *     punched or regrown page), or raises SIGSEGV with SEGV_ACCERR (a
 *     guard, or a write to a read-only page); SIGBUS only while the file
 *     is short; a thread's own mremap()ed mapping shows exactly the
 *     offsets it laid out there (or zero);
 *   - every call succeeds;
 *   - at the end of each epoch, with every thread stopped: punching the
 *     whole file leaves no address showing data.  A page still mapped
 *     after the punch is one that rmap and truncation could not find: a
 *     nonlinear pte whose slot the reverse index lost to a race between
 *     a fault and a remap.  Then the file is stamped again and a known
 *     layout is laid out and checked page by page.
 *
 * Bounded by time: NL_RACE_SECONDS (default 10) split into epochs of
 * about 2 seconds; NL_RACE_SEED sets the seed (printed).  Counts of every
 * operation are printed.  NL_RACE_THREADS, a bit mask over the threads in
 * run_epoch()'s order (default 0xff, all), narrows a failure down to the
 * threads it needs.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/wait.h>

#include "nonlinear_util.h" /* includes kselftest_harness.h */

#ifndef MREMAP_MAYMOVE
#define MREMAP_MAYMOVE 1
#endif
#ifndef MREMAP_FIXED
#define MREMAP_FIXED 2
#endif
#ifndef MPOL_MF_MOVE
#define MPOL_MF_MOVE (1 << 1)
#endif

#define NPAGES 256	/* pages of the shared mapping */
#define FPAGES 512	/* pages of the file */
#define TAIL 64		/* file pages the truncator shrinks away and back */
#define MPAGES 32	/* pages of the mremap() thread's own mapping */
#define MAXLEN 8	/* pages per remap or drop */
#define EPOCH_SECONDS 2.0

enum op {
	OP_REMAP, OP_REMAP_POPULATE, OP_GUARD, OP_READONLY, OP_VECTOR,
	OP_READ, OP_WRITE, OP_DONTNEED, OP_PAGEOUT, OP_MIGRATE,
	OP_PUNCH, OP_TRUNCATE, OP_FORK, OP_MREMAP, OP_GUARD_HIT, OP_BUS_HIT,
	OP_COUNT
};

static const char *const op_name[OP_COUNT] = {
	"remap", "remap_populate", "guard", "readonly", "vector",
	"read", "write", "dontneed", "pageout", "migrate",
	"punch", "truncate", "fork", "mremap", "guard_hit", "sigbus_in_truncate",
};

struct storm {
	int fd;
	char *map;
	size_t page;
	int nodes;			/* NUMA nodes with memory: 1 or 2 */
	atomic_bool stop;
	/* odd while the file is short; shared memory, so fork children see it */
	atomic_ulong *trunc_seq;
	atomic_long count[OP_COUNT];
	atomic_long failures;
	char first_failure[256];
	pthread_mutex_t failure_lock;
};

static struct storm *storm;
/*
 * In a fork child, another thread of the parent may have held the failure
 * lock or stdio's at fork(): a child reports with write(2), lock-free.
 */
static bool in_child;
static long child_failures;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;

	if (in_child) {
		char line[256];
		int n;

		if (child_failures++)
			return;
		va_start(ap, fmt);
		n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
		va_end(ap);
		if (n > (int)sizeof(line) - 2)
			n = (int)sizeof(line) - 2;
		line[n++] = '\n';
		if (write(STDERR_FILENO, line, (size_t)n) < 0)
			child_failures++;
		return;
	}
	pthread_mutex_lock(&storm->failure_lock);
	if (atomic_fetch_add(&storm->failures, 1) == 0) {
		va_start(ap, fmt);
		vsnprintf(storm->first_failure, sizeof(storm->first_failure), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&storm->failure_lock);
}

/* --- probing a page with the thread's own jump buffer --------------------- */

static __thread sigjmp_buf probe_jmp;
static __thread volatile int probe_armed, probe_sig, probe_code;

static void probe_handler(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (!probe_armed) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	probe_sig = sig;
	probe_code = si->si_code;
	siglongjmp(probe_jmp, 1);
}

/*
 * Reads the first word at @p, or writes it with what it holds: 0, or the
 * signal it raised.  The write is one locked add of zero, not a load and a
 * store: a remap of @p between the two would store one page's stamp into
 * another page, and a later exact check of that page (the mremap()
 * thread's) would blame the kernel for the test's own write.
 */
static int probe(volatile uint64_t *p, uint64_t *val, bool write)
{
	probe_sig = 0;
	if (sigsetjmp(probe_jmp, 1) == 0) {
		probe_armed = 1;
		if (write)
			*val = __atomic_fetch_add(p, 0, __ATOMIC_RELAXED);
		else
			*val = *p;
	}
	probe_armed = 0;
	return probe_sig;
}

/* SIGSEGV and SIGBUS go to probe_handler() in every thread */
static void catch_probe_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = probe_handler;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
}

/* Prints the first failure, if any; returns how many there were */
static long storm_failures(void)
{
	long n = atomic_load(&storm->failures);

	if (n)
		fprintf(stderr, "#   %ld failures, the first: %s\n", n, storm->first_failure);
	return n;
}

static void release_probe_signals(void)
{
	signal(SIGSEGV, SIG_DFL);
	signal(SIGBUS, SIG_DFL);
}

/* A fresh storm: no counts, no failures; the page size */
static struct storm *new_storm(void)
{
	struct storm *st = calloc(1, sizeof(*st));

	if (st) {
		pthread_mutex_init(&st->failure_lock, NULL);
		st->page = nl_pagesize();
	}
	return st;
}

/* Checks what a read of shared page @i showed; @seq0: trunc_seq before. */
static void judge(const char *who, size_t i, int sig, uint64_t v, unsigned long seq0)
{
	unsigned long seq1 = atomic_load(storm->trunc_seq);

	if (sig == SIGSEGV && probe_code == SEGV_ACCERR) {
		atomic_fetch_add(&storm->count[OP_GUARD_HIT], 1);
		return;
	}
	if (sig == SIGBUS && ((seq0 & 1) || seq0 != seq1)) {
		atomic_fetch_add(&storm->count[OP_BUS_HIT], 1);
		return;
	}
	if (sig) {
		fail("%s: page %zu raised %s (si_code %d)", who, i,
		     sig == SIGBUS ? "SIGBUS" : sig == SIGSEGV ? "SIGSEGV" : "a signal", probe_code);
		return;
	}
	if (v != 0 && v != NL_STAMP(v & 0xffffffffULL, 0))
		fail("%s: page %zu shows %#" PRIx64 ", no page's stamp", who, i, v);
	else if (v != 0 && !NL_IS_STAMP(v, FPAGES))
		fail("%s: page %zu shows %#" PRIx64 ", beyond the file", who, i, v);
}

static size_t rnd(unsigned int *seed, size_t n)
{
	return (size_t)rand_r(seed) % n;
}

/* --- the threads ------------------------------------------------------------ */

struct worker {
	unsigned int seed;
	int id;
};

static void *remapper(void *arg)
{
	struct worker *w = arg;
	size_t page = storm->page;

	while (!atomic_load(&storm->stop)) {
		size_t len = 1 + rnd(&w->seed, MAXLEN), at = rnd(&w->seed, NPAGES - len + 1);
		size_t off = rnd(&w->seed, FPAGES - len + 1);
		char *p = storm->map + at * page;
		int kind = (int)rnd(&w->seed, 10), ret = 0;
		enum op op;

		if (kind < 3) {
			op = OP_REMAP;
			ret = nl_remap(p, len * page, 0, off, MAP_NONBLOCK);
		} else if (kind < 4) {
			op = OP_REMAP_POPULATE;
			ret = nl_remap(p, len * page, 0, off, 0);
		} else if (kind < 6) {
			op = OP_GUARD;
			ret = nl_remap(p, len * page, PROT_NONE, off, MAP_CHGPROT);
		} else if (kind < 7) {
			op = OP_READONLY;
			ret = nl_remap(p, len * page, PROT_READ, off, MAP_CHGPROT | MAP_NONBLOCK);
		} else if (kind < 9) {
			op = OP_REMAP;
			ret = nl_remap(p, len * page, PROT_READ | PROT_WRITE, off, MAP_CHGPROT | MAP_NONBLOCK);
		} else {
			struct nl_vec_entry e[4];
			long n;

			op = OP_VECTOR;
			for (int k = 0; k < 4; k++) {
				size_t l = 1 + rnd(&w->seed, 4);

				e[k].addr = (uintptr_t)(storm->map + rnd(&w->seed, NPAGES - l + 1) * page);
				e[k].size = l * page;
				e[k].pgoff = rnd(&w->seed, FPAGES - l + 1);
				e[k].prot = k == 3 ? PROT_NONE : PROT_READ | PROT_WRITE;
				e[k].flags = 0;
			}
			/*
			 * A call may stop early without an error (faults kept
			 * refilling a range, and the kernel gave up its lock):
			 * as documented, go on from the first entry not done.
			 */
			for (int k = 0; k < 4 && !ret; k += (int)n) {
				n = nl_remap_vec(e + k, 4 - k, MAP_CHGPROT | MAP_NONBLOCK);
				if (n <= 0)
					ret = -1;
			}
		}
		if (ret)
			fail("remapper %d: %s of %zu pages at page %zu (offset %zu): %s", w->id, op_name[op],
			     len, at, off, strerror(errno));
		atomic_fetch_add(&storm->count[op], 1);
	}
	return NULL;
}

static void *faulter(void *arg)
{
	struct worker *w = arg;
	long reads = 0, writes = 0;

	while (!atomic_load(&storm->stop)) {
		size_t i = rnd(&w->seed, NPAGES);
		bool write = rnd(&w->seed, 4) == 0;
		unsigned long seq0 = atomic_load(storm->trunc_seq);
		uint64_t v = 0;
		int sig = probe((volatile uint64_t *)(storm->map + i * storm->page), &v, write);

		judge("faulter", i, sig, v, seq0);
		if (write)
			writes++;
		else
			reads++;
		/* Now and then drop what this thread faulted in, so faults go on. */
		if (rnd(&w->seed, 64) == 0) {
			size_t len = 1 + rnd(&w->seed, MAXLEN), at = rnd(&w->seed, NPAGES - len + 1);
			bool out = rnd(&w->seed, 4) == 0;

			if (madvise(storm->map + at * storm->page, len * storm->page,
				    out ? MADV_PAGEOUT : MADV_DONTNEED))
				fail("faulter: madvise(%s): %s", out ? "MADV_PAGEOUT" : "MADV_DONTNEED",
				     strerror(errno));
			atomic_fetch_add(&storm->count[out ? OP_PAGEOUT : OP_DONTNEED], 1);
		}
	}
	atomic_fetch_add(&storm->count[OP_READ], reads);
	atomic_fetch_add(&storm->count[OP_WRITE], writes);
	return NULL;
}

/* Moves random present pages to the other node (where there are two). */
static void *migrator(void *arg)
{
	struct worker *w = arg;

	while (!atomic_load(&storm->stop)) {
		void *pages[8];
		int nodes[8], status[8];

		if (storm->nodes < 2) {
			usleep(10000);
			continue;
		}
		for (int k = 0; k < 8; k++) {
			pages[k] = storm->map + rnd(&w->seed, NPAGES) * storm->page;
			nodes[k] = (int)rnd(&w->seed, 2);
		}
		/* Per-page errors (a guard, nothing mapped) are in status[]. */
		if (syscall(__NR_move_pages, 0, 8UL, pages, nodes, status, MPOL_MF_MOVE) < 0 &&
		    errno != ENOENT)
			fail("migrator: move_pages: %s", strerror(errno));
		atomic_fetch_add(&storm->count[OP_MIGRATE], 1);
		usleep(1000);
	}
	return NULL;
}

/* Stamps file pages [first, first + n) again after a punch or a truncation. */
static void restamp(size_t first, size_t n)
{
	if (nl_stamp_fd(storm->fd, first, n, 0, false))
		fail("restamp of %zu pages at %zu: %s", n, first, strerror(errno));
}

static void *truncator(void *arg)
{
	struct worker *w = arg;
	size_t page = storm->page;

	while (!atomic_load(&storm->stop)) {
		if (rnd(&w->seed, 4)) {
			size_t len = 1 + rnd(&w->seed, MAXLEN), off = rnd(&w->seed, FPAGES - len + 1);

			if (fallocate(storm->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				      (off_t)(off * page), (off_t)(len * page)))
				fail("truncator: punch: %s", strerror(errno));
			restamp(off, len);
			atomic_fetch_add(&storm->count[OP_PUNCH], 1);
		} else {
			atomic_fetch_add(storm->trunc_seq, 1);
			if (ftruncate(storm->fd, (off_t)((FPAGES - TAIL) * page)) ||
			    ftruncate(storm->fd, (off_t)(FPAGES * page)))
				fail("truncator: ftruncate: %s", strerror(errno));
			atomic_fetch_add(storm->trunc_seq, 1);
			restamp(FPAGES - TAIL, TAIL);
			atomic_fetch_add(&storm->count[OP_TRUNCATE], 1);
		}
		usleep(2000);
	}
	return NULL;
}

/* Forks a child that reads every shared page once; it exits 1 on a bad one. */
static void *forker(void *arg)
{
	struct worker *w = arg;

	while (!atomic_load(&storm->stop)) {
		int status;
		pid_t pid = fork();

		if (pid < 0) {
			fail("forker: fork: %s", strerror(errno));
			break;
		}
		if (pid == 0) {
			in_child = true;
			for (size_t i = 0; i < NPAGES; i++) {
				unsigned long seq0 = atomic_load(storm->trunc_seq);
				uint64_t v = 0;
				int sig = probe((volatile uint64_t *)(storm->map + i * storm->page), &v, false);

				judge("fork child", i, sig, v, seq0);
			}
			_exit(child_failures ? 1 : 0);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			fail("forker: a child saw a wrong page (status %#x)", status);
		atomic_fetch_add(&storm->count[OP_FORK], 1);
		usleep(5000 + rnd(&w->seed, 5000));
	}
	return NULL;
}

/* Whether file page @off holds @v: tells a wrong page from a wrong pte. */
static bool file_holds(size_t off, uint64_t v)
{
	uint64_t word = 0;

	return pread(storm->fd, &word, sizeof(word), (off_t)(off * storm->page)) == sizeof(word) &&
	       word == v;
}

/*
 * A second nonlinear mapping of the file, moved around by mremap(): its
 * layout is this thread's alone (page i shows offset FPAGES - 1 - i), so
 * each page must show exactly that stamp, or zero.
 */
static void *mremapper(void *arg)
{
	struct worker *w = arg;
	size_t page = storm->page, len = MPAGES * page;
	char *spare = mmap(NULL, 2 * len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, storm->fd, 0);
	char *places[2];
	int at = 0;

	if (spare == MAP_FAILED || m == MAP_FAILED) {
		fail("mremapper: mmap: %s", strerror(errno));
		return NULL;
	}
	places[0] = spare;
	places[1] = spare + len;
	for (size_t i = 0; i < MPAGES; i++)
		if (nl_remap(m + i * page, page, 0, FPAGES - 1 - i, MAP_NONBLOCK))
			fail("mremapper: remap: %s", strerror(errno));
	while (!atomic_load(&storm->stop)) {
		char *to = places[at];
		char *moved = mremap(m, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, to);

		if (moved == MAP_FAILED) {
			fail("mremapper: mremap: %s", strerror(errno));
			break;
		}
		m = moved;
		at ^= 1;
		for (size_t i = 0; i < MPAGES; i++) {
			unsigned long seq0 = atomic_load(storm->trunc_seq);
			uint64_t v = 0;
			int sig = probe((volatile uint64_t *)(m + i * page), &v, false);

			if (sig == SIGBUS && ((seq0 & 1) || seq0 != atomic_load(storm->trunc_seq)))
				continue;
			if (sig)
				fail("mremapper: page %zu raised signal %d (si_code %d)", i, sig, probe_code);
			else if (v && v != NL_STAMP(FPAGES - 1 - i, 0))
				fail("mremapper: page %zu shows %#" PRIx64 ", want offset %d or zero (%s)", i, v,
				     FPAGES - 1 - (int)i, file_holds(FPAGES - 1 - i, v) ?
				     "the file page itself holds it" : "the file page holds its own stamp");
		}
		if (rnd(&w->seed, 4) == 0)
			madvise(m, len, MADV_DONTNEED);
		atomic_fetch_add(&storm->count[OP_MREMAP], 1);
	}
	munmap(m, len);
	munmap(spare, 2 * len);
	return NULL;
}

/* --- epochs ------------------------------------------------------------------ */

#define REMAPPERS 2
#define FAULTERS 2

static int online_memory_nodes(void)
{
	return access("/sys/devices/system/node/node1/meminfo", R_OK) ? 1 : 2;
}

/* One epoch of the storm: the threads set in @threads for @seconds. */
static void run_epoch(double seconds, unsigned int seed, unsigned long threads)
{
	void *(*fn[])(void *) = { remapper, remapper, faulter, faulter, migrator, truncator,
				  forker, mremapper };
	enum { NTHREADS = sizeof(fn) / sizeof(fn[0]) };
	struct worker w[NTHREADS];
	pthread_t th[NTHREADS];

	atomic_store(&storm->stop, false);
	for (int t = 0; t < NTHREADS; t++) {
		if (!(threads & (1UL << t)))
			continue;
		w[t].seed = seed * 7919u + (unsigned int)t;
		w[t].id = t;
		if (pthread_create(&th[t], NULL, fn[t], &w[t]))
			fail("pthread_create: %s", strerror(errno));
	}
	usleep((useconds_t)(seconds * 1e6));
	atomic_store(&storm->stop, true);
	for (int t = 0; t < NTHREADS; t++)
		if (threads & (1UL << t))
			pthread_join(th[t], NULL);
}

/*
 * With everything stopped: punch the whole file and look for an address
 * still showing data; then stamp the file, lay out a known layout and
 * check every page of it.  Returns the number of wrong pages.
 */
static long check_quiet(void)
{
	size_t page = storm->page;
	uint64_t want[NPAGES];
	long bad = 0;

	/* Fault everything that can be faulted in, so the punch has pages to find. */
	for (size_t i = 0; i < NPAGES; i++) {
		uint64_t v;

		probe((volatile uint64_t *)(storm->map + i * page), &v, false);
	}
	if (fallocate(storm->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)(FPAGES * page)))
		fail("punching the whole file: %s", strerror(errno));
	for (size_t i = 0; i < NPAGES; i++) {
		uint64_t v = 0;
		int sig = probe((volatile uint64_t *)(storm->map + i * page), &v, false);

		if ((sig && !(sig == SIGSEGV && probe_code == SEGV_ACCERR)) || (!sig && v)) {
			if (bad < 5)
				fprintf(stderr, "#   after punching the file, page %zu %s %#" PRIx64 "\n", i,
					sig ? "raised a signal, si_code" : "still shows",
					sig ? (uint64_t)probe_code : v);
			bad++;
		}
	}
	restamp(0, FPAGES);
	for (size_t i = 0; i < NPAGES; i++) {
		size_t off = (i * 37 + 11) % FPAGES;

		if (nl_remap(storm->map + i * page, page, PROT_READ | PROT_WRITE, off,
			     MAP_CHGPROT | MAP_NONBLOCK))
			fail("final layout: remap: %s", strerror(errno));
		want[i] = NL_STAMP(off, 0);
	}
	bad += nl_check_pages(storm->map, NPAGES, want, false);
	return bad;
}

static unsigned long env_ulong(const char *name, unsigned long dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtoul(v, NULL, 0) : dflt;
}

/* No state of its own: a fixture only for a timeout that fits NL_RACE_SECONDS */
FIXTURE(race) {};
FIXTURE_SETUP(race) {}
FIXTURE_TEARDOWN(race) {}

/* Runs NL_RACE_SECONDS plus the checks; the harness kills it after an hour. */
TEST_F_TIMEOUT(race, remap_fault_truncate_storm, 3600)
{
	double seconds = (double)env_ulong("NL_RACE_SECONDS", 10);
	unsigned int seed = (unsigned int)env_ulong("NL_RACE_SEED", (unsigned long)time(NULL));
	unsigned long threads = env_ulong("NL_RACE_THREADS", 0xff);
	int epochs = seconds / EPOCH_SECONDS < 1 ? 1 : (int)(seconds / EPOCH_SECONDS);
	long bad = 0;

	if (!nonlinear_supported())
		SKIP(return, "no nonlinear remap_file_pages() on this kernel");
	storm = new_storm();
	ASSERT_NE(NULL, storm);
	storm->trunc_seq = mmap(NULL, storm->page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, storm->trunc_seq);
	storm->nodes = online_memory_nodes();
	storm->fd = nl_memfd("nl_race", FPAGES, false);
	ASSERT_LE(0, storm->fd);
	ASSERT_EQ(0, nl_stamp_fd(storm->fd, 0, FPAGES, 0, false));
	storm->map = nl_map_with_hole(NPAGES * storm->page, storm->fd);
	ASSERT_NE(MAP_FAILED, storm->map);
	/* Nonlinear from the start: page 0 shows the last file page. */
	ASSERT_EQ(0, nl_remap(storm->map, storm->page, 0, FPAGES - 1, MAP_NONBLOCK));
	EXPECT_NONLINEAR(storm->map, NPAGES * storm->page);

	catch_probe_signals();

	printf("# seed %u (NL_RACE_SEED), threads %#lx (NL_RACE_THREADS), %d epochs of %.1f s, ",
	       seed, threads, epochs, seconds / epochs);
	printf("%d NUMA node(s) with memory\n", storm->nodes);
	for (int e = 0; e < epochs && !atomic_load(&storm->failures); e++) {
		long wrong;

		run_epoch(seconds / epochs, seed + (unsigned int)e, threads);
		wrong = check_quiet();
		if (wrong)
			fprintf(stderr, "#   epoch %d: %ld wrong pages with every thread stopped\n", e, wrong);
		bad += wrong;
	}
	printf("#");
	for (int op = 0; op < OP_COUNT; op++)
		printf(" %s=%ld", op_name[op], atomic_load(&storm->count[op]));
	printf("\n");
	EXPECT_EQ(0, storm_failures());
	EXPECT_EQ(0, bad);
	release_probe_signals();
}

/*
 * --- faults through entries that a remap replaces -----------------------------
 *
 * remap_file_pages() inside a nonlinear vma holds mmap_lock for reading, so
 * a fault may read an entry and go on after a remap replaced it, and a
 * fault through the new entry may map its page while the remap is still
 * between its page table lock and its return.  Neither may leave the
 * reverse index without the slot of a mapped page: truncation would not
 * find the page, and the address would keep showing it after a hole punch.
 * In each round the remapper flips every page once, in a random order,
 * between two offsets (or through a guard back to the same entry) while
 * two threads fault in mostly the page being flipped; then everything stops, both offsets of every
 * page are punched, and every page must read zero.  Nothing drops a page
 * between the flips and the check, so a slot lost during the flips is
 * still missing when the check looks.
 */
#define FLIP_PAGES 64

/* The page the remapper flips now: the faulters aim at it */
static atomic_size_t flip_now;

static void *flip_faulter(void *arg)
{
	struct worker *w = arg;
	size_t page = storm->page;

	while (!atomic_load(&storm->stop)) {
		size_t i = rnd(&w->seed, 4) ? atomic_load(&flip_now) : rnd(&w->seed, FLIP_PAGES);
		uint64_t v;
		int sig = probe((volatile uint64_t *)(storm->map + i * page), &v, false);

		if (sig && !(sig == SIGSEGV && probe_code == SEGV_ACCERR))
			fail("faulter: page %zu raised signal %d (si_code %d)", i, sig, probe_code);
		else if (!sig && v && v != NL_STAMP(i, 0) && v != NL_STAMP(i + FLIP_PAGES, 0))
			fail("faulter: page %zu shows %#" PRIx64 ", not one of its two offsets", i, v);
		atomic_fetch_add(&storm->count[sig ? OP_GUARD_HIT : OP_READ], 1);
	}
	return NULL;
}

/* Flips every page once, in a random order. */
static void flip_all(unsigned int *seed)
{
	size_t page = storm->page, order[FLIP_PAGES];

	for (size_t i = 0; i < FLIP_PAGES; i++)
		order[i] = i;
	for (size_t i = FLIP_PAGES - 1; i > 0; i--) {
		size_t j = rnd(seed, i + 1), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (size_t k = 0; k < FLIP_PAGES; k++) {
		size_t i = order[k], off = i + (rnd(seed, 2) ? FLIP_PAGES : 0);
		char *p = storm->map + i * page;

		atomic_store(&flip_now, i);
		/* A guard first brings back the entry the page had */
		if (rnd(seed, 4) == 0) {
			if (nl_remap(p, page, PROT_NONE, off, MAP_CHGPROT))
				fail("guard of page %zu: %s", i, strerror(errno));
			atomic_fetch_add(&storm->count[OP_GUARD], 1);
		}
		if (nl_remap(p, page, 0, off, MAP_NONBLOCK))
			fail("remap of page %zu to offset %zu: %s", i, off, strerror(errno));
		atomic_fetch_add(&storm->count[OP_REMAP], 1);
	}
}

/* Punches both offsets of every page: no page may still show data. */
static long check_flipped(void)
{
	size_t page = storm->page;
	long bad = 0;

	if (fallocate(storm->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
		      (off_t)(2 * FLIP_PAGES * page)))
		fail("punch: %s", strerror(errno));
	atomic_fetch_add(&storm->count[OP_PUNCH], 1);
	for (size_t i = 0; i < FLIP_PAGES; i++) {
		uint64_t v = 0;
		int sig = probe((volatile uint64_t *)(storm->map + i * page), &v, false);

		if (!sig && v) {
			if (bad < 5)
				fprintf(stderr, "#   after the punch, page %zu still shows %#" PRIx64 "\n",
					i, v);
			bad++;
		}
	}
	restamp(0, 2 * FLIP_PAGES);
	return bad;
}

TEST_F_TIMEOUT(race, fault_through_replaced_entry, 3600)
{
	double seconds = (double)env_ulong("NL_RACE_SECONDS", 10) / 2;
	unsigned int seed = (unsigned int)env_ulong("NL_RACE_SEED", (unsigned long)time(NULL));
	enum { FAULTERS_HERE = 2 };
	struct worker w[FAULTERS_HERE];
	pthread_t th[FAULTERS_HERE];
	unsigned int flip_seed = seed;
	struct timespec t0, t;
	long bad = 0, rounds = 0;

	if (!nonlinear_supported())
		SKIP(return, "no nonlinear remap_file_pages() on this kernel");
	storm = new_storm();
	ASSERT_NE(NULL, storm);
	storm->fd = nl_memfd("nl_flip", 2 * FLIP_PAGES, false);
	ASSERT_LE(0, storm->fd);
	ASSERT_EQ(0, nl_stamp_fd(storm->fd, 0, 2 * FLIP_PAGES, 0, false));
	storm->map = nl_map_with_hole(FLIP_PAGES * storm->page, storm->fd);
	ASSERT_NE(MAP_FAILED, storm->map);
	/* Every page away from its linear offset: each fault adds a slot */
	ASSERT_EQ(0, nl_remap(storm->map, FLIP_PAGES * storm->page, 0, FLIP_PAGES, MAP_NONBLOCK));
	EXPECT_NONLINEAR(storm->map, FLIP_PAGES * storm->page);

	catch_probe_signals();

	printf("# seed %u (NL_RACE_SEED), %.1f s\n", seed, seconds);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		atomic_store(&storm->stop, false);
		for (int k = 0; k < FAULTERS_HERE; k++) {
			w[k].seed = seed * 7919u + (unsigned int)(rounds * FAULTERS_HERE + k);
			w[k].id = k;
			if (pthread_create(&th[k], NULL, flip_faulter, &w[k]))
				fail("pthread_create: %s", strerror(errno));
		}
		flip_all(&flip_seed);
		usleep(1000);
		atomic_store(&storm->stop, true);
		for (int k = 0; k < FAULTERS_HERE; k++)
			pthread_join(th[k], NULL);
		bad += check_flipped();
		rounds++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (!bad && !atomic_load(&storm->failures) &&
		 (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
	printf("# %ld rounds: remap=%ld guard=%ld read=%ld guard_hit=%ld\n", rounds,
	       atomic_load(&storm->count[OP_REMAP]), atomic_load(&storm->count[OP_GUARD]),
	       atomic_load(&storm->count[OP_READ]), atomic_load(&storm->count[OP_GUARD_HIT]));
	EXPECT_EQ(0, storm_failures());
	EXPECT_EQ(0, bad);
	release_probe_signals();
}

/*
 * --- a big remap while another thread streams through the range -------------
 *
 * With remaps under the mmap read lock, a reader keeps faulting pages of
 * the range in while a remap of the whole range runs: through entries the
 * remap has not replaced yet, and through the ones it has.  The remap must
 * still finish, as it did when it held the lock for writing: pages that
 * already show the new layout stay, and a zap resumes where the pass
 * stopped instead of at the start.  The same cycle of four remaps is timed
 * first over a range populated just before each remap, with nobody
 * reading; two cycles with the readers must then take less than
 * STREAM_RATIO times as long, plus STREAM_SLACK per cycle (both scale
 * alike with the host's load; remaps that started over after every zap
 * took 7-20 s a cycle), and the layout must be right afterwards.  Under KASAN and
 * lockdep (a kernel release naming "debug") a remap takes seconds and
 * varies with the host's load far more than that: there the test runs on
 * a quarter of the pages, for the checkers, and only prints the times.
 */
#define STREAM_PAGES 16384
#define STREAMERS 2
#define STREAM_CYCLES 2
/*
 * With readers, a cycle may take this many times as long as the same
 * cycle over a range populated beforehand with nobody reading, plus
 * STREAM_SLACK seconds (not checked on the debug kernel: see below)
 */
#define STREAM_RATIO 10.0
#define STREAM_SLACK 0.5

static size_t stream_pages;	/* STREAM_PAGES, or a quarter of it */

static void *streamer(void *arg)
{
	size_t page = storm->page;
	uint64_t sum = 0;

	(void)arg;
	while (!atomic_load(&storm->stop)) {
		for (size_t i = 0; i < stream_pages && !atomic_load(&storm->stop); i++)
			sum += *(volatile uint64_t *)(storm->map + i * page);
		atomic_fetch_add(&storm->count[OP_READ], 1);
	}
	return (void *)(uintptr_t)sum;
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

TEST_F_TIMEOUT(race, remap_while_streaming, 900)
{
	/* @half: the layout shows the second half of the file */
	static const struct { bool half; int prot; unsigned long flags; const char *what; } step[] = {
		{ true, 0, 0, "to the second half of the file" },
		{ false, 0, 0, "back to the linear offsets" },
		{ true, PROT_READ, MAP_CHGPROT, "read-only, to the second half" },
		{ true, PROT_READ | PROT_WRITE, MAP_CHGPROT, "writable again" },
	};
	size_t page = nl_pagesize();
	double total = 0, alone = 0, bound;
	size_t pages = STREAM_PAGES;
	pthread_t th[STREAMERS];
	struct utsname u;
	bool debug;

	if (!nonlinear_supported())
		SKIP(return, "no nonlinear remap_file_pages() on this kernel");
	debug = !uname(&u) && strstr(u.release, "debug");
	if (debug)
		pages /= 4;
	stream_pages = pages;
	storm = new_storm();
	ASSERT_NE(NULL, storm);
	storm->fd = nl_memfd("nl_stream", 2 * pages, false);
	ASSERT_LE(0, storm->fd);
	ASSERT_EQ(0, nl_stamp_fd(storm->fd, 0, 2 * pages, 0, false));
	storm->map = mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_SHARED, storm->fd, 0);
	ASSERT_NE(MAP_FAILED, storm->map);
	/* Nonlinear before the reader starts: the last page shows page 0 */
	ASSERT_EQ(0, nl_remap(storm->map + (pages - 1) * page, page, 0, 0, MAP_NONBLOCK));
	/* The cycle alone: each remap over a range populated just before */
	for (size_t j = 0; j < sizeof(step) / sizeof(step[0]); j++) {
		uint64_t sum = 0;
		struct timespec t0;

		for (size_t i = 0; i < pages; i++)
			sum += *(volatile uint64_t *)(storm->map + i * page);
		(void)sum;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		ASSERT_EQ(0, nl_remap(storm->map, pages * page, step[j].prot,
				      step[j].half ? pages : 0, step[j].flags));
		alone += seconds_since(&t0);
	}
	printf("# one cycle of %zu-page remaps with nobody reading: %.3f s\n", pages, alone);
	atomic_store(&storm->stop, false);
	for (int t = 0; t < STREAMERS; t++)
		ASSERT_EQ(0, pthread_create(&th[t], NULL, streamer, NULL));
	for (size_t k = 0; k < STREAM_CYCLES * sizeof(step) / sizeof(step[0]); k++) {
		size_t j = k % (sizeof(step) / sizeof(step[0]));
		struct timespec t0;
		double took;
		int ret;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		ret = nl_remap(storm->map, pages * page, step[j].prot, step[j].half ? pages : 0,
			       step[j].flags);
		took = seconds_since(&t0);
		printf("# remap of %zu pages %s while %d threads read them: %.3f s\n", pages,
		       step[j].what, STREAMERS, took);
		EXPECT_EQ(0, ret);
		total += took;
	}
	bound = STREAM_CYCLES * (STREAM_RATIO * alone + STREAM_SLACK);
	if (debug) {
		printf("# %.3f s in all (not bounded on a debug kernel)\n", total);
	} else {
		printf("# %.3f s in all, %.1f times the cycle alone (at most %.3f s)\n", total,
		       total / (STREAM_CYCLES * alone), bound);
		EXPECT_GT(bound, total);
	}
	atomic_store(&storm->stop, true);
	for (int t = 0; t < STREAMERS; t++)
		pthread_join(th[t], NULL);
	printf("# the readers made %ld passes\n", atomic_load(&storm->count[OP_READ]));
	{
		uint64_t *want = calloc(pages, sizeof(*want));

		ASSERT_NE(NULL, want);
		for (size_t i = 0; i < pages; i++)
			want[i] = NL_STAMP(pages + i, 0);
		EXPECT_EQ(0, nl_check_pages(storm->map, pages, want, false));
		free(want);
	}
	munmap(storm->map, pages * page);
	close(storm->fd);
}

NL_HARNESS_MAIN
