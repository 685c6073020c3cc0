/* SPDX-License-Identifier: MIT */
/* A program that owns its descriptors: it closes every descriptor >= 3 at
 * start (closefrom(3), as daemons and test harnesses do), then takes
 * descriptor numbers for its own files, so any number memdbg held is the
 * program's now.  memdbg must never write to, punch, copy or close them.
 *   files: a 1 MiB file of known bytes opened 1,000 times (fds 3..1002),
 *          then malloc/free churn and a fork whose child allocates too;
 *          the file must be unchanged, byte for byte, under every fd.
 *   dup2:  the same file dup2'd onto every number from 3 to 1023 (over
 *          whatever was there, without closing first), then the same.
 *   fork:  after closefrom, the child of a fork reads the heap data the
 *          parent wrote before it, its writes do not reach the parent, and
 *          the parent's later writes do not reach it. */

// The program owns its fds: it closes every fd >= 3 and takes the numbers
// for its own files; memdbg must not touch them.  The file tests run with
// stacks off (malloc_context_size=0) and on (libunwind's memory-validation
// pipe, unwind_fds.c).
// TEST: closefrom(3), 1,000 files: the program's file unchanged byte for byte
// RUN: %memdbg -o malloc_context_size=0 %t files
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^ok 1000 fds$
//
// TEST: program dup2's its file over fds 3..1023 (or RLIMIT_NOFILE-3): unchanged byte for byte
// RUN: %memdbg -o malloc_context_size=0 %t dup2
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^ok [0-9]+ fds$
//
// TEST: the same with malloc/free stacks (libunwind's pipe kept out of the program's way)
// RUN: %memdbg %t files
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^ok 1000 fds$
// RUN: %memdbg %t dup2
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^ok [0-9]+ fds$
//
// closefrom(3), then fork: the child reads the parent's heap; writes stay apart.
// TEST: closefrom(3) then fork: child reads the parent's heap, writes stay apart
// RUN: %memdbg %t fork
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^ok$
//
// TEST: dup2 over every fd behind another preload's read/close/pipe2 wrappers: file unchanged (3 runs)
// RUN: LD_PRELOAD=%T/mod_wrapio.so:%lib MEMDBG_OPTIONS=backend=%backend %t dup2
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^ok [0-9]+ fds$
// RUN: LD_PRELOAD=%T/mod_wrapio.so:%lib MEMDBG_OPTIONS=backend=%backend %t dup2
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^ok [0-9]+ fds$
// RUN: LD_PRELOAD=%T/mod_wrapio.so:%lib MEMDBG_OPTIONS=backend=%backend %t dup2
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^ok [0-9]+ fds$

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define FILE_BYTES (1 << 20)
#define NBLOCKS 2000

static unsigned char expect(size_t i) { return (unsigned char)(i * 7 + (i >> 12)); }

static void close_from_3(void)
{
    if (syscall(SYS_close_range, 3u, ~0u, 0u) != 0)
        for (int fd = 3; fd < 65536; fd++) close(fd);
}

static int make_file(char *path, size_t cap)
{
    const char *dir = getenv("TMPDIR");
    snprintf(path, cap, "%s/memdbg-fd-hygiene.%d", dir && *dir ? dir : "/tmp", (int)getpid());
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) { perror("open"); exit(2); }
    static unsigned char buf[FILE_BYTES];
    for (size_t i = 0; i < FILE_BYTES; i++) buf[i] = expect(i);
    if (write(fd, buf, FILE_BYTES) != FILE_BYTES) { perror("write"); exit(2); }
    return fd;
}

static int check_file(int fd)
{
    static unsigned char buf[FILE_BYTES];
    struct stat st;
    if (fstat(fd, &st) != 0) { printf("fd %d: fstat: %s\n", fd, strerror(errno)); return 1; }
    if (st.st_size != FILE_BYTES) { printf("fd %d: size %lld\n", fd, (long long)st.st_size); return 1; }
    if (pread(fd, buf, FILE_BYTES, 0) != FILE_BYTES) { printf("fd %d: short read\n", fd); return 1; }
    for (size_t i = 0; i < FILE_BYTES; i++)
        if (buf[i] != expect(i)) { printf("fd %d: byte %zu is %u, expected %u\n", fd, i, buf[i], expect(i)); return 1; }
    return 0;
}

