/* mprotect backend: any kernel.  The memfd is mapped PROT_NONE and each live
 * block's data pages are mprotect'ed read/write, which splits the VMA: about
 * two VMAs per live block.  Before vm.max_map_count is reached it warns once
 * and gives new blocks no guard page (they merge into shared VMAs; the
 * padding check at free still finds overflows) instead of failing. */

#include "memdbg.h"
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>

static int mprotect_probe(char *why, size_t whylen)
{
    const char *msg = "always available (about 2 VMAs per live block)";
    size_t i = 0;
    for (; msg[i] && i + 1 < whylen; i++) why[i] = msg[i];
    why[i] = 0;
    return 0;
}

static long read_max_map_count(void)
{
    int fd = open("/proc/sys/vm/max_map_count", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 65530;
    char buf[32];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    long v = 0;
    for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++) v = v * 10 + (buf[i] - '0');
    return v > 0 ? v : 65530;
}

static int mprotect_map_arena(void)
{
    void *p = mmap((void *)md_heap.base, md_heap.size, PROT_NONE,
                   MAP_SHARED | MAP_FIXED | MAP_NORESERVE, md_heap.fd, 0);
    if (p == MAP_FAILED) return -1;
    md_heap.max_map_count = read_max_map_count();
    md_heap.vma_estimate = md_count_vmas(0, 0) + 16;
    return 0;
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
    md_buf_init(&b, mem, sizeof mem, md_report_fd());
    md_puts(&b, "==");
    md_putu(&b, (unsigned long long)getpid());
    md_puts(&b, "==WARNING: memdbg: backend mprotect is at about ");
    md_putu(&b, (unsigned long long)md_heap.vma_estimate);
    md_puts(&b, " VMAs of vm.max_map_count=");
    md_putu(&b, (unsigned long long)md_heap.max_map_count);
    md_puts(&b, "; new blocks get no guard page until blocks are freed (overflows are\n"
                "    still found by the padding check at free). Use backend=guard or raise vm.max_map_count.\n");
    md_flush(&b);
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
    return fallocate(md_heap.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                     (off_t)page << MD_PAGE_SHIFT, (off_t)n << MD_PAGE_SHIFT);
}

static size_t mprotect_file_extent(void)
{
    return (size_t)md_heap.bump_page << MD_PAGE_SHIFT;
}

static int mprotect_after_fork(int fd)
{
    close(md_heap.fd);
    md_heap.fd = fd;
    void *p = mmap((void *)md_heap.base, md_heap.size, PROT_NONE,
                   MAP_SHARED | MAP_FIXED | MAP_NORESERVE, md_heap.fd, 0);
    if (p == MAP_FAILED) return -1;
    for (uint32_t id = 1; id <= md_heap.nslots; id++) {
        struct md_slot *s = &md_heap.slots[id];
        if (s->flags & SLOT_F_UNGUARDED) {
            if (mprotect((void *)md_page_addr(s->first_page), (size_t)s->pages << MD_PAGE_SHIFT,
                         PROT_READ | PROT_WRITE) != 0) return -1;
        } else if (s->state == SLOT_LIVE && s->data_pages) {
            if (mprotect((void *)md_page_addr(md_slot_data_page(s)), (size_t)s->data_pages << MD_PAGE_SHIFT,
                         PROT_READ | PROT_WRITE) != 0) return -1;
        }
    }
    return 0;
}

const struct md_backend md_backend_mprotect MEMDBG_HIDDEN = {
    .name = "mprotect",
    .probe = mprotect_probe,
    .map_arena = mprotect_map_arena,
    .guard_range = mprotect_guard_range,
    .commit = mprotect_commit,
    .release = mprotect_release,
    .drop = mprotect_drop,
    .commit_without_lock = true,
    /* The helper thread's hole punches and populates run against this
     * thread's VMA splits (mprotect takes the mapping locks for writing):
     * in the TCG guest a pair took 1.5-4.5 ms with it and 0.15-0.26 ms
     * without; natively it saved no wall-clock time either (tests/lib/bench.sh). */
    .no_helper = true,
    .file_extent = mprotect_file_extent,
    .after_fork = mprotect_after_fork,
};
