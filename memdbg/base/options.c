/* MEMDBG_OPTIONS=key=value:key=value parsing (ASan convention) plus the
 * Electric Fence EF_* variables.  Runs before anything else, so it uses no
 * malloc and no stdio.  As with ASan, an unknown key is reported with a
 * warning and ignored (option strings are often shared between tools and
 * versions), while a bad value of a known key stops the process with a
 * message that names it. */
#include "base/base.h"
#include "base/options.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <limits.h>

struct md_options md_opt MEMDBG_HIDDEN;

static void opt_defaults(void)
{
    md_opt.backend = MD_BACKEND_AUTO;
    md_opt.protect_below = 0;
    md_opt.alignment = 16;                      /* max_align_t, as malloc promises */
    md_opt.quarantine_bytes = (size_t)4 << 30;  /* 4 GiB of address space */
    md_opt.malloc_fill_byte = 0xbe;
    md_opt.max_malloc_fill_size = 4096;
    md_opt.free_fill_byte = -1;
    md_opt.detect_leaks = 1;
    md_opt.exitcode = 1;
    md_opt.abort_on_error = 0;
    md_opt.halt_on_error = 1;
    md_opt.log_path[0] = 0;
    md_opt.malloc_context_size = 16;
    md_opt.verbosity = 0;
    md_opt.print_stats = 0;
    md_opt.arena_size = (size_t)64 << 30;
    md_opt.allow_malloc_0 = 1;
    md_opt.symbolize = 1;
    md_opt.check_at_exit = 1;
    md_opt.background_thread = 0;   /* opt-in: a thread breaks unshare(CLONE_NEWUSER) and the like */
    md_opt.recycle_pages = 0;
    md_opt.free_batch = 1;
    md_opt.fast_unwind_on_malloc = 0;   /* Debian's binaries have no frame pointers */
    md_opt.stack_memo = 1;
    md_opt.compact = 0;
    md_opt.compact_max = 1024;
    md_opt.compact_defer = 0;
}

static void bad(const char *key, const char *val, size_t vlen, const char *why)
{
    char msg[256];
    size_t n = 0;
    const char *parts[] = { "memdbg: bad value '", 0, "' for option '", key, "': ", why, "\n" };
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
        const char *s = parts[i];
        size_t l = s ? md_strlen(s) : vlen;
        if (!s) s = val;
        if (l > sizeof msg - n - 1) l = sizeof msg - n - 1;
        memcpy(msg + n, s, l);
        n += l;
    }
    md_write_all(2, msg, n);
    _exit(1);
}

