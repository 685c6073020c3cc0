/* SPDX-License-Identifier: MIT */
/* SIGSEGV belongs to both memdbg and the program.  memdbg keeps its own
 * handler in the kernel's table for the whole run (a heap fault must be
 * reported whatever the program installed), and keeps the program's
 * disposition here: sigaction(), signal() and the other glibc entry points
 * that set a disposition are interposed so that for SIGSEGV they record
 * and return the program's, never memdbg's.  A SIGSEGV that is not a heap
 * fault is then delivered to the program's disposition the way the kernel
 * would: the handler's flags (SA_SIGINFO, SA_RESETHAND, SA_NODEFER) and
 * sa_mask, SIG_DFL by dying of the signal, SIG_IGN by ignoring a sent
 * signal and dying of a fault (the kernel does not let a fault be
 * ignored).  Other signals pass through to glibc untouched. */
#include "report/report.h"
#include "signals.h"
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

extern int __sigaction(int, const struct sigaction *, struct sigaction *);

static struct sigaction program_segv;       /* the program's disposition */
static bool program_lock;
static int installed;                       /* memdbg's handler is in the table */
static struct sigaction memdbg_segv;        /* as installed */
static sigset_t interrupting;               /* siginterrupt(sig, 1): no SA_RESTART from signal() */

/* The lock is taken with every signal blocked, so that a handler on the
 * same thread (memdbg's included) never waits for it; the critical
 * sections only copy a structure. */
static void lock_program(sigset_t *saved)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, saved);
    while (__atomic_test_and_set(&program_lock, __ATOMIC_ACQUIRE)) sched_yield();
}

static void unlock_program(const sigset_t *saved)
{
    __atomic_clear(&program_lock, __ATOMIC_RELEASE);
    pthread_sigmask(SIG_SETMASK, saved, 0);
}

void md_signals_fork_child(void)
{
    __atomic_clear(&program_lock, __ATOMIC_RELEASE);
}

void md_signals_install(void (*handler)(int, siginfo_t *, void *))
{
    sigset_t saved;
    lock_program(&saved);
    memset(&memdbg_segv, 0, sizeof memdbg_segv);
    memdbg_segv.sa_sigaction = handler;
    /* No SA_NODEFER: a fault inside the handler before it unblocks SIGSEGV
     * kills.  SA_ONSTACK: on the program's alternate stack, if it has one
     * (a stack overflow must still be handled). */
    memdbg_segv.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&memdbg_segv.sa_mask);
    struct sigaction prev;
    if (__sigaction(SIGSEGV, &memdbg_segv, &prev) == 0) {
        program_segv = prev;
        installed = 1;
    }
    unlock_program(&saved);
}

/* SA_RESTART is the one flag of the program's that must be on memdbg's
 * real handler: it decides whether a system call interrupted by a sent
 * SIGSEGV is restarted, before any handler runs.  With the lock held. */
static void follow_restart_flag(void)
{
    int want = (program_segv.sa_flags & SA_RESTART) ? SA_RESTART : 0;
    if ((memdbg_segv.sa_flags & SA_RESTART) == want) return;
    memdbg_segv.sa_flags = (memdbg_segv.sa_flags & ~SA_RESTART) | want;
    __sigaction(SIGSEGV, &memdbg_segv, 0);
}

MEMDBG_API int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (act && act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN) md_unwind_note_program_handler();
    if (sig != SIGSEGV || !installed) return __sigaction(sig, act, old);
    struct sigaction copy, prev;
    if (act) copy = *act;
    sigset_t saved;
    lock_program(&saved);
    prev = program_segv;
    if (act) {
        program_segv = copy;
        follow_restart_flag();
    }
    unlock_program(&saved);
    if (old) *old = prev;
    return 0;
}

/* The glibc functions below set dispositions through glibc's internal
 * sigaction, which interposing sigaction does not reach; they are
 * rewritten here on top of it, with glibc's semantics, for every signal. */

