/* SPDX-License-Identifier: MIT */
/* Stacks: capture (stacktrace.c, stackmemo.c), storage (stackdepot.c),
 * loaded modules (modules.c) and symbolization (symbolize.c, symcore.c). */
#ifndef MEMDBG_STACK_H
#define MEMDBG_STACK_H

#include "core/core.h"

/* ---- stacks (stacktrace.c, stackmemo.c, stackdepot.c, symbolize.c) ---- */
#define MD_MEMO_SLOTS 48
/* A malloc/free stack, captured without the heap lock (md_stack_capture)
 * and turned into a depot id with it (md_stack_id). */
struct md_stack {
    const uintptr_t *frames;   /* buf, or the depot's copy on a memo hit */
    int n;
    uint32_t id;               /* depot id once known */
    /* what a memo entry needs (stackmemo.c) */
    bool memoizable;
    bool needs_bp;             /* the key includes the program's RBP */
    int max;
    uintptr_t entry_ra, ra, sp, bp;
    int nslots;
    uintptr_t slot_addr[MD_MEMO_SLOTS], slot_val[MD_MEMO_SLOTS];
    uintptr_t buf[MD_MAX_FRAMES];
};
void md_stack_capture(struct md_stack *st, int max) MEMDBG_HIDDEN;
uint32_t md_stack_id(struct md_stack *st) MEMDBG_HIDDEN;   /* with the heap lock */
int md_unwind_recording(struct md_stack *st, int max) MEMDBG_HIDDEN;
/* Whether p lies in a live frame of this thread's stack (between its
 * stack pointer and the top): a local variable, never a heap block. */
bool md_on_this_stack(const void *p) MEMDBG_HIDDEN;
int md_capture_stack(uintptr_t *frames, int max) MEMDBG_HIDDEN;
/* The frame that called the function starting at fn, if one of this
 * thread's live frames runs it: its stack pointer at the call and its
 * callee-saved registers (rbx, rbp, r12-r15) as they were there. */
#define MD_CALLEE_SAVED 6
struct md_caller_frame { uintptr_t sp, regs[MD_CALLEE_SAVED]; };
bool md_caller_of(uintptr_t fn, struct md_caller_frame *out) MEMDBG_HIDDEN;
int md_capture_stack_from_ucontext(void *uc, uintptr_t *frames, int max) MEMDBG_HIDDEN;
/* Around every libunwind call (unwind_fds.c): false when libunwind must not
 * run (this thread is already unwinding: a signal handler interrupted it). */
bool md_unwind_begin(void) MEMDBG_HIDDEN;
void md_unwind_end(void) MEMDBG_HIDDEN;
void md_unwind_fds_init(void *libunwind_function) MEMDBG_HIDDEN;
/* fork(): prepare waits until no thread is inside libunwind (whose locks
 * no fork handler resets) and holds new unwinds back; parent and child
 * open the gate again. */
void md_unwind_fork_prepare(void) MEMDBG_HIDDEN;
void md_unwind_fork_parent(void) MEMDBG_HIDDEN;
void md_unwind_fds_fork_child(void) MEMDBG_HIDDEN;
/* The program installed a signal handler (signals.c): unwinds block signals. */
void md_unwind_note_program_handler(void) MEMDBG_HIDDEN;
void md_stacktrace_init(void) MEMDBG_HIDDEN;
uint32_t md_depot_put(const uintptr_t *frames, int n) MEMDBG_HIDDEN;
int md_depot_get(uint32_t id, const uintptr_t **frames) MEMDBG_HIDDEN;
void md_depot_init(void) MEMDBG_HIDDEN;
/* first_exact: frames[0] is a faulting pc, not a return address. */
void md_print_stack(struct md_buf *b, const uintptr_t *frames, int n, bool first_exact) MEMDBG_HIDDEN;
/* The frames of a stack as fields (one per inline level, innermost
 * first), for machine-readable reports.  offset is the looked-up address
 * (a return address minus one) in the module; module, function and file
 * are NULL when unknown and last only for the call. */
struct md_frame_info {
    uintptr_t pc;
    const char *module;
    uintptr_t offset;
    const char *function, *file;
    int line;
};
typedef void md_frame_fn(void *ctx, const struct md_frame_info *f);
void md_stack_frames(const uintptr_t *frames, int n, bool first_exact, md_frame_fn *fn, void *ctx) MEMDBG_HIDDEN;
/* Loads the symbolizer library if it is not yet and the report may
 * (symbolize.c); reports call it before naming frames. */
void md_sym_prepare(void) MEMDBG_HIDDEN;
bool md_sym_tried(void) MEMDBG_HIDDEN;   /* nothing left to load (loaded, failed, or symbolize=0) */
bool md_sym_loadable(void) MEMDBG_HIDDEN;   /* md_sym_prepare would load now (or has nothing to do) */
const char *md_self_path(void) MEMDBG_HIDDEN;   /* libmemdbg.so as loaded ("" unknown) */
/* Function name of frame (for SUMMARY lines); writes "" if unknown. */
void md_frame_location(struct md_buf *b, uintptr_t pc, bool is_return_addr) MEMDBG_HIDDEN;

/* Modules ever loaded, for naming frames after dlclose (modules.c). */
struct md_module {
    uintptr_t start, end;      /* lowest and highest address of its PT_LOAD segments */
    uintptr_t bias;            /* load bias: (module+0xOFF) offsets are pc - bias */
    uint32_t added, removed;   /* loaded during epochs [added, removed); removed 0: still loaded */
    uint32_t name_off, seen;
    void *sym;                 /* the symbolizer's state for it (symbolize.c) */
};
void md_modules_refresh(void) MEMDBG_HIDDEN;   /* rescan if the loader's counts changed */
uint32_t md_modules_epoch(void) MEMDBG_HIDDEN;
const struct md_module *md_module_find(uintptr_t pc, uint32_t epoch) MEMDBG_HIDDEN;
const char *md_module_path(const struct md_module *m) MEMDBG_HIDDEN;
void md_module_set_sym(const struct md_module *m, void *sym) MEMDBG_HIDDEN;
/* The module epoch a depot stack was stored in (the current one for
 * frames that are not the depot's). */
uint32_t md_depot_epoch_of(const uintptr_t *frames) MEMDBG_HIDDEN;

void md_memo_fork_child(void) MEMDBG_HIDDEN;

#endif
