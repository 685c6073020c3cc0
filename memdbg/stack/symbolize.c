/* SPDX-License-Identifier: MIT */
/* Stack frames at report time.  Each frame is named through the module
 * table (modules.c) as of the epoch its stack was stored in, so frames of
 * a module dlclose'd since, or of one replaced at the same addresses,
 * still name the right file; with symbolize=1 the module file's debug
 * information (one libdwfl session per file, opened at its first report
 * and kept) gives function, file:line and inline frames (symcore.c).
 * libdwfl allocates: callers run with md_in_runtime set so those
 * allocations come from the internal pool, never from the debugged heap. */

#include "stack/stack.h"
#include "symcore.h"
#include <string.h>

#define MAX_FILES 1024

/* path -> libdwfl session, shared by the module entries of one file */
static struct { const char *path; Dwfl *dwfl; } files[MAX_FILES];
static int nfiles;
static char no_dwfl;   /* sym of a module whose file cannot be read */

static Dwfl *module_dwfl(const struct md_module *m)
{
    if (!md_opt.symbolize) return 0;
    if (m->sym) return m->sym == &no_dwfl ? 0 : m->sym;
    const char *path = md_module_path(m);
    Dwfl *d = 0;
    int i;
    for (i = 0; i < nfiles; i++)
        if (strcmp(files[i].path, path) == 0) { d = files[i].dwfl; break; }
    if (i == nfiles) {
        d = md_sym_open(path);
        if (nfiles < MAX_FILES) {
            files[nfiles].path = path;
            files[nfiles].dwfl = d;
            nfiles++;
        }
    }
    md_module_set_sym(m, d ? (void *)d : &no_dwfl);
    return d;
}

static void buf_write(void *ctx, const char *s, size_t n)
{
    struct md_buf *b = ctx;
    for (size_t i = 0; i < n; i++) md_putc(b, s[i]);
}

void md_frame_location(struct md_buf *b, uintptr_t pc, bool is_return_addr)
{
    uintptr_t a = is_return_addr && pc ? pc - 1 : pc;
    const struct md_module *m = md_module_find(a, md_modules_epoch());
    const struct md_sym_out o = { buf_write, b };
    md_sym_location(&o, m ? module_dwfl(m) : 0, m ? md_module_path(m) : 0, m ? a - m->bias : 0);
}

void md_print_stack(struct md_buf *b, const uintptr_t *frames, int n, bool first_exact)
{
    if (n == 0) { md_puts(b, "    <empty stack>\n"); return; }
    md_modules_refresh();   /* modules loaded since the last capture */
    uint32_t epoch = md_depot_epoch_of(frames);
    const struct md_sym_out o = { buf_write, b };
    int no = 0;
    for (int i = 0; i < n; i++) {
        /* a return address is past its call: look up the call itself */
        uintptr_t a = (i > 0 || !first_exact) && frames[i] ? frames[i] - 1 : frames[i];
        const struct md_module *m = md_module_find(a, epoch);
        no += md_sym_frame_lines(&o, m ? module_dwfl(m) : 0, m ? md_module_path(m) : 0,
                                 m ? a - m->bias : 0, frames[i], no);
    }
}

struct frame_fields_ctx {
    struct md_frame_info info;
    md_frame_fn *fn;
    void *ctx;
};

static void frame_fields(void *p, const char *function, const char *file, int line)
{
    struct frame_fields_ctx *c = p;
    c->info.function = function;
    c->info.file = file;
    c->info.line = line;
    c->fn(c->ctx, &c->info);
}

void md_stack_frames(const uintptr_t *frames, int n, bool first_exact, md_frame_fn *fn, void *ctx)
{
    if (n <= 0) return;
    md_modules_refresh();
    uint32_t epoch = md_depot_epoch_of(frames);
    for (int i = 0; i < n; i++) {
        uintptr_t a = (i > 0 || !first_exact) && frames[i] ? frames[i] - 1 : frames[i];
        const struct md_module *m = md_module_find(a, epoch);
        struct frame_fields_ctx c = {
            .info = { .pc = frames[i], .module = m ? md_module_path(m) : 0, .offset = m ? a - m->bias : 0 },
            .fn = fn, .ctx = ctx,
        };
        md_sym_frame_fields(m ? module_dwfl(m) : 0, c.info.offset, frame_fields, &c);
    }
}
