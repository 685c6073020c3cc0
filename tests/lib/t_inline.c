/* SPDX-License-Identifier: MIT */
/* Inline frames (built with -O2 by its own rule in memdbg/lib.mk): the
 * faulting read is in always_inline read_at, inlined into outer; the free
 * is in always_inline drop, inlined into main.  The report must show the
 * inlined function and its caller as two frames, each with its own line
 * (the lines are marked "LINE:" for the test). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline __attribute__((always_inline)) int read_at(const char *p, int i)
{
    return p[i] * 3;                          /* LINE: read_at */
}

__attribute__((noinline)) int outer(const char *p, int i)
{
    int r = read_at(p, i);                    /* LINE: outer calls read_at */
    __asm__ volatile("" : "+r"(r) : : "memory");
    return r + 1;
}

static inline __attribute__((always_inline)) void drop(char *p)
{
    __asm__ volatile("" : : "r"(p) : "memory");
    free(p);                                  /* LINE: drop */
}

int main(int argc, char **argv)
{
    (void)argv;
    char *volatile q = malloc(32);
    char *p = q;
    memset(p, 1, 32);
    drop(p);                                  /* LINE: main calls drop */
    printf("%d\n", outer(p, argc + 4));       /* LINE: main calls outer */
    puts("survived");
    return 0;
}
