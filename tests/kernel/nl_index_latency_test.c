// SPDX-License-Identifier: GPL-2.0
/*
 * No nonlinear operation an unprivileged user can lengthen may hold the
 * CPU without rescheduling: each long operation runs as uid 65534 on CPU
 * 0 beside a ticker that sleeps 10 ms at a time on the same CPU, and the
 * test fails when the ticker was kept from running for more than 100 ms
 * during the operation, when the operation took more than 2 s (it costs
 * O(aliases) or O(page tables), far less), or when the kernel log reports
 * an RCU stall, a soft lockup or a hung task.
 *
 *   - MADV_PAGEOUT of a page shown at 65,535 addresses, mapped at the
 *     middle one: the rmap walk visits the aliases the reverse index has
 *     until it finds it;
 *   - a hole punched at that page's offset: truncation zaps every alias;
 *   - MADV_REMOVE over a huge nonlinear mapping with one page table: the
 *     walk must cost what the page tables cost, not one step per page;
 *   - remap_file_pages() of a 32 GiB range of a mapping while another
 *     thread of the worker faults pages of the same mapping in, outside
 *     the range, from another CPU: the remap holds mmap_lock only for
 *     reading, so the faults must go on during it, and it must still
 *     reschedule between page tables.
 *
 * A busy host can keep the guest's CPU from running for a while, which
 * the ticker sees as a gap too: an operation is tried up to three times
 * and fails only if every try starves the ticker.
 */
#include <pthread.h>
#include <sched.h>
#include <sys/wait.h>

#include "nonlinear_util.h"

#ifndef FALLOC_FL_PUNCH_HOLE
#define FALLOC_FL_KEEP_SIZE 0x01
#define FALLOC_FL_PUNCH_HOLE 0x02
#endif

#define TICK_NS 10000000L	/* the ticker's sleep */
#define MAX_GAP 0.100		/* seconds the ticker may wait */
#define MAX_TIME 2.0		/* seconds an operation may take */
#define MAX_TICKS 200000
#define TRIES 3
#define NOBODY 65534

/* Shared by the parent, the ticker and the worker */
struct timing {
	volatile int stop;
	volatile double op_start, op_end;	/* set by the worker */
	volatile long ticks;
	volatile double tick[MAX_TICKS];	/* ticker wake-ups */
};

/*
 * Aliases of the page: 65,535, or 16,383
 * on the debug kernel (KASAN makes each fault several times slower), or
 * NL_LATENCY_ALIASES.
 */
static size_t aliases(void)
{
	const char *s = getenv("NL_LATENCY_ALIASES");
	struct utsname u;

	if (s)
		return strtoul(s, NULL, 0);
	if (!uname(&u) && strstr(u.release, "-debug"))
		return 16383;
	return 65535;
}

/* The MADV_REMOVE range: 256 GiB, 2^26 pages, unless set in GiB */
static size_t huge_len(void)
{
	const char *s = getenv("NL_LATENCY_REMOVE_GIB");

	return (s ? strtoul(s, NULL, 0) : 256) << 30;
}

/*
 * The remap range: 2^23 pages (32 GiB, 16,384 page tables), 2^20 on the
 * debug kernel, or NL_LATENCY_REMAP_PAGES (at least 8).  Writing the
 * entries of a fresh range costs about 0.1 us a page in a TCG guest, so
 * the remap takes several times MAX_GAP: one that did not reschedule
 * would keep the ticker waiting for the whole of it.
 */
static size_t remap_pages(void)
{
	const char *s = getenv("NL_LATENCY_REMAP_PAGES");
	struct utsname u;

	if (s && strtoul(s, NULL, 0) >= 8)
		return strtoul(s, NULL, 0);
	if (!uname(&u) && strstr(u.release, "-debug"))
		return 1 << 20;
	return 1 << 23;
}

/* Pages the other thread faults in, before the remap range */
#define STREAMED 4096
/* The worker's status when those faults stopped during the remap */
#define STARVED_FAULTS 79

