/* SPDX-License-Identifier: MIT */
/* Blocks larger than a quarter of the arena: with arena_size=128M a
 * 40 MiB block is served, guarded at its end, freed, reallocated and
 * reported as a leak like any other; a block the arena cannot hold gets
 * a mapping of its own (t_direct_block.c), and a size no mapping can
 * have is NULL with ENOMEM, as glibc's when the kernel refuses it. */

// TEST: huge block: written at both ends, realloc keeps its bytes, free and reuse
// RUN: %memdbg -o arena_size=128M %t ends
// EXIT: 0
// CHECK-NOT: ERROR
// CHECK-OUT: ends ok usable=41943040
// CHECK-OUT: realloc up ok
// CHECK-OUT: realloc down ok
// CHECK-OUT: reuse ok 6
//
// TEST: huge block: a one-byte overflow is caught at the access
// RUN: %memdbg -o arena_size=128M %t overflow
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: WRITE of size 1 at
// CHECK: is located 0 bytes after 41943040-byte region
// CHECK-STACK: ^WRITE of size | poke | main
// CHECK-STACK: ^allocated by thread | malloc | main
// CHECK-OUT-NOT: not caught
//
// TEST: huge block: a use after free is caught at the access
// RUN: %memdbg -o arena_size=128M %t uaf
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
// CHECK: is located 41943039 bytes inside of 41943040-byte region
// CHECK-STACK: ^freed by thread | free | main
//
// TEST: huge block: the leak check lists it
// RUN: %memdbg -o arena_size=128M %t leak
// EXIT: 1
// CHECK: ^Direct leak of 41943040 byte\(s\) in 1 object\(s\) allocated from:
// CHECK-STACK: ^Direct leak of 41943040 | malloc | leak_one | main
//
// TEST: huge block: more than the arena holds is served apart; an impossible size is NULL with ENOMEM
// RUN: %memdbg -o arena_size=128M %t toolarge
// EXIT: 0
// CHECK-NOT: ERROR
// CHECK-OUT: ^200M: not NULL Success$
// CHECK-OUT: ^128M: not NULL Success$
// CHECK-OUT: ^SIZE_MAX/2: NULL ENOMEM$
// CHECK-OUT: ^calloc overflow: NULL ENOMEM$
// CHECK-OUT: ^realloc SIZE_MAX/2: NULL ENOMEM, old block kept$
// CHECK-OUT: ^realloc 200M: not NULL, bytes kept$
// CHECK-OUT: ^after: 40M ok$

#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB ((size_t)1 << 20)
#define BIG (40 * MIB)

__attribute__((noinline)) void poke(volatile char *p, size_t i) { p[i] = 1; }
__attribute__((noinline)) int peek(volatile char *p, size_t i) { return p[i]; }
__attribute__((noinline)) void *leak_one(void) { return malloc(BIG); }

static void say_null(const char *what, void *p)
{
    int e = errno;
    printf("%s: %s %s\n", what, p ? "not NULL" : "NULL", e == ENOMEM ? "ENOMEM" : strerror(e));
    free(p);
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    const char *what = argv[1];
    if (!strcmp(what, "ends")) {
        char *p = malloc(BIG);
        if (!p) { perror("malloc 40M"); return 3; }
        p[0] = 'a';
        p[BIG - 1] = 'z';
        printf("ends ok usable=%zu\n", malloc_usable_size(p));
        char *q = realloc(p, BIG + 8 * MIB);
        if (!q || q[0] != 'a' || q[BIG - 1] != 'z') { printf("realloc up failed\n"); return 3; }
        q[BIG + 8 * MIB - 1] = 'y';
        printf("realloc up ok\n");
        char *r = realloc(q, 20 * MIB);
        if (!r || r[0] != 'a') { printf("realloc down failed\n"); return 3; }
        r[20 * MIB - 1] = 'x';
        printf("realloc down ok\n");
        free(r);
        int n = 0;
        for (int i = 0; i < 6; i++) {   /* each one needs the last one's address space back */
            char *b = malloc(BIG + MIB);
            if (!b) break;
            b[BIG] = 1;
            free(b);
            n++;
        }
        printf("reuse ok %d\n", n);
        return 0;
    }
    if (!strcmp(what, "overflow")) {
        char *p = malloc(BIG);
        if (!p) { perror("malloc 40M"); return 3; }
        poke(p, BIG);
        printf("not caught\n");
        return 0;
    }
    if (!strcmp(what, "uaf")) {
        char *p = malloc(BIG);
        if (!p) { perror("malloc 40M"); return 3; }
        p[BIG - 1] = 1;
        free(p);
        return peek(p, BIG - 1);
    }
    if (!strcmp(what, "leak")) {
        void *volatile p = leak_one();
        if (!p) { perror("malloc 40M"); return 3; }
        memset(p, 0, 64);
        p = 0;
        return 0;
    }
    if (!strcmp(what, "toolarge")) {
        char *keep = malloc(BIG);
        errno = 0;
        say_null("200M", malloc(200 * MIB));
        errno = 0;
        say_null("128M", malloc(128 * MIB));
        errno = 0;
        say_null("SIZE_MAX/2", malloc(SIZE_MAX / 2));
        errno = 0;
        size_t n = SIZE_MAX / 8;
        say_null("calloc overflow", calloc(n, 16));
        errno = 0;
        char *r = realloc(keep, SIZE_MAX / 2);
        printf("realloc SIZE_MAX/2: %s %s%s\n", r ? "not NULL" : "NULL", errno == ENOMEM ? "ENOMEM" : strerror(errno),
               keep && !r && malloc_usable_size(keep) == BIG ? ", old block kept" : "");
        keep[0] = 'k';
        r = realloc(keep, 200 * MIB);
        printf("realloc 200M: %s\n", r && r[0] == 'k' ? "not NULL, bytes kept" : "failed");
        free(r);
        char *again = malloc(BIG);
        printf("after: 40M %s\n", again ? "ok" : "failed");
        free(again);
        return 0;
    }
    return 2;
}
