/* SPDX-License-Identifier: MIT */
/* The allocator proper: places each block against its guard page, fills
 * the padding (core/padding.c checks it), and moves freed blocks through
 * the quarantine.  One lock protects the arena; stacks are captured
 * before taking it. */

#include "alloc/alloc.h"
#include <errno.h>
#include <string.h>
#include <unistd.h>

/* ---- padding (checked in core/padding.c) ---- */

/* Pattern over [lo, hi) where it may be missing: within [dirty_lo, dirty_hi). */
static void fill_pad(uintptr_t lo, uintptr_t hi, uintptr_t dirty_lo, uintptr_t dirty_hi)
{
    if (lo < dirty_lo) lo = dirty_lo;
    if (hi > dirty_hi) hi = dirty_hi;
    if (lo < hi) memset((void *)lo, MD_PAD_BYTE, hi - lo);
}

/* ---- allocation ---- */

static void record_stats_alloc(size_t size)
{
    md_heap.total_allocs++;
    md_heap.live_blocks++;
    md_heap.live_bytes += size;
    if (md_heap.live_blocks > md_heap.peak_live_blocks) md_heap.peak_live_blocks = md_heap.live_blocks;
    if (md_heap.live_bytes > md_heap.peak_live_bytes) md_heap.peak_live_bytes = md_heap.live_bytes;
}

/* ---- placement: the only place that decides where a block lies ---- */

/* The alignment a block of size bytes gets: the alignment option (a
 * minimum), or more where the caller asks (memalign, aligned new).  Since
 * a block ends at its guard page, which is page-aligned, its start keeps
 * the largest power of two dividing its size as well: with the default
 * of 2 every even-sized block ends exactly at the guard, so x[n] after
 * malloc(n) faults at the access.  operator new is held to more:
 * compilers (clang) assume its result is aligned to
 * __STDCPP_DEFAULT_NEW_ALIGNMENT__ (16) from 16 bytes on, and new[] must
 * suit any object no larger than its size, so a new block gets 16 from
 * 16 bytes on and the largest power of two not above its size below. */
static size_t block_alignment(size_t size, size_t requested, int kind)
{
    /* A string's copy is read byte by byte: the default of 2 is there for
     * malloc'd data only (CPython's code bytes), so a string of odd size
     * ends at the guard too, and reading its byte [n] faults. */
    if (requested == MD_ALIGN_BYTES) return md_opt.alignment <= 2 ? 1 : md_opt.alignment;
    size_t a = md_opt.alignment;
    if (kind != MD_KIND_MALLOC) {
        size_t cxx = size >= 16 || !size ? 16 : (size_t)1 << (63 - __builtin_clzl(size));
        if (cxx > a) a = cxx;
    }
    return requested > a ? requested : a;
}

/* Data pages a block needs so that an a-aligned pointer fits against the
 * guard page: exact for a <= page, one extra alignment otherwise. */
static size_t block_data_pages(size_t size, size_t a)
{
    size_t span = a <= MD_PAGE ? ((size + a - 1) & ~(a - 1)) : ((size + MD_PAGE - 1) & ~(MD_PAGE - 1)) + a;
    size_t npages = (span + MD_PAGE - 1) >> MD_PAGE_SHIFT;
    return npages ? npages : 1;
}

/* The block's address in its slot: against the guard page after the data
 * (or before it, protect_below), alignment kept. */
static uintptr_t place_block(const struct md_slot *s, size_t size, size_t a)
{
    uintptr_t lo = md_slot_data_lo(s), hi = md_slot_data_hi(s);
    /* a window's block ends win_tail bytes before it: its padding there */
    return md_opt.protect_below ? ((lo + a - 1) & ~(uintptr_t)(a - 1))
                                : ((hi - s->win_tail - size) & ~(uintptr_t)(a - 1));
}

/* With the heap lock held (and returned held): a new slot of npages data
 * pages, committed (state MD_SLOT_READY), or NULL.  The commit runs without
 * the lock where the backend allows (page_ops_unlocked); otherwise the
 * backend may give the lock up around its own calls (nonlinear: the slot
 * is in no list meanwhile). */
