/* SPDX-License-Identifier: MIT */
/* Exit-time work: padding check of live blocks, LeakSanitizer-style leak
 * report, print_stats (report/stats.c).
 *
 * Leak detection is a conservative mark phase: the roots (leak_roots.c:
 * loaded objects' writable segments, thread stacks, TLS, registers,
 * registered regions), blocks ignored through the LSan interface, blocks
 * the dynamic linker allocated and frees still queued (deferred_free.c)
 * mark what they point to, transitively; of the rest, blocks whose
 * allocation stack matches a suppression are suppressed together with what
 * they reach; the others are direct leaks, or indirect when another
 * leaked block points to them (mark_leaks).  Leaks are grouped by
 * allocation stack, largest first. */

#include "leak/leak.h"
#include <dlfcn.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>


/* slot id -> 0 unreached, 1 reachable, 2 indirect, 3 suppressed */
enum leak_mark { LEAK_MARK_NONE, LEAK_MARK_REACHABLE, LEAK_MARK_INDIRECT, LEAK_MARK_SUPPRESSED };
static uint8_t *mark;
static uint32_t *work, *origins;
static size_t nwork, mark_cap;
/* The leaked block whose reach is being marked indirect: its pointers to
 * itself, direct or around a cycle, do not make it indirect (as in
 * LeakSanitizer, indirect means pointed to by another leaked block). */
static uint32_t origin;

static void consider(uintptr_t w, uint8_t how)
{
    uint32_t id;
    if (md_in_arena(w)) {
        id = md_heap.page_slot[(w - md_heap.base) >> MD_PAGE_SHIFT];
    } else {   /* a block with a mapping of its own (core/direct.c) */
        struct md_slot *d = md_direct_count ? md_direct_slot_of(w) : 0;
        id = d ? (uint32_t)(d - md_heap.slots) : 0;
    }
    if (!id || mark[id] || id == origin) return;
    struct md_slot *s = &md_heap.slots[id];
    if (s->state != MD_SLOT_LIVE || w < s->user || w > s->user + s->size) return;
    mark[id] = how;
    work[nwork++] = id;
}

static void consider_root(uintptr_t w) { consider(w, LEAK_MARK_REACHABLE); }

/* The block being read, for drain() to go on in it after a fault
 * (volatile: read after the jump back). */
static volatile uintptr_t scan_start, scan_end;

/* Blocks at least this big are read page by page, skipping the pages
 * the program never wrote (sys/pagemap.c), where their memory is private
 * and anonymous: a block with a mapping of its own, or any block when the
 * heap is not a memfd.  A 1 TiB block touched in a few places is then
 * scanned in milliseconds instead of one zero-page fault per page. */
#define SPARSE_SCAN_BYTES ((uintptr_t)1 << 20)
static struct md_pagemap pagemap = { .fd = -1 };   /* open during a check */

static bool scan_sparsely(uintptr_t from, uintptr_t end)
{
    if (end - from < SPARSE_SCAN_BYTES || pagemap.fd < 0) return false;
    return !md_in_arena(from) || !md_heap.backend->needs_file;
}

/* The block drain() reads (NULL between blocks).  A big block of a heap
 * that is a memfd is read where its file pages hold data, which the
 * backend tells (file_extent): a page never written is a hole of the
 * file, and reading it would give it memory. */
static const struct md_slot *scan_slot;

static bool scan_by_file(uintptr_t from, uintptr_t end)
{
    return scan_slot && end - from >= SPARSE_SCAN_BYTES && md_in_arena(from) &&
           md_heap.backend->needs_file && md_heap.backend->file_extent;
}

/* A block's words are taken from its start: a block of odd or
 * twice-odd size starts only 2-aligned (heap.c block_alignment), and
 * the pointers the program stores in it lie at multiples of 8 from its
 * start (a struct with a flexible array member), not of 8 in memory.
 * A word that starts on a page never written holds zeros in its first
 * bytes and is skipped with that page. */
