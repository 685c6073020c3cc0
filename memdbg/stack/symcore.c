/* SPDX-License-Identifier: MIT */
/* Symbolization of one module address (see symcore.h).  Inline frames
 * come from the DWARF scopes at the address: each
 * DW_TAG_inlined_subroutine around it is a frame, innermost first, whose
 * caller's position is the inlined call's DW_AT_call_file/DW_AT_call_line;
 * the enclosing DW_TAG_subprogram is the last one.  The innermost
 * position is the line table's. */
#include "symcore.h"
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* libstdc++'s demangler, if the process has it (libmemdbg-sym.so and the
 * offline symbolizer link it). */
extern char *__cxa_demangle(const char *, char *, size_t *, int *) __attribute__((weak));

static char *debuginfo_path;
static const Dwfl_Callbacks offline_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

Dwfl *md_sym_open(const char *path)
{
    if (!path || path[0] != '/') return 0;
    Dwfl *d = dwfl_begin(&offline_callbacks);
    if (!d) return 0;
    dwfl_report_begin(d);
    Dwfl_Module *m = dwfl_report_elf(d, path, path, -1, 0, false);
    dwfl_report_end(d, 0, 0);
    if (!m) { dwfl_end(d); return 0; }
    return d;
}

static const char *demangle(const char *name, char **to_free)
{
    *to_free = 0;
    if (name && __cxa_demangle && name[0] == '_' && name[1] == 'Z') {
        int st;
        *to_free = __cxa_demangle(name, 0, 0, &st);
        if (*to_free) return *to_free;
    }
    return name;
}

/* An inlined function's name: its linkage name demangled (C++: qualified,
 * with parameters, as the symbol table would give it), else its name. */
static const char *die_function(Dwarf_Die *die, char **to_free)
{
    Dwarf_Attribute a;
    const char *ln = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
    if (!ln) ln = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
    if (ln) return demangle(ln, to_free);
    *to_free = 0;
    return dwarf_diename(die);
}

/* Calls emit for each frame of the address, innermost first. */
static int walk(Dwfl *d, uint64_t offset, int limit,
                void (*emit)(void *ctx, const struct md_sym_frame *f), void *ctx)
{
    Dwfl_Module *m = d ? dwfl_addrmodule(d, offset) : 0;
    struct md_sym_frame f = { 0, 0, 0 };
    if (!m) { emit(ctx, &f); return 1; }
    Dwfl_Line *l = dwfl_module_getsrc(m, offset);
    if (l) f.file = dwfl_lineinfo(l, 0, &f.line, 0, 0, 0);
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = dwfl_module_addrdie(m, offset, &bias);
    Dwarf_Die *scopes = 0;
    int ns = cu ? dwarf_getscopes(cu, offset - bias, &scopes) : 0;
    Dwarf_Files *files = 0;
    size_t nfiles = 0;
    Dwarf_Die *subprogram = 0;
    int n = 0;
    for (int i = 0; i < ns; i++) {
        int tag = dwarf_tag(&scopes[i]);
        if (tag == DW_TAG_subprogram) { subprogram = &scopes[i]; break; }
        if (tag != DW_TAG_inlined_subroutine) continue;
        char *fr;
        f.function = die_function(&scopes[i], &fr);
        emit(ctx, &f);
        free(fr);
        if (++n == limit) { free(scopes); return n; }
        /* the next frame out is at the inlined call */
        Dwarf_Attribute a;
        Dwarf_Word w;
        f.file = 0;
        f.line = 0;
        if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &a), &w) == 0) f.line = (int)w;
        if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &a), &w) == 0 &&
            (files || dwarf_getsrcfiles(cu, &files, &nfiles) == 0) && w < nfiles)
            f.file = dwarf_filesrc(files, w, 0, 0);
    }
    /* the function the code belongs to: the symbol table's name, as
     * before (versioned, C++ demangled), else the DWARF one */
    char *fr;
    const char *sym = dwfl_module_addrname(m, offset);
    f.function = demangle(sym, &fr);
    char *fr2 = 0;
    if (!f.function && subprogram) f.function = die_function(subprogram, &fr2);
    emit(ctx, &f);
    free(fr);
    free(fr2);
    free(scopes);
    return n + 1;
}

struct lines_ctx {
    const struct md_sym_out *o;
    const char *module;
    uint64_t offset, pc;
    int no;
};

static void emit_line(void *p, const struct md_sym_frame *f)
{
    struct lines_ctx *c = p;
    md_sym_put_frame(c->o, c->no++, c->pc, f, c->module, c->offset);
}

int md_sym_frame_lines(const struct md_sym_out *o, Dwfl *d, const char *module, uint64_t offset,
                       uint64_t pc, int no)
{
    struct lines_ctx c = { o, module, offset, pc, no };
    return walk(d, offset, 64, emit_line, &c);
}

struct fields_ctx {
    md_sym_fields_fn *emit;
    void *ctx;
};

static void emit_fields(void *p, const struct md_sym_frame *f)
{
    struct fields_ctx *c = p;
    c->emit(c->ctx, f->function, f->file, f->line);
}

int md_sym_frame_fields(Dwfl *d, uint64_t offset, md_sym_fields_fn *emit, void *ctx)
{
    struct fields_ctx c = { emit, ctx };
    return walk(d, offset, 64, emit_fields, &c);
}

struct loc_ctx {
    const struct md_sym_out *o;
    const char *module;
    uint64_t offset;
};

static void emit_location(void *p, const struct md_sym_frame *f)
{
    struct loc_ctx *c = p;
    md_sym_put_location(c->o, f, c->module, c->offset, false);
}

void md_sym_location(const struct md_sym_out *o, Dwfl *d, const char *module, uint64_t offset)
{
    struct loc_ctx c = { o, module, offset };
    walk(d, offset, 1, emit_location, &c);
}
