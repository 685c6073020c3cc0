/* SPDX-License-Identifier: MIT */
/* Which block an address is about: the one it lies in, or, for an address
 * between blocks (a guard page, the slack before a block), the nearest
 * block on either side.  A guard page sits between two slots: the block
 * below ends against it, and a block that fills its pages (4096 bytes,
 * 8192, any size that is a multiple of the page) starts right after it, so
 * an underflow of that block lands in the guard page of the slot below
 * and must not be blamed on the block that owns the guard. */
#include "core/core.h"

/* A slot whose record describes a block, live or freed (a slot that never
 * held one has user == 0). */
static bool holds_block(const struct md_slot *s)
{
    return s && s->state != MD_SLOT_UNUSED && s->user != 0;
}

/* Bytes between addr and the block [user, user + size): 0 inside it. */
static uintptr_t distance_to_block(const struct md_slot *s, uintptr_t addr)
{
    if (addr < s->user) return s->user - addr;
    if (addr - s->user < s->size) return 0;
    return addr - (s->user + s->size) + 1;
}

struct md_slot *md_blame(uintptr_t addr)
{
    struct md_slot *own = md_slot_of_addr(addr);
    struct md_slot *best = holds_block(own) ? own : 0;
    uintptr_t best_distance = best ? distance_to_block(best, addr) : UINTPTR_MAX;
    if (best_distance == 0) return best;
    /* The slots of the pages on both sides: the block past the guard page
     * (overflow mode) or before it (protect_below), whichever is nearer. */
    uintptr_t page = addr & ~(uintptr_t)(MD_PAGE - 1);
    const uintptr_t sides[2] = { page - MD_PAGE, page + MD_PAGE };
    for (int i = 0; i < 2; i++) {
        struct md_slot *s = md_slot_of_addr(sides[i]);
        if (s == own || !holds_block(s)) continue;
        uintptr_t d = distance_to_block(s, addr);
        if (d < best_distance) {
            best = s;
            best_distance = d;
        }
    }
    return best;
}
