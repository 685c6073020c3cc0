/* SPDX-License-Identifier: MIT */
/* bench LIVE ITERS [THREADS]: ns per malloc/free pair with LIVE blocks kept
 * alive (random sizes 16..512, random victim), then RSS and VMA count.
 * With THREADS > 1, each thread keeps its own LIVE blocks and makes ITERS
 * pairs at the same time; pairs_per_s counts all threads' pairs (the
 * scaling figure).  Output: one line "live=N iters=N ns_per_pair=X
 * cpu_ns_per_pair=X rss_kb=N vmas=N threads=N pairs_per_s=N". */
#include <pthread.h>
#include "../proc_kb.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long live = 10000, iters = 100000;
static pthread_barrier_t start;

struct worker { unsigned long long rng; void **blocks; double cpu_ns; int failed; struct timespec t0, t1; };

static unsigned long long next(unsigned long long *rng)
{
    *rng ^= *rng << 13; *rng ^= *rng >> 7; *rng ^= *rng << 17;
    return *rng;
}

static long status_kb(const char *key) { return proc_kb("/proc/self/status", key); }

static int count_vmas(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    int n = 0, c;
    while (f && (c = fgetc(f)) != EOF) n += c == '\n';
    if (f) fclose(f);
    return n;
}

static void *run(void *arg)
{
    struct worker *w = arg;
    w->blocks = calloc((size_t)live, sizeof *w->blocks);
    if (!w->blocks) { w->failed = 1; return 0; }
    for (long i = 0; i < live; i++) {
        w->blocks[i] = malloc(16 + next(&w->rng) % 497);
        if (!w->blocks[i]) { w->failed = 1; break; }
        *(char *)w->blocks[i] = 1;
    }
    pthread_barrier_wait(&start);   /* every thread has its blocks */
    clock_gettime(CLOCK_MONOTONIC, &w->t0);
    struct timespec c0, c1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    for (long i = 0; i < iters && !w->failed; i++) {
        size_t k = next(&w->rng) % (size_t)live;
        free(w->blocks[k]);
        w->blocks[k] = malloc(16 + next(&w->rng) % 497);
        if (!w->blocks[k]) { w->failed = 1; break; }
        *(char *)w->blocks[k] = 1;
    }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    /* cpu: time this (the calling) thread spent, i.e. the cost on the
     * program's own critical path, whatever else the machine is doing */
    w->cpu_ns = (c1.tv_sec - c0.tv_sec) * 1e9 + (c1.tv_nsec - c0.tv_nsec);
    pthread_barrier_wait(&start);   /* every thread is done */
    clock_gettime(CLOCK_MONOTONIC, &w->t1);
    return 0;
}

int main(int argc, char **argv)
{
    live = argc > 1 ? atol(argv[1]) : 10000;
    iters = argc > 2 ? atol(argv[2]) : 100000;
    int threads = argc > 3 ? atoi(argv[3]) : 1;
    if (threads < 1 || threads > 64) threads = 1;
    struct worker w[64];
    pthread_t tid[64];
    pthread_barrier_init(&start, 0, (unsigned)threads);
    for (int t = 0; t < threads; t++) {
        memset(&w[t], 0, sizeof w[t]);
        w[t].rng = 88172645463325252ull + 7919ull * (unsigned long long)t;
        if (t > 0 && pthread_create(&tid[t], 0, run, &w[t]) != 0) { printf("live=%ld FAILED thread\n", live); return 1; }
    }
    run(&w[0]);   /* thread 0 is main: the 1-thread run has no extra thread */
    for (int t = 1; t < threads; t++) pthread_join(tid[t], 0);
    struct timespec t0 = w[0].t0, t1 = w[0].t1;
    double cpu = 0;
    for (int t = 0; t < threads; t++) {
        if (w[t].failed) { printf("live=%ld FAILED in thread %d\n", live, t); return 1; }
        cpu += w[t].cpu_ns;
    }
    double wall = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
    double ns = wall / (double)iters;
    cpu /= (double)iters * threads;
    printf("live=%ld iters=%ld ns_per_pair=%.0f cpu_ns_per_pair=%.0f rss_kb=%ld vmas=%d threads=%d pairs_per_s=%.0f\n",
           live, iters, ns, cpu, status_kb("VmRSS:"), count_vmas(), threads, (double)iters * threads / wall * 1e9);
    fflush(stdout);
    for (int t = 0; t < threads; t++) {
        for (long i = 0; i < live; i++) free(w[t].blocks[i]);
        free(w[t].blocks);
    }
    return 0;
}
