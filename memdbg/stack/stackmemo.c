/* SPDX-License-Identifier: MIT */
/* Memo of malloc/free stacks.  Unwinding with libunwind is the largest
 * user-space cost of a malloc/free pair (about a quarter of it in the TCG
 * guest), yet most calls repeat: the same call site, at the same stack
 * depth, from the same callers.  Each thread keeps a small table from
 * (return address into the program, its RSP and RBP at the call, memdbg's
 * entry point) to the depot id of the stack unwound there, with the stack
 * words that unwinding loaded return addresses and frame pointers from
 * (stacktrace.c).  When they still hold the same values, the stack is the
 * same, and capturing it costs a few loads.
 *
 * One call site can have several stacks at the same depth: an allocation
 * wrapper (bash's xmalloc, a C++ operator new) is entered from many
 * callers, so its key repeats while the words above it differ.  The table
 * is set-associative: the ways of a set hold different sites or different
 * stacks (variants) of one site, each checked by its own words, replaced
 * least recently used.  Recording a variant costs an unwind several times
 * dearer than libunwind's cached one, so each set has a credit that
 * recordings spend and hits earn back: a set whose variants never repeat
 * (more live variants than ways, or stacks that differ every time) soon
 * stops recording and costs what it did without the memo, and gets a
 * little credit back now and then to try again.
 *
 * The program's frame is found through memdbg's own frame pointers (all of
 * libmemdbg is built with them), so no unwinding is needed for the key. */
#include "stack/stack.h"
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#define MEMO_SETS 32             /* per thread: 256 entries, up to about 160 KiB */
#define MEMO_WAYS 8
#define MEMO_AFTER_MISSES 64     /* short-lived threads never get a table */
#define MEMO_RECORD_COST 3       /* credit a recording spends; a hit earns 1 */
#define MEMO_CREDIT_START 12
#define MEMO_CREDIT_MAX 64
#define MEMO_REFILL_AFTER 256    /* misses without credit that earn one recording */

/* All-zero is the state of a new table: every field below starts at 0,
 * so a table's pages become resident only as its sets and words are used
 * (a thread with a few call sites touches a few pages, not 160 KiB), and
 * an exited thread's table is emptied by giving its pages back. */
enum memo_entry_state { MEMO_ENTRY_EMPTY, MEMO_ENTRY_SEEN, MEMO_ENTRY_RECORDED };
struct memo_entry {              /* what a lookup reads: 48 bytes */
    uintptr_t entry_ra, ra, sp, bp;
    uint32_t id;                 /* depot id (MEMO_ENTRY_RECORDED) */
    uint32_t used;               /* the set's clock at the last hit or record */
    uint16_t max, nslots;
    uint8_t state;
    bool needs_bp;
};
struct memo_words {              /* a recorded entry's stack words: 576 bytes */
    uint32_t off[MD_MEMO_SLOTS];         /* stack word at sp + off[i] ... */
    uintptr_t val[MD_MEMO_SLOTS];        /* ... held val[i] */
};
struct memo_set {
    uint32_t clock;
    int16_t credit_spent;        /* credit is MEMO_CREDIT_START - credit_spent */
    uint16_t starved;            /* misses since the credit ran out */
    struct memo_entry way[MEMO_WAYS];
};
struct memo_table {
    struct memo_set set[MEMO_SETS];                  /* 12.5 KiB, read by lookups */
    struct memo_words words[MEMO_SETS][MEMO_WAYS];   /* read when a site matches */
    struct memo_table *next_free;
};

static MEMDBG_TLS struct memo_table *tls_memo;
static MEMDBG_TLS uint32_t tls_misses;
/* Set by the thread's key destructor: frees after it (glibc's own
 * thread-exit frees) must not take another table, which no destructor
 * would give back. */
static MEMDBG_TLS bool tls_memo_done;
/* Tables of exited threads, for new threads (spinlock: never waits long,
 * and a fork child that finds it taken just allocates). */
