/* SPDX-License-Identifier: MIT */
/* LeakSanitizer-style suppressions: `suppressions=FILE` (and the text a
 * program's own __lsan_default_suppressions() returns) holds lines
 * `leak:PATTERN`; `#` starts a comment.  A leak is suppressed when PATTERN
 * matches the function name, the source file or the module path of any
 * frame of its allocation stack (memdbg's own frames aside).  As in LSan a
 * pattern matches anywhere in the name unless anchored with `^` / `$`, and
 * `*` matches any run of characters.  Read at the first leak check, with
 * md_in_runtime set (allocations come from the internal pool). */

#include "leak/leak.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>


struct supp { const char *pattern; size_t count, bytes; };
static struct supp *supps;
static int nsupps, cap_supps;
static bool loaded;

static void warn(const char *src, unsigned line, const char *why, const char *text, size_t len)
{
    char mem[256];
    struct md_buf buf, *b = &buf;
    md_warn_begin(b, mem, sizeof mem);
    md_puts(b, "suppressions ");
    md_puts(b, src);
    if (line) { md_putc(b, ':'); md_putu(b, line); }
    md_puts(b, ": ");
    md_puts(b, why);
    if (text) {
        md_puts(b, ": '");
        for (size_t i = 0; i < len; i++) md_putc(b, text[i]);
        md_putc(b, '\'');
    }
    md_puts(b, "; line ignored\n");
    md_warn_end(b);
}

static void add(const char *p, size_t len)
{
    if (nsupps == cap_supps) {
        int ncap = cap_supps ? cap_supps * 2 : 16;
        struct supp *n = md_internal_alloc((size_t)ncap * sizeof *n, 16);
        if (!n) return;
        if (supps) memcpy(n, supps, (size_t)nsupps * sizeof *n);
        supps = n;
        cap_supps = ncap;
    }
    char *s = md_internal_alloc(len + 1, 1);
    if (!s) return;
    memcpy(s, p, len);
    s[len] = 0;
    supps[nsupps++] = (struct supp){ s, 0, 0 };
}

static bool blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

/* Parses text of one source (a file name, or the callback) line by line. */
static void parse(const char *src, const char *t, size_t len)
{
    unsigned lineno = 0;
    const char *p = t, *end = t + len;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol) eol = end;
        lineno++;
        const char *a = p, *z = eol;
        p = eol + 1;
        while (a < z && blank(*a)) a++;
        while (z > a && blank(z[-1])) z--;
        if (a == z || *a == '#') continue;
        const char *colon = memchr(a, ':', (size_t)(z - a));
        if (!colon) { warn(src, lineno, "expected 'leak:PATTERN'", a, (size_t)(z - a)); continue; }
        if (colon - a != 4 || memcmp(a, "leak", 4) != 0) {
            warn(src, lineno, "unknown suppression type (memdbg knows 'leak')", a, (size_t)(z - a));
            continue;
        }
        const char *pat = colon + 1;
        while (pat < z && blank(*pat)) pat++;
        if (pat == z) { warn(src, lineno, "empty pattern", a, (size_t)(z - a)); continue; }
        add(pat, (size_t)(z - pat));
    }
}

static void load(void)
{
    loaded = true;
    if (md_opt.suppressions[0]) {
        int fd = open(md_opt.suppressions, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            warn(md_opt.suppressions, 0, errno == ENOENT ? "file not found" : "cannot be read", 0, 0);
        } else {
            size_t cap = 4096, n = 0;
            char *t = md_internal_alloc(cap, 16);
            while (t) {
                if (n == cap) { t = md_internal_realloc(t, cap * 2); cap *= 2; if (!t) break; }
                ssize_t r = read(fd, t + n, cap - n);
                if (r < 0 && errno == EINTR) continue;
                if (r <= 0) break;
                n += (size_t)r;
            }
            close(fd);
            if (t) parse(md_opt.suppressions, t, n);
        }
    }
    /* LSan lets a program build suppressions in: const char *__lsan_default_suppressions(void) */
    const char *(*builtin)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "__lsan_default_suppressions");
    if (builtin) {
        const char *t = builtin();
        if (t) parse("from __lsan_default_suppressions()", t, md_strlen(t));
    }
}

/* '*' glob of [p, pe) over [s, se); any_start / any_end act as an
 * implicit '*' before / after the pattern (LSan's unanchored match). */
static bool glob(const char *p, const char *pe, const char *s, const char *se, bool any_start, bool any_end)
{
    const char *star = any_start ? p : 0, *resume = s;
    while (s < se) {
        if (p == pe && any_end) return true;
        if (p < pe && *p == '*') { star = ++p; resume = s; continue; }
        if (p < pe && *p == *s) { p++; s++; continue; }
        if (!star) return false;
        p = star;
        s = ++resume;
    }
    while (p < pe && *p == '*') p++;
    return p == pe;
}