static void scan_words(uintptr_t from, uint8_t how)
{
    uintptr_t end = scan_end;
    bool sparse = from < end && scan_sparsely(from, end);
    bool by_file = !sparse && from < end && scan_by_file(from, end);
    uintptr_t data_end = 0;   /* the file holds data up to here (by_file) */
    for (uintptr_t p = from; p + 8 <= end;) {
        uintptr_t page_end = (p | (MD_PAGE - 1)) + 1;
        if (sparse && !md_pagemap_has_data(&pagemap, p)) {
            p += (page_end - p + 7) & ~(uintptr_t)7;
            continue;
        }
        if (by_file && p >= data_end) {
            uint32_t page = (uint32_t)((p - md_heap.base) >> MD_PAGE_SHIFT);
            uint32_t last = (uint32_t)((end - 1 - md_heap.base) >> MD_PAGE_SHIFT);
            long pages = md_heap.backend->file_extent(scan_slot, page, last - page + 1);
            if (pages < 0) {
                uintptr_t to = md_page_addr(page + (uint32_t)-pages);
                p += (to - p + 7) & ~(uintptr_t)7;
                continue;
            }
            if (pages == 0) by_file = false;
            else data_end = md_page_addr(page + (uint32_t)pages);
        }
        for (; p + 8 <= end && p < page_end; p += 8) {
            uintptr_t v;
            memcpy(&v, (const void *)p, sizeof v);
            consider(v, how);
        }
    }
}

/* Reads the blocks on the work list, and those they reach.  Live blocks
 * are read with plain loads, but the program may have made a page of one
 * unreadable (mprotect of a coroutine stack's guard page inside a
 * malloc'd stack): a fault jumps back here (fault.c), and the scan goes
 * on at the first word of the block past the faulting page.  The signal
 * mask is restored by hand, so that the common case costs no
 * sigprocmask per block. */
static void drain(uint8_t how)
{
    sigjmp_buf env;
    sigset_t mask;
    pthread_sigmask(SIG_SETMASK, NULL, &mask);
    scan_start = scan_end = 0;
    volatile uintptr_t from = 0;   /* set again after the jump */
    if (sigsetjmp(env, 0)) {
        pthread_sigmask(SIG_SETMASK, &mask, NULL);
        uintptr_t next_page = (md_block_read_fault | (MD_PAGE - 1)) + 1;
        from = scan_start + ((next_page - scan_start + 7) & ~(uintptr_t)7);
    }
    md_block_read_jmp = &env;
    for (;;) {
        scan_words(from, how);
        if (!nwork) break;
        const struct md_slot *s = &md_heap.slots[work[--nwork]];
        scan_slot = s;
        scan_start = from = s->user;
        scan_end = s->user + s->size;
    }
    scan_slot = NULL;
    md_block_read_jmp = NULL;
}


/* Suppression of each allocation stack, memoized across checks (the
 * symbolizer is slow): stack id -> suppression index + 2, 1 none. */
#define SUPP_MEMO 4096
static uint32_t memo_stack[SUPP_MEMO];
static int memo_result[SUPP_MEMO];

static int suppression_of(uint32_t stack)
{
    uint32_t h = (stack * 2654435761u) % SUPP_MEMO;
    if (memo_result[h] && memo_stack[h] == stack) return memo_result[h] - 2;
    int k = md_suppression_for(stack);
    memo_stack[h] = stack;
    memo_result[h] = k + 2;
    return k;
}

/* Marks the roots and everything else that is not a leak. */
static void mark_live(void)
{
    uint32_t n = md_heap.nslots;
    md_scan_roots(consider_root);
    for (uint32_t id = 1; id <= n; id++) {
        struct md_slot *s = &md_heap.slots[id];
        if (s->state != MD_SLOT_LIVE || mark[id]) continue;
        if (md_leak_ignored(id) || md_allocated_by_ldso(s->alloc_stack)) consider(s->user, LEAK_MARK_REACHABLE);
    }
    md_deferred_foreach(consider_root);
    drain(LEAK_MARK_REACHABLE);
}

/* Everything still unmarked is leaked; a leaked block is indirect when
 * another leaked block points to it, but a block's pointers to itself,
 * directly or around a cycle, do not make it indirect: of each group of
 * leaked blocks that reach each other and that no other leaked block
 * reaches, one is direct.  First pass: marking from each unmarked block in
 * turn leaves unmarked one block of each such group (nothing else reaches
 * it), and perhaps blocks that a later origin reaches only through blocks
 * the earlier one marked (C before A in A -> B <-> C).  Second pass, from
 * those origins in reverse order, with the marks of the first cleared: an
 * origin that another one reaches was always found after it in the first
 * pass, so it is marked before its turn comes. */
