/* SPDX-License-Identifier: MIT */
/* Error reports in AddressSanitizer's layout.  Runs inside the SIGSEGV
 * handler too: output goes through a preallocated buffer and write(2);
 * symbolization allocates only from the internal pool (md_in_runtime).
 * Every report runs on memdbg's own stack (altstack.c), whatever stack the
 * program gave the thread or the signal, and prints its essentials (the
 * error line and the raw frames as module+offset) before symbolizing, so a
 * failure later in the report still leaves them. */

#include "report/report.h"
#include "signals.h"
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#define REPORT_BUF_SIZE 65536
static char *report_mem;

static struct md_buf *active_buf;   /* the report being written, for a fault inside it */

void md_report_init(void)
{
    if (!report_mem) report_mem = md_reserve(REPORT_BUF_SIZE, "report buffer");
    md_report_stack_init();
}

/* fork() copies only the calling thread: a report lock held by another
 * thread would never be released in the child. */
void md_report_fork_child(void)
{
    md_report_lock_fork_child();
    active_buf = 0;
    md_signals_fork_child();
}

void md_with_report_stack(void (*fn)(void *), void *arg)
{
    if (md_in_report()) { fn(arg); return; }
    int saved_errno = errno;   /* free() keeps errno, also when it reports (halt_on_error=0) */
    /* The program's handlers must not run on memdbg's stack, in the middle
     * of a report; synchronous signals stay deliverable (blocked, the
     * kernel would kill at once), so a fault inside the report reaches
     * md_report_fault_in_report. */
    sigset_t block, saved;
    sigfillset(&block);
    sigdelset(&block, SIGSEGV);
    sigdelset(&block, SIGBUS);
    sigdelset(&block, SIGILL);
    sigdelset(&block, SIGFPE);
    sigdelset(&block, SIGTRAP);
    pthread_sigmask(SIG_SETMASK, &block, &saved);
    md_report_lock();
    uintptr_t top = md_report_stack_top();
    if (top && !md_on_report_stack((uintptr_t)__builtin_frame_address(0)))
        md_call_on_stack(fn, arg, top);
    else
        fn(arg);
    md_report_unlock();
    pthread_sigmask(SIG_SETMASK, &saved, 0);
    errno = saved_errno;
}

static const char *const kind_names[] = {
    [MD_ERROR_OVERFLOW] = "heap-buffer-overflow",
    [MD_ERROR_UNDERFLOW] = "heap-buffer-underflow",
    [MD_ERROR_UAF] = "heap-use-after-free",
    [MD_ERROR_DOUBLE_FREE] = "double-free",
    [MD_ERROR_BAD_FREE] = "bad-free",
    [MD_ERROR_MISMATCH] = "alloc-dealloc-mismatch",
    [MD_ERROR_UNKNOWN_CRASH] = "wild-access",
    [MD_ERROR_FROZEN_WRITE] = "write-to-frozen-block",
    [MD_ERROR_FREE_FROZEN] = "free-of-frozen-block",
    [MD_ERROR_NEW_DELETE_MISMATCH] = "new-delete-type-mismatch",
    [MD_ERROR_PARAM_OVERLAP] = "param-overlap",
};

static const char *alloc_name(int kind)
{
    return kind == MD_KIND_NEW ? "operator new" : kind == MD_KIND_NEW_ARRAY ? "operator new []" : "malloc";
}

static const char *dealloc_name(int d)
{
    return d == MD_DEALLOC_DELETE ? "operator delete" : d == MD_DEALLOC_DELETE_ARRAY ? "operator delete []"
         : d == MD_DEALLOC_REALLOC ? "realloc" : "free";
}

MEMDBG_HIDDEN void md_report_begin(struct md_buf *b)
{
    md_report_lock();
    if (!report_mem) report_mem = md_reserve(REPORT_BUF_SIZE, "report buffer");
    md_buf_init(b, report_mem, REPORT_BUF_SIZE, md_report_fd());
    active_buf = b;
}

