/* SPDX-License-Identifier: MIT */
/* A pointer kept across realloc is a use-after-free: realloc always moves. */

// TEST: stale pointer after realloc is a use-after-free
// RUN: %memdbg %t
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
// CHECK: is located 3 bytes inside of 100-byte region
// CHECK-STACK: ^READ of size 1 | read_stale | main
// CHECK-STACK: ^freed by thread T0 here: | realloc | grow_buffer | main
// CHECK-STACK: ^previously allocated by thread T0 here: | malloc | make_buffer | main

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *make_buffer(size_t n) { return malloc(n); }
char *grow_buffer(char *p, size_t n) { return realloc(p, n); }
int read_stale(char *p) { return p[3]; }

int main(void)
{
    char *p = make_buffer(100);
    memset(p, 'a', 100);
    char *q = grow_buffer(p, 200);
    if (q == p || memcmp(q, p == q ? q : q, 100) != 0) return 3;
    printf("%d\n", read_stale(p));
    puts("survived");
    return 0;
}