static struct md_slot *take_slot_locked(uint32_t npages)
{
    MD_DCHECK(md_heap_lock_mine());
    const struct md_backend *be = md_heap.backend;
    uint32_t id = md_slot_get(npages + 1, md_heap.unguarded_mode);
    if (!id) return 0;
    struct md_slot *s = &md_heap.slots[id];
    s->state = MD_SLOT_READY;
    s->data_pages = npages;
    if (be->page_ops_unlocked) md_heap_unlock();
    int rc = be->commit(s, md_slot_data_page(s), s->data_pages);
    if (be->page_ops_unlocked) md_heap_lock();
    if (rc != 0) {
        s->data_pages = 0;
        md_free_list_push(id);
        return 0;
    }
    return s;
}

/* A block the arena cannot hold gets a mapping of its own (core/direct.c),
 * with the stack captured by the caller, the heap lock held (and given
 * back); NULL with ENOMEM when the kernel refuses the mapping, as glibc's
 * malloc is then. */
static void *alloc_direct(size_t size, size_t a, int kind, size_t align, bool zero, struct md_stack *st)
{
    uintptr_t user;
    uint32_t id = md_direct_map(size, a, &user);
    if (!id) {
        md_heap_unlock();
        md_in_runtime--;
        errno = ENOMEM;
        return 0;
    }
    struct md_slot *s = &md_heap.slots[id];
    s->user = user;
    s->size = size;
    s->kind = (uint8_t)kind;
    s->new_align_order = align && align != MD_ALIGN_BYTES ? (uint8_t)(__builtin_ctzl(align) + 1) : 0;
    s->alloc_stack = md_stack_id(st);
    s->alloc_tid = md_thread_id();
    s->state = MD_SLOT_LIVE;
    md_leak_alloc_hook(id);
    record_stats_alloc(size);
    md_heap_unlock();
    /* fresh anonymous memory reads as zero: calloc has nothing to do */
    if (!zero && md_opt.malloc_fill_byte >= 0)
        memset((void *)user, md_opt.malloc_fill_byte,
               size < md_opt.max_malloc_fill_size ? size : md_opt.max_malloc_fill_size);
    md_in_runtime--;
    return (void *)user;
}

/* Blocks of at least this many pages that the arena cannot place get a
 * mapping of their own; smaller ones are ENOMEM, as the arena is then
 * full of small blocks and mappings of their own would run into
 * vm.max_map_count. */
#define DIRECT_MIN_PAGES 256

/* A block in the guarded heap (the caller has initialised memdbg). */
static void *alloc_guarded(size_t size, size_t align, int kind, bool zero)
{
    if (size == 0 && !md_opt.allow_malloc_0) return 0;
    size_t a = block_alignment(size, align, kind);
    /* A block may take any part of the arena that is free, the whole of
     * it included (the quarantine gives its address space back first, in
     * md_slot_get).  A block larger than the arena, or one the arena has
     * no room for, gets a mapping of its own (alloc_direct).  The size
     * check comes first so that the page count below cannot overflow. */
    bool too_big = size > md_heap.size || a > md_heap.size / 4;
    size_t want_pages = too_big ? 0 : block_data_pages(size, a);
    if (want_pages >= md_heap.total_pages) too_big = true;
    if (too_big && size > (SIZE_MAX >> 2)) { errno = ENOMEM; return 0; }
    uint32_t npages = (uint32_t)want_pages;
    if (too_big) {
        md_in_runtime++;
        struct md_stack stack;
        md_stack_capture(&stack, md_opt.malloc_context_size);
        md_heap_lock();
        return alloc_direct(size, a, kind, align, zero, &stack);
    }

    md_in_runtime++;
    struct md_stack stack, *st = &stack;
    md_stack_capture(st, md_opt.malloc_context_size);
    /* compact mode takes windows from the backend (with the lock); other
     * small blocks come from the thread's cache, without it */
    bool try_window = md_heap.backend->take_window && md_opt.compact && !md_opt.protect_below &&
                      size <= md_opt.compact_max;
    struct md_slot *s = try_window ? 0 : md_cache_take(npages);
    md_heap_lock();
    if (!s && try_window) {   /* compact mode: a window of a shared page */
        uint32_t wid = md_heap.backend->take_window(size, a);
        if (wid) s = &md_heap.slots[wid];
    }
    if (!s) s = take_slot_locked(npages);
    if (!s && npages >= DIRECT_MIN_PAGES) return alloc_direct(size, a, kind, align, zero, st);
    if (!s) {
        md_heap_unlock();
        md_in_runtime--;
        errno = ENOMEM;
        return 0;
    }
    uint32_t id = (uint32_t)(s - md_heap.slots);
    uintptr_t ds = md_slot_data_lo(s), de = md_slot_data_hi(s);
    uintptr_t user = place_block(s, size, a);
    bool fresh = s->flags & SLOT_F_FRESH;
    /* A recycled run (nonlinear) is padding already except where its last
     * block lay: fill only that (a few hundred bytes instead of a page). */
    uintptr_t dirty_lo = ds, dirty_hi = de;
    if (!s->win_hi && (s->flags & SLOT_F_PADDED)) {   /* a window is filled whole */
        dirty_lo = ds + s->pad_lo;
        dirty_hi = ds + s->pad_hi;
    }
    s->user = user;
    s->size = size;
    s->filling = 1;
    s->kind = (uint8_t)kind;
    s->new_align_order = align && align != MD_ALIGN_BYTES ? (uint8_t)(__builtin_ctzl(align) + 1) : 0;
    s->alloc_stack = md_stack_id(st);
    s->alloc_tid = md_thread_id();
    s->free_stack = 0;
    s->free_tid = 0;
    s->next = 0;
    s->state = MD_SLOT_LIVE;
    md_leak_alloc_hook(id);
    record_stats_alloc(size);
    md_heap_unlock();

    /* The block is not visible to anyone else yet: fill without the lock. */
    fill_pad(ds, user, dirty_lo, dirty_hi);
    fill_pad(user + size, de, dirty_lo, dirty_hi);
    if (zero) {
        if (!fresh) memset((void *)user, 0, size);
    } else if (md_opt.malloc_fill_byte >= 0) {
        memset((void *)user, md_opt.malloc_fill_byte,
               size < md_opt.max_malloc_fill_size ? size : md_opt.max_malloc_fill_size);
    }
    __atomic_store_n(&s->filling, 0, __ATOMIC_RELEASE);
    md_in_runtime--;
    return (void *)user;
}

