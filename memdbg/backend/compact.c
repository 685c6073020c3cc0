/* SPDX-License-Identifier: MIT */
/* Compact mode of the nonlinear backend (compact=1): small
 * blocks share file pages.  A file page is cut into chunks of one size
 * class; each block gets a chunk, seen through a virtual page of its own
 * that is followed by a guard page (a 2-page slot, as any small block).
 * The block sits at its chunk's end, the chunk's other bytes are its
 * padding (the slot's window, see struct md_slot).  Chunk 0 ends at the
 * page end, so its block ends against the guard page; the others keep a
 * 16-byte redzone after the block, checked at free.
 *
 * Free makes the block's virtual page a guard at once (a use-after-free
 * faults, page-exact), and the chunk's bytes go to a NEW virtual page,
 * mapped in the same remap_file_pages(MAP_VECTOR) call, which waits in a
 * per-class cache of pre-mapped slots for the next malloc.  So a
 * malloc/free pair costs one kernel entry (the free), memory is the chunks
 * of live blocks, and the quarantine costs address space and a slot
 * record, not memory.  compact_defer=N queues the frees' entries and
 * sends them N frees at a time (a use-after-free is then caught only once
 * the batch is sent).  Kernels without MAP_VECTOR get one call per entry.
 *
 * What a compact block does not catch at the access, unlike a block with
 * a page of its own: an overflow of a block that is not in chunk 0 stays
 * in the shared page (its redzone, the next chunk), found when the block
 * (or, past the redzone, its neighbour) is freed; reads of the neighbours'
 * bytes are not found at all.
 *
 * Called with the heap lock held.  An immediate free's call and a refill's
 * call are made without it (md_nonlinear_send_unlocked): the slots they
 * map are READY and counted in reserved[], not in the cache yet, and the
 * freed block is not in the quarantine FIFO yet.  compact_defer's batch
 * is sent with the lock held, once per N frees: the order of its entries
 * against every other change of the mapping rests on it. */
#include "backend/backend.h"
#include "compact.h"
#include "nonlinear_abi.h"
#include "nonlinear_pool.h"
#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define REDZONE 16
static const uint16_t chunk_size[] = { 32,  48,  64,  80,  96,  112, 128, 160,  192,  224, 256,
                                       320, 384, 448, 512, 640, 768, 896, 1024, 1360, 2048 };
#define NCLS (sizeof chunk_size / sizeof *chunk_size)
#define CACHE_MAX 64   /* pre-mapped slots kept per class */
#define REFILL 32      /* slots one refill maps (one call) */
#ifdef MD_COMPACT_POPULATE   /* experiment: the call faults new pages in */
#define VECTOR_NONBLOCK 0
#else
#define VECTOR_NONBLOCK MAP_NONBLOCK
#endif

struct cpage {            /* per file page */
    uint64_t free[2];     /* chunk i not in use: bit i */
    uint32_t next;        /* next page of the class with a free chunk, + 1 */
    uint8_t cls;          /* class + 1; 0: not a compact page */
    uint8_t listed;       /* in its class's list of pages with a free chunk */
};
static struct cpage *cpages;          /* file page -> record */
static uint32_t partial[NCLS];        /* first page with a free chunk, + 1 */
static uint32_t cache[NCLS][CACHE_MAX], ncache[NCLS];
static uint32_t reserved[NCLS];       /* cache places promised to pending maps */
static bool active, have_vector;

/* Entries waiting for the kernel (compact_defer, or one free's pair);
 * pend_slot names the slot a map entry prepares (0 for a guard). */
#define PEND_MAX MD_RFP_VECTOR_MAX
static struct md_rfp_entry pend[PEND_MAX];
static uint32_t pend_slot[PEND_MAX];
/* a guard's chunk given back before the guard is sent: fp * 128 + idx + 1 */
static uint32_t pend_chunk[PEND_MAX];
static uint32_t npend, pend_frees;
static bool warned_guard;
/* This thread's call in flight without the heap lock: class + 1 and the
 * number of slots it maps (fork child: the only such call that will end). */
static MEMDBG_TLS uint32_t sending_cls, sending_n;

static uint32_t per_page(uint32_t cls) { return (uint32_t)(MD_PAGE / chunk_size[cls]); }

