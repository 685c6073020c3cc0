// SPDX-License-Identifier: GPL-2.0
/*
 * A fault that finds its slot in the reverse index without the index lock
 * must never trust a link another fault is still making, and may give up.
 *
 * finish_fault() checks, under the page table lock, that the index has the
 * address it is about to map (nonlinear_index_ensure()), first without the
 * index lock.  A link that stored the slot's owner entry first and erased
 * it again when the rest of the link could not be allocated showed that
 * check an entry that was about to go: the fault mapped its page, the
 * entry went, and the index no longer knew the address.  A hole punch or
 * truncation then left the page mapped there after it left the file.
 *
 * The race needs, at address X showing file page p (also shown, and
 * indexed, at Y, so that X's link needs an alias allocation):
 *   F1  a fault at X that adds X's slot and then waits in swap-in;
 *   R   a remap that guards X (dropping the slot) and shows p there again
 *       (the same entry, so F1's pte check still holds);
 *   F2  a fault at X whose slab allocations fail (failslab on its thread
 *       only), so that every try at linking X fails and starts again;
 * and F1's check must land while an F2 link is under way (one F2 per CPU
 * but F1's, so that their failing links follow each other under the index
 * lock).  After a punch of the page, X must read zeros.  The test repeats
 * this for a while and counts the attempts in which the window was open
 * (F1 still in swap-in once an F2 allocation had failed): a throttled swap
 * device (vm-run.sh --swap-iops), kept busy by the test's own direct reads,
 * opens it in most of them.  On the link that stored the owner entry first,
 * the debug kernel stopped at VM_BUG_ON_FOLIO(folio_mapped(folio)) when the
 * punch removed the page, within seconds.
 *
 * Needs root, /sys/kernel/debug/failslab (the debug kernel) and swap;
 * skipped otherwise, and when the window never opened.
 *
 *   NL_LINK_RACE_SECONDS   how long to keep trying (default 20)
 *   NL_LINK_RACE_MIN_OPEN  keep trying past that, up to 240 s, until this
 *                          many windows have opened, and fail rather than
 *                          skip below it (default 0: skip only at none)
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>

#include "nonlinear_util.h" /* includes kselftest_harness.h */

#ifndef FALLOC_FL_PUNCH_HOLE
#define FALLOC_FL_KEEP_SIZE 0x01
#define FALLOC_FL_PUNCH_HOLE 0x02
#endif

#define FAILSLAB "/sys/kernel/debug/failslab/"
#define STAMP 0x4c494e4b52414345ULL	/* "LINKRACE" */
#define FAILS_ARMED 1000000L
/*
 * Pages of the file and the mapping: a punch of more than an eighth of a
 * nonlinear vma zaps all of it, without the index, so the vma is larger.
 */
#define MAP_PAGES 64

/* One attempt's threads and what they saw */
struct attempt {
	char *x;			/* the raced address */
	atomic_int go_f1, go_f2;
	atomic_int f1_done;
	atomic_int f1_tid, f2_ready;
	atomic_int f1_met_guard;	/* F1's access met R's guard */
	uint64_t f1_value;		/* what F1's read returned */
};

