/* SPDX-License-Identifier: MIT */
/* The allocator: malloc, free and realloc on the arena (heap.c), sampled
 * guarding (sample.c), the per-thread caches (slot_cache.c), frees
 * deferred while inside memdbg (deferred_free.c) and the leak check's
 * ignore marks (leak_ignore.c). */
#ifndef MEMDBG_ALLOC_H
#define MEMDBG_ALLOC_H

#include "lifecycle/lifecycle.h"

/* ---- malloc, free, realloc (heap.c) ---- */
void *md_alloc(size_t size, size_t align, int kind, bool zero) MEMDBG_HIDDEN;
/* align for bytes that need no alignment (strdup's copy of a string): the
 * block ends at its guard page whatever its size, unless the alignment
 * option asks for more than its default */
#define MD_ALIGN_BYTES ((size_t)-1)
void md_free(void *p, int dealloc) MEMDBG_HIDDEN;
void *md_realloc(void *p, size_t size) MEMDBG_HIDDEN;
size_t md_usable_size(const void *p) MEMDBG_HIDDEN;
/* operator delete in its sized and aligned forms (delete_check.c): size
 * MD_SIZE_NOT_GIVEN and align 0 when the form has none. */
#define MD_SIZE_NOT_GIVEN ((size_t)-1)
void md_delete(void *p, int dealloc, size_t size, size_t align) MEMDBG_HIDDEN;


/* ---- sampled guarding, the C library's allocator (sample.c) ---- */
extern MEMDBG_TLS uint64_t md_sample_countdown MEMDBG_HIDDEN;
bool md_sample_refill(void) MEMDBG_HIDDEN;
/* The geometric gap (sample_gap.c): md_gap_scale(N) once, then each
 * md_gap_draw(scale, 64 random bits) is a gap of at least 1 and mean N. */
double md_gap_scale(uint64_t mean) MEMDBG_HIDDEN;
uint64_t md_gap_draw(double scale, uint64_t random_bits) MEMDBG_HIDDEN;
/* sample_rate > 1: whether this allocation goes to the guarded heap.
 * Without lock or system call: a per-thread countdown. */
static inline bool md_sampled(void)
{
    uint64_t left = md_sample_countdown;
    if (left > 1) {
        md_sample_countdown = left - 1;
        return false;
    }
    return md_sample_refill();
}
/* With sampling on, a block outside the arena, the blocks' own mappings
 * and the internal pool is glibc's (the caller has ruled out internal
 * blocks). */
static inline bool md_libc_owns(const void *p)
{
    return md_opt.sample_rate > 1 && !md_in_heap((uintptr_t)p);
}

