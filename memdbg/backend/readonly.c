/* SPDX-License-Identifier: MIT */
/* Frozen blocks (memdbg_freeze): a live block's data pages made read-only
 * and writable again, the backends' protect_many.
 *
 * nonlinear: each run of the block's file pages is remapped in place with
 * MAP_CHGPROT and PROT_READ (the VMA's protection minus PROT_WRITE), an
 * entry of the one VMA like a guard: no VMA is added, however many blocks
 * are frozen, and a batch of up to 1024 entries is one MAP_VECTOR call.
 * In compact mode the block's virtual page is what becomes read-only; the
 * other blocks sharing its file page keep their own writable views.
 *
 * guard and mprotect: mprotect(PROT_READ) on the data pages.  On guard the
 * arena is one VMA, so a frozen block splits it: two VMAs more per frozen
 * block (its neighbours are guard pages inside writable VMAs, so frozen
 * blocks never merge).  On mprotect a guarded block's data pages are a
 * VMA of their own already (between PROT_NONE pages): freezing changes its
 * protection and adds none; an unguarded block (past the VMA budget) is
 * merged with its neighbours and costs two.  Past 7/8 of vm.max_map_count
 * a freeze fails with ENOMEM (warned once) instead of letting the program
 * or memdbg meet the limit later. */

#include "backend/backend.h"
#include "nonlinear_abi.h"
#include "nonlinear_pool.h"
#include "compact.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- the VMA budget of mprotect-based freezing ---- */

static bool budget_warned;
static long counted_at;   /* vma_estimate when /proc/self/maps was last counted */

static void warn_budget(void)
{
    char mem[640];
    struct md_buf b;
    md_warn_begin(&b, mem, sizeof mem);
    md_puts(&b, "memdbg_freeze stops at about ");
    md_putu(&b, (unsigned long long)md_heap.vma_estimate);
    md_puts(&b, " VMAs of vm.max_map_count=");
    md_putu(&b, (unsigned long long)md_heap.max_map_count);
    md_puts(&b, " (backend ");
    md_puts(&b, md_heap.backend->name);
    md_puts(&b, ": a frozen block is a VMA of its own); it returns ENOMEM until blocks are\n"
                "    thawed or freed. The nonlinear backend (patched kernel) freezes without VMAs.\n");
    md_warn_end(&b);
}

/* Whether `add` more VMAs fit under 7/8 of vm.max_map_count, leaving the
 * rest to the program.  The estimate counts memdbg's own changes; before
 * refusing, /proc/self/maps is counted again (at most once per 1024
 * VMAs of growth), since the program's own mappings come and go. */
static bool budget_allows(long add)
{
    if (!md_heap.max_map_count) md_heap.max_map_count = md_max_map_count();
    if (!md_heap.vma_estimate) {
        md_heap.vma_estimate = md_count_vmas(0, 0);
        counted_at = md_heap.vma_estimate;
    }
    long limit = md_heap.max_map_count - md_heap.max_map_count / 8;
    long now = __atomic_load_n(&md_heap.vma_estimate, __ATOMIC_RELAXED);
    if (now + add <= limit) return true;
    if (now >= counted_at + 1024 || now < counted_at) {
        int real = md_count_vmas(0, 0);
        if (real > 0) {
            __atomic_store_n(&md_heap.vma_estimate, (long)real, __ATOMIC_RELAXED);
            counted_at = real;
            if (real + add <= limit) return true;
        }
    }
    if (!budget_warned) {
        budget_warned = true;
        warn_budget();
    }
    return false;
}

/* VMAs a frozen slot adds to the arena's: see the top of the file. */
static long vmas_of_frozen(const struct md_slot *s)
{
    if (md_heap.backend == &md_backend_mprotect && !(s->flags & SLOT_F_UNGUARDED)) return 0;
    return 2;
}

uint32_t md_protect_mprotect_many(struct md_slot *const *slots, uint32_t n, bool ro)
{
    for (uint32_t i = 0; i < n; i++) {
        struct md_slot *s = slots[i];
        long vmas = vmas_of_frozen(s);
        if (ro && vmas && !budget_allows(vmas)) {
            errno = ENOMEM;
            return i;
        }
        if (mprotect((void *)md_page_addr(md_slot_data_page(s)), (size_t)s->data_pages << MD_PAGE_SHIFT,
                     ro ? PROT_READ : PROT_READ | PROT_WRITE) != 0)
            return i;   /* ENOMEM: the kernel's own limit, or no memory for the split */
        __atomic_add_fetch(&md_heap.vma_estimate, ro ? vmas : -vmas, __ATOMIC_RELAXED);
    }
    return n;
}

/* ---- nonlinear: MAP_CHGPROT entries of the one VMA ---- */

