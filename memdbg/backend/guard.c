/* SPDX-License-Identifier: MIT */
/* guard backend: stock Linux >= 6.13.  The arena is ONE private anonymous
 * VMA; guard pages are MADV_GUARD_INSTALL markers in the page tables, which
 * do not split VMAs.  No descriptor: nothing the program can close or
 * reuse is ever acted on.  Installing a guard zaps the pages under it, and
 * for anonymous memory that frees them, so free needs no second call to
 * give memory back.  fork: the kernel copies the arena on write and copies
 * the markers with the page tables (checked on 6.18), so the child has its
 * own heap at no cost beyond the page-table copy.  Pages are not moved
 * between addresses (that needs the nonlinear kernel). */

#include "backend/backend.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/uio.h>

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif
#ifndef MADV_GUARD_REMOVE
#define MADV_GUARD_REMOVE 103
#endif

static int madv(uintptr_t addr, size_t len, int advice)
{
    for (;;) {
        if (madvise((void *)addr, len, advice) == 0) return 0;
        if (errno != EINTR && errno != EAGAIN) return -1;
    }
}

/* write(2) from the page to a pipe tells whether it is inaccessible
 * without taking a fault. */
static bool guard_holds(const char *page)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0) return false;
    bool guarded = write(pfd[1], page, 1) < 0 && errno == EFAULT;
    close(pfd[0]);
    close(pfd[1]);
    return guarded;
}

static int guard_probe(char *why, size_t whylen)
{
    const char *msg = "MADV_GUARD_INSTALL works on a private anonymous mapping";
    int rc = -1;
    char *p = mmap(0, 2 * MD_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { msg = "mmap failed"; goto out; }
    p[0] = 1;
    if (madv((uintptr_t)p + MD_PAGE, MD_PAGE, MADV_GUARD_INSTALL) != 0)
        msg = errno == EINVAL ? "MADV_GUARD_INSTALL rejected (EINVAL: kernel older than 6.13)"
                              : "MADV_GUARD_INSTALL failed";
    else if (madv((uintptr_t)p + MD_PAGE, MD_PAGE, MADV_DONTNEED) != 0 || !guard_holds(p + MD_PAGE))
        msg = "a guard does not survive MADV_DONTNEED";
    else if (madv((uintptr_t)p + MD_PAGE, MD_PAGE, MADV_GUARD_REMOVE) != 0)
        msg = "MADV_GUARD_REMOVE failed";
    else
        rc = 0;
    munmap(p, 2 * MD_PAGE);
out:
    strncpy(why, msg, whylen - 1);
    why[whylen - 1] = 0;
    return rc;
}

static int guard_map_arena(void)
{
    void *p = mmap((void *)md_heap.base, md_heap.size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? -1 : 0;
}

/* The arena's end again after it went back: fresh pages, guarded ahead
 * of the bump pointer like the rest (guard_range). */
static int guard_map_tail(uint32_t page, uint32_t n)
{
    return md_map_anon_at(md_page_addr(page), (size_t)n << MD_PAGE_SHIFT, PROT_READ | PROT_WRITE);
}

static int guard_range(uint32_t page, uint32_t n)
{
    return madv(md_page_addr(page), (size_t)n << MD_PAGE_SHIFT, MADV_GUARD_INSTALL);
}

static int guard_commit(struct md_slot *s, uint32_t page, uint32_t n)
{
    (void)s;
    return madv(md_page_addr(page), (size_t)n << MD_PAGE_SHIFT, MADV_GUARD_REMOVE);
}

static int guard_release(struct md_slot *s, uint32_t page, uint32_t n)
{
    (void)s;
    return madv(md_page_addr(page), (size_t)n << MD_PAGE_SHIFT, MADV_GUARD_INSTALL);
}

/* The data pages of slots as ranges for md_madvise_ranges. */
static void slot_ranges(struct md_slot *const *slots, uint32_t n, struct iovec *iov)
{
    for (uint32_t i = 0; i < n; i++) {
        iov[i].iov_base = (void *)md_slot_data_lo(slots[i]);
        iov[i].iov_len = (size_t)slots[i]->data_pages << MD_PAGE_SHIFT;
    }
}

/* A batch of ready slots: one call removes the guards of all, one makes
 * their pages resident, so malloc's first write takes no fault.  A slot
 * whose populate fails is still usable (it faults in on first write). */
static void guard_commit_many(struct md_slot *const *slots, uint32_t n, bool *ok)
{
    struct iovec iov[64];
    if (n > 64) {   /* the heap batches by 64 */
        for (uint32_t i = 0; i < n; i++)
            ok[i] = guard_commit(slots[i], md_slot_data_page(slots[i]), slots[i]->data_pages) == 0;
        return;
    }
    slot_ranges(slots, n, iov);
    md_madvise_ranges(iov, n, MADV_GUARD_REMOVE, ok);
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        if (ok[i]) iov[k++] = iov[i];
    md_madvise_ranges(iov, k, MADV_POPULATE_WRITE, 0);
}

/* free_batch: the guards of many freed blocks in two calls.  A guard
 * installed over a resident page zaps it with a TLB flush of its own, one
 * per range even in one process_madvise; MADV_DONTNEED over many ranges
 * shares one flush among them (Linux >= 6.16).  So the pages go first,
 * and the markers then land on empty entries with no flush.  A stray
 * access between the two calls faults in a zero page, which the guard
 * zaps again: the block is guarded either way.  On a 6.18 host under a
 * paravirtual hypervisor, where a flush costs about 5 us, 64 ranges take
 * 1.2 us per page this way and 5.3 us with the markers alone. */
static void guard_release_many(struct md_slot *const *slots, uint32_t n)
{
    struct iovec iov[64];
    for (uint32_t done = 0; done < n; done += 64) {
        uint32_t k = n - done < 64 ? n - done : 64;
        slot_ranges(slots + done, k, iov);
        /* one range by one, the first pass would only double the calls */
        if (k > 1 && md_madvise_vectored(MADV_DONTNEED)) md_madvise_ranges(iov, k, MADV_DONTNEED, 0);
        md_madvise_ranges(iov, k, MADV_GUARD_INSTALL, 0);
    }
}

/* Recovery from a fault (halt_on_error=0): the marker goes, the page reads
 * as zero from then on; the VMA stays one. */
static int guard_open_page(uint32_t page)
{
    return madv(md_page_addr(page), MD_PAGE, MADV_GUARD_REMOVE);
}

const struct md_backend md_backend_guard MEMDBG_HIDDEN = {
    .name = "guard",
    .probe = guard_probe,
    .map_arena = guard_map_arena,
    .map_tail = guard_map_tail,
    .guard_range = guard_range,
    /* A marker is a page-table entry, and fork copies every one (about
     * 50 ns each on 6.18): 64 MiB of markers ahead of the last slot cost
     * every fork 16,384 of them (0.9 ms, 20x a small program's plain
     * fork).  2 MiB, one page table, costs at most 512 and one madvise
     * per 2 MiB of new slots. */
    .guard_ahead_pages = 512,
    .commit = guard_commit,
    .release = guard_release,
    /* .drop: none, MADV_GUARD_INSTALL already freed the pages */
    .commit_many = guard_commit_many,
    .release_many = guard_release_many,
    .page_ops_unlocked = true,
    .slot_cache = true,
    .commit_extends = true,
    .open_page = guard_open_page,
    .protect_many = md_protect_mprotect_many,
    /* .fork_prepare: none, a private arena is copied on write by fork */
};
