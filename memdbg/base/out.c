/* SPDX-License-Identifier: MIT */
/* Formatting for reports: a fixed buffer that is flushed with write(2).  Used
 * from the SIGSEGV handler, so: no stdio, no malloc, no locks. */
#include "base/base.h"
#include <errno.h>
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