MEMDBG_HIDDEN void md_report_end(struct md_buf *b)
{
    md_flush(b);
    active_buf = 0;
    md_report_unlock();
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

/* The stack that froze the block a write-to-frozen-block or a
 * free-of-frozen-block is about (core/frozen.c keeps it). */
static void put_frozen_by(struct md_buf *b, const struct md_error_info *e, const struct md_slot *s)
{
    if (e->kind != MD_ERROR_FROZEN_WRITE && e->kind != MD_ERROR_FREE_FROZEN) return;
    const struct md_frozen_by *fb = md_frozen_by((uint32_t)(s - md_heap.slots));
    if (!fb) return;
    md_puts(b, "frozen by thread T");
    md_putu(b, fb->tid);
    md_puts(b, " here:\n");
    put_stack_id(b, fb->stack);
    md_putc(b, '\n');
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

/* How sure the report is of its block: an address the arena handed out
 * again (its never-used space ran out, the oldest freed ranges were
 * reused first) may come from an earlier block than the one named. */
/* How many blocks have had the page of addr (0: not known). */
static unsigned page_uses_at(uintptr_t addr)
{
    if (!md_in_arena(addr) || !md_heap.page_uses) return 0;
    return md_heap.page_uses[(addr - md_heap.base) >> MD_PAGE_SHIFT];
}

static void put_certainty(struct md_buf *b, uintptr_t addr)
{
    unsigned uses = page_uses_at(addr);
    if (uses <= 1) return;
    md_puts(b, "note: this address was reused: ");
    md_putu(b, uses);
    md_puts(b, uses == UINT8_MAX ? " or more" : "");
    md_puts(b, " blocks have lain there since the start (oldest freed addresses are reused first, "
               "once the quarantine or the arena is full); the block above is the last of them, "
               "the pointer may come from an earlier one\n\n");
}

/* ---- the raw frames: module+offset from /proc/self/maps ----
 * open/read only: no libdwfl, no allocation, little stack, so it works
 * where symbolization might not. */
struct raw_frame { uintptr_t off; char mod[48]; };

static uintptr_t parse_hex(const char **p)
{
    uintptr_t v = 0;
    for (;; (*p)++) {
        char c = **p;
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) return v;
        v = v << 4 | (uintptr_t)d;
    }
}

/* One line of /proc/self/maps: "start-end perms offset dev inode   path". */
static void match_maps_line(const char *l, const char *end, const uintptr_t *frames, int n, struct raw_frame *rf)
{
    uintptr_t lo = parse_hex(&l);
    if (*l++ != '-') return;
    uintptr_t hi = parse_hex(&l);
    if (l + 6 > end || l[3] != 'x') return;   /* " r-xp ": code only */
    l += 6;
    uintptr_t pgoff = parse_hex(&l);
    for (int field = 0; field < 2 && l < end; field++) {   /* dev, inode */
        while (l < end && *l == ' ') l++;
        while (l < end && *l != ' ') l++;
    }
    while (l < end && *l == ' ') l++;
    const char *base = l;
    for (const char *q = l; q < end; q++) if (*q == '/') base = q + 1;
    for (int i = 0; i < n; i++) {
        if (frames[i] < lo || frames[i] >= hi) continue;
        rf[i].off = frames[i] - lo + pgoff;
        size_t k = 0;
        for (const char *q = base; q < end && k < sizeof rf[i].mod - 1; q++) rf[i].mod[k++] = *q;
        if (k == 0) { rf[i].mod[0] = '?'; k = 1; }
        rf[i].mod[k] = 0;
    }
}

static void put_raw_frames(struct md_buf *b, const uintptr_t *frames, int n)
{
    struct raw_frame rf[MD_MAX_FRAMES];
    if (n > MD_MAX_FRAMES) n = MD_MAX_FRAMES;
    if (n <= 0) return;
    for (int i = 0; i < n; i++) rf[i].mod[0] = 0;
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        char chunk[4096];
        size_t have = 0;
        for (;;) {
            ssize_t r = read(fd, chunk + have, sizeof chunk - have);
            if (r <= 0) break;
            have += (size_t)r;
            size_t start = 0;
            for (size_t i = 0; i < have; i++) {
                if (chunk[i] != '\n') continue;
                match_maps_line(chunk + start, chunk + i, frames, n, rf);
                start = i + 1;
            }
            if (start == 0 && have == sizeof chunk) start = have;   /* a line longer than the chunk */
            for (size_t i = start; i < have; i++) chunk[i - start] = chunk[i];
            have -= start;
        }
        close(fd);
    }
    md_puts(b, "    (raw:");
    for (int i = 0; i < n; i++) {
        md_putc(b, ' ');
        if (rf[i].mod[0]) {
            md_puts(b, rf[i].mod);
            md_putc(b, '+');
            md_putx(b, rf[i].off);
        } else {
            md_putx(b, frames[i]);
        }
    }
    md_puts(b, ")\n");
}

