/* SPDX-License-Identifier: MIT */
/* What goes into a core dump of a process dying under memdbg.
 *
 * The heap is one large reservation (64 GiB by default) and the metadata
 * tables are reserved for the largest heap too; a core holds every page
 * of them, as holes in a core file (an apparent size of 70 GB for a
 * small program) and as zeros streamed through a core_pattern pipe
 * (systemd-coredump, apport: minutes).  Just before memdbg lets the
 * process die of a signal, it marks MADV_DONTDUMP everything a debugger
 * cannot use: the arena's address space outside live blocks' data pages
 * (never used, quarantined, guards) and the metadata pages never written.
 * Live blocks, the written part of the tables (slot records, stacks) and
 * the program's own memory stay in the core.
 *
 * It is done at the end rather than as the heap grows because
 * MADV_DONTDUMP is a flag of a whole VMA: marking ranges of the arena
 * while the program runs would split the heap's one VMA into many. */
#include "core/core.h"
#include <sys/mman.h>

/* madvise calls at most (each may split a VMA; vm.max_map_count bounds
 * their number, and the biggest ranges come first anyway). */
#define MAX_CALLS 20000

static int calls_left;

static void dontdump(uintptr_t lo, uintptr_t hi)
{
    if (hi <= lo || calls_left <= 0) return;
    calls_left--;
    madvise((void *)lo, hi - lo, MADV_DONTDUMP);
}

/* Whether arena page p holds data of a live block. */
static bool page_is_live(uint32_t p)
{
    struct md_slot *s = md_slot_of_addr(md_page_addr(p));
    if (!s || s->state != MD_SLOT_LIVE) return false;
    uint32_t first = md_slot_data_page(s);
    return p - first < s->data_pages;
}

void md_core_trim(void)
{
    if (!md_heap.initialized) return;
    calls_left = MAX_CALLS;
    /* never used: the arena above the bump pointer, in one call */
    uint32_t used = md_heap.bump_page;
    dontdump(md_page_addr(used), md_heap.base + md_heap.size);
    md_reserve_dontdump_unwritten(&calls_left);
    /* used address space that holds no live data */
    uint32_t run = 0;
    bool in_run = false;
    for (uint32_t p = 0; p < used; p++) {
        bool live = page_is_live(p);
        if (!live && !in_run) run = p, in_run = true;
        if (live && in_run) dontdump(md_page_addr(run), md_page_addr(p)), in_run = false;
    }
    if (in_run) dontdump(md_page_addr(run), md_page_addr(used));
}
