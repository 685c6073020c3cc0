/* Programs a process under memdbg executes.  LD_PRELOAD is inherited, so
 * by default every exec'd program runs under memdbg too, with its leak
 * check and exitcode: a `set -e` script whose tools leak (sort, date)
 * stops at the first one.  With follow_children=0 (memdbg run's default,
 * as valgrind's) the library removes itself from LD_PRELOAD at start, so
 * only this process is checked; its fork children keep memdbg (same
 * image), the programs it executes do not. */
#include "lifecycle/lifecycle.h"
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

static const char *base_name(const char *p, size_t n, size_t *len)
{
    const char *b = p;
    for (size_t i = 0; i < n; i++)
        if (p[i] == '/') b = p + i + 1;
    *len = n - (size_t)(b - p);
    return b;
}

/* LD_PRELOAD entries are separated by ':' or blanks; the ones whose file
 * name is this library's go, the rest keep their order.  The string is
 * edited in place (it only gets shorter); no allocation. */
void md_children_init(void)
{
    if (md_opt.follow_children) return;
    char *v = getenv("LD_PRELOAD");
    Dl_info info;
    if (!v || !dladdr((void *)md_children_init, &info) || !info.dli_fname) return;
    size_t me_len;
    const char *me = base_name(info.dli_fname, md_strlen(info.dli_fname), &me_len);
    char *w = v;
    const char *r = v;
    while (*r) {
        while (*r == ':' || *r == ' ' || *r == '\t') r++;
        const char *e = r;
        while (*r && *r != ':' && *r != ' ' && *r != '\t') r++;
        size_t n = (size_t)(r - e), bl;
        const char *b = base_name(e, n, &bl);
        if (!n || (bl == me_len && !memcmp(b, me, bl))) continue;
        if (w != v) *w++ = ':';
        memmove(w, e, n);
        w += n;
    }
    *w = 0;
    if (w == v) unsetenv("LD_PRELOAD");
}