void *md_alloc(size_t size, size_t align, int kind, bool zero)
{
    size_t asked = align == MD_ALIGN_BYTES ? 0 : align;   /* what another allocator is asked */
    if (md_in_runtime) {
        void *p = md_internal_alloc(size, asked);
        if (p && zero) memset(p, 0, size);
        return p;
    }
    md_ensure_init();
    /* sampled guarding: most blocks go to the C library's allocator */
    if (md_opt.sample_rate > 1 && !md_sampled()) {
        if (size == 0 && !md_opt.allow_malloc_0) return 0;
        return md_libc_alloc(size, asked, zero);
    }
    return alloc_guarded(size, align, kind, zero);
}

/* ---- free ---- */

static bool kinds_match(int kind, int dealloc)
{
    switch (kind) {
    case MD_KIND_NEW: return dealloc == MD_DEALLOC_DELETE;
    case MD_KIND_NEW_ARRAY: return dealloc == MD_DEALLOC_DELETE_ARRAY;
    default: return dealloc == MD_DEALLOC_FREE || dealloc == MD_DEALLOC_REALLOC;
    }
}

/* Checks that p is a live block's start; reports otherwise.  Called with
 * the lock held; returns the slot or NULL (error reported). */
static struct md_slot *validate_for_free(void *p, struct md_stack *st, int dealloc)
{
    MD_DCHECK(md_heap_lock_mine());
    struct md_slot *s = md_slot_of_addr((uintptr_t)p);
    if (s && s->state == MD_SLOT_LIVE && s->user == (uintptr_t)p) {
        if (!kinds_match(s->kind, dealloc)) {
            struct md_error_info e = { .kind = MD_ERROR_MISMATCH, .addr = (uintptr_t)p, .frames = st->frames,
                                       .nframes = st->n, .slot = s, .alloc_kind = s->kind,
                                       .dealloc_kind = dealloc };
            md_report_error(&e);
            if (md_opt.halt_on_error) md_error_finish(true);
        }
        return s;
    }
    struct md_error_info e = { .addr = (uintptr_t)p, .frames = st->frames, .nframes = st->n, .slot = s,
                               .dealloc_kind = dealloc };
    if (s && s->user == (uintptr_t)p && (s->state == MD_SLOT_QUARANTINED || s->state == MD_SLOT_FREE))
        e.kind = MD_ERROR_DOUBLE_FREE;
    else
        e.kind = MD_ERROR_BAD_FREE;
    if (s && s->state == MD_SLOT_UNUSED) e.slot = 0;
    md_report_error(&e);
    if (md_opt.halt_on_error) md_error_finish(true);
    return 0;
}

