/* SPDX-License-Identifier: MIT */
/* Frozen blocks: the exported memdbg_freeze family (declared for programs
 * in include/memdbg.h) and the end of a frozen block's life at free and
 * realloc.
 *
 * A call names blocks by any address inside them (interior pointers are
 * the block containing them; a 0-byte block by its own pointer).  Every
 * address is checked before any block changes, so a bad one fails the
 * call with EINVAL and nothing else; the blocks are then changed in
 * batches of up to 1024 (one MAP_VECTOR call each on nonlinear), and a
 * batch the kernel refuses (ENOMEM) makes the call undo the changes it
 * made, so a failed call leaves every block as it was.  The heap lock is
 * held throughout: a free of the same block on another thread waits, and
 * then finds it frozen or not, never half way. */

#include "alloc/alloc.h"
#include <errno.h>

#define BATCH 1024
static uint32_t call_gen;   /* under the heap lock */

/* The live slot of the block containing p, or NULL. */
static struct md_slot *live_block_of(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    struct md_slot *s = md_slot_of_addr(a);
    /* a block with a mapping of its own has no backend pages to protect */
    if (!s || s->state != MD_SLOT_LIVE || s->direct) return 0;
    size_t len = s->size ? s->size : 1;
    return a - s->user < len ? s : 0;
}

/* With the lock: changes the slots in batch[0..n), which this call
 * marked; false (errno set) when a batch failed (its first slots changed,
 * the others not). */
static bool apply(struct md_slot **batch, uint32_t n, bool ro)
{
    return md_frozen_set(batch, n, ro) == n;
}

/* With the lock: the slots this call (gen) changed among blocks[0..upto)
 * go back to how they were.  Best effort: a thaw gives VMAs back, so
 * re-freezing what a failed thaw_many thawed fits the same budget. */
static void undo(const void *const *blocks, size_t upto, bool ro, uint32_t gen)
{
    struct md_slot *batch[BATCH];
    uint32_t n = 0;
    for (size_t i = 0; i < upto; i++) {
        struct md_slot *s = live_block_of(blocks[i]);
        struct md_frozen_by *fb = s ? md_frozen_by((uint32_t)(s - md_heap.slots)) : 0;
        if (!fb || fb->gen != gen || !(s->flags & SLOT_F_FROZEN) != !ro) continue;
        fb->gen = 0;
        batch[n++] = s;
        if (n == BATCH) { md_frozen_set(batch, n, !ro); n = 0; }
    }
    if (n) md_frozen_set(batch, n, !ro);
}

static int change_many(const void *const *blocks, size_t n, bool ro)
{
    if (md_in_runtime) { errno = EDEADLK; return -1; }   /* a signal handler inside memdbg */
    if (n && !blocks) { errno = EINVAL; return -1; }
    if (!md_heap.initialized) {
        if (n) errno = EINVAL;
        return n ? -1 : 0;
    }
    md_in_runtime++;
    struct md_stack stack;
    if (ro) md_stack_capture(&stack, md_opt.malloc_context_size);
    md_heap_lock();
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (!live_block_of(blocks[i])) { errno = EINVAL; rc = -1; goto out; }
    }
    if (!md_heap.backend->protect_many) { errno = ENOTSUP; rc = -1; goto out; }
    if (!ro && !md_frozen_ever()) goto out;   /* nothing is frozen */
    if (!md_frozen_reserve()) { errno = ENOMEM; rc = -1; goto out; }
    uint32_t gen = ++call_gen ? call_gen : ++call_gen;
    uint32_t stack_id = ro ? md_stack_id(&stack) : 0, tid = md_thread_id();
    struct md_slot *batch[BATCH];
    uint32_t k = 0;
    for (size_t i = 0; i < n; i++) {
        struct md_slot *s = live_block_of(blocks[i]);
        struct md_frozen_by *fb = md_frozen_by((uint32_t)(s - md_heap.slots));
        /* already as asked, or named twice in this call */
        if (!(s->flags & SLOT_F_FROZEN) == !ro || fb->gen == gen) continue;
        fb->gen = gen;
        if (ro) { fb->stack = stack_id; fb->tid = tid; }
        batch[k++] = s;
        if (k == BATCH) {
            if (!apply(batch, k, ro)) {
                int err = errno;
                undo(blocks, i + 1, ro, gen);
                errno = err;
                rc = -1;
                goto out;
            }
            k = 0;
        }
    }
    if (k && !apply(batch, k, ro)) {
        int err = errno;
        undo(blocks, n, ro, gen);
        errno = err;
        rc = -1;
    }
out:
    md_heap_unlock();
    md_in_runtime--;
    return rc;
}

MEMDBG_API int memdbg_freeze_many(const void *const *blocks, size_t n)
{
    return change_many(blocks, n, true);
}

MEMDBG_API int memdbg_thaw_many(const void *const *blocks, size_t n)
{
    return change_many(blocks, n, false);
}

MEMDBG_API int memdbg_freeze(const void *p)
{
    return change_many(&p, 1, true);
}

MEMDBG_API int memdbg_thaw(const void *p)
{
    return change_many(&p, 1, false);
}

MEMDBG_API int memdbg_is_frozen(const void *p)
{
    if (!md_heap.initialized || md_in_runtime) {
        errno = md_in_runtime ? EDEADLK : EINVAL;
        return -1;
    }
    md_heap_lock();
    struct md_slot *s = live_block_of(p);
    int r = s ? !!(s->flags & SLOT_F_FROZEN) : -1;
    md_heap_unlock();
    if (r < 0) errno = EINVAL;
    return r;
}

MEMDBG_API int memdbg_running(void)
{
    return 1;
}

/* free or realloc of a frozen block (heap lock held): reported with
 * report_free_frozen=1, then thawed, so that free's own writes (the
 * free_fill_byte, realloc's padding) go through and the block's pages
 * leave with it; realloc's new block is not frozen. */
void md_freeze_end(struct md_slot *s, struct md_stack *st, int dealloc)
{
    if (md_opt.report_free_frozen) {
        struct md_error_info e = { .kind = MD_ERROR_FREE_FROZEN, .addr = s->user, .frames = st->frames,
                                   .nframes = st->n, .slot = s, .dealloc_kind = dealloc };
        md_report_error(&e);
        if (md_opt.halt_on_error) md_error_finish(true);
    }
    if (md_frozen_set(&s, 1, false) != 1) {
        /* the pages stay read-only (the kernel refused): free's own
         * writes will fault and be reported; the slot's next block must
         * not start frozen */
        __atomic_fetch_and(&s->flags, (uint8_t)~SLOT_F_FROZEN, __ATOMIC_RELEASE);
    }
}
