// SPDX-License-Identifier: MIT
/* Where reports go: stderr (or the copy kept when the program closed it),
 * or the log_path option's file, opened on the first report; the lock
 * that keeps one report or warning at a time; and the one way to warn.
 * Async-signal-safe, like the formatting in out.c it writes through. */
#include "base/base.h"
#include "base/options.h"
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

static int report_fd = -1;
static int saved_stderr = -1;

/* Programs like sort(1) close stderr before exit (gnulib close_stdout);
 * keep a copy so the leak report at exit still has somewhere to go. */
void md_save_stderr(void)
{
    if (saved_stderr < 0) saved_stderr = fcntl(2, F_DUPFD_CLOEXEC, 100);
}

static bool streq(const char *a, const char *b)
{
    while (*a && *a == *b) { a++; b++; }
    return *a == *b;
}

/* stderr, or the copy kept by md_save_stderr when the program closed it */
static int stderr_fd(void)
{
    if (fcntl(2, F_GETFD) < 0 && saved_stderr >= 0) return saved_stderr;
    return 2;
}

/* log_path=P writes to P.PID, opened on the first report so clean runs
 * leave no files behind.  As in ASan, "stderr" and "stdout" name the
 * streams themselves (so do /dev/stderr and /dev/stdout: no file
 * /dev/stderr.PID can exist).  open(2) is async-signal-safe. */
int md_report_fd(void)
{
    if (report_fd >= 0) return report_fd;
    const char *lp = md_opt.log_path;
    if (!lp[0] || streq(lp, "stderr") || streq(lp, "/dev/stderr")) return stderr_fd();
    if (streq(lp, "stdout") || streq(lp, "/dev/stdout")) return fcntl(1, F_GETFD) < 0 ? stderr_fd() : 1;
    char path[sizeof md_opt.log_path + 24];
    struct md_buf b;
    md_buf_init(&b, path, sizeof path - 1, -1);
    md_puts(&b, lp);
    md_putc(&b, '.');
    md_putu(&b, (unsigned long long)getpid());
    path[b.len] = 0;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    report_fd = fd >= 0 ? fd : 2;
    return report_fd;
}

/* After fork the child must open its own log file. */
void md_report_fd_reset(void)
{
    if (report_fd > 2) close(report_fd);
    report_fd = -1;
}

/* One report or warning at a time, process-wide.  The lock remembers
 * nothing about its owner but this thread's nesting depth (a report
 * prints its ABORTING line, a fault report calls md_report_error, a
 * warning may come from inside a report, all under the same lock). */
static int report_lock;
static MEMDBG_TLS int report_depth;

void md_report_lock(void)
{
    if (report_depth++ > 0) return;
    while (__atomic_exchange_n(&report_lock, 1, __ATOMIC_ACQUIRE)) sched_yield();
}

void md_report_unlock(void)
{
    if (--report_depth > 0) return;
    __atomic_store_n(&report_lock, 0, __ATOMIC_RELEASE);
}

bool md_in_report(void)
{
    return report_depth > 0;
}

/* fork() copies only the calling thread: a lock held by another thread
 * would never be released in the child. */
void md_report_lock_fork_child(void)
{
    __atomic_store_n(&report_lock, 0, __ATOMIC_RELAXED);
    report_depth = 0;
}

static void warn_begin_on(struct md_buf *b, char *mem, size_t cap, int fd)
{
    md_report_lock();
    md_buf_init(b, mem, cap, fd);
    md_puts(b, "==");
    md_putu(b, (unsigned long long)getpid());
    md_puts(b, "==WARNING: memdbg: ");
}

void md_warn_begin(struct md_buf *b, char *mem, size_t cap)
{
    warn_begin_on(b, mem, cap, md_report_fd());
}

void md_warn_end(struct md_buf *b)
{
    md_flush(b);
    md_report_unlock();
}

/* At start-up (options, backend choice) the log file is not open yet:
 * these warnings go to stderr. */
void md_warn3(const char *a, const char *b, size_t blen, const char *c)
{
    char mem[256];
    struct md_buf buf;
    warn_begin_on(&buf, mem, sizeof mem, 2);
    md_puts(&buf, a);
    for (size_t i = 0; i < blen; i++) md_putc(&buf, b[i]);
    md_puts(&buf, c);
    md_warn_end(&buf);
}

void md_check_failed(const char *file, int line, const char *cond)
{
    char mem[512];
    struct md_buf b;
    md_report_lock();
    md_buf_init(&b, mem, sizeof mem, md_report_fd());
    md_puts(&b, "==");
    md_putu(&b, (unsigned long long)getpid());
    md_puts(&b, "==memdbg: CHECK failed: ");
    md_puts(&b, file);
    md_putc(&b, ':');
    md_putu(&b, (unsigned long long)line);
    md_puts(&b, ": ");
    md_puts(&b, cond);
    md_putc(&b, '\n');
    md_flush(&b);
    abort();
}