/* new-delete-type-mismatch: both sizes and both alignments, as ASan
 * prints them ("default" for no alignment beyond new's own). */
static void put_alignment(struct md_buf *b, size_t align)
{
    if (!align) { md_puts(b, "default"); return; }
    md_putu(b, align);
    md_puts(b, " bytes");
}

static void put_type_mismatch(struct md_buf *b, const struct md_error_info *e, const struct md_slot *s)
{
    md_puts(b, "  object passed to delete has wrong type:\n");
    md_puts(b, "  size of the allocated type:   ");
    md_putu(b, s->size);
    md_puts(b, " bytes;\n  size of the deallocated type: ");
    if (e->dealloc_size == (size_t)-1) md_puts(b, "not given");
    else { md_putu(b, e->dealloc_size); md_puts(b, " bytes"); }
    md_puts(b, ".\n  alignment of the allocated type:   ");
    put_alignment(b, e->alloc_align);
    md_puts(b, ";\n  alignment of the deallocated type: ");
    put_alignment(b, e->dealloc_align);
    md_puts(b, ".\n");
}

static bool is_access_error(int kind)
{
    return kind == MD_ERROR_OVERFLOW || kind == MD_ERROR_UNDERFLOW || kind == MD_ERROR_UAF || kind == MD_ERROR_UNKNOWN_CRASH ||
           kind == MD_ERROR_FROZEN_WRITE;
}

static bool slot_freed(const struct md_slot *s)
{
    return s->state == MD_SLOT_QUARANTINED || s->state == MD_SLOT_FREE;
}

/* The report as one JSON object (docs/report-json.md). */
static void json_body(struct md_buf *b, const struct md_error_info *e)
{
    const struct md_slot *s = e->slot;
    struct md_json j;
    md_json_begin(&j, b, kind_names[e->kind]);
    md_json_hex(&j, "address", e->addr);
    if (is_access_error(e->kind)) {
        if (e->access_size > 0) md_json_uint(&j, "size", (unsigned)e->access_size);
        else md_json_null(&j, "size");
        md_json_str(&j, "direction", e->access == 2 ? "write" : e->access == 1 ? "read" : "unknown");
    } else if (e->kind == MD_ERROR_PARAM_OVERLAP) {
        md_json_null(&j, "size");
        md_json_str(&j, "direction", "unknown");
        md_json_str(&j, "operation", e->function);
        md_json_hex(&j, "second_address", e->addr2);
    } else {
        md_json_null(&j, "size");
        md_json_str(&j, "direction", "unknown");
        md_json_str(&j, "operation", dealloc_name(e->dealloc_kind));
    }
    if (e->kind == MD_ERROR_MISMATCH) {
        md_json_str(&j, "allocated_with", alloc_name(e->alloc_kind));
        md_json_str(&j, "deallocated_with", dealloc_name(e->dealloc_kind));
    }
    if (e->kind == MD_ERROR_NEW_DELETE_MISMATCH) {
        if (s) md_json_uint(&j, "allocated_size", s->size);
        if (e->dealloc_size != (size_t)-1) md_json_uint(&j, "deallocated_size", e->dealloc_size);
        else md_json_null(&j, "deallocated_size");
        md_json_uint(&j, "allocated_alignment", e->alloc_align);
        md_json_uint(&j, "deallocated_alignment", e->dealloc_align);
    }
    md_json_uint(&j, "thread", md_thread_id());
    if (e->pc) md_json_hex(&j, "pc", e->pc);
    if (e->how) md_json_str(&j, "note", e->how);
    md_json_bool(&j, "in_heap", md_in_heap(e->addr));
    /* as the text report's reuse note: the pointer may be older than the block */
    if (e->pc && page_uses_at(e->addr) > 1) md_json_uint(&j, "address_reused", page_uses_at(e->addr));
    if (s) {
        uintptr_t start = s->user, end = s->user + s->size;
        md_json_open(&j, "block", '{');
        md_json_hex(&j, "start", start);
        md_json_uint(&j, "size", s->size);
        md_json_str(&j, "state", slot_freed(s) ? "freed" : "live");
        md_json_str(&j, "relation", e->addr >= end ? "after" : e->addr < start ? "before" : "inside");
        /* as the text report's "N bytes after/before/inside of" */
        md_json_uint(&j, "distance", e->addr >= end ? e->addr - end : e->addr < start ? start - e->addr : e->addr - start);
        md_json_uint(&j, "allocation_thread", s->alloc_tid);
        if (slot_freed(s)) md_json_uint(&j, "free_thread", s->free_tid);
        md_json_close(&j, '}');
    } else {
        md_json_null(&j, "block");
    }
    md_json_open(&j, "stacks", '{');
    md_json_stack(&j, "access", e->frames, e->nframes, e->pc != 0);
    if (s) {
        const uintptr_t *f;
        if (slot_freed(s)) {
            int n = md_depot_get(s->free_stack, &f);
            md_json_stack(&j, "free", f, n, false);
        }
        if (e->kind == MD_ERROR_FROZEN_WRITE || e->kind == MD_ERROR_FREE_FROZEN) {
            const struct md_frozen_by *fb = md_frozen_by((uint32_t)(s - md_heap.slots));
            if (fb) {
                int nf = md_depot_get(fb->stack, &f);
                md_json_stack(&j, "frozen", f, nf, false);
            }
        }
        int n = md_depot_get(s->alloc_stack, &f);
        md_json_stack(&j, "allocation", f, n, false);
    }
    md_json_close(&j, '}');
    md_json_end(&j);
}

