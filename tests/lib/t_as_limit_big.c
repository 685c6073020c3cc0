/* SPDX-License-Identifier: MIT */
/* Blocks larger than the arena leaves room for under an address-space
 * limit: under ulimit -v 524288 (512 MiB) the arena takes about 240 MiB
 * of the limit, so a 300 MiB block fits neither in it nor in what is left,
 * where glibc serves it; memdbg gives the arena's unused end back and maps
 * the block apart.  The program sets the limit and executes itself, so
 * memdbg starts under it.  Modes: ends, calls, again, grow, growover,
 * uaf, overflow, leak, threads. */

// TEST: ulimit -v 512 MiB: a 300 MiB block is served, sized, realloc'd
// RUN: %memdbg %t 524288 ends
// EXIT: 0
// CHECK-NOT: ERROR
// CHECK-OUT: ^300 MiB written at both ends, usable 314572800$
// CHECK-OUT: ^realloc to 1000 bytes keeps the bytes$
// CHECK-OUT: ^realloc of 100 bytes to 300 MiB keeps the bytes$
// CHECK-OUT: ^600 MiB: NULL ENOMEM$
//
// TEST: ulimit -v 512 MiB: calloc, memalign, posix_memalign, aligned_alloc of 300 MiB
// RUN: %memdbg %t 524288 calls
// EXIT: 0
// CHECK-NOT: ERROR
// CHECK-OUT: ^calloc: zero at both ends$
// CHECK-OUT: ^memalign 4096: aligned, written$
// CHECK-OUT: ^posix_memalign 65536: aligned, written$
// CHECK-OUT: ^aligned_alloc 2097152: aligned, written$
// CHECK-OUT: ^SIZE_MAX/2: NULL ENOMEM$
//
// TEST: ulimit -v 512 MiB: 300 MiB freed and taken again, then small blocks fill the arena
// RUN: %memdbg %t 524288 again
// EXIT: 0
// CHECK-NOT: ERROR
// CHECK-OUT: ^5 blocks of 300 MiB in turn$
// CHECK-OUT: ^2400 blocks of 64 KiB$
//
// TEST: ulimit -v 512 MiB: realloc grows a 250 MiB block to 300 MiB, where a copy does not fit
// RUN: %memdbg %t 524288 grow
// EXIT: 0
// CHECK-NOT: ERROR
// CHECK-OUT: ^realloc 250 -> 300 MiB keeps the bytes, usable 314572800$
// CHECK-OUT: ^realloc 300 -> 350 MiB keeps the bytes$
//
// TEST: ulimit -v 512 MiB: an overflow of a block realloc grew is caught at the access
// RUN: %memdbg %t 524288 growover
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: is located 0 bytes after 314572800-byte region
// CHECK-STACK: ^WRITE of size | poke | main
// CHECK-STACK: ^allocated by thread | realloc | main
//
// TEST: ulimit -v 512 MiB: a one-byte overflow of a 300 MiB block is caught at the access
// RUN: %memdbg %t 524288 overflow
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: ^WRITE of size 1 at
// CHECK: is located 0 bytes after 314572800-byte region
// CHECK-STACK: ^WRITE of size | poke | main
// CHECK-STACK: ^allocated by thread | malloc | main
// CHECK-OUT-NOT: not caught
//
// TEST: ulimit -v 512 MiB: a read of a freed 300 MiB block, whose range was unmapped, names the block
// RUN: %memdbg %t 524288 uaf
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
// CHECK: ^READ of size 1 at
// CHECK: is located 5 bytes inside of 314572800-byte region
// CHECK-STACK: ^READ of size | peek | main
// CHECK-STACK: ^freed by thread | free | main
// CHECK-OUT-NOT: not caught
//
// TEST: ulimit -v 512 MiB: the leak check lists a lost 300 MiB block
// RUN: %memdbg %t 524288 leak
// EXIT: 1
// CHECK: ^Direct leak of 314572800 byte\(s\) in 1 object\(s\) allocated from:
// CHECK-STACK: ^Direct leak of 314572800 | malloc | lose_block | main
//
// TEST: ulimit -v 512 MiB: threads map and free blocks apart while another forks
// RUN: %memdbg -o arena_size=16M %t 524288 threads
// EXIT: 0
// CHECK-NOT: ERROR
// CHECK-OUT: ^3 threads x 30 blocks, 12 children exited 0$

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIB ((size_t)1 << 20)
#define BIG (300 * MIB)

