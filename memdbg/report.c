/* Error reports in AddressSanitizer's layout.  Runs inside the SIGSEGV
 * handler too: output goes through a preallocated buffer and write(2);
 * symbolization allocates only from the internal pool (md_in_runtime). */

#include "memdbg.h"
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <stdatomic.h>

#define REPORT_BUF_SIZE 65536
static char *report_mem;
static atomic_flag report_lock = ATOMIC_FLAG_INIT;

static const char *const kind_names[] = {
    [ERR_OVERFLOW] = "heap-buffer-overflow",
    [ERR_UNDERFLOW] = "heap-buffer-underflow",
    [ERR_UAF] = "heap-use-after-free",
    [ERR_DOUBLE_FREE] = "double-free",
    [ERR_BAD_FREE] = "bad-free",
    [ERR_MISMATCH] = "alloc-dealloc-mismatch",
    [ERR_UNKNOWN_CRASH] = "wild-access",
};

static const char *alloc_name(int kind)
{
    return kind == KIND_NEW ? "operator new" : kind == KIND_NEW_ARRAY ? "operator new []" : "malloc";
}

static const char *dealloc_name(int d)
{
    return d == DEALLOC_DELETE ? "operator delete" : d == DEALLOC_DELETE_ARRAY ? "operator delete []"
         : d == DEALLOC_REALLOC ? "realloc" : "free";
}

MEMDBG_HIDDEN void md_report_begin(struct md_buf *b)
{
    while (atomic_flag_test_and_set_explicit(&report_lock, memory_order_acquire)) { }
    if (!report_mem) report_mem = md_reserve(REPORT_BUF_SIZE, "report buffer");
    md_buf_init(b, report_mem, REPORT_BUF_SIZE, md_report_fd());
}

MEMDBG_HIDDEN void md_report_end(struct md_buf *b)
{
    md_flush(b);
    atomic_flag_clear_explicit(&report_lock, memory_order_release);
}

MEMDBG_HIDDEN void md_put_pid_prefix(struct md_buf *b)
{
    md_puts(b, "==");
    md_putu(b, (unsigned long long)getpid());
    md_puts(b, "==");
}

static void put_stack_id(struct md_buf *b, uint32_t id)
{
    const uintptr_t *f;
    int n = md_depot_get(id, &f);
    md_print_stack(b, f, n, false);
}

/* "0x.. is located N bytes after|before|inside of M-byte region [a,b)" */
static void put_location(struct md_buf *b, uintptr_t addr, const struct md_slot *s)
{
    uintptr_t start = s->user, end = s->user + s->size;
    md_putx(b, addr);
    md_puts(b, " is located ");
    if (addr >= end) {
        md_putu(b, addr - end);
        md_puts(b, " bytes after ");
    } else if (addr < start) {
        md_putu(b, start - addr);
        md_puts(b, " bytes before ");
    } else {
        md_putu(b, addr - start);
        md_puts(b, " bytes inside of ");
    }
    md_putu(b, s->size);
    md_puts(b, "-byte region [");
    md_putx(b, start);
    md_putc(b, ',');
    md_putx(b, end);
    md_puts(b, ")\n");
}

void md_report_error(const struct md_error_info *e)
{
    int saved = md_in_runtime;
    md_in_runtime = saved + 1;   /* symbolizer allocations go to the internal pool */
    struct md_buf buf, *b = &buf;
    md_report_begin(b);
    md_heap.errors_reported++;
    const char *kind = kind_names[e->kind];
    const struct md_slot *s = e->slot;

    md_puts(b, "=================================================================\n");
    md_put_pid_prefix(b);
    md_puts(b, "ERROR: memdbg: ");
    md_puts(b, kind);
    md_puts(b, " on address ");
    md_putx(b, e->addr);
    if (e->pc) {
        md_puts(b, " at pc "); md_putx(b, e->pc);
        md_puts(b, " bp "); md_putx(b, e->bp);
        md_puts(b, " sp "); md_putx(b, e->sp);
    }
    if (e->kind == ERR_MISMATCH) {
        md_puts(b, " (");
        md_puts(b, alloc_name(e->alloc_kind));
        md_puts(b, " vs ");
        md_puts(b, dealloc_name(e->dealloc_kind));
        md_putc(b, ')');
    }
    md_putc(b, '\n');

    if (e->kind == ERR_OVERFLOW || e->kind == ERR_UNDERFLOW || e->kind == ERR_UAF ||
        e->kind == ERR_UNKNOWN_CRASH) {
        md_puts(b, e->access == 2 ? "WRITE" : e->access == 1 ? "READ" : "ACCESS");
        if (e->access_size > 0) { md_puts(b, " of size "); md_putu(b, (unsigned)e->access_size); }
        else md_puts(b, " of unknown size");
        md_puts(b, " at ");
        md_putx(b, e->addr);
    } else {
        md_puts(b, dealloc_name(e->dealloc_kind));
        md_puts(b, " of ");
        md_putx(b, e->addr);
    }
    md_puts(b, " thread T");
    md_putu(b, md_thread_id());
    md_putc(b, '\n');
    if (e->how) { md_puts(b, "    ("); md_puts(b, e->how); md_puts(b, ")\n"); }
    md_print_stack(b, e->frames, e->nframes, e->pc != 0);
    md_putc(b, '\n');

    if (s) {
        put_location(b, e->addr, s);
        if (s->state == SLOT_QUARANTINED || s->state == SLOT_FREE) {
            md_puts(b, "freed by thread T");
            md_putu(b, s->free_tid);
            md_puts(b, " here:\n");
            put_stack_id(b, s->free_stack);
            md_puts(b, "\npreviously allocated by thread T");
        } else {
            md_puts(b, "allocated by thread T");
        }
        md_putu(b, s->alloc_tid);
        md_puts(b, " here:\n");
        put_stack_id(b, s->alloc_stack);
        md_putc(b, '\n');
    } else if (e->kind == ERR_BAD_FREE) {
        md_putx(b, e->addr);
        md_puts(b, md_in_arena(e->addr) ? " is in the memdbg heap but not in any block\n\n"
                                        : " was not allocated by malloc (not in the memdbg heap)\n\n");
    } else {
        md_putx(b, e->addr);
        md_puts(b, " is in the memdbg heap but not in any block\n\n");
    }

    md_puts(b, "SUMMARY: memdbg: ");
    md_puts(b, kind);
    /* the first frame outside the allocator entry point names the culprit */
    int f = e->pc ? 0 : (e->nframes > 1 ? 1 : 0);
    if (e->nframes > 0) {
        md_putc(b, ' ');
        md_frame_location(b, e->frames[f], f > 0 || !e->pc);
    }
    md_putc(b, '\n');
    md_report_end(b);
    md_in_runtime = saved;
}

void md_error_finish(bool fatal)
{
    if (!fatal && !md_opt.halt_on_error) return;
    struct md_buf b;
    md_report_begin(&b);
    md_put_pid_prefix(&b);
    md_puts(&b, "ABORTING\n");
    md_report_end(&b);
    if (md_opt.abort_on_error) {
        /* make sure SIGABRT is not caught or ignored: we want the core */
        struct sigaction sa = { .sa_handler = SIG_DFL };
        sigaction(SIGABRT, &sa, 0);
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGABRT);
        sigprocmask(SIG_UNBLOCK, &set, 0);
        raise(SIGABRT);
    }
    _exit(md_opt.exitcode);
}
