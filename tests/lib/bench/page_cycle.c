/* SPDX-License-Identifier: MIT */
/* The machine's floor for any page-guard allocator: what one page costs
 * when it comes and goes, without an allocator.  Each cycle writes to a
 * page of a private anonymous mapping (a page fault that allocates and
 * maps it) and gives it back with MADV_DONTNEED (a zap and a TLB flush);
 * memdbg's guard backend pays about this per malloc/free pair, Electric
 * Fence more.  Measured with 1 thread, with 2 threads of one process (the
 * flush must reach the other CPU) and with 2 processes (no shared page
 * tables), so a figure of bench.sh can be read against what the kernel
 * and the hypervisor under it charge per page.  Prints one line:
 *   page_cycle ns=N threads2_ns=N procs2_ns=N threads2_speedup=X procs2_speedup=X
 * ns: wall time per cycle; *_speedup: pages per second of the pair over
 * one thread's (2.00 would be perfect scaling).
 *   page_cycle [CYCLES] */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RING_PAGES 64   /* pages each worker cycles through */

static long cycles = 20000;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *cycle_pages(void *unused)
{
    (void)unused;
    long page = sysconf(_SC_PAGESIZE);
    char *ring = mmap(0, RING_PAGES * page, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ring == MAP_FAILED) { perror("page_cycle: mmap"); exit(1); }
    for (long i = 0; i < cycles; i++) {
        volatile char *p = ring + (i % RING_PAGES) * page;
        *p = 1;
        if (madvise((void *)p, page, MADV_DONTNEED) != 0) { perror("page_cycle: madvise"); exit(1); }
    }
    munmap(ring, RING_PAGES * page);
    return 0;
}

/* Seconds for one worker, or for two threads of this process. */
static double run_threads(int n)
{
    pthread_t t[2];
    double t0 = now_s();
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], 0, cycle_pages, 0) != 0) { perror("page_cycle: pthread_create"); exit(1); }
    for (int i = 0; i < n; i++) pthread_join(t[i], 0);
    return now_s() - t0;
}

static double run_two_processes(void)
{
    pid_t pid[2];
    double t0 = now_s();
    for (int i = 0; i < 2; i++) {
        pid[i] = fork();
        if (pid[i] < 0) { perror("page_cycle: fork"); exit(1); }
        if (pid[i] == 0) { cycle_pages(0); _exit(0); }
    }
    for (int i = 0; i < 2; i++) {
        int st;
        if (waitpid(pid[i], &st, 0) != pid[i] || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "page_cycle: a worker process failed\n");
            exit(1);
        }
    }
    return now_s() - t0;
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        char *end;
        cycles = strtol(argv[1], &end, 10);
        if (*end || cycles < 1) { fprintf(stderr, "usage: page_cycle [CYCLES]\n"); return 2; }
    }
    run_threads(1);   /* warm-up: page tables, the allocator's free lists */
    double one = run_threads(1), threads = run_threads(2), procs = run_two_processes();
    printf("page_cycle ns=%.0f threads2_ns=%.0f procs2_ns=%.0f threads2_speedup=%.2f procs2_speedup=%.2f\n",
           one / cycles * 1e9, threads / (2.0 * cycles) * 1e9, procs / (2.0 * cycles) * 1e9,
           2.0 * one / threads, 2.0 * one / procs);
    return 0;
}
