/* SPDX-License-Identifier: MIT */
/* bench_fork LIVE FORKS [FREED]: fork latency with LIVE heap blocks (random
 * sizes 16..512 bytes, each written), measured FORKS times after a warm-up
 * fork.  FREED (default 0) blocks of the same sizes are allocated, written
 * and freed first, as a program that has run a while has done (under
 * memdbg they sit in the quarantine, guarded).
 *   fork_us: from the call to fork() until it returns in the parent (what
 *            a program such as bash waits for before it goes on);
 *   cycle_us: fork + the child's _exit + waitpid;
 *   fork_cpu_us: the parent thread's CPU time over the fork() call (the
 *            kernel's copy included; unlike fork_us, not inflated when
 *            other programs load the machine).
 * The child also checks one block of the parent's, so a broken heap copy
 * shows as a failure instead of a fast number.  Output, one line:
 * "live=N freed=N forks=N fork_us_median=X fork_us_min=X cycle_us_median=X rss_kb=N pte_kb=N
 * fork_cpu_us_median=X fork_cpu_us_min=X". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static unsigned long long rng = 88172645463325252ull;
static unsigned long long next(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }

#include "fork_clock.h"

/* A "Name:   N kB" line of /proc/self/status, in kB (-1: missing). */
static long status_kb(const char *name)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    size_t n = strlen(name);
    long v = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, name, n) && line[n] == ':') { v = atol(line + n + 1); break; }
    if (f) fclose(f);
    return v;
}

int main(int argc, char **argv)
{
    long live = argc > 1 ? atol(argv[1]) : 10000;
    int forks = argc > 2 ? atoi(argv[2]) : 20;
    long freed = argc > 3 ? atol(argv[3]) : 0;
    char **blk = calloc((size_t)live, sizeof *blk);
    size_t *len = calloc((size_t)live, sizeof *len);
    double *t_fork = calloc((size_t)forks, sizeof *t_fork), *t_cycle = calloc((size_t)forks, sizeof *t_cycle),
           *t_cpu = calloc((size_t)forks, sizeof *t_cpu);
    if (!blk || !len || !t_fork || !t_cycle || !t_cpu) return 2;
    for (long i = 0; i < freed; i++) {
        size_t n = 16 + next() % 497;
        char *p = malloc(n);
        if (!p) { fprintf(stderr, "malloc failed at freed %ld\n", i); return 2; }
        memset(p, 1, n);
        free(p);
    }
    for (long i = 0; i < live; i++) {
        len[i] = 16 + next() % 497;
        blk[i] = malloc(len[i]);
        if (!blk[i]) { fprintf(stderr, "malloc failed at %ld\n", i); return 2; }
        memset(blk[i], (int)(i & 0x7f), len[i]);
    }
    for (int r = -1; r < forks; r++) {
        long probe = (long)(next() % (unsigned long long)live);
        double c0 = cpu_us(), t0 = now_us();
        pid_t pid = fork();
        if (pid == 0) {
            for (size_t k = 0; k < len[probe]; k++) if (blk[probe][k] != (char)(probe & 0x7f)) _exit(3);
            _exit(0);
        }
        double t1 = now_us(), c1 = cpu_us();
        int st;
        if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "fork or child failed\n");
            return 3;
        }
        double t2 = now_us();
        if (r >= 0) { t_fork[r] = t1 - t0; t_cycle[r] = t2 - t0; t_cpu[r] = c1 - c0; }
    }
    qsort(t_fork, (size_t)forks, sizeof *t_fork, cmp);
    qsort(t_cycle, (size_t)forks, sizeof *t_cycle, cmp);
    qsort(t_cpu, (size_t)forks, sizeof *t_cpu, cmp);
    printf("live=%ld freed=%ld forks=%d fork_us_median=%.0f fork_us_min=%.0f cycle_us_median=%.0f rss_kb=%ld pte_kb=%ld "
           "fork_cpu_us_median=%.0f fork_cpu_us_min=%.0f\n", live, freed, forks,
           t_fork[forks / 2], t_fork[0], t_cycle[forks / 2], status_kb("VmRSS"), status_kb("VmPTE"), t_cpu[forks / 2], t_cpu[0]);
    for (long i = 0; i < live; i++) free(blk[i]);
    return 0;
}
