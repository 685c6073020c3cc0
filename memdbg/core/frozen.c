/* SPDX-License-Identifier: MIT */
/* Who froze each frozen block (memdbg_freeze): a stack depot id and a
 * thread number per slot, for the report of a write into the block.  Its
 * address space is reserved with the slot table (arena.c) and used from
 * the first freeze on: a program that never freezes pays nothing, and
 * freezing maps nothing new; it is lazily backed, one page per 341 slots
 * touched. */

#include "core/core.h"
#include <errno.h>

static struct md_frozen_by *frozen_table;

bool md_frozen_reserve(void)
{
    MD_DCHECK(md_heap_lock_mine());
    if (!frozen_table) __atomic_store_n(&frozen_table, md_heap.frozen_room, __ATOMIC_RELEASE);
    return frozen_table != 0;
}

struct md_frozen_by *md_frozen_by(uint32_t id)
{
    struct md_frozen_by *t = __atomic_load_n(&frozen_table, __ATOMIC_ACQUIRE);
    if (!t || id == 0 || id >= md_heap.max_slots) return 0;
    return &t[id];
}

bool md_frozen_ever(void)
{
    return __atomic_load_n(&frozen_table, __ATOMIC_ACQUIRE) != 0;
}

/* With the heap lock held: slots[0..n) (live) frozen (ro) or thawed by the
 * backend, and their flag set to match.  Returns how many, from the first,
 * changed; errno says why the next one did not (ENOTSUP: the backend
 * cannot). */
uint32_t md_frozen_set(struct md_slot *const *slots, uint32_t n, bool ro)
{
    MD_DCHECK(md_heap_lock_mine());
    if (!md_heap.backend->protect_many) {
        errno = ENOTSUP;
        return 0;
    }
    uint32_t done = n ? md_heap.backend->protect_many(slots, n, ro) : 0;
    for (uint32_t i = 0; i < done; i++) {
        if (ro) __atomic_fetch_or(&slots[i]->flags, (uint8_t)SLOT_F_FROZEN, __ATOMIC_RELEASE);
        else __atomic_fetch_and(&slots[i]->flags, (uint8_t)~SLOT_F_FROZEN, __ATOMIC_RELEASE);
    }
    return done;
}

/* Whether addr lies in the data pages of frozen slot s: where a write
 * faults because of the freeze (padding and, in compact mode, the other
 * chunks its virtual page shows included). */
bool md_frozen_covers(const struct md_slot *s, uintptr_t addr)
{
    if (!(__atomic_load_n(&s->flags, __ATOMIC_ACQUIRE) & SLOT_F_FROZEN)) return false;
    uintptr_t lo = md_page_addr(md_slot_data_page(s));
    return addr - lo < ((uintptr_t)s->data_pages << MD_PAGE_SHIFT);
}
