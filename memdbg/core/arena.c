/* SPDX-License-Identifier: MIT */
/* The arena: one virtual range (a private anonymous mapping, or the heap
 * memfd for the nonlinear backend), carved into slots.  A slot is a run of
 * pages holding one block's data pages plus its guard page; its capacity is
 * rounded to a size class (exact up to 16 pages, then four per power of
 * two), which leaves room for realloc in place.
 *
 * Address space comes from one common pool of free page ranges: a slot
 * whose quarantine ended gives its range back, where it merges with free
 * neighbours, so a large block can be placed where many small ones were
 * (no size-class dead ends).  The pool keeps free ranges in lists by size
 * class with a bitmap of non-empty lists, and marks the first and last page
 * of every free range so that a range being freed finds its free
 * neighbours in O(1): malloc and free never scan.
 *
 * page_slot[] maps every arena page (guard pages included) to its slot, so
 * address -> block is one array load. */
#include "core/core.h"
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

struct md_heap md_heap MEMDBG_HIDDEN = { .fd = -1 };

/* Classes 0..15 are exact (1..16 pages); above that, four classes per
 * power of two, so at most 25% of a large slot's address space is unused. */
uint32_t md_class_of(uint32_t pages)
{
    if (pages <= 16) return pages ? pages - 1 : 0;
    uint32_t lg = 31 - (uint32_t)__builtin_clz(pages - 1);   /* 2^lg < pages <= 2^(lg+1) */
    uint32_t step = 1u << (lg - 2);
    uint32_t k = (pages - (1u << lg) + step - 1) / step;      /* 1..4 */
    return 16 + (lg - 4) * 4 + (k - 1);
}

uint32_t md_class_pages(uint32_t cls)
{
    if (cls < 16) return cls + 1;
    uint32_t lg = (cls - 16) / 4 + 4, k = (cls - 16) % 4 + 1;
    uint64_t p = (1ull << lg) + (uint64_t)k * (1ull << (lg - 2));
    return p > UINT32_MAX ? UINT32_MAX : (uint32_t)p;
}

bool md_heap_fd_ok(void)
{
    return md_fd_is(md_heap.fd, md_heap.fd_dev, md_heap.fd_ino);
}

/* ---- the free pool ---- */
struct extent {
    uint32_t first, pages;   /* pages == 0: record unused */
    uint32_t next, prev;     /* list of its size class; next also links unused records */
};
static struct extent *ext;           /* id -> record, id 0 unused */
static uint32_t *ext_tag;            /* arena page -> id of a free range starting or ending there */
static uint32_t ext_count, ext_max, ext_unused;
static uint32_t bucket[MD_NCLASSES]; /* largest class whose capacity fits -> first range */
static uint64_t bucket_bits[MD_NCLASSES / 64];
static uint32_t rec_head, rec_tail;  /* slot records to reuse (FIFO: late reports last longest) */

/* Largest class whose capacity is at most `pages`: every range in bucket c
 * can hold a slot of class c or below. */
static uint32_t floor_class(uint32_t pages)
{
    uint32_t c = md_class_of(pages);
    if (c >= MD_NCLASSES) return MD_NCLASSES - 1;
    return md_class_pages(c) > pages ? c - 1 : c;
}

static void bucket_add(uint32_t id)
{
    struct extent *e = &ext[id];
    uint32_t c = floor_class(e->pages);
    e->prev = 0;
    e->next = bucket[c];
    if (e->next) ext[e->next].prev = id;
    bucket[c] = id;
    bucket_bits[c / 64] |= 1ull << (c % 64);
    ext_tag[e->first] = id;
    ext_tag[e->first + e->pages - 1] = id;
}

static void bucket_del(uint32_t id)
{
    struct extent *e = &ext[id];
    uint32_t c = floor_class(e->pages);
    if (e->prev) ext[e->prev].next = e->next;
    else bucket[c] = e->next;
    if (e->next) ext[e->next].prev = e->prev;
    if (!bucket[c]) bucket_bits[c / 64] &= ~(1ull << (c % 64));
}

