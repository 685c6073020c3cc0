/* Background thread: takes the two slowest kernel calls off the
 * malloc/free path, using the second CPU.
 *
 *  - drop: a freed block's pages are guards at once (in free itself); giving
 *    their memory back (hole punch) is queued here.  A slot is never reused
 *    before its drop is done: md_slot_settle() finishes it first.
 *  - ready slots: for the small classes (1..15 data pages, whose page count
 *    is exact) it keeps a few slots committed and populated, so malloc can
 *    take one without a syscall or a page fault.  They are fresh addresses,
 *    never quarantined ones, so no use-after-free window is shortened.
 *
 * The worker must not hold the heap lock while it can be preempted for
 * long (on a loaded machine that stalls every malloc), so the two queues
 * are single-producer/single-consumer rings: the heap-lock holder is the
 * one producer (drops) or consumer (ready slots), the worker the other
 * side.  The worker takes the heap lock only to carve new slots. */
#include "memdbg.h"
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define DROP_RING 65536
#define READY_RING 32
#define BATCH 64

static uint32_t drop_ring[DROP_RING];
static uint32_t drop_head, drop_tail;          /* consumer: worker; producer: free */
static uint32_t ready_ring[MD_READY_CLASSES][READY_RING];
static uint32_t ready_head[MD_READY_CLASSES], ready_tail[MD_READY_CLASSES]; /* consumer: malloc */
static uint8_t wanted[MD_READY_CLASSES];
static uint32_t inflight_id;                   /* slot the worker is dropping now */

static pthread_mutex_t sleep_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake_cond = PTHREAD_COND_INITIALIZER;
static int sleeping;
static int start_state;                        /* 0 no, 1 starting, 2 up, 3 off */
int md_constructed MEMDBG_HIDDEN;

/* Small blocks are the common case; keep fewer ready slots of larger ones. */
static uint32_t target(uint32_t cls) { return cls < 2 ? READY_RING : READY_RING / 4; }

static bool enabled(void)
{
    return __atomic_load_n(&start_state, __ATOMIC_ACQUIRE) == 2;
}

static void wake(void)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);   /* pairs with the worker's check */
    if (__atomic_load_n(&sleeping, __ATOMIC_RELAXED)) {
        pthread_mutex_lock(&sleep_lock);
        pthread_cond_signal(&wake_cond);
        pthread_mutex_unlock(&sleep_lock);
    }
}

static void drop_now(struct md_slot *s)
{
    md_heap.backend->drop(md_slot_data_page(s), s->data_pages);
}

void md_slot_settle(struct md_slot *s)
{
    uint8_t old = __atomic_fetch_and(&s->flags, (uint8_t)~SLOT_F_DROP_PENDING, __ATOMIC_ACQ_REL);
    if (old & SLOT_F_DROP_PENDING) drop_now(s);     /* we took it from the worker */
    while (__atomic_load_n(&s->flags, __ATOMIC_ACQUIRE) & SLOT_F_DROP_INFLIGHT) sched_yield();
}

void md_worker_queue_drop(uint32_t id)
{
    struct md_slot *s = &md_heap.slots[id];
    if (!md_heap.backend->drop) return;
    uint32_t tail = drop_tail, head = __atomic_load_n(&drop_head, __ATOMIC_ACQUIRE);
    if (!enabled() || tail - head >= DROP_RING) { drop_now(s); return; }
    __atomic_fetch_or(&s->flags, SLOT_F_DROP_PENDING, __ATOMIC_RELEASE);
    drop_ring[tail % DROP_RING] = id;
    __atomic_store_n(&drop_tail, tail + 1, __ATOMIC_RELEASE);
    /* wake the worker for batches, not for every free */
    if (tail + 1 - head >= BATCH / 2) wake();
}

