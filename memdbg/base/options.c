/* SPDX-License-Identifier: MIT */
/* MEMDBG_OPTIONS=key=value:key=value parsing (ASan convention) plus the
 * Electric Fence EF_* variables, driven by the table of options.inc.  Runs
 * before anything else, so it uses no malloc and no stdio.  As with ASan, an
 * unknown key is reported with a warning and ignored (option strings are
 * often shared between tools and versions), while a bad value of a known key
 * stops the process with a message that names the option, the value and
 * what it accepts. */
#include "base/base.h"
#include "base/options.h"
#include "base/options_table.h"
#include <stdlib.h>
#include <unistd.h>

struct md_options md_opt MEMDBG_HIDDEN;

static void put_slice(struct md_buf *b, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) md_putc(b, s[i]);
}

/* "memdbg: bad value 'V' for option 'K' (from EF_X): expected ...", exit 1 */
static void bad(const char *key, const char *val, size_t vlen, const char *variable, const char *why)
{
    char mem[512];
    struct md_buf b;
    md_buf_init(&b, mem, sizeof mem, 2);
    md_puts(&b, "memdbg: bad value '");
    put_slice(&b, val, vlen);
    md_puts(&b, "' for option '");
    md_puts(&b, key);
    md_puts(&b, "'");
    if (variable) {
        md_puts(&b, " (from ");
        md_puts(&b, variable);
        md_puts(&b, ")");
    }
    md_puts(&b, ": ");
    md_puts(&b, why);
    md_putc(&b, '\n');
    md_flush(&b);
    _exit(1);
}

static void warn_unknown(const char *key, size_t klen)
{
    md_warn3("unknown option '", key, klen, "' in MEMDBG_OPTIONS ignored (MEMDBG_OPTIONS=help=1 lists them)\n");
}

static void set_option(const struct md_option_desc *d, const char *v, size_t vlen, const char *variable)
{
    char why[160];
    if (!md_option_parse(d, v, vlen, &md_opt, why, sizeof why)) bad(d->name, v, vlen, variable, why);
    md_opt.given |= (uint64_t)1 << d->target;
}

/* The Electric Fence variables, in the table's order, so MEMDBG_OPTIONS
 * (parsed next) wins over them. */
static void read_env_options(void)
{
    for (size_t i = 0; i < md_env_option_count; i++) {
        const struct md_env_option *e = &md_env_option_table[i];
        const struct md_option_desc *d = &md_option_table[e->option];
        const char *v = getenv(e->variable);
        if (!v || !*v) continue;
        size_t vlen = md_strlen(v);
        if (!e->value_when_false) {
            set_option(d, v, vlen, e->variable);
            continue;
        }
        /* A boolean variable: only its 0 changes the option. */
        int on;
        if (!md_option_parse_bool(v, vlen, &on)) bad(e->variable, v, vlen, 0, "expected " MD_OPTION_BOOL_VALUES);
        if (!on) set_option(d, e->value_when_false, md_strlen(e->value_when_false), e->variable);
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
        const struct md_option_desc *d = md_option_find(kstart, klen);
        if (d) set_option(d, vstart, (size_t)(s - vstart), 0);
        else warn_unknown(kstart, klen);
    }
}

/* The checks that involve more than one option, or a value the parser
 * accepts but a program may not survive; they warn and go on. */
static void validate(void)
{
    /* Each block keeps the largest power of two dividing its size
     * (alloc/heap.c block_alignment), so alignments 2 to 8 keep what an
     * object of the block's size can need.  1 puts odd-sized blocks at odd
     * addresses, which programs that place a header and then data needing
     * 2-byte alignment in one block do not survive: python3 dies at start
     * (CPython checks that the bytes of its code are 2-aligned). */
    if (md_opt.alignment == 1)
        md_warn3("alignment=1", "", 0,
                 " puts odd-sized blocks at odd addresses: programs that need 2-byte alignment\n"
                 "    inside such blocks fail with it (python3 dies at start; 2, the default, does not)\n");
    md_opt.arena_size &= ~(MD_PAGE - 1);
    md_fit_arena_to_limit();   /* under ulimit -v: the default arena shrinks to fit */
    /* A compact window's block sits at its chunk's end, never at a page
     * start.  (compact=1 without the nonlinear backend is found when the
     * backend is chosen: backend.c.) */
    if (md_opt.compact && md_opt.protect_below) {
        md_warn3("compact=1 is ignored with protect_below=1 (compact blocks end at their chunk's end, not at a page start)",
                 "", 0, "\n");
        md_opt.compact = 0;
    }
}

/* ASan's help=1: every option with its type, range, default and one line,
 * on stderr; the program then runs. */
static void print_help(void)
{
    char mem[2048], text[160];
    struct md_buf b;
    md_buf_init(&b, mem, sizeof mem, 2);
    md_puts(&b, "memdbg: options, as MEMDBG_OPTIONS=key=value:key=value (':', ',' or white space separate them):\n");
    for (size_t i = 0; i < MD_OPTION_ID_COUNT; i++) {
        const struct md_option_desc *d = &md_option_table[i];
        md_puts(&b, "  ");
        md_puts(&b, d->name);
        md_puts(&b, " (");
        md_puts(&b, md_option_type_name(d));
        md_option_accepts(d, text, sizeof text);
        if (d->type != MD_OPTION_TYPE_BOOL && text[0]) {
            md_puts(&b, ": ");
            md_puts(&b, text);
            if (d->type == MD_OPTION_TYPE_PATH) md_puts(&b, " bytes");
        }
        md_puts(&b, "; default ");
        md_puts(&b, md_option_default_text(d, text, sizeof text));
        md_puts(&b, "): ");
        md_puts(&b, d->doc);
        md_putc(&b, '\n');
    }
    md_puts(&b, "memdbg: Electric Fence variables, read before MEMDBG_OPTIONS (which wins over them):\n");
    for (size_t i = 0; i < md_env_option_count; i++) {
        md_puts(&b, "  ");
        md_puts(&b, md_env_option_table[i].variable);
        md_puts(&b, ": ");
        for (const char *s = md_env_option_table[i].doc; *s; s++)
            if (*s != '`') md_putc(&b, *s);
        md_putc(&b, '\n');
    }
    md_flush(&b);
}

void md_options_init(void)
{
    const struct md_option_desc *bad_default = md_option_set_defaults(&md_opt);
    if (bad_default) md_die_msg("memdbg: options.inc: the default of option '", bad_default->name, "' is out of its range");
    read_env_options();
    const char *s = getenv("MEMDBG_OPTIONS");
    if (s) parse_list(s);
    validate();
    if (md_opt.help) print_help();
}
