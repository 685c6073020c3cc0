/* SPDX-License-Identifier: MIT */
/* realloc of page-sized blocks: on the nonlinear backend the pages move to
 * the new address instead of being copied (same physical pages, seen in
 * /proc/self/pagemap when it shows frame numbers), and the old address is
 * a use-after-free.
 *   t_realloc_pages chain   grow and shrink, contents kept; prints how many
 *                           kept pages kept their frame ("same-frames N of
 *                           M", M counting pages whose frame is shown)
 *   t_realloc_pages stale   read through the pointer realloc moved away from */

// The address realloc moved away from is a guard.
// TEST: stale pointer after a page-moving realloc is a use-after-free
// RUN: %memdbg %t stale
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
// CHECK: ^READ of size 1 at 0x
// CHECK: is located 5000 bytes inside of 12288-byte region
// CHECK-STACK: ^READ of size 1 | read_stale | main
// CHECK-STACK: ^freed by thread T0 here: | realloc | resize_pages | main
// CHECK-STACK: ^previously allocated by thread T0 here: | malloc | make_pages | main
// CHECK-NOT: survived
//
// The nonlinear backend moves the file pages (the same frames at the new
// address, counted by print_stats); the others copy.  Sizes 1, 2, 3, 8, 40,
// 5, 1, 3 pages: 7 reallocs keeping 21 pages; with protect_below=1 the
// shrinks (and the regrowth into the pages the block still has) stay in
// place: 4 moves of 14 pages, frames kept by all.
// TEST: realloc of page-sized blocks moves pages (nonlinear)
// REQUIRES: backend=nonlinear
// RUN: %memdbg -o print_stats=1 %t chain
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^ok$
// CHECK: reallocs by moving pages 7 \(21 pages\)
// CHECK-OUT: ^same-frames ([0-9]+) of \1$
// RUN: %memdbg -o print_stats=1:protect_below=1 %t chain
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^ok$
// CHECK: reallocs by moving pages 4 \(14 pages\)
// CHECK-OUT: ^same-frames ([0-9]+) of \1$
//
// TEST: realloc of page-sized blocks copies (guard, mprotect)
// REQUIRES: backend!=nonlinear
// RUN: %memdbg -o print_stats=1 %t chain
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^ok$
// CHECK: reallocs by moving pages 0 \(0 pages\)
// CHECK-OUT: ^same-frames 0 of [0-9]
// RUN: %memdbg -o print_stats=1:protect_below=1 %t chain
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^ok$
// CHECK: reallocs by moving pages 0 \(0 pages\)
//
// On a kernel without the series the nonlinear backend's logic still runs,
// each remap_file_pages emulated by mmap(MAP_FIXED): small programs only,
// since that makes one VMA per call.
// TEST: nonlinear logic (emulated): realloc moves pages
// REQUIRES: backend!=nonlinear
// RUN: LD_PRELOAD=%lib MEMDBG_OPTIONS=backend=nonlinear:nonlinear_emulation=1:print_stats=1 %t chain
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^ok$
// CHECK: reallocs by moving pages 7 \(21 pages\)
// CHECK-OUT: ^same-frames ([0-9]+) of \1$
// RUN: LD_PRELOAD=%lib MEMDBG_OPTIONS=backend=nonlinear:nonlinear_emulation=1 %t stale
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
// CHECK: is located 5000 bytes inside of 12288-byte region
// CHECK-STACK: ^freed by thread T0 here: | realloc | resize_pages | main

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PG 4096

static int pagemap = -1;

/* Physical frame of the page at p, 0 when not shown (unprivileged). */
static uint64_t frame_of(const void *p)
{
    uint64_t e = 0;
    if (pread(pagemap, &e, sizeof e, (off_t)((uintptr_t)p / PG * 8)) != sizeof e) return 0;
    return (e >> 63) ? (e & ((1ull << 55) - 1)) : 0;
}

static int check(const unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(i * 13 + seed)) return 0;
    return 1;
}

char *make_pages(size_t n) { return malloc(n); }
char *resize_pages(char *p, size_t n) { return realloc(p, n); }
int read_stale(const char *p) { return p[5000]; }

/* realloc p from n to m bytes; counts kept frames of the kept whole pages */
static char *step(char *p, size_t n, size_t m, int *same, int *total)
{
    uint64_t before[64];
    size_t kept = n < m ? n : m, pages = kept / PG;
    for (size_t i = 0; i < pages && i < 64; i++) before[i] = frame_of(p + i * PG);
    char *q = resize_pages(p, m);
    if (!q) { printf("realloc %zu -> %zu failed\n", n, m); exit(2); }
    if (!check((unsigned char *)q, kept, 1)) { printf("contents lost %zu -> %zu\n", n, m); exit(3); }
    for (size_t i = 0; i < pages && i < 64; i++) {
        if (!before[i]) continue;   /* frames not shown (unprivileged) */
        (*total)++;
        if (before[i] == frame_of(q + i * PG)) (*same)++;
    }
    for (size_t i = kept; i < m; i++) q[i] = (char)(i * 13 + 1);
    return q;
}

int main(int argc, char **argv)
{
    pagemap = open("/proc/self/pagemap", O_RDONLY);
    if (argc > 1 && !strcmp(argv[1], "stale")) {
        char *p = make_pages(3 * PG);
        memset(p, 'x', 3 * PG);
        char *q = resize_pages(p, 5 * PG);
        if (!q || q == p || q[5000] != 'x') return 4;
        printf("%d\n", read_stale(p));
        puts("survived");
        return 0;
    }
    int same = 0, total = 0;
    size_t sizes[] = { 2 * PG, 3 * PG, 8 * PG, 40 * PG, 5 * PG, PG, 2 * PG + PG };
    size_t n = PG;
    char *p = make_pages(n);
    for (size_t i = 0; i < n; i++) p[i] = (char)(i * 13 + 1);
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        p = step(p, n, sizes[k], &same, &total);
        n = sizes[k];
    }
    free(p);
    printf("same-frames %d of %d\n", same, total);
    puts("ok");
    return 0;
}
