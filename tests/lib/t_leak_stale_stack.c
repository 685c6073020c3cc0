/* SPDX-License-Identifier: MIT */
/* Stale copies of a pointer in stack the program no longer uses.
 * fill_stale_copies() writes the only pointer to a 24-byte block into
 * 8 KiB of its own frame, below main's; main then drops the pointer.  The
 * frames of exit() and its handlers are laid over that dead stack and
 * leave most of its words unwritten.  By default the scan, as
 * LeakSanitizer's, starts at the stack pointer and sees the copies;
 * leak_scan_exit_frames=0 starts at exit()'s caller.
 *   return   main returns: the 24-byte block is a direct leak
 *   exit     a function whose local (in its frame, above exit's caller)
 *            points to the 24-byte block calls exit(): still reachable,
 *            no report; the 40-byte block, dropped, is a leak */

// TEST: leak check: a pointer left in dead stack below main keeps its block, as in LSan
// RUN: %memdbg %t return
// EXIT: 0
// CHECK-OUT: done
// CHECK-NOT: leak of
//
// TEST: leak_scan_exit_frames=0: a pointer left only in dead stack below main is a leak
// RUN: %memdbg -o leak_scan_exit_frames=0 %t return
// EXIT: 1
// CHECK-OUT: done
// CHECK: ^Direct leak of 24 byte\(s\) in 1 object\(s\) allocated from:
// CHECK-STACK: ^Direct leak of 24 | malloc | make_block | main
// CHECK: ^SUMMARY: memdbg: 24 byte\(s\) leaked in 1 allocation\(s\)\.$
//
// TEST: leak_scan_exit_frames=0: the frames of exit()'s callers stay roots
// RUN: %memdbg -o leak_scan_exit_frames=0 %t exit
// EXIT: 1
// CHECK-OUT: done
// CHECK-NOT: leak of 24 byte
// CHECK-STACK: ^Direct leak of 40 | malloc | make_block | main
// CHECK: ^SUMMARY: memdbg: 40 byte\(s\) leaked in 1 allocation\(s\)\.$

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STALE_WORDS 1024

__attribute__((noinline)) void *make_block(size_t n)
{
    void *p = malloc(n);
    memset(p, 1, n);
    return p;
}

__attribute__((noinline)) void fill_stale_copies(void *p)
{
    void *volatile copies[STALE_WORDS];
    for (int i = 0; i < STALE_WORDS; i++) copies[i] = p;
}

__attribute__((noinline)) void exit_now(void)
{
    puts("done");
    fflush(stdout);
    exit(0);
}

/* Keeps the block's address in its own frame while it calls exit(). */
__attribute__((noinline)) void exit_while_holding(void *p)
{
    void *volatile held = p;
    exit_now();
    (void)held;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "return";
    if (!strcmp(mode, "exit")) {
        void *volatile block = make_block(24);
        void *volatile dropped = make_block(40);
        dropped = NULL;
        fill_stale_copies(dropped);
        exit_while_holding(block);
    }
    /* nothing is called after fill_stale_copies: a call would overwrite
     * the copies with its own frames */
    puts("done");
    fflush(stdout);
    void *volatile block = make_block(24);
    fill_stale_copies(block);
    block = NULL;
    return 0;
}