static void mark_leaks(void)
{
    uint32_t n = md_heap.nslots, norigins = 0;
    for (uint32_t id = 1; id <= n; id++) {
        if (md_heap.slots[id].state != MD_SLOT_LIVE || mark[id]) continue;
        origins[norigins++] = origin = id;
        work[nwork++] = id;
        drain(LEAK_MARK_INDIRECT);
    }
    for (uint32_t id = 1; id <= n; id++)
        if (mark[id] == LEAK_MARK_INDIRECT) mark[id] = LEAK_MARK_NONE;
    for (uint32_t i = norigins; i-- > 0;) {
        uint32_t id = origins[i];
        if (mark[id]) continue;
        origin = id;
        work[nwork++] = id;
        drain(LEAK_MARK_INDIRECT);
    }
    origin = 0;
}

struct leak_group { uint32_t stack; uint8_t direct; size_t bytes, count; };

static int by_stack(const void *a, const void *b)
{
    const struct leak_group *x = a, *y = b;
    if (x->direct != y->direct) return y->direct - x->direct;
    return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int by_size(const void *a, const void *b)
{
    const struct leak_group *x = a, *y = b;
    if (x->direct != y->direct) return y->direct - x->direct;
    return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

/* The leak report as one JSON object (docs/report-json.md). */
static void json_leaks(struct md_buf *b, const struct leak_group *g, size_t m, size_t sup_bytes, size_t sup_blocks)
{
    struct md_json j;
    size_t total = 0, blocks = 0;
    for (size_t i = 0; i < m; i++) {
        total += g[i].bytes;
        blocks += g[i].count;
    }
    md_json_begin(&j, b, "memory-leaks");
    md_json_uint(&j, "thread", md_thread_id());
    md_json_uint(&j, "leaked_bytes", total);
    md_json_uint(&j, "leaked_blocks", blocks);
    md_json_uint(&j, "suppressed_bytes", sup_bytes);
    md_json_uint(&j, "suppressed_blocks", sup_blocks);
    md_json_open(&j, "leaks", '[');
    for (size_t i = 0; i < m; i++) {
        const uintptr_t *f;
        int nf = md_depot_get(g[i].stack, &f);
        md_json_open(&j, 0, '{');
        md_json_str(&j, "kind", g[i].direct ? "direct" : "indirect");
        md_json_uint(&j, "size", g[i].bytes);
        md_json_uint(&j, "count", g[i].count);
        md_json_open(&j, "stacks", '{');
        md_json_stack(&j, "allocation", f, nf, false);
        md_json_close(&j, '}');
        md_json_close(&j, '}');
    }
    md_json_close(&j, ']');
    md_json_end(&j);
}

/* No live block, no leak.  The roots scan reads every writable mapping of
 * the process and is most of a short process's exit time; with
 * sample_rate most processes end with no guarded block alive. */
static bool any_live_block(void)
{
    for (uint32_t id = 1; id <= md_heap.nslots; id++)
        if (md_heap.slots[id].state == MD_SLOT_LIVE) return true;
    return false;
}

/* report_leaks found leaks to print but could not load the symbolizer
 * under the heap lock (md_sym_loadable); checks_locked loads it without
 * the lock and checks again. */
static bool leaks_need_symbolizer, leaks_second_pass;

/* A live block that no root reaches: a leak unless suppressed. */
static bool any_unreached(uint32_t n)
{
    for (uint32_t id = 1; id <= n; id++)
        if (md_heap.slots[id].state == MD_SLOT_LIVE && mark[id] == LEAK_MARK_NONE) return true;
    return false;
}

static bool find_and_report_leaks(void)
{
    uint32_t n = md_heap.nslots;
    if (n + 1 > mark_cap) {   /* kept for the next check (the internal pool never frees) */
        mark_cap = n + 1 + n / 4;
        mark = md_internal_alloc(mark_cap, 16);
        work = md_internal_alloc(mark_cap * sizeof *work, 16);
        origins = md_internal_alloc(mark_cap * sizeof *origins, 16);
        if (!mark || !work || !origins) { mark_cap = 0; return false; }
    }
    memset(mark, 0, n + 1);
    nwork = 0;
    mark_live();
    /* before the suppressions, which count their hits */
    if (!leaks_second_pass && any_unreached(n) && !md_sym_loadable()) {
        leaks_need_symbolizer = true;
        return false;
    }
    /* suppressed blocks, and what they keep alive */
    size_t sup_bytes = 0, sup_blocks = 0;
    if (md_have_suppressions()) {
        for (uint32_t id = 1; id <= n; id++) {
            struct md_slot *s = &md_heap.slots[id];
            if (s->state != MD_SLOT_LIVE || mark[id]) continue;
            int k = suppression_of(s->alloc_stack);
            if (k < 0) continue;
            md_suppression_hit(k, s->size);
            sup_bytes += s->size;
            sup_blocks++;
            mark[id] = LEAK_MARK_SUPPRESSED;
            work[nwork++] = id;
            drain(LEAK_MARK_SUPPRESSED);
        }
    }
    mark_leaks();
    size_t nleaks = 0;
    for (uint32_t id = 1; id <= n; id++)
        if (md_heap.slots[id].state == MD_SLOT_LIVE && (mark[id] == LEAK_MARK_NONE || mark[id] == LEAK_MARK_INDIRECT)) nleaks++;

    struct md_buf buf, *b = &buf;
    if (!nleaks) {
        if (sup_blocks && !md_json_reports()) {
            md_report_begin(b);
            md_print_suppressions_used(b);
            md_put_pid_prefix(b);
            md_puts(b, "memdbg: no unsuppressed leaks; ");
            md_putu(b, sup_bytes);
            md_puts(b, " byte(s) in ");
            md_putu(b, sup_blocks);
            md_puts(b, " allocation(s) suppressed.\n");
            md_report_end(b);
        }
        return false;
    }

    struct leak_group *g = md_internal_alloc(nleaks * sizeof *g, 16);
    if (!g) return true;
    size_t k = 0;
    for (uint32_t id = 1; id <= n; id++) {
        struct md_slot *s = &md_heap.slots[id];
        if (s->state != MD_SLOT_LIVE || (mark[id] != LEAK_MARK_NONE && mark[id] != LEAK_MARK_INDIRECT)) continue;
        g[k++] = (struct leak_group){ s->alloc_stack, mark[id] == LEAK_MARK_NONE, s->size, 1 };
    }
    qsort(g, k, sizeof *g, by_stack);
    size_t m = 0;
    for (size_t i = 0; i < k; i++) {
        if (m && g[m - 1].stack == g[i].stack && g[m - 1].direct == g[i].direct) {
            g[m - 1].bytes += g[i].bytes;
            g[m - 1].count++;
        } else {
            g[m++] = g[i];
        }
    }
    qsort(g, m, sizeof *g, by_size);

    memdbg_break("detected memory leaks", 0);
    md_report_begin(b);
    if (md_json_reports()) {
        json_leaks(b, g, m, sup_bytes, sup_blocks);
        md_report_end(b);
        return true;
    }
    md_puts(b, "\n=================================================================\n");
    md_put_pid_prefix(b);
    md_puts(b, "ERROR: memdbg: detected memory leaks\n");
    size_t total = 0, blocks = 0;
    for (size_t i = 0; i < m; i++) {
        md_puts(b, g[i].direct ? "\nDirect leak of " : "\nIndirect leak of ");
        md_putu(b, g[i].bytes);
        md_puts(b, " byte(s) in ");
        md_putu(b, g[i].count);
        md_puts(b, " object(s) allocated from:\n");
        const uintptr_t *f;
        int nf = md_depot_get(g[i].stack, &f);
        md_print_stack(b, f, nf, false);
        total += g[i].bytes;
        blocks += g[i].count;
    }
    md_putc(b, '\n');
    md_print_suppressions_used(b);
    if (md_opt.print_summary) {
        md_puts(b, "SUMMARY: memdbg: ");
        md_putu(b, total);
        md_puts(b, " byte(s) leaked in ");
        md_putu(b, blocks);
        md_puts(b, " allocation(s).");
        if (sup_blocks) {
            md_putc(b, ' ');
            md_putu(b, sup_bytes);
            md_puts(b, " byte(s) in ");
            md_putu(b, sup_blocks);
            md_puts(b, " allocation(s) suppressed.");
        }
        if (md_opt.sample_rate > 1) {
            md_puts(b, " Sampled mode: only the guarded blocks (about 1 in ");
            md_putu(b, (unsigned)md_opt.sample_rate);
            md_puts(b, ") are checked.");
        }
        md_putc(b, '\n');
    }
    md_report_end(b);
    return true;
}

/* Whether leaks were reported; the pagemap is open while blocks are
 * read. */
static bool report_leaks(void)
{
    if (!any_live_block()) return false;
    md_pagemap_open(&pagemap);
    bool found = find_and_report_leaks();
    md_pagemap_close(&pagemap);
    return found;
}

static void check_live_padding(void)
{
    sigjmp_buf env;
    sigset_t mask;
    static uint32_t id;   /* survives the jump (see drain) */
    pthread_sigmask(SIG_SETMASK, NULL, &mask);
    id = 1;
    if (sigsetjmp(env, 0)) {   /* a block the program made unreadable */
        pthread_sigmask(SIG_SETMASK, &mask, NULL);
        id++;
    }
    md_block_read_jmp = &env;
    for (; id <= md_heap.nslots; id++) {
        struct md_slot *s = &md_heap.slots[id];
        uintptr_t bad;
        if (s->state != MD_SLOT_LIVE || __atomic_load_n(&s->filling, __ATOMIC_ACQUIRE) ||
            md_check_padding(s, &bad))
            continue;
        /* a compact neighbour's overflow: reported with that block */
        uintptr_t from_below;
        if (bad < s->user && md_overflow_from_below(s, &from_below)) continue;
        struct md_error_info e = {
            .kind = bad >= s->user + s->size ? MD_ERROR_OVERFLOW : MD_ERROR_UNDERFLOW,
            .access = 2, .slot = s,
            .how = "the padding next to a live block was overwritten; found at exit",
        };
        e.access_size = md_padding_damage(s, bad, &e.addr);
        uint32_t above;
        if (e.kind == MD_ERROR_OVERFLOW && (above = md_underflow_from_above(s, &e.addr, e.access_size)) != 0) {
            e.kind = MD_ERROR_UNDERFLOW;
            e.slot = &md_heap.slots[above];
            e.how = "a live block was written below its start, into the redzone of the block below it "
                    "(compact mode); found at exit";
        } else if (e.kind == MD_ERROR_OVERFLOW && md_damage_reaches_window_end(s, e.addr, e.access_size)) {
            e.how = "the padding after a live block was overwritten to the end of its redzone (compact mode), "
                    "perhaps further; found at exit";
        }
        md_block_read_jmp = NULL;
        md_report_error(&e);
        md_block_read_jmp = &env;
    }
    md_block_read_jmp = NULL;
}

static int final_check_done;   /* __lsan_do_leak_check ran: none at exit */

/* A program built for LSan may turn the check off: int __lsan_is_turned_off(void). */
static bool turned_off(void)
{
    int (*off)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "__lsan_is_turned_off");
    return off && off();
}

/* What takes ld.so's lock (dlsym) happens before the heap lock: a thread
 * inside dlopen holds the former while it waits for the latter. */
static void leak_prepare(void)
{
    md_scan_roots_prepare();
    /* suppressions match function names: the symbolizer first */
    if (md_have_suppressions() && any_live_block()) md_sym_prepare();
}

/* Takes the heap lock, but does not wait forever: exit() may come from a
 * signal handler that interrupted malloc on this very thread. */
static bool lock_for_check(void)
{
    /* exit() from a handler that interrupted this thread's malloc or free
     * (a fork child's, say): the heap is half-way through a change */
    if (md_heap_lock_mine()) return false;
    int tries = 0;
    while (!md_heap_trylock()) {
        if (++tries > 2000) return false;
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, 0);
    }
    return true;
}