void md_compact_init(void)
{
    if (!md_opt.compact) return;
    cpages = md_reserve((size_t)md_heap.total_pages * sizeof *cpages, "compact pages");
    /* The documented query: 0 only where the kernel knows MAP_VECTOR. */
    have_vector = !md_opt.nonlinear_emulation &&
                  syscall(SYS_remap_file_pages, 0UL, 0UL, 0UL, 0UL, (unsigned long)(MAP_CHGPROT | MAP_VECTOR)) == 0;
    active = true;
}

/* Sends entries [0, n) in order; returns how many were done (the next
 * one failed).  EINTR comes only with a fatal signal pending. */
static uint32_t send(const struct md_rfp_entry *e, uint32_t n)
{
    uint32_t done = 0;
    while (done < n) {
        if (have_vector) {
            uint32_t k = n - done < MD_RFP_VECTOR_MAX ? n - done : MD_RFP_VECTOR_MAX;
            long r = syscall(SYS_remap_file_pages, e + done, (unsigned long)k, 0UL, 0UL,
                             (unsigned long)(MAP_VECTOR | MAP_CHGPROT | VECTOR_NONBLOCK));
            if (r > 0) { done += (uint32_t)r; continue; }
            if (errno == EINTR) continue;
            return done;
        }
        if (md_nonlinear_rfp((uintptr_t)e[done].addr, (size_t)e[done].size, (int)e[done].prot,
                             (size_t)e[done].pgoff) != 0)
            return done;
        done++;
    }
    return done;
}

static int take_chunk(uint32_t cls, uint32_t *fp, uint32_t *idx)
{
    if (!partial[cls]) {
        bool fresh;
        uint32_t p;
        if (md_fp_take_pages(&p, 1, &fresh) != 0) return -1;
        struct cpage *c = &cpages[p];
        uint32_t n = per_page(cls);
        c->free[0] = n >= 64 ? ~0ull : (1ull << n) - 1;
        c->free[1] = n >= 128 ? ~0ull : n > 64 ? (1ull << (n - 64)) - 1 : 0;
        c->cls = (uint8_t)(cls + 1);
        c->next = 0;
        c->listed = 1;
        partial[cls] = p + 1;
    }
    uint32_t p = partial[cls] - 1;
    struct cpage *c = &cpages[p];
    if (!c->free[0] && !c->free[1]) {   /* its last free chunk was taken back (chunk_unfree) */
        partial[cls] = c->next;
        c->listed = 0;
        return take_chunk(cls, fp, idx);
    }
    int w = c->free[0] ? 0 : 1;
    uint32_t i = (uint32_t)__builtin_ctzll(c->free[w]);
    c->free[w] &= c->free[w] - 1;
    if (!c->free[0] && !c->free[1]) {
        partial[cls] = c->next;
        c->listed = 0;
    }
    *fp = p;
    *idx = i + 64 * (uint32_t)w;
    return 0;
}

/* The chunk's old virtual page must be a guard already (or be made one by
 * an entry sent before any that maps the chunk again). */
static void put_chunk(uint32_t fp, uint32_t idx)
{
    struct cpage *c = &cpages[fp];
    c->free[idx / 64] |= 1ull << (idx % 64);
    if (!c->listed) {
        c->listed = 1;
        c->next = partial[c->cls - 1];
        partial[c->cls - 1] = fp + 1;
    }
}

/* A chunk given back too early: its old page's guard failed. */
static void chunk_unfree(uint32_t code)
{
    uint32_t fp = (code - 1) / 128, idx = (code - 1) % 128;
    cpages[fp].free[idx / 64] &= ~(1ull << (idx % 64));
}

static uint32_t chunk_of(const struct md_slot *s)
{
    return (uint32_t)((MD_PAGE - s->win_hi) / chunk_size[cpages[s->file_page].cls - 1]);
}

/* The live block in the chunk just below s's (chunk index + 1, lower
 * addresses) of the same file page, or 0.  No chunk-to-slot map is kept
 * (it would cost memory per page for an error path): the slots are
 * scanned, only when a report needs it. */
uint32_t md_compact_below(const struct md_slot *s)
{
    if (!active || !s->win_hi) return 0;
    uint32_t fp = s->file_page, want = chunk_of(s) + 1;
    if (want >= per_page(cpages[fp].cls - 1)) return 0;
    for (uint32_t id = 1; id <= md_heap.nslots; id++) {
        const struct md_slot *n = &md_heap.slots[id];
        if (n->state == MD_SLOT_LIVE && n->win_hi && n->file_page == fp && chunk_of(n) == want) return id;
    }
    return 0;
}