static void pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* The scheduler state letter of thread @tid of this process, or 0 */
static char thread_state(int tid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/*
 * F1's swap-in may end while R's guard stands: the fault then maps nothing
 * and the access, made again, meets the guard (SIGSEGV).  F1 reads again
 * once the guard is gone; that attempt's window is closed.
 */
static __thread sigjmp_buf f1_jmp;
static __thread volatile sig_atomic_t f1_catching;

static void f1_segv(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	if (!f1_catching) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	siglongjmp(f1_jmp, 1);
}

static void *f1_fault(void *arg)
{
	struct attempt *a = arg;

	pin_to(0);
	atomic_store(&a->f1_tid, (int)syscall(SYS_gettid));
	while (!atomic_load(&a->go_f1))
		sched_yield();
	f1_catching = 1;
	if (sigsetjmp(f1_jmp, 1))
		atomic_store(&a->f1_met_guard, 1);
	a->f1_value = *(volatile uint64_t *)a->x;
	f1_catching = 0;
	atomic_store(&a->f1_done, 1);
	return NULL;
}

/* One F2 thread, on CPU @cpu */
struct f2_arg {
	struct attempt *a;
	int cpu;
};

static void *f2_fault(void *arg)
{
	struct f2_arg *f = arg;
	struct attempt *a = f->a;

	pin_to(f->cpu);
	atomic_fetch_add(&a->f2_ready, 1);
	while (!atomic_load(&a->go_f2))
		sched_yield();
	/* Only this thread's allocations fail (failslab's task-filter) */
	nl_write_file("/proc/thread-self/make-it-fail", "1");
	(void)*(volatile uint64_t *)a->x;
	/* make-it-fail goes with the thread, which ends here */
	return NULL;
}

static void failslab_disarm(void)
{
	nl_write_file(FAILSLAB "times", "0");
}

enum outcome { RACE_NOT_SET_UP, RACE_CLOSED, RACE_OPEN, RACE_LOST_SLOT };

/*
 * F2 threads, one per CPU but F1's: their failing links follow each other
 * under the index lock, so the entry a link stores first is there most of
 * the time.
 */
#define MAX_F2 3

static int f2_threads(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN) - 1;

	return cpus < 1 ? 1 : cpus > MAX_F2 ? MAX_F2 : (int)cpus;
}

/* How far attempts got: F1 seen in swap-in, and still there after R */
static long f1_in_swapin, f1_after_remap;

/*
 * One attempt on a fresh file and mapping.  RACE_LOST_SLOT: X kept the
 * page after the punch took it from the file.  @why says what went wrong
 * when the attempt could not be set up or checked.
 */
static enum outcome one_attempt(const char **why)
{
	size_t page = nl_pagesize();
	struct attempt a = { 0 };
	enum outcome out = RACE_CLOSED;
	struct f2_arg f2[MAX_F2];
	pthread_t t1, t2[MAX_F2];
	int n_f2 = 0, want_f2 = f2_threads();
	bool f2_started = false;
	char *map, *y;
	uint64_t stamp = STAMP, v;
	long long out0;
	double t0;
	int fd;