/* A free that will report (no live block starts at p, or the block is of
 * another kind) loads the symbolizer before the heap lock, where loading
 * cannot deadlock (md_sym_prepare).  The look is without the lock, so it
 * may be stale, and a damaged padding is not looked for: such a report
 * loads under the lock, which only a single-threaded process does. */
static void prepare_free_report(void *p, int dealloc)
{
    if (md_sym_tried()) return;
    struct md_slot *s = md_slot_of_addr((uintptr_t)p);
    if (!s || __atomic_load_n(&s->state, __ATOMIC_RELAXED) != MD_SLOT_LIVE || s->user != (uintptr_t)p ||
        !kinds_match(s->kind, dealloc))
        md_sym_prepare();
}

/* Reports a damaged padding; true when it is intact. */
static bool check_block_padding(struct md_slot *s, struct md_stack *st)
{
    uintptr_t bad;
    if (md_check_padding(s, &bad)) return true;
    struct md_error_info e = {
        .kind = bad >= s->user + s->size ? MD_ERROR_OVERFLOW : MD_ERROR_UNDERFLOW,
        .access = 2, .frames = st->frames, .nframes = st->n, .slot = s,
        .how = "the padding next to the block was overwritten; found when it was freed",
    };
    e.access_size = (int)md_padding_damage(s, bad, &e.addr);
    uint32_t below, above;
    if (e.kind == MD_ERROR_OVERFLOW && (above = md_underflow_from_above(s, &e.addr, e.access_size)) != 0) {
        e.kind = MD_ERROR_UNDERFLOW;
        e.slot = &md_heap.slots[above];
        e.how = "the block was written below its start, into the redzone of the block below it "
                "(compact mode); found when that block was freed";
    } else if (e.kind == MD_ERROR_UNDERFLOW && (below = md_overflow_from_below(s, &e.addr)) != 0) {
        e.kind = MD_ERROR_OVERFLOW;
        e.access_size = 0;
        e.slot = &md_heap.slots[below];
        e.how = "the block overflowed past its redzone into the padding of the block above it (compact mode); "
                "found when that block was freed";
    } else if (e.kind == MD_ERROR_OVERFLOW && md_damage_reaches_window_end(s, e.addr, (size_t)e.access_size)) {
        e.how = "the padding after the block was overwritten to the end of its redzone (compact mode), "
                "perhaps further; found when it was freed";
    }
    md_report_error(&e);
    if (md_opt.halt_on_error) md_error_finish(true);
    return false;
}

/* Records the free (heap lock held); the slot is MD_SLOT_QUARANTINED from
 * here, so a second free is a double free at once, though its guard may
 * come later (md_blocks_guard). */
static void record_free(struct md_slot *s, struct md_stack *st)
{
    MD_DCHECK(md_heap_lock_mine());
    s->free_stack = md_stack_id(st);
    s->free_tid = md_thread_id();
    s->state = MD_SLOT_QUARANTINED;
    md_heap.total_frees++;
    md_heap.live_blocks--;
    md_heap.live_bytes -= s->size;
}

/* free's part under the lock: padding check, then the slot's flags for
 * its guard (md_blocks_guard) and its next life. */
static void retire_block(struct md_slot *s, struct md_stack *st)
{
    bool padded = check_block_padding(s, st);
    if (md_opt.free_fill_byte >= 0) memset((void *)s->user, md_opt.free_fill_byte, s->size);
    /* Tell the backend which bytes are not padding, so a recycled run is
     * re-filled only there (nonlinear); md_blocks_guard clears the flag
     * after the release. */
    if (padded && s->data_pages && s->data_pages < (1u << (32 - MD_PAGE_SHIFT))) {   /* offsets fit 32 bits */
        uintptr_t ds = md_slot_data_lo(s);
        s->pad_lo = (uint32_t)(s->user - ds);
        s->pad_hi = (uint32_t)(s->user + s->size - ds);
        __atomic_fetch_or(&s->flags, SLOT_F_PADDED, __ATOMIC_RELAXED);
    }
    /* recycle_pages: a small slot keeps its (now guarded) pages for the next
     * block placed in it after the quarantine, which saves returning them
     * and faulting in fresh ones; memory held grows with the quarantine, so
     * only a quarantine of at most 1 GiB (512 MiB of kept pages) does it. */
    if (md_opt.recycle_pages && md_opt.quarantine_size <= ((size_t)1 << 30) && md_heap.backend->drop &&
        s->cls < MD_READY_CLASSES && s->data_pages == s->pages - 1)
        __atomic_fetch_or(&s->flags, SLOT_F_KEPT, __ATOMIC_RELAXED);
    record_free(s, st);
}

