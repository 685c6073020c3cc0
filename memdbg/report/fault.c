/* SPDX-License-Identifier: MIT */
/* SIGSEGV handler: turns a fault on a guard page of the arena, or of a
 * block's own mapping (core/direct.c), into a report.
 * Async-signal-safe by construction: no stdio, no locks that user code can
 * hold, no debugged-heap memory (see report.c).  Everything else (faults
 * outside the arena, signals sent with kill/raise/sigqueue) goes to the
 * program's own disposition as the kernel would deliver it (signals.c). */

#include "report/report.h"
#include "signals.h"
#include <signal.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

/* A heap fault, reported on memdbg's own stack (md_with_report_stack):
 * the handler itself may be on a 16 KiB sigaltstack or a thread's small
 * stack, so nothing larger than a few words happens before the switch. */
/* go_on: halt_on_error=0 lets the access complete, by thawing a frozen
 * block (thaw) or opening a guard page (otherwise) */
struct fault { siginfo_t *si; ucontext_t *uc; bool go_on, thaw; };

/* halt_on_error=0: the bugs reported so far, by kind, faulting pc and
 * allocation stack, so a bug hit in a loop is reported once.  Written
 * under the report lock (report_fault runs holding it). */
#define SEEN_MAX 4096
struct seen_bug { uintptr_t pc; uint32_t stack; int kind; };
static struct seen_bug seen[SEEN_MAX];

/* true when this bug was reported before; else remembers it (a full
 * table reports every new bug) */
static bool seen_before(int kind, uintptr_t pc, uint32_t stack)
{
    uint64_t h = (pc ^ ((uint64_t)stack << 20) ^ (uint64_t)kind) * 0x9e3779b97f4a7c15ull;
    for (uint32_t i = 0; i < 16; i++) {
        struct seen_bug *b = &seen[((h >> 40) + i) % SEEN_MAX];
        if (b->pc == pc && b->stack == stack && b->kind == kind + 1) return true;
        if (!b->kind) {
            *b = (struct seen_bug){ pc, stack, kind + 1 };
            return false;
        }
    }
    return false;
}

/* Whether the access can complete: a guard of a block's slot (live, or
 * freed and still out of the pool) on a backend that can open it. */
static bool recoverable(const struct md_slot *s)
{
    return !md_opt.halt_on_error && s && !s->direct && md_heap.backend->open_page &&
           (s->state == MD_SLOT_LIVE || s->state == MD_SLOT_QUARANTINED);
}

void md_classify_addr(struct md_error_info *e, uintptr_t addr)
{
    struct md_slot *s = md_in_heap(addr) ? md_blame(addr) : md_direct_gone_slot_of(addr);
    e->slot = s;
    if (!s) {
        e->kind = MD_ERROR_UNKNOWN_CRASH;
        return;
    }
    e->kind = addr < s->user ? MD_ERROR_UNDERFLOW : MD_ERROR_OVERFLOW;
    /* a freed block's pages are all guards: its bytes and the slack after
     * them up to its guard page are a use of freed memory */
    if (s->state != MD_SLOT_LIVE && addr >= s->user && addr - s->user < s->size + MD_PAGE) e->kind = MD_ERROR_UAF;
}

static void report_fault(void *arg)
{
    struct fault *f = arg;
    uintptr_t addr = (uintptr_t)f->si->si_addr;
    struct md_error_info e;
    memset(&e, 0, sizeof e);
    e.addr = addr;
#if defined(__x86_64__)
    const ucontext_t *uc = f->uc;
    e.access = (uc->uc_mcontext.gregs[REG_ERR] & 2) ? 2 : 1;
    e.pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    e.sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
    e.bp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
    e.access_size = md_decode_access_size((const unsigned char *)e.pc);
#endif
    uintptr_t frames[MD_MAX_FRAMES];
    int depth = md_opt.malloc_context_size > 8 ? md_opt.malloc_context_size : 8;
    e.nframes = md_capture_stack_from_ucontext(f->uc, frames, depth);
    e.frames = frames;

    md_classify_addr(&e, addr);
    if (e.slot && e.slot->state == MD_SLOT_LIVE && e.access == 2 && md_frozen_covers(e.slot, addr))
        e.kind = MD_ERROR_FROZEN_WRITE;
    /* halt_on_error=0: the write goes through (on_segv thaws the block) */
    if (e.kind == MD_ERROR_FROZEN_WRITE && !md_opt.halt_on_error) {
        md_report_error(&e);
        md_frozen_site_reported(e.pc);
        f->go_on = f->thaw = true;
        return;
    }
    if (!recoverable(e.slot)) {
        md_report_error(&e);
        md_error_finish(true);
    }
    if (!seen_before(e.kind, e.pc, e.slot->alloc_stack)) md_report_error(&e);
    f->go_on = true;   /* on_segv opens the page */
}

/* The faulting page becomes memory of its own, with the heap lock (not
 * the report lock: the allocator takes them in that order), and its slot
 * never returns to the pool.  false: the program stops after all. */
static bool open_fault_page(uintptr_t addr)
{
    if (md_heap_lock_mine()) return false;   /* a handler that interrupted memdbg holding the lock */
    md_heap_lock();
    struct md_slot *s = md_slot_of_addr(addr);
    bool ok = recoverable(s) &&
              md_heap.backend->open_page((uint32_t)((addr - md_heap.base) >> MD_PAGE_SHIFT)) == 0;
    if (ok) s->opened = 1;
    md_heap_unlock();
    return ok;
}

static void on_segv(int sig, siginfo_t *si, void *ucv)
{
    uintptr_t addr = (uintptr_t)si->si_addr;
    bool sent = si->si_code <= 0;   /* raise, kill, sigqueue: never a heap access */
    if (!sent && md_block_read_jmp && md_in_heap(addr)) {
        md_block_read_fault = addr;
        siglongjmp(*md_block_read_jmp, 1);
    }
    if (!sent && md_in_report()) {
        /* memdbg's own report faulted: keep what it printed, say so, stop */
        uintptr_t pc = 0;
#if defined(__x86_64__)
        pc = (uintptr_t)((ucontext_t *)ucv)->uc_mcontext.gregs[REG_RIP];
#endif
        md_report_fault_in_report(addr, pc);
    }
    /* a freed block's own mapping that was unmapped under an
     * address-space limit: nothing is mapped there (SEGV_MAPERR) */
    bool gone = !sent && md_heap.initialized && si->si_code == SEGV_MAPERR && !md_in_heap(addr) &&
                md_direct_gone_slot_of(addr);
    if (sent || !md_heap.initialized || (!md_in_heap(addr) && !gone)) {
        md_segv_chain(sig, si, ucv);
        return;
    }
    md_in_runtime++;
    struct fault f = { si, ucv, false, false };
    /* a write into a block another thread thawed meanwhile, or one
     * halt_on_error=0 lets through, is made again */
    if (md_frozen_fault(si, ucv)) {
        md_in_runtime--;
        return;
    }
    md_with_report_stack(report_fault, &f);
    /* reached only when the access goes on (halt_on_error=0): the block
     * thawed or the page opened here, outside the report lock, which is
     * taken after the heap lock everywhere else; the access is made again
     * on return, and completes */
    bool done = f.go_on && (f.thaw ? md_frozen_thaw_at(addr) : open_fault_page(addr));
    if (!done) md_error_finish(true);
    md_in_runtime--;
}

void md_fault_init(void)
{
    md_report_init();
    md_signals_install(on_segv);
    /* a child forked while another thread was reporting can report too */
    pthread_atfork(0, 0, md_report_fork_child);
}
