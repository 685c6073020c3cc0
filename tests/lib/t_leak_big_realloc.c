/* SPDX-License-Identifier: MIT */
/* The leak check reads a big block grown by realloc, whose pages may come
 * from more than one place of the heap file (the nonlinear backend moves
 * the old pages instead of copying them, and gives the grown part pages
 * of its own): a pointer the program stored in the moved part and one
 * stored in the grown part both keep their blocks alive, and a block
 * nothing points to is still a leak.  Its never-written pages are not
 * read (see t_leak_sparse_block.c). */

// TEST: pointers in both parts of a big block grown by realloc keep their blocks
// RUN: %memdbg %t
// EXIT: 1
// CHECK-OUT: ^grown in place or moved$
// CHECK-COUNT: 1 ^Direct leak of 48 byte\(s\) in 1 object\(s\)
// CHECK-NOT: 32 byte\(s\)
// CHECK-NOT: 40 byte\(s\)

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leak_helpers.h"

static char *big;   /* the root that keeps the big block alive */

__attribute__((noinline)) static void keep_in(size_t at, size_t n)
{
    char *p = malloc(n);
    memset(p, 2, n);
    memcpy(big + at, &p, sizeof p);
}

int main(void)
{
    const size_t mib = (size_t)1 << 20;
    big = malloc(2 * mib);
    if (!big)
        return 2;
    keep_in(mib + 8, 32);                 /* in the part that moves */
    char *grown = realloc(big, 64 * mib);
    if (!grown)
        return 2;
    big = grown;
    keep_in(48 * mib + 8, 40);            /* in the grown part */
    printf("grown in place or moved\n");
    lose(48);
    scrub_stack();
    return 0;
}
