/* SPDX-License-Identifier: MIT */
/* 200k live blocks of random sizes: fill, verify, free in random order.
 * Prints the number of VMAs of the memdbg heap while all blocks are live. */
#define _GNU_SOURCE
// TEST: mprotect: warns before vm.max_map_count instead of dying
// REQUIRES: backend=mprotect
// RUN: %memdbg %t 100000
// EXIT: 0
// CHECK-OUT: ^ok$
// CHECK: WARNING: memdbg: backend mprotect is at about [0-9]+ VMAs of vm.max_map_count
// CHECK-NOT: ERROR
//
// TEST: background_thread=1 (opt-in helper thread)
// RUN: %memdbg -o background_thread=1 %t 20000
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^ok$
// RUN: %memdbg -o background_thread=1:quarantine_size_mb=0 %T/t_sizes
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok
// RUN: %memdbg -o background_thread=1 %T/t_fork
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok
// RUN: %memdbg -o background_thread=1 %T/t_uaf read
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
//
// Addresses reused at once: pending drops must finish first.
// TEST: quarantine 0: immediate reuse with the background thread
// RUN: %memdbg -o quarantine_size_mb=0 %t 20000
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^ok$
// RUN: %memdbg -o quarantine_size_mb=0 %T/t_threads
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^ok$
//
// Freed small pages kept for the slot's next block: calloc zeroes them, and
// a use-after-free within the quarantine window is still caught.
// TEST: recycle_pages=1: zeroing, stress, threads, UAF within the window
// RUN: %memdbg -o recycle_pages=1:quarantine_size_mb=0 %T/t_sizes
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok
// RUN: %memdbg -o recycle_pages=1:quarantine_size_mb=0 %t 20000
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^ok$
// RUN: %memdbg -o recycle_pages=1:quarantine_size_mb=0 %T/t_threads
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^ok$
// 10k frees stay within a 128 MiB window.
// RUN: %memdbg -o recycle_pages=1:quarantine_size_mb=128 %T/t_uaf write
// EXIT: 1
// CHECK-ERROR: heap-use-after-free

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }

static int heap_vmas(const char **backend)
{
    int (*range)(void **, size_t *, const char **) = (int (*)(void **, size_t *, const char **))
        dlsym(RTLD_DEFAULT, "memdbg_heap_range");
    if (!range) { *backend = "none"; return -1; }
    void *start;
    size_t size;
    range(&start, &size, backend);
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo < (uintptr_t)start + size && hi > (uintptr_t)start) n++;
    }
    fclose(f);
    return n;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], 0, 0) : 200000;
    unsigned char **p = malloc(n * sizeof *p);
    size_t *sz = malloc(n * sizeof *sz);
    size_t *order = malloc(n * sizeof *order);
    for (size_t i = 0; i < n; i++) {
        sz[i] = 1 + next() % (i % 100 == 0 ? 20000 : 600);
        p[i] = malloc(sz[i]);
        if (!p[i]) { printf("malloc failed at %zu\n", i); return 2; }
        memset(p[i], (int)(i & 0xff), sz[i]);
        order[i] = i;
    }
    const char *backend;
    int vmas = heap_vmas(&backend);
    printf("heap_vmas=%d backend=%s live=%zu\n", vmas, backend, n);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < sz[i]; k += 97)
            if (p[i][k] != (unsigned char)(i & 0xff)) { printf("corrupt block %zu\n", i); return 3; }
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = next() % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < n; i++) free(p[order[i]]);
    free(p); free(sz); free(order);
    puts("ok");
    return 0;
}