static void put_summary(struct md_buf *b, const struct md_error_info *e, const char *kind)
{
    if (!md_opt.print_summary) return;
    md_puts(b, "SUMMARY: memdbg: ");
    if (e->kind == MD_ERROR_PARAM_OVERLAP) {
        md_puts(b, e->function);
        md_putc(b, '-');
    }
    md_puts(b, kind);
    /* the first frame outside the allocator entry point names the culprit */
    int f = e->pc ? 0 : (e->nframes > 1 ? 1 : 0);
    if (e->nframes > 0) {
        md_putc(b, ' ');
        md_frame_location(b, e->frames[f], f > 0 || !e->pc);
    }
    md_putc(b, '\n');
}

static void put_allocated_by(struct md_buf *b, const struct md_slot *s)
{
    md_puts(b, "allocated by thread T");
    md_putu(b, s->alloc_tid);
    md_puts(b, " here:\n");
    put_stack_id(b, s->alloc_stack);
}

/* Where an overlap's ranges start, for those in a live block; a block's
 * allocation stack once. */
static void put_overlap_blocks(struct md_buf *b, const struct md_error_info *e)
{
    const struct md_slot *first = md_slot_of_addr(e->addr);
    const struct md_slot *second = md_slot_of_addr(e->addr2);
    if (first && first->state == MD_SLOT_LIVE) {
        put_location(b, e->addr, first);
        put_allocated_by(b, first);
        md_putc(b, '\n');
    }
    if (second && second->state == MD_SLOT_LIVE) {
        put_location(b, e->addr2, second);
        if (second != first) put_allocated_by(b, second);
        md_putc(b, '\n');
    }
}