/* The kernel work of n frees: guards over their data pages (one batch
 * call where the backend has one), memory back unless kept; then the
 * quarantine takes them, under the lock. */
static void guard_and_quarantine(const uint32_t *ids, uint32_t n)
{
    const struct md_backend *be = md_heap.backend;
    struct md_slot *batch[64];
    for (uint32_t done = 0; done < n;) {
        uint32_t k = n - done < 64 ? n - done : 64;
        for (uint32_t i = 0; i < k; i++) batch[i] = &md_heap.slots[ids[done + i]];
        if (be->release_many && k > 1) {
            be->release_many(batch, k);
        } else {
            for (uint32_t i = 0; i < k; i++)
                be->release(batch[i], md_slot_data_page(batch[i]), batch[i]->data_pages);
        }
        for (uint32_t i = 0; i < k; i++) {
            struct md_slot *s = batch[i];
            __atomic_fetch_and(&s->flags, (uint8_t)~SLOT_F_PADDED, __ATOMIC_RELAXED);
            if (be->drop && !(s->flags & SLOT_F_KEPT)) be->drop(md_slot_data_page(s), s->data_pages);
        }
        done += k;
    }
}

void md_blocks_guard(const uint32_t *ids, uint32_t n)
{
    MD_DCHECK(!md_heap_lock_mine());
    bool unlocked = md_heap.backend->page_ops_unlocked;
    if (!unlocked) md_heap_lock();
    guard_and_quarantine(ids, n);
    if (unlocked) md_heap_lock();
    for (uint32_t i = 0; i < n; i++) md_quarantine_push(ids[i]);
    md_heap_unlock();
}

/* The same for one block, the lock held (backends that do bookkeeping
 * around their calls: nonlinear gives the lock up around the call only,
 * while the block is quarantined but not yet in the FIFO). */
static void block_guard_locked(uint32_t id)
{
    guard_and_quarantine(&id, 1);
    md_quarantine_push(id);
}

void md_free(void *p, int dealloc)
{
    if (!p || md_is_internal(p)) return;
    /* an unsampled block: glibc's, whatever memdbg is doing; a local
     * variable is no block of either heap, and glibc would crash on its
     * made-up header, so it goes on to the report of a bad free */
    if (md_libc_owns(p) && !md_on_this_stack(p)) {
        md_libc_free(p);
        return;
    }
    /* inside memdbg (a signal handler interrupted it): a heap block is
     * freed later (dropping it made a false leak), never here */
    if (md_in_runtime) {
        if (md_in_heap((uintptr_t)p)) md_defer_free(p, dealloc);
        return;
    }
    md_drain_deferred_frees();
    md_ensure_init();
    md_in_runtime++;
    struct md_stack stack, *st = &stack;
    md_stack_capture(st, md_opt.malloc_context_size);
    prepare_free_report(p, dealloc);
    md_heap_lock();
    struct md_slot *s = validate_for_free(p, st, dealloc);
    if (s) md_freeze_end_if_frozen(s, st, dealloc);
    if (s) retire_block(s, st);
    if (s && s->direct) {   /* its own mapping: no guard batch, no quarantine */
        md_direct_retire(s);
        s = 0;
    }
    if (s && !md_heap.backend->page_ops_unlocked) {
        block_guard_locked((uint32_t)(s - md_heap.slots));
        s = 0;
    }
    md_heap_unlock();
    if (s) {
        uint32_t id = (uint32_t)(s - md_heap.slots);
        if (!md_cache_defer_guard(id)) md_blocks_guard(&id, 1);
    }
    md_in_runtime--;
}

