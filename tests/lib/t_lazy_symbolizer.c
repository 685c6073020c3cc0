/* SPDX-License-Identifier: MIT */
/* The symbolizer (elfutils, in libmemdbg-sym.so) is loaded at the first
 * report that names frames, not at start-up: a process that never reports
 * does not map it.  A report in a threaded process, whose heap lock is
 * held by the reporting thread, does not load it (the loader's lock could
 * deadlock against the heap lock); then the frames are module+offset and
 * the report says why, and the next report loads it. */

// TEST: lazy symbolizer: a process without a report never maps elfutils
// RUN: %memdbg %t clean
// EXIT: 0
// CHECK-OUT: ^symbolizer not mapped$
// CHECK-NOT: ERROR
//
// TEST: a C program under memdbg maps no libstdc++ (operator new binds to it weakly)
// RUN: %memdbg %t clean
// EXIT: 0
// CHECK-OUT: ^libstdc\+\+ not mapped$
//
// TEST: lazy symbolizer: the first report loads it and names the frames
// RUN: %memdbg -o halt_on_error=0 %t double-free
// EXIT: 1
// CHECK-ERROR: double-free
// CHECK-STACK: ^free of 0x | free | free_twice | main
// CHECK-STACK: ^freed by thread T0 here: | free | free_twice | main
// CHECK-NOT: frames without symbols
// CHECK-OUT: ^symbolizer mapped$
//
// TEST: lazy symbolizer: symbolize=0 never loads it
// RUN: %memdbg -o halt_on_error=0:symbolize=0 %t double-free
// EXIT: 1
// CHECK-ERROR: double-free
// CHECK: ^    #1 0x[0-9a-f]+  \(.*/t_lazy_symbolizer\+0x[0-9a-f]+\)$
// CHECK-NOT: frames without symbols
// CHECK-OUT: ^symbolizer not mapped$
//
// TEST: lazy symbolizer: a double free in a threaded process loads it before the heap lock
// RUN: %memdbg -o halt_on_error=0 %t thread-double-free
// EXIT: 1
// CHECK-ERROR: double-free
// CHECK-STACK: ^free of 0x | free | free_twice | threaded
// CHECK-NOT: frames without symbols
// CHECK-OUT: ^symbolizer mapped$
//
// TEST: lazy symbolizer: a report under the heap lock of a threaded process is module+offset, says why
// RUN: %memdbg -o halt_on_error=0 %t thread-padding
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: ^    #1 0x[0-9a-f]+  \(.*/t_lazy_symbolizer\+0x[0-9a-f]+\)$
// CHECK-COUNT: 1 ^    \(frames without symbols: the report came while memdbg's heap lock was held
// CHECK-ERROR: heap-buffer-overflow
// CHECK: ^    #0 0x[0-9a-f]+ in write_freed .*t_lazy_symbolizer.c:[0-9]+$
// CHECK: ^    #1 0x[0-9a-f]+ in threaded .*t_lazy_symbolizer.c:[0-9]+$
// CHECK-OUT: ^symbolizer mapped$
//
// TEST: lazy symbolizer: a leak report in a threaded process gives the heap lock up to load it
// RUN: %memdbg %t thread-leak
// EXIT: 1
// CHECK-STACK: ^Direct leak of 24 byte | malloc | leak_one | main
// CHECK-NOT: frames without symbols
// CHECK-COUNT: 1 ^SUMMARY: memdbg: 24 byte\(s\) leaked in 1 allocation
// CHECK-OUT: ^symbolizer not mapped$

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int mapped(const char *a, const char *b)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    int found = 0;
    while (f && fgets(line, sizeof line, f))
        if (strstr(line, a) || strstr(line, b)) found = 1;
    if (f) fclose(f);
    return found;
}

static void free_twice(char *p)
{
    free(p);
    free(p);
}

static void write_freed(volatile char *p)
{
    p[0] = 1;
}

static int wake[2];

static void *waiter(void *arg)
{
    char c;
    (void)arg;
    while (read(wake[0], &c, 1) < 0) { }
    return 0;
}

static void threaded(const char *what)
{
    pthread_t t;
    if (pipe(wake) != 0 || pthread_create(&t, 0, waiter, 0) != 0) exit(2);
    if (strcmp(what, "thread-double-free") == 0) {
        free_twice(malloc(32));
    } else {
        /* 13 bytes: the 3 after them up to the 16-byte boundary are
         * padding, checked when the block is freed, under the heap lock */
        char *p = malloc(13);
        for (volatile char *q = p; q < p + 14; q++) *q = 'x';   /* past memset's own check */
        free(p);
        write_freed(p);
    }
    if (write(wake[1], "", 1) != 1) exit(2);
    pthread_join(t, 0);
}

static void *leaked;

static __attribute__((noinline)) void leak_one(void)
{
    leaked = malloc(24);
    leaked = 0;
}

static void *sleeper(void *arg)
{
    (void)arg;
    for (;;) pause();
    return 0;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "clean";
    if (strcmp(what, "clean") == 0) {
        for (int i = 0; i < 100; i++) free(malloc((size_t)i + 1));
    } else if (strcmp(what, "thread-leak") == 0) {
        /* a thread still alive at exit, when the leak check runs */
        pthread_t t;
        if (pthread_create(&t, 0, sleeper, 0) != 0) return 2;
        leak_one();
    } else if (strcmp(what, "double-free") == 0) {
        free_twice(malloc(32));
    } else {
        threaded(what);
    }
    printf("symbolizer %s\n", mapped("libdw", "libmemdbg-sym") ? "mapped" : "not mapped");
    if (strcmp(what, "clean") == 0) printf("libstdc++ %s\n", mapped("libstdc++", "libstdc++") ? "mapped" : "not mapped");
    return 0;
}
