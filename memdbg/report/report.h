/* SPDX-License-Identifier: MIT */
/* Error reports, the SIGSEGV handler, the program's signals, memdbg's
 * own stack for reports, and the statistics. */
#ifndef MEMDBG_REPORT_H
#define MEMDBG_REPORT_H

#include "core/core.h"
#include "stack/stack.h"
#include <signal.h>

/* ---- reports (report.c) and the SIGSEGV handler (fault.c) ---- */
enum md_error {
    MD_ERROR_OVERFLOW, MD_ERROR_UNDERFLOW, MD_ERROR_UAF, MD_ERROR_DOUBLE_FREE, MD_ERROR_BAD_FREE,
    MD_ERROR_MISMATCH, MD_ERROR_UNKNOWN_CRASH, MD_ERROR_NEW_DELETE_MISMATCH,
    MD_ERROR_FROZEN_WRITE,           /* a write into a block memdbg_freeze made read-only */
    MD_ERROR_FREE_FROZEN,            /* free or realloc of a frozen block (report_free_frozen=1) */
    MD_ERROR_PARAM_OVERLAP,
};
struct md_error_info {
    int kind;
    uintptr_t addr;
    int access;                 /* 0 unknown, 1 READ, 2 WRITE */
    size_t access_size;         /* 0 unknown */
    const char *how;            /* extra line, e.g. "detected at free()" */
    const uintptr_t *frames; int nframes;  /* current stack */
    struct md_slot *slot;       /* the block it is about (may be NULL) */
    int alloc_kind, dealloc_kind;  /* for mismatch */
    /* new-delete-type-mismatch: the size delete was given (or
     * MD_SIZE_NOT_GIVEN), the alignments of new and delete (0: none) */
    size_t dealloc_size, alloc_align, dealloc_align;
    uintptr_t pc, sp, bp;
    /* MD_ERROR_PARAM_OVERLAP: the function, and its second range (the first
     * is [addr, addr + access_size)) */
    const char *function;
    uintptr_t addr2;
    size_t size2;
};
void md_report_error(const struct md_error_info *e) MEMDBG_HIDDEN;
/* e->kind and e->slot for a bad address: the block md_blame names, and
 * whether addr is before it, after it, or in it after its free (fault.c). */
void md_classify_addr(struct md_error_info *e, uintptr_t addr) MEMDBG_HIDDEN;
void md_error_finish(bool fatal) MEMDBG_HIDDEN;   /* exit/abort per options */
void md_fault_init(void) MEMDBG_HIDDEN;
/* Frozen blocks in the SIGSEGV handler (frozen_fault.c).  md_frozen_fault:
 * 1 when the faulting write is to be made again without a report (the
 * block was thawed meanwhile, or halt_on_error=0 reported its instruction
 * already and it is thawed now), 0 to report.  After a reported write with
 * halt_on_error=0: md_frozen_site_reported(pc), then md_frozen_thaw_at(addr)
 * (false: it could not be thawed; the report is fatal). */
int md_frozen_fault(const siginfo_t *si, const void *ucontext) MEMDBG_HIDDEN;
void md_frozen_site_reported(uintptr_t pc) MEMDBG_HIDDEN;
bool md_frozen_thaw_at(uintptr_t addr) MEMDBG_HIDDEN;

/* ---- the range checks of the mem and str interceptors (access.c) ---- */
/* Bytes from p to the end of the live block p points into; 0 when p is in
 * the arena but in no live block; SIZE_MAX when p is not in the arena. */
size_t md_block_room(const void *p) MEMDBG_HIDDEN;
/* Reports an access of n bytes at p of which only room are in p's block
 * (READ: access 1, WRITE: 2), then stops unless halt_on_error=0.  Called
 * by the interceptor itself: its frame is the report's frame #0. */
void md_report_bad_range(const void *p, size_t n, size_t room, int access) MEMDBG_HIDDEN;
/* Reports fn's overlapping ranges [a, a + an) and [b, b + bn). */
void md_report_overlap(const char *fn, const void *a, size_t an, const void *b, size_t bn) MEMDBG_HIDDEN;

