/* SPDX-License-Identifier: MIT */
/* The heap's state: slots, the arena and its pool, the quarantine, the
 * heap lock, the padding check, and the interface every backend fills. */
#ifndef MEMDBG_CORE_H
#define MEMDBG_CORE_H

#include "base/base.h"
#include "base/options.h"
#include "sys/sys.h"

/* ---- arena, slots, classes (arena.c) ---- */
enum md_slot_state { MD_SLOT_UNUSED = 0, MD_SLOT_LIVE, MD_SLOT_QUARANTINED, MD_SLOT_FREE, MD_SLOT_READY };
enum md_kind { MD_KIND_MALLOC = 0, MD_KIND_NEW, MD_KIND_NEW_ARRAY };
enum md_dealloc { MD_DEALLOC_FREE = 0, MD_DEALLOC_DELETE, MD_DEALLOC_DELETE_ARRAY, MD_DEALLOC_REALLOC };

struct md_slot {
    uintptr_t user;        /* user pointer of the current (or last) block */
    size_t size;           /* its requested size */
    uint32_t first_page;   /* arena page index of the slot's first page */
    uint32_t pages;        /* slot capacity in pages, guard page included */
    uint32_t data_pages;   /* pages made accessible for the block */
    uint32_t next;         /* link: class free list or quarantine FIFO */
    uint32_t alloc_stack, free_stack;
    uint32_t alloc_tid, free_tid;
    uint32_t file_page;    /* nonlinear: first page of the file run it owns */
    uint32_t pad_lo, pad_hi; /* SLOT_F_PADDED: bytes not yet padding (offsets from the first data page) */
    uint8_t state, kind, cls, flags;
    /* malloc is writing the padding, outside the heap lock: a check of
     * live blocks (at exit, while other threads run) must skip it */
    uint8_t filling;
    /* win_hi != 0: the block owns only bytes [win_lo, win_hi) of its one
     * data page (the rest belongs to other blocks sharing the file page,
     * compact.c): it is placed to end win_tail bytes before win_hi, and
     * its padding is checked and filled only within the window. */
    uint8_t win_tail;
    /* halt_on_error=0: a fault opened one of its pages for good, so its
     * address range never goes back to the pool (arena.c); set under the
     * heap lock.  A field of its own: every flag bit is taken. */
    uint8_t opened;
    /* operator new with std::align_val_t: log2 of the alignment asked,
     * plus one (0: none), for the check of aligned delete */
    uint8_t new_align_order;
    /* a block with a mapping of its own, outside the arena (direct.c):
     * first_page, pages and data_pages mean nothing */
    uint8_t direct;
    uint16_t win_lo, win_hi;
};
#define SLOT_F_UNGUARDED 1  /* mprotect backend past vm.max_map_count: no guard */
#define SLOT_F_HAS_FILE  2  /* nonlinear: owns a file run */
#define SLOT_F_FRESH     4  /* data pages are known to read as zero */
/* nonlinear: the call mapping its data pages is being made without the
 * heap lock (fork may find them not mapped yet in the parent) */
#define SLOT_F_SENDING 8
/* memdbg_freeze: the block's data pages are read-only (set and cleared
 * under the heap lock, with the backend's protect_many) */
#define SLOT_F_FROZEN 16
#define SLOT_F_KEPT 32           /* recycle_pages: freed pages still in the file (guarded) */
/* The data pages hold MD_PAD_BYTE everywhere outside [pad_lo, pad_hi): set
 * by the heap before release (padding verified) and by the nonlinear
 * backend's commit (a recycled run), so malloc re-fills only that range. */
#define SLOT_F_PADDED 64
#define SLOT_F_MIXED 128         /* nonlinear: file pages listed per page, not one run */