/* __lsan_do_leak_check (final) and __lsan_do_recoverable_leak_check. */
/* The checks symbolize, which needs a large stack: exit() or
 * __lsan_do_leak_check() may come from a thread with a 64 KiB one.  They
 * run on memdbg's report stack; the roots scan still starts at this
 * thread's own stack pointer, taken here after the callee-saved registers
 * were stored in this frame (they may hold the program's only copy of a
 * pointer, e.g. one main kept in r15 when it called exit). */
struct exit_checks { bool padding, leaks, stats, leaked; };

static void run_checks(void *arg)
{
    struct exit_checks *c = arg;
    if (c->padding) check_live_padding();
    c->leaked = c->leaks && report_leaks();
    if (c->stats && !leaks_need_symbolizer) md_print_stats();   /* else after the second pass */
}

static __attribute__((noinline)) bool checks_on_report_stack(bool padding, bool leaks, bool stats,
                                                             const struct md_caller_frame *exit_caller)
{
    struct exit_checks c = { padding, leaks, stats, false };
    volatile uintptr_t regs[6];
    uintptr_t sp;
    MD_SPILL_REGISTERS(regs, sp);
    md_scan_roots_set_sp(sp);
    md_scan_roots_set_exit_caller(exit_caller);
    md_with_report_stack(run_checks, &c);
    md_scan_roots_set_sp(0);
    md_scan_roots_set_exit_caller(NULL);
    (void)regs[0];
    return c.leaked;
}

