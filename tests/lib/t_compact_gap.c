/* SPDX-License-Identifier: MIT */
/* Compact mode: two 96-byte blocks share a file page, the upper one is
 * freed, then the lower one is overflowed into the gap the upper one
 * left (past its 16-byte redzone).  The damage is the lower block's, at
 * its end, and a read through the freed upper block's pointer is still a
 * use-after-free of that block.  Emulated on kernels without the series,
 * on the patched kernel's nonlinear backend otherwise. */

// TEST: compact (emulated): overflow into a freed neighbour's gap is the lower block's, found at its free
// REQUIRES: backend!=nonlinear
// RUN: %memdbg -o backend=nonlinear:nonlinear_emulation=1:compact=1:detect_leaks=0 %t overflow 40
// EXIT: 1
// CHECK-OUT: ^overflowed$
// CHECK-OUT-NOT: not neighbours
// CHECK-ERROR: heap-buffer-overflow
// CHECK: the padding after the block was overwritten to the end of its redzone \(compact mode\), perhaps further; found when it was freed
// CHECK: WRITE of size 16 at
// CHECK: is located 0 bytes after 96-byte region
// CHECK-STACK: ^allocated by thread | malloc | make_lower | main
// CHECK-NOT:  in make_upper
// CHECK-COUNT: 1 ERROR: memdbg
//
// TEST: compact (emulated): the same overflow with the lower block live to exit
// REQUIRES: backend!=nonlinear
// RUN: %memdbg -o backend=nonlinear:nonlinear_emulation=1:compact=1:detect_leaks=0 %t keep 40
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: the padding after a live block was overwritten to the end of its redzone \(compact mode\), perhaps further; found at exit
// CHECK: is located 0 bytes after 96-byte region
// CHECK-STACK: ^allocated by thread | malloc | make_lower | main
// CHECK-NOT:  in make_upper
//
// TEST: compact (emulated): an overflow that stays in the redzone is reported as it is
// REQUIRES: backend!=nonlinear
// RUN: %memdbg -o backend=nonlinear:nonlinear_emulation=1:compact=1:detect_leaks=0 %t overflow 8
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: WRITE of size 8 at
// CHECK: the padding next to the block was overwritten; found when it was freed
// CHECK-NOT: perhaps further
// CHECK: is located 0 bytes after 96-byte region
//
// TEST: compact (emulated): the freed upper block read through its pointer is a use-after-free
// REQUIRES: backend!=nonlinear
// RUN: %memdbg -o backend=nonlinear:nonlinear_emulation=1:compact=1:detect_leaks=0 %t uaf 0
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
// CHECK: READ of size 1
// CHECK: is located 0 bytes inside of 96-byte region
// CHECK-STACK: ^READ of size | read_byte | main
// CHECK-STACK: ^freed by thread | free | free_upper | main
// CHECK-STACK: ^previously allocated by thread | malloc | make_upper | main
//
// TEST: compact (nonlinear): overflow into a freed neighbour's gap is the lower block's, found at its free
// REQUIRES: backend=nonlinear
// RUN: %memdbg -o compact=1:detect_leaks=0 %t overflow 40
// EXIT: 1
// CHECK-OUT: ^overflowed$
// CHECK-OUT-NOT: not neighbours
// CHECK-ERROR: heap-buffer-overflow
// CHECK: the padding after the block was overwritten to the end of its redzone \(compact mode\), perhaps further; found when it was freed
// CHECK: WRITE of size 16 at
// CHECK: is located 0 bytes after 96-byte region
// CHECK-STACK: ^allocated by thread | malloc | make_lower | main
// CHECK-NOT:  in make_upper
// CHECK-COUNT: 1 ERROR: memdbg
//
// TEST: compact (nonlinear): the same overflow with the lower block live to exit
// REQUIRES: backend=nonlinear
// RUN: %memdbg -o compact=1:detect_leaks=0 %t keep 40
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: the padding after a live block was overwritten to the end of its redzone \(compact mode\), perhaps further; found at exit
// CHECK: is located 0 bytes after 96-byte region
// CHECK-STACK: ^allocated by thread | malloc | make_lower | main
// CHECK-NOT:  in make_upper
//
// TEST: compact (nonlinear): an overflow that stays in the redzone is reported as it is
// REQUIRES: backend=nonlinear
// RUN: %memdbg -o compact=1:detect_leaks=0 %t overflow 8
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: WRITE of size 8 at
// CHECK: the padding next to the block was overwritten; found when it was freed
// CHECK-NOT: perhaps further
// CHECK: is located 0 bytes after 96-byte region
//
// TEST: compact (nonlinear): the freed upper block read through its pointer is a use-after-free
// REQUIRES: backend=nonlinear
// RUN: %memdbg -o compact=1:detect_leaks=0 %t uaf 0
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
// CHECK: READ of size 1
// CHECK: is located 0 bytes inside of 96-byte region
// CHECK-STACK: ^READ of size | read_byte | main
// CHECK-STACK: ^freed by thread | free | free_upper | main
// CHECK-STACK: ^previously allocated by thread | malloc | make_upper | main

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *make_upper(size_t n) { return malloc(n); }
char *make_lower(size_t n) { return malloc(n); }
void free_upper(char *p) { free(p); }
void free_lower(char *p) { free(p); }
int read_byte(const char *p, size_t i) { return ((const volatile char *)p)[i]; }

static uintptr_t off(const void *p) { return (uintptr_t)p & 4095; }

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    size_t n = (size_t)atol(argv[2]);
    /* a fresh file page's first chunk lies at its top, the next one
     * below it (112-byte chunks: 96 bytes and the 16-byte redzone) */
    char *upper = make_upper(96), *lower = make_lower(96);
    if (off(upper) != 4096 - 96 || off(lower) != 4096 - 112 - 16 - 96)
        printf("not neighbours: %#lx %#lx\n", (unsigned long)off(upper), (unsigned long)off(lower));
    free_upper(upper);
    if (!strcmp(argv[1], "uaf")) return read_byte(upper, n);
    /* byte by byte: a checked memset would stop the program at the call */
    for (volatile size_t i = 0; i < n; i++) lower[96 + i] = 'Z';
    printf("overflowed\n");
    fflush(stdout);
    if (!strcmp(argv[1], "keep")) return 0;
    free_lower(lower);
    printf("survived free\n");
    return 0;
}