	fd = nl_memfd("nl_link_race", MAP_PAGES, false);
	if (fd < 0) {
		*why = "memfd";
		return RACE_NOT_SET_UP;
	}
	map = mmap(NULL, MAP_PAGES * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		close(fd);
		*why = "mmap";
		return RACE_NOT_SET_UP;
	}
	y = map + 2 * page;
	a.x = map + 3 * page;
	out = RACE_NOT_SET_UP;
	*why = "remap_file_pages";
	/* Y and X show page 0, neither faulted in */
	if (nl_remap(y, page, 0, 0, MAP_NONBLOCK) || nl_remap(a.x, page, 0, 0, MAP_NONBLOCK))
		goto out_unmap;
	*why = "pthread_create";
	if (pthread_create(&t1, NULL, f1_fault, &a))
		goto out_unmap;
	for (; n_f2 < want_f2; n_f2++) {
		f2[n_f2] = (struct f2_arg){ .a = &a, .cpu = 1 + n_f2 };
		if (pthread_create(&t2[n_f2], NULL, f2_fault, &f2[n_f2])) {
			out = RACE_NOT_SET_UP;
			goto join;
		}
	}
	while (!atomic_load(&a.f1_tid) || atomic_load(&a.f2_ready) < n_f2)
		;
	/* Beside F1, which sleeps in swap-in: the F2s have CPUs to themselves */
	pin_to(0);
	out = RACE_NOT_SET_UP;
	*why = "pwrite";
	if (pwrite(fd, &stamp, sizeof(stamp), 0) != (ssize_t)sizeof(stamp))
		goto join;
	/*
	 * Y indexes the page; paging it out (mapped once) keeps Y's slot.  F1
	 * must fault while the swap write is under way (the page stays in the
	 * swap cache once it is written): the threads are ready before it.
	 */
	*why = "the page did not go to swap";
	out0 = nl_vmstat("pswpout");
	if (*(volatile uint64_t *)y != STAMP || madvise(y, page, MADV_PAGEOUT) ||
	    nl_vmstat("pswpout") <= out0 || (nl_pagemap(y) & PM_PRESENT))
		goto join;
	*why = NULL;
	out = RACE_CLOSED;
	/* F1 faults at X: its slot is added, then it waits for swap-in */
	atomic_store(&a.go_f1, 1);
	t0 = nl_now();
	while (thread_state(a.f1_tid) != 'D' && !atomic_load(&a.f1_done) && nl_now() - t0 < 0.5)
		;
	if (atomic_load(&a.f1_done) || thread_state(a.f1_tid) != 'D')
		goto join;
	f1_in_swapin++;
	/* R: X's slot goes with the guard; the same entry comes back */
	if (nl_remap(a.x, page, PROT_NONE, 0, MAP_CHGPROT) ||
	    nl_remap(a.x, page, 0, 0, MAP_NONBLOCK)) {
		*why = "remap of X";
		out = RACE_NOT_SET_UP;
		goto join;
	}
	if (thread_state(a.f1_tid) == 'D')
		f1_after_remap++;
	/* F2 faults at X with every allocation failing */
	if (nl_failslab_arm(FAILS_ARMED, false)) {
		*why = "failslab";
		out = RACE_NOT_SET_UP;
		goto join;
	}
	atomic_store(&a.go_f2, 1);
	f2_started = true;
	t0 = nl_now();
	while (read_long(FAILSLAB "times") == FAILS_ARMED && !atomic_load(&a.f1_done) &&
	       nl_now() - t0 < 0.5)
		;
	if (read_long(FAILSLAB "times") < FAILS_ARMED && !atomic_load(&a.f1_done) &&
	    !atomic_load(&a.f1_met_guard))
		out = RACE_OPEN;
join:
	if (!f2_started)
		atomic_store(&a.go_f2, 1);
	atomic_store(&a.go_f1, 1);
	while (!atomic_load(&a.f1_done))
		;
	pthread_join(t1, NULL);
	/* F1 mapped X (or an F2 did): the F2s' next try finds the page */
	failslab_disarm();
	for (int i = 0; i < n_f2; i++)
		pthread_join(t2[i], NULL);
	if (out == RACE_NOT_SET_UP)
		goto out_unmap;
	if (a.f1_value != STAMP) {
		*why = "F1 read the wrong value";
		out = RACE_NOT_SET_UP;
		goto out_unmap;
	}
	/* The page leaves the file: X must not keep it */
	if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)page)) {
		*why = "fallocate";
		out = RACE_NOT_SET_UP;
		goto out_unmap;
	}
	v = *(volatile uint64_t *)a.x;
	if (v == STAMP)
		out = RACE_LOST_SLOT;
	else if (v) {
		*why = "X read neither the page nor zeros";
		out = RACE_NOT_SET_UP;
	}
out_unmap:
	munmap(map, MAP_PAGES * page);
	close(fd);
	return out;
}

/*
 * Direct reads that keep the swap device busy: on a throttled device
 * (vm-run.sh --swap-iops) each swap write then waits its turn, and F1's
 * fault waits for it.
 */
struct swap_load {
	pthread_t thread;
	atomic_bool stop;
	int fd;
};

static void *swap_reader(void *arg)
{
	struct swap_load *l = arg;
	off_t off = 0;
	void *buf;

	if (posix_memalign(&buf, 4096, 4096))
		return NULL;
	while (!atomic_load(&l->stop)) {
		if (pread(l->fd, buf, 4096, off) != 4096)
			break;
		off = (off + 4096) % (1 << 20);
	}
	free(buf);
	return NULL;
}

/* Starts the reader on the first swap device; -1 if there is none. */
static int swap_load_start(struct swap_load *l)
{
	char dev[256] = "";
	FILE *f = fopen("/proc/swaps", "r");

	l->fd = -1;
	if (!f)
		return -1;
	/* The header line, then "device type size used priority" */
	if (fscanf(f, "%*[^\n]\n%255s", dev) != 1)
		dev[0] = 0;
	fclose(f);
	if (!dev[0])
		return -1;
	l->fd = open(dev, O_RDONLY | O_DIRECT);
	if (l->fd < 0)
		return -1;
	atomic_store(&l->stop, false);
	if (pthread_create(&l->thread, NULL, swap_reader, l)) {
		close(l->fd);
		l->fd = -1;
		return -1;
	}
	return 0;
}

