// SPDX-License-Identifier: MIT
/* Blocks the leak check skips (__lsan_ignore_object, and what a thread
 * allocates between __lsan_disable and __lsan_enable): one mark per slot,
 * kept by the allocator at every allocation once the LSan interface
 * (leak/lsan_api.c) asked for it, read by the leak check. */
#include "alloc/alloc.h"

int md_leak_ignore_on MEMDBG_HIDDEN;
static uint8_t *ignored;               /* slot id -> 1: ignored by the leak check */
static MEMDBG_TLS int disabled;        /* __lsan_disable depth of this thread */

/* With the heap lock held. */
static bool ignore_marks(void)
{
    MD_DCHECK(md_heap_lock_mine());
    if (!ignored) {
        ignored = md_reserve((size_t)md_heap.max_slots + 1, "leak ignore marks");
        __atomic_store_n(&md_leak_ignore_on, 1, __ATOMIC_RELEASE);
    }
    return true;
}

void md_leak_note_alloc(uint32_t id)
{
    ignored[id] = disabled > 0;
}

bool md_leak_ignored(uint32_t id)
{
    return ignored && ignored[id];
}

void md_leak_marks_on(void)
{
    ignore_marks();
}

void md_leak_ignore_slot(uint32_t id)
{
    if (ignore_marks()) ignored[id] = 1;
}

void md_leak_disable_thread(void)
{
    disabled++;
}

bool md_leak_enable_thread(void)
{
    if (disabled <= 0) return false;
    disabled--;
    return true;
}
