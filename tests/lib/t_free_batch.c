/* SPDX-License-Identifier: MIT */
/* free_batch=N: a freed block's guard may wait for N-1 later frees of its
 * thread, never longer; a thread's exit installs its waiting guards; a
 * double free is found at once.  Whether a page is accessible is asked
 * with write(2) to a pipe (EFAULT), which takes no fault.
 *   t_free_batch window K   free, report, K more frees, report, then use it
 *   t_free_batch thread     a thread frees and exits; main uses the block
 *   t_free_batch double     free twice in a row */

// free_batch acts on guard and mprotect: nonlinear guards at once in free
// (and compact_defer batches its guards).
// TEST: free_batch=8: a freed block's guard waits for at most 7 frees
// REQUIRES: backend!=nonlinear
// RUN: %memdbg -o free_batch=8 %t window 6
// CHECK-OUT: ^after free: accessible$
// CHECK-OUT: ^after 6 more frees: accessible$
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// RUN: %memdbg -o free_batch=8 %t window 7
// CHECK-OUT: ^after 7 more frees: guarded$
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
// RUN: %memdbg %t window 0
// CHECK-OUT: ^after free: guarded$
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
//
// A thread's waiting guards are installed when it exits.
// TEST: free_batch: a thread's waiting guards are installed at its exit
// REQUIRES: backend!=nonlinear
// RUN: %memdbg -o free_batch=64 %t thread
// CHECK-OUT: ^after the thread.s exit: guarded$
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
//
// TEST: free_batch: double free found at the second free
// RUN: %memdbg -o free_batch=64 %t double
// EXIT: 1
// CHECK-ERROR: double-free
//
// TEST: free_batch: threads, fork, quarantine 0
// RUN: %memdbg -o free_batch=32 %T/t_threads
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^ok$
// RUN: %memdbg -o free_batch=32 %T/t_fork
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok
// RUN: %memdbg -o free_batch=32:quarantine_size_mb=0 %T/t_stress 20000
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^ok$

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *state(const char *p)
{
    int fd[2];
    if (pipe(fd) != 0) return "?";
    const char *s = write(fd[1], p, 1) < 0 && errno == EFAULT ? "guarded" : "accessible";
    close(fd[0]);
    close(fd[1]);
    return s;
}

static char *freed_by_thread;
static void *thread_main(void *arg)
{
    (void)arg;
    freed_by_thread = malloc(48);
    memset(freed_by_thread, 1, 48);
    free(freed_by_thread);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "window";
    if (!strcmp(mode, "window")) {
        int k = argc > 2 ? atoi(argv[2]) : 0;
        char *p = malloc(32);
        memset(p, 0, 32);
        free(p);
        printf("after free: %s\n", state(p));
        for (int i = 0; i < k; i++) free(malloc(64));
        printf("after %d more frees: %s\n", k, state(p));
        fflush(stdout);
        return p[3];   /* a use-after-free: reported if guarded */
    }
    if (!strcmp(mode, "thread")) {
        pthread_t t;
        pthread_create(&t, 0, thread_main, 0);
        pthread_join(t, 0);
        printf("after the thread's exit: %s\n", state(freed_by_thread));
        fflush(stdout);
        return freed_by_thread[1];
    }
    char *p = malloc(16);
    free(p);
    free(p);
    puts("survived");
    return 0;
}
