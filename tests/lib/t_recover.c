/* SPDX-License-Identifier: MIT */
/* halt_on_error=0: faults on guard pages are reported once per distinct
 * bug (kind, pc, allocation site), the access completes, the program
 * runs to its end.  compact=0: a compact block's overflow stays in its
 * shared page and is found at free, each time, instead of faulting. */

// TEST: halt_on_error=0: three bugs hit five times each, each reported once, the program finishes
// RUN: %memdbg -o halt_on_error=0:exitcode=0:compact=0 %t
// EXIT: 0
// CHECK-COUNT: 3 ERROR: memdbg:
// CHECK-COUNT: 1 ERROR: memdbg: heap-buffer-overflow
// CHECK-COUNT: 2 ERROR: memdbg: heap-use-after-free
// CHECK-STACK: ^WRITE of size 1 | overflow_site | main
// CHECK-STACK: ^WRITE of size 4 | uaf_write_site | main
// CHECK-STACK: ^READ of size 4 | uaf_read_site | main
// CHECK-NOT: ABORTING
// CHECK-OUT: ^overflow kept 20 of 20 bytes$
// CHECK-OUT: ^use-after-free writes kept 5 of 5$
// CHECK-OUT: ^finished$
//
// TEST: halt_on_error=0: after recovered faults the exit status is exitcode
// RUN: %memdbg -o halt_on_error=0:exitcode=7:compact=0 %t
// EXIT: 7
// CHECK-COUNT: 3 ERROR: memdbg:
// CHECK-OUT: ^finished$
//
// TEST: halt_on_error=1 (default): the first fault stops the program
// RUN: %memdbg %t
// EXIT: 1
// CHECK-COUNT: 1 ERROR: memdbg:
// CHECK: ABORTING
// CHECK-OUT-NOT: finished

#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 5

__attribute__((noinline)) void overflow_site(char *p, int i) { p[16] = (char)('a' + i); }
__attribute__((noinline)) void uaf_write_site(int *p, int v) { *(volatile int *)p = v; }
__attribute__((noinline)) int uaf_read_site(int *p) { return *(volatile int *)p; }

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);
    char *blocks[ROUNDS];
    int kept = 0;
    for (int i = 0; i < ROUNDS; i++) {   /* one site, five blocks */
        blocks[i] = malloc(16);
        overflow_site(blocks[i], i);
    }
    for (int i = 0; i < ROUNDS; i++) kept += blocks[i][16] == 'a' + i;
    for (int i = 0; i < ROUNDS; i++) {
        char *p = blocks[i];
        for (int k = 0; k < 3; k++) kept += p[16] == 'a' + i;   /* no further fault */
        free(p);
    }
    printf("overflow kept %d of %d bytes\n", kept, ROUNDS * 4);
    int uaf_kept = 0;
    for (int i = 0; i < ROUNDS; i++) {
        int *p = malloc(sizeof *p * 8);
        free(p);
        uaf_write_site(p, 1000 + i);
        uaf_kept += uaf_read_site(p) == 1000 + i;
    }
    printf("use-after-free writes kept %d of %d\n", uaf_kept, ROUNDS);
    int *q = malloc(64);
    free(q);
    int sum = 0;
    for (int i = 0; i < ROUNDS; i++) {
        int *p = malloc(sizeof *p * 8);
        free(p);
        sum += uaf_read_site(p);
    }
    (void)sum;
    printf("finished\n");
    return 0;
}