static __sighandler_t set_handler(int sig, __sighandler_t handler, int flags, bool mask_self)
{
    if (handler == SIG_ERR || sig <= 0 || sig >= NSIG) { errno = EINVAL; return SIG_ERR; }
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    if (mask_self) sigaddset(&sa.sa_mask, sig);
    if (sigaction(sig, &sa, &old) != 0) return SIG_ERR;
    return old.sa_handler;
}

/* BSD semantics (glibc's signal): the signal blocked in its handler,
 * system calls restarted unless siginterrupt() said otherwise. */
static __sighandler_t bsd_semantics(int sig, __sighandler_t handler)
{
    bool intr = sig > 0 && sig < NSIG && sigismember(&interrupting, sig) == 1;
    return set_handler(sig, handler, intr ? 0 : SA_RESTART, true);
}
MEMDBG_API __sighandler_t signal(int sig, __sighandler_t h) { return bsd_semantics(sig, h); }
MEMDBG_API __sighandler_t bsd_signal(int sig, __sighandler_t h) { return bsd_semantics(sig, h); }
MEMDBG_API __sighandler_t ssignal(int sig, __sighandler_t h) { return bsd_semantics(sig, h); }

/* System V semantics: one-shot, not blocked in the handler, no restart.
 * A program built with strict ISO C (-std=c11) calls this for signal(). */
MEMDBG_API __sighandler_t __sysv_signal(int sig, __sighandler_t h)
{
    return set_handler(sig, h, SA_RESETHAND | SA_NODEFER, false);
}
MEMDBG_API __sighandler_t sysv_signal(int sig, __sighandler_t h)
{
    return set_handler(sig, h, SA_RESETHAND | SA_NODEFER, false);
}

MEMDBG_API int sigignore(int sig)
{
    return set_handler(sig, SIG_IGN, 0, false) == SIG_ERR ? -1 : 0;
}

/* System V sigset(): SIG_HOLD blocks the signal; a disposition unblocks it.
 * Returns SIG_HOLD when the signal was blocked before. */
MEMDBG_API __sighandler_t sigset(int sig, __sighandler_t disp)
{
    if (sig <= 0 || sig >= NSIG) { errno = EINVAL; return SIG_ERR; }
    sigset_t one, was;
    sigemptyset(&one);
    sigaddset(&one, sig);
    struct sigaction old;
    if (disp == SIG_HOLD) {
        if (sigprocmask(SIG_BLOCK, &one, &was) != 0) return SIG_ERR;
        if (sigismember(&was, sig)) return SIG_HOLD;
        if (sigaction(sig, 0, &old) != 0) return SIG_ERR;
        return old.sa_handler;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = disp;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, &old) != 0) return SIG_ERR;
    if (sigprocmask(SIG_UNBLOCK, &one, &was) != 0) return SIG_ERR;
    return sigismember(&was, sig) ? SIG_HOLD : old.sa_handler;
}

MEMDBG_API int siginterrupt(int sig, int interrupt)
{
    struct sigaction sa;
    if (sigaction(sig, 0, &sa) != 0) return -1;
    if (interrupt) {
        sigaddset(&interrupting, sig);
        sa.sa_flags &= ~SA_RESTART;
    } else {
        sigdelset(&interrupting, sig);
        sa.sa_flags |= SA_RESTART;
    }
    return sigaction(sig, &sa, 0);
}

/* log_format=json: the same as one object (kind segv-outside-heap, no
 * stacks: the process is about to die of the signal, as without memdbg). */