uint32_t md_worker_take_ready(uint32_t cls)
{
    if (cls >= MD_READY_CLASSES || !enabled()) return 0;
    if (!wanted[cls]) __atomic_store_n(&wanted[cls], 1, __ATOMIC_RELAXED);
    uint32_t head = ready_head[cls], tail = __atomic_load_n(&ready_tail[cls], __ATOMIC_ACQUIRE);
    uint32_t id = 0;
    if (head != tail) {
        id = ready_ring[cls][head % READY_RING];
        __atomic_store_n(&ready_head[cls], head + 1, __ATOMIC_RELEASE);
        head++;
        md_heap.ready_hits++;
    } else {
        md_heap.ready_misses++;
    }
    if (tail - head < target(cls) / 2) wake();
    return id;
}

static bool drops_waiting(void)
{
    return __atomic_load_n(&drop_tail, __ATOMIC_ACQUIRE) != drop_head;
}

static bool refill_wanted(uint32_t cls)
{
    if (!__atomic_load_n(&wanted[cls], __ATOMIC_RELAXED) || md_heap.unguarded_mode) return false;
    uint32_t n = ready_tail[cls] - __atomic_load_n(&ready_head[cls], __ATOMIC_ACQUIRE);
    return n < target(cls);
}

static bool do_drops(void)
{
    int done = 0;
    while (done < BATCH && drops_waiting()) {
        uint32_t id = drop_ring[drop_head % DROP_RING];
        __atomic_store_n(&drop_head, drop_head + 1, __ATOMIC_RELEASE);
        struct md_slot *s = &md_heap.slots[id];
        __atomic_store_n(&inflight_id, id, __ATOMIC_RELEASE);
        uint8_t old = __atomic_load_n(&s->flags, __ATOMIC_ACQUIRE);
        bool mine = false;
        while (old & SLOT_F_DROP_PENDING) {
            uint8_t want = (uint8_t)((old & ~SLOT_F_DROP_PENDING) | SLOT_F_DROP_INFLIGHT);
            if (__atomic_compare_exchange_n(&s->flags, &old, want, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                mine = true;
                break;
            }
        }
        if (mine) {
            drop_now(s);
            __atomic_fetch_and(&s->flags, (uint8_t)~SLOT_F_DROP_INFLIGHT, __ATOMIC_RELEASE);
        }
        __atomic_store_n(&inflight_id, 0, __ATOMIC_RELEASE);
        done++;
    }
    return done > 0;
}

static bool do_refill(void)
{
    for (uint32_t cls = 0; cls < MD_READY_CLASSES; cls++) {
        if (!refill_wanted(cls)) continue;
        uint32_t cap = md_class_pages(cls);
        uint32_t have = ready_tail[cls] - __atomic_load_n(&ready_head[cls], __ATOMIC_ACQUIRE);
        uint32_t want = target(cls) - have;
        if (want > 8) want = 8;
        uint32_t batch[8];
        int ok[8];
        uint32_t k = 0;
        bool locked_commit = !md_heap.backend->commit_without_lock;
        pthread_mutex_lock(&md_heap.lock);
        while (k < want) {
            uint32_t id = md_slot_get(cap, false);
            if (!id) break;
            struct md_slot *s = &md_heap.slots[id];
            s->state = SLOT_READY;
            s->data_pages = cap - 1;
            if (locked_commit) ok[k] = md_heap.backend->commit(s, md_slot_data_page(s), s->data_pages) == 0;
            batch[k++] = id;
        }
        if (!locked_commit) pthread_mutex_unlock(&md_heap.lock);
        for (uint32_t i = 0; i < k; i++) {
            struct md_slot *s = &md_heap.slots[batch[i]];
            if (!locked_commit) ok[i] = md_heap.backend->commit(s, md_slot_data_page(s), s->data_pages) == 0;
            if (ok[i]) madvise((void *)md_page_addr(md_slot_data_page(s)), (size_t)s->data_pages << MD_PAGE_SHIFT,
                               MADV_POPULATE_WRITE);
        }
        if (!locked_commit) pthread_mutex_lock(&md_heap.lock);
        for (uint32_t i = 0; i < k; i++) {
            if (ok[i]) continue;
            md_heap.slots[batch[i]].data_pages = 0;
            md_free_list_push(batch[i]);
        }
        pthread_mutex_unlock(&md_heap.lock);
        for (uint32_t i = 0; i < k; i++) {
            if (!ok[i]) continue;
            uint32_t t = ready_tail[cls];
            ready_ring[cls][t % READY_RING] = batch[i];
            __atomic_store_n(&ready_tail[cls], t + 1, __ATOMIC_RELEASE);
        }
        return k > 0;
    }
    return false;
}

static bool any_work(void)
{
    if (drops_waiting()) return true;
    for (uint32_t cls = 0; cls < MD_READY_CLASSES; cls++)
        if (refill_wanted(cls)) return true;
    return false;
}

static void *worker_main(void *arg)
{
    (void)arg;
    md_in_runtime = 1;   /* anything this thread allocates comes from the internal pool */
    for (;;) {
        bool worked = do_drops();
        worked |= do_refill();
        if (worked) continue;
        pthread_mutex_lock(&sleep_lock);
        __atomic_store_n(&sleeping, 1, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        if (!any_work()) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_sec += 1;   /* a safety net only: wake() does not lose wake-ups */
            pthread_cond_timedwait(&wake_cond, &sleep_lock, &ts);
        }
        __atomic_store_n(&sleeping, 0, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&sleep_lock);
    }
    return 0;
}

void md_worker_maybe_start(void)
{
    if (__atomic_load_n(&start_state, __ATOMIC_ACQUIRE) != 0 || !md_constructed) return;
    int expected = 0;
    if (!__atomic_compare_exchange_n(&start_state, &expected, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return;
    if (!md_opt.background_thread || md_heap.backend->no_helper) {
        __atomic_store_n(&start_state, 3, __ATOMIC_RELEASE);
        return;
    }
    md_in_runtime++;
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    /* the worker must not take signals meant for the program */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&t, &attr, worker_main, 0);
    pthread_sigmask(SIG_SETMASK, &old, 0);
    pthread_attr_destroy(&attr);
    md_in_runtime--;
    __atomic_store_n(&start_state, rc == 0 ? 2 : 3, __ATOMIC_RELEASE);
}

/* fork child (heap lock re-initialised, one thread): the worker does not
 * exist here.  Finish its queue synchronously, clear what it was doing,
 * give ready slots back, and let the next malloc start a new worker. */
void md_worker_fork_child(void)
{
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t c = PTHREAD_COND_INITIALIZER;
    memcpy(&sleep_lock, &m, sizeof m);
    memcpy(&wake_cond, &c, sizeof c);
    if (inflight_id) {
        struct md_slot *s = &md_heap.slots[inflight_id];
        if (s->flags & SLOT_F_DROP_INFLIGHT) {
            s->flags &= (uint8_t)~SLOT_F_DROP_INFLIGHT;
            drop_now(s);
        }
        inflight_id = 0;
    }
    while (drop_head != drop_tail) {
        struct md_slot *s = &md_heap.slots[drop_ring[drop_head++ % DROP_RING]];
        if (s->flags & SLOT_F_DROP_PENDING) {
            s->flags &= (uint8_t)~SLOT_F_DROP_PENDING;
            drop_now(s);
        }
    }
    for (uint32_t cls = 0; cls < MD_READY_CLASSES; cls++) {
        while (ready_head[cls] != ready_tail[cls]) {
            uint32_t id = ready_ring[cls][ready_head[cls]++ % READY_RING];
            struct md_slot *s = &md_heap.slots[id];
            /* committed and populated: guards again (and memory back) before the pool takes it */
            md_heap.backend->release(s, md_slot_data_page(s), s->data_pages);
            if (md_heap.backend->drop) md_heap.backend->drop(md_slot_data_page(s), s->data_pages);
            s->data_pages = 0;
            __atomic_fetch_or(&s->flags, SLOT_F_FRESH, __ATOMIC_RELAXED);
            md_free_list_push(id);
        }
        wanted[cls] = 0;
    }
    sleeping = 0;
    if (start_state == 2) start_state = 0;
}
