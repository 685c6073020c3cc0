/* SPDX-License-Identifier: MIT */
/* fork: the child gets its own heap (the memdbg heap is MAP_SHARED inside,
 * so this checks the atfork copy), can allocate and free, and the parent
 * does not see the child's writes.
 *   child-uaf:      the parent frees a block (it sits in quarantine) and
 *                   forks; the child reads it: the child must report it;
 *   child-overflow: the child writes one page past a live 16-byte block of
 *                   the parent's (its guard page): the child must report it.
 * Whatever makes fork cheaper must keep these guards in the child. */

// TEST: fork: the child gets its own heap
// RUN: %memdbg %t
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok
//
// Guards survive fork: the child reports a use-after-free of a block freed
// before it, and an overflow.
// TEST: fork: the child reports a UAF of a block freed before fork, and an overflow
// RUN: %memdbg %t child-uaf
// EXIT: 0
// CHECK-OUT: ^child: exit 1$
// CHECK-OUT-NOT: child survived
// CHECK-ERROR: heap-use-after-free
// CHECK: is located 5 bytes inside of 16-byte region
// CHECK-STACK: ^READ of size 1 | child_reads_freed | child_bug | main
// CHECK-STACK: ^freed by thread T0 here: | free | free_buffer | child_bug | main
// RUN: %memdbg %t child-overflow
// EXIT: 0
// CHECK-OUT: ^child: exit 1$
// CHECK-OUT-NOT: child survived
// CHECK-ERROR: heap-buffer-overflow
// CHECK: is located 4064 bytes after 16-byte region
// CHECK-STACK: ^WRITE of size 1 | child_writes_past | child_bug | main
// CHECK-STACK: ^allocated by thread T0 here: | malloc | make_buffer | child_bug | main
// CHECK-NOT: detected memory leaks
//
// TEST: nonlinear logic (emulated): fork, alignment
// REQUIRES: backend!=nonlinear
// RUN: LD_PRELOAD=%lib MEMDBG_OPTIONS=backend=nonlinear:nonlinear_emulation=1 %t
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok
// RUN: LD_PRELOAD=%lib MEMDBG_OPTIONS=backend=nonlinear:nonlinear_emulation=1:alignment=16 %T/t_align
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char *shared_before;

char *make_buffer(size_t n) { return malloc(n); }
void free_buffer(char *p) { free(p); }
int child_reads_freed(volatile char *p) { return p[5]; }
void child_writes_past(volatile char *p) { p[4096 - 16] = 1; }   /* 16-byte block at the page end */

/* The bug happens in the child; the parent prints how the child ended. */
static int child_bug(const char *mode)
{
    char *p = make_buffer(16);
    memset(p, 7, 16);
    if (!strcmp(mode, "child-uaf")) free_buffer(p);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return 2;
    if (pid == 0) {
        if (!strcmp(mode, "child-uaf")) child_reads_freed(p);
        else child_writes_past(p);
        puts("child survived");
        fflush(stdout);
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    if (WIFEXITED(st)) printf("child: exit %d\n", WEXITSTATUS(st));
    else printf("child: signal %d\n", WTERMSIG(st));
    if (strcmp(mode, "child-uaf")) free_buffer(p);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1) return child_bug(argv[1]);

    shared_before = malloc(64);
    strcpy(shared_before, "parent");
    char *many[1000];
    static char *big[10];
    for (int i = 0; i < 1000; i++) { many[i] = malloc(100 + i); memset(many[i], i & 0xff, 100 + i); }
    for (int i = 0; i < 10; i++) { big[i] = malloc(5000 * (i + 1) * (i + 1)); memset(big[i], i + 1, 5000 * (i + 1) * (i + 1)); }
    for (int round = 0; round < 3; round++) {
        pid_t pid = fork();
        if (pid < 0) return 2;
        if (pid == 0) {
            if (strcmp(shared_before, "parent") != 0) _exit(10);
            for (int i = 0; i < 1000; i++)
                for (int k = 0; k < 100 + i; k++) if ((unsigned char)many[i][k] != (i & 0xff)) _exit(11);
            for (int i = 0; i < 10; i++)
                for (int k = 0; k < 5000 * (i + 1) * (i + 1); k++) if (big[i][k] != i + 1) _exit(12);
            strcpy(shared_before, "child");
            for (int i = 0; i < 1000; i++) { free(many[i]); many[i] = 0; }
            char *q = malloc(5000);
            memset(q, 3, 5000);
            free(q);
            exit(0);
        }
        int st;
        waitpid(pid, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) { printf("child failed: %d\n", st); return 3; }
        if (strcmp(shared_before, "parent") != 0) { printf("child write leaked into parent\n"); return 4; }
        for (int i = 0; i < 1000; i++)
            for (int k = 0; k < 100 + i; k++) if ((unsigned char)many[i][k] != (i & 0xff)) return 5;
    }
    for (int i = 0; i < 1000; i++) free(many[i]);
    free(shared_before);
    puts("ok");
    return 0;
}