__attribute__((noinline)) int poke(char *p, size_t i) { return p[i] = 1; }
__attribute__((noinline)) int peek(const volatile char *p, size_t i) { return p[i]; }

__attribute__((noinline)) void lose_block(void)
{
    char *volatile p = malloc(BIG);
    if (p) p[BIG - 1] = 1;
    p = NULL;
}

static int ends(void)
{
    char *p = malloc(BIG);
    if (!p) { printf("malloc 300 MiB: %s\n", strerror(errno)); return 3; }
    p[0] = 'a';
    p[BIG - 1] = 'z';
    printf("300 MiB written at both ends, usable %zu\n", malloc_usable_size(p));
    p = realloc(p, 1000);
    if (p && p[0] == 'a') printf("realloc to 1000 bytes keeps the bytes\n");
    free(p);
    char *s = malloc(100);
    memset(s, 's', 100);
    s = realloc(s, BIG);
    if (s && s[0] == 's' && s[99] == 's') {
        s[BIG - 1] = 'e';
        printf("realloc of 100 bytes to 300 MiB keeps the bytes\n");
    }
    free(s);
    errno = 0;
    volatile size_t too_much = 600 * MIB;
    void *none = malloc(too_much);
    printf("600 MiB: %s %s\n", none ? "not NULL" : "NULL", errno == ENOMEM ? "ENOMEM" : strerror(errno));
    free(none);
    return 0;
}

static void aligned_check(const char *what, char *p, size_t align)
{
    if (!p) { printf("%s %zu: %s\n", what, align, strerror(errno)); return; }
    bool ok = ((uintptr_t)p & (align - 1)) == 0;
    p[0] = 1;
    p[BIG - 1] = 1;
    printf("%s %zu: %s, written\n", what, align, ok ? "aligned" : "NOT aligned");
    free(p);
}

static int calls(void)
{
    char *z = calloc(BIG / 4096, 4096);
    printf("calloc: %s\n", z && !z[0] && !z[BIG - 1] ? "zero at both ends" : "failed");
    free(z);
    aligned_check("memalign", memalign(4096, BIG), 4096);
    void *pm = 0;
    errno = posix_memalign(&pm, 65536, BIG);
    aligned_check("posix_memalign", pm, 65536);
    aligned_check("aligned_alloc", aligned_alloc(2 * MIB, BIG), 2 * MIB);
    errno = 0;
    volatile size_t huge = SIZE_MAX / 2;
    void *none = malloc(huge);
    printf("SIZE_MAX/2: %s %s\n", none ? "not NULL" : "NULL", errno == ENOMEM ? "ENOMEM" : strerror(errno));
    return 0;
}

/* realloc of a 250 MiB block (more than the arena, a mapping of its own)
 * to 300 MiB: old and new do not fit at once (glibc moves its mapping
 * instead of copying); every page's first byte is checked. */
static char *grown(void)
{
    size_t n = 250 * MIB;
    char *p = malloc(n);
    if (!p) { printf("malloc 250 MiB: %s\n", strerror(errno)); return 0; }
    for (size_t i = 0; i < n; i += 4096) p[i] = (char)(i >> 12);
    p[n - 1] = 'z';
    char *q = realloc(p, BIG);
    if (!q) { printf("realloc 250 -> 300 MiB: %s\n", strerror(errno)); free(p); return 0; }
    for (size_t i = 0; i < n; i += 4096)
        if (q[i] != (char)(i >> 12)) { printf("byte %zu changed\n", i); return 0; }
    if (q[n - 1] != 'z') { printf("last byte changed\n"); return 0; }
    q[BIG - 1] = 'e';
    return q;
}

static int grow(void)
{
    char *q = grown();
    if (!q) return 3;
    printf("realloc 250 -> 300 MiB keeps the bytes, usable %zu\n", malloc_usable_size(q));
    char *r = realloc(q, 350 * MIB);
    if (!r) { printf("realloc 300 -> 350 MiB: %s\n", strerror(errno)); return 3; }
    if (r[0] == 0 && r[BIG - 1] == 'e') {
        r[350 * MIB - 1] = 1;
        printf("realloc 300 -> 350 MiB keeps the bytes\n");
    }
    free(r);
    return 0;
}

/* Each 300 MiB block needs the address space of the one before: nothing
 * of it may stay mapped.  Then small blocks take more than the arena
 * kept while a 300 MiB block was live. */
