/* SPDX-License-Identifier: MIT */
/* Reports on small stacks.  The fault handler runs on the thread's
 * sigaltstack when it has one (16 KiB, or 64 KiB as Python's faulthandler
 * and Rust runtimes use), or on a thread's own small stack; double-free
 * reports run on the stack of the thread that called free.  memdbg must
 * still print the whole report, with symbolized stacks.
 *   altstack16 | altstack64 | thread64 | thread64-double-free
 *   two-threads64: two such threads fault at the same moment */

// Reports on any stack: a 16 or 64 KiB sigaltstack, a thread with a 64 KiB
// stack.  The raw frames (module+offset) come before the symbolized ones,
// and the program's own handler never runs for a heap fault.
// TEST: UAF on a 16 KiB sigaltstack: full report
// RUN: %memdbg %t altstack16
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
// CHECK: ^READ of size 1 at 0x.* thread T0$
// CHECK: is located 5 bytes inside of 32-byte region
// CHECK-ORDER: ^    \(raw: [^ ]+\+0x[0-9a-f]+ | ^    #0 0x
// CHECK-STACK: ^READ of size 1 | use_after_free | uaf | with_altstack
// CHECK-STACK: ^freed by thread T0 here: | free | free_buffer | uaf | with_altstack
// CHECK-STACK: ^previously allocated by thread T0 here: | malloc | make_buffer | uaf | with_altstack
// CHECK: ^SUMMARY: memdbg: heap-use-after-free in use_after_free .*t_small_stack.c:
// CHECK-OUT-NOT: user handler called
// CHECK-OUT: ^altstack 16384$
//
// TEST: UAF on a 64 KiB sigaltstack: full report
// RUN: %memdbg %t altstack64
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
// CHECK: ^READ of size 1 at 0x.* thread T0$
// CHECK: is located 5 bytes inside of 32-byte region
// CHECK-ORDER: ^    \(raw: [^ ]+\+0x[0-9a-f]+ | ^    #0 0x
// CHECK-STACK: ^READ of size 1 | use_after_free | uaf | with_altstack
// CHECK-STACK: ^freed by thread T0 here: | free | free_buffer | uaf | with_altstack
// CHECK-STACK: ^previously allocated by thread T0 here: | malloc | make_buffer | uaf | with_altstack
// CHECK: ^SUMMARY: memdbg: heap-use-after-free in use_after_free .*t_small_stack.c:
// CHECK-OUT-NOT: user handler called
// CHECK-OUT: ^altstack 65536$
//
// TEST: UAF in a thread with a 64 KiB stack: full report
// RUN: %memdbg %t thread64
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
// CHECK: ^READ of size 1 at 0x.* thread T1$
// CHECK: is located 5 bytes inside of 32-byte region
// CHECK-ORDER: ^    \(raw: [^ ]+\+0x[0-9a-f]+ | ^    #0 0x
// CHECK-STACK: ^READ of size 1 | use_after_free | uaf | thread_uaf
// CHECK-STACK: ^freed by thread T1 here: | free | free_buffer | uaf | thread_uaf
// CHECK-STACK: ^previously allocated by thread T1 here: | malloc | make_buffer | uaf | thread_uaf
// CHECK: ^SUMMARY: memdbg: heap-use-after-free in use_after_free .*t_small_stack.c:
// CHECK-OUT-NOT: user handler called
//
// TEST: double-free in a thread with a 64 KiB stack: full report
// RUN: %memdbg %t thread64-double-free
// EXIT: 1
// CHECK-ERROR: double-free
// CHECK-ORDER: ^    \(raw: [^ ]+\+0x[0-9a-f]+ | ^    #0 0x
// CHECK-STACK: ^free of 0x | free | second_free | double_free | thread_double_free
// CHECK-STACK: ^freed by thread T1 here: | free | first_free | double_free | thread_double_free
// CHECK-STACK: ^previously allocated by thread T1 here: | malloc | make_buffer | double_free
// CHECK: ^SUMMARY: memdbg: double-free in second_free
//
// Two faults at once: one whole report, then the end.
// TEST: two 64 KiB-stack threads fault at once: one full report
// RUN: %memdbg %t two-threads64
// EXIT: 1
// CHECK-COUNT: 1 ERROR: memdbg
// CHECK-ERROR: heap-use-after-free
// CHECK-STACK: ^READ of size 1 | use_after_free | thread_uaf_together
// CHECK-STACK: ^freed by thread T[12] here: | free | free_buffer | thread_uaf_together
// CHECK: ^SUMMARY: memdbg: heap-use-after-free in use_after_free
// CHECK: ^==[0-9]+==ABORTING$
// CHECK-OUT-NOT: threads returned

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *make_buffer(size_t n) { return malloc(n); }
void free_buffer(char *p) { free(p); }
int use_after_free(volatile char *p) { return p[5]; }
void first_free(char *p) { free(p); }
void second_free(char *p) { free(p); }

static void user_handler(int sig)
{
    (void)sig;
    static const char msg[] = "user handler called\n";
    write(1, msg, sizeof msg - 1);
    _exit(3);
}

static int uaf(void)
{
    char *p = make_buffer(32);
    free_buffer(p);
    return use_after_free(p);
}

static int double_free(void)
{
    char *p = make_buffer(24);
    first_free(p);
    second_free(p);
    return 0;
}

static void *thread_uaf(void *arg) { (void)arg; return (void *)(long)uaf(); }

static pthread_barrier_t together;
static void *thread_uaf_together(void *arg)
{
    (void)arg;
    char *p = make_buffer(32);
    free_buffer(p);
    pthread_barrier_wait(&together);
    return (void *)(long)use_after_free(p);
}

static int two_threads(void)
{
    pthread_attr_t a;
    pthread_t t[2];
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 64 * 1024);
    pthread_barrier_init(&together, 0, 2);
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], &a, thread_uaf_together, 0) != 0) { puts("pthread_create failed"); return 2; }
    for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
    puts("threads returned");
    return 0;
}
static void *thread_double_free(void *arg) { (void)arg; return (void *)(long)double_free(); }

static int with_altstack(size_t size)
{
    stack_t ss = { .ss_sp = malloc(size), .ss_size = size };
    if (!ss.ss_sp || sigaltstack(&ss, 0) != 0) { perror("sigaltstack"); return 2; }
    /* as faulthandler does: its own handler on the alternate stack */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = user_handler;
    sa.sa_flags = SA_ONSTACK | SA_NODEFER;
    sigaction(SIGSEGV, &sa, 0);
    printf("altstack %zu\n", size);
    fflush(stdout);
    return uaf();
}

static int in_thread(void *(*fn)(void *))
{
    pthread_attr_t a;
    pthread_t t;
    pthread_attr_init(&a);
    if (pthread_attr_setstacksize(&a, 64 * 1024) != 0) { puts("setstacksize failed"); return 2; }
    if (pthread_create(&t, &a, fn, 0) != 0) { puts("pthread_create failed"); return 2; }
    pthread_join(t, 0);
    puts("thread returned");
    return 0;
}

int main(int argc, char **argv)
{
    const char *m = argc > 1 ? argv[1] : "altstack16";
    if (!strcmp(m, "altstack16")) return with_altstack(16 * 1024);
    if (!strcmp(m, "altstack64")) return with_altstack(64 * 1024);
    if (!strcmp(m, "thread64")) return in_thread(thread_uaf);
    if (!strcmp(m, "thread64-double-free")) return in_thread(thread_double_free);
    if (!strcmp(m, "two-threads64")) return two_threads();
    fprintf(stderr, "unknown mode %s\n", m);
    return 2;
}
