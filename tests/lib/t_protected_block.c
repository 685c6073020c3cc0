/* SPDX-License-Identifier: MIT */
/* A live block whose first page the program made inaccessible (a
 * coroutine stack with its guard page inside a malloc'd buffer): the leak
 * scan and the padding check at exit must skip it, not fault. */

// A live block with a PROT_NONE page: the scan and the padding check skip it.
// TEST: leak check skips a live block the program made unreadable
// RUN: %memdbg %t
// EXIT: 1
// CHECK-OUT: done
// CHECK: ^Direct leak of 48 byte\(s\) in 1 object\(s\)
// CHECK-NOT: heap-buffer-overflow|SEGV
// CHECK: ^SUMMARY: memdbg: 48 byte\(s\) leaked in 1 allocation\(s\)\.$

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void *coroutine_stack;
static void *lost;

int main(void)
{
    void *stk;
    if (posix_memalign(&stk, 4096, 16 * 4096) != 0) return 2;
    memset(stk, 0, 16 * 4096);
    if (mprotect(stk, 4096, PROT_NONE) != 0) return 3;
    coroutine_stack = stk;
    lost = malloc(48);   /* a real leak, reported as usual */
    lost = NULL;
    puts("done");
    return 0;
}
