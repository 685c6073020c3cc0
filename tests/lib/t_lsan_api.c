/* SPDX-License-Identifier: MIT */
/* The LeakSanitizer interface, declared here as a program built for LSan
 * declares it (weak: the program also runs without a leak checker).
 * Modes:
 *   ignore    __lsan_ignore_object on a lost 64-byte block that points to a
 *             65-byte one: neither reported; a lost 66-byte block is
 *   disable   71 bytes lost between __lsan_disable/__lsan_enable (nested
 *             twice) are not reported, 72 bytes lost after are
 *   check     __lsan_do_recoverable_leak_check: 0 with no leak, 1 after a
 *             lost 81-byte block (reported), the program goes on;
 *             __lsan_do_leak_check then ends it with exitcode
 *   register  a 16-byte block held only in r15 across __lsan_do_leak_check
 *   enable    an unmatched __lsan_enable warns
 *   elf       a block allocated inside libelf (dlopen'd) is lost: for
 *             suppressions by module name */

// TEST: __lsan_ignore_object
// RUN: %memdbg %t ignore
// EXIT: 1
// CHECK-OUT: done
// CHECK-STACK: ^Direct leak of 66 byte | malloc | lose | main
// CHECK: ^SUMMARY: memdbg: 66 byte\(s\) leaked in 1 allocation\(s\)\.$
//
// TEST: __lsan_disable / __lsan_enable
// RUN: %memdbg %t disable
// EXIT: 1
// CHECK-OUT: done
// CHECK-STACK: ^Direct leak of 72 byte | malloc | lose | main
// CHECK: ^SUMMARY: memdbg: 72 byte\(s\) leaked in 1 allocation\(s\)\.$
// RUN: %memdbg %t enable
// EXIT: 0
// CHECK-OUT: done
// CHECK: ^==[0-9]+==WARNING: memdbg: unmatched call to __lsan_enable
//
// The recoverable check twice, then the final one ends the program.
// TEST: __lsan_do_recoverable_leak_check, __lsan_do_leak_check
// RUN: %memdbg %t check
// EXIT: 1
// CHECK-OUT: ^first 0$
// CHECK-OUT: ^second 1$
// CHECK-OUT-NOT: survived
// CHECK-COUNT: 2 ^SUMMARY: memdbg: 81 byte\(s\) leaked in 1 allocation\(s\)\.$
//
// A pointer held only in a callee-saved register during the check.
// TEST: __lsan_do_leak_check sees a pointer held in a register
// RUN: %memdbg %t register
// EXIT: 0
// CHECK-OUT: ^checked$
// CHECK-NOT: ERROR

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void __lsan_ignore_object(const void *p) __attribute__((weak));
void __lsan_disable(void) __attribute__((weak));
void __lsan_enable(void) __attribute__((weak));
void __lsan_do_leak_check(void) __attribute__((weak));
int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

__attribute__((noinline)) void scrub_stack(void) { volatile char junk[16384]; memset((char *)junk, 0, sizeof junk); }
__attribute__((noinline)) void *lose(size_t n) { char *p = malloc(n); memset(p, 0, n); return p; }
__attribute__((noinline)) void lose_ignored(void)
{
    void **p = lose(64);
    *p = lose(65);
    __lsan_ignore_object(p);
}
__attribute__((noinline)) void lose_while_disabled(void)
{
    __lsan_disable();
    __lsan_disable();
    lose(71);
    __lsan_enable();
    lose(71);
    __lsan_enable();
}

/* malloc(16) kept only in r15 while __lsan_do_leak_check runs */
void check_with_pointer_in_r15(void);
__asm__(".text\n.globl check_with_pointer_in_r15\n.type check_with_pointer_in_r15,@function\n"
        "check_with_pointer_in_r15:\n"
        "  push %rbp\n  mov %rsp, %rbp\n  push %r15\n  sub $8, %rsp\n"
        "  mov $16, %edi\n  call malloc@PLT\n"
        "  mov %rax, %r15\n  xor %eax, %eax\n"
        "  call scrub_stack\n"
        "  call __lsan_do_leak_check@PLT\n"
        "  mov %r15, %rax\n"
        "  add $8, %rsp\n  pop %r15\n  pop %rbp\n  ret\n");

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!__lsan_ignore_object || !__lsan_disable || !__lsan_enable || !__lsan_do_leak_check ||
        !__lsan_do_recoverable_leak_check) {
        puts("no LSan interface");
        return 3;
    }
    if (!strcmp(mode, "ignore")) {
        lose_ignored();
        lose(66);
    } else if (!strcmp(mode, "disable")) {
        lose_while_disabled();
        lose(72);
    } else if (!strcmp(mode, "check")) {
        static void *keep;
        keep = malloc(10);
        scrub_stack();
        printf("first %d\n", __lsan_do_recoverable_leak_check());
        lose(81);
        scrub_stack();
        printf("second %d\n", __lsan_do_recoverable_leak_check());
        fflush(stdout);
        __lsan_do_leak_check();
        puts("survived the final check");
    } else if (!strcmp(mode, "register")) {
        check_with_pointer_in_r15();
        puts("checked");
        fflush(stdout);
        _exit(0);   /* the block is dropped now: no second check at exit anyway */
    } else if (!strcmp(mode, "enable")) {
        __lsan_enable();
    } else if (!strcmp(mode, "elf")) {
        void *h = dlopen("libelf.so.1", RTLD_NOW);
        unsigned (*version)(unsigned) = h ? (unsigned (*)(unsigned))dlsym(h, "elf_version") : 0;
        void *(*mem)(char *, size_t) = h ? (void *(*)(char *, size_t))dlsym(h, "elf_memory") : 0;
        if (!version || !mem) { puts("no libelf"); return 4; }
        version(1);
        static char image[64];
        void *e = mem(image, sizeof image);   /* an Elf handle, calloc'd by libelf */
        printf("elf %s\n", e ? "allocated" : "failed");
        e = 0;
        lose(91);
    } else {
        return 2;
    }
    scrub_stack();
    puts("done");
    return 0;
}
