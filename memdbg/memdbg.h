/* Internal interface shared by the memdbg core files and the preload layer.
 * Nothing here is exported from libmemdbg.so except the MEMDBG_API symbols. */
#ifndef MEMDBG_H
#define MEMDBG_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <pthread.h>
#include <setjmp.h>
#include <sys/types.h>

#define MEMDBG_HIDDEN __attribute__((visibility("hidden")))
#define MEMDBG_API __attribute__((visibility("default")))
/* Thread-locals must not go through __tls_get_addr, which can call malloc. */
#define MEMDBG_TLS __thread __attribute__((tls_model("initial-exec")))

/* The arena is managed in 4 KiB pages (x86_64 / aarch64-4K kernels). */
#define MD_PAGE ((size_t)4096)
#define MD_PAGE_SHIFT 12

#define MD_MAX_FRAMES 64

/* ---- options (options.c) ---- */
enum md_backend_id { MD_BACKEND_AUTO, MD_BACKEND_NONLINEAR, MD_BACKEND_GUARD, MD_BACKEND_MPROTECT };

struct md_options {
    int backend;                 /* enum md_backend_id */
    int protect_below;           /* guard page before the block instead of after */
    size_t alignment;            /* minimum alignment of malloc'd blocks */
    size_t quarantine_bytes;     /* address space kept inaccessible after free */
    int malloc_fill_byte;        /* -1: do not fill */
    size_t max_malloc_fill_size; /* fill at most this many bytes of a new block */
    int free_fill_byte;          /* -1: do not fill */
    int detect_leaks;
    int exitcode;
    int abort_on_error;
    int halt_on_error;
    char log_path[512];          /* empty: stderr */
    int malloc_context_size;     /* backtrace depth */
    int verbosity;
    int print_stats;
    int background_thread;       /* accepted, no effect: per-thread slot caches replaced the helper thread */
    int free_batch;              /* guards of freed blocks installed N at a time (1: at once) */
    int fast_unwind_on_malloc;   /* malloc/free stacks by frame pointers instead of libunwind */
    int stack_memo;              /* 0: unwind every malloc/free stack (no per-thread memo) */
    int nonlinear_emulation;     /* test aid: nonlinear backend through mmap */
    size_t arena_size;           /* virtual size of the heap mapping */
    int allow_malloc_0;          /* 0: malloc(0) returns NULL */
    int symbolize;
    int check_at_exit;           /* verify padding of live blocks at exit */
    int recycle_pages;           /* keep freed small blocks' pages for their slot's next block */
    int compact;                 /* nonlinear: small blocks share file pages (compact.c) */
    size_t compact_max;          /* largest block placed compactly */
    int compact_defer;           /* >0: guard freed compact blocks in batches of this many */
    int quarantine_set;          /* quarantine size given by the user */
    char suppressions[512];      /* LSan-style suppressions file (leak:PATTERN lines); empty: none */
};
extern struct md_options md_opt MEMDBG_HIDDEN;
void md_options_init(void) MEMDBG_HIDDEN;

/* ---- formatting / output without stdio or malloc (out.c) ---- */
struct md_buf { char *p; size_t len, cap; int fd; };
void md_buf_init(struct md_buf *b, char *mem, size_t cap, int fd) MEMDBG_HIDDEN;
void md_puts(struct md_buf *b, const char *s) MEMDBG_HIDDEN;
void md_putc(struct md_buf *b, char c) MEMDBG_HIDDEN;
void md_putu(struct md_buf *b, unsigned long long v) MEMDBG_HIDDEN;
void md_puti(struct md_buf *b, long long v) MEMDBG_HIDDEN;
void md_putx(struct md_buf *b, unsigned long long v) MEMDBG_HIDDEN; /* 0x... */
void md_flush(struct md_buf *b) MEMDBG_HIDDEN;
void md_write_all(int fd, const char *s, size_t n) MEMDBG_HIDDEN;
void md_die_msg(const char *a, const char *b, const char *c) MEMDBG_HIDDEN; /* early fatal */
void md_warn3(const char *a, const char *b, size_t blen, const char *c) MEMDBG_HIDDEN; /* early warning */
size_t md_strlen(const char *s) MEMDBG_HIDDEN;
/* ---- where reports go (log.c) ---- */
int md_report_fd(void) MEMDBG_HIDDEN;        /* stderr or log_path.PID, opened lazily */
void md_save_stderr(void) MEMDBG_HIDDEN;
void md_report_fd_reset(void) MEMDBG_HIDDEN;  /* fork child: its own log file */

