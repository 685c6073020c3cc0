/* SPDX-License-Identifier: MIT */
/* The text of frames and locations (symcore.h), apart from elfutils: the
 * library prints module+offset frames with it before, or without, loading
 * the symbolizer, which prints symbolized ones with the same code. */
#include "symcore.h"
#include <string.h>

static void put(const struct md_sym_out *o, const char *s)
{
    o->write(o->ctx, s, strlen(s));
}

static void put_num(const struct md_sym_out *o, uint64_t v, unsigned base, const char *prefix)
{
    char buf[24];
    int i = (int)sizeof buf;
    do {
        buf[--i] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    put(o, prefix);
    o->write(o->ctx, buf + i, sizeof buf - (size_t)i);
}

/* "in FUNCTION FILE:LINE", "in FUNCTION (MODULE+0xOFF)", " (MODULE+0xOFF)":
 * AddressSanitizer's "%F %L" (in a frame line, the blank stays when there
 * is no function: "0x...  (MODULE+0xOFF)"). */
void md_sym_put_location(const struct md_sym_out *o, const struct md_sym_frame *f, const char *module,
                         uint64_t offset, bool blank)
{
    if (f->function) {
        put(o, "in ");
        put(o, f->function);
    }
    if (f->function || blank) put(o, " ");
    if (f->file) {
        put(o, f->file);
        if (f->line > 0) put_num(o, (uint64_t)f->line, 10, ":");
    } else if (module) {
        put(o, "(");
        put(o, module);
        put_num(o, offset, 16, "+0x");
        put(o, ")");
    } else {
        put(o, "(<unknown module>)");
    }
}

void md_sym_put_frame(const struct md_sym_out *o, int no, uint64_t pc, const struct md_sym_frame *f,
                      const char *module, uint64_t offset)
{
    put_num(o, (uint64_t)no, 10, "    #");
    put_num(o, pc, 16, " 0x");
    put(o, " ");
    md_sym_put_location(o, f, module, offset, true);
    put(o, "\n");
}

const char *md_sym_parse_module_location(const char *s, size_t len, const char **mod, size_t *modlen,
                                         uint64_t *offset)
{
    if (len < 6 || s[len - 1] != ')') return 0;
    size_t i = len - 1;
    uint64_t v = 0, scale = 1;
    size_t digits = 0;
    while (i > 0 && ((s[i - 1] >= '0' && s[i - 1] <= '9') || (s[i - 1] >= 'a' && s[i - 1] <= 'f'))) {
        char c = s[i - 1];
        if (digits < 16) v += scale * (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
        scale <<= 4;
        digits++;
        i--;
    }
    if (!digits || digits > 16 || i < 4 || s[i - 1] != 'x' || s[i - 2] != '0' || s[i - 3] != '+') return 0;
    size_t mod_end = i - 3;
    size_t j = mod_end;
    while (j > 0 && !(s[j - 1] == '(' && (j == 1 || s[j - 2] == ' '))) j--;
    if (j == 0 || j == mod_end) return 0;
    *mod = s + j;
    *modlen = mod_end - j;
    *offset = v;
    return s + j - 1;
}