/* The checks, the heap lock held.  When leaks are to be printed and the
 * symbolizer cannot load under the lock, the lock is given up for the
 * load and the leak check runs again.  false: the lock could not be taken
 * again, nothing more was checked, and the lock is not held. */
static bool checks_locked(bool padding, bool leaks, bool stats, const struct md_caller_frame *exit_caller,
                          bool *leaked)
{
    leaks_need_symbolizer = leaks_second_pass = false;
    *leaked = checks_on_report_stack(padding, leaks, stats, exit_caller);
    if (!leaks_need_symbolizer) return true;
    md_heap_unlock();
    md_sym_prepare();
    if (!lock_for_check()) return false;
    leaks_need_symbolizer = false;
    leaks_second_pass = true;
    *leaked = checks_on_report_stack(false, true, stats, exit_caller);
    return true;
}

int md_leak_check_now(bool final)
{
    md_ensure_init();
    if (!md_opt.detect_leaks || final_check_done) return 0;
    md_drain_deferred_frees();
    md_in_runtime++;
    if (final) final_check_done = 1;
    leak_prepare();
    bool leaked;
    if (!lock_for_check() || !checks_locked(false, true, false, NULL, &leaked)) { md_in_runtime--; return 0; }
    if (leaked && final && md_leaks_set_exitcode()) {
        fflush(0);
        _exit(md_opt.exitcode);
    }
    md_heap_unlock();
    md_in_runtime--;
    return leaked;
}