/* The live block whose chunk lies just above s's in their file page (the
 * chunk of index one less): a write a few bytes below its start lands in
 * s's redzone. */
uint32_t md_compact_above(const struct md_slot *s)
{
    if (!active || !s->win_hi) return 0;
    uint32_t fp = s->file_page, idx = chunk_of(s);
    if (idx == 0) return 0;
    for (uint32_t id = 1; id <= md_heap.nslots; id++) {
        const struct md_slot *n = &md_heap.slots[id];
        if (n->state == MD_SLOT_LIVE && n->win_hi && n->file_page == fp && chunk_of(n) == idx - 1) return id;
    }
    return 0;
}

/* A slot of 1 data page + guard whose data page is to show chunk idx of
 * file page fp; 0 when address space is out. */
static uint32_t new_slot(uint32_t cls, uint32_t fp, uint32_t idx, struct md_rfp_entry *e)
{
    uint32_t id = md_slot_get(2, false);
    if (!id) return 0;
    struct md_slot *s = &md_heap.slots[id];
    s->data_pages = 1;
    s->file_page = fp;
    s->win_hi = (uint16_t)(MD_PAGE - idx * chunk_size[cls]);
    s->win_lo = (uint16_t)(s->win_hi - chunk_size[cls]);
    s->win_tail = idx ? REDZONE : 0;
    s->flags &= (uint8_t)~(SLOT_F_FRESH | SLOT_F_PADDED | SLOT_F_HAS_FILE | SLOT_F_MIXED);
    s->state = MD_SLOT_READY;
    e->addr = md_page_addr(md_slot_data_page(s));
    e->size = MD_PAGE;
    e->pgoff = fp;
    e->prot = PROT_READ | PROT_WRITE;
    e->flags = 0;
    return id;
}

/* A prepared slot whose map entry failed: address space back, and the
 * chunk unless it is still shown elsewhere (its old page's guard failed). */
static void drop_slot_keep_chunk(uint32_t id, bool chunk_free)
{
    struct md_slot *s = &md_heap.slots[id];
    if (chunk_free) put_chunk(s->file_page, chunk_of(s));
    s->data_pages = 0;
    s->win_hi = s->win_lo = 0;
    s->win_tail = 0;
    md_free_list_push(id);
}

static void drop_slot(uint32_t id) { drop_slot_keep_chunk(id, true); }

/* A freed block's guard failed (the kernel's ENOMEM): its page still
 * shows its chunk, so the chunk is not given to another block. */
static void guard_failed(void)
{
    if (warned_guard) return;
    warned_guard = true;
    char mem[256];
    struct md_buf b;
    md_warn_begin(&b, mem, sizeof mem);
    md_puts(&b, "remap_file_pages could not guard a freed block (out of memory):\n"
                "    a use-after-free of it is not detected.\n");
    md_warn_end(&b);
}

void md_compact_flush(void)
{
    if (!npend) return;
    uint32_t n = npend;
    npend = 0;
    pend_frees = 0;
    /* An entry that fails does not stop the ones after it: each is
     * another block's guard or another slot's mapping.  A failed guard's
     * chunk stays shown at the freed page: its mapping at a new page
     * (the next entry) is not sent, and it serves no other block. */
    for (uint32_t i = 0; i < n;) {
        uint32_t end = i + send(pend + i, n - i), skip = end;
        if (end < n && !pend_slot[end]) {
            guard_failed();
            if (pend_chunk[end]) chunk_unfree(pend_chunk[end]);
            else if (end + 1 < n && pend_slot[end + 1]) skip = end + 1;
        }
        for (; i <= skip && i < n; i++) {
            uint32_t id = pend_slot[i];
            if (!id) continue;
            uint32_t cls = cpages[md_heap.slots[id].file_page].cls - 1;
            reserved[cls]--;
            if (i < end) cache[cls][ncache[cls]++] = id;
            else drop_slot_keep_chunk(id, i == end);
        }
    }
}

/* reserved[] counts the cache places of maps not yet sent: the entries
 * queued in pend[] and, in a child forked from a signal handler, the call
 * this thread was making (it ends in the child too).  Other threads' calls
 * in flight end only in the parent. */
void md_compact_fork_child(void)
{
    if (!active) return;
    for (uint32_t c = 0; c < NCLS; c++) reserved[c] = 0;
    for (uint32_t i = 0; i < npend; i++)
        if (pend_slot[i]) reserved[cpages[md_heap.slots[pend_slot[i]].file_page].cls - 1]++;
    if (sending_cls) reserved[sending_cls - 1] += sending_n;
}

