/* SPDX-License-Identifier: MIT */
/* Stack frames at report time.  Each frame is named through the module
 * table (modules.c) as of the epoch its stack was stored in, so frames of
 * a module dlclose'd since, or of one replaced at the same addresses,
 * still name the right file; with symbolize=1 the module file's debug
 * information (one libdwfl session per file, opened at its first report
 * and kept) gives function, file:line and inline frames (symcore.c).
 * libdwfl allocates: callers run with md_in_runtime set so those
 * allocations come from the internal pool, never from the debugged heap.
 *
 * elfutils lives in libmemdbg-sym.so, next to libmemdbg.so, loaded at the
 * first report that symbolizes (md_sym_prepare): mapping and relocating
 * it with libdw, libelf, libz, liblzma, libbz2 and libstdc++ at every
 * start-up was most of what memdbg added to a short process.  Until it is
 * loaded, or when it cannot be, frames are module+offset, which
 * `memdbg symbolize` turns into symbols later, and the report says why. */

#include "stack/stack.h"
#include "symcore.h"
#include <dlfcn.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#define MAX_FILES 1024

/* path -> libdwfl session, shared by the module entries of one file */
static struct { const char *path; Dwfl *dwfl; } files[MAX_FILES];
static int nfiles;
static char no_dwfl;   /* sym of a module whose file cannot be read */

static const struct md_sym_ops *sym_ops;   /* NULL: not loaded (yet) */
static bool sym_tried;                      /* the load was attempted (once only) */
static char sym_error[320];                 /* why frames are unsymbolized, for the note */
static bool sym_error_noted;

static void set_error(const char *a, const char *b)
{
    size_t n = 0;
    for (const char *p = a; *p && n + 1 < sizeof sym_error; p++) sym_error[n++] = *p;
    for (const char *p = b ? b : ""; *p && n + 1 < sizeof sym_error; p++) sym_error[n++] = *p;
    sym_error[n] = 0;
}

/* Threads of the process (/proc/self/stat, field 20); 0 when unknown. */
static long process_threads(void)
{
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char buf[1024];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = 0;
    const char *p = strrchr(buf, ')');   /* the command name may hold spaces */
    if (!p) return 0;
    for (int field = 2; field < 20 && *p; p++)
        if (*p == ' ') field++;
    long t = 0;
    while (*p >= '0' && *p <= '9') t = t * 10 + (*p++ - '0');
    return t;
}

bool md_sym_tried(void)
{
    return !md_opt.symbolize || __atomic_load_n(&sym_tried, __ATOMIC_ACQUIRE);
}

/* dlopen takes the loader's lock, and a thread holding that lock (in
 * dlopen or dlclose) may be waiting for the heap lock to allocate: with
 * the heap lock held, only a single-threaded process loads. */
bool md_sym_loadable(void)
{
    return md_sym_tried() || !md_heap_lock_mine() || process_threads() == 1;
}

void md_sym_prepare(void)
{
    if (md_sym_tried()) return;
    if (!md_sym_loadable()) {
        set_error("the report came while memdbg's heap lock was held by a thread of a threaded process, "
                  "where loading a library could deadlock", "");
        return;
    }
    const char *self = md_self_path();
    const char *slash = self ? strrchr(self, '/') : 0;
    char path[4096];
    size_t dir = slash ? (size_t)(slash - self) + 1 : 0;
    if (dir + sizeof MD_SYM_LIBRARY > sizeof path) dir = 0;
    memcpy(path, self, dir);
    memcpy(path + dir, MD_SYM_LIBRARY, sizeof MD_SYM_LIBRARY);
    md_in_runtime++;   /* the loader's allocations come from the internal pool */
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    const struct md_sym_ops *ops = h ? dlsym(h, MD_SYM_OPS_SYMBOL) : 0;
    if (!ops) {
        const char *why = dlerror();
        set_error("cannot load the symbolizer: ", why ? why : path);
    }
    md_in_runtime--;
    __atomic_store_n(&sym_ops, ops, __ATOMIC_RELEASE);
    __atomic_store_n(&sym_tried, true, __ATOMIC_RELEASE);
}

