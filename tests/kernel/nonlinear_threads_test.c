// SPDX-License-Identifier: GPL-2.0
/*
 * Concurrency on a nonlinear shmem mapping: two threads fault pages in
 * while a third remaps them (and drops ptes) for a bounded time; every
 * value read must be some valid page stamp and the final layout must be
 * exactly the last one set.  A second test checks that a remap is seen at
 * once by a thread running on another CPU (the batched TLB flush reaches
 * every CPU that may cache the old translation).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "nonlinear_util.h" /* includes kselftest_harness.h */

#define N 64 /* mapped pages */
#define F (2 * N) /* file pages */
#define RUN_SECONDS 2.0

struct shared {
	char *map;
	size_t page;
	atomic_bool stop;
	atomic_long reads, bad_reads, remaps, remap_errors, drops;
	atomic_ulong first_bad;
	_Atomic size_t layout[N];
};

static int pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static void *faulter(void *arg)
{
	struct shared *s = arg;
	unsigned int seed = (unsigned int)(uintptr_t)&seed;
	long reads = 0;

	while (!atomic_load(&s->stop)) {
		for (size_t i = 0; i < N; i++) {
			uint64_t v = *(volatile uint64_t *)(s->map + i * s->page);
			uint64_t w = *(volatile uint64_t *)(s->map + i * s->page + s->page - 8);

			reads++;
			if (!NL_IS_STAMP(v, F) || !NL_IS_STAMP(w, F)) {
				unsigned long zero = 0;

				atomic_fetch_add(&s->bad_reads, 1);
				atomic_compare_exchange_strong(&s->first_bad, &zero, (unsigned long)v ?: 1);
			}
		}
		/* Drop a few ptes now and then so that faults keep happening. */
		if (rand_r(&seed) % 4 == 0) {
			size_t i = rand_r(&seed) % (N - 4);

			madvise(s->map + i * s->page, 4 * s->page, MADV_DONTNEED);
			atomic_fetch_add(&s->drops, 1);
		}
	}
	atomic_fetch_add(&s->reads, reads);
	return NULL;
}

static void *remapper(void *arg)
{
	struct shared *s = arg;
	unsigned int seed = 12345;
	double end = nl_now() + RUN_SECONDS;

	while (nl_now() < end) {
		size_t i = rand_r(&seed) % N, len = 1 + rand_r(&seed) % 4, pg = rand_r(&seed) % (F - 4);

		if (i + len > N)
			len = N - i;
		if (nl_remap(s->map + i * s->page, len * s->page, 0, pg, rand_r(&seed) % 2 ? MAP_NONBLOCK : 0)) {
			atomic_fetch_add(&s->remap_errors, 1);
			continue;
		}
		for (size_t k = 0; k < len; k++)
			atomic_store(&s->layout[i + k], pg + k);
		atomic_fetch_add(&s->remaps, 1);
	}
	atomic_store(&s->stop, true);
	return NULL;
}

