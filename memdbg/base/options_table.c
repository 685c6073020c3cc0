/* SPDX-License-Identifier: MIT */
/* The rows of options.inc as a table, and the parser of one option value.
 * Nothing here writes or allocates: the library parses MEMDBG_OPTIONS with
 * it before malloc works, and the docs generator links it on the host. */
#include "base/options_table.h"
#include <stddef.h>
#include <string.h>
#include <limits.h>

const char *const md_backend_names[] = {
#define MD_BACKEND(id, name) [MD_BACKEND_##id] = name,
#include "base/options.inc"
    0,
};

const char *const md_log_format_names[] = {
#define MD_LOG_FORMAT(id, name) [MD_LOG_FORMAT_##id] = name,
#include "base/options.inc"
    0,
};

const char *const *md_option_enum_names(const struct md_option_desc *d)
{
    return d->target == MD_OPTION_ID_log_format ? md_log_format_names : md_backend_names;
}

const struct md_option_desc md_option_table[MD_OPTION_ID_COUNT] = {
#define MD_OPTION(type, name, dflt, lo, hi, doc, details) \
    [MD_OPTION_ID_##name] = { #name, MD_OPTION_TYPE_##type, MD_OPTION_ID_##name, offsetof(struct md_options, name), \
                           dflt, lo, hi, doc, details },
#define MD_OPTION_ALIAS(type, name, target, lo, hi, doc, details) \
    [MD_OPTION_ID_##name] = { #name, MD_OPTION_TYPE_##type, MD_OPTION_ID_##target, offsetof(struct md_options, target), \
                           0, lo, hi, doc, details },
#include "base/options.inc"
};

