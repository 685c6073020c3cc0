// SPDX-License-Identifier: MIT
/* Where reports go: stderr (or the copy kept when the program closed it),
 * or the log_path option's file, opened on the first report.  Async-
 * signal-safe, like the formatting in out.c it writes through. */
#include "base/base.h"
#include "base/options.h"
#include <fcntl.h>
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