TEST(two_faulters_one_remapper)
{
	struct shared *s = calloc(1, sizeof(*s));
	uint64_t want[N];
	pthread_t t[3];
	int fd;

	ASSERT_NE(NULL, s);
	s->page = nl_pagesize();
	fd = nl_memfd("nl_threads", F, true);
	ASSERT_LE(0, fd);
	s->map = nl_map_with_hole(N * s->page, fd);
	ASSERT_NE(MAP_FAILED, s->map);
	/* Start nonlinear: reversed into the upper half of the file. */
	for (size_t i = 0; i < N; i++) {
		ASSERT_EQ(0, nl_remap(s->map + i * s->page, s->page, 0, F - 1 - i, 0));
		atomic_store(&s->layout[i], F - 1 - i);
	}
	ASSERT_EQ(0, pthread_create(&t[0], NULL, faulter, s));
	ASSERT_EQ(0, pthread_create(&t[1], NULL, faulter, s));
	ASSERT_EQ(0, pthread_create(&t[2], NULL, remapper, s));
	for (int k = 0; k < 3; k++)
		ASSERT_EQ(0, pthread_join(t[k], NULL));
	TH_LOG("%ld remaps (%ld failed), %ld page reads, %ld pte drops, %ld bad reads",
	       atomic_load(&s->remaps), atomic_load(&s->remap_errors), atomic_load(&s->reads),
	       atomic_load(&s->drops), atomic_load(&s->bad_reads));
	EXPECT_EQ(0, atomic_load(&s->remap_errors));
	EXPECT_LT(0, atomic_load(&s->remaps));
	EXPECT_LT(0, atomic_load(&s->reads));
	EXPECT_EQ(0, atomic_load(&s->bad_reads))
		TH_LOG("first bad value %#lx", atomic_load(&s->first_bad));
	for (size_t i = 0; i < N; i++)
		want[i] = NL_STAMP(atomic_load(&s->layout[i]), 0);
	EXPECT_EQ(0, nl_check_pages(s->map, N, want, true));
	ASSERT_EQ(0, madvise(s->map, N * s->page, MADV_DONTNEED));
	EXPECT_EQ(0, nl_check_pages(s->map, N, want, true));
	/* The stock emulation can leave up to one VMA per page here. */
	EXPECT_NONLINEAR(s->map, N * s->page);
	munmap(s->map, N * s->page);
	close(fd);
	free(s);
}

/* --- a remap is visible at once on another CPU ---------------------------- */

#define ROUNDS 300
/*
 * Rounds are bounded by time too (TCG guests on a loaded host are slow);
 * fewer than this many completed rounds means the reader stalled.
 */
#define MIN_ROUNDS 30
#define SPAN 8 /* pages remapped per round (one call) */

struct tlb {
	char *map;
	size_t page;
	int cpu;
	atomic_int round; /* published by the remapper after each remap */
	atomic_int acked;
	atomic_int stop;  /* set once the remapper is done */
	uint64_t seen[SPAN];
};

static void *tlb_reader(void *arg)
{
	struct tlb *t = arg;
	int done = 0;

	if (t->cpu >= 0)
		pin_to_cpu(t->cpu);
	for (;;) {
		/* Keep the translations hot while waiting for the next round. */
		while (atomic_load_explicit(&t->round, memory_order_acquire) == done) {
			if (atomic_load_explicit(&t->stop, memory_order_acquire))
				return NULL;
			for (size_t k = 0; k < SPAN; k++)
				(void)*(volatile uint64_t *)(t->map + k * t->page);
		}
		done = atomic_load_explicit(&t->round, memory_order_acquire);
		for (size_t k = 0; k < SPAN; k++)
			t->seen[k] = *(volatile uint64_t *)(t->map + k * t->page);
		atomic_store_explicit(&t->acked, done, memory_order_release);
	}
}