/* ---- who is running (runtime.c) ---- */
extern MEMDBG_TLS int md_in_runtime MEMDBG_HIDDEN; /* re-entrancy guard */
/* Set while memdbg reads live blocks with plain loads (leak scan, padding
 * check at exit): a fault in the arena jumps there instead of being
 * reported, since the program may have made its own block unreadable. */
extern MEMDBG_TLS sigjmp_buf *md_block_read_jmp MEMDBG_HIDDEN;
uint32_t md_thread_id(void) MEMDBG_HIDDEN;          /* first call: the thread is recorded */
/* A thread as the leak scan finds it: recorded at its first md_thread_id. */
struct md_thread_rec { uintptr_t tp; uintptr_t sp_hint; pid_t tid; };
const struct md_thread_rec *md_thread_of_tid(pid_t tid) MEMDBG_HIDDEN;   /* NULL: never recorded */
uintptr_t md_thread_pointer(void) MEMDBG_HIDDEN;

/* ---- internal allocator (internal_alloc.c) ---- */
void *md_reserve(size_t bytes, const char *what) MEMDBG_HIDDEN; /* guarded, lazily backed */
void *md_internal_alloc(size_t size, size_t align) MEMDBG_HIDDEN;
void *md_internal_realloc(void *p, size_t size) MEMDBG_HIDDEN;
size_t md_internal_usable(const void *p) MEMDBG_HIDDEN;
bool md_is_internal(const void *p) MEMDBG_HIDDEN;
void md_internal_init(void) MEMDBG_HIDDEN;
void md_internal_fork_child(void) MEMDBG_HIDDEN;
bool md_is_metadata(uintptr_t lo, uintptr_t hi) MEMDBG_HIDDEN;

/* ---- stacks (stacktrace.c, stackmemo.c, stackdepot.c, symbolize.c) ---- */
#define MD_MEMO_SLOTS 48
/* A malloc/free stack, captured without the heap lock (md_stack_capture)
 * and turned into a depot id with it (md_stack_id). */
struct md_stack {
    const uintptr_t *frames;   /* buf, or the depot's copy on a memo hit */
    int n;
    uint32_t id;               /* depot id once known */
    /* what a memo entry needs (stackmemo.c) */
    bool memoizable;
    bool needs_bp;             /* the key includes the program's RBP */
    int max;
    uintptr_t entry_ra, ra, sp, bp;
    int nslots;
    uintptr_t slot_addr[MD_MEMO_SLOTS], slot_val[MD_MEMO_SLOTS];
    uintptr_t buf[MD_MAX_FRAMES];
};
void md_stack_capture(struct md_stack *st, int max) MEMDBG_HIDDEN;
uint32_t md_stack_id(struct md_stack *st) MEMDBG_HIDDEN;   /* with the heap lock */
int md_unwind_recording(struct md_stack *st, int max) MEMDBG_HIDDEN;
int md_capture_stack(uintptr_t *frames, int max) MEMDBG_HIDDEN;
int md_capture_stack_from_ucontext(void *uc, uintptr_t *frames, int max) MEMDBG_HIDDEN;
/* Around every libunwind call (unwind_fds.c): false when libunwind must not
 * run (this thread is already unwinding: a signal handler interrupted it). */
bool md_unwind_begin(void) MEMDBG_HIDDEN;
void md_unwind_end(void) MEMDBG_HIDDEN;
void md_unwind_fds_init(void *libunwind_function) MEMDBG_HIDDEN;
/* The program installed a signal handler (signals.c): unwinds block signals. */
void md_unwind_note_program_handler(void) MEMDBG_HIDDEN;
void md_stacktrace_init(void) MEMDBG_HIDDEN;
uint32_t md_depot_put(const uintptr_t *frames, int n) MEMDBG_HIDDEN;
int md_depot_get(uint32_t id, const uintptr_t **frames) MEMDBG_HIDDEN;
void md_depot_init(void) MEMDBG_HIDDEN;
/* first_exact: frames[0] is a faulting pc, not a return address. */
void md_print_stack(struct md_buf *b, const uintptr_t *frames, int n, bool first_exact) MEMDBG_HIDDEN;
/* Function name of frame (for SUMMARY lines); writes "" if unknown. */
void md_frame_location(struct md_buf *b, uintptr_t pc, bool is_return_addr) MEMDBG_HIDDEN;

