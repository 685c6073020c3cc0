/* SPDX-License-Identifier: MIT */
/* fork() while other threads are inside libunwind: libunwind steps frames
 * under a global mutex that no fork handler resets, so a child forked
 * while another thread held it waited for it forever at its first stack
 * capture.  Two threads allocate at varying call depths (so that stacks
 * are unwound, not remembered) while the main thread forks; each child
 * allocates once and exits.  A child that does not exit within 10 s is
 * counted as hung and killed.
 *   t_fork_unwinding [FORKS] */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

// TEST: fork while threads unwind: every child's first stack capture finishes
// REQUIRES: backend=guard
// RUN: %memdbg %t 200
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^forks 200, children hung 0, failed 0$

static volatile int stop;

static __attribute__((noinline)) void alloc_block(unsigned seed)
{
    char *p = malloc(16 + seed % 64);
    if (p) p[0] = 1;
    free(p);
}

/* 512 functions calling each other in random chains: more return
 * addresses than libunwind's cache holds, so its steps keep looking up
 * unwind tables under its lock. */
typedef void chain_fn(int depth, unsigned seed);
static chain_fn *const chain[512];
#define CHAIN_FN(n)                                                          \
    static __attribute__((noinline)) void chain_##n(int depth, unsigned seed) \
    {                                                                        \
        if (depth > 0)                                                       \
            chain[(seed >> 7) % 512](depth - 1, seed * 1103515245u + 12345u); \
        else                                                                 \
            alloc_block(seed);                                               \
        __asm__ volatile("" ::: "memory");   /* not a tail call */           \
    }
#define CHAIN_FN8(n) CHAIN_FN(n##0) CHAIN_FN(n##1) CHAIN_FN(n##2) CHAIN_FN(n##3) \
                     CHAIN_FN(n##4) CHAIN_FN(n##5) CHAIN_FN(n##6) CHAIN_FN(n##7)
#define CHAIN_FN64(n) CHAIN_FN8(n##0) CHAIN_FN8(n##1) CHAIN_FN8(n##2) CHAIN_FN8(n##3) \
                      CHAIN_FN8(n##4) CHAIN_FN8(n##5) CHAIN_FN8(n##6) CHAIN_FN8(n##7)
CHAIN_FN64(1) CHAIN_FN64(2) CHAIN_FN64(3) CHAIN_FN64(4)
CHAIN_FN64(5) CHAIN_FN64(6) CHAIN_FN64(7) CHAIN_FN64(8)
#define REF(n) chain_##n,
#define REF8(n) REF(n##0) REF(n##1) REF(n##2) REF(n##3) REF(n##4) REF(n##5) REF(n##6) REF(n##7)
#define REF64(n) REF8(n##0) REF8(n##1) REF8(n##2) REF8(n##3) REF8(n##4) REF8(n##5) REF8(n##6) REF8(n##7)
static chain_fn *const chain[512] = { REF64(1) REF64(2) REF64(3) REF64(4)
                                      REF64(5) REF64(6) REF64(7) REF64(8) };

static void alloc_at_depth(int depth, unsigned seed)
{
    chain[seed % 512](depth, seed);
}

static void *churn(void *arg)
{
    unsigned seed = (unsigned)(size_t)arg;
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
        seed = seed * 1103515245u + 12345u;
        alloc_at_depth(1 + (int)((seed >> 16) % 40), seed);
    }
    return NULL;
}

/* Waits up to 10 s for the child: 1 exited 0, 0 failed, -1 hung (killed). */
static int wait_child(pid_t pid)
{
    int st;
    for (int i = 0; i < 1000; i++) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 1 : 0;
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return -1;
}

int main(int argc, char **argv)
{
    int forks = argc > 1 ? atoi(argv[1]) : 200;
    pthread_t th[2];
    for (int t = 0; t < 2; t++) pthread_create(&th[t], NULL, churn, (void *)(size_t)(t + 1));
    int hung = 0, failed = 0;
    for (int f = 0; f < forks; f++) {
        pid_t pid = fork();
        if (pid < 0) { perror("fork"); return 2; }
        if (pid == 0) {
            alloc_at_depth(f % 7, (unsigned)f);
            _exit(0);
        }
        int r = wait_child(pid);
        if (r < 0) hung++;
        else if (r == 0) failed++;
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    for (int t = 0; t < 2; t++) pthread_join(th[t], NULL);
    printf("forks %d, children hung %d, failed %d\n", forks, hung, failed);
    return 0;
}