/* realloc in place, with the lock held, when the block keeps its address:
 * then no stale pointer can exist, so nothing is lost in detection.
 *  - Default placement (block against the guard page after it): the end is
 *    fixed, so the start moves with the size; in place only when the aligned
 *    start stays the same (a size change within the alignment).  Growing by
 *    moving the start down would leave the old pointer inside the new block,
 *    where a use-after-free could no longer be seen; such a realloc moves.
 *  - protect_below: the start is fixed; any size up to the slot's capacity.
 *    Growing past the committed pages makes more of the slot's own pages
 *    accessible, where the backend's commit can extend a range
 *    (commit_extends: guard, whose commit is a plain marker removal; the
 *    mprotect backend would count VMAs twice, nonlinear needs a run of
 *    file pages of the new length).
 * The padding must be intact (else the move path reports it at free), and
 * the kinds must match.  Returns false to take the move path. */
static bool realloc_in_place(struct md_slot *s, size_t size, struct md_stack *st)
{
    uintptr_t bad;
    if (s->direct) return false;   /* a mapping of its own: a new block, copied */
    if (!kinds_match(s->kind, MD_DEALLOC_REALLOC) || !md_check_padding(s, &bad)) return false;
    size_t a = block_alignment(size, 0, MD_KIND_MALLOC);
    uintptr_t ds = md_slot_data_lo(s), de = md_slot_data_hi(s);
    if (!md_opt.protect_below) {
        if (size > de - ds - s->win_tail || place_block(s, size, a) != s->user) return false;
    } else {
        size_t need = s->user - ds + size;
        uint32_t npages = (uint32_t)((need + MD_PAGE - 1) >> MD_PAGE_SHIFT);
        if (npages > s->pages - 1) return false;
        if (npages > s->data_pages) {
            if (!md_heap.backend->commit_extends) return false;
            uint32_t more = npages - s->data_pages;
            if (md_heap.backend->commit(s, md_slot_data_page(s) + s->data_pages, more) != 0) return false;
            /* the new pages' bytes are padding until the block covers them */
            memset((void *)de, MD_PAD_BYTE, (size_t)more << MD_PAGE_SHIFT);
            s->data_pages = npages;
            de += (size_t)more << MD_PAGE_SHIFT;
        }
    }
    size_t old = s->size;
    if (size > old) {
        if (md_opt.malloc_fill_byte >= 0) {
            size_t n = size - old, lim = md_opt.max_malloc_fill_size;
            memset((void *)(s->user + old), md_opt.malloc_fill_byte, n < lim ? n : lim);
        }
    } else {
        memset((void *)(s->user + size), MD_PAD_BYTE, old - size);
    }
    md_heap.live_bytes = md_heap.live_bytes - old + size;
    if (md_heap.live_bytes > md_heap.peak_live_bytes) md_heap.peak_live_bytes = md_heap.live_bytes;
    s->size = size;
    s->alloc_stack = md_stack_id(st);   /* ASan names the realloc as the allocation */
    s->alloc_tid = md_thread_id();
    return true;
}

/* realloc by moving pages (nonlinear backend), with the lock held: when
 * the kept bytes have the same offset within their pages at the old and
 * the new place (page-sized blocks, any size with protect_below=1, sizes
 * that differ by whole pages), the file pages holding them are remapped to
 * the new slot instead of copied, and the old addresses become guards as
 * for free, so a stale pointer is a use-after-free.  Only worth it from a
 * page of kept data on.  Returns the new pointer, or 0 for the copy path. */
