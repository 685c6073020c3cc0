/* SPDX-License-Identifier: MIT */
/* What the leak tests of big blocks share: a way to leave no stale
 * pointer in dead stack slots, and a block lost on purpose. */
#ifndef MEMDBG_TESTS_LEAK_HELPERS_H
#define MEMDBG_TESTS_LEAK_HELPERS_H

#include <stdlib.h>
#include <string.h>

/* Overwrites the stack below the caller's frame, where a returned
 * function's locals could still hold a pointer the scan would count. */
__attribute__((noinline, unused)) static void scrub_stack(void)
{
    volatile char junk[16384];
    memset((char *)junk, 0, sizeof junk);
}

/* A block of n bytes, written and then lost: a direct leak of n bytes. */
__attribute__((noinline, unused)) static void lose(size_t n)
{
    char *p = malloc(n);
    memset(p, 1, n);
}

#endif
