/* SPDX-License-Identifier: MIT */
/* libunwind checks stack words through a pipe of its own, which memdbg
 * keeps at high descriptor numbers (stack/unwind_fds.c).  A program that
 * closes every descriptor breaks that pipe, and every thread that unwinds
 * next finds it broken at once and asks for a new one.  Those requests
 * must not cross: when they did, one thread wrote into a pipe whose read
 * end another had just closed (SIGPIPE killed the program), or read a
 * descriptor that was no longer the pipe (the process hung).
 *   t_unwind_pipe_race [ROUNDS]
 * Each round closes every descriptor >= 3, then releases 12 threads at
 * once, each allocating and freeing 4 blocks (a stack captured for
 * each); after the rounds it forks a child that allocates too. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

// TEST: threads that find libunwind's pipe closed at once: no SIGPIPE, no hang
// REQUIRES: backend=guard
// RUN: %memdbg %t 200
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^rounds 200, blocks bad 0, child ok$

#define THREADS 12

static pthread_barrier_t start;
static int blocks_bad;

/* One close() per number, as programs without close_range do. */
static void close_from_3(void)
{
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    for (int fd = 3; fd < (int)rl.rlim_cur; fd++) close(fd);
}

/* A chain of calls deep enough that libunwind steps several frames. */
static __attribute__((noinline)) int churn(int depth, unsigned seed)
{
    if (depth > 0) return churn(depth - 1, seed * 31u + 7u);
    int bad = 0;
    for (int i = 0; i < 4; i++) {
        size_t n = 16 + (seed + (unsigned)i * 97u) % 2000;
        unsigned char *p = malloc(n);
        if (!p) return -1000;
        memset(p, (int)(seed + (unsigned)i), n);
        if (p[n - 1] != (unsigned char)(seed + (unsigned)i)) bad++;
        free(p);
    }
    __atomic_add_fetch(&blocks_bad, bad, __ATOMIC_RELAXED);
    return 0;
}

static void *worker(void *arg)
{
    pthread_barrier_wait(&start);
    churn(4, (unsigned)(size_t)arg);
    return NULL;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 150;
    struct rlimit rl = { 1024, 1024 };
    setrlimit(RLIMIT_NOFILE, &rl);   /* a close() per number stays cheap */
    pthread_barrier_init(&start, NULL, THREADS);
    free(malloc(1));   /* libunwind has opened its pipe */
    for (int r = 0; r < rounds; r++) {
        close_from_3();
        pthread_t th[THREADS];
        for (int t = 0; t < THREADS; t++)
            pthread_create(&th[t], NULL, worker, (void *)(size_t)(r * THREADS + t + 1));
        for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    }
    pid_t pid = fork();
    if (pid == 0) _exit(churn(4, 99) == 0 ? 0 : 3);
    int st = 0;
    waitpid(pid, &st, 0);
    printf("rounds %d, blocks bad %d, child %s\n", rounds, blocks_bad,
           WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "ok" : "FAILED");
    return 0;
}