static struct memo_table *free_tables;
static int free_lock;
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static bool in_self(uintptr_t pc)
{
    return pc - md_heap.self_start < md_heap.self_end - md_heap.self_start;
}

/* Back to all zeros: the whole pages inside the table are given back
 * (they read as zeros when next touched), the partial ones cleared. */
static void table_clear(struct memo_table *t)
{
    uintptr_t lo = (uintptr_t)t, hi = (uintptr_t)&t->next_free;
    uintptr_t plo = (lo + MD_PAGE - 1) & ~(uintptr_t)(MD_PAGE - 1), phi = hi & ~(uintptr_t)(MD_PAGE - 1);
    if (phi <= plo || madvise((void *)plo, phi - plo, MADV_DONTNEED) != 0) {
        memset(t, 0, hi - lo);
        return;
    }
    memset(t, 0, plo - lo);
    memset((void *)phi, 0, hi - phi);
}

static void table_exit(void *p)
{
    struct memo_table *t = p;
    tls_memo = 0;
    tls_memo_done = true;
    table_clear(t);
    if (__atomic_exchange_n(&free_lock, 1, __ATOMIC_ACQUIRE)) return;   /* busy: keep it lost */
    t->next_free = free_tables;
    free_tables = t;
    __atomic_store_n(&free_lock, 0, __ATOMIC_RELEASE);
}

static void make_key(void) { pthread_key_create(&exit_key, table_exit); }

/* In a fork child no other thread can hold the lock of the free tables
 * (a holder in this thread, under a handler's fork, only finishes its
 * list update). */
void md_memo_fork_child(void) { free_lock = 0; }

static struct memo_table *table_get(void)
{
    if (tls_memo) return tls_memo;
    if (tls_memo_done || ++tls_misses < MEMO_AFTER_MISSES) return 0;
    struct memo_table *t = 0;
    if (!__atomic_exchange_n(&free_lock, 1, __ATOMIC_ACQUIRE)) {
        t = free_tables;
        if (t) free_tables = t->next_free;
        __atomic_store_n(&free_lock, 0, __ATOMIC_RELEASE);
    }
    /* A new table is zero (the internal pool is fresh anonymous memory,
     * never reused); a returned one was cleared by table_clear(). */
    if (!t) t = md_internal_alloc(sizeof *t, MD_PAGE);
    if (!t) return 0;
    pthread_once(&key_once, make_key);
    pthread_setspecific(exit_key, t);
    tls_memo = t;
    return t;
}

static struct memo_set *set_for(struct memo_table *t, const struct md_stack *st)
{
    uint64_t h = (st->ra ^ (st->sp >> 3)) * 0x9e3779b97f4a7c15ull;
    return &t->set[h >> 59];   /* 32 sets */
}

static bool same_site(const struct memo_entry *e, const struct md_stack *st)
{
    return e->state != MEMO_ENTRY_EMPTY && e->ra == st->ra && e->sp == st->sp &&
           e->entry_ra == st->entry_ra;
}

/* A recorded stack of this site that still holds: every word it was
 * unwound from has the value it had. */
static bool variant_holds(const struct memo_entry *e, const struct memo_words *wd,
                          const struct md_stack *st, int max)
{
    if (e->state != MEMO_ENTRY_RECORDED || e->max != max || (e->needs_bp && e->bp != st->bp))
        return false;
    for (int i = 0; i < e->nslots; i++)
        if (*(const volatile uintptr_t *)(st->sp + wd->off[i]) != wd->val[i]) return false;
    return true;
}

static struct memo_words *words_of(struct memo_table *t, const struct memo_set *s,
                                   const struct memo_entry *e)
{
    return &t->words[s - t->set][e - s->way];
}

static int credit(const struct memo_set *s) { return MEMO_CREDIT_START - s->credit_spent; }

