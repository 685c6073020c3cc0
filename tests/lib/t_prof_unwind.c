/* SPDX-License-Identifier: MIT */
/* A profiler's SIGPROF handler that walks the stack with libunwind (as
 * gperftools' libprofiler does) while the program mallocs and frees from
 * two call sites (so memdbg unwinds too).  The program never blocks a
 * signal: its mask must stay empty, and the run must not hang.  memdbg
 * once let the handler's libunwind calls pass for its own and left
 * SIGPROF blocked after the handler interrupted an unwind.
 *   argv[1]: seconds (default 3).  Prints "ok: N iterations, M samples". */

// A SIGPROF handler unwinding with libunwind: the program's mask stays empty.
// TEST: a profiler's SIGPROF handler unwinding during memdbg's unwinds: the program's mask stays empty
// RUN: %memdbg -o detect_leaks=0 %t 3
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^ok: [0-9]+ iterations

#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static volatile sig_atomic_t samples;
static void *volatile sink;

static void on_prof(int sig)
{
	void *frames[32];
	(void)sig;
	unw_backtrace(frames, 32);
	samples++;
}

__attribute__((noinline)) static void churn(size_t n)
{
	void *p = malloc(n);
	sink = p;
	free(p);
	__asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) static void site_a(size_t n) { churn(n); __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) static void site_b(size_t n) { churn(n); __asm__ volatile("" ::: "memory"); }

int main(int argc, char **argv)
{
	int secs = argc > 1 ? atoi(argv[1]) : 3;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_prof;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGPROF, &sa, 0);
	struct itimerval every = { { 0, 200 }, { 0, 200 } };
	setitimer(ITIMER_PROF, &every, 0);
	time_t end = time(0) + secs;
	long i;
	for (i = 0; time(0) < end; i++) {
		if (i & 1)
			site_a(16 + i % 64);
		else
			site_b(16 + i % 64);
		sigset_t now;
		sigprocmask(SIG_BLOCK, 0, &now);
		if (!sigisemptyset(&now)) {
			printf("iteration %ld: signals left blocked:", i);
			for (int s = 1; s < 65; s++)
				if (sigismember(&now, s)) printf(" %d", s);
			printf(" (samples %d)\n", (int)samples);
			return 1;
		}
	}
	printf("ok: %ld iterations, %d samples\n", i, (int)samples);
	return 0;
}
