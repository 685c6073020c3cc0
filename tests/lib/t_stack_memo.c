/* SPDX-License-Identifier: MIT */
/* An allocation wrapper entered from three callers at the same stack
 * depth, as bash's xmalloc or a C++ operator new is: the call into malloc
 * has one return address and one stack pointer for all three, and only the
 * words above it (the callers' return addresses) tell the stacks apart.
 * memdbg's per-thread stack memo (stackmemo.c) must keep the three apart
 * (the report names the right caller) and serve them (print_stats counts
 * the captures it served).  The last round frees the block from a caller
 * other than the usual one; with "uaf" it then reads it: the report's
 * "allocated by" stack must name from_beta only, "freed by" release_gamma
 * only.
 *   t_stack_memo altstack: malloc in a SIGUSR1 handler on a sigaltstack
 *     that lies above the thread's stack, raised 200 times from
 *     raise_from_alpha, then once from raise_from_beta, whose block is
 *     read after free: the report must name raise_from_beta (the words
 *     below the signal frame are not on the handler's stack, so such a
 *     stack must not be served from the memo).
 *   t_stack_memo threads N: N threads one after another, each 100 pairs
 *     and a strerror() whose buffer glibc frees after the thread's key
 *     destructors; prints RssAnon (a thread's memo table must not leak).
 *   t_stack_memo live N: N threads alive together, each 100 pairs from two
 *     call sites, then RssAnon while they all wait (a table's pages become
 *     resident as they are used: a few, not 160 KiB per thread). */
#define _GNU_SOURCE
// TEST: stack memo: reports name the right one of a wrapper's three callers (also stack_memo=0, sigaltstack)
// RUN: %memdbg %t 3000 uaf
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
// CHECK-STACK: ^freed by thread T0 here: | wrap_free | release_gamma | main
// CHECK-STACK-NOT: ^freed by thread T0 here: | release_alpha | release_beta
// CHECK-STACK: ^previously allocated by thread T0 here: | wrap_alloc | from_beta | main
// CHECK-STACK-NOT: ^previously allocated by thread T0 here: | from_alpha | from_gamma
// RUN: %memdbg -o stack_memo=0 %t 3000 uaf
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
// CHECK-STACK: ^freed by thread T0 here: | wrap_free | release_gamma | main
// CHECK-STACK-NOT: ^freed by thread T0 here: | release_alpha | release_beta
// CHECK-STACK: ^previously allocated by thread T0 here: | wrap_alloc | from_beta | main
// CHECK-STACK-NOT: ^previously allocated by thread T0 here: | from_alpha | from_gamma
// malloc in a handler on a sigaltstack above the thread's stack: the caller
// below the signal frame is named right.
// RUN: %memdbg %t altstack
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
// CHECK-STACK: ^previously allocated by thread T1 here: | on_usr1 | raise_from_beta
// CHECK-STACK-NOT: ^previously allocated by thread T1 here: | raise_from_alpha

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define NOINLINE __attribute__((noinline))

NOINLINE void *wrap_alloc(size_t n) { return malloc(n); }
NOINLINE void wrap_free(void *p) { free(p); }
NOINLINE char *from_alpha(void) { return wrap_alloc(40); }
NOINLINE char *from_beta(void) { return wrap_alloc(40); }
NOINLINE char *from_gamma(void) { return wrap_alloc(40); }
NOINLINE void release_alpha(char *p) { wrap_free(p); }
NOINLINE void release_beta(char *p) { wrap_free(p); }
NOINLINE void release_gamma(char *p) { wrap_free(p); }
NOINLINE int read_freed(const char *p) { return *(const volatile char *)(p + 3); }

static char *alt_stack;
static void *volatile from_handler;
static void on_usr1(int sig) { (void)sig; from_handler = malloc(24); }
NOINLINE void raise_from_alpha(void) { raise(SIGUSR1); }
NOINLINE void raise_from_beta(void) { raise(SIGUSR1); }

static void *altstack_body(void *arg)
{
    (void)arg;
    stack_t ss = { .ss_sp = alt_stack, .ss_size = 1 << 16 };
    if (sigaltstack(&ss, 0) != 0) return (void *)1;
    for (int i = 0; i < 200; i++) {
        raise_from_alpha();
        free(from_handler);
    }
    raise_from_beta();
    char *p = from_handler;
    free(p);
    printf("reading the block from raise_from_beta\n");
    fflush(stdout);
    return (void *)(long)read_freed(p);
}

/* The sigaltstack is mapped first, the thread's stack after it: mmap
 * places the second one lower. */
static int altstack(void)
{
    alt_stack = mmap(0, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *stack = mmap(0, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (alt_stack == MAP_FAILED || stack == MAP_FAILED) return 2;
    if (stack > alt_stack) printf("note: thread stack above the alternate stack\n");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGUSR1, &sa, 0);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstack(&attr, stack, 1 << 20);
    pthread_t t;
    if (pthread_create(&t, &attr, altstack_body, 0) != 0) return 2;
    pthread_join(t, 0);
    return 0;
}

static void *short_thread(void *arg)
{
    for (int i = 0; i < 100; i++) free(malloc(16 + i));
    volatile char *msg = strerror(1000 + (int)(long)arg % 7);   /* freed at thread exit */
    (void)msg;
    return 0;
}

static void print_rss_anon(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "RssAnon:", 8)) fputs(line, stdout);
    if (f) fclose(f);
}

static int threads(int n)
{
    for (int i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, 0, short_thread, (void *)(long)i) != 0) return 2;
        pthread_join(t, 0);
    }
    print_rss_anon();
    return 0;
}

static pthread_barrier_t all_done, may_exit;
static void *live_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < 100; i++) {
        char *p = malloc(16 + i);
        free(wrap_alloc(24));
        free(p);
    }
    pthread_barrier_wait(&all_done);
    pthread_barrier_wait(&may_exit);
    return 0;
}

static int live(int n)
{
    pthread_t *t = calloc(n, sizeof *t);
    if (!t || pthread_barrier_init(&all_done, 0, n + 1) || pthread_barrier_init(&may_exit, 0, n + 1))
        return 2;
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], 0, live_thread, 0) != 0) return 2;
    pthread_barrier_wait(&all_done);
    print_rss_anon();
    pthread_barrier_wait(&may_exit);
    for (int i = 0; i < n; i++) pthread_join(t[i], 0);
    free(t);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "altstack")) return altstack();
    if (argc > 2 && !strcmp(argv[1], "threads")) return threads(atoi(argv[2]));
    if (argc > 2 && !strcmp(argv[1], "live")) return live(atoi(argv[2]));
    int rounds = argc > 1 ? atoi(argv[1]) : 3000;
    int uaf = argc > 2 && !strcmp(argv[2], "uaf");   /* else: exit 0, for the counts */
    char *a = 0, *b = 0, *c = 0;
    for (int r = 0; r < rounds; r++) {
        a = from_alpha();
        b = from_beta();
        c = from_gamma();
        memset(a, 1, 40);
        memset(b, 2, 40);
        memset(c, 3, 40);
        release_alpha(a);
        if (r + 1 == rounds) break;
        release_beta(b);
        release_gamma(c);
    }
    release_gamma(b);   /* the usual stack frees c here */
    release_beta(c);
    printf("rounds %d\n", rounds);
    fflush(stdout);
    return uaf ? read_freed(b) : 0;
}
