/* SPDX-License-Identifier: MIT */
/* Per-thread caches of ready slots, and deferred guards.
 *
 * malloc of a small block (1..CACHED_PAGES data pages) takes a slot from
 * its thread's cache: committed and, where the backend can, resident, so
 * the malloc itself makes no system call and takes no page fault.  An
 * empty cache is refilled with a batch: the heap lock only to carve the
 * slots (metadata), then one batch commit without the lock (for the guard
 * backend two process_madvise calls for the whole batch).  Ready slots are
 * fresh addresses, never quarantined ones, so no use-after-free window is
 * shortened.
 *
 * free_batch=N (N > 1): a freed block's guard is installed with N-1 others
 * in one call, so detection of a use-after-free through it is delayed by
 * at most N-1 frees of its thread.  Double frees are still found at once
 * (the block's state changes in free itself).
 *
 * A cache belongs to one thread at a time: it is touched only by its owner
 * (never under the heap lock), so no atomics.  Caches of exited threads
 * (and, in a fork child, of the threads that do not exist there) are
 * adopted by new threads; a fork child guards their deferred blocks. */
#include "alloc/alloc.h"
#include <pthread.h>
#include <string.h>

#define CACHED_PAGES 4          /* blocks of up to 4 data pages (16 KiB) */
#define MAX_FREE_BATCH 256

struct thread_cache {
    struct thread_cache *next;  /* every cache ever made */
    int owned;                  /* a live thread uses it */
    uint32_t n[CACHED_PAGES];
    uint32_t id[CACHED_PAGES][64];
    uint32_t npending;
    uint32_t pending[MAX_FREE_BATCH];
};

static MEMDBG_TLS struct thread_cache *tls_cache;
static struct thread_cache *all_caches;
static int caches_lock;          /* spinlock over all_caches and owned */
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

/* Batch size per class: one-page blocks are the common case. */
static uint32_t depth(uint32_t data_pages) { return data_pages == 1 ? 64 : 16; }

static void spin_lock(void)
{
    while (__atomic_exchange_n(&caches_lock, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(&caches_lock, __ATOMIC_RELAXED)) { }
}
static void spin_unlock(void) { __atomic_store_n(&caches_lock, 0, __ATOMIC_RELEASE); }

static void flush_pending(struct thread_cache *c)
{
    uint32_t n = c->npending;
    c->npending = 0;
    if (n) md_blocks_guard(c->pending, n);
}

static void thread_exit(void *p)
{
    struct thread_cache *c = p;
    md_in_runtime++;
    flush_pending(c);
    md_in_runtime--;
    tls_cache = 0;
    spin_lock();
    c->owned = 0;
    spin_unlock();
}

static void make_key(void) { pthread_key_create(&exit_key, thread_exit); }

static struct thread_cache *cache_get(void)
{
    struct thread_cache *c = tls_cache;
    if (c) return c;
    md_fork_set_caches_child(md_cache_fork_child);   /* before any cache exists */
    spin_lock();
    for (c = all_caches; c && c->owned; c = c->next) { }
    if (c) c->owned = 1;
    spin_unlock();
    if (!c) {
        c = md_internal_alloc(sizeof *c, 64);
        if (!c) return 0;
        memset(c, 0, sizeof *c);
        c->owned = 1;
        spin_lock();
        c->next = all_caches;
        all_caches = c;
        spin_unlock();
    }
    pthread_once(&key_once, make_key);
    pthread_setspecific(exit_key, c);
    tls_cache = c;
    return c;
}

/* Carves a batch of slots under the lock, commits them as a batch, and
 * puts the ones that worked in the cache. */
static void refill(struct thread_cache *c, uint32_t data_pages)
{
    struct md_slot *batch[64];
    bool ok[64];
    uint32_t k = 0, want = depth(data_pages);
    const struct md_backend *be = md_heap.backend;
    md_heap_lock();
    while (k < want) {
        uint32_t id = md_slot_get(data_pages + 1, false);
        if (!id) break;
        struct md_slot *s = &md_heap.slots[id];
        s->state = MD_SLOT_READY;
        s->data_pages = data_pages;
        batch[k++] = s;
    }
    md_heap.cache_refills++;
    /* the kernel work without the lock, where the backend allows it */
    if (be->page_ops_unlocked) md_heap_unlock();
    if (k) {
        if (be->commit_many) {
            be->commit_many(batch, k, ok);
        } else {
            for (uint32_t i = 0; i < k; i++)
                ok[i] = be->commit(batch[i], md_slot_data_page(batch[i]), data_pages) == 0;
        }
    }
    if (be->page_ops_unlocked) md_heap_lock();
    for (uint32_t i = 0; i < k; i++) {
        if (ok[i]) continue;
        batch[i]->data_pages = 0;
        md_free_list_push((uint32_t)(batch[i] - md_heap.slots));
    }
    md_heap_unlock();
    uint32_t *ids = c->id[data_pages - 1];
    for (uint32_t i = 0; i < k; i++)
        if (ok[i]) ids[c->n[data_pages - 1]++] = (uint32_t)(batch[i] - md_heap.slots);
}

struct md_slot *md_cache_take(uint32_t data_pages)
{
    MD_DCHECK(!md_heap_lock_mine());
    if (data_pages == 0 || data_pages > CACHED_PAGES || !md_heap.backend->slot_cache || md_heap.unguarded_mode)
        return 0;
    struct thread_cache *c = cache_get();
    if (!c) return 0;
    uint32_t *n = &c->n[data_pages - 1];
    if (!*n) {
        md_heap.ready_misses++;
        refill(c, data_pages);
        if (!*n) return 0;
    } else {
        md_heap.ready_hits++;
    }
    return &md_heap.slots[c->id[data_pages - 1][--*n]];
}

bool md_cache_defer_guard(uint32_t id)
{
    if (md_opt.free_batch <= 1) return false;
    struct thread_cache *c = cache_get();
    if (!c) return false;
    c->pending[c->npending++] = id;
    if (c->npending >= (uint32_t)md_opt.free_batch || c->npending >= MAX_FREE_BATCH) flush_pending(c);
    return true;
}

void md_cache_flush_guards(void)
{
    if (tls_cache) flush_pending(tls_cache);
}

/* fork child: one thread left.  The other threads' caches are free for new
 * threads to adopt (their ready slots are committed in the child's copy
 * of the arena too); their deferred blocks get their guards now.  A batch
 * another thread was carving or handing out at the moment of fork may be
 * lost to the child (a few slots never used again).  Without @may_lock
 * (the fork came from a handler that interrupted this thread's heap work,
 * fork.c) the deferred blocks stay queued for the thread that adopts the
 * cache. */
void md_cache_fork_child(bool may_lock)
{
    caches_lock = 0;
    for (struct thread_cache *c = all_caches; c; c = c->next) {
        if (c == tls_cache) continue;
        if (c->npending > MAX_FREE_BATCH) c->npending = 0;   /* torn by the fork: give up on them */
        if (may_lock) flush_pending(c);
        c->owned = 0;
    }
}