/* malloc/free of many blocks of many sizes, each written and checked. */
static int churn(unsigned seed)
{
    static char *live[512];
    static size_t len[512];
    for (int i = 0; i < 20000; i++) {
        seed = seed * 1103515245u + 12345u;
        int k = (int)((seed >> 8) % 512);
        if (live[k]) {
            for (size_t j = 0; j < len[k]; j += 97) if (live[k][j] != (char)(k + len[k])) return 1;
            free(live[k]);
        }
        len[k] = 1 + (seed >> 12) % (i % 50 ? 600 : 20000);
        live[k] = malloc(len[k]);
        if (!live[k]) return 1;
        memset(live[k], (char)(k + len[k]), len[k]);
    }
    for (int k = 0; k < 512; k++) { free(live[k]); live[k] = 0; }
    return 0;
}

static int child_churn(const char *early)
{
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); return 1; }
    if (pid == 0) _exit(strcmp(early, "early") ? 20 : churn(7) ? 21 : 0);
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        printf("child failed: status 0x%x\n", st);
        return 1;
    }
    return 0;
}

static int files(bool use_dup2)
{
    char path[512];
    close_from_3();
    char *early = malloc(100);   /* memdbg is set up before the files exist */
    strcpy(early, "early");
    int first = make_file(path, sizeof path);
    int last = first;
    if (use_dup2) {
        /* up to 1023, leaving three numbers free under a low RLIMIT_NOFILE:
         * a nonlinear fork needs one for a moment, and libunwind, whose
         * pipe this loop may dup2 over, makes a new one when it next
         * checks memory, which takes two (docs/libmemdbg.md) */
        struct rlimit rl;
        last = 1023;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 1027)
            last = (int)rl.rlim_cur - 4;
        for (int fd = 3; fd <= last; fd++)
            if (fd != first && dup2(first, fd) != fd) { perror("dup2"); return 2; }
    } else {
        for (int i = 1; i < 1000; i++) {
            last = open(path, O_RDWR);
            if (last < 0) { perror("open"); return 2; }
        }
    }
    if (churn(1) || child_churn(early) || churn(2)) { puts("heap data wrong"); return 3; }
    if (strcmp(early, "early") != 0) { puts("early block changed"); return 3; }
    free(early);
    int bad = 0;
    for (int fd = 3; fd <= last; fd++) {
        if (fd != first && !use_dup2) continue;
        bad |= check_file(fd);
        if (bad) break;
    }
    if (!use_dup2) bad |= check_file(last);
    unlink(path);
    if (bad) return 4;
    printf("ok %d fds\n", use_dup2 ? last - 2 : 1000);
    return 0;
}

static int fork_reads(void)
{
    close_from_3();
    char *blk[NBLOCKS];
    for (int i = 0; i < NBLOCKS; i++) {
        size_t n = 16 + (size_t)i * 13 % 9000;
        blk[i] = malloc(n);
        memset(blk[i], 'a' + i % 26, n);
        blk[i][n - 1] = 0;
    }
    int to_child[2], to_parent[2];
    if (pipe(to_child) || pipe(to_parent)) return 2;
    pid_t pid = fork();
    if (pid < 0) return 2;
    char c;
    if (pid == 0) {
        for (int i = 0; i < NBLOCKS; i++) {
            size_t n = 16 + (size_t)i * 13 % 9000;
            for (size_t j = 0; j + 1 < n; j++) if (blk[i][j] != 'a' + i % 26) _exit(11);
        }
        memset(blk[0], 'C', 8);                     /* must not reach the parent */
        char *mine = malloc(50000); memset(mine, 1, 50000); free(mine);
        if (write(to_parent[1], "w", 1) != 1) _exit(12);
        if (read(to_child[0], &c, 1) != 1) _exit(13);   /* parent wrote blk[1] meanwhile */
        if (blk[1][0] != 'a' + 1) _exit(14);
        for (int i = 2; i < NBLOCKS; i++) free(blk[i]);
        _exit(0);
    }
    close(to_parent[1]);   /* so a dead child ends the read */
    close(to_child[0]);
    if (read(to_parent[0], &c, 1) != 1) { puts("child died before it had read the heap"); return 5; }
    memset(blk[1], 'P', 8);
    if (write(to_child[1], "p", 1) != 1) return 5;
    int st;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) { printf("child failed: status 0x%x\n", st); return 6; }
    if (blk[0][0] != 'a') { puts("child write reached the parent"); return 7; }
    for (int i = 2; i < NBLOCKS; i++) {
        size_t n = 16 + (size_t)i * 13 % 9000;
        for (size_t j = 0; j + 1 < n; j++) if (blk[i][j] != 'a' + i % 26) { puts("parent data changed"); return 8; }
        free(blk[i]);
    }
    free(blk[0]);
    free(blk[1]);
    puts("ok");
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "files";
    if (!strcmp(mode, "files")) return files(false);
    if (!strcmp(mode, "dup2")) return files(true);
    if (!strcmp(mode, "fork")) return fork_reads();
    return 2;
}
