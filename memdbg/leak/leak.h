/* SPDX-License-Identifier: MIT */
/* The leak check: roots, suppressions, the LSan interface (lsan_api.c). */
#ifndef MEMDBG_LEAK_H
#define MEMDBG_LEAK_H

#include "alloc/alloc.h"

/* ---- leak check (leaks.c), roots (leak_roots.c), suppressions
 *      (suppressions.c) ---- */
int md_leak_check_now(bool final) MEMDBG_HIDDEN;       /* 1: leaks found (final: exits then) */
void md_scan_roots_prepare(void) MEMDBG_HIDDEN;        /* before taking the heap lock */
size_t md_scan_roots(void (*consider)(uintptr_t)) MEMDBG_HIDDEN; /* heap lock held */
void md_scan_roots_set_sp(uintptr_t sp) MEMDBG_HIDDEN;  /* scan from sp (0: current) */
/* At exit: this thread's stack is scanned from the frame that called
 * exit(), with the registers it had there (NULL: from the stack pointer). */
void md_scan_roots_set_exit_caller(const struct md_caller_frame *f) MEMDBG_HIDDEN;
/* Stores the callee-saved registers in regs (6 words or more, in the
 * caller's frame) and sets sp to the stack pointer below them, so that a
 * stack scan from sp sees pointers the program kept only in registers. */
#if defined(__x86_64__)
#define MD_SPILL_REGISTERS(regs, sp)                                                                   \
    __asm__ volatile("mov %%rbx, 0(%1)\n\tmov %%rbp, 8(%1)\n\tmov %%r12, 16(%1)\n\tmov %%r13, 24(%1)\n\t" \
                     "mov %%r14, 32(%1)\n\tmov %%r15, 40(%1)\n\tmov %%rsp, %0"                          \
                     : "=r"(sp) : "r"(regs) : "memory")
#else
#define MD_SPILL_REGISTERS(regs, sp) do { __builtin_unwind_init(); (sp) = (uintptr_t)&(regs)[0]; } while (0)
#endif
const char *md_module_of(uintptr_t pc) MEMDBG_HIDDEN;   /* path of the loaded object, after a scan */
void md_scan_foreign(uintptr_t lo, uintptr_t hi, void (*consider)(uintptr_t)) MEMDBG_HIDDEN;
bool md_allocated_by_ldso(uint32_t stack) MEMDBG_HIDDEN;
void md_leak_root_region(const void *p, size_t size, bool add) MEMDBG_HIDDEN;
bool md_have_suppressions(void) MEMDBG_HIDDEN;
int md_suppression_for(uint32_t stack) MEMDBG_HIDDEN;  /* index, -1 none */
void md_suppression_hit(int k, size_t bytes) MEMDBG_HIDDEN;
void md_print_suppressions_used(struct md_buf *b) MEMDBG_HIDDEN;

#endif