static int pin_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static int drop_privileges(void)
{
	return setresgid(NOBODY, NOBODY, NOBODY) || setresuid(NOBODY, NOBODY, NOBODY);
}

static void ticker(struct timing *t)
{
	struct timespec ts = { 0, TICK_NS };

	pin_cpu0();
	while (!t->stop && t->ticks < MAX_TICKS) {
		t->tick[t->ticks] = nl_now();
		t->ticks++;
		nanosleep(&ts, NULL);
	}
	_exit(0);
}

/* The longest the ticker went without running while the operation ran */
static double worst_gap(struct timing *t)
{
	double worst = 0;

	for (long i = 0; i + 1 < t->ticks; i++) {
		double a = t->tick[i], b = t->tick[i + 1];

		if (b > t->op_start && a < t->op_end && b - a > worst)
			worst = b - a;
	}
	return worst;
}

enum op { OP_PAGEOUT, OP_PUNCH, OP_REMOVE, OP_REMAP };
static const char *const op_name[] = { "MADV_PAGEOUT", "hole punch", "MADV_REMOVE",
				       "remap_file_pages()" };

/* Waits until the ticker runs, so that it sees the whole operation */
static void wait_for_ticker(struct timing *t)
{
	long first = t->ticks;

	while (t->ticks < first + 3)
		usleep(1000);
}

/* A thread faulting pages of a mapping in until told to stop */
struct streamer {
	char *map;
	volatile int stop;
	volatile int pinned;	/* 1 on its CPU, -1 if that failed */
	volatile long faults;	/* pages faulted in so far */
};

/*
 * Drops and faults in again the first STREAMED pages of s->map, over and
 * over, from the last CPU (CPU 0 when there is no other).
 */
static void *stream_pages(void *arg)
{
	struct streamer *s = arg;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t page = nl_pagesize();
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpus > 1 ? (int)cpus - 1 : 0, &set);
	s->pinned = pthread_setaffinity_np(pthread_self(), sizeof(set), &set) ? -1 : 1;
	while (!s->stop) {
		madvise(s->map, STREAMED * page, MADV_DONTNEED);
		for (size_t i = 0; i < STREAMED && !s->stop; i++) {
			(void)*(volatile uint64_t *)(s->map + i * page);
			s->faults++;
		}
	}
	return NULL;
}

/*
 * The remap: a nonlinear mapping of a sparse memfd, STREAMED pages that
 * another thread keeps faulting in, then remap_pages() pages remapped
 * whole to the second half of the file.  Returns 0 or where it failed.
 */
static int remap_while_streamed(struct timing *t)
{
	size_t page = nl_pagesize(), n = remap_pages(), all = STREAMED + n;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN), before, during;
	double t0, alone, beside;
	struct streamer s = { 0 };
	pthread_t reader;
	char *range;
	int fd, err = 0;

	fd = nl_memfd("nl_latency", 2 * all, false);
	if (fd < 0 || nl_stamp_fd(fd, 0, STREAMED, 0, false))
		return 70;
	/* The file pages that the addresses checked below show after it */
	for (size_t i = 0; i < n; i += n / 8)
		if (nl_stamp_fd(fd, all + i, 1, 0, false))
			return 71;
	s.map = mmap(NULL, all * page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
	if (s.map == MAP_FAILED)
		return 72;
	range = s.map + STREAMED * page;
	/* Nonlinear from here on: the remap below takes the read side */
	if (nl_remap(s.map + (all - 1) * page, page, 0, 2 * all - 1, MAP_NONBLOCK))
		return 73;
	if (pthread_create(&reader, NULL, stream_pages, &s))
		return 74;
	while (!s.pinned || s.faults < STREAMED)
		usleep(1000);
	/* Its fault rate with nothing else going on in the mapping */
	before = s.faults;
	t0 = nl_now();
	usleep(200000);
	alone = (s.faults - before) / (nl_now() - t0);
	wait_for_ticker(t);
	t->op_start = nl_now();
	during = s.faults;
	if (nl_remap(range, n * page, 0, all, MAP_NONBLOCK))
		err = 75;
	during = s.faults - during;
	t->op_end = nl_now();
	s.stop = 1;
	pthread_join(reader, NULL);
	wait_for_ticker(t);
	if (err)
		return err;
	if (s.pinned < 0)
		return 76;
	beside = during / (t->op_end - t->op_start);
	printf("# the other thread faulted %.0f pages/s in alone, %.0f during the remap\n",
	       alone, beside);
	/*
	 * On its own CPU it went on during the remap at a tenth of its rate
	 * at least: a remap that write-locked the mapping would have stopped
	 * it for nearly all of it.
	 */
	if (cpus > 1 && beside < alone / 10)
		return STARVED_FAULTS;
	for (size_t i = 0; i < STREAMED; i += 97)
		if (*(volatile uint64_t *)(s.map + i * page) != NL_STAMP(i, 0))
			return 77;
	for (size_t i = 0; i < n; i += n / 8)
		if (*(volatile uint64_t *)(range + i * page) != NL_STAMP(all + i, 0))
			return 78;
	return 0;
}