/* Parses an unsigned number with an optional K/M/G/T suffix (binary). */
static bool parse_size(const char *v, size_t len, size_t *out)
{
    if (len == 0) return false;
    size_t val = 0, i = 0;
    int base = 10;
    if (len > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) { base = 16; i = 2; }
    size_t digits = 0;
    for (; i < len; i++) {
        char c = v[i];
        int d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (base == 16 && c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (base == 16 && c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else break;
        if (val > (SIZE_MAX - d) / base) return false;
        val = val * base + d;
        digits++;
    }
    if (!digits) return false;
    if (i < len) {
        if (i + 1 != len) return false;
        int shift;
        switch (v[i]) {
        case 'k': case 'K': shift = 10; break;
        case 'm': case 'M': shift = 20; break;
        case 'g': case 'G': shift = 30; break;
        case 't': case 'T': shift = 40; break;
        default: return false;
        }
        if (val > (SIZE_MAX >> shift)) return false;
        val <<= shift;
    }
    *out = val;
    return true;
}

static bool parse_int(const char *v, size_t len, long lo, long hi, long *out)
{
    bool neg = len > 0 && v[0] == '-';
    size_t u;
    if (!parse_size(v + neg, len - neg, &u)) return false;
    /* suffixes are allowed only for sizes; reject them here */
    char last = v[len - 1];
    if (!(last >= '0' && last <= '9') && !(len > 2 && (v[1 + neg] == 'x'))) return false;
    if (u > (size_t)LONG_MAX) return false;
    long r = neg ? -(long)u : (long)u;
    if (r < lo || r > hi) return false;
    *out = r;
    return true;
}

static bool eq(const char *a, size_t alen, const char *b)
{
    return md_strlen(b) == alen && memcmp(a, b, alen) == 0;
}

/* Booleans as ASan takes them: 0/1, false/true, no/yes. */
static bool parse_bool(const char *v, size_t len, long *out)
{
    if (eq(v, len, "1") || eq(v, len, "true") || eq(v, len, "yes")) { *out = 1; return true; }
    if (eq(v, len, "0") || eq(v, len, "false") || eq(v, len, "no")) { *out = 0; return true; }
    return false;
}

static void warn_unknown(const char *key, size_t klen)
{
    md_warn3("unknown option '", key, klen, "' in MEMDBG_OPTIONS ignored (see docs/libmemdbg.md)\n");
}

static void set_option(const char *key, size_t klen, const char *v, size_t vlen)
{
    char k[64];
    if (klen >= sizeof k) klen = sizeof k - 1;
    memcpy(k, key, klen);
    k[klen] = 0;
    long n;
    size_t sz;
#define BOOL_OPT(name, field) \
    if (eq(key, klen, name)) { \
        if (!parse_bool(v, vlen, &n)) bad(k, v, vlen, "expected 0 or 1 (or false/true, no/yes)"); \
        md_opt.field = (int)n; return; }
#define INT_OPT(name, field, lo, hi, why) \
    if (eq(key, klen, name)) { \
        if (!parse_int(v, vlen, lo, hi, &n)) bad(k, v, vlen, why); \
        md_opt.field = (int)n; return; }

    if (eq(key, klen, "backend")) {
        if (eq(v, vlen, "auto")) md_opt.backend = MD_BACKEND_AUTO;
        else if (eq(v, vlen, "nonlinear")) md_opt.backend = MD_BACKEND_NONLINEAR;
        else if (eq(v, vlen, "guard")) md_opt.backend = MD_BACKEND_GUARD;
        else if (eq(v, vlen, "mprotect")) md_opt.backend = MD_BACKEND_MPROTECT;
        else bad(k, v, vlen, "expected auto, nonlinear, guard or mprotect");
        return;
    }
    BOOL_OPT("protect_below", protect_below)
    if (eq(key, klen, "alignment")) {
        if (!parse_size(v, vlen, &sz) || sz > MD_PAGE) bad(k, v, vlen, "expected a power of two from 1 to 4096");
        if (sz == 0) sz = 1;      /* EF_ALIGNMENT=0 means byte alignment */
        if (sz & (sz - 1)) bad(k, v, vlen, "expected a power of two from 1 to 4096");
        md_opt.alignment = sz;
        return;
    }
    if (eq(key, klen, "quarantine_size_mb")) {
        if (!parse_int(v, vlen, 0, 1L << 30, &n)) bad(k, v, vlen, "expected MiB as a number >= 0");
        md_opt.quarantine_bytes = (size_t)n << 20;
        md_opt.quarantine_set = 1;
        return;
    }
    if (eq(key, klen, "quarantine_size")) {
        if (!parse_size(v, vlen, &sz)) bad(k, v, vlen, "expected bytes, e.g. 4G");
        md_opt.quarantine_bytes = sz;
        md_opt.quarantine_set = 1;
        return;
    }
    INT_OPT("malloc_fill_byte", malloc_fill_byte, -1, 255, "expected -1 (off) or 0..255")
    INT_OPT("free_fill_byte", free_fill_byte, -1, 255, "expected -1 (off) or 0..255")
    if (eq(key, klen, "max_malloc_fill_size")) {
        if (!parse_size(v, vlen, &sz)) bad(k, v, vlen, "expected bytes");
        md_opt.max_malloc_fill_size = sz;
        return;
    }
    BOOL_OPT("detect_leaks", detect_leaks)
    INT_OPT("exitcode", exitcode, 0, 255, "expected 0..255")
    BOOL_OPT("abort_on_error", abort_on_error)
    BOOL_OPT("halt_on_error", halt_on_error)
    if (eq(key, klen, "log_path")) {
        if (vlen == 0 || vlen >= sizeof md_opt.log_path - 24) bad(k, v, vlen, "expected a path");
        memcpy(md_opt.log_path, v, vlen);
        md_opt.log_path[vlen] = 0;
        return;
    }
    INT_OPT("malloc_context_size", malloc_context_size, 0, MD_MAX_FRAMES, "expected 0..64")
    INT_OPT("verbosity", verbosity, 0, 3, "expected 0..3")
    BOOL_OPT("print_stats", print_stats)
    if (eq(key, klen, "arena_size")) {
        if (!parse_size(v, vlen, &sz) || sz < ((size_t)16 << 20) || sz > ((size_t)1 << 44))
            bad(k, v, vlen, "expected bytes between 16M and 16T, e.g. 64G");
        md_opt.arena_size = sz & ~(MD_PAGE - 1);
        return;
    }
    BOOL_OPT("allow_malloc_0", allow_malloc_0)
    BOOL_OPT("symbolize", symbolize)
    BOOL_OPT("check_at_exit", check_at_exit)
    BOOL_OPT("background_thread", background_thread)
    BOOL_OPT("recycle_pages", recycle_pages)
    INT_OPT("free_batch", free_batch, 1, 256, "expected 1..256")
    BOOL_OPT("fast_unwind_on_malloc", fast_unwind_on_malloc)
    BOOL_OPT("stack_memo", stack_memo)
    BOOL_OPT("nonlinear_emulation", nonlinear_emulation)
    BOOL_OPT("compact", compact)
    if (eq(key, klen, "compact_max")) {   /* the largest block two of which share a page */
        if (!parse_size(v, vlen, &sz) || sz > 2000) bad(k, v, vlen, "expected bytes from 0 to 2000");
        md_opt.compact_max = sz;
        return;
    }
    INT_OPT("compact_defer", compact_defer, 0, 512, "expected 0 (guard at once) to 512 frees")
    if (eq(key, klen, "suppressions")) {   /* leaks.c reads it at the first leak check */
        if (vlen == 0 || vlen >= sizeof md_opt.suppressions) bad(k, v, vlen, "expected a path");
        memcpy(md_opt.suppressions, v, vlen);
        md_opt.suppressions[vlen] = 0;
        return;
    }

    warn_unknown(key, klen);
#undef BOOL_OPT
#undef INT_OPT
}

static void set_from_env(const char *env, const char *key)
{
    const char *v = getenv(env);
    if (v && *v) set_option(key, md_strlen(key), v, md_strlen(v));
}

static void parse_list(const char *s);

void md_options_init(void)
{
    opt_defaults();

    /* Electric Fence compatibility first, so MEMDBG_OPTIONS wins. */
    set_from_env("EF_PROTECT_BELOW", "protect_below");
    set_from_env("EF_ALIGNMENT", "alignment");
    set_from_env("EF_ALLOW_MALLOC_0", "allow_malloc_0");
    set_from_env("EF_FILL", "malloc_fill_byte");
    const char *pf = getenv("EF_PROTECT_FREE");
    if (pf && *pf) {
        long n;
        if (!parse_bool(pf, md_strlen(pf), &n)) bad("EF_PROTECT_FREE", pf, md_strlen(pf), "expected 0 or 1");
        if (n == 0) md_opt.quarantine_bytes = 0, md_opt.quarantine_set = 1;
    }

    const char *s = getenv("MEMDBG_OPTIONS");
    if (s) parse_list(s);
    /* Below 16, malloc's promise (max_align_t) is broken on purpose, which
     * programs that keep flags in the low bits of heap pointers do not
     * survive: CPython's garbage collector keeps two in its object headers
     * (python3 dies at start with alignment=1 or 2), tagged-pointer
     * interpreters need 8 or 16. */
    if (md_opt.alignment < 16) {
        char a[8];
        size_t n = sizeof a;
        size_t v = md_opt.alignment;
        do { a[--n] = (char)('0' + v % 10); v /= 10; } while (v);
        md_warn3("alignment=", a + n, sizeof a - n,
              " is below malloc's 16-byte promise: programs that keep flags in the low bits of\n"
              "    heap pointers (e.g. CPython's garbage collector, alignment >= 4) crash with it\n");
    }
}

/* Options are separated as ASan separates them: ':', ',' or white space
 * (so a value cannot hold them either). */
static bool is_separator(char c)
{
    return c == ':' || c == ',' || c == ' ' || c == '\t' || c == '\n';
}

static void parse_list(const char *s)
{
    while (*s) {
        while (is_separator(*s)) s++;
        if (!*s) break;
        const char *kstart = s;
        while (*s && *s != '=' && !is_separator(*s)) s++;
        size_t klen = (size_t)(s - kstart);
        if (*s != '=') {
            static const char m[] = "memdbg: option without '=value' in MEMDBG_OPTIONS: '";
            md_write_all(2, m, sizeof m - 1);
            md_write_all(2, kstart, klen);
            md_write_all(2, "'\n", 2);
            _exit(1);
        }
        s++;
        const char *vstart = s;
        while (*s && !is_separator(*s)) s++;
        set_option(kstart, klen, vstart, (size_t)(s - vstart));
    }
}
