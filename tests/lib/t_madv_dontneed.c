/* SPDX-License-Identifier: MIT */
/* MADV_DONTNEED on malloc'd memory: glibc's heap is private anonymous
 * memory, so the pages read back as zeros.  Prints what the page holds
 * afterwards: "zero" or "old". */
#define _GNU_SOURCE
// TEST: MADV_DONTNEED on malloc'd memory: the page reads zeros, as with glibc
// REQUIRES: backend!=nonlinear
// RUN: %memdbg %t
// EXIT: 0
// CHECK-OUT: ^zero$
// On nonlinear the heap is a MAP_SHARED memfd, whose file keeps the data
// (documented).
// TEST: MADV_DONTNEED on malloc'd memory: the old data or zeros (nonlinear)
// REQUIRES: backend=nonlinear
// RUN: %memdbg %t
// EXIT: 0
// CHECK-OUT: ^(old|zero)$

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int main(void)
{
    size_t n = 5 * 4096;
    unsigned char *p = malloc(n);
    memset(p, 0x5a, n);
    unsigned char *page = (unsigned char *)(((uintptr_t)p + 4095) & ~(uintptr_t)4095);
    if (madvise(page, 4096, MADV_DONTNEED) != 0) { perror("madvise"); return 1; }
    int zero = 1, old = 1;
    for (int i = 0; i < 4096; i++) { zero &= page[i] == 0; old &= page[i] == 0x5a; }
    puts(zero ? "zero" : old ? "old" : "mixed");
    memset(p, 0, n);
    free(p);
    return 0;
}
