/* SPDX-License-Identifier: MIT */
/* What libunwind (1.6, as Debian builds it) does with system calls while
 * it unwinds for memdbg, and how memdbg keeps that at none in the steady
 * state without letting libunwind touch a descriptor of the program's.
 *
 * Descriptors.  libunwind checks that a stack word is readable by
 * write(2)ing it to a pipe it opens once, at its first unwind, and keeps
 * in a static array; before each write it read(2)s the pipe, and when that
 * read fails it close(2)s both numbers and opens a new pipe.  A program
 * that closes every descriptor >= 3 (closefrom, daemons, test harnesses)
 * and opens its own files gets those numbers, and the next check would
 * read from, write a byte into or close the program's file.  memdbg cannot
 * reach libunwind's array, but it sees every one of those calls: pipe2(),
 * read() and close() are interposed here.  A pipe made while this thread
 * unwinds for memdbg is moved to high descriptor numbers (out of the way of
 * ordinary opens) and its identity (device, inode) kept.  libunwind's
 * read() of its pipe, which comes before any write, checks that both
 * numbers still name that pipe; if not, the read fails as on a closed
 * pipe, libunwind's close() of a number that is no longer its own does
 * nothing, and its pipe2() gets a fresh pipe.  Those checks run only when
 * libunwind validates memory (rare: frames it cannot unwind by their CFI),
 * not before every unwind as they did (two fstat per capture).
 * libunwind's close() of its pipe is never carried out: the pipe is one
 * for all threads, and when two of them found it broken at once (the
 * program had closed its numbers), the second one's close() hit the pipe
 * the first had just made, whose write end the first then wrote to with
 * no reader left: SIGPIPE killed the program.  For the same reason the
 * pipe is made under a lock, in a local pair that reaches libunwind's
 * array only once both numbers are final: the pair pipe2() writes and the
 * numbers move_high() closes would otherwise be libunwind's array itself,
 * where another thread reads the write end in between.  A thread that
 * comes second gets the pipe the first one made, if it is still ours.
 *
 * Signals.  libunwind blocks every signal around its global cache lock and
 * its dl_iterate_phdr lookups: 2 to 4 rt_sigprocmask calls per frame it
 * steps (its per-thread cache, which would not lock, is not built into
 * Debian's library).  What the mask protects against is a signal handler
 * on the same thread entering libunwind while it holds that lock.  memdbg
 * itself never unwinds in a handler that interrupted its own unwind
 * (md_unwind_begin refuses), so libunwind's calls made while memdbg
 * unwinds are skipped.  A program that installed a handler of its own
 * (which might unwind: a profiler's SIGPROF) gets its signals blocked for
 * the whole unwind, from md_unwind_begin on, instead of libunwind's
 * per-frame pairs: a handler that ran inside the unwind would find
 * `unwinding` set and have its own libunwind calls skipped too.  A
 * program without handlers makes no call at all.
 *
 * All of this rests on seeing libunwind's own calls (caller address in
 * its code).  Another preloaded library that wraps read(), close() or
 * pipe2() (fd tracers, sandboxes) hides that; then every unwind checks
 * the pipe's numbers first, with two fstat, and does not unwind when they
 * are no longer libunwind's, as memdbg did before. */
#include "stack/stack.h"
#include <errno.h>
#include <fcntl.h>
#include <dlfcn.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

extern ssize_t __read(int, void *, size_t);
extern int __close(int);

static MEMDBG_TLS int unwinding;      /* this thread is in libunwind for memdbg */
static MEMDBG_TLS sigset_t unwind_saved_mask;
static int pipe_fd[2] = { -1, -1 };   /* libunwind's pipe, as pipe2 returned it */
static dev_t pipe_dev;
static ino_t pipe_ino;
static uintptr_t unwind_text_lo, unwind_text_hi;   /* libunwind's code */
static int program_handlers;          /* the program installed a signal handler */
static bool calls_seen_direct;        /* libunwind's read/close/pipe2 reach us first */
static int fork_gate;                 /* a fork is waiting or in progress */
static int unwinds_in_flight;         /* threads between the fork gate and md_unwind_end */

void md_unwind_note_program_handler(void)
{
    __atomic_store_n(&program_handlers, 1, __ATOMIC_RELAXED);
}

static int find_libunwind(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    uintptr_t addr = (uintptr_t)data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (addr >= lo && addr < hi) {
            unwind_text_lo = lo;
            unwind_text_hi = hi;
            return 1;
        }
    }
    return 0;
}

