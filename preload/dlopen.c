/* SPDX-License-Identifier: MIT */
/* dlopen without RTLD_DEEPBIND.  A library opened with RTLD_DEEPBIND looks
 * its symbols up in itself and its own dependencies first, so its malloc
 * and free are the C library's, not memdbg's: its blocks come back to the
 * program's free (memdbg's) as foreign pointers, and memdbg's blocks reach
 * glibc's free, which aborts or corrupts its heap.  Nothing can be told
 * apart safely at free time (a glibc chunk looks like any other pointer
 * outside the arena), so memdbg drops the flag, with one warning: the
 * library then gets memdbg's allocator and checks like the rest of the
 * program.  AddressSanitizer refuses such a dlopen instead.
 *
 * dlopen must see its real caller: glibc searches the caller's
 * DT_RUNPATH and expands $ORIGIN from it.  So dlopen here is a few
 * instructions that let md_dlopen_prepare change the flags and then jump
 * to glibc's dlopen with the program's return address still on the
 * stack, as if the program had called it directly. */

#include "alloc/alloc.h"
#include <dlfcn.h>

typedef void *(*dlopen_fn)(const char *, int);
static dlopen_fn real_dlopen;
static int warned;

/* Called by dlopen below with a pointer to its flags argument: drops
 * RTLD_DEEPBIND (warning once) and returns glibc's dlopen. */
MEMDBG_HIDDEN dlopen_fn md_dlopen_prepare(const char *file, int *flags)
{
    dlopen_fn real = __atomic_load_n(&real_dlopen, __ATOMIC_ACQUIRE);
    if (!real) {
        real = (dlopen_fn)dlsym(RTLD_NEXT, "dlopen");
        if (!real) md_die_msg("memdbg: the C library's dlopen is not found", "", "");
        __atomic_store_n(&real_dlopen, real, __ATOMIC_RELEASE);
    }
    if (*flags & RTLD_DEEPBIND) {
        *flags &= ~RTLD_DEEPBIND;
        if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED)) {
            char mem[768];
            struct md_buf b;
            md_warn_begin(&b, mem, sizeof mem);
            md_puts(&b, "dlopen(\"");
            md_puts(&b, file ? file : "(null)");
            md_puts(&b, "\", RTLD_DEEPBIND): the flag is dropped, so that the library's malloc and free "
                        "are memdbg's (its other symbols now resolve in the global scope first, as "
                        "without the flag); further such calls are not reported\n");
            md_warn_end(&b);
        }
    }
    return real;
}

#if defined(__x86_64__)
/* dlopen(file, flags): keeps file and flags on the stack around the call
 * (flags by address), then jumps to glibc's dlopen with the caller's
 * return address where it was. */
__asm__(
    ".text\n"
    ".globl dlopen\n"
    ".type dlopen, @function\n"
    ".p2align 4\n"
    "dlopen:\n"
    ".cfi_startproc\n"
    "    push %rdi\n"
    ".cfi_adjust_cfa_offset 8\n"
    "    push %rsi\n"
    ".cfi_adjust_cfa_offset 8\n"
    "    mov %rsp, %rsi\n"
    "    sub $8, %rsp\n"
    ".cfi_adjust_cfa_offset 8\n"
    "    call md_dlopen_prepare\n"
    "    add $8, %rsp\n"
    ".cfi_adjust_cfa_offset -8\n"
    "    pop %rsi\n"
    ".cfi_adjust_cfa_offset -8\n"
    "    pop %rdi\n"
    ".cfi_adjust_cfa_offset -8\n"
    "    jmp *%rax\n"
    ".cfi_endproc\n"
    ".size dlopen, .-dlopen\n");
#endif
