/* SPDX-License-Identifier: MIT */
/* Blocks the arena cannot hold (larger than it, or larger than any free
 * range of it): each gets a mapping of its own, its data pages against a
 * guard page (after them, or before them with protect_below), and a slot
 * record like any block, which is not in the page map: md_slot_of_addr
 * finds it through the table here.  Free, realloc, malloc_usable_size,
 * the leak check and the reports use the record as for any block.
 *
 * A mapping is two VMAs (data and guard).  At free its data pages become
 * PROT_NONE and their memory goes back, the address range stays reserved,
 * so a later access is a use after free of the block; under an
 * address-space limit, where the reserved range would count against the
 * program, it is unmapped instead, and its range is kept apart so that a
 * fault there on unmapped memory (SEGV_MAPERR) still names the block.  When the table is full, the oldest
 * freed range is unmapped to make room.
 *
 * The table changes under the heap lock; the fault handler and lookups
 * without the lock read it: an entry's end (hi) is stored last, with
 * release order, and read first, with acquire order; an entry without a
 * mapping has hi 0 and matches no address. */

#include "core/core.h"
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#define DIRECT_MAX 256

/* Room left under an address-space limit after a block that needed the
 * arena's end: the symbolizer maps some 5 MiB at the first report and
 * reads the modules' debug information, and the program's next thread
 * stack takes 8 MiB. */
#define HEADROOM ((size_t)32 << 20)

struct direct_map {
    uintptr_t lo, hi;   /* the whole mapping, guard page included; hi 0: none */
    /* the range of a freed block that was unmapped (under a limit), kept
     * for reports until the entry holds another block; gone_hi 0: none */
    uintptr_t gone_lo, gone_hi;
    uint32_t id;        /* slot record */
    uint64_t freed_at;  /* order of its block's free (0: live) */
};
static struct direct_map maps[DIRECT_MAX];
static uint64_t frees;
uint32_t md_direct_count;   /* entries [0, count) may be in use */

struct md_slot *md_direct_slot_of(uintptr_t a)
{
    uint32_t n = __atomic_load_n(&md_direct_count, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++) {
        uintptr_t hi = __atomic_load_n(&maps[i].hi, __ATOMIC_ACQUIRE);
        uintptr_t lo = __atomic_load_n(&maps[i].lo, __ATOMIC_RELAXED);
        if (a >= lo && a < hi) return &md_heap.slots[maps[i].id];
    }
    return 0;
}

struct md_slot *md_direct_gone_slot_of(uintptr_t a)
{
    uint32_t n = __atomic_load_n(&md_direct_count, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++) {
        uintptr_t hi = __atomic_load_n(&maps[i].gone_hi, __ATOMIC_ACQUIRE);
        uintptr_t lo = __atomic_load_n(&maps[i].gone_lo, __ATOMIC_RELAXED);
        if (a >= lo && a < hi) return &md_heap.slots[maps[i].id];
    }
    return 0;
}

static bool address_space_limited(void)
{
    struct rlimit rl;
    return getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY;
}

/* An entry to fill: one without a mapping, else the oldest freed block's,
 * whose range is unmapped (its record goes to the next block). */
static struct direct_map *free_entry(void)
{
    for (uint32_t i = 0; i < md_direct_count; i++)
        if (!maps[i].hi) return &maps[i];
    if (md_direct_count < DIRECT_MAX) return &maps[md_direct_count];
    struct direct_map *oldest = 0;
    for (uint32_t i = 0; i < DIRECT_MAX; i++) {
        const struct md_slot *s = &md_heap.slots[maps[i].id];
        if (s->state != MD_SLOT_LIVE && (!oldest || maps[i].freed_at < oldest->freed_at)) oldest = &maps[i];
    }
    if (!oldest) return 0;
    uintptr_t lo = oldest->lo, hi = oldest->hi;
    __atomic_store_n(&oldest->hi, 0, __ATOMIC_RELEASE);
    munmap((void *)lo, hi - lo);
    return oldest;
}

/* Under an address-space limit, room for a mapping of `bytes` more: when
 * the limit leaves less, the arena gives its unused end back, HEADROOM
 * more where it has that without ending any block's quarantine, else just
 * what is missing.  A MiB more covers mappings that threads make
 * meanwhile outside memdbg.  Nothing to do without a limit, or when the
 * arena cannot give enough (the mapping then fails as it would have). */
static void make_room(size_t bytes)
{
    if (!address_space_limited()) return;
    size_t room = md_as_room(), need = bytes + ((size_t)1 << 20);
    if (room >= need + HEADROOM) return;
    if (md_arena_give_back(need + HEADROOM - room, false)) return;
    if (room < need) md_arena_give_back(need - room, true);
}