struct md_backend;
struct md_heap {
    uint32_t lock;             /* owner's token | MD_LOCK_WAITERS; 0: free (md_heap_lock) */
    int initialized;
    int fd;                    /* nonlinear: memfd of the heap (-1: private anonymous arena) */
    uint64_t fd_dev, fd_ino;   /* what fd must still be before it is used (md_fd_is) */
    uintptr_t base;            /* arena start */
    size_t size;               /* arena bytes now (less than max_size once its tail went back) */
    uint32_t total_pages;
    /* The arena's size at start: its metadata (indexed by page) and the
     * heap memfd keep this size; only the address range above size is
     * given back (md_arena_give_back) and may be taken again. */
    size_t max_size;
    uint32_t bump_page;        /* first never-used arena page */
    uint32_t guarded_frontier; /* arena pages below this are guarded up front */
    uint32_t guarding_to;      /* where the guard_range call under way ends (fork from a handler) */
    uint32_t *page_slot;       /* arena page -> slot id (0 = none) */
    /* arena page -> slots placed over it so far (saturates at 255): above
     * 1, a report on it may name a later block than the pointer's */
    uint8_t *page_uses;
    struct md_slot *slots;     /* slot id -> record; id 0 unused */
    void *frozen_room;         /* where the frozen-block table goes (frozen.c) */
    uint32_t nslots, max_slots;
    uint32_t *class_free;      /* class -> first slot kept with its pages (recycle_pages) */
    uint32_t *class_free_unguarded;   /* class -> first free unguarded slot (mprotect) */
    uint32_t q_head, q_tail;   /* quarantine FIFO */
    size_t q_bytes;
    const struct md_backend *backend;
    char backend_reason[512];
    /* statistics */
    size_t live_blocks, live_bytes, peak_live_blocks, peak_live_bytes;
    size_t total_allocs, total_frees;
    size_t errors_reported;
    size_t ready_hits, ready_misses;   /* small mallocs served by a thread's slot cache (racy counts) */
    size_t cache_refills;              /* batches of ready slots committed */
    size_t realloc_moves, realloc_moved_pages; /* reallocs done by moving pages */
    size_t memo_hits, memo_misses;     /* stack captures served by the memo (racy counts) */
    /* mprotect accounting */
    long vma_estimate, max_map_count;
    int vma_warned, unguarded_mode;
    /* our own code range, to drop allocator frames from stacks */
    uintptr_t self_start, self_end;
};
extern struct md_heap md_heap MEMDBG_HIDDEN;

/* The heap lock (heap_lock.c): a futex word holding its owner's token,
 * taken and given back with one atomic instruction each, so a thread can
 * tell whether it holds it even from a signal handler that interrupted
 * its own lock or unlock: fork() from such a handler must not wait for a
 * lock the interrupted call holds (fork.c).  The token is a number handed
 * out once per thread (in its TLS), not the kernel thread id: a fork child
 * keeps its parent thread's token, and no later thread can reuse it. */
