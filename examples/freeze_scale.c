/* SPDX-License-Identifier: MIT */
/* Frozen blocks at scale: N live blocks, frozen with memdbg_freeze_many
 * (batches of 1024) or one memdbg_freeze each, with the lines of
 * /proc/self/maps before and after, the freezes per second, a read-mostly
 * pass over the data, and optionally a stray write into one frozen block.
 *
 *   freeze_scale N [many|single|none] [write]
 *
 * Prints one line of key=value pairs.  "none" freezes nothing (the
 * read-pass baseline).  A freeze refused with ENOMEM (mprotect-based
 * backends near vm.max_map_count) is reported as frozen=K err=ENOMEM and
 * the program goes on with what it froze. */
#include <memdbg.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long maps_lines(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return -1;
    long n = 0;
    int c;
    while ((c = getc(f)) != EOF) n += c == '\n';
    fclose(f);
    return n;
}

static void stray_write(long *p)
{
    p[1] = -1;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    const char *mode = argc > 2 ? argv[2] : "many";
    int write_one = argc > 3 && !strcmp(argv[3], "write");
    long **blocks = calloc((size_t)n, sizeof *blocks);
    if (!blocks) return 2;
    for (long i = 0; i < n; i++) {
        blocks[i] = malloc(32);
        if (!blocks[i]) { fprintf(stderr, "malloc failed at %ld\n", i); return 2; }
        for (int k = 0; k < 4; k++) blocks[i][k] = i + k;
    }
    long maps_before = maps_lines();
    long frozen = 0;
    const char *err = "none";
    double t0 = now();
    if (!strcmp(mode, "many")) {
        for (long i = 0; i < n; i += 1024) {
            size_t k = (size_t)(n - i < 1024 ? n - i : 1024);
            if (memdbg_freeze_many((const void *const *)(blocks + i), k) != 0) {
                err = errno == ENOMEM ? "ENOMEM" : strerror(errno);
                break;
            }
            frozen += (long)k;
        }
    } else if (!strcmp(mode, "single")) {
        for (long i = 0; i < n; i++) {
            if (memdbg_freeze(blocks[i]) != 0) {
                err = errno == ENOMEM ? "ENOMEM" : strerror(errno);
                break;
            }
            frozen++;
        }
    }
    double t_freeze = now() - t0;
    long maps_after = maps_lines();
    /* read-mostly: a first pass over every block (it may fault pages back
     * in after the freeze), then ten more */
    t0 = now();
    long sum = 0;
    for (long i = 0; i < n; i++) sum += blocks[i][0];
    double t_first = now() - t0;
    t0 = now();
    for (int pass = 0; pass < 10; pass++)
        for (long i = 0; i < n; i++) sum += blocks[i][pass & 3];
    double t_read = now() - t0;
    printf("blocks=%ld mode=%s frozen=%ld err=%s maps_before=%ld maps_after=%ld freeze_s=%.3f "
           "freezes_per_s=%.0f first_read_ns_per_block=%.1f read_ns_per_block=%.1f sum=%ld\n",
           n, mode, frozen, err, maps_before, maps_after, t_freeze,
           frozen && t_freeze > 0 ? frozen / t_freeze : 0.0, t_first * 1e9 / n, t_read * 1e9 / (10.0 * n), sum);
    fflush(stdout);
    if (write_one && frozen) stray_write(blocks[frozen / 2]);
    /* thaw and free everything (the thaw is part of the cost of a run) */
    t0 = now();
    if (frozen)
        for (long i = 0; i < frozen; i += 1024) {
            size_t k = (size_t)(frozen - i < 1024 ? frozen - i : 1024);
            memdbg_thaw_many((const void *const *)(blocks + i), k);
        }
    double t_thaw = now() - t0;
    for (long i = 0; i < n; i++) blocks[i][0] = 0;   /* writable again */
    for (long i = 0; i < n; i++) free(blocks[i]);
    free(blocks);
    printf("thaw_s=%.3f\n", t_thaw);
    return 0;
}