static void json_outside_heap(siginfo_t *si, void *ucv)
{
    char mem[512];
    struct md_buf b;
    struct md_json j;
    md_report_lock();
    md_buf_init(&b, mem, sizeof mem, md_report_fd());
    md_json_begin(&j, &b, "segv-outside-heap");
    md_json_hex(&j, "address", (uintptr_t)si->si_addr);
    md_json_null(&j, "size");
    md_json_str(&j, "direction", "unknown");
    md_json_uint(&j, "thread", md_thread_id());
#if defined(__x86_64__)
    md_json_hex(&j, "pc", (uintptr_t)((ucontext_t *)ucv)->uc_mcontext.gregs[REG_RIP]);
#else
    (void)ucv;
#endif
    md_json_bool(&j, "in_heap", false);
    md_json_null(&j, "block");
    md_json_open(&j, "stacks", '{');
    md_json_close(&j, '}');
    md_json_end(&j);
    md_flush(&b);
    md_report_unlock();
}

/* "==PID==memdbg: SEGV on unknown address ... outside the memdbg heap" */
static void note_outside_heap(siginfo_t *si, void *ucv)
{
    if (!md_heap.initialized) return;
    if (md_json_reports()) { json_outside_heap(si, ucv); return; }
    char mem[256];
    struct md_buf b;
    md_buf_init(&b, mem, sizeof mem, md_report_fd());
    md_puts(&b, "==");
    md_putu(&b, (unsigned long long)getpid());
    md_puts(&b, "==memdbg: SEGV on unknown address ");
    md_putx(&b, (uintptr_t)si->si_addr);
    md_puts(&b, " outside the memdbg heap");
#if defined(__x86_64__)
    md_puts(&b, " (pc ");
    md_putx(&b, (uintptr_t)((ucontext_t *)ucv)->uc_mcontext.gregs[REG_RIP]);
    md_puts(&b, ")");
#else
    (void)ucv;
#endif
    md_puts(&b, "; passing it on\n");
    md_flush(&b);
}

/* Dies of sig with the default action (core dump included), as the
 * kernel would have made the program die. */
static void die_by_default(int sig, siginfo_t *si, bool refaults)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    __sigaction(sig, &dfl, 0);
    md_core_trim();   /* the core holds the program, not the heap's reservations */
    if (refaults) return;   /* the access runs again on return and faults into the default action */
    /* A sent signal (or a kernel-sent one with no access to repeat): send
     * it again, with its siginfo, to this thread; it stays pending while
     * this handler runs (blocked) and kills on return, when the
     * interrupted code's mask comes back. */
    if (syscall(SYS_rt_tgsigqueueinfo, getpid(), gettid(), sig, si) != 0) syscall(SYS_tgkill, getpid(), gettid(), sig);
}

void md_segv_chain(int sig, siginfo_t *si, void *ucv)
{
    int saved_errno = errno;
    ucontext_t *uc = ucv;
    sigset_t saved;
    lock_program(&saved);
    struct sigaction act = program_segv;
    bool handler = act.sa_handler != SIG_DFL && act.sa_handler != SIG_IGN;
    if (handler && (act.sa_flags & SA_RESETHAND)) program_segv.sa_handler = SIG_DFL;   /* one-shot */
    unlock_program(&saved);

    bool sent = si->si_code <= 0;   /* SI_USER, SI_TKILL, SI_QUEUE...: raise, kill, sigqueue */
    if (handler) {
        /* The mask the kernel would have set: the interrupted code's, the
         * handler's sa_mask, and the signal itself unless SA_NODEFER.
         * Returning from memdbg's handler restores uc_sigmask. */
        sigset_t m;
        sigorset(&m, &uc->uc_sigmask, &act.sa_mask);
        if (!(act.sa_flags & SA_NODEFER)) sigaddset(&m, sig);
        pthread_sigmask(SIG_SETMASK, &m, 0);
        errno = saved_errno;   /* the handler sees (and may change) the program's errno */
        if (act.sa_flags & SA_SIGINFO) act.sa_sigaction(sig, si, ucv);
        else act.sa_handler(sig);
        return;
    }
    if (act.sa_handler == SIG_IGN && sent) { errno = saved_errno; return; }   /* the kernel drops it */
    if (!sent) note_outside_heap(si, ucv);
    die_by_default(sig, si, !sent && si->si_code != SI_KERNEL);
    errno = saved_errno;
}