static int again(void)
{
    int n = 0;
    for (int i = 0; i < 5; i++) {
        char *p = malloc(BIG);
        if (!p) { printf("block %d: %s\n", i, strerror(errno)); break; }
        p[0] = p[BIG - 1] = (char)i;
        free(p);
        n++;
    }
    printf("%d blocks of 300 MiB in turn\n", n);
    static char *small[2400];
    int k = 0;
    for (; k < 2400; k++) {
        small[k] = malloc(64 << 10);
        if (!small[k]) { printf("64 KiB block %d: %s\n", k, strerror(errno)); break; }
        small[k][0] = small[k][(64 << 10) - 1] = 1;
    }
    printf("%d blocks of 64 KiB\n", k);
    for (int i = 0; i < k; i++) free(small[i]);
    return 0;
}

/* Threads map and free blocks of their own mapping (arena_size=16M)
 * while another thread forks; each child checks a block made before the
 * fork, takes and frees one of its own, and exits 0. */
#define BLK (24 * MIB)
static char *kept;

static void *churn(void *arg)
{
    uintptr_t t = (uintptr_t)arg;
    for (int i = 0; i < 30; i++) {
        size_t n = BLK + t * 4096 + (size_t)i;
        unsigned char *p = malloc(n);
        if (!p) { printf("thread %lu block %d: %s\n", (unsigned long)t, i, strerror(errno)); return (void *)1; }
        p[0] = p[n / 2] = p[n - 1] = (unsigned char)(t * 31 + i);
        if (p[0] != p[n - 1] || p[n / 2] != p[0]) return (void *)1;
        free(p);
    }
    return 0;
}

static int child_check(void)
{
    for (size_t i = 0; i < BLK; i += 4096)
        if (kept[i] != (char)(i >> 12)) return 1;
    if (kept[BLK - 1] != 'k') return 1;
    char *mine = malloc(BLK);
    if (!mine) return 2;
    mine[BLK - 1] = 1;
    free(mine);
    return 0;
}

static int threads(void)
{
    kept = malloc(BLK);
    if (!kept) { printf("malloc: %s\n", strerror(errno)); return 3; }
    for (size_t i = 0; i < BLK; i += 4096) kept[i] = (char)(i >> 12);
    kept[BLK - 1] = 'k';
    pthread_t th[3];
    for (uintptr_t t = 0; t < 3; t++) pthread_create(&th[t], 0, churn, (void *)t);
    int ok_children = 0;
    for (int i = 0; i < 12; i++) {
        pid_t pid = fork();
        if (pid == 0) _exit(child_check());
        int st = -1;
        if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0) ok_children++;
        else printf("child %d: status %#x\n", i, st);
    }
    int bad = 0;
    for (int t = 0; t < 3; t++) {
        void *r;
        pthread_join(th[t], &r);
        bad |= r != 0;
    }
    free(kept);
    if (bad) return 3;
    printf("3 threads x 30 blocks, %d children exited 0\n", ok_children);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    if (strcmp(argv[1], "run") != 0) {
        struct rlimit rl;
        rl.rlim_cur = rl.rlim_max = strtoull(argv[1], 0, 10) * 1024;
        if (setrlimit(RLIMIT_AS, &rl) != 0) { perror("setrlimit"); return 2; }
        char *args[] = { argv[0], "run", argv[2], 0 };
        execv("/proc/self/exe", args);
        perror("execv");
        return 2;
    }
    const char *mode = argv[2];
    if (!strcmp(mode, "ends")) return ends();
    if (!strcmp(mode, "calls")) return calls();
    if (!strcmp(mode, "again")) return again();
    if (!strcmp(mode, "threads")) return threads();
    if (!strcmp(mode, "grow")) return grow();
    if (!strcmp(mode, "growover")) {
        char *q = grown();
        if (!q) return 3;
        poke(q, BIG);
        printf("not caught\n");
        return 0;
    }
    if (!strcmp(mode, "leak")) {
        lose_block();
        return 0;
    }
    if (!strcmp(mode, "uaf")) {
        char *p = malloc(BIG);
        if (!p) { printf("malloc 300 MiB: %s\n", strerror(errno)); return 3; }
        p[5] = 1;
        free(p);
        int v = peek(p, 5);
        printf("not caught (%d)\n", v);
        return 0;
    }
    if (!strcmp(mode, "overflow")) {
        char *p = malloc(BIG);
        if (!p) { printf("malloc 300 MiB: %s\n", strerror(errno)); return 3; }
        poke(p, BIG);
        printf("not caught\n");
        return 0;
    }
    return 2;
}