/* A page shown at @n + 1 addresses, all faulted in; NULL on failure */
static char *aliased_page(int *fd, size_t n)
{
	size_t page = nl_pagesize(), i;
	char *map;

	*fd = nl_memfd("nl_latency", 1, true);
	if (*fd < 0)
		return NULL;
	map = mmap(NULL, (n + 1) * page, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	if (map == MAP_FAILED)
		return NULL;
	for (i = 1; i <= n; i++)
		if (nl_remap(map + i * page, page, 0, 0, 0))
			return NULL;
	for (i = 0; i <= n; i++)
		if (*(volatile uint64_t *)(map + i * page) != NL_STAMP(0, 0))
			return NULL;
	return map;
}

/*
 * The worker: sets up as uid NOBODY, then runs @op between op_start and
 * op_end.  Exit status 0, or where it failed.
 */
static int worker(struct timing *t, enum op op)
{
	size_t page = nl_pagesize(), n = aliases(), huge = huge_len();
	char *map;
	int fd;

	if (pin_cpu0() || drop_privileges())
		return 40;
	if (op == OP_REMAP)
		return remap_while_streamed(t);
	if (op == OP_REMOVE) {
		fd = nl_memfd("nl_latency", 1, true);
		if (fd < 0)
			return 41;
		map = mmap(NULL, huge, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
		if (map == MAP_FAILED)
			return 42;
		/* One nonlinear page at the far end: one page table in all */
		if (nl_remap(map + huge - page, page, 0, 0, 0))
			return 43;
		if (*(volatile uint64_t *)(map + huge - page) != NL_STAMP(0, 0))
			return 44;
		wait_for_ticker(t);
		t->op_start = nl_now();
		if (madvise(map, huge, MADV_REMOVE))
			return 45;
		t->op_end = nl_now();
		wait_for_ticker(t);
		/* The page both ends show is gone */
		return nl_file_word(fd, 0) == 0 && *(volatile uint64_t *)map == 0 ? 0 : 46;
	}
	map = aliased_page(&fd, n);
	if (!map)
		return 47;
	/*
	 * Mapped once, indexed n times: at the middle alias, so that a walk
	 * that stops once the page is unmapped still visits half of them.
	 */
	if (madvise(map, (n / 2) * page, MADV_DONTNEED) ||
	    madvise(map + (n / 2 + 1) * page, (n - n / 2) * page, MADV_DONTNEED))
		return 48;
	wait_for_ticker(t);
	t->op_start = nl_now();
	if (op == OP_PAGEOUT ? madvise(map + n / 2 * page, page, MADV_PAGEOUT) :
	    fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)page))
		return 49;
	t->op_end = nl_now();
	wait_for_ticker(t);
	/* Every alias still shows the page, or its hole after a punch */
	for (size_t i = 0; i <= n; i += n / 7 + 1)
		if (*(volatile uint64_t *)(map + i * page) != (op == OP_PUNCH ? 0 : NL_STAMP(0, 0)))
			return 50;
	return 0;
}

