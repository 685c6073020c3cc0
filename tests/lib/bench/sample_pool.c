/* SPDX-License-Identifier: MIT */
/* The pool of guarded blocks: allocates COUNT blocks of SIZE bytes and
 * keeps them all live; after every STEP blocks it prints how many of the
 * live blocks are guarded, the lines of /proc/self/maps, Pss and RSS, so
 * that the cost of the pool shows as it grows.  Run it under memdbg with
 * sample_rate=1 or under Scudo with GWP-ASan at GWP_ASAN_SampleRate=1:
 * each allocation then asks for a guarded slot, as a sampled one does at
 * any rate.
 *
 * A block counts as guarded when it lies in memdbg's arena (MODE memdbg:
 * the largest mapping, tens of GiB of reserved address space) or in a
 * one-page slot of GWP-ASan's pool (MODE gwp: an accessible page between
 * two inaccessible ones, each its own mapping); anything else came from
 * the fallback allocator.
 *
 *   sample_pool MODE COUNT SIZE STEP
 *   prints: live guarded maps_lines pss_kb rss_kb seconds            */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct range {
    uintptr_t lo, hi;
};

static struct range guarded_ranges[64];
static int guarded_range_count;

/* Reads /proc/self/maps: its line count, and the ranges that hold
 * guarded blocks under MODE. */
static long read_maps(const char *mode)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return -1;
    char line[512];
    long lines = 0;
    uintptr_t biggest_lo = 0, biggest_hi = 0, prev_guard_hi = 0;
    guarded_range_count = 0;
    while (fgets(line, sizeof line, f)) {
        lines++;
        uintptr_t lo, hi;
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR, &lo, &hi) != 2) continue;
        if (!strcmp(mode, "gwp")) {
            /* GWP-ASan's pool: one-page slots, each an accessible page
             * between inaccessible guard pages, one mapping each */
            char perms[8] = "", path[8] = "";
            sscanf(line, "%*s %7s %*s %*s %*s %7s", perms, path);
            int slot = !path[0] && hi - lo == 4096 && !strcmp(perms, "rw-p");
            int guard = !path[0] && !strcmp(perms, "---p");
            struct range *last = guarded_range_count ? &guarded_ranges[guarded_range_count - 1] : 0;
            if (slot && last && last->hi == lo) last->hi = hi;
            else if (slot && prev_guard_hi == lo && guarded_range_count < 64)
                guarded_ranges[guarded_range_count++] = (struct range){lo, hi};
            else if (guard && last && last->hi == lo) last->hi = hi;
            prev_guard_hi = guard ? hi : 0;
        } else if (hi - lo > biggest_hi - biggest_lo) {
            biggest_lo = lo;
            biggest_hi = hi;
        }
    }
    fclose(f);
    if (strcmp(mode, "gwp")) guarded_ranges[guarded_range_count++] = (struct range){biggest_lo, biggest_hi};
    return lines;
}

static int is_guarded(const void *p)
{
    for (int i = 0; i < guarded_range_count; i++)
        if ((uintptr_t)p >= guarded_ranges[i].lo && (uintptr_t)p < guarded_ranges[i].hi) return 1;
    return 0;
}

static long field_kb(const char *path, const char *key)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[256];
    long kb = -1;
    size_t n = strlen(key);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, n)) { kb = strtol(line + n, 0, 10); break; }
    fclose(f);
    return kb;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: sample_pool memdbg|gwp COUNT SIZE STEP\n");
        return 2;
    }
    const char *mode = argv[1];
    long count = strtol(argv[2], 0, 0), step = strtol(argv[4], 0, 0);
    size_t size = strtoul(argv[3], 0, 0);
    char **blocks = calloc(count, sizeof *blocks);
    if (!blocks || step <= 0) return 2;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < count; i++) {
        blocks[i] = malloc(size);
        if (!blocks[i]) { fprintf(stderr, "malloc failed at %ld\n", i); return 1; }
        memset(blocks[i], (int)i, size);   /* resident, as a used block is */
        if ((i + 1) % step == 0 || i + 1 == count) {
            clock_gettime(CLOCK_MONOTONIC, &t1);
            long lines = read_maps(mode), guarded = 0;
            for (long j = 0; j <= i; j++) guarded += is_guarded(blocks[j]);
            printf("%ld %ld %ld %ld %ld %.2f\n", i + 1, guarded, lines,
                   field_kb("/proc/self/smaps_rollup", "Pss:"), field_kb("/proc/self/status", "VmRSS:"),
                   (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
            fflush(stdout);
        }
    }
    return 0;
}
