/* SPDX-License-Identifier: MIT */
/* The MEMDBG_OPTIONS settings (options.c). */
#ifndef MEMDBG_BASE_OPTIONS_H
#define MEMDBG_BASE_OPTIONS_H

#include "base/base.h"

/* ---- options (options.c) ---- */
enum md_backend_id { MD_BACKEND_AUTO, MD_BACKEND_NONLINEAR, MD_BACKEND_GUARD, MD_BACKEND_MPROTECT };

struct md_options {
    int backend;                 /* enum md_backend_id */
    int protect_below;           /* guard page before the block instead of after */
    size_t alignment;            /* minimum alignment of malloc'd blocks */
    size_t quarantine_bytes;     /* address space kept inaccessible after free */
    int malloc_fill_byte;        /* -1: do not fill */
    size_t max_malloc_fill_size; /* fill at most this many bytes of a new block */
    int free_fill_byte;          /* -1: do not fill */
    int detect_leaks;
    int exitcode;
    int abort_on_error;
    int halt_on_error;
    char log_path[512];          /* empty: stderr */
    int malloc_context_size;     /* backtrace depth */
    int verbosity;
    int print_stats;
    int background_thread;       /* accepted, no effect: per-thread slot caches replaced the helper thread */
    int free_batch;              /* guards of freed blocks installed N at a time (1: at once) */
    int fast_unwind_on_malloc;   /* malloc/free stacks by frame pointers instead of libunwind */
    int stack_memo;              /* 0: unwind every malloc/free stack (no per-thread memo) */
    int nonlinear_emulation;     /* test aid: nonlinear backend through mmap */
    size_t arena_size;           /* virtual size of the heap mapping */
    int allow_malloc_0;          /* 0: malloc(0) returns NULL */
    int symbolize;
    int check_at_exit;           /* verify padding of live blocks at exit */
    int recycle_pages;           /* keep freed small blocks' pages for their slot's next block */
    int compact;                 /* nonlinear: small blocks share file pages (compact.c) */
    size_t compact_max;          /* largest block placed compactly */
    int compact_defer;           /* >0: guard freed compact blocks in batches of this many */
    int quarantine_set;          /* quarantine size given by the user */
    char suppressions[512];      /* LSan-style suppressions file (leak:PATTERN lines); empty: none */
};
extern struct md_options md_opt MEMDBG_HIDDEN;
void md_options_init(void) MEMDBG_HIDDEN;

#endif