/* ---- the unsampled path of the entry points (preload/) ----
 * Most calls with sampling on end in glibc; the entry points decide that
 * inline and call glibc's own functions directly, without the chain
 * through md_alloc and md_free, whose work (start-up, the re-entrancy
 * guard, the stack check) these tests already cover. */
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_memalign(size_t align, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void __libc_free(void *p);

/* This allocation is an unsampled one that glibc serves, and the
 * countdown has counted it.  A countdown above 1 exists only after
 * start-up with sample_rate > 1 (it starts at 0 in every thread and
 * after fork); inside memdbg allocations come from the internal pool. */
static inline bool md_take_unsampled(void)
{
    uint64_t left = md_sample_countdown;
    if (__builtin_expect(left > 1 && !md_in_runtime, 1)) {
        md_sample_countdown = left - 1;
        return true;
    }
    return false;
}

/* p is certainly an unsampled block for glibc to free: sampling is on,
 * p is in neither the arena, a block's own mapping nor the internal pool,
 * and it lies below the caller's frame, so it is no local variable of a
 * live frame (md_free reports those).  false sends the call the long way,
 * which decides every case. */
static inline bool md_libc_owns_fast(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    return md_opt.sample_rate > 1 && a - md_heap.base >= md_heap.size && !md_direct_count &&
           !md_is_internal(p) && a < (uintptr_t)__builtin_frame_address(0);
}
void *md_libc_alloc(size_t size, size_t align, bool zero) MEMDBG_HIDDEN;
void *md_libc_realloc(void *p, size_t size) MEMDBG_HIDDEN;
void md_libc_free(void *p) MEMDBG_HIDDEN;
size_t md_libc_usable_size(void *p) MEMDBG_HIDDEN;

/* ---- frozen blocks (freeze.c; the API is memdbg_freeze and kin) ---- */
/* free or realloc of a frozen block, heap lock held: reported if
 * report_free_frozen=1, then thawed. */
void md_freeze_end(struct md_slot *s, struct md_stack *st, int dealloc) MEMDBG_HIDDEN;
static inline void md_freeze_end_if_frozen(struct md_slot *s, struct md_stack *st, int dealloc) {
    if (__builtin_expect(s->flags & SLOT_F_FROZEN, 0)) md_freeze_end(s, st, dealloc);
}

/* ---- per-thread caches of ready slots, deferred guards (slot_cache.c) ---- */
#define MD_READY_CLASSES 16          /* classes whose data-page count is exact */
/* A committed slot of data_pages pages for this thread (state MD_SLOT_READY),
 * or NULL: not a cached size, or none could be made.  Without the lock. */
struct md_slot *md_cache_take(uint32_t data_pages) MEMDBG_HIDDEN;
/* free_batch > 1: keeps freed slot id for a later batch of guards; false
 * when the caller must guard it now.  Without the lock. */
bool md_cache_defer_guard(uint32_t id) MEMDBG_HIDDEN;
void md_cache_flush_guards(void) MEMDBG_HIDDEN;   /* this thread's deferred guards, now */
void md_cache_fork_child(bool may_lock) MEMDBG_HIDDEN;
/* The end of a block's life after free (heap.c): guards over the data
 * pages of the freed slots ids[0..n) (whose state is MD_SLOT_QUARANTINED),
 * memory back, then the quarantine.  Without the lock. */
void md_blocks_guard(const uint32_t *ids, uint32_t n) MEMDBG_HIDDEN;


/* ---- the leak check's ignore marks (leak_ignore.c) ---- */
extern int md_leak_ignore_on MEMDBG_HIDDEN;            /* __lsan_disable/ignore_object were used */
void md_leak_note_alloc(uint32_t id) MEMDBG_HIDDEN;
bool md_leak_ignored(uint32_t id) MEMDBG_HIDDEN;
void md_leak_marks_on(void) MEMDBG_HIDDEN;              /* heap lock held: marks kept from now */
void md_leak_ignore_slot(uint32_t id) MEMDBG_HIDDEN;    /* heap lock held */
void md_leak_disable_thread(void) MEMDBG_HIDDEN;        /* __lsan_disable */
bool md_leak_enable_thread(void) MEMDBG_HIDDEN;         /* __lsan_enable; false: unmatched */
/* Every allocation (heap lock held): keeps the slot's ignore mark right. */
static inline void md_leak_alloc_hook(uint32_t id) {
    if (__atomic_load_n(&md_leak_ignore_on, __ATOMIC_ACQUIRE)) md_leak_note_alloc(id);
}

/* ---- frees that arrive inside memdbg (deferred_free.c) ---- */
void md_defer_free(void *p, int dealloc) MEMDBG_HIDDEN;   /* free while md_in_runtime */
void md_run_deferred_frees(void) MEMDBG_HIDDEN;
void md_deferred_foreach(void (*fn)(uintptr_t)) MEMDBG_HIDDEN;
extern int md_deferred_pending MEMDBG_HIDDEN;
static inline void md_drain_deferred_frees(void) {
    if (__atomic_load_n(&md_deferred_pending, __ATOMIC_RELAXED)) md_run_deferred_frees();
}

#endif