/*
 * Runs @op once beside the ticker; the worst gap in *@gap, the
 * operation's time in *@took.  Returns the worker's exit status.
 */
static int run_once(enum op op, double *gap, double *took)
{
	struct timing *t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t tick_pid, work_pid;
	int status, ret;

	if (t == MAP_FAILED)
		return 60;
	t->op_start = t->op_end = 0;
	tick_pid = fork();
	if (tick_pid < 0)
		return 61;
	if (tick_pid == 0)
		ticker(t);
	work_pid = fork();
	if (work_pid < 0)
		return 62;
	if (work_pid == 0)
		_exit(worker(t, op));
	ret = waitpid(work_pid, &status, 0) == work_pid && WIFEXITED(status) ?
	      WEXITSTATUS(status) : 63;
	t->stop = 1;
	waitpid(tick_pid, NULL, 0);
	*took = t->op_end - t->op_start;
	*gap = worst_gap(t);
	munmap(t, sizeof(*t));
	return ret;
}

/* Whether the kernel log, read from @fd on, reports a stall or lockup */
static bool kernel_log_stalled(int fd)
{
	char rec[2048];
	bool bad = false;
	ssize_t len;

	if (fd < 0)
		return false;
	while ((len = read(fd, rec, sizeof(rec) - 1)) > 0 || (len < 0 && errno == EPIPE)) {
		if (len <= 0)
			continue;
		rec[len] = 0;
		if ((strstr(rec, "rcu") && strstr(rec, "stall")) || strstr(rec, "soft lockup") ||
		    strstr(rec, "hung_task") || strstr(rec, "blocked for more than")) {
			fprintf(stderr, "# kernel log: %s", rec);
			bad = true;
		}
	}
	return bad;
}

static void check_op(struct __test_metadata *_metadata, enum op op)
{
	int log = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	double gap = 0, took = 0;
	int try, ret = 0;

	if (!nonlinear_supported())
		SKIP(return, "no nonlinear remap_file_pages() on this kernel");
	if (getuid())
		SKIP(return, "needs root to run the operation as uid %d", NOBODY);
	if (log >= 0)
		lseek(log, 0, SEEK_END);
	for (try = 0; try < TRIES; try++) {
		ret = run_once(op, &gap, &took);
		/* The faulting thread's vCPU may have been kept from running */
		if (ret == STARVED_FAULTS && try + 1 < TRIES)
			continue;
		ASSERT_EQ(0, ret)
			TH_LOG("the worker failed at step %d%s", ret, ret == STARVED_FAULTS ?
			       " (faults stopped during the remap)" : "");
		if (op == OP_REMOVE)
			printf("# %s of %zu GiB", op_name[op], huge_len() >> 30);
		else if (op == OP_REMAP)
			printf("# %s of %zu pages beside faults", op_name[op], remap_pages());
		else
			printf("# %s of a page at %zu addresses", op_name[op], aliases() + 1);
		printf(" as uid %d: %.3f s, ticker gap %.3f s\n", NOBODY, took, gap);
		if (gap <= MAX_GAP && took <= MAX_TIME)
			break;
	}
	EXPECT_GE(MAX_GAP, gap)
		TH_LOG("%s kept a task on its CPU waiting %.3f s", op_name[op], gap);
	/* And it costs O(aliases), not O(aliases^2) or O(range) */
	EXPECT_GE(MAX_TIME, took)
		TH_LOG("%s took %.3f s", op_name[op], took);
	EXPECT_FALSE(kernel_log_stalled(log));
	if (log >= 0)
		close(log);
}

TEST(pageout_of_many_aliases_reschedules)
{
	check_op(_metadata, OP_PAGEOUT);
}

TEST(hole_punch_of_many_aliases_reschedules)
{
	check_op(_metadata, OP_PUNCH);
}

TEST(madv_remove_of_huge_sparse_range_reschedules)
{
	check_op(_metadata, OP_REMOVE);
}

TEST(remap_of_huge_range_beside_faults_reschedules)
{
	check_op(_metadata, OP_REMAP);
}

NL_HARNESS_MAIN