/* Sends e[0..n) without the heap lock; the nids new slots ids[] of class
 * cls it maps hold cache places (reserved[]) meanwhile.  sending_* covers
 * that share from before it is added until after it is taken off, so a
 * fork from a signal handler in between counts it (md_compact_fork_child). */
static uint32_t send_holding_places(uint32_t cls, const uint32_t *ids, uint32_t nids,
                                    const struct md_rfp_entry *e, uint32_t n)
{
    sending_n = nids;
    sending_cls = nids ? cls + 1 : 0;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    reserved[cls] += nids;
    uint32_t done = md_nonlinear_send_unlocked(ids, nids, e, n, send);
    reserved[cls] -= nids;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    sending_cls = 0;
    return done;
}

/* Maps up to REFILL new slots of the class in one call, without the heap
 * lock (another thread may refill the class meanwhile: reserved[] keeps
 * the cache within CACHE_MAX). */
static void refill(uint32_t cls)
{
    md_compact_flush();   /* deferred maps land in the cache, in order */
    if (ncache[cls]) return;
    struct md_rfp_entry e[REFILL];
    uint32_t ids[REFILL];
    uint32_t n = 0, fp, idx;
    while (n < REFILL && ncache[cls] + reserved[cls] + n < CACHE_MAX && take_chunk(cls, &fp, &idx) == 0) {
        uint32_t id = new_slot(cls, fp, idx, &e[n]);
        if (!id) {
            put_chunk(fp, idx);
            break;
        }
        ids[n++] = id;
    }
    if (!n) return;
    uint32_t done = send_holding_places(cls, ids, n, e, n);
    /* popped in the order taken: chunk 0 of a new page first */
    for (uint32_t i = done; i-- > 0;) cache[cls][ncache[cls]++] = ids[i];
    for (uint32_t i = done; i < n; i++) drop_slot(ids[i]);
}

uint32_t md_compact_take(size_t size, size_t align)
{
    if (!active || size > md_opt.compact_max || align > 256) return 0;
    size_t need = ((size + 15) & ~(size_t)15) + REDZONE + (align > 16 ? align : 0);
    uint32_t cls = 0;
    while (cls < NCLS && chunk_size[cls] < need) cls++;
    if (cls == NCLS) return 0;
    if (!ncache[cls]) refill(cls);
    if (!ncache[cls]) return 0;
    return cache[cls][--ncache[cls]];
}

/* Free: the block's page becomes a guard; its chunk goes to a new slot,
 * mapped in the same call, for the cache (if the cache has room). */
int md_compact_release(struct md_slot *s)
{
    uint32_t fp = s->file_page, idx = chunk_of(s), cls = cpages[fp].cls - 1;
    /* First the new slot: taking address space may guard more of the
     * arena, which sends what is pending (md_compact_flush). */
    struct md_rfp_entry e[2];
    uint32_t id = ncache[cls] + reserved[cls] < CACHE_MAX ? new_slot(cls, fp, idx, &e[1]) : 0;
    e[0] = (struct md_rfp_entry){ .addr = md_page_addr(md_slot_data_page(s)), .size = MD_PAGE,
                                  .prot = PROT_NONE };
    uint32_t n = id ? 2 : 1;
    if (md_opt.compact_defer > 0) {
        if (npend + 2 > PEND_MAX) md_compact_flush();
        pend[npend] = e[0];
        pend_slot[npend] = 0;
        /* The chunk may serve another block only once the guard is sent:
         * refill, its only taker, flushes first. */
        pend_chunk[npend++] = id ? 0 : fp * 128 + idx + 1;
        if (id) {
            pend[npend] = e[1];
            pend_slot[npend++] = id;
            reserved[cls]++;
        } else {
            put_chunk(fp, idx);
        }
        if (++pend_frees >= (uint32_t)md_opt.compact_defer) md_compact_flush();
        return 0;
    }
    /* At once, without the lock. */
    uint32_t done = send_holding_places(cls, &id, id ? 1 : 0, e, n);
    if (id) {
        if (done == 2) {
            cache[cls][ncache[cls]++] = id;
        } else {
            /* a chunk still shown at the freed page serves no one */
            drop_slot_keep_chunk(id, done == 1);
        }
    } else if (done == 1) {
        put_chunk(fp, idx);
    }
    if (done == 0) guard_failed();
    return done ? 0 : -1;
}