static uint32_t ext_new(uint32_t first, uint32_t pages)
{
    uint32_t id = ext_unused;
    if (id) ext_unused = ext[id].next;
    else if (ext_count + 1 < ext_max) id = ++ext_count;
    else return 0;   /* cannot happen: free ranges are separated by slots */
    ext[id].first = first;
    ext[id].pages = pages;
    return id;
}

static void ext_release(uint32_t id)
{
    ext[id].pages = 0;
    ext[id].next = ext_unused;
    ext_unused = id;
}

/* The free range ending just before `page`, or 0.  Tags may be stale: a
 * record is believed only if it is free and really ends there. */
static uint32_t free_ending_at(uint32_t page)
{
    uint32_t id = ext_tag[page];
    return id && ext[id].pages && ext[id].first + ext[id].pages - 1 == page ? id : 0;
}

static uint32_t free_starting_at(uint32_t page)
{
    uint32_t id = ext_tag[page];
    return id && ext[id].pages && ext[id].first == page ? id : 0;
}

/* Pages [first, first+pages) are guards again and hold no block. */
static void pool_put(uint32_t first, uint32_t pages)
{
    uint32_t id;
    if (first > 0 && (id = free_ending_at(first - 1)) != 0) {
        bucket_del(id);
        first = ext[id].first;
        pages += ext[id].pages;
        ext_release(id);
    }
    if (first + pages == md_heap.bump_page) {   /* the never-used tail absorbs it */
        md_heap.bump_page = first;
        return;
    }
    if ((id = free_starting_at(first + pages)) != 0) {
        bucket_del(id);
        pages += ext[id].pages;
        ext_release(id);
    }
    id = ext_new(first, pages);
    if (id) bucket_add(id);
}

/* First page of a free range of `cap` pages (cap is a class capacity), or
 * UINT32_MAX.  Takes the front of a range from the smallest non-empty
 * bucket that fits. */
static uint32_t pool_take(uint32_t cap)
{
    uint32_t c = md_class_of(cap);
    for (uint32_t w = c / 64; w < MD_NCLASSES / 64; w++) {
        uint64_t m = bucket_bits[w];
        if (w == c / 64) m &= ~0ull << (c % 64);
        if (!m) continue;
        uint32_t id = bucket[w * 64 + (uint32_t)__builtin_ctzll(m)];
        bucket_del(id);
        uint32_t first = ext[id].first, rest = ext[id].pages - cap;
        if (rest) {
            ext[id].first = first + cap;
            ext[id].pages = rest;
            bucket_add(id);
        } else {
            ext_release(id);
        }
        return first;
    }
    return UINT32_MAX;
}