/* Modules ever loaded, for naming frames after dlclose (modules.c). */
struct md_module {
    uintptr_t start, end;      /* lowest and highest address of its PT_LOAD segments */
    uintptr_t bias;            /* load bias: (module+0xOFF) offsets are pc - bias */
    uint32_t added, removed;   /* loaded during epochs [added, removed); removed 0: still loaded */
    uint32_t name_off, seen;
    void *sym;                 /* the symbolizer's state for it (symbolize.c) */
};
void md_modules_refresh(void) MEMDBG_HIDDEN;   /* rescan if the loader's counts changed */
uint32_t md_modules_epoch(void) MEMDBG_HIDDEN;
const struct md_module *md_module_find(uintptr_t pc, uint32_t epoch) MEMDBG_HIDDEN;
const char *md_module_path(const struct md_module *m) MEMDBG_HIDDEN;
void md_module_set_sym(const struct md_module *m, void *sym) MEMDBG_HIDDEN;
/* The module epoch a depot stack was stored in (the current one for
 * frames that are not the depot's). */
uint32_t md_depot_epoch_of(const uintptr_t *frames) MEMDBG_HIDDEN;

/* ---- arena, slots, classes (arena.c) ---- */
enum md_slot_state { SLOT_UNUSED = 0, SLOT_LIVE, SLOT_QUARANTINED, SLOT_FREE, SLOT_READY };
enum md_kind { KIND_MALLOC = 0, KIND_NEW, KIND_NEW_ARRAY };
enum md_dealloc { DEALLOC_FREE = 0, DEALLOC_DELETE, DEALLOC_DELETE_ARRAY, DEALLOC_REALLOC };

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
    uint16_t win_lo, win_hi;
};
#define SLOT_F_UNGUARDED 1  /* mprotect backend past vm.max_map_count: no guard */
#define SLOT_F_HAS_FILE  2  /* nonlinear: owns a file run */
#define SLOT_F_FRESH     4  /* data pages are known to read as zero */
/* nonlinear: the call mapping its data pages is being made without the
 * heap lock (fork may find them not mapped yet in the parent) */
#define SLOT_F_SENDING 8
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
    size_t size;               /* arena bytes */
    uint32_t total_pages;
    uint32_t bump_page;        /* first never-used arena page */
    uint32_t guarded_frontier; /* arena pages below this are guarded up front */
    uint32_t guarding_to;      /* where the guard_range call under way ends (fork from a handler) */
    uint32_t *page_slot;       /* arena page -> slot id (0 = none) */
    struct md_slot *slots;     /* slot id -> record; id 0 unused */
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
static inline bool md_in_arena(uintptr_t a) {
    return a - md_heap.base < md_heap.size;
}
/* page_slot[] entries of address space back in the free pool may still
 * name a slot record that was reused elsewhere since: check the range. */
static inline struct md_slot *md_slot_of_addr(uintptr_t a) {
    if (!md_in_arena(a)) return 0;
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
/* Quarantine (quarantine.c) */
void md_quarantine_push(uint32_t id) MEMDBG_HIDDEN;
bool md_quarantine_evict_one(void) MEMDBG_HIDDEN;
/* A slot not in use (evicted from the quarantine, or never used): its
 * address range goes back to the common pool (arena.c). */
void md_free_list_push(uint32_t id) MEMDBG_HIDDEN;

/* ---- backends ---- */
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
};
extern const struct md_backend md_backend_nonlinear MEMDBG_HIDDEN;
extern const struct md_backend md_backend_guard MEMDBG_HIDDEN;
extern const struct md_backend md_backend_mprotect MEMDBG_HIDDEN;
void md_backend_select(void) MEMDBG_HIDDEN;
int md_count_vmas(uintptr_t start, uintptr_t end) MEMDBG_HIDDEN; /* /proc/self/maps */
int md_memfd(const char *name) MEMDBG_HIDDEN;   /* at a high number, close-on-exec */
void md_fd_identity(int fd, uint64_t *dev, uint64_t *ino) MEMDBG_HIDDEN;
bool md_fd_is(int fd, uint64_t dev, uint64_t ino) MEMDBG_HIDDEN; /* still that file? */
bool md_heap_fd_ok(void) MEMDBG_HIDDEN;        /* md_heap.fd is still the heap's memfd */

/* ---- core heap (heap.c) ---- */
void md_ensure_init(void) MEMDBG_HIDDEN;
void *md_alloc(size_t size, size_t align, int kind, bool zero) MEMDBG_HIDDEN;
void md_free(void *p, int dealloc) MEMDBG_HIDDEN;
void *md_realloc(void *p, size_t size) MEMDBG_HIDDEN;
size_t md_usable_size(const void *p) MEMDBG_HIDDEN;
bool md_check_padding(struct md_slot *s, uintptr_t *bad) MEMDBG_HIDDEN;
uint32_t md_overflow_from_below(const struct md_slot *s, uintptr_t *bad) MEMDBG_HIDDEN;
#define MD_PAD_BYTE 0xab

