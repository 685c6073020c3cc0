/* SPDX-License-Identifier: MIT */
/* memdbg's own stack for reports.  A report unwinds (libunwind), reads
 * DWARF (libdwfl) and demangles: tens to hundreds of KiB of stack, more
 * than a 16 or 64 KiB sigaltstack (Python's faulthandler, Rust runtimes,
 * crash reporters) or a thread created with a 64 KiB stack has left.  So
 * every report runs on this stack, one for the whole process, reserved at
 * start (lazily backed: only the pages a report touches cost memory) and
 * used by one thread at a time under the report lock (report.c). */
#include "report/report.h"

#define REPORT_STACK_SIZE ((size_t)8 << 20)

static char *report_stack;

void md_report_stack_init(void)
{
    if (!report_stack) report_stack = md_reserve(REPORT_STACK_SIZE, "report stack");
}

uintptr_t md_report_stack_top(void)
{
    return report_stack ? ((uintptr_t)report_stack + REPORT_STACK_SIZE) & ~(uintptr_t)63 : 0;
}

bool md_on_report_stack(uintptr_t sp)
{
    return report_stack && sp - (uintptr_t)report_stack < REPORT_STACK_SIZE;
}

/* md_call_on_stack(fn, arg, top): fn(arg) with the stack pointer at top
 * (16-byte aligned), back on the caller's stack afterwards.  RBP keeps
 * the caller's frame, and the CFI says so, so debuggers and unwinders walk
 * from the report stack back into the program's. */
#if defined(__x86_64__)
__asm__(
    ".text\n"
    ".globl md_call_on_stack\n"
    ".hidden md_call_on_stack\n"
    ".type md_call_on_stack, @function\n"
    ".p2align 4\n"
    "md_call_on_stack:\n"
    ".cfi_startproc\n"
    "    push %rbp\n"
    ".cfi_def_cfa_offset 16\n"
    ".cfi_offset %rbp, -16\n"
    "    mov %rsp, %rbp\n"
    ".cfi_def_cfa_register %rbp\n"
    "    mov %rdx, %rsp\n"
    "    mov %rdi, %rax\n"
    "    mov %rsi, %rdi\n"
    "    call *%rax\n"
    "    mov %rbp, %rsp\n"
    "    pop %rbp\n"
    ".cfi_def_cfa %rsp, 8\n"
    "    ret\n"
    ".cfi_endproc\n"
    ".size md_call_on_stack, .-md_call_on_stack\n");
#else
void md_call_on_stack(void (*fn)(void *), void *arg, uintptr_t top)
{
    (void)top;   /* other architectures: the caller's stack */
    fn(arg);
}
#endif
