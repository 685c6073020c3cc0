/* libunwind (1.6) checks that a stack word is readable by write(2)ing it
 * to a pipe it opens once, at its first unwind, and keeps in a static
 * array for the life of the process; when a read from that pipe fails it
 * closes both numbers and opens a new pipe.  A program that closes every
 * descriptor >= 3 (closefrom, daemons, test harnesses) and opens its own
 * files gets those numbers, and the next unwind reads from, writes a byte
 * into or closes the program's file.
 *
 * memdbg cannot reach libunwind's array, but it opens the pipe: pipe2() is
 * interposed here, and a pipe made while this thread unwinds for memdbg is
 * moved to high descriptor numbers, out of the way of ordinary opens.
 * Before each unwind the numbers are checked to still name that pipe (or
 * nothing: libunwind then reopens it, through pipe2 again).  If the program
 * took one of them (dup2 onto it, or a thousand files open), libunwind is
 * not called again: stacks shrink to their first frame, said once. */
#include "memdbg.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static MEMDBG_TLS int unwinding;      /* this thread is in libunwind for memdbg */
static int pipe_fd[2] = { -1, -1 };   /* libunwind's pipe, as pipe2 returned it */
static dev_t pipe_dev;
static ino_t pipe_ino;
static int unwind_lost;               /* the program owns one of the numbers */

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
    close(*fd);
    *fd = high;
}

MEMDBG_API int pipe2(int fds[2], int flags)
{
    int ret = (int)syscall(SYS_pipe2, fds, flags);
    if (ret != 0 || !unwinding) return ret;
    int base = high_fd_base();
    move_high(&fds[0], base);
    move_high(&fds[1], base);
    struct stat st;
    if (fstat(fds[0], &st) == 0) {
        pipe_dev = st.st_dev;
        pipe_ino = st.st_ino;
    }
    pipe_fd[0] = fds[0];
    pipe_fd[1] = fds[1];
    return 0;
}

/* Still libunwind's pipe, or closed (libunwind reopens it). */
static bool fd_still_ours(int fd)
{
    struct stat st;
    if (fd < 0) return true;
    if (fstat(fd, &st) != 0) return errno == EBADF;
    return st.st_dev == pipe_dev && st.st_ino == pipe_ino;
}

bool md_unwind_begin(void)
{
    if (__atomic_load_n(&unwind_lost, __ATOMIC_RELAXED)) return false;
    int saved = errno;
    bool ok = fd_still_ours(pipe_fd[0]) && fd_still_ours(pipe_fd[1]);
    errno = saved;
    if (!ok) {
        if (!__atomic_exchange_n(&unwind_lost, 1, __ATOMIC_RELAXED)) {
            static const char msg[] = "memdbg: warning: the program took the descriptors of "
                "libunwind's pipe; malloc/free stacks keep their first frame only from now on\n";
            md_write_all(md_report_fd(), msg, sizeof msg - 1);
        }
        errno = saved;
        return false;
    }
    unwinding++;
    return true;
}

void md_unwind_end(void)
{
    unwinding--;
}
