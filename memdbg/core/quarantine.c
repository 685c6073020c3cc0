/* SPDX-License-Identifier: MIT */
/* FIFO quarantine of address space.  A freed block's pages are already
 * guards and its memory already released (see the backends); what the
 * quarantine holds back is the *address range*, so a dangling pointer keeps
 * faulting until quarantine_size bytes of newer frees have pushed it out.
 * Then the range goes back to the common pool (md_quarantine_evict_one,
 * arena.c, which also ends the quarantine early when address space runs
 * out). */
#include "core/core.h"

void md_quarantine_push(uint32_t id)
{
    MD_DCHECK(md_heap_lock_mine());
    struct md_slot *s = &md_heap.slots[id];
    s->state = MD_SLOT_QUARANTINED;
    s->next = 0;
    if (md_heap.q_tail) md_heap.slots[md_heap.q_tail].next = id;
    else md_heap.q_head = id;
    md_heap.q_tail = id;
    md_heap.q_bytes += (size_t)s->pages << MD_PAGE_SHIFT;
    while (md_heap.q_bytes > md_opt.quarantine_size && md_quarantine_evict_one()) { }
}
