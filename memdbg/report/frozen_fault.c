/* SPDX-License-Identifier: MIT */
/* Faults on frozen blocks (memdbg_freeze), for the SIGSEGV handler
 * (fault.c): which faults are writes into a frozen block, which ones are
 * made again without a report, and halt_on_error=0's thaw.
 *
 * A write into a frozen block faults; with halt_on_error=0 the block is
 * thawed after the report and the write made again, and a later write
 * from the same instruction (into any frozen block) thaws without a new
 * report.  A fault on a live block's data pages that are no longer frozen
 * comes from a write that raced with a thaw on another thread: it is made
 * again, once (a second identical fault is reported as usual, so a page
 * the program protected itself cannot loop). */

#include "report/report.h"
#include <signal.h>
#include <ucontext.h>

#define SITES 256
static uintptr_t sites[SITES];   /* instructions whose write was reported (halt_on_error=0) */
static MEMDBG_TLS uintptr_t retried_pc, retried_addr;

static bool site_reported(uintptr_t pc)
{
    for (int i = 0; i < SITES; i++) {
        uintptr_t v = __atomic_load_n(&sites[i], __ATOMIC_ACQUIRE);
        if (v == pc) return true;
        if (!v) return false;
    }
    return false;
}

void md_frozen_site_reported(uintptr_t pc)
{
    for (int i = 0; i < SITES; i++) {
        uintptr_t expected = 0;
        if (__atomic_load_n(&sites[i], __ATOMIC_ACQUIRE) == pc) return;
        if (__atomic_compare_exchange_n(&sites[i], &expected, pc, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
            return;
        if (expected == pc) return;
    }
}

bool md_frozen_thaw_at(uintptr_t addr)
{
    if (md_heap_lock_mine()) return false;   /* memdbg's own write, under its lock: a bug to report */
    md_heap_lock();
    struct md_slot *s = md_slot_of_addr(addr);
    bool ok = s && s->state == MD_SLOT_LIVE;
    if (ok && md_frozen_covers(s, addr)) ok = md_frozen_set(&s, 1, false) == 1;
    md_heap_unlock();
    return ok;
}

int md_frozen_fault(const siginfo_t *si, const void *ucv)
{
    uintptr_t addr = (uintptr_t)si->si_addr;
    if (!md_frozen_ever()) return 0;
#if defined(__x86_64__)
    const ucontext_t *uc = ucv;
    if (!(uc->uc_mcontext.gregs[REG_ERR] & 2)) return 0;   /* not a write */
    uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    struct md_slot *s = md_slot_of_addr(addr);
    if (!s || __atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != MD_SLOT_LIVE) return 0;
    uintptr_t lo = md_page_addr(md_slot_data_page(s));
    if (addr - lo >= ((uintptr_t)s->data_pages << MD_PAGE_SHIFT)) return 0;
    if (md_frozen_covers(s, addr)) {
        if (md_opt.halt_on_error || !site_reported(pc)) return 0;
        return md_frozen_thaw_at(addr) ? 1 : 0;
    }
    if (retried_pc == pc && retried_addr == addr) {
        retried_pc = retried_addr = 0;
        return 0;
    }
    retried_pc = pc;
    retried_addr = addr;
    return 1;
#else
    (void)ucv;
    (void)addr;
    return 0;
#endif
}