static void *realloc_move(struct md_slot *s, size_t size, struct md_stack *st)
{
    if (!md_heap.backend->move_pages || md_heap.unguarded_mode || s->direct) return 0;
    uintptr_t bad;
    if (!kinds_match(s->kind, MD_DEALLOC_REALLOC) || !md_check_padding(s, &bad)) return 0;
    size_t a = block_alignment(size, 0, MD_KIND_MALLOC);   /* <= MD_PAGE (options.c) */
    size_t n2 = (((size + a - 1) & ~(a - 1)) + MD_PAGE - 1) >> MD_PAGE_SHIFT;
    if (n2 == 0) n2 = 1;
    size_t off2 = md_opt.protect_below ? 0 : ((n2 << MD_PAGE_SHIFT) - size) & ~(a - 1);
    uintptr_t ds1 = md_page_addr(md_slot_data_page(s));
    size_t off1 = s->user - ds1, kept = s->size < size ? s->size : size;
    if (kept < MD_PAGE || ((off1 ^ off2) & (MD_PAGE - 1))) return 0;
    uint32_t m = (uint32_t)(((off1 + kept + MD_PAGE - 1) >> MD_PAGE_SHIFT) - (off1 >> MD_PAGE_SHIFT));
    uint32_t id = md_slot_get((uint32_t)n2 + 1, false);
    if (!id) return 0;
    struct md_slot *t = &md_heap.slots[id];
    t->data_pages = (uint32_t)n2;
    uint32_t to_page = md_slot_data_page(t) + (uint32_t)(off2 >> MD_PAGE_SHIFT);
    if (md_heap.backend->move_pages(s, md_slot_data_page(s) + (uint32_t)(off1 >> MD_PAGE_SHIFT), t, to_page, m)
        != 0) {
        t->data_pages = 0;
        md_free_list_push(id);
        return 0;
    }
    uintptr_t ds = md_page_addr(md_slot_data_page(t)), de = ds + (n2 << MD_PAGE_SHIFT), user = ds + off2;
    /* The moved pages are padding outside the old block; the rest is not. */
    uintptr_t m_lo = md_page_addr(to_page), m_hi = m_lo + ((uintptr_t)m << MD_PAGE_SHIFT);
    uintptr_t old_end = user + s->size;
    fill_pad(ds, user, ds, m_lo);
    fill_pad(user + size, de, user, old_end);
    fill_pad(user + size, de, m_hi, de);
    if (size > kept && md_opt.malloc_fill_byte >= 0 && kept < md_opt.max_malloc_fill_size) {
        size_t lim = size < md_opt.max_malloc_fill_size ? size : md_opt.max_malloc_fill_size;
        memset((void *)(user + kept), md_opt.malloc_fill_byte, lim - kept);
    }
    t->user = user;
    t->size = size;
    t->state = MD_SLOT_LIVE;
    t->kind = MD_KIND_MALLOC;
    t->alloc_stack = md_stack_id(st);
    t->alloc_tid = md_thread_id();
    t->free_stack = 0;
    t->free_tid = 0;
    t->next = 0;
    md_leak_alloc_hook(id);
    record_stats_alloc(size);
    md_heap.realloc_moves++;
    md_heap.realloc_moved_pages += m;
    record_free(s, st);   /* already guards, its other pages given back */
    md_quarantine_push((uint32_t)(s - md_heap.slots));
    return (void *)user;
}

/* realloc whose new block is not sampled: glibc's realloc for glibc's
 * block; a guarded block is copied out and freed, so its old address is a
 * guard (a stale pointer is a use-after-free) and a kind mismatch or
 * damaged padding is reported by the free.  A pointer that is no live
 * block's start takes the guarded path, which reports it. */
static void *realloc_to_libc(void *p, size_t size)
{
    if (md_libc_owns(p)) return md_libc_realloc(p, size);
    size_t old = md_usable_size(p);
    if (!old) {
        struct md_slot *s = md_slot_of_addr((uintptr_t)p);
        if (!s || s->state != MD_SLOT_LIVE || s->user != (uintptr_t)p) {
            md_free(p, MD_DEALLOC_REALLOC);   /* reports the bad or double free */
            errno = EINVAL;
            return 0;
        }
    }
    void *n = md_libc_alloc(size, 0, false);
    if (!n) return 0;
    memcpy(n, p, old < size ? old : size);
    md_free(p, MD_DEALLOC_REALLOC);
    return n;
}

/* realloc growing a block of its own mapping when the copy failed: an
 * address-space limit leaves room for the growth but not for both blocks
 * at once.  Its mapping moves and grows (mremap), as glibc's realloc does
 * with its mapped chunks; the old address is then unmapped, not a guard.
 * NULL (errno ENOMEM) when that fails too, or p is no such block. */
