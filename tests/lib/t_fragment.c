/* SPDX-License-Identifier: MIT */
/* No size-class dead ends: after small churn has used the whole arena's
 * address space once, a large block still fits (run with arena_size=64M:
 * 20,000 malloc(100)/free pairs pass through every page of it). */

// 20,000 small pairs use the whole 64 MiB arena; then 1, 2 and 3 MiB blocks.
// TEST: no size-class dead ends: 1 MiB after 20,000 small pairs in a 64 MiB arena
// RUN: %memdbg -o arena_size=64M %t
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^ok$

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    char *keep[8];
    for (int i = 0; i < 8; i++) { keep[i] = malloc(100); memset(keep[i], i, 100); }
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 20000; i++) {
            char *p = malloc(100);
            if (!p) { printf("malloc(100) #%d failed: %s\n", i, strerror(errno)); return 1; }
            memset(p, 1, 100);
            free(p);
        }
        size_t big = (size_t)(1 + round) << 20;
        char *b = malloc(big);
        if (!b) { printf("malloc(%zu) after small churn failed: %s\n", big, strerror(errno)); return 1; }
        memset(b, 2, big);
        free(b);
    }
    for (int i = 0; i < 8; i++) {
        for (int k = 0; k < 100; k++) if (keep[i][k] != i) { puts("kept block changed"); return 1; }
        free(keep[i]);
    }
    puts("ok");
    return 0;
}
