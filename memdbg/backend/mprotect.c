/* SPDX-License-Identifier: MIT */
/* mprotect backend: any kernel.  The arena is a private anonymous mapping,
 * PROT_NONE, and each live block's data pages are mprotect'ed read/write,
 * which splits the VMA: about two VMAs per live block.  Freed memory goes
 * back with MADV_DONTNEED on the (PROT_NONE) pages; no descriptor is used,
 * and fork copies the arena on write.  Before vm.max_map_count is reached it warns once
 * and gives new blocks no guard page (they merge into shared VMAs; the
 * padding check at free still finds overflows) instead of failing. */

#include "backend/backend.h"
#include <fcntl.h>
#include <errno.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/uio.h>

static int mprotect_probe(char *why, size_t whylen)
{
    const char *msg = "always available (about 2 VMAs per live block)";
    size_t i = 0;
    for (; msg[i] && i + 1 < whylen; i++) why[i] = msg[i];
    why[i] = 0;
    return 0;
}

static int mprotect_map_arena(void)
{
    /* The VMA gets its anon_vma before the first split, so that every
     * piece mprotect cuts out shares it and merges back when its block is
     * freed: pieces that got their own at their first fault never merge
     * again (measured: one VMA more per malloc/free pair, ENOMEM at
     * vm.max_map_count).  Touch a page while the arena is writable. */
    void *p = mmap((void *)md_heap.base, md_heap.size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return -1;
    *(volatile char *)p = 0;
    if (madvise(p, MD_PAGE, MADV_DONTNEED) != 0 || mprotect(p, md_heap.size, PROT_NONE) != 0) return -1;
    md_heap.max_map_count = md_max_map_count();
    md_heap.vma_estimate = md_count_vmas(0, 0) + 16;
    return 0;
}

/* The arena's end again after it went back: PROT_NONE like the rest. */
static int mprotect_map_tail(uint32_t page, uint32_t n)
{
    return md_map_anon_at(md_page_addr(page), (size_t)n << MD_PAGE_SHIFT, PROT_NONE);
}

static int mprotect_guard_range(uint32_t page, uint32_t n)
{
    (void)page; (void)n;   /* the whole arena starts PROT_NONE */
    return 0;
}

static long vma_limit(void)
{
    return md_heap.max_map_count - md_heap.max_map_count / 8;
}

static void warn_vmas(void)
{
    char mem[512];
    struct md_buf b;
    md_warn_begin(&b, mem, sizeof mem);
    md_puts(&b, "backend mprotect is at about ");
    md_putu(&b, (unsigned long long)md_heap.vma_estimate);
    md_puts(&b, " VMAs of vm.max_map_count=");
    md_putu(&b, (unsigned long long)md_heap.max_map_count);
    md_puts(&b, "; new blocks get no guard page until blocks are freed (overflows are\n"
                "    still found by the padding check at free). Use backend=guard or raise vm.max_map_count.\n");
    md_warn_end(&b);
}

static int mprotect_commit(struct md_slot *s, uint32_t page, uint32_t n)
{
    if (s->flags & SLOT_F_UNGUARDED)   /* whole slot RW so neighbours merge */
        return mprotect((void *)md_page_addr(s->first_page), (size_t)s->pages << MD_PAGE_SHIFT,
                        PROT_READ | PROT_WRITE);
    if (mprotect((void *)md_page_addr(page), (size_t)n << MD_PAGE_SHIFT, PROT_READ | PROT_WRITE) != 0)
        return -1;
    long v = __atomic_add_fetch(&md_heap.vma_estimate, 2, __ATOMIC_RELAXED);
    if (v > vma_limit() && !md_heap.unguarded_mode) {
        md_heap.unguarded_mode = 1;
        if (!md_heap.vma_warned) { md_heap.vma_warned = 1; warn_vmas(); }
    }
    return 0;
}

static int mprotect_release(struct md_slot *s, uint32_t page, uint32_t n)
{
    size_t len = (size_t)n << MD_PAGE_SHIFT;
    if (!(s->flags & SLOT_F_UNGUARDED)) {
        if (mprotect((void *)md_page_addr(page), len, PROT_NONE) != 0) return -1;
        long v = __atomic_sub_fetch(&md_heap.vma_estimate, 2, __ATOMIC_RELAXED);
        if (md_heap.unguarded_mode && v < vma_limit() - 4096)
            md_heap.unguarded_mode = 0;
    }
    return 0;
}

static int mprotect_drop(uint32_t page, uint32_t n)
{
    return madvise((void *)md_page_addr(page), (size_t)n << MD_PAGE_SHIFT, MADV_DONTNEED);
}

/* A batch of ready slots: mprotect has no vectored form, but the pages of
 * the whole batch are made resident in one call (process_madvise), so
 * malloc's first write takes no fault. */
static void mprotect_commit_many(struct md_slot *const *slots, uint32_t n, bool *ok)
{
    struct iovec iov[64];
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        ok[i] = mprotect_commit(slots[i], md_slot_data_page(slots[i]), slots[i]->data_pages) == 0;
        if (ok[i] && k < 64) {
            iov[k].iov_base = (void *)md_slot_data_lo(slots[i]);
            iov[k++].iov_len = (size_t)slots[i]->data_pages << MD_PAGE_SHIFT;
        }
    }
    md_madvise_ranges(iov, k, MADV_POPULATE_WRITE, 0);
}

/* Recovery from a fault (halt_on_error=0): the page becomes accessible (up
 * to 2 more VMAs, counted like a block's) and is given back zeroed. */
static int mprotect_open_page(uint32_t page)
{
    void *a = (void *)md_page_addr(page);
    if (madvise(a, MD_PAGE, MADV_DONTNEED) != 0 || mprotect(a, MD_PAGE, PROT_READ | PROT_WRITE) != 0) return -1;
    __atomic_add_fetch(&md_heap.vma_estimate, 2, __ATOMIC_RELAXED);
    return 0;
}

const struct md_backend md_backend_mprotect MEMDBG_HIDDEN = {
    .name = "mprotect",
    .probe = mprotect_probe,
    .map_arena = mprotect_map_arena,
    .map_tail = mprotect_map_tail,
    .guard_range = mprotect_guard_range,
    .commit = mprotect_commit,
    .release = mprotect_release,
    .drop = mprotect_drop,
    .commit_many = mprotect_commit_many,
    .page_ops_unlocked = true,
    .slot_cache = true,
    .open_page = mprotect_open_page,
    .protect_many = md_protect_mprotect_many,
    /* .fork_prepare: none, a private arena is copied on write by fork */
};