#define MD_LOCK_WAITERS 0x80000000u
extern MEMDBG_TLS uint32_t md_lock_token MEMDBG_HIDDEN;   /* 0: none yet */
uint32_t md_lock_token_new(void) MEMDBG_HIDDEN;
void md_heap_lock_wait(uint32_t token) MEMDBG_HIDDEN;
void md_heap_lock_wake(void) MEMDBG_HIDDEN;
static inline uint32_t md_token(void)
{
    uint32_t t = md_lock_token;
    return t ? t : md_lock_token_new();
}
static inline bool md_heap_trylock(void)
{
    uint32_t unlocked = 0;
    return __atomic_compare_exchange_n(&md_heap.lock, &unlocked, md_token(), false,
                                       __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}
static inline void md_heap_lock(void)
{
    if (!md_heap_trylock()) md_heap_lock_wait(md_token());
}
static inline void md_heap_unlock(void)
{
    if (__atomic_exchange_n(&md_heap.lock, 0, __ATOMIC_RELEASE) & MD_LOCK_WAITERS)
        md_heap_lock_wake();
}
static inline bool md_heap_lock_mine(void)
{
    return (__atomic_load_n(&md_heap.lock, __ATOMIC_RELAXED) & ~MD_LOCK_WAITERS) == md_token();
}

#define MD_NCLASSES 128
uint32_t md_class_of(uint32_t pages) MEMDBG_HIDDEN;
uint32_t md_class_pages(uint32_t cls) MEMDBG_HIDDEN;
uint32_t md_slot_get(uint32_t pages_needed, bool unguarded) MEMDBG_HIDDEN; /* 0 = no space */
void md_arena_init(void) MEMDBG_HIDDEN;
/* With the heap lock, under an address-space limit: unmap at least bytes
 * of the arena's never-used tail (with evict, ending the quarantine of the
 * oldest blocks to make one if needed) so that a block of its own mapping
 * fits; false, with nothing unmapped, when the tail cannot be that long. */
bool md_arena_give_back(size_t bytes, bool evict) MEMDBG_HIDDEN;
/* Address space after the arena may be free again (a block's own mapping
 * went): the next block that needs room tries to map the arena's end. */
void md_arena_tail_retry(void) MEMDBG_HIDDEN;
static inline bool md_in_arena(uintptr_t a) {
    return a - md_heap.base < md_heap.size;
}
/* Blocks with a mapping of their own (direct.c): the one whose mapping
 * (guard page included) holds a, or NULL. */
extern uint32_t md_direct_count MEMDBG_HIDDEN;
struct md_slot *md_direct_slot_of(uintptr_t a) MEMDBG_HIDDEN;
/* With the heap lock: a mapping for a block of size bytes aligned to
 * align (0: none) against its guard page, and a slot record for it
 * (state MD_SLOT_READY); 0 (errno ENOMEM) when the kernel refuses it. */
uint32_t md_direct_map(size_t size, size_t align, uintptr_t *user) MEMDBG_HIDDEN;
/* With the heap lock, at free: its memory goes back, its range faults. */
void md_direct_retire(struct md_slot *s) MEMDBG_HIDDEN;
/* With the heap lock: live block s of its own mapping grown to size bytes
 * (aligned to align) by moving its pages (mremap) instead of copying them,
 * its bytes kept; s->user is the new address (the old range is unmapped);
 * returns it, or 0 with nothing changed (protect_below: always). */
uintptr_t md_direct_grow(struct md_slot *s, size_t size, size_t align) MEMDBG_HIDDEN;
/* The freed block whose own mapping held a and was unmapped (under an
 * address-space limit), while its record still describes it; NULL if
 * none.  Only a fault on unmapped memory may take it for a's block: the
 * range may hold another mapping by now. */
struct md_slot *md_direct_gone_slot_of(uintptr_t a) MEMDBG_HIDDEN;
/* a is in the arena or in a block's own mapping */
static inline bool md_in_heap(uintptr_t a) {
    return md_in_arena(a) || (md_direct_count && md_direct_slot_of(a));
}
/* page_slot[] entries of address space back in the free pool may still
 * name a slot record that was reused elsewhere since: check the range. */
static inline struct md_slot *md_slot_of_addr(uintptr_t a) {
    if (!md_in_arena(a)) return md_direct_count ? md_direct_slot_of(a) : 0;
    uint32_t page = (uint32_t)((a - md_heap.base) >> MD_PAGE_SHIFT);
    uint32_t id = md_heap.page_slot[page];
    if (!id) return 0;
    struct md_slot *s = &md_heap.slots[id];
    return page - s->first_page < s->pages ? s : 0;
}
static inline uintptr_t md_page_addr(uint32_t page) {
    return md_heap.base + ((uintptr_t)page << MD_PAGE_SHIFT);
}
/* First data page of a slot: data sits against the guard page, which is the
 * slot's last page (overflow mode) or its first page (protect_below). */
static inline uint32_t md_slot_data_page(const struct md_slot *s) {
    return md_opt.protect_below ? s->first_page + 1
                                : s->first_page + s->pages - 1 - s->data_pages;
}
/* The bytes a block may lie in: its data pages, or its window of a shared
 * page (compact mode).  The placement (heap.c place_block), the padding
 * fill and the padding check all use this. */
static inline uintptr_t md_slot_data_lo(const struct md_slot *s) {
    return md_page_addr(md_slot_data_page(s)) + (s->win_hi ? s->win_lo : 0);
}
static inline uintptr_t md_slot_data_hi(const struct md_slot *s) {
    uintptr_t page = md_page_addr(md_slot_data_page(s));
    return s->win_hi ? page + s->win_hi : page + ((uintptr_t)s->data_pages << MD_PAGE_SHIFT);
}
/* The block addr is about (blame.c): the one it lies in, else the nearest
 * block on either side of the pages around it (an underflow of a block
 * that starts at its page lands in the guard page of the slot below); a
 * freed block counts.  NULL: no block near. */
struct md_slot *md_blame(uintptr_t addr) MEMDBG_HIDDEN;
/* Quarantine (quarantine.c) */
void md_quarantine_push(uint32_t id) MEMDBG_HIDDEN;
bool md_quarantine_evict_one(void) MEMDBG_HIDDEN;
/* A slot not in use (evicted from the quarantine, or never used): its
 * address range goes back to the common pool (arena.c). */
void md_free_list_push(uint32_t id) MEMDBG_HIDDEN;

/* ---- the backend interface: the allocator reaches a backend only
 *      through md_heap.backend (backends in backend/) ---- */
struct md_backend {
    const char *name;
    /* Probe: 0 if usable, else fills why (errno text). */
    int (*probe)(char *why, size_t whylen);
    bool needs_file;                               /* heap is a memfd (else private anonymous) */
    int (*map_arena)(void);                        /* map the heap at md_heap.base */
    int (*guard_range)(uint32_t page, uint32_t n);  /* make never-used pages guards */
    /* guard_range guards never-used pages this far ahead of the bump
     * pointer, rounded (0: 16384 pages, 64 MiB).  Where each guarded page
     * is a page-table entry that fork copies, a short step keeps fork
     * from paying for address space no block has used yet. */
    uint32_t guard_ahead_pages;
    int (*commit)(struct md_slot *s, uint32_t page, uint32_t n); /* make RW */
    int (*release)(struct md_slot *s, uint32_t page, uint32_t n); /* make guards */
    /* Give freed pages' memory back (NULL: release already did). */
    int (*drop)(uint32_t page, uint32_t n);
    /* Optional batch forms (NULL: the heap loops over commit / release).
     * commit_many makes the data pages (md_slot_data_page, data_pages) of
     * n slots accessible, resident too where that is cheaper than the
     * first write's fault, and sets ok[i] per slot; release_many makes the
     * data pages of n freed slots guards (as release).  Called with the
     * heap lock held unless page_ops_unlocked. */
    void (*commit_many)(struct md_slot *const *slots, uint32_t n, bool *ok);
    void (*release_many)(struct md_slot *const *slots, uint32_t n);
    /* commit, release, drop and their batch forms touch only the page
     * tables of the slots named (no heap metadata): the heap calls them
     * without its lock, so threads do their kernel work in parallel. */
    bool page_ops_unlocked;
    /* committed slots stay so in a fork child (private arena): threads
     * may keep caches of ready slots */
    bool slot_cache;
    /* commit may add pages after a block's committed ones in its slot
     * (realloc in place grows with protect_below) */
    bool commit_extends;
    /* fork of a MAP_SHARED heap (NULL: the arena is private, the kernel
     * copies it on write).  fork_prepare runs in the parent with the heap
     * lock held and returns a descriptor of the child's copy (-1: failed);
     * after_fork maps it in the child.  mid_call: the fork comes from a
     * signal handler that interrupted this thread's malloc or free, which
     * holds the lock and will finish its work in both processes (fork.c). */
    int (*fork_prepare)(bool mid_call);
    int (*after_fork)(int copy_fd, bool mid_call);
    /* realloc without copying (NULL: not supported): show the file pages of
     * from's data pages [from_page, from_page+n) at to's pages [to_page,
     * to_page+n), give to's other data pages memory, and make from's data
     * pages guards (its other memory is given back).  -1: nothing changed. */
    int (*move_pages)(struct md_slot *from, uint32_t from_page, struct md_slot *to, uint32_t to_page,
                      uint32_t n);
    /* With the lock held (NULL: none): a slot already mapped for a block of
     * `size` bytes aligned to `align`, with a window (see struct md_slot),
     * or 0 for the ordinary path.  release() retires such slots too. */
    uint32_t (*take_window)(size_t size, size_t align);
    /* With the lock held (NULL: none): the live block whose window lies
     * just below window slot s's in their shared page (0: none).  Its
     * overflow past its redzone lands in s's head padding. */
    uint32_t (*window_below)(const struct md_slot *s);
    /* halt_on_error=0, with the lock held (NULL: a fault stops the
     * program): arena page `page` (a guard) becomes readable and writable
     * memory of its own for good, so the faulting access completes. */
    int (*open_page)(uint32_t page);
    /* With the lock held (NULL: the backend cannot freeze): make the data
     * pages of n live slots read-only (ro) or writable again, in as few
     * kernel calls as the kernel allows.  Returns how many slots, from the
     * first, were changed (the others are as they were), with errno set
     * when that is fewer than n (ENOMEM: a VMA or memory limit). */
    uint32_t (*protect_many)(struct md_slot *const *slots, uint32_t n, bool ro);
    /* The same for the live block just above (0: none): its underflow
     * lands in s's redzone. */
    uint32_t (*window_above)(const struct md_slot *s);
    /* For the leak scan of a big block (NULL: it reads every page): of
     * the n data pages of live slot s from `page` on, how many at the
     * start certainly read as zeros (returned negative), or hold data
     * (positive); 0 when it cannot tell. */
    long (*file_extent)(const struct md_slot *s, uint32_t page, uint32_t n);
    /* Map pages [page, page+n) past the arena's end again, as map_arena
     * maps them, after md_arena_give_back unmapped them; -1 when the range
     * is taken or refused (NULL: the arena does not grow back). */
    int (*map_tail)(uint32_t page, uint32_t n);
};
bool md_heap_fd_ok(void) MEMDBG_HIDDEN;        /* md_heap.fd is still the heap's memfd */


/* ---- frozen blocks (frozen.c): who froze each one, by slot id ---- */
/* gen: the memdbg_freeze_many or thaw_many call that changed the block
 * last, so that a call that fails part way undoes its own changes only */
struct md_frozen_by { uint32_t stack, tid, gen; };
/* The record of slot id (NULL: no block was ever frozen). */
struct md_frozen_by *md_frozen_by(uint32_t id) MEMDBG_HIDDEN;
bool md_frozen_reserve(void) MEMDBG_HIDDEN;   /* heap lock held: the table, at the first freeze */
bool md_frozen_ever(void) MEMDBG_HIDDEN;   /* a block was frozen once (the table exists) */
/* With the heap lock: freeze (ro) or thaw live slots through the backend
 * and set their SLOT_F_FROZEN to match; returns how many from the first
 * changed (errno for the next; ENOTSUP: the backend has no protect_many). */
uint32_t md_frozen_set(struct md_slot *const *slots, uint32_t n, bool ro) MEMDBG_HIDDEN;
/* addr is in the data pages of s, and s is frozen (a write there faults) */
bool md_frozen_covers(const struct md_slot *s, uintptr_t addr) MEMDBG_HIDDEN;

/* ---- padding (padding.c) ---- */
#define MD_PAD_BYTE 0xab
bool md_check_padding(struct md_slot *s, uintptr_t *bad) MEMDBG_HIDDEN;
size_t md_padding_damage(const struct md_slot *s, uintptr_t bad, uintptr_t *lo) MEMDBG_HIDDEN;
uint32_t md_overflow_from_below(const struct md_slot *s, uintptr_t *bad) MEMDBG_HIDDEN;
uint32_t md_underflow_from_above(const struct md_slot *s, uintptr_t *lo, size_t n) MEMDBG_HIDDEN;
/* Damage [lo, lo+n) after compact block s runs to the end of its window:
 * the write may have gone on into bytes no padding check reads. */
bool md_damage_reaches_window_end(const struct md_slot *s, uintptr_t lo, size_t n) MEMDBG_HIDDEN;

/* Before dying of a signal: leave unused heap and metadata out of the core (core_dump.c). */
void md_core_trim(void) MEMDBG_HIDDEN;

#endif
