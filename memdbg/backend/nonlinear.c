/* SPDX-License-Identifier: MIT */
/* nonlinear backend: our patched kernel.  The heap is one VMA; every page of
 * it is either a guard (PROT_NONE, no memory) or a file page mapped there
 * with remap_file_pages(..., MAP_CHGPROT).  Physical file pages are kept in
 * per-class runs: a freed block's run is moved to the next block of its
 * class at once, while the freed *addresses* stay guards in the quarantine.
 * So memory is bounded by the live data, not by the quarantine.
 *
 * The memfd is the one descriptor memdbg keeps after setup; it is used
 * only by fork (the child maps its copy) and by the emulation test aid,
 * each time after checking it is still the heap's (md_heap_fd_ok): a
 * program that closed it and reuses the number keeps its file untouched.
 * Memory is never given back through it (runs are recycled instead). */

#include "backend/backend.h"
#include "nonlinear_abi.h"
#include "nonlinear_pool.h"
#include "compact.h"
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/syscall.h>

static uint32_t *page_file;   /* arena page -> file page shown there (MIXED slots, moves) */

static int nonlinear_probe(char *why, size_t whylen)
{
    const char *msg = "remap_file_pages(MAP_CHGPROT) keeps one VMA";
    int rc = -1;
    if (md_opt.nonlinear_emulation) {
        strncpy(why, "EMULATED with mmap(MAP_FIXED) for testing (nonlinear_emulation=1)", whylen - 1);
        why[whylen - 1] = 0;
        return 0;
    }
    int fd = -1;
    char *p = MAP_FAILED;
    /* The documented query (docs/kernel.md, "Detecting MAP_CHGPROT"):
     * kernels without per-page protections refuse it, and it changes
     * nothing on any kernel.  The trial below still checks the behaviour. */
    if (syscall(SYS_remap_file_pages, 0UL, 0UL, 0UL, 0UL, (unsigned long)MAP_CHGPROT) != 0) {
        msg = errno == ENOSYS ? "remap_file_pages missing (ENOSYS)"
                              : "no MAP_CHGPROT: remap_file_pages(0, 0, 0, 0, MAP_CHGPROT) is refused (stock kernel)";
        goto out;
    }
    fd = md_memfd("memdbg-probe");
    if (fd < 0 || ftruncate(fd, 2 * MD_PAGE) != 0) { msg = "memfd_create failed"; goto out; }
    p = mmap(0, 2 * MD_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) { msg = "mmap of memfd failed"; goto out; }
    if (md_nonlinear_rfp((uintptr_t)p + MD_PAGE, MD_PAGE, PROT_NONE, 0) != 0) {
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
    bool back = guarded && md_nonlinear_rfp((uintptr_t)p + MD_PAGE, MD_PAGE, PROT_READ | PROT_WRITE, 0) == 0 &&
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
    md_fp_init(md_heap.total_pages);
    page_file = md_fp_page_map();
    md_compact_init();
    return 0;
}

/* The arena's end again after it went back: the arena's one VMA grows in
 * place over it (a mapping of its own there would be a second VMA, which
 * remap_file_pages calls could not span), showing the file's linear
 * pages, which the memfd still has (it keeps its size). */
static int nonlinear_map_tail(uint32_t page, uint32_t n)
{
    void *p = mremap((void *)md_heap.base, (size_t)page << MD_PAGE_SHIFT, (size_t)(page + n) << MD_PAGE_SHIFT, 0);
    return p == MAP_FAILED ? -1 : 0;
}

static int nonlinear_guard_range(uint32_t page, uint32_t n)
{
    md_compact_flush();
    return md_nonlinear_rfp(md_page_addr(page), (size_t)n << MD_PAGE_SHIFT, PROT_NONE, 0);
}

/* Maps arena pages [page, page+n) with protection prot to the file pages
 * page_file[] lists, one call per run of consecutive file pages. */
static int map_listed_prot(uint32_t page, uint32_t n, int prot)
{
    uint32_t i = 0;
    while (i < n) {
        uint32_t k = 1;
        while (i + k < n && page_file[page + i + k] == page_file[page + i] + k) k++;
        if (md_nonlinear_rfp(md_page_addr(page + i), (size_t)k << MD_PAGE_SHIFT, prot, page_file[page + i]) != 0)
            return -1;
        i += k;
    }
    return 0;
}

static int map_listed(uint32_t page, uint32_t n)
{
    return map_listed_prot(page, n, PROT_READ | PROT_WRITE);
}

/* File page shown at data page `page` of a live slot. */
static uint32_t file_of(const struct md_slot *s, uint32_t page)
{
    return (s->flags & SLOT_F_MIXED) ? page_file[page] : s->file_page + (page - md_slot_data_page(s));
}

/* Each slot class has a fixed run length, the class's data capacity.  A
 * freed run of the class comes first (its padding history spares most of
 * the fill), then loose pages left by realloc moves (so they do not pile
 * up), then never-used file pages. */
static int nonlinear_commit(struct md_slot *s, uint32_t page, uint32_t n)
{
    uint32_t run_len = s->pages - 1;
    md_compact_flush();   /* compact_defer: its entries go first */
    if (!(s->flags & (SLOT_F_HAS_FILE | SLOT_F_MIXED))) {
        uint8_t f = s->flags & (uint8_t)~(SLOT_F_FRESH | SLOT_F_PADDED);
        struct md_fp_history h;
        if (!md_fp_has_run(s->cls) && md_fp_loose_count() > 0) {
            bool fresh;
            if (md_fp_take_pages(page_file + page, n, &fresh) != 0) return -1;
            f |= SLOT_F_MIXED | (fresh ? SLOT_F_FRESH : 0);
            s->flags = f;
            if (map_listed(page, n) == 0) return 0;
            for (uint32_t i = n; i-- > 0;) md_fp_put_loose(page_file[page + i]);
            s->flags &= (uint8_t)~SLOT_F_MIXED;
            return -1;
        }
        if (md_fp_take_run(s->cls, run_len, &s->file_page, &h) != 0) return -1;
        if (h.fresh) f |= SLOT_F_FRESH;
        if (h.pad_hi > h.pad_lo && h.pages == n) {
            s->pad_lo = h.pad_lo;
            s->pad_hi = h.pad_hi;
            f |= SLOT_F_PADDED;
        }
        s->flags = f | SLOT_F_HAS_FILE;
    }
    if (s->flags & SLOT_F_MIXED) return map_listed(page, n);   /* after realloc moves only */
    if (md_nonlinear_rfp_unlocked((uint32_t)(s - md_heap.slots), md_page_addr(page),
                                  (size_t)n << MD_PAGE_SHIFT, PROT_READ | PROT_WRITE,
                                  s->file_page + (page - md_slot_data_page(s))) == 0)
        return 0;
    /* The call may have mapped the range up to a page table it could not
     * allocate: guard it all again, and only then may the run serve
     * another block (else it stays with the slot, unused). */
    if (md_nonlinear_rfp(md_page_addr(page), (size_t)n << MD_PAGE_SHIFT, PROT_NONE, 0) == 0) {
        md_fp_put_run(s->cls, s->file_page, 0, 0, 0, md_fp_generation());
        s->flags &= (uint8_t)~(SLOT_F_HAS_FILE | SLOT_F_PADDED);
    }
    return -1;
}

/* Gives a slot's file pages back to the pool, except the n pages from file
 * page `keep` on (moved to another slot; n may be 0). */
static void give_back(struct md_slot *s, uint32_t page, uint32_t npages, uint32_t keep, uint32_t n,
                      uint32_t seen)
{
    if (s->flags & SLOT_F_HAS_FILE) {
        if (n == 0) {
            bool padded = s->flags & SLOT_F_PADDED;
            md_fp_put_run(s->cls, s->file_page, padded ? s->pad_lo : 0, padded ? s->pad_hi : 0, npages, seen);
        } else {
            for (uint32_t i = s->pages - 1; i-- > 0;)
                if (s->file_page + i - keep >= n) md_fp_put_loose(s->file_page + i);
        }
    } else if (s->flags & SLOT_F_MIXED) {
        for (uint32_t i = npages; i-- > 0;)
            if (page_file[page + i] - keep >= n) md_fp_put_loose(page_file[page + i]);
    }
    s->flags &= (uint8_t)~(SLOT_F_HAS_FILE | SLOT_F_MIXED | SLOT_F_PADDED);
}

static int nonlinear_release(struct md_slot *s, uint32_t page, uint32_t n)
{
    if (s->win_hi) return md_compact_release(s);
    md_compact_flush();
    /* the padding was checked in this generation (a fork child made while
     * the guard is sent has no copy of the run's pages) */
    uint32_t seen = md_fp_generation();
    if (md_nonlinear_rfp_unlocked(0, md_page_addr(page), (size_t)n << MD_PAGE_SHIFT, PROT_NONE, 0) != 0)
        return -1;
    give_back(s, page, n, 0, 0, seen);
    return 0;
}

/* realloc by moving pages (see struct md_backend).  The moved file pages
 * are consecutive in the file when `from` owns one run, so that is one
 * call; to's other pages come from the pool (loose pages first). */
static int nonlinear_move_pages(struct md_slot *from, uint32_t from_page, struct md_slot *to,
                                uint32_t to_page, uint32_t n)
{
    uint32_t d1 = md_slot_data_page(from), d2 = md_slot_data_page(to);
    uint32_t n1 = from->data_pages, n2 = to->data_pages;
    md_compact_flush();
    uint32_t head = to_page - d2, tail = d2 + n2 - (to_page + n);
    if (from->flags & SLOT_F_MIXED) {
        /* moved pages must stay consecutive in the file for give_back */
        for (uint32_t i = 1; i < n; i++)
            if (page_file[from_page + i] != page_file[from_page] + i) return -1;
    }
    bool fresh;
    uint32_t keep = file_of(from, from_page);
    if (md_fp_take_pages(page_file + d2, head, &fresh) != 0) return -1;
    if (md_fp_take_pages(page_file + to_page + n, tail, &fresh) != 0) {
        for (uint32_t i = head; i-- > 0;) md_fp_put_loose(page_file[d2 + i]);
        return -1;
    }
    for (uint32_t i = 0; i < n; i++) page_file[to_page + i] = keep + i;
    to->flags = (uint8_t)((to->flags & ~(SLOT_F_FRESH | SLOT_F_PADDED | SLOT_F_HAS_FILE)) | SLOT_F_MIXED);
    if (map_listed(d2, n2) != 0 ||
        md_nonlinear_rfp(md_page_addr(d1), (size_t)n1 << MD_PAGE_SHIFT, PROT_NONE, 0) != 0) {
        md_nonlinear_rfp(md_page_addr(d2), (size_t)n2 << MD_PAGE_SHIFT, PROT_NONE, 0);
        for (uint32_t i = n2; i-- > 0;)
            if (page_file[d2 + i] - keep >= n) md_fp_put_loose(page_file[d2 + i]);
        to->flags &= (uint8_t)~SLOT_F_MIXED;
        /* from may be half guarded if only its guard call failed: remap it */
        if (from->flags & SLOT_F_MIXED) map_listed(d1, n1);
        else md_nonlinear_rfp(md_page_addr(d1), (size_t)n1 << MD_PAGE_SHIFT, PROT_READ | PROT_WRITE,
                              from->file_page);
        return -1;
    }
    give_back(from, d1, n1, keep, n, md_fp_generation());
    return 0;
}

/* fork: the heap is MAP_SHARED, so the child needs its own copy of the
 * file.  Only the file pages of live blocks (and of ready slots, which
 * show their pages already) are copied: free runs and quarantined blocks
 * hold nothing the child can read.  One copy_file_range per run of
 * consecutive such file pages, found with a bitmap in file order, from
 * the heap's memfd when fstat shows it is still ours; else (the program
 * closed it or took its number) read through the arena mapping, one
 * pwritev per run (up to IOV_MAX pages).
 *
 * A fork from a signal handler that interrupted this thread's malloc or
 * free (mid_call) finds the heap half-way through a change: a run being
 * taken or given back with its padding history, a slot committed but not
 * yet live.  Then the whole file in use is copied, so that every page
 * reads in the child as in the parent and the pool's padding histories
 * stay true whatever the resumed call does with them. */
static uint64_t *live_bits;   /* file page -> live (only set during a copy) */
static uint32_t *file_at;     /* file page -> arena page showing it (where live) */
static struct iovec iov[1024];
static bool copied_whole;     /* the copy holds every file page in use */
static bool copied_sending;   /* ...or at least those of SLOT_F_SENDING slots */

/* A slot whose data pages show file pages: live, or ready (committed,
 * not yet handed out; a compact window is mapped when it is made). */
static bool slot_shows_file(const struct md_slot *s)
{
    if (!s->data_pages) return false;
    if (s->state == MD_SLOT_LIVE) return true;
    return s->state == MD_SLOT_READY && (s->win_hi || (s->flags & (SLOT_F_HAS_FILE | SLOT_F_MIXED)));
}

static void mark_live(uint32_t fp, uint32_t page)
{
    live_bits[fp / 64] |= 1ull << (fp % 64);
    file_at[fp] = page;
}

/* First page from pos on (below end) whose bit is `set`, or end. */
static uint32_t next_bit(uint32_t pos, uint32_t end, bool set)
{
    while (pos < end) {
        uint64_t w = live_bits[pos / 64];
        if (!set) w = ~w;
        w &= ~0ull << (pos % 64);
        if (w) {
            uint32_t r = (pos & ~63u) + (uint32_t)__builtin_ctzll(w);
            return r < end ? r : end;
        }
        pos = (pos & ~63u) + 64;
    }
    return end;
}

/* Copies file pages [fp, fp+n) into the child's file: from the heap's
 * memfd when fstat shows it is still ours (copy_file_range, the kernel
 * moves whole runs), else read through the arena mapping (pwritev). */
static int write_run(int fd, uint32_t fp, uint32_t n, bool from_fd)
{
    if (from_fd) {
        loff_t in = (loff_t)fp << MD_PAGE_SHIFT, out = in, end = in + ((loff_t)n << MD_PAGE_SHIFT);
        while (in < end) {
            ssize_t c = copy_file_range(md_heap.fd, &in, fd, &out, (size_t)(end - in), 0);
            if (c > 0) continue;
            if (c < 0 && errno == EINTR) continue;
            break;   /* finish through the mapping */
        }
        uint32_t done = (uint32_t)((in >> MD_PAGE_SHIFT) - fp);
        fp += done;
        n -= done;
    }
    while (n) {
        uint32_t cnt = 0, done = 0;
        while (done < n && cnt < sizeof iov / sizeof *iov) {
            uintptr_t a = md_page_addr(file_at[fp + done]);
            if (cnt && (uintptr_t)iov[cnt - 1].iov_base + iov[cnt - 1].iov_len == a) {
                iov[cnt - 1].iov_len += MD_PAGE;
            } else {
                iov[cnt].iov_base = (void *)a;
                iov[cnt].iov_len = MD_PAGE;
                cnt++;
            }
            done++;
        }
        size_t want = (size_t)done << MD_PAGE_SHIFT;
        ssize_t w = pwritev(fd, iov, (int)cnt, (off_t)fp << MD_PAGE_SHIFT);
        if (w < 0 && errno == EINTR) continue;
        if (w != (ssize_t)want) {   /* short write: finish page by page */
            if (w < 0) return -1;
            for (uint32_t i = (uint32_t)(w >> MD_PAGE_SHIFT); i < done; i++)
                if (pwrite(fd, (void *)md_page_addr(file_at[fp + i]), MD_PAGE,
                           (off_t)(fp + i) << MD_PAGE_SHIFT) != (ssize_t)MD_PAGE) return -1;
        }
        fp += done;
        n -= done;
    }
    return 0;
}

static int nonlinear_fork_prepare(bool mid_call)
{
    /* mid_call: what is pending may be half sent; the resumed call sends it */
    if (!mid_call) md_compact_flush();
    uint32_t extent = md_fp_extent();
    if (!live_bits) {
        /* for the arena's size at start: its end may come back later */
        size_t pages = md_heap.max_size >> MD_PAGE_SHIFT;
        live_bits = md_reserve((pages / 64 + 1) * 8, "fork bitmap");
        file_at = md_reserve(pages * sizeof(uint32_t), "fork bitmap");
    }
    int fd = md_memfd("memdbg-heap");
    if (fd < 0) return -1;
    /* the file as long as at start: file pages past an arena whose end
     * went back (md_arena_give_back) may be shown below it */
    if (ftruncate(fd, (off_t)md_heap.max_size) != 0) { close(fd); return -1; }
    bool from_fd = md_heap_fd_ok();
    /* Pages that are not mapped can be read from the memfd only. */
    copied_whole = mid_call && from_fd;
    if (copied_whole) {
        copied_sending = true;
        int rc = extent ? write_run(fd, 0, extent, true) : 0;
        if (rc != 0) { close(fd); return -1; }
        return fd;
    }
    /* A slot another thread is mapping without the heap lock may not be
     * mapped yet: its pages can be copied from the memfd only. */
    copied_sending = from_fd;
    for (uint32_t id = 1; id <= md_heap.nslots; id++) {
        struct md_slot *s = &md_heap.slots[id];
        if (!slot_shows_file(s) || (!from_fd && (s->flags & SLOT_F_SENDING))) continue;
        uint32_t d = md_slot_data_page(s);
        for (uint32_t i = 0; i < s->data_pages; i++) mark_live(file_of(s, d + i), d + i);
    }
    int rc = 0;
    uint32_t pos = 0, lo;
    while (rc == 0 && (lo = next_bit(pos, extent, true)) < extent) {
        uint32_t hi = next_bit(lo, extent, false);
        rc = write_run(fd, lo, hi - lo, from_fd);
        pos = hi;
    }
    memset(live_bits, 0, ((size_t)extent / 64 + 1) * 8);
    if (rc != 0) { close(fd); return -1; }
    return fd;
}

/* The child: its copy mapped over the arena, all guards, then the pages
 * of live and ready slots as the parent shows them.  Entries a compact
 * free or refill has not sent yet stay pending (mid_call) and are sent by
 * the resumed call: sending them here too would queue their slots twice. */
static int nonlinear_after_fork(int fd, bool mid_call)
{
    if (md_heap_fd_ok()) close(md_heap.fd);   /* else the number is the program's now */
    md_heap.fd = fd;
    md_fd_identity(fd, &md_heap.fd_dev, &md_heap.fd_ino);
    /* Free runs read as zero in a copy of the live pages only: their
     * padding histories are void.  (A mid_call fork whose heap fd was no
     * longer ours can still lose the history of the run the interrupted
     * call was taking: its next block's padding may then be reported.) */
    if (!copied_whole) md_fp_fork_child();
    md_compact_fork_child();
    void *p = mmap((void *)md_heap.base, md_heap.size, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_FIXED | MAP_NORESERVE, md_heap.fd, 0);
    if (p == MAP_FAILED) return -1;
    /* Up to where a guard_range the interrupted call was making ends
     * (mid_call): the resumed call will not make it again. */
    uint32_t guarded = md_heap.guarded_frontier;
    if (mid_call && md_heap.guarding_to > guarded) guarded = md_heap.guarding_to;
    if (guarded && md_nonlinear_rfp(md_page_addr(0), (size_t)guarded << MD_PAGE_SHIFT, PROT_NONE, 0) != 0)
        return -1;
    for (uint32_t id = 1; id <= md_heap.nslots; id++) {
        struct md_slot *s = &md_heap.slots[id];
        if (!slot_shows_file(s)) continue;
        uint32_t d = md_slot_data_page(s);
        /* Mapped here whatever became of the call in flight in the parent
         * (this thread's, resumed, maps it again).  Its run was not copied:
         * it reads as zero, with no padding yet.  (A window is filled whole
         * at malloc anyway, its page may hold other chunks.) */
        if ((s->flags & SLOT_F_SENDING) && !copied_sending && !s->win_hi)
            s->flags = (uint8_t)((s->flags & ~SLOT_F_PADDED) | SLOT_F_FRESH);
        /* a frozen block stays frozen in the child */
        int prot = (s->flags & SLOT_F_FROZEN) ? PROT_READ : PROT_READ | PROT_WRITE;
        if (s->flags & SLOT_F_MIXED) {
            if (map_listed_prot(d, s->data_pages, prot) != 0) return -1;
        } else if (md_nonlinear_rfp(md_page_addr(d), (size_t)s->data_pages << MD_PAGE_SHIFT, prot,
                                    s->file_page) != 0) return -1;
    }
    return 0;
}

/* Recovery from a fault (halt_on_error=0): a file page of its own, zeroed,
 * shown at the guard; it never goes back to the pool (nor does the
 * slot), and the VMA stays one.  A fork child does not copy it: there the
 * page is a guard again, and an access opens it anew. */
static int nonlinear_open_page(uint32_t page)
{
    uint32_t fp;
    bool fresh;
    if (md_fp_take_pages(&fp, 1, &fresh) != 0) return -1;
    uintptr_t addr = md_page_addr(page);
    if (md_nonlinear_rfp(addr, MD_PAGE, PROT_READ | PROT_WRITE, fp) != 0) {
        md_fp_put_loose(fp);
        return -1;
    }
    if (!fresh) memset((void *)addr, 0, MD_PAGE);
    return 0;
}

/* The heap file's holes read as zeros: a page no block ever wrote is one,
 * and the leak scan need not read it (a read of a hole would give it a
 * page of memory).  SEEK_DATA and SEEK_HOLE count swapped-out pages as
 * data.  A slot whose file pages are not one run (realloc moves) is asked
 * about one page at a time; a shared page of compact mode is not asked. */
static long nonlinear_file_extent(const struct md_slot *s, uint32_t page, uint32_t n)
{
    if (s->win_hi || !(s->flags & (SLOT_F_HAS_FILE | SLOT_F_MIXED)) || n == 0 || !md_heap_fd_ok())
        return 0;
    if (s->flags & SLOT_F_MIXED) n = 1;
    off_t at = (off_t)file_of(s, page) << MD_PAGE_SHIFT;
    off_t end = at + ((off_t)n << MD_PAGE_SHIFT);
    off_t data = lseek(md_heap.fd, at, SEEK_DATA);
    if (data < 0) return errno == ENXIO ? -(long)n : 0;
    if (data > at) return -(long)(((data < end ? data : end) - at) >> MD_PAGE_SHIFT);
    off_t hole = lseek(md_heap.fd, at, SEEK_HOLE);
    if (hole <= at) return 0;
    return (long)(((hole < end ? hole : end) - at) >> MD_PAGE_SHIFT);
}

const struct md_backend md_backend_nonlinear MEMDBG_HIDDEN = {
    .name = "nonlinear",
    .probe = nonlinear_probe,
    .map_arena = nonlinear_map_arena,
    .map_tail = nonlinear_map_tail,
    .guard_range = nonlinear_guard_range,
    .commit = nonlinear_commit,
    .release = nonlinear_release,
    .needs_file = true,
    .fork_prepare = nonlinear_fork_prepare,
    .after_fork = nonlinear_after_fork,
    .move_pages = nonlinear_move_pages,
    .take_window = md_compact_take,
    .window_below = md_compact_below,
    .open_page = nonlinear_open_page,
    .protect_many = md_protect_nonlinear_many,
    .window_above = md_compact_above,
    .file_extent = nonlinear_file_extent,
    /* Nothing slow is left to hand over: no memory is returned (runs are
     * recycled) and a recycled page needs no zeroing.  A helper's
     * remap_file_pages calls would only compete for the mmap lock, and its
     * CPU for TLB shootdowns (guest bench: 57-90 us per pair with it, 39-56
     * without). */
};
