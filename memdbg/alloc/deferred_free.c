/* SPDX-License-Identifier: MIT */
/* Frees that arrive while this thread is inside memdbg (md_in_runtime set):
 * a signal handler that interrupted malloc or free, the background thread.
 * They cannot run there (the heap lock may be held by this very thread), and
 * dropping them made the blocks false leaks.  They are queued here, without
 * locks, and done by the next free outside memdbg on any thread and before
 * the leak check; a block still queued at the check is not reported. */

#include "alloc/alloc.h"

#define DEFER_SLOTS 1024
enum defer_entry_state { DEFER_ENTRY_FREE, DEFER_ENTRY_WRITING, DEFER_ENTRY_READY };
static uint8_t state[DEFER_SLOTS];
static uintptr_t ptrs[DEFER_SLOTS];
static uint8_t kinds[DEFER_SLOTS];
int md_deferred_pending MEMDBG_HIDDEN;
static size_t dropped;                 /* queue full: the free is lost */
static bool draining;

void md_defer_free(void *p, int dealloc)
{
    for (int i = 0; i < DEFER_SLOTS; i++) {
        uint8_t want = DEFER_ENTRY_FREE;
        if (!__atomic_compare_exchange_n(&state[i], &want, DEFER_ENTRY_WRITING, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            continue;
        ptrs[i] = (uintptr_t)p;
        kinds[i] = (uint8_t)dealloc;
        __atomic_store_n(&state[i], DEFER_ENTRY_READY, __ATOMIC_RELEASE);
        __atomic_fetch_add(&md_deferred_pending, 1, __ATOMIC_RELEASE);
        return;
    }
    __atomic_fetch_add(&dropped, 1, __ATOMIC_RELAXED);
}

void md_run_deferred_frees(void)
{
    if (md_in_runtime || __atomic_test_and_set(&draining, __ATOMIC_ACQUIRE)) return;
    for (int i = 0; i < DEFER_SLOTS && __atomic_load_n(&md_deferred_pending, __ATOMIC_ACQUIRE); i++) {
        if (__atomic_load_n(&state[i], __ATOMIC_ACQUIRE) != DEFER_ENTRY_READY) continue;
        void *p = (void *)ptrs[i];
        int kind = kinds[i];
        __atomic_store_n(&state[i], DEFER_ENTRY_FREE, __ATOMIC_RELEASE);
        __atomic_fetch_sub(&md_deferred_pending, 1, __ATOMIC_RELEASE);
        md_free(p, kind);
    }
    __atomic_clear(&draining, __ATOMIC_RELEASE);
}

/* For the leak check (heap lock held): each block still queued. */
void md_deferred_foreach(void (*fn)(uintptr_t))
{
    MD_DCHECK(md_heap_lock_mine());
    for (int i = 0; i < DEFER_SLOTS; i++)
        if (__atomic_load_n(&state[i], __ATOMIC_ACQUIRE) == DEFER_ENTRY_READY) fn(ptrs[i]);
}