/* Where a new site or variant goes: an empty way, else the least recently
 * used one.  A site's SEEN entry (keep) is taken by its first recording. */
static struct memo_entry *victim(struct memo_set *s, const struct md_stack *st, bool keep_seen)
{
    struct memo_entry *lru = &s->way[0];
    for (int w = 0; w < MEMO_WAYS; w++) {
        struct memo_entry *e = &s->way[w];
        if (e->state == MEMO_ENTRY_EMPTY) return e;
        if (keep_seen && e->state == MEMO_ENTRY_SEEN && same_site(e, st)) return e;
        if ((int32_t)(e->used - lru->used) < 0) lru = e;
    }
    return lru;
}

/* The program's frame, through memdbg's frame pointers: the first return
 * address outside libmemdbg, the stack pointer just above it and the RBP
 * saved below it; entry_ra is the last return address inside memdbg (the
 * public entry point, frame #0 of the stack). */
static bool find_program_frame(struct md_stack *st)
{
    const uintptr_t *fp = __builtin_frame_address(0);
    uintptr_t lo = (uintptr_t)fp;
    for (int i = 0; i < 12; i++) {
        uintptr_t f = (uintptr_t)fp;
        if (f < lo || f - lo > (1u << 20) || (f & 7)) return false;
        uintptr_t ra = fp[1];
        if (!in_self(ra)) {
            if (i == 0) return false;
            st->ra = ra;
            st->sp = f + 16;
            st->bp = fp[0];
            return true;
        }
        st->entry_ra = ra;
        lo = f;
        fp = (const uintptr_t *)fp[0];
    }
    return false;
}

/* Highest address of this thread's stack (0: unknown), for the frame
 * pointer walk, which must not read past it. */
static MEMDBG_TLS uintptr_t tls_stack_lo, tls_stack_hi;
static MEMDBG_TLS int tls_stack_known;

static uintptr_t stack_hi(void)
{
    if (!tls_stack_known) {
        tls_stack_known = 1;
        pthread_attr_t a;
        void *lo;
        size_t size;
        if (pthread_getattr_np(pthread_self(), &a) == 0) {   /* its allocations: internal pool */
            if (pthread_attr_getstack(&a, &lo, &size) == 0) {
                tls_stack_lo = (uintptr_t)lo;
                tls_stack_hi = (uintptr_t)lo + size;
            }
            pthread_attr_destroy(&a);
        }
    }
    return tls_stack_hi;
}

/* Only when the code runs on the thread's own stack: on a signal
 * alternate stack or a coroutine's stack (often a heap block itself)
 * the region between the stack pointer and the thread's stack top holds
 * heap blocks too. */
bool md_on_this_stack(const void *p)
{
    uintptr_t a = (uintptr_t)p, sp = (uintptr_t)__builtin_frame_address(0);
    if (a < sp) return false;   /* not in a live frame */
    md_in_runtime++;   /* pthread_getattr_np allocates: from the internal pool */
    uintptr_t hi = stack_hi();
    md_in_runtime--;
    return sp >= tls_stack_lo && sp < hi && a < hi;
}

/* fast_unwind_on_malloc: the program's frames by their frame pointers, as
 * ASan's fast unwinder does: the walk stops at the first saved RBP that is
 * not above the previous one, inside this thread's stack and 8-aligned.
 * Code built without frame pointers (most of Debian) uses RBP as a plain
 * register, so the stack stops early or skips callers there; then
 * libunwind (the default) gives the real one. */
static bool unwind_frame_pointers(struct md_stack *st, int max)
{
    uintptr_t hi = stack_hi();
    if (!hi) return false;
    int n = 0;
    st->buf[n++] = st->entry_ra;
    if (n < max) st->buf[n++] = st->ra;
    uintptr_t fp = st->bp, prev = st->sp - 16;
    while (n < max && fp > prev && fp <= hi - 16 && !(fp & 7)) {
        const uintptr_t *f = (const uintptr_t *)fp;
        if (f[1] < MD_PAGE || f[1] - st->sp < hi - st->sp) break;   /* not code: RBP was data */
        st->buf[n++] = f[1];
        prev = fp;
        fp = f[0];
    }
    st->n = n;
    return true;
}