TEST(remap_visible_on_other_cpu)
{
	struct tlb *t = calloc(1, sizeof(*t));
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	long stale = 0;
	int rounds = 0;
	double end;
	pthread_t th;
	int fd;

	ASSERT_NE(NULL, t);
	t->page = nl_pagesize();
	t->cpu = cpus >= 2 ? 1 : -1;
	TH_LOG("%ld CPUs online%s", cpus, cpus < 2 ? ": reader and remapper share one CPU" : "");
	fd = nl_memfd("nl_tlb", 4 * SPAN, true);
	ASSERT_LE(0, fd);
	t->map = nl_map_with_hole(SPAN * t->page, fd);
	ASSERT_NE(MAP_FAILED, t->map);
	if (cpus >= 2)
		pin_to_cpu(0);
	/* Populate, make the mapping nonlinear. */
	ASSERT_EQ(0, nl_remap(t->map, SPAN * t->page, 0, SPAN, 0));
	ASSERT_EQ(0, pthread_create(&th, NULL, tlb_reader, t));
	end = nl_now() + 20; /* below the harness's 30 s timeout */
	for (int r = 1; r <= ROUNDS && nl_now() < end; r++) {
		/*
		 * Rounds alternate between four file windows; odd rounds remap
		 * one page per call, reversed, even rounds the whole span in one
		 * call (one batched TLB flush).
		 */
		size_t base = (size_t)(r % 4) * SPAN, want[SPAN];

		for (size_t k = 0; k < SPAN; k++)
			want[k] = r % 2 ? base + SPAN - 1 - k : base + k;
		if (r % 2) {
			for (size_t k = 0; k < SPAN; k++)
				if (nl_remap(t->map + k * t->page, t->page, 0, want[k], 0))
					break;
		} else {
			nl_remap(t->map, SPAN * t->page, 0, base, 0);
		}
		atomic_store_explicit(&t->round, r, memory_order_release);
		while (atomic_load_explicit(&t->acked, memory_order_acquire) != r && nl_now() < end)
			;
		/* Out of time before the reader looked: nothing to check. */
		if (atomic_load_explicit(&t->acked, memory_order_acquire) != r)
			break;
		rounds = r;
		for (size_t k = 0; k < SPAN; k++)
			if (t->seen[k] != NL_STAMP(want[k], 0)) {
				if (stale < 5)
					TH_LOG("round %d page %zu: saw %#" PRIx64 ", want %#" PRIx64, r, k,
					       t->seen[k], NL_STAMP(want[k], 0));
				stale++;
			}
	}
	atomic_store_explicit(&t->stop, 1, memory_order_release);
	pthread_join(th, NULL);
	TH_LOG("%d of %d rounds checked", rounds, ROUNDS);
	ASSERT_LE(MIN_ROUNDS, rounds) TH_LOG("the reader stalled");
	EXPECT_EQ(0, stale) TH_LOG("%ld stale reads after a remap", stale);
	EXPECT_NONLINEAR(t->map, SPAN * t->page);
	munmap(t->map, SPAN * t->page);
	close(fd);
	free(t);
}

/*
 * mlock() steps over guard pages of a nonlinear vma.  Remaps run under
 * the mmap read lock, as mlock()'s populate does, so another thread may
 * turn a guard back into a page between the fault that met the guard and
 * the check that it was one: mlock() must still succeed (it used to fail
 * with ENOMEM then).
 */
struct flip {
	char *map;
	size_t page;
	atomic_bool stop;
	atomic_long flips, errors;
};

static void *guard_flipper(void *arg)
{
	struct flip *f = arg;

	while (!atomic_load(&f->stop)) {
		if (nl_remap(f->map, f->page, PROT_NONE, 2, MAP_CHGPROT) ||
		    nl_remap(f->map, f->page, 0, 2, MAP_NONBLOCK))
			atomic_fetch_add(&f->errors, 1);
		atomic_fetch_add(&f->flips, 1);
	}
	return NULL;
}

TEST(mlock_while_guard_flips)
{
	struct flip *f = calloc(1, sizeof(*f));
	long calls = 0, failed = 0;
	int fd, first_errno = 0;
	pthread_t th;
	double end;

	ASSERT_NE(NULL, f);
	f->page = nl_pagesize();
	fd = nl_memfd("nl_mlock_flip", 4, true);
	ASSERT_LE(0, fd);
	f->map = nl_map_with_hole(2 * f->page, fd);
	ASSERT_NE(MAP_FAILED, f->map);
	ASSERT_EQ(0, nl_remap(f->map, f->page, 0, 2, MAP_NONBLOCK));
	ASSERT_EQ(0, pthread_create(&th, NULL, guard_flipper, f));
	end = nl_now() + RUN_SECONDS;
	while (nl_now() < end) {
		if (mlock(f->map, 2 * f->page)) {
			if (!failed++)
				first_errno = errno;
		}
		munlock(f->map, 2 * f->page);
		calls++;
	}
	atomic_store(&f->stop, true);
	pthread_join(th, NULL);
	TH_LOG("%ld mlock calls, %ld failed (first: %s); %ld guard flips", calls, failed,
	       failed ? strerror(first_errno) : "none", atomic_load(&f->flips));
	EXPECT_EQ(0, failed);
	EXPECT_EQ(0, atomic_load(&f->errors));
	munmap(f->map, 2 * f->page);
	close(fd);
	free(f);
}

