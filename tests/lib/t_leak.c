/* SPDX-License-Identifier: MIT */
/* Leaks: 3 x 100 bytes from leak_small, 1000 bytes from leak_big, and a
 * list whose head is lost (direct) with one node behind it (indirect).
 * global_keep stays reachable and must not be reported. */

// TEST: leak report grouped by stack, largest first
// RUN: %memdbg %t
// EXIT: 1
// CHECK-OUT: done
// CHECK: ^==[0-9]+==ERROR: memdbg: detected memory leaks
// CHECK: ^Direct leak of 1000 byte\(s\) in 1 object\(s\) allocated from:
// CHECK: ^Direct leak of 300 byte\(s\) in 3 object\(s\) allocated from:
// CHECK: ^Direct leak of 48 byte\(s\) in 1 object\(s\)
// CHECK: ^Indirect leak of 48 byte\(s\) in 1 object\(s\)
// CHECK-NOT:  77 byte
// CHECK: ^SUMMARY: memdbg: 1396 byte\(s\) leaked in 6 allocation\(s\)\.
// CHECK-STACK: ^Direct leak of 1000 | malloc | leak_big | main
// CHECK-STACK: ^Direct leak of 300 | malloc | leak_small | main
// CHECK-ORDER: Direct leak of 1000 | Direct leak of 300
//
// TEST: leaks: exitcode= is the exit status
// RUN: %memdbg -o exitcode=23 %t
// EXIT: 23
// CHECK: detected memory leaks
//
// TEST: detect_leaks=0
// RUN: %memdbg -o detect_leaks=0 %t
// EXIT: 0
// CHECK-NOT: ERROR
//
// TEST: boolean options: false/true, no/yes; bad value stops
// RUN: %memdbg -o detect_leaks=false %t
// EXIT: 0
// CHECK-NOT: ERROR
// RUN: %memdbg -o detect_leaks=no:print_stats=true %t
// EXIT: 0
// CHECK-NOT: ERROR
// CHECK: memdbg stats:
// RUN: %memdbg -o detect_leaks=yes %t
// EXIT: 1
// CHECK: detected memory leaks
// RUN: %memdbg -o detect_leaks=maybe %T/t_early
// EXIT: 1
// CHECK: bad value 'maybe' for option 'detect_leaks'
//
// TEST: print_summary=0: leak and error reports without their SUMMARY line
// RUN: %memdbg -o print_summary=0 %t
// EXIT: 1
// CHECK: ^Direct leak of 1000 byte\(s\) in 1 object\(s\) allocated from:
// CHECK-NOT: SUMMARY
// CHECK-NOT: WARNING
// RUN: %memdbg -o print_summary=0 %T/t_uaf read
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
// CHECK-STACK: ^freed by thread T0 here: | free_buffer | main
// CHECK-NOT: SUMMARY
// RUN: %memdbg -o print_summary=1 %T/t_uaf read
// EXIT: 1
// CHECK: ^SUMMARY: memdbg: heap-use-after-free in use_after_free

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *global_keep;
struct node { struct node *next; char pad[40]; };

void leak_small(void) { char *p = malloc(100); memset(p, 1, 100); p = 0; }
void leak_big(void) { char *p = malloc(1000); memset(p, 1, 1000); p = 0; }
void leak_list(void)
{
    struct node *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    a->next = b;
    b->next = 0;
}
void keep_reachable(void) { global_keep = malloc(77); }
/* overwrite dead stack slots so no stale copy of a pointer survives */
void scrub_stack(void) { volatile char junk[8192]; memset((char *)junk, 0, sizeof junk); }

int main(void)
{
    for (int i = 0; i < 3; i++) leak_small();
    leak_big();
    leak_list();
    keep_reachable();
    scrub_stack();
    puts("done");
    return 0;
}
