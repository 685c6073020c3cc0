/* SPDX-License-Identifier: MIT */
/* Start-up under an address-space limit (RLIMIT_AS, `ulimit -v`): the
 * program sets the limit and executes itself, so memdbg starts under it.
 * Without arena_size memdbg sizes its arena from the limit; when nothing
 * fits, or the user's arena_size does not, the message names the limit
 * and what fits. */

// TEST: ulimit -v 4000000: memdbg sizes its arena from the limit and runs
// RUN: %memdbg %t 4000000 work
// EXIT: 0
// CHECK-NOT: cannot
// CHECK-OUT: allocated 200 MiB in 200 blocks
//
// TEST: ulimit -v 2000000: errors are still caught
// RUN: %memdbg %t 2000000 overflow
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: is located 0 bytes after 100-byte region
//
// TEST: ulimit -v 4000000: one block of more than a quarter of the arena, as glibc serves it
// RUN: %memdbg %t 4000000 huge
// EXIT: 0
// CHECK-NOT: ERROR
// CHECK-OUT: 1536 MiB block written at both ends
//
// TEST: ulimit -v 1048576 (1 GiB): a 300 MiB block, as glibc serves it
// RUN: %memdbg %t 1048576 big300
// EXIT: 0
// CHECK-NOT: ERROR
// CHECK-OUT: 300 MiB block written at both ends
//
// TEST: ulimit -v 524288 (512 MiB): memdbg starts and serves blocks
// RUN: %memdbg %t 524288 small
// EXIT: 0
// CHECK-NOT: cannot
// CHECK-OUT: ^allocated 1000 small blocks$
//
// TEST: ulimit -v 150000: too small, and the message names a limit that works
// RUN: %memdbg %t 150000 work
// EXIT: 1
// CHECK: memdbg: cannot start \(the address-space limit, ulimit -v, leaves [0-9]+ MiB; memdbg and the program need [0-9]+ MiB: raise it to ulimit -v [0-9]+ or more\)
// CHECK-OUT-NOT: allocated
//
// TEST: an arena_size that does not fit the limit: the hint names one that does
// RUN: %memdbg -o arena_size=8G %t 4000000 work
// EXIT: 1
// CHECK: memdbg: cannot reserve .*\(the address-space limit, ulimit -v, leaves [0-9]+ MiB; MEMDBG_OPTIONS=arena_size=[0-9]+M fits, or leave arena_size unset
// CHECK-OUT-NOT: allocated

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

int poke(char *p, size_t i) { return p[i] = 1; }

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    if (strcmp(argv[1], "run") != 0) {
        struct rlimit rl = { .rlim_cur = strtoull(argv[1], 0, 10) * 1024, .rlim_max = RLIM_INFINITY };
        rl.rlim_max = rl.rlim_cur;
        if (setrlimit(RLIMIT_AS, &rl) != 0) { perror("setrlimit"); return 2; }
        char *args[] = { argv[0], "run", argv[2], 0 };
        execv("/proc/self/exe", args);
        perror("execv");
        return 2;
    }
    if (!strcmp(argv[2], "overflow")) {
        char *p = malloc(100);
        poke(p, 100);
        return 0;
    }
    if (!strcmp(argv[2], "big300")) {
        size_t n = (size_t)300 << 20;
        char *p = malloc(n);
        if (!p) { perror("malloc 300 MiB"); return 3; }
        p[0] = p[n - 1] = 1;
        printf("300 MiB block written at both ends\n");
        free(p);
        return 0;
    }
    if (!strcmp(argv[2], "small")) {
        for (int i = 0; i < 1000; i++) {
            char *p = malloc(16 + i);
            if (!p) { printf("malloc %d failed\n", i); return 3; }
            p[15 + i] = 1;
            free(p);
        }
        printf("allocated 1000 small blocks\n");
        return 0;
    }
    if (!strcmp(argv[2], "huge")) {   /* the arena is about 2.6 GiB here */
        size_t n = (size_t)1536 << 20;
        char *p = malloc(n);
        if (!p) { perror("malloc 1536 MiB"); return 3; }
        p[0] = p[n - 1] = 1;
        printf("1536 MiB block written at both ends\n");
        free(p);
        return 0;
    }
    char *blocks[200];
    for (int i = 0; i < 200; i++) {
        blocks[i] = malloc(1 << 20);
        if (!blocks[i]) { printf("malloc %d failed\n", i); return 3; }
        memset(blocks[i], i, 1 << 20);
    }
    printf("allocated 200 MiB in 200 blocks\n");
    for (int i = 0; i < 200; i++) free(blocks[i]);
    return 0;
}