static void report_body(void *arg)
{
    const struct md_error_info *e = arg;
    int saved = md_in_runtime;
    md_in_runtime = saved + 1;   /* symbolizer allocations go to the internal pool */
    struct md_buf buf, *b = &buf;
    md_report_begin(b);
    md_heap.errors_reported++;
    if (md_json_reports()) {
        json_body(b, e);
        md_report_end(b);
        md_in_runtime = saved;
        return;
    }
    const char *kind = kind_names[e->kind];
    const struct md_slot *s = e->slot;

    md_puts(b, "=================================================================\n");
    md_put_pid_prefix(b);
    md_puts(b, "ERROR: memdbg: ");
    if (e->kind == MD_ERROR_PARAM_OVERLAP) {
        /* ASan's layout: "memcpy-param-overlap: memory ranges [a,b) and [c,d) overlap" */
        md_puts(b, e->function);
        md_putc(b, '-');
        md_puts(b, kind);
        md_puts(b, ": memory ranges [");
        md_putx(b, e->addr);
        md_putc(b, ',');
        md_putx(b, e->addr + e->access_size);
        md_puts(b, ") and [");
        md_putx(b, e->addr2);
        md_putc(b, ',');
        md_putx(b, e->addr2 + e->size2);
        md_puts(b, ") overlap\n");
        put_raw_frames(b, e->frames, e->nframes);
        md_flush(b);
        md_print_stack(b, e->frames, e->nframes, false);
        md_putc(b, '\n');
        put_overlap_blocks(b, e);
        put_summary(b, e, kind);
        md_report_end(b);
        md_in_runtime = saved;
        return;
    }
    md_puts(b, kind);
    md_puts(b, " on address ");
    md_putx(b, e->addr);
    if (e->pc) {
        md_puts(b, " at pc "); md_putx(b, e->pc);
        md_puts(b, " bp "); md_putx(b, e->bp);
        md_puts(b, " sp "); md_putx(b, e->sp);
    }
    if (e->kind == MD_ERROR_MISMATCH) {
        md_puts(b, " (");
        md_puts(b, alloc_name(e->alloc_kind));
        md_puts(b, " vs ");
        md_puts(b, dealloc_name(e->dealloc_kind));
        md_putc(b, ')');
    }
    md_putc(b, '\n');

    if (is_access_error(e->kind)) {
        md_puts(b, e->access == 2 ? "WRITE" : e->access == 1 ? "READ" : "ACCESS");
        if (e->access_size > 0) { md_puts(b, " of size "); md_putu(b, e->access_size); }
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
    if (e->kind == MD_ERROR_NEW_DELETE_MISMATCH && s) put_type_mismatch(b, e, s);
    put_raw_frames(b, e->frames, e->nframes);
    md_flush(b);   /* the essentials are out before libdwfl runs */
    md_print_stack(b, e->frames, e->nframes, e->pc != 0);
    md_putc(b, '\n');

    if (s) {
        put_location(b, e->addr, s);
        if (slot_freed(s)) {
            md_puts(b, "freed by thread T");
            md_putu(b, s->free_tid);
            md_puts(b, " here:\n");
            put_stack_id(b, s->free_stack);
            md_puts(b, "\npreviously allocated by thread T");
        } else {
            put_frozen_by(b, e, s);
            md_puts(b, "allocated by thread T");
        }
        md_putu(b, s->alloc_tid);
        md_puts(b, " here:\n");
        put_stack_id(b, s->alloc_stack);
        md_putc(b, '\n');
    } else if (e->kind == MD_ERROR_BAD_FREE) {
        md_putx(b, e->addr);
        md_puts(b, md_in_arena(e->addr) ? " is in the memdbg heap but not in any block\n\n"
                                        : " was not allocated by malloc (not in the memdbg heap)\n\n");
    } else {
        md_putx(b, e->addr);
        md_puts(b, " is in the memdbg heap but not in any block\n\n");
    }

    if (e->pc) put_certainty(b, e->addr);   /* a fault: the pointer may be older than the block */
    put_summary(b, e, kind);
    md_report_end(b);
    md_in_runtime = saved;
}

/* Every error report calls this before it prints anything, on the stack
 * of the code that made the error (below the signal frame for a fault),
 * so `break memdbg_break` in gdb stops with the program's frames in the
 * backtrace and the kind and address in the arguments.  Exported, never
 * inlined, and it does nothing, so the breakpoint always has a place. */
MEMDBG_API __attribute__((noinline)) void memdbg_break(const char *kind, const void *addr)
{
    __asm__ volatile("" : : "r"(kind), "r"(addr) : "memory");
}

void md_report_error(const struct md_error_info *e)
{
    memdbg_break(kind_names[e->kind], (const void *)e->addr);
    md_with_report_stack(report_body, (void *)e);
}

void md_report_fault_in_report(uintptr_t addr, uintptr_t pc)
{
    if (active_buf) md_flush(active_buf);
    char mem[256];
    struct md_buf b;
    md_buf_init(&b, mem, sizeof mem, md_report_fd());
    md_puts(&b, "\n");
    md_put_pid_prefix(&b);
    md_puts(&b, "memdbg: SEGV on address ");
    md_putx(&b, addr);
    md_puts(&b, " (pc ");
    md_putx(&b, pc);
    md_puts(&b, ") inside memdbg's own report; the report above is incomplete\n");
    md_flush(&b);
    md_error_finish(true);
    _exit(md_opt.exitcode);
}

void md_error_finish(bool fatal)
{
    if (!fatal && !md_opt.halt_on_error) return;
    if (!md_json_reports()) {   /* a JSON stream holds reports only */
        struct md_buf b;
        md_report_begin(&b);
        md_put_pid_prefix(&b);
        md_puts(&b, "ABORTING\n");
        md_report_end(&b);
    }
    if (md_opt.abort_on_error) {
        /* make sure SIGABRT is not caught or ignored: we want the core */
        struct sigaction sa = { .sa_handler = SIG_DFL };
        sigaction(SIGABRT, &sa, 0);
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGABRT);
        sigprocmask(SIG_UNBLOCK, &set, 0);
        md_core_trim();
        raise(SIGABRT);
    }
    _exit(md_opt.exitcode);
}
