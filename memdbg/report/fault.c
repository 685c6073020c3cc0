/* SPDX-License-Identifier: MIT */
/* SIGSEGV handler: turns a fault on a guard page of the arena into a report.
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
struct fault { siginfo_t *si; ucontext_t *uc; bool go_on; };

void md_classify_addr(struct md_error_info *e, uintptr_t addr)
{
    struct md_slot *s = md_blame(addr);
    e->slot = s;
    if (!s) {
        e->kind = ERR_UNKNOWN_CRASH;
        return;
    }
    e->kind = addr < s->user ? ERR_UNDERFLOW : ERR_OVERFLOW;
    /* a freed block's pages are all guards: its bytes and the slack after
     * them up to its guard page are a use of freed memory */
    if (s->state != SLOT_LIVE && addr >= s->user && addr - s->user < s->size + MD_PAGE) e->kind = ERR_UAF;
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
    if (e.slot && e.slot->state == SLOT_LIVE && e.access == 2 && md_frozen_covers(e.slot, addr))
        e.kind = ERR_FROZEN_WRITE;
    md_report_error(&e);
    /* halt_on_error=0: the write goes through (on_segv thaws the block) */
    if (e.kind == ERR_FROZEN_WRITE && !md_opt.halt_on_error) {
        md_frozen_site_reported(e.pc);
        f->go_on = true;
        return;
    }
    md_error_finish(true);
}

static void on_segv(int sig, siginfo_t *si, void *ucv)
{
    uintptr_t addr = (uintptr_t)si->si_addr;
    bool sent = si->si_code <= 0;   /* raise, kill, sigqueue: never a heap access */
    if (!sent && md_block_read_jmp && md_in_arena(addr)) {
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
    if (sent || !md_heap.initialized || !md_in_arena(addr)) {
        md_segv_chain(sig, si, ucv);
        return;
    }
    md_in_runtime++;
    struct fault f = { si, ucv, false };
    /* a write into a block another thread thawed meanwhile, or one
     * halt_on_error=0 lets through, is made again */
    if (md_frozen_fault(si, ucv)) {
        md_in_runtime--;
        return;
    }
    md_with_report_stack(report_fault, &f);
    /* reached only when the write goes on (halt_on_error=0): thawed here,
     * outside the report lock, which is taken after the heap lock
     * everywhere else */
    if (!f.go_on || !md_frozen_thaw_at(addr)) md_error_finish(true);
    md_in_runtime--;
}

void md_fault_init(void)
{
    md_report_init();
    md_signals_install(on_segv);
    /* a child forked while another thread was reporting can report too */
    pthread_atfork(0, 0, md_report_fork_child);
}
