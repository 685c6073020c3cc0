/* SPDX-License-Identifier: MIT */
/* The leak check reads a 4 GiB block the program wrote in one place:
 * only the pages that hold data, not one zero-page fault per page (8-10 s
 * per check on the host before), nor, where the heap is a memfd (the
 * nonlinear backend), one new page of memory per page read (18 s and
 * 768 MiB of shmem for a 768 MiB block in the guest before).  Private
 * memory is asked through /proc/self/pagemap, the memfd through
 * SEEK_DATA.  The pointer stored in that one page still keeps its block
 * alive; a block nothing points to is still a leak.  The block lies in
 * the arena (default arena_size) or in a mapping of its own
 * (arena_size=16M). */

// TEST: leak check of a 4 GiB block written in one page, in the arena
// RUN: %memdbg %t
// EXIT: 1
// CHECK-OUT: ^checked quickly$
// CHECK-COUNT: 2 ^Direct leak of 48 byte\(s\) in 1 object\(s\)
// CHECK-NOT: 32 byte\(s\)
//
// TEST: leak check of a 4 GiB block written in one page, in a mapping of its own
// RUN: %memdbg -o arena_size=16M %t
// EXIT: 1
// CHECK-OUT: ^checked quickly$
// CHECK-COUNT: 2 ^Direct leak of 48 byte\(s\) in 1 object\(s\)
// CHECK-NOT: 32 byte\(s\)

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leak_helpers.h"
#include <time.h>

int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

static char *big;   /* the root that keeps the big block alive */

int main(void)
{
    size_t size = (size_t)4 << 30;
    big = malloc(size);
    if (!big || !__lsan_do_recoverable_leak_check) {
        printf("no 4 GiB block or no leak check\n");
        return 2;
    }
    char *kept = malloc(32);
    memset(kept, 2, 32);
    memcpy(big + size / 2 + 8, &kept, sizeof kept);
    kept = NULL;
    lose(48);
    scrub_stack();
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    __lsan_do_recoverable_leak_check();
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    if (ms < 5000)
        printf("checked quickly\n");
    else
        printf("checked in %.0f ms\n", ms);
    return 0;
}