/*
 * A thread that keeps writing to a page of the layout a remap replaces
 * refaults it through the old entry whenever the remap's zap has taken it
 * away; the remap, which zaps again when it finds a page mapped ahead of
 * its pass and restarts after three zaps of one page table, must still
 * finish, and leave the new layout.  Asked by a review of the read-side
 * remap: the writer must not hold it off for good.  One writer per
 * position: the start of the range, the last page of its first page
 * table, the middle and the end.
 */
#define WRITER_PAGES 16384	/* 64 MiB: 32 page tables */
#define WRITER_LIMIT_S 30.0

struct old_page_writer {
	char *addr;
	atomic_bool stop;
	atomic_long writes;
};

static void *old_page_writer(void *arg)
{
	struct old_page_writer *w = arg;

	pin_to_cpu(1);
	while (!atomic_load_explicit(&w->stop, memory_order_relaxed)) {
		/* The last byte: the stamps the test checks are at the start */
		*(volatile char *)(w->addr + nl_pagesize() - 1) = 1;
		atomic_fetch_add_explicit(&w->writes, 1, memory_order_relaxed);
	}
	return NULL;
}

TEST(remap_beside_writer_of_an_old_page_finishes)
{
	static const size_t at[] = { 0, 511, WRITER_PAGES / 2, WRITER_PAGES - 1 };
	size_t page = nl_pagesize(), len = WRITER_PAGES * page;
	int fd;
	char *map;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs 2 CPUs");
	fd = nl_memfd("nl_old_page_writer", WRITER_PAGES + 1, false);
	ASSERT_LE(0, fd);
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, nl_stamp_fd(fd, 0, WRITER_PAGES + 1, 0, false));
	/* Nonlinear before timing: the remaps below take the read side */
	ASSERT_EQ(0, nl_remap(map, page, 0, 1, MAP_NONBLOCK));
	EXPECT_NONLINEAR(map, len);
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		struct old_page_writer w = { .addr = map + at[i] * page };
		uint64_t want = NL_STAMP(at[i] + 1, 0), got;
		pthread_t th;
		double t0, secs;

		/* The linear layout, all of it mapped; the new one is shifted by a page */
		ASSERT_EQ(0, nl_remap(map, len, 0, 0, MAP_NONBLOCK));
		ASSERT_EQ(0, madvise(map, len, MADV_POPULATE_WRITE));
		ASSERT_EQ(0, pthread_create(&th, NULL, old_page_writer, &w));
		while (atomic_load(&w.writes) < 1000)
			;
		pin_to_cpu(0);
		t0 = nl_now();
		EXPECT_EQ(0, nl_remap(map, len, 0, 1, MAP_NONBLOCK)) TH_LOG("remap: %s", strerror(errno));
		secs = nl_now() - t0;
		atomic_store(&w.stop, true);
		pthread_join(th, NULL);
		TH_LOG("writer at page %zu: remap of %d pages took %.3f s beside %ld writes", at[i],
		       WRITER_PAGES, secs, atomic_load(&w.writes));
		EXPECT_GT(WRITER_LIMIT_S, secs);
		/* The written address now shows the next file page */
		got = *(volatile uint64_t *)(map + at[i] * page);
		EXPECT_EQ(want, got) TH_LOG("page %zu shows %#llx", at[i], (unsigned long long)got);
		if (at[i] + 1 < WRITER_PAGES)
			EXPECT_EQ(NL_STAMP(at[i] + 2, 0), *(volatile uint64_t *)(map + (at[i] + 1) * page));
	}
	munmap(map, len);
	close(fd);
}

NL_HARNESS_MAIN
