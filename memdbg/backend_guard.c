/* guard backend: stock Linux >= 6.13 (shmem support in 6.15).  The memfd is
 * mapped linearly (arena offset == file offset) as ONE VMA; guard pages are
 * MADV_GUARD_INSTALL markers in the page tables, which do not split VMAs.
 * Freed memory goes back to the kernel with FALLOC_FL_PUNCH_HOLE; pages are
 * not moved between addresses (that needs the nonlinear kernel). */

#include "memdbg.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

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

static int guard_probe(char *why, size_t whylen)
{
    const char *msg = "MADV_GUARD_INSTALL works on a memfd MAP_SHARED mapping";
    int rc = -1;
    int fd = md_memfd("memdbg-probe");
    if (fd < 0 || ftruncate(fd, 2 * MD_PAGE) != 0) { msg = "memfd_create failed"; goto out; }
    char *p = mmap(0, 2 * MD_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) { msg = "mmap of memfd failed"; goto out; }
    p[0] = 1;
    if (madv((uintptr_t)p + MD_PAGE, MD_PAGE, MADV_GUARD_INSTALL) != 0)
        msg = errno == EINVAL ? "MADV_GUARD_INSTALL rejected (EINVAL: kernel older than 6.15)"
                              : "MADV_GUARD_INSTALL failed";
    else if (madv((uintptr_t)p + MD_PAGE, MD_PAGE, MADV_GUARD_REMOVE) != 0)
        msg = "MADV_GUARD_REMOVE failed";
    else
        rc = 0;
    munmap(p, 2 * MD_PAGE);
out:
    if (fd >= 0) close(fd);
    strncpy(why, msg, whylen - 1);
    why[whylen - 1] = 0;
    return rc;
}

static int guard_map_arena(void)
{
    void *p = mmap((void *)md_heap.base, md_heap.size, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_FIXED | MAP_NORESERVE, md_heap.fd, 0);
    return p == MAP_FAILED ? -1 : 0;
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

/* The addresses are guards already; give the memory back.  MADV_REMOVE
 * punches the hole through the mapping, so it cannot hit another file if
 * the program closed our descriptor and reused its number; guard markers
 * survive it. */
static int guard_drop(uint32_t page, uint32_t n)
{
    return madv(md_page_addr(page), (size_t)n << MD_PAGE_SHIFT, MADV_REMOVE);
}

/* The heap is MAP_SHARED: without this a forked child would write into its
 * parent's heap.  Give the child a private copy of the file and rebuild the
 * guards (mapping a new file drops all markers). */
static size_t guard_file_extent(void)
{
    return (size_t)md_heap.bump_page << MD_PAGE_SHIFT;
}

static int guard_after_fork(int fd)
{
    close(md_heap.fd);
    md_heap.fd = fd;
    if (guard_map_arena() != 0) return -1;
    if (md_heap.guarded_frontier && guard_range(0, md_heap.guarded_frontier) != 0) return -1;
    for (uint32_t id = 1; id <= md_heap.nslots; id++) {
        struct md_slot *s = &md_heap.slots[id];
        if (s->state == SLOT_LIVE && s->data_pages)
            if (guard_commit(s, md_slot_data_page(s), s->data_pages) != 0) return -1;
    }
    return 0;
}

const struct md_backend md_backend_guard MEMDBG_HIDDEN = {
    .name = "guard",
    .probe = guard_probe,
    .map_arena = guard_map_arena,
    .guard_range = guard_range,
    .commit = guard_commit,
    .release = guard_release,
    .drop = guard_drop,
    .commit_without_lock = true,
    .file_extent = guard_file_extent,
    .after_fork = guard_after_fork,
};