const struct md_env_option md_env_option_table[] = {
#define MD_ENV_OPTION(variable, option, value_when_false, doc) \
    { #variable, MD_OPTION_ID_##option, value_when_false, doc },
#include "base/options.inc"
};
const size_t md_env_option_count = sizeof md_env_option_table / sizeof *md_env_option_table;

/* struct md_options.given has a bit per row. */
_Static_assert(MD_OPTION_ID_COUNT <= 64, "struct md_options.given holds 64 options");

static size_t cstr_len(const char *s)
{
    size_t n = 0;
    while (s[n]) n++;
    return n;
}

static bool eq(const char *a, size_t alen, const char *b)
{
    return cstr_len(b) == alen && memcmp(a, b, alen) == 0;
}

const struct md_option_desc *md_option_find(const char *name, size_t len)
{
    for (size_t i = 0; i < MD_OPTION_ID_COUNT; i++)
        if (eq(name, len, md_option_table[i].name)) return &md_option_table[i];
    return 0;
}

/* ---- text into a bounded buffer ---- */
struct text { char *p; size_t len, cap; };

static void put(struct text *t, const char *s)
{
    for (; *s; s++)
        if (t->len + 1 < t->cap) t->p[t->len++] = *s;
    if (t->cap) t->p[t->len] = 0;
}

static void put_int(struct text *t, long long v)
{
    char d[24];
    size_t n = sizeof d;
    unsigned long long u = v < 0 ? 0 - (unsigned long long)v : (unsigned long long)v;
    d[--n] = 0;
    do { d[--n] = (char)('0' + u % 10); u /= 10; } while (u);
    if (v < 0) d[--n] = '-';
    put(t, d + n);
}

/* 16M, 64G, 16T: sizes of a mebibyte and up with a whole suffix (smaller
 * ones, like 4096, read better as numbers). */
static void put_size(struct text *t, long long v)
{
    static const char suffix[] = "TGM";
    for (int i = 0; i < 3; i++) {
        int shift = 40 - 10 * i;
        if (v >= 1LL << shift && v % (1LL << shift) == 0) {
            char s[2] = { suffix[i], 0 };
            put_int(t, v >> shift);
            put(t, s);
            return;
        }
    }
    put_int(t, v);
}

/* ---- values ---- */

/* Unsigned decimal or 0x hex; with SUFFIX, one K/M/G/T (binary) may end it. */
static bool parse_unsigned(const char *v, size_t len, bool suffix, unsigned long long *out)
{
    unsigned long long val = 0;
    unsigned base = 10;
    size_t i = 0, digits = 0;
    if (len > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) { base = 16; i = 2; }
    for (; i < len; i++, digits++) {
        char c = v[i];
        unsigned d;
        if (c >= '0' && c <= '9') d = (unsigned)(c - '0');
        else if (base == 16 && c >= 'a' && c <= 'f') d = (unsigned)(c - 'a' + 10);
        else if (base == 16 && c >= 'A' && c <= 'F') d = (unsigned)(c - 'A' + 10);
        else break;
        if (val > (ULLONG_MAX - d) / base) return false;
        val = val * base + d;
    }
    if (!digits) return false;
    if (i < len) {
        if (!suffix || i + 1 != len) return false;
        int shift;
        switch (v[i]) {
        case 'k': case 'K': shift = 10; break;
        case 'm': case 'M': shift = 20; break;
        case 'g': case 'G': shift = 30; break;
        case 't': case 'T': shift = 40; break;
        default: return false;
        }
        if (val > (ULLONG_MAX >> shift)) return false;
        val <<= shift;
    }
    if (val > SIZE_MAX) return false;
    *out = val;
    return true;
}

static bool parse_signed(const char *v, size_t len, long long lo, long long hi, long long *out)
{
    bool neg = len > 0 && v[0] == '-';
    unsigned long long u;
    if (!parse_unsigned(v + neg, len - neg, false, &u) || u > (unsigned long long)LLONG_MAX) return false;
    long long r = neg ? -(long long)u : (long long)u;
    if (r < lo || r > hi) return false;
    *out = r;
    return true;
}

static bool in_size_range(const struct md_option_desc *d, unsigned long long v)
{
    return v >= (unsigned long long)d->lo && (d->hi == MD_NO_LIMIT || v <= (unsigned long long)d->hi);
}

bool md_option_parse_bool(const char *v, size_t len, int *out)
{
    if (eq(v, len, "1") || eq(v, len, "true") || eq(v, len, "yes")) { *out = 1; return true; }
    if (eq(v, len, "0") || eq(v, len, "false") || eq(v, len, "no")) { *out = 0; return true; }
    return false;
}

bool md_option_parse(const struct md_option_desc *d, const char *v, size_t len,
                     struct md_options *opts, char *why, size_t why_cap)
{
    void *field = (char *)opts + d->offset;
    unsigned long long u;
    long long n;
    switch (d->type) {
    case MD_OPTION_TYPE_BOOL:
        if (md_option_parse_bool(v, len, (int *)field)) return true;
        break;
    case MD_OPTION_TYPE_INT:
        if (parse_signed(v, len, d->lo, d->hi, &n)) { *(int *)field = (int)n; return true; }
        break;
    case MD_OPTION_TYPE_SIZE:
        if (parse_unsigned(v, len, true, &u) && in_size_range(d, u)) { *(size_t *)field = u; return true; }
        break;
    case MD_OPTION_TYPE_ALIGN:
        if (parse_unsigned(v, len, true, &u) && u <= (unsigned long long)d->hi) {
            if (u == 0) u = 1;    /* EF_ALIGNMENT=0 means byte alignment */
            if (u >= (unsigned long long)d->lo && !(u & (u - 1))) { *(size_t *)field = u; return true; }
        }
        break;
    case MD_OPTION_TYPE_ENUM:
        for (int i = 0; md_option_enum_names(d)[i]; i++)
            if (eq(v, len, md_option_enum_names(d)[i])) { *(int *)field = i; return true; }
        break;
    case MD_OPTION_TYPE_PATH:
        if (len >= (size_t)d->lo && len <= (size_t)d->hi) {
            memcpy(field, v, len);
            ((char *)field)[len] = 0;
            return true;
        }
        break;
    case MD_OPTION_TYPE_MIB:
        if (parse_signed(v, len, d->lo, d->hi, &n)) { *(size_t *)field = (size_t)n << 20; return true; }
        break;
    }
    struct text t = { why, 0, why_cap };
    char range[64];
    put(&t, "expected ");
    switch (d->type) {
    case MD_OPTION_TYPE_BOOL:
        put(&t, MD_OPTION_BOOL_VALUES);
        break;
    case MD_OPTION_TYPE_INT:
    case MD_OPTION_TYPE_MIB:
        put(&t, "an integer from ");
        put(&t, md_option_accepts(d, range, sizeof range));
        break;
    case MD_OPTION_TYPE_SIZE:
        put(&t, "bytes");
        if (md_option_accepts(d, range, sizeof range)[0]) put(&t, " from ");
        put(&t, range);
        put(&t, " (K, M, G, T suffixes)");
        break;
    case MD_OPTION_TYPE_ALIGN:
        put(&t, "a power of two from ");
        put_size(&t, d->lo);
        put(&t, " to ");
        put_size(&t, d->hi);
        break;
    case MD_OPTION_TYPE_ENUM: {
        const char *const *names = md_option_enum_names(d);
        for (int i = 0; names[i]; i++) {
            if (i) put(&t, names[i + 1] ? ", " : " or ");
            put(&t, names[i]);
        }
        }
        break;
    case MD_OPTION_TYPE_PATH:
        put(&t, "a path of ");
        put(&t, md_option_accepts(d, range, sizeof range));
        put(&t, " bytes");
        break;
    }
    return false;
}

const struct md_option_desc *md_option_set_defaults(struct md_options *opts)
{
    memset(opts, 0, sizeof *opts);
    char why[128];
    for (size_t i = 0; i < MD_OPTION_ID_COUNT; i++) {
        const struct md_option_desc *d = &md_option_table[i];
        /* Aliases have their target's default; an empty path stays empty. */
        if (d->dflt && d->dflt[0] && !md_option_parse(d, d->dflt, cstr_len(d->dflt), opts, why, sizeof why))
            return d;
    }
    return 0;
}

const char *md_option_type_name(const struct md_option_desc *d)
{
    switch (d->type) {
    case MD_OPTION_TYPE_BOOL: return "bool";
    case MD_OPTION_TYPE_INT: return "int";
    case MD_OPTION_TYPE_SIZE: case MD_OPTION_TYPE_ALIGN: return "size";
    case MD_OPTION_TYPE_ENUM: return "enum";
    case MD_OPTION_TYPE_PATH: return "path";
    case MD_OPTION_TYPE_MIB: return "int";
    }
    return "?";
}

char *md_option_accepts(const struct md_option_desc *d, char *buf, size_t cap)
{
    struct text t = { buf, 0, cap };
    put(&t, "");
    switch (d->type) {
    case MD_OPTION_TYPE_BOOL:
        put(&t, "0 or 1");
        break;
    case MD_OPTION_TYPE_INT:
    case MD_OPTION_TYPE_PATH:
        put_int(&t, d->lo);
        put(&t, " to ");
        put_int(&t, d->hi);
        break;
    case MD_OPTION_TYPE_MIB:
        put_int(&t, d->lo);
        put(&t, " to ");
        put_int(&t, d->hi);
        put(&t, " MiB");
        break;
    case MD_OPTION_TYPE_SIZE:
    case MD_OPTION_TYPE_ALIGN:
        if (d->hi == MD_NO_LIMIT) {
            if (d->lo) { put(&t, "at least "); put_size(&t, d->lo); }
            break;
        }
        put_size(&t, d->lo);
        put(&t, " to ");
        put_size(&t, d->hi);
        if (d->type == MD_OPTION_TYPE_ALIGN) put(&t, ", a power of two");
        break;
    case MD_OPTION_TYPE_ENUM:
        for (int i = 0; md_option_enum_names(d)[i]; i++) {
            if (i) put(&t, ", ");
            put(&t, md_option_enum_names(d)[i]);
        }
        break;
    }
    return buf;
}

char *md_option_default_text(const struct md_option_desc *d, char *buf, size_t cap)
{
    struct text t = { buf, 0, cap };
    put(&t, "");
    if (d->type == MD_OPTION_TYPE_MIB) {   /* the target's default, in MiB */
        struct md_options o;
        md_option_set_defaults(&o);
        put_int(&t, (long long)(*(size_t *)((char *)&o + d->offset) >> 20));
    } else {
        put(&t, d->dflt[0] ? d->dflt : "none");
    }
    return buf;
}

char *md_option_value_text(const struct md_option_desc *d, const struct md_options *opts, char *buf, size_t cap)
{
    struct text t = { buf, 0, cap };
    const void *field = (const char *)opts + d->offset;
    put(&t, "");
    switch (d->type) {
    case MD_OPTION_TYPE_BOOL:
    case MD_OPTION_TYPE_INT:
        put_int(&t, *(const int *)field);
        break;
    case MD_OPTION_TYPE_SIZE:
    case MD_OPTION_TYPE_ALIGN:
        put_size(&t, (long long)*(const size_t *)field);
        break;
    case MD_OPTION_TYPE_MIB:
        put_int(&t, (long long)(*(const size_t *)field >> 20));
        break;
    case MD_OPTION_TYPE_ENUM:
        put(&t, md_option_enum_names(d)[*(const int *)field]);
        break;
    case MD_OPTION_TYPE_PATH:
        put(&t, (const char *)field);
        break;
    }
    return buf;
}
