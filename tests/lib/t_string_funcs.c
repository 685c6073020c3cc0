/* SPDX-License-Identifier: MIT */
/* The mem and str interceptors (preload/strings.c): each call's whole
 * range is checked against its block before it runs, so the report gives
 * the call's size and its first bad byte, and catches bytes no guard page
 * covers (the alignment slack after a block).  Sizes come from volatile
 * variables: the compiler must call the functions, not expand them. */

// TEST: memcpy writing one byte past a block: the call's size, first bad byte
// RUN: %memdbg %t memcpy-write
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: ^WRITE of size 101 at 0x
// CHECK: is located 0 bytes after 100-byte region
// CHECK-STACK: ^WRITE of size | memcpy | do_memcpy | main
// CHECK-STACK: ^allocated by thread T0 here: | malloc | main
// CHECK: ^SUMMARY: memdbg: heap-buffer-overflow in do_memcpy .*t_string_funcs.c:
//
// TEST: memcpy of 200 bytes into 100: size 200, 0 bytes after
// RUN: %memdbg %t memcpy-200
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: ^WRITE of size 200 at 0x
// CHECK: is located 0 bytes after 100-byte region
//
// TEST: memcpy reading one byte past a block
// RUN: %memdbg %t memcpy-read
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: ^READ of size 101 at 0x
// CHECK: is located 0 bytes after 100-byte region
// CHECK-STACK: ^READ of size | memcpy | do_memcpy | main
//
// TEST: a read of the alignment slack through memcpy is caught
// RUN: %memdbg -o alignment=16 %t slack
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: ^READ of size 12 at 0x
// CHECK: is located 0 bytes after 10-byte region
//
// TEST: halt_on_error=0: a checked call's error is reported and the call runs
// RUN: %memdbg -o alignment=16:halt_on_error=0:detect_leaks=0 %t slack
// EXIT: 1
// CHECK-COUNT: 1 ERROR: memdbg: heap-buffer-overflow
// CHECK: ^READ of size 12 at 0x
// CHECK-OUT: survived
//
// TEST: memset one byte past a block
// RUN: %memdbg %t memset
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: ^WRITE of size 17 at 0x
// CHECK: is located 0 bytes after 16-byte region
// CHECK-STACK: ^WRITE of size | memset | main
//
// TEST: memcpy from a freed block is a use-after-free of the call's size
// RUN: %memdbg %t uaf
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
// CHECK: ^READ of size 4 at 0x
// CHECK: is located 0 bytes inside of 32-byte region
// CHECK-STACK: ^freed by thread T0 here: | free | main
//
// TEST: memcpy with overlapping ranges is reported
// RUN: %memdbg %t overlap
// EXIT: 1
// CHECK: ERROR: memdbg: memcpy-param-overlap: memory ranges \[0x[0-9a-f]+,0x[0-9a-f]+\) and \[0x[0-9a-f]+,0x[0-9a-f]+\) overlap
// CHECK: is located 4 bytes inside of 32-byte region
// CHECK-STACK: overlap$ | memcpy | do_memcpy | main
// CHECK: ^SUMMARY: memdbg: memcpy-param-overlap in do_memcpy
// CHECK-NOT: survived
//
// TEST: check_overlap=0 lets overlapping memcpy through
// RUN: %memdbg -o check_overlap=0 %t overlap
// EXIT: 0
// CHECK-NOT: ERROR
// CHECK-OUT: survived
//
// TEST: memmove with overlapping ranges is fine
// RUN: %memdbg %t memmove
// EXIT: 0
// CHECK-NOT: ERROR
// CHECK-OUT: survived
//
// TEST: strlen of an unterminated block reads one byte past it
// RUN: %memdbg %t strlen
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: ^READ of size 11 at 0x
// CHECK: is located 0 bytes after 10-byte region
// CHECK-STACK: ^READ of size | strlen | main
//
// TEST: strcpy into a block too short
// RUN: %memdbg %t strcpy
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: ^WRITE of size 12 at 0x
// CHECK: is located 0 bytes after 8-byte region
// CHECK-STACK: ^WRITE of size | strcpy | main
//
// TEST: strcpy with overlapping ranges is reported
// RUN: %memdbg %t strcpy-overlap
// EXIT: 1
// CHECK: ERROR: memdbg: strcpy-param-overlap: memory ranges
//
// TEST: strncpy writes all n bytes
// RUN: %memdbg %t strncpy
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: ^WRITE of size 10 at 0x
// CHECK: is located 0 bytes after 8-byte region
//
// TEST: strcat past the block: the appended bytes' size
// RUN: %memdbg %t strcat
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: ^WRITE of size 6 at 0x
// CHECK: is located 0 bytes after 8-byte region
// CHECK-STACK: ^WRITE of size | strcat | main
//
// TEST: strcmp running off an unterminated block
// RUN: %memdbg %t strcmp
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: ^READ of size 5 at 0x
// CHECK: is located 0 bytes after 4-byte region
//
// TEST: memcmp reads its whole length
// RUN: %memdbg %t memcmp
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: ^READ of size 9 at 0x
// CHECK: is located 0 bytes after 8-byte region
//
// TEST: memchr and strchr stop at what they find; past the block they are caught
// RUN: %memdbg %t chr
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: ^READ of size 16 at 0x
// CHECK: is located 0 bytes after 8-byte region
// CHECK-STACK: ^READ of size | memchr | main
// CHECK-OUT: found inside
//
// TEST: the fortified __memcpy_chk is checked as memcpy
// RUN: %memdbg %t memcpy-chk
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: ^WRITE of size 24 at 0x
// CHECK: is located 0 bytes after 16-byte region
// CHECK-STACK: ^WRITE of size | __memcpy_chk | main
//
// TEST: string calls in a signal handler that interrupts malloc and free
// RUN: %memdbg %t signal
// EXIT: 0
// CHECK-NOT: ERROR
// CHECK-OUT: handler ran
//
// TEST: calls inside their blocks report nothing
// RUN: %memdbg %t fine
// EXIT: 0
// CHECK-NOT: ERROR
// CHECK-OUT: survived

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