static void *realloc_direct_grow(void *p, size_t size)
{
    md_in_runtime++;
    struct md_stack stack;
    md_stack_capture(&stack, md_opt.malloc_context_size);
    md_heap_lock();
    struct md_slot *s = md_slot_of_addr((uintptr_t)p);
    uintptr_t user = 0;
    size_t old = 0;
    if (s && s->direct && s->state == MD_SLOT_LIVE && s->user == (uintptr_t)p &&
        kinds_match(s->kind, MD_DEALLOC_REALLOC)) {
        old = s->size;
        user = md_direct_grow(s, size, block_alignment(size, 0, MD_KIND_MALLOC));
    }
    if (user) {
        md_heap.live_bytes = md_heap.live_bytes - old + size;
        if (md_heap.live_bytes > md_heap.peak_live_bytes) md_heap.peak_live_bytes = md_heap.live_bytes;
        s->size = size;
        s->alloc_stack = md_stack_id(&stack);   /* ASan names the realloc as the allocation */
        s->alloc_tid = md_thread_id();
    }
    md_heap_unlock();
    if (user && md_opt.malloc_fill_byte >= 0 && old < md_opt.max_malloc_fill_size) {
        size_t lim = size < md_opt.max_malloc_fill_size ? size : md_opt.max_malloc_fill_size;
        memset((void *)(user + old), md_opt.malloc_fill_byte, lim - old);
    }
    md_in_runtime--;
    if (!user) errno = ENOMEM;
    return (void *)user;
}

/* realloc moves the block unless it can keep its address (above): the old
 * address becomes a guard, so a pointer kept across realloc is caught as a
 * use-after-free. */
void *md_realloc(void *p, size_t size)
{
    if (md_in_runtime) {
        if (!p || md_is_internal(p)) return md_internal_realloc(p, size);
        if (md_libc_owns(p)) return md_libc_realloc(p, size);
        return 0;
    }
    if (!p) return md_alloc(size, 0, MD_KIND_MALLOC, false);
    if (md_is_internal(p)) {
        void *n = md_alloc(size, 0, MD_KIND_MALLOC, false);
        if (n) {
            size_t old = md_internal_usable(p);
            memcpy(n, p, old < size ? old : size);
        }
        return n;
    }
    if (size == 0) {   /* glibc: realloc(p, 0) frees and returns NULL */
        md_free(p, MD_DEALLOC_REALLOC);
        return 0;
    }
    md_ensure_init();
    if (md_opt.sample_rate > 1 && !md_sampled()) return realloc_to_libc(p, size);
    if (md_libc_owns(p)) {   /* an unsampled block that this realloc guards */
        void *n = alloc_guarded(size, 0, MD_KIND_MALLOC, false);
        if (!n) return 0;
        size_t old = md_libc_usable_size(p);
        memcpy(n, p, old < size ? old : size);
        md_libc_free(p);
        return n;
    }
    size_t old_size;
    md_in_runtime++;
    struct md_stack stack, *st = &stack;
    md_stack_capture(st, md_opt.malloc_context_size);
    md_heap_lock();
    struct md_slot *s = md_slot_of_addr((uintptr_t)p);
    bool ok = s && s->state == MD_SLOT_LIVE && s->user == (uintptr_t)p;
    old_size = ok ? s->size : 0;
    if (ok) md_freeze_end_if_frozen(s, st, MD_DEALLOC_REALLOC);   /* the new block is not frozen */
    if (ok && size < md_heap.size && realloc_in_place(s, size, st)) {
        md_heap_unlock();
        md_in_runtime--;
        return p;
    }
    void *moved = ok && size < md_heap.size ? realloc_move(s, size, st) : 0;
    if (moved) {
        md_heap_unlock();
        md_in_runtime--;
        return moved;
    }
    md_heap_unlock();
    if (!ok) {
        md_sym_prepare();   /* it reports: the symbolizer loads without the lock */
        md_heap_lock();
        validate_for_free(p, st, MD_DEALLOC_REALLOC);
        md_heap_unlock();
        md_in_runtime--;
        errno = EINVAL;
        return 0;
    }
    md_in_runtime--;
    void *n = alloc_guarded(size, 0, MD_KIND_MALLOC, false);
    if (!n && size > old_size) return realloc_direct_grow(p, size);   /* NULL: the old block stays valid */
    if (!n) return 0;   /* the old block stays valid, errno is ENOMEM */
    memcpy(n, p, old_size < size ? old_size : size);
    md_free(p, MD_DEALLOC_REALLOC);
    return n;
}

size_t md_usable_size(const void *p)
{
    if (!p) return 0;
    if (md_is_internal(p)) return md_internal_usable(p);
    if (!md_heap.initialized) return 0;
    if (md_libc_owns(p)) return md_libc_usable_size((void *)p);
    struct md_slot *s = md_slot_of_addr((uintptr_t)p);
    if (s && s->state == MD_SLOT_LIVE && s->user == (uintptr_t)p) return s->size;
    return 0;
}
