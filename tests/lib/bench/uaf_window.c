/* SPDX-License-Identifier: MIT */
/* The use-after-free window: how many malloc/free pairs of SIZE bytes run
 * before malloc hands out the first freed block's address again (as long
 * as that address is not reused, a stale pointer to the block is reported
 * against it).  Stops at LIMIT pairs.
 *
 *   uaf_window SIZE LIMIT     prints: size pairs reused(0/1) address_space_bytes seconds */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
    size_t size = argc > 1 ? strtoul(argv[1], 0, 0) : 16;
    long limit = argc > 2 ? strtol(argv[2], 0, 0) : 100000000;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char *first = malloc(size);
    uintptr_t lo = (uintptr_t)first, hi = lo;
    free(first);
    long n = 0;
    int reused = 0;
    for (; n < limit; n++) {
        char *p = malloc(size);
        if ((uintptr_t)p < lo) lo = (uintptr_t)p;
        if ((uintptr_t)p > hi) hi = (uintptr_t)p;
        free(p);
        if (p == first) { reused = 1; break; }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("%zu %ld %d %lu %.2f\n", size, n, reused, (unsigned long)(hi - lo),
           (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
    return 0;
}
