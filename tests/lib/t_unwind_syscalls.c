/* SPDX-License-Identifier: MIT */
/* Stack capture makes no system call in the steady state.
 * Allocations go through one wrapper called from two callers at the same
 * depth, alternately, and the runner turns the memo off (stack_memo=0;
 * the memo, stackmemo.c, would serve both callers' stacks), so every
 * malloc and free unwinds with libunwind.  After a warm-up (libunwind's
 * caches filled), a seccomp filter traps the calls memdbg and libunwind
 * used to make per unwind (fstat of libunwind's pipe, rt_sigprocmask
 * around libunwind's locks) and the SIGSYS handler counts them.
 *   argv[1]: pairs to count (default 2000), or "probe": exit 0 if this
 *            kernel takes seccomp filters (the runner skips otherwise).
 *   argv[2]: "raw" (default): the SIGSYS handler is installed with the
 *            rt_sigaction system call, unseen by memdbg: a program without
 *            handlers of its own (perl, the C++ benchmark), which should
 *            make no call; "sigaction": through sigaction(), so memdbg
 *            blocks the program's signals for each unwind (unwind_fds.c):
 *            two rt_sigprocmask per unwind, still no fstat.
 * Prints "pairs=N fstat=A sigprocmask=B". */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

static volatile sig_atomic_t trapped_fstat, trapped_mask;

static void on_sigsys(int sig, siginfo_t *si, void *ucv)
{
    (void)sig;
    ucontext_t *uc = ucv;
    if (si->si_syscall == SYS_rt_sigprocmask) {
        trapped_mask++;
        /* Counted, not done: a real call would trap again, and a mask
         * that blocked SIGSYS would turn the next trap into a kill.  The
         * caller gets the mask as it is (the one rt_sigreturn restores). */
        unsigned long *old = (unsigned long *)uc->uc_mcontext.gregs[REG_RDX];
        if (old) memcpy(old, &uc->uc_sigmask, sizeof(*old));
        uc->uc_mcontext.gregs[REG_RAX] = 0;
        return;
    }
    trapped_fstat++;
    uc->uc_mcontext.gregs[REG_RAX] = -EBADF;   /* fstat: "closed", which memdbg took as still its own */
}

static int trap_calls(void)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_sigprocmask, 3, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_newfstatat, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_fstat, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
    };
    struct sock_fprog prog = { .len = sizeof f / sizeof *f, .filter = f };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
        return -1;
    return 0;
}

static void *volatile sink;

__attribute__((noinline)) static void wrapper(size_t n)
{
    void *p = malloc(n);
    sink = p;
    free(p);
    __asm__ volatile("" ::: "memory");   /* not a tail call */
}
__attribute__((noinline)) static void caller_a(size_t n) { wrapper(n); __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) static void caller_b(size_t n) { wrapper(n + 8); __asm__ volatile("" ::: "memory"); }

static void pairs(int n)
{
    for (int i = 0; i < n; i++) {
        if (i & 1) caller_b(24);
        else caller_a(24);
    }
}

/* rt_sigaction as the kernel takes it, with the return trampoline the C
 * library would otherwise supply (x86_64: rt_sigreturn). */
struct kernel_sigaction {
    void (*handler)(int, siginfo_t *, void *);
    unsigned long flags;
    void (*restorer)(void);
    unsigned long mask;
};
#define KSA_RESTORER 0x04000000
__attribute__((naked)) static void return_from_handler(void)
{
    __asm__ volatile("mov $15, %eax\n\tsyscall\n\thlt");
}

static int install_raw(void)
{
    struct kernel_sigaction ksa = {
        .handler = on_sigsys,
        .flags = SA_SIGINFO | KSA_RESTORER,
        .restorer = return_from_handler,
    };
    return (int)syscall(SYS_rt_sigaction, SIGSYS, &ksa, NULL, sizeof ksa.mask);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "probe") == 0) return trap_calls() == 0 ? 0 : 1;
    int n = argc > 1 ? atoi(argv[1]) : 2000;
    bool raw = argc < 3 || strcmp(argv[2], "sigaction") != 0;
    if (raw) {
        if (install_raw() != 0) {
            perror("rt_sigaction");
            return 2;
        }
    } else {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_sigsys;
        sa.sa_flags = SA_SIGINFO;
        sigaction(SIGSYS, &sa, 0);
    }
    pairs(2000);   /* warm-up */
    if (trap_calls() != 0) {
        perror("seccomp");
        return 2;
    }
    trapped_fstat = trapped_mask = 0;
    pairs(n);
    int fstats = trapped_fstat, masks = trapped_mask;
    printf("pairs=%d fstat=%d sigprocmask=%d\n", n, fstats, masks);
    return 0;
}