uint32_t md_direct_map(size_t size, size_t align, uintptr_t *user)
{
    MD_DCHECK(md_heap_lock_mine());
    size_t a = align > MD_PAGE ? align : 0;
    size_t data = ((size + MD_PAGE - 1) & ~(MD_PAGE - 1)) + a;
    if (size > (SIZE_MAX >> 2) || data < size || !data) { errno = ENOMEM; return 0; }
    struct direct_map *m = free_entry();
    if (!m) { errno = ENOMEM; return 0; }
    /* an entry used before keeps its record: at most DIRECT_MAX records
     * ever, whatever the number of such blocks over the run */
    if (!m->id && md_heap.nslots + 1 >= md_heap.max_slots) { errno = ENOMEM; return 0; }
    make_room(data + MD_PAGE);
    char *p = mmap(0, data + MD_PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) { errno = ENOMEM; return 0; }
    char *d = md_opt.protect_below ? p + MD_PAGE : p;
    if (mprotect(d, data, PROT_READ | PROT_WRITE) != 0) {
        munmap(p, data + MD_PAGE);
        errno = ENOMEM;
        return 0;
    }
    uintptr_t u;
    if (!align) align = 1;
    if (md_opt.protect_below) u = ((uintptr_t)d + align - 1) & ~(uintptr_t)(align - 1);
    else u = ((uintptr_t)d + data - size) & ~(uintptr_t)(align - 1);
    uint32_t id = m->id ? m->id : ++md_heap.nslots;
    struct md_slot *s = &md_heap.slots[id];
    memset(s, 0, sizeof *s);
    s->direct = 1;
    s->state = MD_SLOT_READY;
    m->id = id;
    m->freed_at = 0;
    __atomic_store_n(&m->gone_hi, 0, __ATOMIC_RELEASE);   /* the record describes this block now */
    __atomic_store_n(&m->lo, (uintptr_t)p, __ATOMIC_RELAXED);
    __atomic_store_n(&m->hi, (uintptr_t)p + data + MD_PAGE, __ATOMIC_RELEASE);
    uint32_t k = (uint32_t)(m - maps) + 1;
    if (k > md_direct_count) __atomic_store_n(&md_direct_count, k, __ATOMIC_RELEASE);
    *user = u;
    return id;
}

uintptr_t md_direct_grow(struct md_slot *s, size_t size, size_t align)
{
    MD_DCHECK(md_heap_lock_mine());
    if (md_opt.protect_below || size <= s->size || size > (SIZE_MAX >> 2)) return 0;
    uint32_t id = (uint32_t)(s - md_heap.slots);
    struct direct_map *m = 0;
    for (uint32_t i = 0; i < md_direct_count && !m; i++)
        if (maps[i].id == id && maps[i].hi) m = &maps[i];
    if (!m) return 0;
    size_t a = align > MD_PAGE ? align : 0;
    size_t data = m->hi - m->lo - MD_PAGE, data2 = ((size + MD_PAGE - 1) & ~(MD_PAGE - 1)) + a;
    uintptr_t lo = m->lo, user_off = s->user - lo;
    /* Lookups without the lock skip the block while its mapping moves. */
    __atomic_store_n(&m->hi, 0, __ATOMIC_RELEASE);
    /* The data pages are one VMA and the guard page another: the data
     * VMA grows by the new size and a page, moving (its guard page is in
     * the way), and its last page becomes the guard. */
    make_room(data2 + MD_PAGE - data);
    char *q = mremap((void *)lo, data, data2 + MD_PAGE, MREMAP_MAYMOVE);
    if (q == MAP_FAILED) {
        __atomic_store_n(&m->hi, lo + data + MD_PAGE, __ATOMIC_RELEASE);
        return 0;
    }
    /* the old guard page, unless the mapping grew in place over a hole
     * where a guard could not be made */
    if ((uintptr_t)q != lo) munmap((void *)(lo + data), MD_PAGE);
    if (mprotect(q + data2, MD_PAGE, PROT_NONE) != 0)
        munmap(q + data2, MD_PAGE);   /* a hole faults as well, until something is mapped there */
    if (!align) align = 1;
    uintptr_t user = ((uintptr_t)q + data2 - size) & ~(uintptr_t)(align - 1);
    memmove((void *)user, q + user_off, s->size);
    s->user = user;
    __atomic_store_n(&m->lo, (uintptr_t)q, __ATOMIC_RELAXED);
    __atomic_store_n(&m->hi, (uintptr_t)q + data2 + MD_PAGE, __ATOMIC_RELEASE);
    return user;
}

void md_direct_retire(struct md_slot *s)
{
    MD_DCHECK(md_heap_lock_mine());
    uint32_t id = (uint32_t)(s - md_heap.slots);
    for (uint32_t i = 0; i < md_direct_count; i++) {
        if (maps[i].id != id || !maps[i].hi) continue;
        uintptr_t lo = maps[i].lo, hi = maps[i].hi;
        maps[i].freed_at = ++frees;
        if (address_space_limited()) {
            __atomic_store_n(&maps[i].gone_lo, lo, __ATOMIC_RELAXED);
            __atomic_store_n(&maps[i].gone_hi, hi, __ATOMIC_RELEASE);
            __atomic_store_n(&maps[i].hi, 0, __ATOMIC_RELEASE);
            munmap((void *)lo, hi - lo);
            md_arena_tail_retry();
        } else {
            /* the memory goes back, the range stays reserved and faults */
            mmap((void *)lo, hi - lo, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
        }
        return;
    }
}