/* Called once, single-threaded, before the first unwind: where libunwind's
 * code is, so that only its own calls are changed below. */
/* Whether the program's calls of @name reach this library's definition
 * first, not another preloaded library's wrapper. */
static bool ours_first(const char *name)
{
    Dl_info mine, theirs;
    void *found = dlsym(RTLD_DEFAULT, name);
    return found && dladdr((void *)ours_first, &mine) && dladdr(found, &theirs) &&
           mine.dli_fbase == theirs.dli_fbase;
}

void md_unwind_fds_init(void *libunwind_function)
{
    dl_iterate_phdr(find_libunwind, libunwind_function);
    calls_seen_direct = unwind_text_hi > unwind_text_lo && ours_first("read") &&
                        ours_first("close") && ours_first("pipe2");
}

/* A call made by libunwind while it unwinds for memdbg (not by a signal
 * handler of the program's that interrupted it). */
static inline bool libunwind_for_memdbg(const void *caller)
{
    return unwinding && (uintptr_t)caller - unwind_text_lo < unwind_text_hi - unwind_text_lo;
}

/* The lowest number to move the pipe to: near the top of the usual 1024
 * limit, where programs rarely open anything. */
static int high_fd_base(void)
{
    struct rlimit rl;
    long limit = 1024;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        limit = (long)rl.rlim_cur;
    if (limit > 1024) limit = 1024;
    long base = limit - 40;
    return base < 3 ? 3 : (int)base;
}

static void move_high(int *fd, int base)
{
    int high = fcntl(*fd, F_DUPFD_CLOEXEC, base);
    if (high < 0) return;   /* nothing free up there: keep the low number */
    __close(*fd);
    *fd = high;
}

/* Still libunwind's pipe. */
static bool fd_still_ours(int fd)
{
    struct stat st;
    int saved = errno;
    bool ours = fstat(fd, &st) == 0 && st.st_dev == pipe_dev && st.st_ino == pipe_ino;
    errno = saved;
    return ours;
}

/* Held while a thread makes libunwind's pipe; reset in a forked child,
 * where its holder does not exist. */
static int pipe_lock;

static void lock_pipe(void)
{
    while (__atomic_exchange_n(&pipe_lock, 1, __ATOMIC_ACQUIRE))
        sched_yield();
}

static void unlock_pipe(void)
{
    __atomic_store_n(&pipe_lock, 0, __ATOMIC_RELEASE);
}

void md_unwind_fds_fork_child(void)
{
    pipe_lock = 0;
    __atomic_store_n(&unwinds_in_flight, unwinding ? 1 : 0, __ATOMIC_RELAXED);
    __atomic_store_n(&fork_gate, 0, __ATOMIC_RELEASE);
}

/* libunwind's pipe: the one another thread made meanwhile if it is still
 * ours, else a new one at high numbers. */
static int make_unwind_pipe(int fds[2], int flags)
{
    lock_pipe();
    if (pipe_fd[0] >= 0 && fd_still_ours(pipe_fd[0]) && fd_still_ours(pipe_fd[1])) {
        fds[0] = pipe_fd[0];
        fds[1] = pipe_fd[1];
        unlock_pipe();
        return 0;
    }
    int made[2];
    int ret = (int)syscall(SYS_pipe2, made, flags);
    if (ret == 0) {
        int base = high_fd_base();
        move_high(&made[0], base);
        move_high(&made[1], base);
        struct stat st;
        if (fstat(made[0], &st) == 0) {
            pipe_dev = st.st_dev;
            pipe_ino = st.st_ino;
        }
        pipe_fd[0] = made[0];
        pipe_fd[1] = made[1];
        fds[0] = made[0];
        fds[1] = made[1];
    }
    unlock_pipe();
    return ret;
}

MEMDBG_API int pipe2(int fds[2], int flags)
{
    /* Only libunwind's pipe (not one a signal handler makes meanwhile);
     * behind a wrapper its caller cannot be seen: any pipe made while
     * unwinding, as before. */
    if (unwinding && (!calls_seen_direct || libunwind_for_memdbg(__builtin_return_address(0))))
        return make_unwind_pipe(fds, flags);
    return (int)syscall(SYS_pipe2, fds, flags);
}

MEMDBG_API ssize_t read(int fd, void *buf, size_t n)
{
    if (__builtin_expect(unwinding, 0) && fd == pipe_fd[0] &&
        libunwind_for_memdbg(__builtin_return_address(0))) {
        /* libunwind is about to validate an address: its next write goes
         * to pipe_fd[1], so both must still be its pipe. */
        if (!fd_still_ours(pipe_fd[0]) || !fd_still_ours(pipe_fd[1])) {
            errno = EBADF;   /* it reopens: close (below), pipe2 (above) */
            return -1;
        }
    }
    return __read(fd, buf, n);
}