/* The frame that called exit() (main's, or __libc_start_call_main's once
 * main returned), found before the heap lock: the lookup of libc's exit
 * takes ld.so's lock, and libunwind may allocate.  RTLD_NEXT finds libc's
 * own exit, not a non-PIE program's PLT entry for it. */
static bool find_exit_caller(struct md_caller_frame *f)
{
    void *libc_exit = dlsym(RTLD_NEXT, "exit");
    return md_caller_of((uintptr_t)libc_exit, f);
}

static void at_exit(void)
{
    if (!md_heap.initialized) return;
    md_drain_deferred_frees();
    md_in_runtime++;
    bool check_leaks = md_opt.detect_leaks && !final_check_done && !turned_off();
    struct md_caller_frame exit_caller;
    bool from_exit = false;
    if (check_leaks) {
        leak_prepare();
        from_exit = !md_opt.leak_scan_exit_frames && find_exit_caller(&exit_caller);
    }
    bool leaked;
    if (!lock_for_check() || !checks_locked(md_opt.check_at_exit, check_leaks, md_opt.print_stats,
                                            from_exit ? &exit_caller : NULL, &leaked)) {
        md_in_runtime--;
        return;
    }
    if ((leaked && md_leaks_set_exitcode()) || md_heap.errors_reported) {
        fflush(0);
        _exit(md_opt.exitcode);
    }
    md_heap_unlock();
    md_in_runtime--;
}

/* A destructor of the preloaded library runs after the program's own
 * destructors and atexit handlers (it was initialised first). */
__attribute__((destructor)) static void md_destructor(void)
{
    at_exit();
}
