/* SPDX-License-Identifier: MIT */
/* free() from a signal handler that interrupted malloc/free: memdbg used to
 * drop such a free (md_in_runtime set), so the block became a false leak.
 * A CPU-time timer fires every 100 us while main does nothing but
 * malloc/free pairs; each signal frees one of N blocks and forgets it.  At
 * exit every block is freed: no leak may be reported. */

// free() in a signal handler that interrupted malloc/free is not lost.
// TEST: free() from a signal handler inside malloc/free: no false leak
// RUN: %memdbg %t
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^freed 300 in the handler

#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define N 300
static void *volatile blocks[N];
static volatile int freed;

static void on_prof(int sig)
{
    (void)sig;
    if (freed < N) {
        free(blocks[freed]);
        blocks[freed] = 0;
        freed++;
    }
}

int main(void)
{
    for (int i = 0; i < N; i++) blocks[i] = malloc(24);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_prof;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGPROF, &sa, 0);
    struct itimerval it = { { 0, 100 }, { 0, 100 } };
    setitimer(ITIMER_PROF, &it, 0);
    long pairs = 0;
    while (freed < N && pairs < 50000000) {
        void *p = malloc(32);
        free(p);
        pairs++;
    }
    struct itimerval off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_PROF, &off, 0);
    printf("freed %d in the handler after %ld pairs\n", freed, pairs);
    for (int i = freed; i < N; i++) free(blocks[i]);
    return 0;
}
