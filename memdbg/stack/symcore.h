/* SPDX-License-Identifier: MIT */
/* Symbolization of one module address with elfutils, shared by the
 * library's reports and the offline symbolizer (cli/symbolize_main.c), so
 * both print the same frames.  Depends on nothing else in memdbg: output
 * goes through a callback, numbers are formatted here, no stdio.
 *
 * libmemdbg.so does not link elfutils: symcore.c is built into a library
 * of its own, libmemdbg-sym.so, which the reports dlopen when they first
 * need a symbol (symbolize.c) and reach through the table md_sym_ops
 * (symlib.c), so a process that never reports maps none of elfutils and
 * its compression libraries.  The offline symbolizer links symcore.o
 * directly. */
#ifndef MEMDBG_SYMCORE_H
#define MEMDBG_SYMCORE_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct md_sym_out {
    void (*write)(void *ctx, const char *s, size_t n);
    void *ctx;
};

/* The debug information of the module file at path, reported at bias 0
 * so that addresses are module offsets (NULL: the file cannot be read). */
Dwfl *md_sym_open(const char *path) __attribute__((visibility("hidden")));

/* Writes the frame lines of the address at offset in module (path as in
 * the report; NULL: unknown), one line per inline level, innermost
 * first, numbered from no on as AddressSanitizer does:
 *     "    #N 0xPC in FUNCTION FILE:LINE\n"
 *     "    #N 0xPC in FUNCTION (MODULE+0xOFFSET)\n"   (no line information)
 *     "    #N 0xPC  (MODULE+0xOFFSET)\n"              (no symbol; symbolize=0)
 *     "    #N 0xPC  (<unknown module>)\n"
 * d may be NULL (no symbolization).  Returns the number of lines. */
int md_sym_frame_lines(const struct md_sym_out *o, Dwfl *d, const char *module, uint64_t offset,
                       uint64_t pc, int no) __attribute__((visibility("hidden")));

/* The same frames as fields, for machine-readable reports: emit gets each
 * one's function, file (NULL: unknown) and line (0: unknown), innermost
 * first; the strings last only for the call.  Returns the number of frames. */
typedef void md_sym_fields_fn(void *ctx, const char *function, const char *file, int line);
int md_sym_frame_fields(Dwfl *d, uint64_t offset, md_sym_fields_fn *emit, void *ctx)
    __attribute__((visibility("hidden")));

/* The innermost frame's location alone ("in FUNCTION FILE:LINE", or the
 * module form above), for SUMMARY lines. */
void md_sym_location(const struct md_sym_out *o, Dwfl *d, const char *module, uint64_t offset)
    __attribute__((visibility("hidden")));

/* One frame as the formatting below takes it (symformat.c). */
struct md_sym_frame {
    const char *function;   /* NULL: unknown */
    const char *file;       /* NULL: unknown */
    int line;
};
/* "in FUNCTION FILE:LINE", "in FUNCTION (MODULE+0xOFF)", " (MODULE+0xOFF)"
 * (blank: keep the blank of a frame line when there is no function). */
void md_sym_put_location(const struct md_sym_out *o, const struct md_sym_frame *f, const char *module,
                         uint64_t offset, bool blank) __attribute__((visibility("hidden")));
/* One frame line, "    #N 0xPC " and its location. */
void md_sym_put_frame(const struct md_sym_out *o, int no, uint64_t pc, const struct md_sym_frame *f,
                      const char *module, uint64_t offset) __attribute__((visibility("hidden")));

/* Parses "(MODULE+0xOFFSET)" ending at s[len-1]; returns where "(" is, or
 * NULL.  The module part is [*mod, *mod + *modlen). */
const char *md_sym_parse_module_location(const char *s, size_t len, const char **mod, size_t *modlen,
                                         uint64_t *offset) __attribute__((visibility("hidden")));

/* What libmemdbg-sym.so exports: the functions above, by pointer. */
struct md_sym_ops {
    Dwfl *(*open)(const char *path);
    int (*frame_lines)(const struct md_sym_out *o, Dwfl *d, const char *module, uint64_t offset,
                       uint64_t pc, int no);
    int (*frame_fields)(Dwfl *d, uint64_t offset, md_sym_fields_fn *emit, void *ctx);
    void (*location)(const struct md_sym_out *o, Dwfl *d, const char *module, uint64_t offset);
};
#define MD_SYM_LIBRARY "libmemdbg-sym.so"
#define MD_SYM_OPS_SYMBOL "md_sym_ops"

#endif