/* One report: md_report_begin takes the report lock and a buffer on the
 * report fd, md_put_pid_prefix writes "==PID==", md_report_end flushes. */
void md_report_begin(struct md_buf *b) MEMDBG_HIDDEN;
void md_report_end(struct md_buf *b) MEMDBG_HIDDEN;
void md_put_pid_prefix(struct md_buf *b) MEMDBG_HIDDEN;
void md_print_stats(void) MEMDBG_HIDDEN;            /* print_stats=1, at exit (stats.c) */

/* ---- log_format=json (json.c) ----
 * A report as one JSON object on one line: md_json_begin writes "{" and
 * the fields of every report (schema_version, kind, memdbg_version, pid,
 * options), the calls between add members (name NULL inside an array),
 * md_json_end writes "}" and the newline.  docs/report-json.md is the
 * schema; a change that breaks a reader raises MD_JSON_SCHEMA_VERSION. */
#define MD_JSON_SCHEMA_VERSION 1
struct md_json {
    struct md_buf *b;
    unsigned depth;
    uint32_t used;   /* bit d: the open object or array at depth d has a member */
};
void md_json_begin(struct md_json *j, struct md_buf *b, const char *kind) MEMDBG_HIDDEN;
void md_json_end(struct md_json *j) MEMDBG_HIDDEN;
void md_json_open(struct md_json *j, const char *name, char bracket) MEMDBG_HIDDEN;   /* '{' or '[' */
void md_json_close(struct md_json *j, char bracket) MEMDBG_HIDDEN;
void md_json_str(struct md_json *j, const char *name, const char *value) MEMDBG_HIDDEN;   /* NULL: null */
void md_json_uint(struct md_json *j, const char *name, unsigned long long value) MEMDBG_HIDDEN;
void md_json_hex(struct md_json *j, const char *name, unsigned long long value) MEMDBG_HIDDEN;
void md_json_null(struct md_json *j, const char *name) MEMDBG_HIDDEN;
void md_json_bool(struct md_json *j, const char *name, bool value) MEMDBG_HIDDEN;
/* A list of frames {"pc","module","offset","function","file","line"},
 * one per inline level (first_exact as md_print_stack). */
void md_json_stack(struct md_json *j, const char *name, const uintptr_t *frames, int n, bool first_exact) MEMDBG_HIDDEN;
/* s[0..n) as a quoted JSON string (escapes; ill-formed UTF-8 as U+FFFD). */
void md_json_put_string(struct md_buf *b, const char *s, size_t n) MEMDBG_HIDDEN;
static inline bool md_json_reports(void) { return md_opt.log_format == MD_LOG_FORMAT_JSON; }

/* ---- reports on memdbg's own stack; fork (altstack.c, report.c) ---- */
void md_report_init(void) MEMDBG_HIDDEN;           /* report buffer and stack, at start */
void md_report_stack_init(void) MEMDBG_HIDDEN;
uintptr_t md_report_stack_top(void) MEMDBG_HIDDEN;  /* 0: none */
bool md_on_report_stack(uintptr_t sp) MEMDBG_HIDDEN;
void md_call_on_stack(void (*fn)(void *), void *arg, uintptr_t top) MEMDBG_HIDDEN;
/* fn(arg) on memdbg's large report stack, holding the report lock, with the
 * program's asynchronous signals blocked; a plain call when this thread is
 * already in a report.  For anything that unwinds or symbolizes. */
void md_with_report_stack(void (*fn)(void *), void *arg) MEMDBG_HIDDEN;
/* A fault inside a report: flush it, say so, finish as for an error. */
void md_report_fault_in_report(uintptr_t addr, uintptr_t pc) MEMDBG_HIDDEN __attribute__((noreturn));
/* Child side of fork(): frees the report lock (and the signal table's
 * lock) that a thread of the parent, absent in the child, may hold.
 * Idempotent; registered with pthread_atfork by md_fault_init. */
void md_report_fork_child(void) MEMDBG_HIDDEN;

/* Called by every report first (gdb: break memdbg_break). */
void memdbg_break(const char *kind, const void *addr) MEMDBG_API;

#endif
