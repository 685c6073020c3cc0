/* SPDX-License-Identifier: MIT */
/* realloc that keeps the block's address, and its limits.
 *   same-granule  default placement: 100 -> 104 bytes keeps the pointer
 *                 (same 16-byte aligned start); a write just past the new
 *                 end is still found in the padding at free.
 *   grow-pages    protect_below=1: a block grows in place into its slot's
 *                 spare page (guard backend), contents kept; the byte
 *                 after the last accessible page still faults.
 *   moves         default placement: 100 -> 200 moves (the old pointer
 *                 would otherwise lie inside the new block). */

// TEST: realloc in place (protect_below, spare slot page), overflow past it faults
// REQUIRES: backend=guard
// RUN: %memdbg -o protect_below=1 %t grow-pages
// EXIT: 1
// CHECK-OUT: in place
// CHECK-ERROR: heap-buffer-(overflow|underflow)
// CHECK: ^WRITE of size 1 at
// CHECK-STACK: ^WRITE of size | write_at | main
//
// Same address: the padding is re-established after the shrink.
// TEST: realloc in place within the alignment; padding checked after it
// RUN: %memdbg -o alignment=16 %t same-granule
// EXIT: 1
// CHECK-OUT: in place
// CHECK-ERROR: heap-buffer-overflow
// CHECK: is located 0 bytes after 100-byte region
// CHECK-STACK: ^allocated by thread T0 here: | realloc | grow | main
//
// TEST: realloc that would move the block start still moves
// RUN: %memdbg %t moves
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: moved

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *grow(char *p, size_t n) { return realloc(p, n); }
static void write_at(char *p, size_t i) { p[i] = 'x'; }

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "same-granule")) {
        char *p = malloc(100);
        memset(p, 'a', 100);
        char *q = grow(p, 104);
        if (q != p) { puts("moved"); return 2; }
        for (int i = 0; i < 100; i++) if (q[i] != 'a') return 3;
        q = grow(q, 100);
        if (q != p) { puts("moved on shrink"); return 4; }
        puts("in place");
        fflush(stdout);
        write_at(q, 100);          /* padding again after the shrink */
        free(q);
        puts("survived");
        return 0;
    }
    if (!strcmp(mode, "grow-pages")) {
        size_t n = 17 * 4096 + 100;     /* 18 data pages: a 20-page slot, one spare page */
        char *p = malloc(n);
        for (size_t i = 0; i < n; i++) p[i] = (char)(i * 7);
        size_t m = 18 * 4096 + 100;     /* needs the spare page */
        char *q = grow(p, m);
        if (q != p) { puts("moved"); return 2; }
        for (size_t i = 0; i < n; i++) if (q[i] != (char)(i * 7)) return 3;
        memset(q + n, 'b', m - n);
        puts("in place");
        fflush(stdout);
        write_at(q, 19 * 4096);    /* first byte after the data pages */
        puts("survived");
        return 0;
    }
    if (!strcmp(mode, "moves")) {
        char *p = malloc(100);
        char *q = grow(p, 200);
        printf("%s\n", q == p ? "same" : "moved");
        free(q);
        return 0;
    }
    return 9;
}
