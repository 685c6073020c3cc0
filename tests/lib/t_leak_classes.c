/* SPDX-License-Identifier: MIT */
/* Leak classification as LeakSanitizer's: a leak is indirect only when
 * another leaked block points to it; a block's pointer to itself, or a
 * cycle of leaked blocks that nothing else reaches, must not hide a
 * direct leak.  And the leak scan over blocks the program made partly
 * unreadable: it skips the unreadable page, not the rest of the block.
 * Mode in argv[1]. */

// TEST: leak classes: a block pointing to itself is a direct leak
// RUN: %memdbg %t self
// EXIT: 1
// CHECK-OUT: done
// CHECK: ^Direct leak of 48 byte\(s\) in 1 object\(s\) allocated from:
// CHECK-NOT: Indirect leak
// CHECK-STACK: ^Direct leak of 48 | malloc | make_self | main
// CHECK: ^SUMMARY: memdbg: 48 byte\(s\) leaked in 1 allocation\(s\)\.$
//
// TEST: leak classes: a self-pointing head keeps its list indirect, itself direct
// RUN: %memdbg %t self_list
// EXIT: 1
// CHECK: ^Direct leak of 48 byte\(s\) in 1 object\(s\) allocated from:
// CHECK: ^Indirect leak of 80 byte\(s\) in 1 object\(s\) allocated from:
// CHECK-STACK: ^Direct leak of 48 | malloc | make_self | main
// CHECK-STACK: ^Indirect leak of 80 | malloc | make_node | main
//
// TEST: leak classes: a lost cycle of two blocks is one direct and one indirect leak
// RUN: %memdbg %t cycle
// EXIT: 1
// CHECK-COUNT: 1 ^Direct leak of
// CHECK-COUNT: 1 ^Indirect leak of
// CHECK: ^SUMMARY: memdbg: 128 byte\(s\) leaked in 2 allocation\(s\)\.$
//
// TEST: leak classes: a cycle reached from a lost block is indirect, the block direct
// RUN: %memdbg %t cycle_from_head
// EXIT: 1
// CHECK: ^Direct leak of 32 byte\(s\) in 1 object\(s\) allocated from:
// CHECK-COUNT: 1 ^Direct leak of
// CHECK-COUNT: 2 ^Indirect leak of
// CHECK-STACK: ^Direct leak of 32 | malloc | make_head | main
//
// TEST: leak scan: an unreadable page in a live block is skipped, the pages after it scanned
// RUN: %memdbg %t live_hole
// EXIT: 1
// CHECK-OUT: done
// CHECK-NOT: SEGV|heap-buffer
// CHECK: ^Direct leak of 48 byte\(s\) in 1 object\(s\)
// CHECK-NOT: 80 byte
// CHECK: ^SUMMARY: memdbg: 48 byte\(s\) leaked in 1 allocation\(s\)\.$
//
// TEST: leak scan: an unreadable page in a live block, no leak: exit status 0
// RUN: %memdbg %t live_hole_clean
// EXIT: 0
// CHECK-OUT: done
// CHECK-NOT: ERROR|SEGV
//
// TEST: leak scan: a leaked block with an unreadable page is reported with what it reaches
// RUN: %memdbg %t lost_hole
// EXIT: 1
// CHECK-OUT: done
// CHECK-NOT: SEGV|inside memdbg's own report
// CHECK: ^Direct leak of 20480 byte\(s\) in 1 object\(s\)
// CHECK: ^Indirect leak of 80 byte\(s\) in 1 object\(s\)
// CHECK: ^SUMMARY: memdbg: 20560 byte\(s\) leaked in 2 allocation\(s\)\.$

//
// TEST: child_leak_exitcode=0: a fork child's leaks leave its exit status alone
// RUN: %memdbg -o child_leak_exitcode=0 %t fork_leak
// EXIT: 0
// CHECK-OUT: ^child status 0$
// CHECK-COUNT: 1 ^Direct leak of 48 byte
// RUN: %memdbg %t fork_leak
// EXIT: 0
// CHECK-OUT: ^child status 1$
// CHECK-COUNT: 1 ^Direct leak of 48 byte

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096

void **make_self(void)
{
    void **p = malloc(48);
    memset(p, 0, 48);
    p[0] = p;
    return p;
}

void **make_node(void)
{
    void **p = malloc(80);
    memset(p, 0, 80);
    return p;
}

void **make_head(void)
{
    void **p = malloc(32);
    memset(p, 0, 32);
    return p;
}

void *keep;   /* a live block's only root */

/* A five-page block with its second page PROT_NONE and, in its fourth
 * page, the only pointer to an 80-byte block. */
static char *block_with_hole(void)
{
    char *big = malloc(5 * PAGE);
    if (!big || ((unsigned long)big & (PAGE - 1))) { puts("block not page-aligned"); exit(2); }
    memset(big, 0, 5 * PAGE);
    void **node = make_node();
    memcpy(big + 3 * PAGE + 8, &node, sizeof node);
    if (mprotect(big + PAGE, PAGE, PROT_NONE) != 0) { perror("mprotect"); exit(3); }
    return big;
}

/* overwrite dead stack slots so no stale copy of a pointer survives */
void scrub_stack(void) { volatile char junk[8192]; memset((char *)junk, 0, sizeof junk); }

/* Each mode builds its blocks in a function of its own, so no pointer to
 * them stays in main's frame. */
static void build(const char *mode)
{
    if (!strcmp(mode, "self")) {
        make_self();
    } else if (!strcmp(mode, "self_list")) {
        void **head = make_self();
        head[1] = make_node();
    } else if (!strcmp(mode, "cycle")) {
        void **a = make_self(), **b = make_node();
        a[0] = b;
        b[0] = a;
    } else if (!strcmp(mode, "cycle_from_head")) {
        void **h = make_head(), **a = make_self(), **b = make_node();
        h[0] = a;
        a[0] = b;
        b[0] = a;
    } else if (!strcmp(mode, "live_hole")) {
        keep = block_with_hole();
        make_self();
    } else if (!strcmp(mode, "live_hole_clean")) {
        keep = block_with_hole();
    } else if (!strcmp(mode, "lost_hole")) {
        block_with_hole();
    }
}

/* A fork child that leaks and exits 0; the parent leaks nothing. */
static void fork_leak(void)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        build("self");
        scrub_stack();
        exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    printf("child status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "fork_leak")) {
        fork_leak();
        return 0;
    }
    build(argc > 1 ? argv[1] : "self");
    scrub_stack();
    puts("done");
    return 0;
}
