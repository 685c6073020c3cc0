/* Output for reports: a fixed buffer that is flushed with write(2).  Used
 * from the SIGSEGV handler, so: no stdio, no malloc, no locks. */
#include "memdbg.h"
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

size_t md_strlen(const char *s)
{
    size_t n = 0;
    while (s[n]) n++;
    return n;
}

void md_write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return;
        }
        s += w;
        n -= (size_t)w;
    }
}

void md_die_msg(const char *a, const char *b, const char *c)
{
    if (a) md_write_all(2, a, md_strlen(a));
    if (b) md_write_all(2, b, md_strlen(b));
    if (c) md_write_all(2, c, md_strlen(c));
    md_write_all(2, "\n", 1);
    _exit(1);
}

void md_buf_init(struct md_buf *b, char *mem, size_t cap, int fd)
{
    b->p = mem;
    b->len = 0;
    b->cap = cap;
    b->fd = fd;
}

void md_flush(struct md_buf *b)
{
    md_write_all(b->fd, b->p, b->len);
    b->len = 0;
}

void md_putc(struct md_buf *b, char c)
{
    if (b->len == b->cap) md_flush(b);
    b->p[b->len++] = c;
}

void md_puts(struct md_buf *b, const char *s)
{
    while (*s) md_putc(b, *s++);
}

void md_putu(struct md_buf *b, unsigned long long v)
{
    char tmp[24];
    int n = 0;
    do { tmp[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    while (n) md_putc(b, tmp[--n]);
}

void md_puti(struct md_buf *b, long long v)
{
    if (v < 0) { md_putc(b, '-'); md_putu(b, (unsigned long long)-v); }
    else md_putu(b, (unsigned long long)v);
}

void md_putx(struct md_buf *b, unsigned long long v)
{
    char tmp[20];
    int n = 0;
    do { tmp[n++] = "0123456789abcdef"[v & 15]; v >>= 4; } while (v);
    md_putc(b, '0');
    md_putc(b, 'x');
    while (n) md_putc(b, tmp[--n]);
}

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
MEMDBG_HIDDEN void md_report_fd_reset(void)
{
    if (report_fd > 2) close(report_fd);
    report_fd = -1;
}