static void swap_load_stop(struct swap_load *l)
{
	if (l->fd < 0)
		return;
	atomic_store(&l->stop, true);
	pthread_join(l->thread, NULL);
	close(l->fd);
	l->fd = -1;
}

FIXTURE(link_race)
{
	struct sigaction old_segv;
	struct swap_load load;
};

FIXTURE_SETUP(link_race)
{
	struct sigaction sa = { .sa_sigaction = f1_segv, .sa_flags = SA_SIGINFO | SA_NODEFER };

	if (!nonlinear_supported())
		SKIP(return, "no nonlinear remap_file_pages() on this kernel");
	if (geteuid() || access(FAILSLAB "times", W_OK))
		SKIP(return, "needs root and CONFIG_FAILSLAB (the debug kernel)");
	if (nl_meminfo_kb("SwapTotal") <= 0)
		SKIP(return, "no active swap");
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs 2 CPUs");
	ASSERT_EQ(0, sigaction(SIGSEGV, &sa, &self->old_segv));
	if (swap_load_start(&self->load))
		TH_LOG("no direct reads of the swap device: %s", strerror(errno));
}

FIXTURE_TEARDOWN(link_race)
{
	swap_load_stop(&self->load);
	failslab_disarm();
}

/*
 * Attempts after which a window that never opened means a swap device too
 * fast for it (no --swap-iops): unless windows are required, the test
 * stops there and is skipped.
 */
#define PROBE_ATTEMPTS 50

/* NL_LINK_RACE_SECONDS is capped below the harness timeout */
#define MAX_SECONDS 240

TEST_F_TIMEOUT(link_race, fault_beside_failing_link_keeps_its_slot, MAX_SECONDS + 60)
{
	const char *env = getenv("NL_LINK_RACE_SECONDS");
	const char *min_env = getenv("NL_LINK_RACE_MIN_OPEN");
	double seconds = env ? atof(env) : 20, t0;
	long min_open = min_env ? atol(min_env) : 0;
	long attempts = 0, open = 0, lost = 0, not_set_up = 0;
	const char *why = NULL, *last_why = NULL;

	if (!(seconds > 0) || seconds > MAX_SECONDS)
		seconds = seconds > MAX_SECONDS ? MAX_SECONDS : 20;
	t0 = nl_now();
	/* Past @seconds only to reach @min_open windows, up to the cap */
	while (nl_now() - t0 < seconds ||
	       (open < min_open && nl_now() - t0 < MAX_SECONDS)) {
		switch (one_attempt(&why)) {
		case RACE_NOT_SET_UP:
			not_set_up++;
			last_why = why;
			break;
		case RACE_CLOSED:
			break;
		case RACE_OPEN:
			open++;
			break;
		case RACE_LOST_SLOT:
			open++;
			lost++;
			break;
		}
		attempts++;
		if (attempts == PROBE_ATTEMPTS && !open && !min_open)
			break;
	}
	TH_LOG("%ld attempts in %.1f s: F1 seen in swap-in %ld, still there after the remaps %ld, window open in %ld, X kept a punched page in %ld, %ld not set up%s%s%s",
	       attempts, nl_now() - t0, f1_in_swapin, f1_after_remap, open, lost, not_set_up,
	       last_why ? " (last: " : "", last_why ? last_why : "", last_why ? ")" : "");
	EXPECT_EQ(0, lost) TH_LOG("a fault mapped X while another fault's link of X failed, and the index lost X");
	if (min_open > 0) {
		EXPECT_LE(min_open, open) TH_LOG("the window opened too rarely to tell");
	} else if (!open && !lost) {
		SKIP(return, "the race window never opened (swap-in too fast: vm-run.sh --swap-iops)");
	}
}

NL_HARNESS_MAIN