/* LSan's template match: anywhere in the name unless anchored by ^ or $. */
static bool template_match(const char *pat, const char *s, size_t slen)
{
    if (!s || !slen) return false;
    size_t plen = md_strlen(pat);
    bool start = plen && pat[0] == '^';
    bool end = plen > (size_t)start && pat[plen - 1] == '$';
    return glob(pat + start, pat + plen - end, s, s + slen, !start, !end);
}

/* Splits md_frame_location's "in FUNC FILE:LINE" / "in FUNC (MODULE+0x..)"
 * into the function and the file (either may be missing). */
static void split_location(const char *t, size_t n, const char **fn, size_t *fnlen, const char **file, size_t *filelen)
{
    *fn = *file = 0;
    *fnlen = *filelen = 0;
    while (n && t[0] == ' ') { t++; n--; }
    const char *end = t + n;
    const char *rest = t;
    if (n > 3 && memcmp(t, "in ", 3) == 0) rest = t + 3;
    const char *cut = end;
    if (n && end[-1] == ')') {
        for (const char *q = end - 1; q > rest; q--)
            if (q[0] == '(' && (q == rest || q[-1] == ' ')) { cut = q; break; }
    } else {
        const char *sp = 0;
        for (const char *q = rest; q < end; q++) if (*q == ' ') sp = q;
        if (sp || rest == t) {
            const char *f = sp ? sp + 1 : rest;
            *file = f;
            *filelen = (size_t)(end - f);
            for (const char *q = end - 1; q > f; q--) if (*q == ':') { *filelen = (size_t)(q - f); break; }
            cut = sp ? sp : rest;
        }
    }
    while (cut > rest && cut[-1] == ' ') cut--;
    if (rest != t) { *fn = rest; *fnlen = (size_t)(cut - rest); }
}

/* The first suppression matching the frame's module path, function or
 * source file (the frame is symbolized once for all patterns), or -1. */
static int frame_match(uintptr_t pc)
{
    const char *module = md_module_of(pc - 1);
    char mem[1024];
    struct md_buf b;
    md_buf_init(&b, mem, sizeof mem, -1);
    md_frame_location(&b, pc, true);
    const char *fn, *file;
    size_t fnlen, filelen;
    split_location(mem, b.len, &fn, &fnlen, &file, &filelen);
    for (int k = 0; k < nsupps; k++) {
        const char *pat = supps[k].pattern;
        if (module && template_match(pat, module, md_strlen(module))) return k;
        if (!fn && !file ? template_match(pat, mem, b.len)
                         : template_match(pat, fn, fnlen) || template_match(pat, file, filelen))
            return k;
    }
    return -1;
}

bool md_have_suppressions(void)
{
    if (!loaded) load();
    return nsupps > 0;
}

/* The suppression matching this allocation stack, or -1. */
int md_suppression_for(uint32_t stack)
{
    if (!md_have_suppressions()) return -1;
    const uintptr_t *f;
    int n = md_depot_get(stack, &f);
    for (int i = 0; i < n; i++) {
        if (f[i] - md_heap.self_start < md_heap.self_end - md_heap.self_start) continue;
        int k = frame_match(f[i]);
        if (k >= 0) return k;
    }
    return -1;
}

void md_suppression_hit(int k, size_t bytes)
{
    supps[k].count++;
    supps[k].bytes += bytes;
}

/* LSan's table of the suppressions that matched in this check (counts
 * reset for the next one). */
void md_print_suppressions_used(struct md_buf *b)
{
    bool any = false;
    for (int k = 0; k < nsupps; k++) any |= supps[k].count > 0;
    if (!any) return;
    md_puts(b, "-----------------------------------------------------\n");
    md_puts(b, "Suppressions used:\n");
    md_puts(b, "  count      bytes template\n");
    for (int k = 0; k < nsupps; k++) {
        if (!supps[k].count) continue;
        char num[24];
        struct md_buf nb;
        md_buf_init(&nb, num, sizeof num, -1);
        md_putu(&nb, supps[k].count);
        for (size_t i = nb.len; i < 7; i++) md_putc(b, ' ');
        for (size_t i = 0; i < nb.len; i++) md_putc(b, num[i]);
        md_buf_init(&nb, num, sizeof num, -1);
        md_putu(&nb, supps[k].bytes);
        md_putc(b, ' ');
        for (size_t i = nb.len; i < 10; i++) md_putc(b, ' ');
        for (size_t i = 0; i < nb.len; i++) md_putc(b, num[i]);
        md_putc(b, ' ');
        md_puts(b, supps[k].pattern);
        md_putc(b, '\n');
        supps[k].count = supps[k].bytes = 0;
    }
    md_puts(b, "-----------------------------------------------------\n");
}