static Dwfl *module_dwfl(const struct md_module *m)
{
    if (!md_opt.symbolize) return 0;
    if (m->sym) return m->sym == &no_dwfl ? 0 : m->sym;
    const struct md_sym_ops *ops = __atomic_load_n(&sym_ops, __ATOMIC_ACQUIRE);
    if (!ops) return 0;   /* not loaded: module+offset, not remembered */
    const char *path = md_module_path(m);
    Dwfl *d = 0;
    int i;
    for (i = 0; i < nfiles; i++)
        if (strcmp(files[i].path, path) == 0) { d = files[i].dwfl; break; }
    if (i == nfiles) {
        d = ops->open(path);
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
    md_sym_prepare();
    uintptr_t a = is_return_addr && pc ? pc - 1 : pc;
    const struct md_module *m = md_module_find(a, md_modules_epoch());
    const struct md_sym_out o = { buf_write, b };
    Dwfl *d = m ? module_dwfl(m) : 0;
    if (d) {
        sym_ops->location(&o, d, md_module_path(m), a - m->bias);
    } else {
        const struct md_sym_frame none = { 0, 0, 0 };
        md_sym_put_location(&o, &none, m ? md_module_path(m) : 0, m ? a - m->bias : 0, false);
    }
}

/* Once per process, in the first report whose frames stay unsymbolized:
 * why. */
static void note_unsymbolized(struct md_buf *b)
{
    if (!md_opt.symbolize || __atomic_load_n(&sym_ops, __ATOMIC_ACQUIRE) || !sym_error[0] || sym_error_noted)
        return;
    sym_error_noted = true;
    md_puts(b, "    (frames without symbols: ");
    md_puts(b, sym_error);
    md_puts(b, "; `memdbg symbolize` adds them to a saved report)\n");
}

void md_print_stack(struct md_buf *b, const uintptr_t *frames, int n, bool first_exact)
{
    if (n == 0) { md_puts(b, "    <empty stack>\n"); return; }
    md_sym_prepare();
    md_modules_refresh();   /* modules loaded since the last capture */
    uint32_t epoch = md_depot_epoch_of(frames);
    const struct md_sym_out o = { buf_write, b };
    int no = 0;
    for (int i = 0; i < n; i++) {
        /* a return address is past its call: look up the call itself */
        uintptr_t a = (i > 0 || !first_exact) && frames[i] ? frames[i] - 1 : frames[i];
        const struct md_module *m = md_module_find(a, epoch);
        Dwfl *d = m ? module_dwfl(m) : 0;
        if (d) {
            no += sym_ops->frame_lines(&o, d, md_module_path(m), a - m->bias, frames[i], no);
        } else {
            const struct md_sym_frame none = { 0, 0, 0 };
            md_sym_put_frame(&o, no++, frames[i], &none, m ? md_module_path(m) : 0, m ? a - m->bias : 0);
        }
    }
    note_unsymbolized(b);
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
    md_sym_prepare();
    md_modules_refresh();
    uint32_t epoch = md_depot_epoch_of(frames);
    for (int i = 0; i < n; i++) {
        uintptr_t a = (i > 0 || !first_exact) && frames[i] ? frames[i] - 1 : frames[i];
        const struct md_module *m = md_module_find(a, epoch);
        struct frame_fields_ctx c = {
            .info = { .pc = frames[i], .module = m ? md_module_path(m) : 0, .offset = m ? a - m->bias : 0 },
            .fn = fn, .ctx = ctx,
        };
        Dwfl *d = m ? module_dwfl(m) : 0;
        if (d) sym_ops->frame_fields(d, c.info.offset, frame_fields, &c);
        else frame_fields(&c, 0, 0, 0);
    }
}
