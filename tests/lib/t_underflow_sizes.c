/* SPDX-License-Identifier: MIT */
/* An underflow is blamed on the block it hits, whatever its size: a block
 * that fills its pages (4096, 8192 bytes) starts right after the guard
 * page of the slot below, so its byte [-1] is in that neighbour's guard
 * and faults at once; smaller and odd-sized blocks have padding before
 * them, checked at free.  Neighbours of the same size on both sides. */

// TEST: underflow of a 16-byte block blames it
// RUN: %memdbg %t 16 1
// EXIT: 1
// CHECK-ERROR: heap-buffer-underflow
// CHECK: is located 1 bytes before 16-byte region
// CHECK-STACK: ^allocated by thread T0 here: | malloc | make_victim | main
//
// TEST: underflow of a 100-byte block blames it
// RUN: %memdbg %t 100 1
// EXIT: 1
// CHECK-ERROR: heap-buffer-underflow
// CHECK: is located 1 bytes before 100-byte region
// CHECK-STACK: ^allocated by thread T0 here: | malloc | make_victim | main
//
// TEST: underflow of a 4096-byte block faults and blames it, not the block below
// RUN: %memdbg %t 4096 1
// EXIT: 1
// CHECK-ERROR: heap-buffer-underflow
// CHECK: ^WRITE of size 1 at 0x
// CHECK: is located 1 bytes before 4096-byte region
// CHECK-NOT: bytes after
// CHECK-STACK: ^WRITE of size | poke | main
// CHECK-STACK: ^allocated by thread T0 here: | malloc | make_victim | main
//
// TEST: underflow of an 8192-byte block by 100 bytes blames it
// RUN: %memdbg %t 8192 100
// EXIT: 1
// CHECK-ERROR: heap-buffer-underflow
// CHECK: ^WRITE of size 1 at 0x
// CHECK: is located 100 bytes before 8192-byte region
// CHECK-STACK: ^allocated by thread T0 here: | malloc | make_victim | main
//
// TEST: underflow of a 3-page-and-1-byte block blames it
// RUN: %memdbg %t 12289 1
// EXIT: 1
// CHECK-ERROR: heap-buffer-underflow
// CHECK: is located 1 bytes before 12289-byte region
// CHECK-STACK: ^allocated by thread T0 here: | malloc | make_victim | main
//
// TEST: underflow of a lone 4096-byte block blames it, not stdout's buffer
// RUN: %memdbg %t 4096 1 lone
// EXIT: 1
// CHECK-ERROR: heap-buffer-underflow
// CHECK: is located 1 bytes before 4096-byte region
// CHECK-STACK: ^allocated by thread T0 here: | malloc | make_victim | main
//
// TEST: compact=1: underflow of a 100-byte block blames it
// REQUIRES: backend=nonlinear
// RUN: %memdbg -o compact=1 %t 100 1
// EXIT: 1
// CHECK-ERROR: heap-buffer-underflow
// CHECK: is located 1 bytes before 100-byte region
// CHECK-STACK: ^allocated by thread T0 here: | malloc | make_victim | main
//
// TEST: compact=1: a 16-byte block's underflow into the redzone of the block below blames it
// REQUIRES: backend=nonlinear
// RUN: %memdbg -o compact=1 %t 16 1
// EXIT: 1
// CHECK-ERROR: heap-buffer-underflow
// CHECK: is located 1 bytes before 16-byte region
// CHECK: written below its start, into the redzone of the block below it
// CHECK-STACK: ^allocated by thread T0 here: | malloc | make_victim | main
//
// TEST: compact=1: an overflow into the redzone still blames the block below
// RUN: %memdbg -o compact=1 %t 16 1 over
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: is located 0 bytes after 16-byte region
// CHECK-STACK: ^allocated by thread T0 here: | malloc | make_victim | main
//
// TEST: protect_below: an overflow of a 4096-byte block blames it, not the block above
// RUN: %memdbg -o protect_below=1 %t 4096 1 over
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: ^WRITE of size 1 at 0x
// CHECK: is located 0 bytes after 4096-byte region
// CHECK-STACK: ^allocated by thread T0 here: | malloc | make_victim | main

#include <stdio.h>
#include <stdlib.h>

char *make_victim(size_t n) { return malloc(n); }
char *make_neighbour(size_t n) { return malloc(n); }
void poke(char *p, long i) { p[i] = 1; }

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    size_t size = strtoul(argv[1], 0, 0);
    long below = strtol(argv[2], 0, 0);
    int lone = argc > 3 && argv[3][0] == 'l';
    int over = argc > 3 && argv[3][0] == 'o';   /* byte [size - 1 + distance] instead */
    printf("start\n");   /* stdout's buffer is a heap block too */
    fflush(stdout);
    char *before[5], *after[5];
    for (int i = 0; i < 5 && !lone; i++) before[i] = make_neighbour(size);
    char *victim = make_victim(size);
    for (int i = 0; i < 5 && !lone; i++) after[i] = make_neighbour(size);
    poke(victim, over ? (long)size - 1 + below : -below);
    /* the neighbours first: in compact mode the victim's underflow is in
     * the redzone of the block below it, found at that block's free */
    for (int i = 0; i < 5 && !lone; i++) { free(before[i]); free(after[i]); }
    free(victim);
    puts("survived");
    return 0;
}