MEMDBG_API int close(int fd)
{
    /* the number is the program's now (not libunwind's to close), or
     * another thread may be writing to the pipe (above) */
    if (__builtin_expect(unwinding, 0) && fd >= 0 && (fd == pipe_fd[0] || fd == pipe_fd[1]) &&
        libunwind_for_memdbg(__builtin_return_address(0)))
        return 0;
    return __close(fd);
}

/* The signals a program's handler might unwind in, blocked for a whole
 * unwind.  Faults stay deliverable (a fault with its signal blocked
 * kills). */
static void block_program_signals(void)
{
    sigset_t async;
    sigfillset(&async);
    sigdelset(&async, SIGSEGV);
    sigdelset(&async, SIGBUS);
    sigdelset(&async, SIGFPE);
    sigdelset(&async, SIGILL);
    sigdelset(&async, SIGTRAP);
    sigdelset(&async, SIGSYS);   /* seccomp's trap: forced, so blocked would kill */
    pthread_sigmask(SIG_BLOCK, &async, &unwind_saved_mask);
    unwinding = 2;
}

MEMDBG_API int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
    if (libunwind_for_memdbg(__builtin_return_address(0))) {
        /* libunwind is about to lock or look up a module: the signals
         * that matter are blocked already (md_unwind_begin). */
        if (old) sigemptyset(old);   /* only ever handed back to this function */
        return 0;
    }
    int err = pthread_sigmask(how, set, old);
    if (err) {
        errno = err;
        return -1;
    }
    return 0;
}

/* fork() and libunwind.  libunwind's global cache lock is a mutex that no
 * fork handler resets: a child forked while another thread steps a frame
 * under it waits for it forever at its first unwind.  So a fork waits
 * until no thread is inside libunwind, and holds new unwinds back at the
 * gate until it is done.  A thread that holds the heap lock does not wait
 * at the gate (the fork waits for that lock next): it skips its unwind. */

static bool pass_fork_gate(void)
{
    for (;;) {
        while (__atomic_load_n(&fork_gate, __ATOMIC_ACQUIRE)) {
            if (md_heap_lock_mine()) return false;
            sched_yield();
        }
        __atomic_add_fetch(&unwinds_in_flight, 1, __ATOMIC_SEQ_CST);
        if (!__atomic_load_n(&fork_gate, __ATOMIC_SEQ_CST)) return true;
        __atomic_sub_fetch(&unwinds_in_flight, 1, __ATOMIC_SEQ_CST);
    }
}

void md_unwind_fork_prepare(void)
{
    __atomic_store_n(&fork_gate, 1, __ATOMIC_SEQ_CST);
    /* A fork from a handler that interrupted this thread's own unwind
     * (a fault inside it) counts that unwind as its own. */
    int own = unwinding ? 1 : 0;
    /* Bounded: a thread stuck inside libunwind must not hang the fork
     * (its child may then hang as before, nothing worse). */
    for (long spins = 0; spins < 2000000; spins++) {
        if (__atomic_load_n(&unwinds_in_flight, __ATOMIC_SEQ_CST) <= own) return;
        sched_yield();
    }
}

void md_unwind_fork_parent(void)
{
    __atomic_store_n(&fork_gate, 0, __ATOMIC_RELEASE);
}

bool md_unwind_begin(void)
{
    if (unwinding) return false;   /* a handler interrupted memdbg's unwind */
    if (!calls_seen_direct && pipe_fd[0] >= 0 &&
        (!fd_still_ours(pipe_fd[0]) || !fd_still_ours(pipe_fd[1])))
        return false;   /* the program has the pipe's numbers: no unwind */
    if (!pass_fork_gate()) return false;
    /* Blocked before `unwinding` is set: no handler of the program's runs
     * while it is. */
    if (__atomic_load_n(&program_handlers, __ATOMIC_RELAXED))
        block_program_signals();
    else
        unwinding = 1;
    return true;
}

void md_unwind_end(void)
{
    if (unwinding == 2) {
        int saved = errno;
        pthread_sigmask(SIG_SETMASK, &unwind_saved_mask, 0);
        errno = saved;
    }
    unwinding = 0;
    __atomic_sub_fetch(&unwinds_in_flight, 1, __ATOMIC_SEQ_CST);
}
