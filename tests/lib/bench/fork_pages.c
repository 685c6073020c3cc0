/* SPDX-License-Identifier: MIT */
/* fork_pages N LAYOUT FORKS: what fork costs a program WITHOUT memdbg that
 * has N resident anonymous pages laid out as memdbg's guard backend lays
 * out N live blocks, so that bench_fork's figures under memdbg can be
 * split into the kernel's page-table copy and anything memdbg adds.
 *   contig:  N touched pages side by side (what glibc would need for
 *            N pages of data);
 *   gap:     N touched pages, each followed by an untouched page;
 *   marker:  N touched pages, each followed by a MADV_GUARD_INSTALL
 *            marker (memdbg guard: a data page and a guard page per block);
 *   markers-only: N markers and no resident page.
 * Output, one line: "pages=N layout=L forks=F fork_us_median=X fork_us_min=X
 * ns_per_page=Y fork_cpu_us_median=X fork_cpu_us_min=X" (Y: the minimum
 * over N; fork_cpu_us: the parent's CPU time over fork(), as bench_fork). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif

#include "fork_clock.h"

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    const char *layout = argc > 2 ? argv[2] : "marker";
    int forks = argc > 3 ? atoi(argv[3]) : 11;
    long ps = sysconf(_SC_PAGESIZE);
    int contig = !strcmp(layout, "contig");
    int markers = !strcmp(layout, "marker") || !strcmp(layout, "markers-only");
    int touch = strcmp(layout, "markers-only") != 0;
    if (!contig && !markers && strcmp(layout, "gap")) { fprintf(stderr, "unknown layout %s\n", layout); return 2; }
    long stride = contig ? 1 : 2;
    char *m = mmap(0, (size_t)(n * stride * ps), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    double *t = calloc((size_t)forks, sizeof *t), *tc = calloc((size_t)forks, sizeof *tc);
    if (m == MAP_FAILED || !t || !tc) return 2;
    for (long i = 0; i < n; i++) {
        char *page = m + i * stride * ps;
        if (touch) memset(page, (int)(i & 0x7f) | 1, 64);
        if (markers && madvise(page + ps, (size_t)ps, MADV_GUARD_INSTALL) != 0) { perror("MADV_GUARD_INSTALL"); return 2; }
    }
    for (int r = -1; r < forks; r++) {
        double c0 = cpu_us(), t0 = now_us();
        pid_t pid = fork();
        if (pid == 0) _exit(touch && m[(n / 2) * stride * ps] != ((int)((n / 2) & 0x7f) | 1));
        double t1 = now_us(), c1 = cpu_us();
        int st;
        if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "fork or child failed\n");
            return 3;
        }
        if (r >= 0) { t[r] = t1 - t0; tc[r] = c1 - c0; }
    }
    qsort(t, (size_t)forks, sizeof *t, cmp);
    qsort(tc, (size_t)forks, sizeof *tc, cmp);
    printf("pages=%ld layout=%s forks=%d fork_us_median=%.0f fork_us_min=%.0f ns_per_page=%.0f "
           "fork_cpu_us_median=%.0f fork_cpu_us_min=%.0f\n", n, layout, forks,
           t[forks / 2], t[0], t[0] * 1000 / (double)n, tc[forks / 2], tc[0]);
    return 0;
}
