/* SPDX-License-Identifier: MIT */
/* Memory for memdbg itself, never taken from the debugged heap.
 *
 * md_reserve(): large lazily-backed regions (slot table, page map, stack
 * depot) each surrounded by PROT_NONE pages, so a stray user write cannot
 * silently corrupt metadata.
 *
 * md_internal_alloc(): a bump allocator that serves malloc calls made while
 * memdbg itself is running (libunwind, libdwfl during symbolization, calls
 * before initialisation finished).  It never frees: these allocations are
 * few and short-lived processes die soon after a report anyway. */
#include "base/base.h"
#include "base/options.h"
#include <string.h>
#include <sys/mman.h>

/* Address space only (lazily backed), but it counts against `ulimit -v`:
 * sized from arena_size (md_pool_bytes, as_limit.c). */
static size_t pool_size;
#define INTERNAL_POOL_SIZE pool_size

static char *pool_base;
/* The pool's range for md_is_internal, which every free tests inline:
 * both 0 until the pool exists, and the size is published after the
 * base, so a racing reader never sees a range starting at 0. */
uintptr_t md_internal_lo;
size_t md_internal_bytes;
static size_t pool_used;
static bool pool_lock;

/* Reserved regions, so the leak checker does not take our own tables
 * (which point at every block) for program roots. */
static struct { uintptr_t lo, hi; } regions[64];
static int nregions;

bool md_is_metadata(uintptr_t lo, uintptr_t hi)
{
    for (int i = 0; i < nregions; i++)
        if (lo < regions[i].hi && hi > regions[i].lo) return true;
    return false;
}

void *md_reserve(size_t bytes, const char *what)
{
    bytes = (bytes + MD_PAGE - 1) & ~(MD_PAGE - 1);
    char *p = mmap(0, bytes + 2 * MD_PAGE, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        md_write_all(2, "memdbg: cannot reserve metadata for ", 36);
        md_die_msg(what, md_as_limit_hint(), "");
    }
    if (mprotect(p + MD_PAGE, bytes, PROT_READ | PROT_WRITE) != 0)
        md_die_msg("memdbg: cannot enable metadata for ", what, "");
    if (nregions < 64) {
        regions[nregions].lo = (uintptr_t)p;
        regions[nregions].hi = (uintptr_t)p + bytes + 2 * MD_PAGE;
        nregions++;
    }
    return p + MD_PAGE;
}

/* Core dumps (core_dump.c): the pages of every reservation never
 * written (mincore: not resident) are left out, in runs of at least 16
 * pages, at most *calls_left madvise calls.  A written page the kernel
 * swapped out is left out too. */
void md_reserve_dontdump_unwritten(int *calls_left)
{
    static unsigned char vec[4096];
    for (int i = 0; i < nregions; i++) {
        uintptr_t lo = regions[i].lo + MD_PAGE, hi = regions[i].hi - MD_PAGE, run = 0;
        bool in_run = false;
        for (uintptr_t a = lo; a < hi && *calls_left > 0;) {
            size_t n = (hi - a) >> MD_PAGE_SHIFT;
            if (n > sizeof vec) n = sizeof vec;
            if (mincore((void *)a, n << MD_PAGE_SHIFT, vec) != 0) break;
            for (size_t k = 0; k <= n; k++) {
                uintptr_t pa = a + (k << MD_PAGE_SHIFT);
                bool absent = k < n ? !(vec[k] & 1) : false;
                if (k == n && pa < hi) break;   /* the run goes on in the next chunk */
                if (absent && !in_run) run = pa, in_run = true;
                if (!absent && in_run) {
                    in_run = false;
                    if (pa - run >= 16 * MD_PAGE && *calls_left > 0) {
                        (*calls_left)--;
                        madvise((void *)run, pa - run, MADV_DONTDUMP);
                    }
                }
            }
            a += n << MD_PAGE_SHIFT;
        }
    }
}

static void pool_init(void)
{
    size_t want = md_pool_bytes(md_opt.arena_size);
    pool_size = want;
    pool_base = md_reserve(want, "internal pool");
    /* Small pages: the stack memo's per-thread tables live here and count
     * on pages becoming resident only where they are written; with
     * transparent huge pages always on, every table would cost 2 MiB. */
    madvise(pool_base, want, MADV_NOHUGEPAGE);
    __atomic_store_n(&md_internal_lo, (uintptr_t)pool_base, __ATOMIC_RELAXED);
    __atomic_store_n(&md_internal_bytes, want, __ATOMIC_RELEASE);
}

/* In a fork child no other thread holds the pool lock; a holder in this
 * thread (a handler's fork interrupted it) only finishes its bump. */
void md_internal_fork_child(void)
{
    __atomic_clear(&pool_lock, __ATOMIC_RELEASE);
}

void md_internal_init(void)
{
    if (!pool_base) pool_init();
}

struct ihdr { size_t size; size_t pad; };

void *md_internal_alloc(size_t size, size_t align)
{
    if (align < 16) align = 16;
    while (__atomic_test_and_set(&pool_lock, __ATOMIC_ACQUIRE)) { }
    if (!pool_base) pool_init();
    if (size > INTERNAL_POOL_SIZE) size = INTERNAL_POOL_SIZE + 1;   /* fails below */
    size_t start = (pool_used + sizeof(struct ihdr) + align - 1) & ~(align - 1);
    void *r = 0;
    if (start + size <= INTERNAL_POOL_SIZE) {
        pool_used = start + size;
        r = pool_base + start;
        ((struct ihdr *)r)[-1].size = size;
    }
    __atomic_clear(&pool_lock, __ATOMIC_RELEASE);
    return r;
}

size_t md_internal_usable(const void *p)
{
    return ((const struct ihdr *)p)[-1].size;
}

void *md_internal_realloc(void *p, size_t size)
{
    void *n = md_internal_alloc(size, 16);
    if (n && p) {
        size_t old = md_internal_usable(p);
        memcpy(n, p, old < size ? old : size);
    }
    return n;
}
