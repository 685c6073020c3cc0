/* nonlinear backend: our patched kernel.  The heap is one VMA; every page of
 * it is either a guard (PROT_NONE, no memory) or a file page mapped there
 * with remap_file_pages(..., MAP_CHGPROT).  Physical file pages are kept in
 * per-class runs: a freed block's run is moved to the next block of its
 * class at once, while the freed *addresses* stay guards in the quarantine.
 * So memory is bounded by the live data, not by the quarantine. */

#include "memdbg.h"
#include "nonlinear_abi.h"
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

static uint32_t file_bump;             /* first never-used file page */
static uint32_t run_free[MD_NCLASSES]; /* class -> first free run + 1 */
static uint32_t *run_next;             /* file page -> next free run + 1 */

/* Guards (PROT_NONE) are set with MAP_NONBLOCK so the kernel never
 * populates file pages for them; data pages are populated at once. */
static int rfp(uintptr_t addr, size_t len, int prot, size_t pgoff)
{
    if (md_opt.nonlinear_emulation) {
        /* Test aid for stock kernels: same page semantics through
         * mmap(MAP_FIXED), at the price of one VMA per call. */
        void *r = mmap((void *)addr, len, prot, MAP_SHARED | MAP_FIXED | MAP_NORESERVE, md_heap.fd,
                       (off_t)pgoff << MD_PAGE_SHIFT);
        return r == MAP_FAILED ? -1 : 0;
    }
    int flags = MAP_CHGPROT | (prot == PROT_NONE ? MAP_NONBLOCK : 0);
    for (;;) {
        if (syscall(SYS_remap_file_pages, addr, len, prot, pgoff, flags) == 0) return 0;
        if (errno != EINTR && errno != EAGAIN) return -1;
    }
}

static int nonlinear_probe(char *why, size_t whylen)
{
    const char *msg = "remap_file_pages(MAP_CHGPROT) keeps one VMA";
    int rc = -1;
    if (md_opt.nonlinear_emulation) {
        strncpy(why, "EMULATED with mmap(MAP_FIXED) for testing (nonlinear_emulation=1)", whylen - 1);
        why[whylen - 1] = 0;
        return 0;
    }
    int fd = md_memfd("memdbg-probe");
    char *p = MAP_FAILED;
    if (fd < 0 || ftruncate(fd, 2 * MD_PAGE) != 0) { msg = "memfd_create failed"; goto out; }
    p = mmap(0, 2 * MD_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) { msg = "mmap of memfd failed"; goto out; }
    if (rfp((uintptr_t)p + MD_PAGE, MD_PAGE, PROT_NONE, 0) != 0) {
        msg = errno == EINVAL ? "remap_file_pages with MAP_CHGPROT rejected (EINVAL: stock kernel)"
            : errno == ENOSYS ? "remap_file_pages missing (ENOSYS)"
                              : "remap_file_pages with MAP_CHGPROT failed";
        goto out;
    }
    int n = md_count_vmas((uintptr_t)p, (uintptr_t)p + 2 * MD_PAGE);
    if (n != 1) { msg = "remap_file_pages is emulated with extra VMAs (stock kernel)"; goto out; }
    /* The guard must really be inaccessible, and RW must come back: a
     * kernel with nonlinear mappings but no MAP_CHGPROT ignores the flag.
     * write(2) from the page to a pipe tells without taking a fault. */
    int pfd[2];
    if (pipe(pfd) != 0) { msg = "pipe failed"; goto out; }
    bool guarded = write(pfd[1], p + MD_PAGE, 1) < 0 && errno == EFAULT;
    bool back = guarded && rfp((uintptr_t)p + MD_PAGE, MD_PAGE, PROT_READ | PROT_WRITE, 0) == 0 &&
                write(pfd[1], p + MD_PAGE, 1) == 1;
    close(pfd[0]);
    close(pfd[1]);
    if (!guarded) { msg = "kernel keeps one VMA but ignores MAP_CHGPROT (no per-page protection)"; goto out; }
    if (!back) { msg = "remap_file_pages(PROT_READ|PROT_WRITE, MAP_CHGPROT) failed"; goto out; }
    rc = 0;
out:
    if (p != MAP_FAILED) munmap(p, 2 * MD_PAGE);
    if (fd >= 0) close(fd);
    strncpy(why, msg, whylen - 1);
    why[whylen - 1] = 0;
    return rc;
}

