/* SPDX-License-Identifier: MIT */
/* Sampled mode's unsampled path makes no system call: after a warm-up
 * (start-up, the thread's first draw, the lookups done once), a seccomp
 * filter kills the process at any system call but glibc's brk and the
 * final write and exit, and the program then runs malloc, calloc, realloc,
 * free, malloc_usable_size, posix_memalign and the string functions
 * 20,000 times over.  With sample_rate=1000000000 about 1 run in 2,000
 * would still guard one of these 505,000 allocations, which rightly makes
 * system calls; sample_seed fixes the draws, and with seed 1 the main
 * thread's first gap is far longer than the test, so none is guarded and
 * all of them must stay in user space.  The filter is this
 * thread's only (no TSYNC): it asks what the calling thread does, which
 * is what an unsampled call costs the program.  The unsampled path is the
 * same on every backend; the guests' kernels, where nonlinear runs, are
 * built without seccomp filters, so the test runs on the host's. */

// TEST: sampled mode: unsampled malloc, free, realloc and string calls make no system call
// REQUIRES: backend!=nonlinear
// RUN: %memdbg -o sample_rate=1000000000:sample_seed=1 %t
// EXIT: 0
// CHECK-OUT: ^no system call in 20000 rounds$
// CHECK-NOT: ERROR: memdbg

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <malloc.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { ROUNDS = 20000, BLOCKS = 16 };

static volatile size_t sink;

static void one_round(int r)
{
    char *blocks[BLOCKS];
    for (int i = 0; i < BLOCKS; i++) {
        size_t size = 16 + (size_t)((r + i * 37) % 500);
        blocks[i] = i % 3 == 0 ? calloc(1, size) : malloc(size);
        memset(blocks[i], 'a' + i % 26, size - 1);
        blocks[i][size - 1] = 0;
        sink += strlen(blocks[i]) + malloc_usable_size(blocks[i]);
    }
    for (int i = 0; i + 1 < BLOCKS; i += 2) {
        char *grown = realloc(blocks[i], strlen(blocks[i]) + 40);
        strcpy(grown + strlen(grown), "-tail");
        sink += (size_t)strcmp(grown, blocks[i + 1]);
        memcpy(blocks[i + 1], grown, 8);
        blocks[i] = grown;
    }
    void *aligned = 0;
    if (posix_memalign(&aligned, 64, 200) == 0) free(aligned);
    for (int i = 0; i < BLOCKS; i++) free(blocks[i]);
}

static int forbid_system_calls(void)
{
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_brk, 3, 0),   /* glibc's heap may grow */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_write, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit_group, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { .len = sizeof filter / sizeof filter[0], .filter = filter };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

int main(void)
{
    for (int r = 0; r < 200; r++) one_round(r);   /* warm-up: glibc's heap reaches its size */
    setvbuf(stdout, 0, _IONBF, 0);                  /* the line below is one write */
    if (forbid_system_calls() != 0) {
        perror("seccomp");
        return 2;
    }
    for (int r = 0; r < ROUNDS; r++) one_round(r);
    printf("no system call in %d rounds\n", ROUNDS);
    _exit(0);   /* memdbg's exit work makes system calls: not this test's matter */
}
