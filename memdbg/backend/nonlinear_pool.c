/* SPDX-License-Identifier: MIT */
/* Pool of the heap file's pages for the nonlinear backend.  Only the file
 * pages of live blocks are in use; a freed block's pages come back here at
 * once (its addresses stay guards in the quarantine) and serve the next
 * block, so memory is bounded by the live data.
 *
 *  - runs: per slot class, runs of the class's data capacity, contiguous in
 *    the file, so a block of that class is mapped with one remap_file_pages
 *    call.  A run remembers where its last block lay (pad_lo/pad_hi): its
 *    padding was verified at free, so the next block only has to re-fill
 *    the bytes the old block covered, not the whole page.
 *  - loose pages: single pages left over when realloc moved part of a block
 *    to a new address.  LIFO, pushed in descending order so that a block's
 *    pages pop out ascending and mostly map with one call.
 *  - bump: never-used file pages (they read as zero).
 * Called with the heap lock held. */
#include "backend/backend.h"
#include "nonlinear_pool.h"

struct run {                 /* indexed by a free run's first file page */
    uint32_t next;           /* next free run of the class + 1 */
    uint32_t pad_lo, pad_hi; /* see md_fp_put_run; pad_hi == 0: unknown */
    uint32_t pages;          /* data pages of the block the history is about */
    uint32_t gen;            /* history is valid only in the generation it was made */
};
static uint32_t gen;                   /* bumped in a fork child: free runs read as zero there */
static uint32_t file_bump;             /* first never-used file page */
static uint32_t run_free[MD_NCLASSES]; /* class -> first free run + 1 */
static struct run *runs;
static uint32_t *loose;                /* stack of single file pages */
static uint32_t *page_files;           /* for the backend: arena page -> file page */
static uint32_t nloose;
static uint32_t total;

void md_fp_init(uint32_t total_pages)
{
    if (runs) return;
    total = total_pages;
    /* one reservation (one set of VMAs), lazily backed */
    size_t rb = (size_t)total_pages * sizeof(struct run);
    size_t pb = (size_t)total_pages * sizeof(uint32_t);
    char *m = md_reserve(rb + 2 * pb, "file pages");
    runs = (struct run *)m;
    loose = (uint32_t *)(m + rb);
    page_files = (uint32_t *)(m + rb + pb);
}

uint32_t *md_fp_page_map(void) { return page_files; }

uint32_t md_fp_extent(void) { return file_bump; }
uint32_t md_fp_loose_count(void) { return nloose; }

int md_fp_take_run(uint32_t cls, uint32_t len, uint32_t *first, struct md_fp_history *h)
{
    uint32_t r = run_free[cls];
    h->pad_hi = 0;
    h->fresh = false;
    if (r) {
        struct run *e = &runs[r - 1];
        run_free[cls] = e->next;
        *first = r - 1;
        if (e->gen == gen) {
            h->pad_lo = e->pad_lo;
            h->pad_hi = e->pad_hi;
            h->pages = e->pages;
        }
        return 0;
    }
    if (len > total - file_bump) return -1;
    *first = file_bump;
    file_bump += len;
    h->fresh = true;
    return 0;
}

uint32_t md_fp_generation(void) { return gen; }

/* pad_hi > pad_lo: the first `pages` pages of the run hold MD_PAD_BYTE in
 * every byte outside [pad_lo, pad_hi) (offsets from the run's start), as
 * they did in generation `seen` (md_fp_generation when the padding was
 * checked: a fork child in between has a copy without the run's pages). */
void md_fp_put_run(uint32_t cls, uint32_t first, uint32_t pad_lo, uint32_t pad_hi, uint32_t pages,
                   uint32_t seen)
{
    struct run *e = &runs[first];
    e->pad_lo = pad_lo;
    e->pad_hi = pad_hi;
    e->pages = pages;
    e->gen = seen;
    e->next = run_free[cls];
    run_free[cls] = first + 1;
}

void md_fp_put_loose(uint32_t page)
{
    loose[nloose++] = page;
}

/* n pages: loose ones while there are any (so they do not accumulate),
 * then never-used ones.  Pages are returned in out[] in mapping order. */
int md_fp_take_pages(uint32_t *out, uint32_t n, bool *fresh)
{
    uint32_t from_loose = n < nloose ? n : nloose;
    if (n - from_loose > total - file_bump) return -1;
    for (uint32_t i = 0; i < from_loose; i++) out[i] = loose[--nloose];
    for (uint32_t i = from_loose; i < n; i++) out[i] = file_bump++;
    *fresh = from_loose == 0;
    return 0;
}

bool md_fp_has_run(uint32_t cls) { return run_free[cls] != 0; }

/* fork child: the copy of the file holds only live blocks' pages, so what
 * free runs remember about their padding is void. */
void md_fp_fork_child(void) { gen++; }