void md_arena_init(void)
{
    size_t size = md_opt.arena_size;
    md_heap.size = size;
    md_heap.max_size = size;
    md_heap.total_pages = (uint32_t)(size >> MD_PAGE_SHIFT);
    md_heap.max_slots = md_heap.total_pages / 2 + 1;
    md_heap.page_slot = md_reserve((size_t)md_heap.total_pages * sizeof(uint32_t), "page map");
    md_heap.page_uses = md_reserve(md_heap.total_pages, "page reuse counts");
    /* The frozen-block table lies after the slot table, in the same
     * reservation: untouched (no memory) until a block is frozen, and
     * freezing then adds no mapping of its own. */
    size_t slot_bytes = ((size_t)md_heap.max_slots * sizeof(struct md_slot) + 15) & ~(size_t)15;
    char *slot_room = md_reserve(slot_bytes + (size_t)md_heap.max_slots * sizeof(struct md_frozen_by),
                                 "slot table");
    md_heap.slots = (struct md_slot *)slot_room;
    md_heap.frozen_room = slot_room + slot_bytes;
    md_heap.class_free = md_reserve(2 * MD_NCLASSES * sizeof(uint32_t), "class lists");
    md_heap.class_free_unguarded = md_heap.class_free + MD_NCLASSES;
    ext_max = md_heap.max_slots + 2;
    ext = md_reserve((size_t)ext_max * sizeof *ext, "free pool");
    ext_tag = md_reserve((size_t)md_heap.total_pages * sizeof(uint32_t), "free pool");
    md_heap.nslots = 0;
    md_heap.bump_page = 0;
    md_heap.guarded_frontier = 0;

    if (md_heap.backend->needs_file) {
        md_heap.fd = md_memfd("memdbg-heap");
        if (md_heap.fd < 0) md_die_msg("memdbg: memfd_create failed: ", strerror(errno), "");
        if (ftruncate(md_heap.fd, (off_t)size) != 0)
            md_die_msg("memdbg: cannot size the heap memfd: ", strerror(errno), "");
        md_fd_identity(md_heap.fd, &md_heap.fd_dev, &md_heap.fd_ino);
    }
    /* Reserve the address range first; the backend maps the heap over it. */
    void *a = mmap(0, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (a == MAP_FAILED) md_die_msg("memdbg: cannot reserve the arena: ", strerror(errno), md_as_limit_hint());
    md_heap.base = (uintptr_t)a;
    if (md_heap.backend->map_arena() != 0)
        md_die_msg("memdbg: cannot map the heap for backend ", md_heap.backend->name, "");
}

/* Guards are installed ahead of the bump pointer in steps (64 MiB, or the
 * backend's guard_ahead_pages), so that wild accesses past the last slot
 * fault too, without paying page-table memory for the whole arena up
 * front. */
static int extend_guarded(uint32_t upto)
{
    const uint32_t step = md_heap.backend->guard_ahead_pages ? md_heap.backend->guard_ahead_pages : 16384;
    if (upto <= md_heap.guarded_frontier) return 0;
    uint32_t end = upto + step - (upto % step);
    if (end > md_heap.total_pages) end = md_heap.total_pages;
    /* A fork from a signal handler landing between the call and the
     * store below sees guarding_to: the child guards up to it. */
    md_heap.guarding_to = end;
    if (md_heap.backend->guard_range(md_heap.guarded_frontier, end - md_heap.guarded_frontier) != 0)
        return -1;
    md_heap.guarded_frontier = end;
    return 0;
}

/* A slot record for pages [first, first+cap): a reused one when the FIFO
 * has one, else a new id. */
static uint32_t slot_record(uint32_t first, uint32_t cls, uint32_t cap)
{
    uint32_t id = rec_head;
    if (id) {
        rec_head = md_heap.slots[id].next;
        if (!rec_head) rec_tail = 0;
    } else if (md_heap.nslots + 1 < md_heap.max_slots) {
        id = ++md_heap.nslots;
    } else {
        return 0;
    }
    struct md_slot *s = &md_heap.slots[id];
    memset(s, 0, sizeof *s);
    s->first_page = first;
    s->pages = cap;
    s->cls = (uint8_t)cls;
    s->state = MD_SLOT_FREE;
    s->flags = SLOT_F_FRESH;
    uint32_t *ps = md_heap.page_slot + first;
    uint8_t *uses = md_heap.page_uses + first;
    for (uint32_t i = 0; i < cap; i++) {
        ps[i] = id;
        if (uses[i] != UINT8_MAX) uses[i]++;
    }
    return id;
}

/* New arena size in pages: total_pages and size change together, size
 * with release order, as lookups without the lock read it (md_in_arena). */
static void set_total_pages(uint32_t pages)
{
    md_heap.total_pages = pages;
    if (md_heap.guarded_frontier > pages) md_heap.guarded_frontier = pages;
    if (md_heap.guarding_to > pages) md_heap.guarding_to = pages;
    __atomic_store_n(&md_heap.size, (size_t)pages << MD_PAGE_SHIFT, __ATOMIC_RELEASE);
}

/* After a refused map_tail, the attempts to skip: while the range or the
 * limit stays taken, each malloc that needs new address space would make
 * two failing calls before the quarantine gives some back. */
static uint32_t tail_skips;

void md_arena_tail_retry(void)
{
    tail_skips = 0;
}

/* Map never-used address space after the arena's end again (after
 * md_arena_give_back), enough for `pages` more than the tail holds: a
 * guard step more where there is room, else just that.  force: even
 * within the skips (the last try before ENOMEM). */
static bool take_tail_back(uint32_t pages, bool force)
{
    uint32_t max_pages = (uint32_t)(md_heap.max_size >> MD_PAGE_SHIFT), now = md_heap.total_pages;
    if (!md_heap.backend->map_tail || now >= max_pages) return false;
    uint32_t need = pages - (now - md_heap.bump_page);
    if (need > max_pages - now) return false;
    if (tail_skips && !force) {
        tail_skips--;
        return false;
    }
    uint32_t step = need + 16384 < max_pages - now ? need + 16384 : max_pages - now;
    if (md_heap.backend->map_tail(now, step) != 0) {
        if (step == need || md_heap.backend->map_tail(now, need) != 0) {
            tail_skips = 255;
            return false;
        }
        step = need;
    }
    set_total_pages(now + step);
    return true;
}

static uint32_t new_slot(uint32_t cls, uint32_t cap)
{
    uint32_t first = pool_take(cap);
    if (first != UINT32_MAX) {
        uint32_t id = slot_record(first, cls, cap);
        if (!id) pool_put(first, cap);
        return id;
    }
    if (cap > md_heap.total_pages - md_heap.bump_page && !take_tail_back(cap, false)) return 0;
    if (extend_guarded(md_heap.bump_page + cap) != 0) return 0;
    uint32_t id = slot_record(md_heap.bump_page, cls, cap);
    if (id) md_heap.bump_page += cap;
    return id;
}

/* Slots keeping their pages (recycle_pages) wait in their class list; when
 * address space runs out they give their memory back and join the pool. */
static bool flush_kept(void)
{
    bool any = false;
    for (uint32_t c = 0; c < MD_NCLASSES; c++) {
        uint32_t id;
        while ((id = md_heap.class_free[c]) != 0) {
            struct md_slot *s = &md_heap.slots[id];
            md_heap.class_free[c] = s->next;
            if (md_heap.backend->drop) md_heap.backend->drop(s->first_page, s->pages);
            __atomic_fetch_and(&s->flags, (uint8_t)~SLOT_F_KEPT, __ATOMIC_RELAXED);
            __atomic_fetch_or(&s->flags, SLOT_F_FRESH, __ATOMIC_RELAXED);
            md_free_list_push(id);
            any = true;
        }
    }
    return any;
}

void md_free_list_push(uint32_t id)
{
    struct md_slot *s = &md_heap.slots[id];
    s->state = MD_SLOT_FREE;
    uint8_t f = __atomic_load_n(&s->flags, __ATOMIC_RELAXED);
    /* A page a fault opened is no guard: the range and its record stay
     * out of use (reports on it still name the block). */
    if (s->opened) return;
    if (f & SLOT_F_UNGUARDED) {   /* whole slot RW: only unguarded blocks may reuse it */
        s->next = md_heap.class_free_unguarded[s->cls];
        md_heap.class_free_unguarded[s->cls] = id;
        return;
    }
    if (f & SLOT_F_KEPT) {        /* recycle_pages: its pages wait for the next block of its class */
        s->next = md_heap.class_free[s->cls];
        md_heap.class_free[s->cls] = id;
        return;
    }
    /* Old bytes must not reach the pool, whose pages are taken for zero. */
    if (!(f & SLOT_F_FRESH) && md_heap.backend->drop) md_heap.backend->drop(s->first_page, s->pages);
    pool_put(s->first_page, s->pages);
    /* the record keeps user/size/stacks for late reports until it is reused */
    s->next = 0;
    if (rec_tail) md_heap.slots[rec_tail].next = id;
    else rec_head = id;
    rec_tail = id;
}

/* The oldest quarantined range back to the pool (quarantine.c pushes,
 * this takes out: at quarantine_size, or when address space runs out). */
bool md_quarantine_evict_one(void)
{
    uint32_t id = md_heap.q_head;
    if (!id) return false;
    struct md_slot *s = &md_heap.slots[id];
    md_heap.q_head = s->next;
    if (!md_heap.q_head) md_heap.q_tail = 0;
    md_heap.q_bytes -= (size_t)s->pages << MD_PAGE_SHIFT;
    if (!(__atomic_load_n(&s->flags, __ATOMIC_RELAXED) & SLOT_F_KEPT))
        __atomic_fetch_or(&s->flags, SLOT_F_FRESH, __ATOMIC_RELAXED);
    md_free_list_push(id);   /* keeps user/size/stacks for late reports */
    return true;
}

uint32_t md_slot_get(uint32_t pages_needed, bool unguarded)
{
    /* More than the arena: no eviction could make room, so the
     * quarantine keeps its blocks. */
    if (pages_needed > md_heap.total_pages) return 0;
    uint32_t cls = md_class_of(pages_needed);
    if (cls >= MD_NCLASSES) return 0;
    uint32_t cap = md_class_pages(cls);
    if (cap < pages_needed) return 0;
    /* A class's capacity may be a quarter more than asked: a block near
     * the arena's size takes exactly its pages, so that it fits. */
    if (cap > md_heap.total_pages) cap = pages_needed;
    uint32_t *list = unguarded ? md_heap.class_free_unguarded : md_heap.class_free;
    for (;;) {
        uint32_t id = list[cls];
        if (id && md_heap.slots[id].pages < pages_needed) id = 0;   /* a trimmed slot of this class */
        if (id) {
            list[cls] = md_heap.slots[id].next;
            md_heap.slots[id].next = 0;
            struct md_slot *s = &md_heap.slots[id];
            /* Its pages read as zero again, unless recycle_pages kept them. */
            if (s->flags & SLOT_F_KEPT)
                __atomic_fetch_and(&s->flags, (uint8_t)~(SLOT_F_KEPT | SLOT_F_FRESH), __ATOMIC_RELAXED);
            else
                __atomic_fetch_or(&s->flags, SLOT_F_FRESH, __ATOMIC_RELAXED);
            return id;
        }
        id = new_slot(cls, cap);
        if (id) {
            if (unguarded) md_heap.slots[id].flags |= SLOT_F_UNGUARDED;
            return id;
        }
        /* Out of address space: end the quarantine of the oldest blocks,
         * then take back the pages recycle_pages keeps, then try the
         * arena's end once more. */
        if (!md_quarantine_evict_one() && (unguarded || !flush_kept())) {
            if (cap <= md_heap.total_pages - md_heap.bump_page || !take_tail_back(cap, true)) return 0;
        }
    }
}

/* The arena is sized at start to leave the program a quarter of the room
 * under an address-space limit: a block larger than that quarter (glibc
 * would map it) fits only once the arena's unused end goes back.  Giving
 * back that end, not a lazily grown arena, keeps the arena one range
 * (page-indexed metadata, one VMA for the nonlinear backend) and costs
 * nothing until such a block comes. */
bool md_arena_give_back(size_t bytes, bool evict)
{
    MD_DCHECK(md_heap_lock_mine());
    size_t want = (bytes + MD_PAGE - 1) >> MD_PAGE_SHIFT;
    if (want >= md_heap.total_pages) return false;
    /* The tail is [bump_page, total_pages): free ranges next to it are
     * part of it (pool_put).  Quarantined and kept slots at its edge
     * lengthen it once they go back. */
    while (md_heap.total_pages - md_heap.bump_page < want)
        if (!evict || (!md_quarantine_evict_one() && !flush_kept())) return false;
    uint32_t keep = md_heap.total_pages - (uint32_t)want;
    uintptr_t lo = md_page_addr(keep), hi = md_heap.base + md_heap.size;
    /* Lookups stop taking the range for the arena's before it is unmapped
     * and can hold another mapping. */
    set_total_pages(keep);
    if (munmap((void *)lo, hi - lo) != 0) {
        set_total_pages((uint32_t)((hi - md_heap.base) >> MD_PAGE_SHIFT));
        return false;
    }
    return true;
}