static int nonlinear_map_arena(void)
{
    void *p = mmap((void *)md_heap.base, md_heap.size, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_FIXED | MAP_NORESERVE, md_heap.fd, 0);
    if (p == MAP_FAILED) return -1;
    if (!run_next) run_next = md_reserve((size_t)md_heap.total_pages * sizeof(uint32_t), "file runs");
    return 0;
}

static int nonlinear_guard_range(uint32_t page, uint32_t n)
{
    return rfp(md_page_addr(page), (size_t)n << MD_PAGE_SHIFT, PROT_NONE, 0);
}

/* Each slot class has a fixed run length: the class's data capacity. */
static int nonlinear_commit(struct md_slot *s, uint32_t page, uint32_t n)
{
    uint32_t run_len = s->pages - 1;
    if (!(s->flags & SLOT_F_HAS_FILE)) {
        uint32_t r = run_free[s->cls];
        if (r) {
            run_free[s->cls] = run_next[r - 1];
            s->file_page = r - 1;
            s->flags &= (uint8_t)~SLOT_F_FRESH;   /* recycled: old contents */
        } else {
            if (run_len > md_heap.total_pages - file_bump) return -1;
            s->file_page = file_bump;
            file_bump += run_len;
            s->flags |= SLOT_F_FRESH;
        }
        s->flags |= SLOT_F_HAS_FILE;
    }
    return rfp(md_page_addr(page), (size_t)n << MD_PAGE_SHIFT, PROT_READ | PROT_WRITE, s->file_page);
}

static int nonlinear_release(struct md_slot *s, uint32_t page, uint32_t n)
{
    if (rfp(md_page_addr(page), (size_t)n << MD_PAGE_SHIFT, PROT_NONE, 0) != 0) return -1;
    if (s->flags & SLOT_F_HAS_FILE) {
        run_next[s->file_page] = run_free[s->cls];
        run_free[s->cls] = s->file_page + 1;
        s->flags &= (uint8_t)~SLOT_F_HAS_FILE;
    }
    return 0;
}

static size_t nonlinear_file_extent(void)
{
    return (size_t)file_bump << MD_PAGE_SHIFT;
}

static int nonlinear_after_fork(int fd)
{
    close(md_heap.fd);
    md_heap.fd = fd;
    void *p = mmap((void *)md_heap.base, md_heap.size, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_FIXED | MAP_NORESERVE, md_heap.fd, 0);
    if (p == MAP_FAILED) return -1;
    if (md_heap.guarded_frontier && nonlinear_guard_range(0, md_heap.guarded_frontier) != 0) return -1;
    for (uint32_t id = 1; id <= md_heap.nslots; id++) {
        struct md_slot *s = &md_heap.slots[id];
        if (s->state == SLOT_LIVE && s->data_pages)
            if (rfp(md_page_addr(md_slot_data_page(s)), (size_t)s->data_pages << MD_PAGE_SHIFT,
                    PROT_READ | PROT_WRITE, s->file_page) != 0) return -1;
    }
    return 0;
}

const struct md_backend md_backend_nonlinear MEMDBG_HIDDEN = {
    .name = "nonlinear",
    .probe = nonlinear_probe,
    .map_arena = nonlinear_map_arena,
    .guard_range = nonlinear_guard_range,
    .commit = nonlinear_commit,
    .release = nonlinear_release,
    .file_extent = nonlinear_file_extent,
    .after_fork = nonlinear_after_fork,
};