/* ---- per-thread caches of ready slots, deferred guards (slot_cache.c) ---- */
#define MD_READY_CLASSES 16          /* classes whose data-page count is exact */
/* A committed slot of data_pages pages for this thread (state SLOT_READY),
 * or NULL: not a cached size, or none could be made.  Without the lock. */
struct md_slot *md_cache_take(uint32_t data_pages) MEMDBG_HIDDEN;
/* free_batch > 1: keeps freed slot id for a later batch of guards; false
 * when the caller must guard it now.  Without the lock. */
bool md_cache_defer_guard(uint32_t id) MEMDBG_HIDDEN;
void md_cache_flush_guards(void) MEMDBG_HIDDEN;   /* this thread's deferred guards, now */
void md_cache_fork_child(bool may_lock) MEMDBG_HIDDEN;
void md_memo_fork_child(void) MEMDBG_HIDDEN;
/* The end of a block's life after free (heap.c): guards over the data
 * pages of the freed slots ids[0..n) (whose state is SLOT_QUARANTINED),
 * memory back, then the quarantine.  Without the lock. */
void md_blocks_guard(const uint32_t *ids, uint32_t n) MEMDBG_HIDDEN;

/* ---- many ranges per kernel entry (madvise_vec.c) ---- */
struct iovec;
/* madvise(advice) over n ranges, through process_madvise when the kernel
 * takes it; ok[i] (may be NULL) per range.  Returns the failed count. */
size_t md_madvise_ranges(const struct iovec *iov, size_t n, int advice, bool *ok) MEMDBG_HIDDEN;
/* Whether md_madvise_ranges(advice) may still use one call for many
 * ranges (false once the kernel refused it). */
bool md_madvise_vectored(int advice) MEMDBG_HIDDEN;

/* ---- reports (report.c, fault.c, leaks.c) ---- */
enum md_error {
    ERR_OVERFLOW, ERR_UNDERFLOW, ERR_UAF, ERR_DOUBLE_FREE, ERR_BAD_FREE,
    ERR_MISMATCH, ERR_UNKNOWN_CRASH,
};
struct md_error_info {
    int kind;
    uintptr_t addr;
    int access;                 /* 0 unknown, 1 READ, 2 WRITE */
    int access_size;            /* 0 unknown */
    const char *how;            /* extra line, e.g. "detected at free()" */
    const uintptr_t *frames; int nframes;  /* current stack */
    struct md_slot *slot;       /* the block it is about (may be NULL) */
    int alloc_kind, dealloc_kind;  /* for mismatch */
    uintptr_t pc, sp, bp;
};
void md_report_error(const struct md_error_info *e) MEMDBG_HIDDEN;
void md_error_finish(bool fatal) MEMDBG_HIDDEN;   /* exit/abort per options */
void md_fault_init(void) MEMDBG_HIDDEN;
void md_leak_check_and_exit_report(void) MEMDBG_HIDDEN;
void md_fork_init(void) MEMDBG_HIDDEN;
/* fork child: fn(may_lock) after the heap is the child's (fork.c) */
void md_fork_set_caches_child(void (*fn)(bool may_lock)) MEMDBG_HIDDEN;
int md_decode_access_size(const unsigned char *pc) MEMDBG_HIDDEN;

/* ---- reports on memdbg's own stack; fork (altstack.c, report.c) ---- */
void md_print_stats(void) MEMDBG_HIDDEN;            /* print_stats=1, at exit (stats.c) */
void md_report_init(void) MEMDBG_HIDDEN;           /* report buffer and stack, at start */
void md_report_stack_init(void) MEMDBG_HIDDEN;
uintptr_t md_report_stack_top(void) MEMDBG_HIDDEN;  /* 0: none */
bool md_on_report_stack(uintptr_t sp) MEMDBG_HIDDEN;
void md_call_on_stack(void (*fn)(void *), void *arg, uintptr_t top) MEMDBG_HIDDEN;
/* fn(arg) on memdbg's large report stack, holding the report lock, with the
 * program's asynchronous signals blocked; a plain call when this thread is
 * already in a report.  For anything that unwinds or symbolizes. */