void *__memcpy_chk(void *d, const void *s, size_t n, size_t dlen);

static volatile size_t n1 = 1, n4 = 4, n8 = 8, n9 = 9, n10 = 10, n12 = 12, n16 = 16, n17 = 17, n24 = 24,
                       n100 = 100, n101 = 101, n200 = 200;

void *do_memcpy(void *d, const void *s, size_t n) { return memcpy(d, s, n); }

static char *sig_a, *sig_b;
static volatile int sig_runs;
static void on_alarm(int sig)
{
    (void)sig;
    memcpy(sig_b, sig_a, n16);
    if (strlen(sig_b) == 15 && !strcmp(sig_a, sig_b)) sig_runs++;
}

/* A timer interrupts malloc and free (memdbg's own memcpy and memset
 * included) with a handler that calls the checked functions. */
static void signal_run(void)
{
    sig_a = malloc(16);
    sig_b = malloc(16);
    memset(sig_a, 'a', 15);
    sig_a[15] = 0;
    signal(SIGALRM, on_alarm);
    struct itimerval it = { { 0, 100 }, { 0, 100 } };
    setitimer(ITIMER_REAL, &it, 0);
    for (int i = 0; i < 500 || !sig_runs; i++) {
        char *p = malloc(100 + i % 300);
        memset(p, 1, 100);
        p = realloc(p, 500);
        free(p);
    }
    struct itimerval off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &off, 0);
    printf("handler ran\n");
    free(sig_a);
    free(sig_b);
}

int main(int argc, char **argv)
{
    const char *m = argc > 1 ? argv[1] : "fine";
    static char stack_buf[512];
    if (!strcmp(m, "memcpy-write")) {
        char *p = malloc(n100);
        do_memcpy(p, stack_buf, n101);
    } else if (!strcmp(m, "memcpy-200")) {
        char *p = malloc(n100);
        do_memcpy(p, stack_buf, n200);
    } else if (!strcmp(m, "memcpy-read")) {
        char *p = malloc(n100);
        memset(p, 1, n100);
        do_memcpy(stack_buf, p, n101);
    } else if (!strcmp(m, "slack")) {
        char *p = malloc(n10);
        memset(p, 1, n10);
        do_memcpy(stack_buf, p, n12);
    } else if (!strcmp(m, "memset")) {
        char *p = malloc(n16);
        memset(p, 0, n17);
    } else if (!strcmp(m, "uaf")) {
        char *p = malloc(32);
        free(p);
        do_memcpy(stack_buf, p, n4);
    } else if (!strcmp(m, "overlap")) {
        char *p = malloc(32);
        memset(p, 1, 32);
        do_memcpy(p + n4, p, n16);
        free(p);
    } else if (!strcmp(m, "memmove")) {
        char *p = malloc(32);
        memset(p, 1, 32);
        memmove(p + n4, p, n16);
        free(p);
    } else if (!strcmp(m, "strlen")) {
        char *p = malloc(n10);
        memset(p, 'x', n10);
        printf("%zu\n", strlen(p));
    } else if (!strcmp(m, "strcpy")) {
        char *p = malloc(n8);
        strcpy(p, argv[0][0] ? "hello world" : "");
    } else if (!strcmp(m, "strcpy-overlap")) {
        char *p = malloc(32);
        memset(p, 'x', 31);
        p[31] = 0;
        strcpy(p + n1, p);
    } else if (!strcmp(m, "strncpy")) {
        char *p = malloc(n8);
        strncpy(p, "ab", n10);
    } else if (!strcmp(m, "strcat")) {
        char *p = malloc(n8);
        strcpy(p, "abc");
        strcat(p, argv[0][0] ? "defgh" : "");
    } else if (!strcmp(m, "strcmp")) {
        char *p = malloc(n4);
        memcpy(p, "abcd", n4);
        printf("%d\n", strcmp(p, argv[0][0] ? "abcdx" : ""));
    } else if (!strcmp(m, "memcmp")) {
        char *p = malloc(n8), *q = malloc(n16);
        memset(p, 1, n8);
        memset(q, 1, n16);
        printf("%d\n", memcmp(q, p, n9));
    } else if (!strcmp(m, "chr")) {
        char *p = malloc(n8);
        memset(p, 'x', n8);
        p[3] = 'y';
        if (memchr(p, 'y', n16) == p + 3) printf("found inside\n");
        fflush(stdout);
        printf("%p\n", memchr(p, 'z', n16));
    } else if (!strcmp(m, "memcpy-chk")) {
        char *p = malloc(n16);
        __memcpy_chk(p, stack_buf, n24, n200);   /* a variable: the compiler keeps the call */
    } else if (!strcmp(m, "signal")) {
        signal_run();
    } else {
        char *p = malloc(n16), *q = malloc(n100);
        memset(p, 0, n16);
        memcpy(q, "hello", 6);
        strcpy(p, q);
        strcat(p, q);
        strncpy(p, q, n16);
        memmove(p, p + 1, n10);
        if (strlen(q) != 5 || strnlen(q, n100) != 5 || strcmp(p, q) == 0 || strncmp(q, "hel", 3) ||
            memcmp(q, "hello", 5) || !memchr(q, 'o', n100) || strchr(q, 'z') || !strrchr(q, 'l'))
            return 3;
        free(p);
        free(q);
    }
    puts("survived");
    return 0;
}
