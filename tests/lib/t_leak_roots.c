/* SPDX-License-Identifier: MIT */
/* Leak-scan roots.  Every block here but one is reachable through exactly
 * one kind of root; only the 33-byte block is lost.  Sizes are distinct so
 * a wrong report names the root kind that was missed:
 *   11 a global          12 only inside the 11-byte block
 *   13 a blocked thread's stack   14 another thread's __thread variable
 *   15 main's __thread variable   16 a register of main's caller of exit
 *   17, 18 only in a dynamic TLS variable (module argv[2], dlopen'd) of
 *           main and of the blocked TLS thread (mode "roots" with argv[2])
 *   19 only in the shared file mapping (mode "shared-eof"), which is
 *           registered with __lsan_register_root_region: read without a
 *           fault although three of its four pages lie past the file's end
 *   33 lost
 * Modes: "roots" (the above), "shared-eof" (plus a writable MAP_SHARED
 * file mapping three pages longer than its 100-byte file), "reserve" (plus
 * a 64 GiB MAP_NORESERVE reservation with one page touched),
 * "reserve-clean" (the reservation, and the 33-byte block is not lost:
 * nothing to report, so the run time is the scan's, not the symbolizer's). */

// Roots: a global, inside a block, a blocked thread's stack, __thread of
// main and of a thread, r15, the dynamic TLS of a dlopen'ed module.
// TEST: leak roots: global, block, thread stack, __thread (main, thread), dlopen TLS, register
// RUN: %memdbg %t roots %T/mod_dtls.so
// EXIT: 1
// CHECK-OUT: done
// CHECK: ^Direct leak of 33 byte\(s\) in 1 object\(s\) allocated from:
// CHECK-STACK: ^Direct leak of 33 | malloc | lose_block | main
// CHECK: ^SUMMARY: memdbg: 33 byte\(s\) leaked in 1 allocation\(s\)\.$
//
// A writable MAP_SHARED mapping 3 pages past its file's end, even
// registered as a root: no SIGBUS.
// TEST: leak scan with a MAP_SHARED mapping longer than its file: no SIGBUS
// RUN: %memdbg %t shared-eof
// EXIT: 1
// CHECK-OUT: done
// CHECK-STACK: ^Direct leak of 33 | malloc | lose_block | main
// CHECK: ^SUMMARY: memdbg: 33 byte\(s\) leaked in 1 allocation\(s\)\.$

#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void *global_root;
static __thread void *tls_main;
static __thread void *tls_other;
static int ready_pipe[2], block_pipe[2];
static void (*dyn_tls_set)(size_t);
void __lsan_register_root_region(const void *p, size_t size) __attribute__((weak));

/* overwrite dead stack slots so no stale copy of a pointer survives */
__attribute__((noinline)) void scrub_stack(void) { volatile char junk[16384]; memset((char *)junk, 0, sizeof junk); }

__attribute__((noinline)) void lose_block(void) { char *p = malloc(33); memset(p, 7, 33); }

void *stack_thread(void *arg)
{
    (void)arg;
    void *volatile on_stack = malloc(13);
    char c = 1;
    write(ready_pipe[1], &c, 1);
    read(block_pipe[0], &c, 1);   /* blocks until the process exits */
    return on_stack;
}

void *tls_thread(void *arg)
{
    (void)arg;
    tls_other = malloc(14);
    if (dyn_tls_set) dyn_tls_set(18);
    char c = 1;
    write(ready_pipe[1], &c, 1);
    read(block_pipe[0], &c, 1);
    return 0;
}

/* malloc(16), keep the pointer only in r15 (callee-saved), clear rax and
 * the dead stack, then exit(0): the pointer lives in r15 or wherever a
 * callee on the way to memdbg's destructor saved it. */
void exit_with_pointer_in_r15(void);
__asm__(".text\n.globl exit_with_pointer_in_r15\n.type exit_with_pointer_in_r15,@function\n"
        "exit_with_pointer_in_r15:\n"
        "  push %rbp\n  mov %rsp, %rbp\n"
        "  mov $16, %edi\n  call malloc@PLT\n"
        "  mov %rax, %r15\n  xor %eax, %eax\n"
        "  call scrub_stack\n"
        "  xor %edi, %edi\n  call exit@PLT\n"
        "  ud2\n");

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "roots";
    if (!strcmp(mode, "shared-eof")) {
        const char *dir = getenv("TMPDIR");
        char buf[512];
        snprintf(buf, sizeof buf, "%s/memdbg-eof-XXXXXX", dir && *dir ? dir : "/tmp");
        int fd = mkstemp(buf);
        if (fd < 0) { perror("mkstemp"); return 2; }
        unlink(buf);
        if (ftruncate(fd, 100) != 0) { perror("ftruncate"); return 2; }
        char *m = mmap(0, 4 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) { perror("mmap"); return 2; }
        m[0] = 1;   /* page 0 exists; pages 1-3 lie past the end of the file */
        *(void **)(m + 64) = malloc(19);
        if (__lsan_register_root_region) __lsan_register_root_region(m, 4 * 4096);
    } else if (!strncmp(mode, "reserve", 7)) {
        char *m = mmap(0, (size_t)64 << 30, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) { perror("mmap 64G"); return 2; }
        m[12345] = 1;
    }
    if (argc > 2) {
        void *h = dlopen(argv[2], RTLD_NOW);
        dyn_tls_set = h ? (void (*)(size_t))dlsym(h, "dyn_tls_set") : 0;
        if (!dyn_tls_set) { printf("cannot load %s: %s\n", argv[2], dlerror()); return 2; }
        dyn_tls_set(17);
    }
    if (pipe(ready_pipe) || pipe(block_pipe)) return 2;
    global_root = malloc(11);
    *(void **)global_root = malloc(12);
    pthread_t t1, t2;
    char c;
    pthread_create(&t1, 0, stack_thread, 0);
    read(ready_pipe[0], &c, 1);
    pthread_create(&t2, 0, tls_thread, 0);
    read(ready_pipe[0], &c, 1);
    tls_main = malloc(15);
    if (!strstr(mode, "clean")) lose_block();
    puts("done");
    fflush(stdout);
    scrub_stack();
    exit_with_pointer_in_r15();
}