void md_with_report_stack(void (*fn)(void *), void *arg) MEMDBG_HIDDEN;
bool md_in_report(void) MEMDBG_HIDDEN;             /* this thread holds the report lock */
/* A fault inside a report: flush it, say so, finish as for an error. */
void md_report_fault_in_report(uintptr_t addr, uintptr_t pc) MEMDBG_HIDDEN __attribute__((noreturn));
/* Child side of fork(): frees the report lock (and the signal table's
 * lock) that a thread of the parent, absent in the child, may hold.
 * Idempotent; registered with pthread_atfork by md_fault_init. */
void md_report_fork_child(void) MEMDBG_HIDDEN;

/* ---- leak check: roots, suppressions, LSan interface, deferred frees
 *      (leaks.c, leak_roots.c, suppressions.c, lsan_api.c, deferred_free.c) ---- */
int md_leak_check_now(bool final) MEMDBG_HIDDEN;       /* 1: leaks found (final: exits then) */
void md_scan_roots_prepare(void) MEMDBG_HIDDEN;        /* before taking the heap lock */
size_t md_scan_roots(void (*consider)(uintptr_t)) MEMDBG_HIDDEN; /* heap lock held */
void md_scan_roots_set_sp(uintptr_t sp) MEMDBG_HIDDEN;  /* scan from sp (0: current) */
/* Stores the callee-saved registers in regs (6 words or more, in the
 * caller's frame) and sets sp to the stack pointer below them, so that a
 * stack scan from sp sees pointers the program kept only in registers. */
#if defined(__x86_64__)
#define MD_SPILL_REGISTERS(regs, sp)                                                                   \
    __asm__ volatile("mov %%rbx, 0(%1)\n\tmov %%rbp, 8(%1)\n\tmov %%r12, 16(%1)\n\tmov %%r13, 24(%1)\n\t" \
                     "mov %%r14, 32(%1)\n\tmov %%r15, 40(%1)\n\tmov %%rsp, %0"                          \
                     : "=r"(sp) : "r"(regs) : "memory")
#else
#define MD_SPILL_REGISTERS(regs, sp) do { __builtin_unwind_init(); (sp) = (uintptr_t)&(regs)[0]; } while (0)
#endif
const char *md_module_of(uintptr_t pc) MEMDBG_HIDDEN;   /* path of the loaded object, after a scan */
void md_scan_foreign(uintptr_t lo, uintptr_t hi, void (*consider)(uintptr_t)) MEMDBG_HIDDEN;
bool md_allocated_by_ldso(uint32_t stack) MEMDBG_HIDDEN;
void md_leak_root_region(const void *p, size_t size, bool add) MEMDBG_HIDDEN;
bool md_have_suppressions(void) MEMDBG_HIDDEN;
int md_suppression_for(uint32_t stack) MEMDBG_HIDDEN;  /* index, -1 none */
void md_suppression_hit(int k, size_t bytes) MEMDBG_HIDDEN;
void md_print_suppressions_used(struct md_buf *b) MEMDBG_HIDDEN;
/* Ignore marks (alloc/leak_ignore.c) */
extern int md_leak_ignore_on MEMDBG_HIDDEN;            /* __lsan_disable/ignore_object were used */
void md_leak_note_alloc(uint32_t id) MEMDBG_HIDDEN;
bool md_leak_ignored(uint32_t id) MEMDBG_HIDDEN;
void md_leak_marks_on(void) MEMDBG_HIDDEN;              /* heap lock held: marks kept from now */
void md_leak_ignore_slot(uint32_t id) MEMDBG_HIDDEN;    /* heap lock held */
void md_leak_disable_thread(void) MEMDBG_HIDDEN;        /* __lsan_disable */
bool md_leak_enable_thread(void) MEMDBG_HIDDEN;         /* __lsan_enable; false: unmatched */
/* Every allocation (heap lock held): keeps the slot's ignore mark right. */
static inline void md_leak_alloc_hook(uint32_t id) {
    if (__atomic_load_n(&md_leak_ignore_on, __ATOMIC_ACQUIRE)) md_leak_note_alloc(id);
}
void md_defer_free(void *p, int dealloc) MEMDBG_HIDDEN;   /* free while md_in_runtime */
void md_run_deferred_frees(void) MEMDBG_HIDDEN;
void md_deferred_foreach(void (*fn)(uintptr_t)) MEMDBG_HIDDEN;
extern int md_deferred_pending MEMDBG_HIDDEN;
static inline void md_drain_deferred_frees(void) {
    if (__atomic_load_n(&md_deferred_pending, __ATOMIC_RELAXED)) md_run_deferred_frees();
}

#endif
