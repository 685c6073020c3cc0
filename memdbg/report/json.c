/* SPDX-License-Identifier: MIT */
/* log_format=json: a report as one JSON object on one line, written
 * through the same preallocated buffer and write(2) as the text reports
 * (no stdio, no allocation from the program's heap), so it works in the
 * SIGSEGV handler too.  The writer knows nothing of report kinds: it
 * writes the fields every report carries (schema version, kind, memdbg's
 * version, pid, options in effect) and values and stacks the caller
 * names, so a new kind of report gets JSON by calling it. */
#include "report/report.h"
#include "base/options_table.h"
#include <unistd.h>

#ifndef MEMDBG_VERSION
#define MEMDBG_VERSION "unknown"
#endif

/* The nesting of objects and arrays, and whether each level has a member
 * yet (so the next one is preceded by a comma). */
static void separate(struct md_json *j)
{
    uint32_t bit = (uint32_t)1 << (j->depth & 31);
    if (j->used & bit) md_putc(j->b, ',');
    j->used |= bit;
}

static void key(struct md_json *j, const char *name)
{
    separate(j);
    if (name) {
        md_json_put_string(j->b, name, md_strlen(name));
        md_putc(j->b, ':');
    }
}

/* The length of the well-formed UTF-8 sequence at s (at most n bytes),
 * or 0: overlong forms, surrogates and code points above U+10FFFF are not
 * well-formed (RFC 3629). */
static size_t utf8_sequence(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    unsigned lo = 0x80, hi = 0xbf;   /* the second byte's range */
    if (c >= 0xc2 && c <= 0xdf) len = 2;
    else if (c == 0xe0) { len = 3; lo = 0xa0; }
    else if (c == 0xed) { len = 3; hi = 0x9f; }
    else if (c >= 0xe1 && c <= 0xef) len = 3;
    else if (c == 0xf0) { len = 4; lo = 0x90; }
    else if (c == 0xf4) { len = 4; hi = 0x8f; }
    else if (c >= 0xf1 && c <= 0xf3) len = 4;
    else return 0;
    if (n < len || s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xbf) return 0;
    return len;
}

/* A JSON string of s[0..n): quote, backslash and control characters
 * escaped, well-formed UTF-8 kept, every other byte (file names are bytes,
 * not text) written as U+FFFD, so the result is always valid JSON. */
static void put_escaped(struct md_buf *b, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        unsigned c = u[i];
        if (c >= 0x80) {
            size_t len = utf8_sequence(u + i, n - i);
            if (len) {
                for (size_t k = 0; k < len; k++) md_putc(b, (char)u[i + k]);
                i += len;
            } else {
                md_puts(b, "\\ufffd");
                i++;
            }
            continue;
        }
        i++;
        switch (c) {
        case '"': md_puts(b, "\\\""); continue;
        case '\\': md_puts(b, "\\\\"); continue;
        case '\n': md_puts(b, "\\n"); continue;
        case '\r': md_puts(b, "\\r"); continue;
        case '\t': md_puts(b, "\\t"); continue;
        case '\b': md_puts(b, "\\b"); continue;
        case '\f': md_puts(b, "\\f"); continue;
        }
        if (c < 0x20 || c == 0x7f) {
            md_puts(b, "\\u00");
            md_putc(b, "0123456789abcdef"[c >> 4]);
            md_putc(b, "0123456789abcdef"[c & 15]);
        } else {
            md_putc(b, (char)c);
        }
    }
}

void md_json_put_string(struct md_buf *b, const char *s, size_t n)
{
    md_putc(b, '"');
    put_escaped(b, s, n);
    md_putc(b, '"');
}

void md_json_open(struct md_json *j, const char *name, char bracket)
{
    key(j, name);
    md_putc(j->b, bracket);
    j->depth++;
    j->used &= ~((uint32_t)1 << (j->depth & 31));
}

void md_json_close(struct md_json *j, char bracket)
{
    md_putc(j->b, bracket);
    j->depth--;
}

void md_json_str(struct md_json *j, const char *name, const char *value)
{
    key(j, name);
    if (value) md_json_put_string(j->b, value, md_strlen(value));
    else md_puts(j->b, "null");
}

void md_json_uint(struct md_json *j, const char *name, unsigned long long value)
{
    key(j, name);
    md_putu(j->b, value);
}

/* Addresses as "0x..." strings: JSON numbers are doubles to most
 * readers, exact only up to 2^53. */
void md_json_hex(struct md_json *j, const char *name, unsigned long long value)
{
    key(j, name);
    md_putc(j->b, '"');
    md_putx(j->b, value);
    md_putc(j->b, '"');
}

void md_json_null(struct md_json *j, const char *name)
{
    key(j, name);
    md_puts(j->b, "null");
}

void md_json_bool(struct md_json *j, const char *name, bool value)
{
    key(j, name);
    md_puts(j->b, value ? "true" : "false");
}

static void put_frame(void *ctx, const struct md_frame_info *f)
{
    struct md_json *j = ctx;
    md_json_open(j, 0, '{');
    md_json_hex(j, "pc", f->pc);
    md_json_str(j, "module", f->module);
    if (f->module) md_json_hex(j, "offset", f->offset);
    else md_json_null(j, "offset");
    if (f->function) md_json_str(j, "function", f->function);
    if (f->file) md_json_str(j, "file", f->file);
    if (f->file && f->line > 0) md_json_uint(j, "line", (unsigned)f->line);
    md_json_close(j, '}');
}

void md_json_stack(struct md_json *j, const char *name, const uintptr_t *frames, int n, bool first_exact)
{
    md_json_open(j, name, '[');
    md_stack_frames(frames, n, first_exact, put_frame, j);
    md_json_close(j, ']');
}

/* The options in effect, as MEMDBG_OPTIONS would set them all. */
static void put_options(struct md_json *j)
{
    char text[512];
    key(j, "options");
    md_putc(j->b, '"');
    for (size_t i = 0, n = 0; i < MD_OPTION_ID_COUNT; i++) {
        const struct md_option_desc *d = &md_option_table[i];
        if (d->target != (enum md_option_id)i || d->target == MD_OPTION_ID_help) continue;   /* aliases */
        md_option_value_text(d, &md_opt, text, sizeof text);
        if (n++) md_putc(j->b, ':');
        md_puts(j->b, d->name);
        md_putc(j->b, '=');
        put_escaped(j->b, text, md_strlen(text));   /* a path may hold a quote or a backslash */
    }
    md_putc(j->b, '"');
}

void md_json_begin(struct md_json *j, struct md_buf *b, const char *kind)
{
    j->b = b;
    j->depth = 0;
    j->used = 0;
    md_json_open(j, 0, '{');
    md_json_uint(j, "schema_version", MD_JSON_SCHEMA_VERSION);
    md_json_str(j, "kind", kind);
    md_json_str(j, "memdbg_version", MEMDBG_VERSION);
    md_json_uint(j, "pid", (unsigned long long)getpid());
    put_options(j);
}

void md_json_end(struct md_json *j)
{
    md_json_close(j, '}');
    md_putc(j->b, '\n');
}