/* MAP_NONBLOCK: the entries only change the layout, and the next access
 * of each page faults it in again (a read fault per frozen page).  The
 * experiment MD_FREEZE_POPULATE has the call map the pages instead. */
#ifdef MD_FREEZE_POPULATE
#define FREEZE_NONBLOCK 0
#else
#define FREEZE_NONBLOCK MAP_NONBLOCK
#endif

static struct md_rfp_entry entries[MD_RFP_VECTOR_MAX];
static uint32_t entry_slot[MD_RFP_VECTOR_MAX];   /* index in the caller's slots[] */
static int vector_known;                          /* 0 unknown, 1 MAP_VECTOR, -1 none */

/* Sends entries [0, n) in order; returns how many were done. */
static uint32_t send_entries(uint32_t n)
{
    if (!vector_known)
        vector_known = !md_opt.nonlinear_emulation &&
                       syscall(SYS_remap_file_pages, 0UL, 0UL, 0UL, 0UL,
                               (unsigned long)(MAP_CHGPROT | MAP_VECTOR)) == 0 ? 1 : -1;
    uint32_t done = 0;
    while (done < n) {
        if (vector_known > 0) {
            long r = syscall(SYS_remap_file_pages, entries + done, (unsigned long)(n - done), 0UL, 0UL,
                             (unsigned long)(MAP_VECTOR | MAP_CHGPROT | FREEZE_NONBLOCK));
            if (r > 0) { done += (uint32_t)r; continue; }
            if (errno == EINTR) continue;
            return done;
        }
        const struct md_rfp_entry *e = &entries[done];
        if (md_nonlinear_rfp((uintptr_t)e->addr, (size_t)e->size, (int)e->prot, (size_t)e->pgoff) != 0)
            return done;
        done++;
    }
    return done;
}

/* Entries [from, to) again with the other protection: a slot whose
 * entries were sent only in part goes back to how it was. */
static void undo_entries(uint32_t from, uint32_t to, int prot)
{
    for (uint32_t i = from; i < to; i++)
        md_nonlinear_rfp((uintptr_t)entries[i].addr, (size_t)entries[i].size, prot, (size_t)entries[i].pgoff);
}

/* A batch of n entries for slots[first..]: returns how many slots were
 * changed whole; a slot changed in part is changed back. */
static uint32_t flush_batch(uint32_t n, uint32_t first_slot, uint32_t nslots, int old_prot)
{
    uint32_t done = send_entries(n);
    if (done == n) return nslots;
    int err = errno;
    uint32_t failed = entry_slot[done];
    uint32_t start = done;
    while (start > 0 && entry_slot[start - 1] == failed) start--;
    undo_entries(start, done, old_prot);
    errno = err;
    return failed - first_slot;
}

uint32_t md_protect_nonlinear_many(struct md_slot *const *slots, uint32_t n, bool ro)
{
    int prot = ro ? PROT_READ : PROT_READ | PROT_WRITE;
    int old_prot = ro ? PROT_READ | PROT_WRITE : PROT_READ;
    const uint32_t *page_file = md_fp_page_map();
    md_compact_flush();   /* compact_defer's entries go first */
    uint32_t nent = 0, batch_first = 0;
    for (uint32_t i = 0; i < n; i++) {
        const struct md_slot *s = slots[i];
        uint32_t d = md_slot_data_page(s);
        /* a slot's entries go in one batch, so a refused batch is undone
         * slot by slot: a block of more than 1024 runs is refused */
        uint32_t runs = 1;
        if (s->flags & SLOT_F_MIXED)
            for (uint32_t k = 1; k < s->data_pages; k++) runs += page_file[d + k] != page_file[d + k - 1] + 1;
        if (runs > MD_RFP_VECTOR_MAX) { errno = ENOMEM; return i; }
        if (nent + runs > MD_RFP_VECTOR_MAX) {
            uint32_t ok = flush_batch(nent, batch_first, i - batch_first, old_prot);
            if (ok < i - batch_first) return batch_first + ok;
            nent = 0;
            batch_first = i;
        }
        for (uint32_t k = 0; k < s->data_pages;) {
            uint32_t fp = (s->flags & SLOT_F_MIXED) ? page_file[d + k] : s->file_page + k, len = 1;
            while ((s->flags & SLOT_F_MIXED) && k + len < s->data_pages && page_file[d + k + len] == fp + len)
                len++;
            if (!(s->flags & SLOT_F_MIXED)) len = s->data_pages;
            entries[nent] = (struct md_rfp_entry){ .addr = md_page_addr(d + k), .size = (uint64_t)len << MD_PAGE_SHIFT,
                                                   .pgoff = fp, .prot = (uint32_t)prot };
            entry_slot[nent++] = i;
            k += len;
        }
    }
    if (nent == 0) return n;
    return batch_first + flush_batch(nent, batch_first, n - batch_first, old_prot);
}
