/* SPDX-License-Identifier: MIT */
/* The program installs its own SIGSEGV handler (as Python's faulthandler
 * does).  A use-after-free must still be reported by memdbg; a fault outside
 * the heap must still reach the program's handler. */

// TEST: program's own SIGSEGV handler: heap faults still reported, others reach it
// RUN: %memdbg %t
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
// CHECK-STACK: ^READ of size 1 | read_freed | main
// RUN: %memdbg %t null
// EXIT: 3
// CHECK-OUT: user handler called
// CHECK-NOT: ERROR: memdbg
//
// TEST: a fault outside the heap without a program handler: one line, then the signal
// RUN: %memdbg %t null_unhandled
// EXIT: 139
// CHECK-COUNT: 1 ^==[0-9]+==memdbg: SEGV on unknown address 0x0 outside the memdbg heap \(pc 0x[0-9a-f]+\); passing it on$
// CHECK-NOT: ERROR: memdbg

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)sig; (void)si; (void)uc;
    static const char msg[] = "user handler called\n";
    write(1, msg, sizeof msg - 1);
    _exit(3);
}

char *make_buffer(size_t n) { return malloc(n); }
int read_freed(char *p) { return p[1]; }
int read_null(volatile char *p) { return p[0]; }

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "null_unhandled")) {
        free(make_buffer(8));   /* memdbg is running */
        return read_null(0);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, 0);
    struct sigaction back;
    sigaction(SIGSEGV, 0, &back);
    if (back.sa_sigaction != on_segv) { puts("sigaction did not report our handler"); return 2; }
    if (argc > 1 && !strcmp(argv[1], "null")) return read_null(0);
    char *p = make_buffer(8);
    free(p);
    return read_freed(p);
}
