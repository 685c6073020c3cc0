/* FIFO quarantine of address space.  A freed block's pages are already
 * guards and its memory already released (see the backends); what the
 * quarantine holds back is the *address range*, so a dangling pointer keeps
 * faulting until quarantine_size bytes of newer frees have pushed it out.
 * Then the range goes back to the common pool (arena.c). */
#include "memdbg.h"

bool md_quarantine_evict_one(void)
{
    uint32_t id = md_heap.q_head;
    if (!id) return false;
    struct md_slot *s = &md_heap.slots[id];
    md_heap.q_head = s->next;
    if (!md_heap.q_head) md_heap.q_tail = 0;
    md_heap.q_bytes -= (size_t)s->pages << MD_PAGE_SHIFT;
    if (!(__atomic_load_n(&s->flags, __ATOMIC_RELAXED) & SLOT_F_KEPT))
        __atomic_fetch_or(&s->flags, SLOT_F_FRESH, __ATOMIC_RELAXED);
    md_free_list_push(id);   /* keeps user/size/stacks for late reports */
    return true;
}

void md_quarantine_push(uint32_t id)
{
    struct md_slot *s = &md_heap.slots[id];
    s->state = SLOT_QUARANTINED;
    s->next = 0;
    if (md_heap.q_tail) md_heap.slots[md_heap.q_tail].next = id;
    else md_heap.q_head = id;
    md_heap.q_tail = id;
    md_heap.q_bytes += (size_t)s->pages << MD_PAGE_SHIFT;
    while (md_heap.q_bytes > md_opt.quarantine_bytes && md_quarantine_evict_one()) { }
}
