/* SPDX-License-Identifier: MIT */
/* The lowest layer: visibility and page constants, formatting and report
 * output without stdio or malloc, who is running, the internal allocator.
 * Nothing here is exported from libmemdbg.so except the MEMDBG_API symbols. */
#ifndef MEMDBG_BASE_H
#define MEMDBG_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <pthread.h>
#include <setjmp.h>
#include <sys/types.h>

#define MEMDBG_HIDDEN __attribute__((visibility("hidden")))
#define MEMDBG_API __attribute__((visibility("default")))
/* Thread-locals must not go through __tls_get_addr, which can call malloc. */
#define MEMDBG_TLS __thread __attribute__((tls_model("initial-exec")))

/* The arena is managed in 4 KiB pages (x86_64 / aarch64-4K kernels). */
#define MD_PAGE ((size_t)4096)
#define MD_PAGE_SHIFT 12

/* The deepest stack kept (malloc_context_size's limit, as ASan's). */
#define MD_MAX_FRAMES 256

/* Invariants the code relies on.  MD_CHECK is always compiled in (cold
 * paths); MD_DCHECK only in a debug build (make MD_DEBUG=1), so that the
 * checks on malloc's and free's path cost nothing otherwise.  A failed
 * check prints "==PID==memdbg: CHECK failed: FILE:LINE: COND" and aborts. */
void md_check_failed(const char *file, int line, const char *cond) MEMDBG_HIDDEN __attribute__((noreturn, cold));
#define MD_CHECK(cond) (__builtin_expect(!!(cond), 1) ? (void)0 : md_check_failed(__FILE__, __LINE__, #cond))
#ifdef MD_DEBUG
#define MD_DCHECK(cond) MD_CHECK(cond)
#else
#define MD_DCHECK(cond) ((void)sizeof(!(cond)))
#endif

/* ---- formatting / output without stdio or malloc (out.c) ---- */
struct md_buf { char *p; size_t len, cap; int fd; };
void md_buf_init(struct md_buf *b, char *mem, size_t cap, int fd) MEMDBG_HIDDEN;
void md_puts(struct md_buf *b, const char *s) MEMDBG_HIDDEN;
void md_putc(struct md_buf *b, char c) MEMDBG_HIDDEN;
void md_putu(struct md_buf *b, unsigned long long v) MEMDBG_HIDDEN;
void md_puti(struct md_buf *b, long long v) MEMDBG_HIDDEN;
void md_putx(struct md_buf *b, unsigned long long v) MEMDBG_HIDDEN; /* 0x... */
void md_flush(struct md_buf *b) MEMDBG_HIDDEN;
void md_write_all(int fd, const char *s, size_t n) MEMDBG_HIDDEN;
void md_die_msg(const char *a, const char *b, const char *c) MEMDBG_HIDDEN; /* early fatal */
size_t md_strlen(const char *s) MEMDBG_HIDDEN;
/* ---- where reports go (log.c) ---- */
int md_report_fd(void) MEMDBG_HIDDEN;        /* stderr or log_path.PID, opened lazily */
void md_save_stderr(void) MEMDBG_HIDDEN;
void md_report_fd_reset(void) MEMDBG_HIDDEN;  /* fork child: its own log file */
/* One report or warning at a time (nestable on one thread). */
void md_report_lock(void) MEMDBG_HIDDEN;
void md_report_unlock(void) MEMDBG_HIDDEN;
bool md_in_report(void) MEMDBG_HIDDEN;             /* this thread holds the report lock */
void md_report_lock_fork_child(void) MEMDBG_HIDDEN;
/* Every warning: "==PID==WARNING: memdbg: " and the caller's text, under
 * the report lock, on the report fd; md_warn_end flushes and unlocks. */
void md_warn_begin(struct md_buf *b, char *mem, size_t cap) MEMDBG_HIDDEN;
void md_warn_end(struct md_buf *b) MEMDBG_HIDDEN;
/* The same in one call, a + b[0..blen) + c, on stderr (start-up). */
void md_warn3(const char *a, const char *b, size_t blen, const char *c) MEMDBG_HIDDEN;

/* ---- who is running (runtime.c) ---- */
extern MEMDBG_TLS int md_in_runtime MEMDBG_HIDDEN; /* re-entrancy guard */
/* Set while memdbg reads live blocks with plain loads (leak scan, padding
 * check at exit): a fault in the arena jumps there instead of being
 * reported, since the program may have made its own block unreadable. */
extern MEMDBG_TLS sigjmp_buf *md_block_read_jmp MEMDBG_HIDDEN;
extern MEMDBG_TLS uintptr_t md_block_read_fault MEMDBG_HIDDEN;   /* the address that faulted, before the jump */
uint32_t md_thread_id(void) MEMDBG_HIDDEN;          /* first call: the thread is recorded */
/* A thread as the leak scan finds it: recorded at its first md_thread_id. */
struct md_thread_rec { uintptr_t tp; uintptr_t sp_hint; pid_t tid; };
const struct md_thread_rec *md_thread_of_tid(pid_t tid) MEMDBG_HIDDEN;   /* NULL: never recorded */
uintptr_t md_thread_pointer(void) MEMDBG_HIDDEN;

/* ---- address space under RLIMIT_AS (as_limit.c) ---- */
size_t md_as_room(void) MEMDBG_HIDDEN;                  /* left under the limit; SIZE_MAX: no limit */
size_t md_reservations_for(size_t arena) MEMDBG_HIDDEN; /* memdbg's address space for that arena */
size_t md_pool_bytes(size_t arena) MEMDBG_HIDDEN;       /* the internal pool's reservation */
size_t md_depot_bytes(size_t arena) MEMDBG_HIDDEN;      /* the stack depot store's reservation */
void md_fit_arena_to_limit(void) MEMDBG_HIDDEN;         /* arena_size not given: shrink it to fit */
const char *md_as_limit_hint(void) MEMDBG_HIDDEN;       /* " (...)": what fits, for a failed reservation */

/* ---- internal allocator (internal_alloc.c) ---- */
void *md_reserve(size_t bytes, const char *what) MEMDBG_HIDDEN; /* guarded, lazily backed */
void *md_internal_alloc(size_t size, size_t align) MEMDBG_HIDDEN;
void *md_internal_realloc(void *p, size_t size) MEMDBG_HIDDEN;
size_t md_internal_usable(const void *p) MEMDBG_HIDDEN;
extern uintptr_t md_internal_lo MEMDBG_HIDDEN;
extern size_t md_internal_bytes MEMDBG_HIDDEN;
/* p lies in the internal pool: two loads and a compare, since every free
 * asks it first. */
static inline bool md_is_internal(const void *p)
{
    return (uintptr_t)p - md_internal_lo < md_internal_bytes;
}
void md_reserve_dontdump_unwritten(int *calls_left) MEMDBG_HIDDEN;
void md_internal_init(void) MEMDBG_HIDDEN;
void md_internal_fork_child(void) MEMDBG_HIDDEN;
bool md_is_metadata(uintptr_t lo, uintptr_t hi) MEMDBG_HIDDEN;

#endif
