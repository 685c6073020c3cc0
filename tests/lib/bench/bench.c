/* bench LIVE ITERS: ns per malloc/free pair with LIVE blocks kept alive
 * (random sizes 16..512, random victim), then RSS and VMA count.
 * Output: one line "live=N iters=N ns_per_pair=X rss_kb=N vmas=N". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static unsigned long long rng = 88172645463325252ull;
static unsigned long long next(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }

static long status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t kl = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, kl)) { v = atol(line + kl); break; }
    if (f) fclose(f);
    return v;
}

static int count_vmas(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    int n = 0, c;
    while (f && (c = fgetc(f)) != EOF) n += c == '\n';
    if (f) fclose(f);
    return n;
}

int main(int argc, char **argv)
{
    long live = argc > 1 ? atol(argv[1]) : 10000;
    long iters = argc > 2 ? atol(argv[2]) : 100000;
    void **blocks = calloc((size_t)live, sizeof *blocks);
    if (!blocks) { printf("live=%ld FAILED setup\n", live); return 1; }
    for (long i = 0; i < live; i++) {
        blocks[i] = malloc(16 + next() % 497);
        if (!blocks[i]) { printf("live=%ld FAILED at block %ld\n", live, i); return 1; }
        *(char *)blocks[i] = 1;
    }
    struct timespec t0, t1, c0, c1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < iters; i++) {
        size_t k = next() % (size_t)live;
        free(blocks[k]);
        blocks[k] = malloc(16 + next() % 497);
        if (!blocks[k]) { printf("live=%ld FAILED at iteration %ld\n", live, i); return 1; }
        *(char *)blocks[k] = 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    double ns = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / (double)iters;
    double cpu = ((c1.tv_sec - c0.tv_sec) * 1e9 + (c1.tv_nsec - c0.tv_nsec)) / (double)iters;
    /* cpu: time this (the calling) thread spent, i.e. the cost on the
     * program's own critical path, whatever else the machine is doing */
    printf("live=%ld iters=%ld ns_per_pair=%.0f cpu_ns_per_pair=%.0f rss_kb=%ld vmas=%d\n", live, iters, ns, cpu,
           status_kb("VmRSS:"), count_vmas());
    fflush(stdout);
    for (long i = 0; i < live; i++) free(blocks[i]);
    free(blocks);
    return 0;
}