void md_stack_capture(struct md_stack *st, int max)
{
    st->id = 0;
    st->n = 0;
    st->frames = st->buf;
    st->memoizable = false;
    if (max <= 0) return;
    if (max > MD_MAX_FRAMES) max = MD_MAX_FRAMES;
    if (!find_program_frame(st)) {
        st->n = md_capture_stack(st->buf, max);
        return;
    }
    if (md_opt.fast_unwind_on_malloc && unwind_frame_pointers(st, max)) return;
    /* A site's first miss leaves a MEMO_ENTRY_SEEN entry (libunwind's cached
     * unw_backtrace); a later miss there records the stack (the recording
     * unwind, several times dearer), if the set has credit. */
    struct memo_table *t = md_opt.stack_memo ? table_get() : 0;
    if (t) {
        struct memo_set *s = set_for(t, st);
        bool known = false;
        for (int w = 0; w < MEMO_WAYS; w++) {
            struct memo_entry *e = &s->way[w];
            if (!same_site(e, st)) continue;
            known = true;
            if (variant_holds(e, words_of(t, s, e), st, max)) {
                md_heap.memo_hits++;
                e->used = ++s->clock;
                if (credit(s) < MEMO_CREDIT_MAX) s->credit_spent--;
                st->id = e->id;
                st->n = md_depot_get(e->id, &st->frames);
                return;
            }
        }
        md_heap.memo_misses++;
        if (!known) {
            struct memo_entry *e = victim(s, st, false);
            e->state = MEMO_ENTRY_SEEN;
            e->ra = st->ra;
            e->sp = st->sp;
            e->entry_ra = st->entry_ra;
            e->used = ++s->clock;
        } else if (credit(s) >= MEMO_RECORD_COST) {
            s->credit_spent += MEMO_RECORD_COST;
            st->max = max;
            st->n = md_unwind_recording(st, max);
            if (st->n > 0) return;
        } else if (++s->starved >= MEMO_REFILL_AFTER) {
            s->starved = 0;
            s->credit_spent -= MEMO_RECORD_COST;
        }
    }
    st->memoizable = false;
    st->n = md_capture_stack(st->buf, max);
}

uint32_t md_stack_id(struct md_stack *st)
{
    if (st->id || st->n <= 0) return st->id;
    st->id = md_depot_put(st->frames, st->n);
    if (!st->id || !st->memoizable) return st->id;
    struct memo_table *t = tls_memo;
    if (!t) return st->id;
    int nslots = st->nslots;
    for (int i = 0; i < nslots; i++)   /* words of the program's frames, above its RSP */
        if (st->slot_addr[i] < st->sp || st->slot_addr[i] - st->sp > UINT32_MAX) return st->id;
    struct memo_set *s = set_for(t, st);
    struct memo_entry *e = victim(s, st, true);
    /* A signal handler on this thread may look the set up meanwhile: it
     * must not see a half-written entry as recorded. */
    e->state = MEMO_ENTRY_EMPTY;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    e->entry_ra = st->entry_ra;
    e->ra = st->ra;
    e->sp = st->sp;
    e->bp = st->bp;
    e->max = (uint16_t)st->max;
    e->needs_bp = st->needs_bp;
    e->nslots = (uint16_t)nslots;
    struct memo_words *wd = words_of(t, s, e);
    for (int i = 0; i < nslots; i++) {
        wd->off[i] = (uint32_t)(st->slot_addr[i] - st->sp);
        wd->val[i] = st->slot_val[i];
    }
    e->id = st->id;
    e->used = ++s->clock;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    e->state = MEMO_ENTRY_RECORDED;
    return st->id;
}
