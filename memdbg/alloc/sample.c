/* SPDX-License-Identifier: MIT */
/* Sampled guarding (sample_rate=N > 1): which allocations go to the
 * guarded heap, and the C library's allocator for all the others.
 *
 * Each thread counts down the allocations left before its next guarded
 * one; the gap is drawn from a geometric distribution of mean N, so the
 * chance of being guarded is 1/N for every allocation whatever came
 * before it, and a program allocating in a fixed cycle is not guarded at
 * the same point of the cycle every time.  The count and the generator
 * live in the thread's TLS: the unsampled path is a decrement and a
 * branch, with no lock, no system call, no stack capture and nothing
 * recorded about the block.
 *
 * The unsampled blocks come from glibc's own entry points (__libc_malloc
 * and friends, exported by glibc for exactly this), which do not go back
 * through the PLT to the malloc memdbg exports.  A pointer belongs to
 * glibc when it lies outside memdbg's arena and internal pool. */

#include "alloc/alloc.h"
#include <dlfcn.h>
#include <pthread.h>

MEMDBG_TLS uint64_t md_sample_countdown MEMDBG_HIDDEN;   /* 0: not drawn yet in this thread */
static MEMDBG_TLS uint64_t rng_state;
static uint64_t seed_counter;
static int atfork_state;   /* 0 none, 1 registering, 2 done */

/* A fork child draws its own sequence, so parent and child (a pre-forking
 * server's workers) do not guard the same allocations. */
static void reseed_in_child(void)
{
    rng_state = 0;
    md_sample_countdown = 0;
}

/* xorshift64*: fast, and good enough to space out samples. */
static uint64_t rng_next(void)
{
    uint64_t x = rng_state;
    if (!x) {
        uint64_t k = __atomic_add_fetch(&seed_counter, 1, __ATOMIC_RELAXED);
        if (md_opt.sample_seed) {
            /* sample_seed: the k-th thread's sequence, the same in every
             * run (the splitmix64 finalizer spreads seed and k) */
            x = (uint64_t)md_opt.sample_seed * 0x9e3779b97f4a7c15ull + k;
            x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
            x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
            x ^= x >> 31;
        } else {
            /* a seed per thread and per run: the thread pointer, the
             * counter and the time stamp counter (no system call) */
            x = md_thread_pointer() ^ (k * 0x9e3779b97f4a7c15ull);
#if defined(__x86_64__)
            x ^= __builtin_ia32_rdtsc() << 17;
#endif
        }
        if (!x) x = 0x2545f4914f6cdd1dull;
    }
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545f4914f6cdd1dull;
}

/* The gap to the next guarded allocation, of mean sample_rate. */
static uint64_t draw_gap(void)
{
    static MEMDBG_TLS double scale;   /* once per thread (options do not change) */
    if (scale == 0) scale = md_gap_scale(md_opt.sample_rate);
    return md_gap_draw(scale, rng_next());
}

bool md_sample_refill(void)
{
    int none = 0;
    if (__atomic_load_n(&atfork_state, __ATOMIC_ACQUIRE) == 0 &&
        __atomic_compare_exchange_n(&atfork_state, &none, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
        md_in_runtime++;   /* pthread_atfork may allocate: from the internal pool */
        pthread_atfork(0, 0, reseed_in_child);
        md_in_runtime--;
        __atomic_store_n(&atfork_state, 2, __ATOMIC_RELEASE);
    }
    bool first = md_sample_countdown == 0;
    md_sample_countdown = draw_gap();
    if (!first) return true;   /* the countdown ran out: this one is guarded */
    /* a new thread: its first allocation is one of the gap like any other */
    return md_sampled();
}

/* ---- the C library's allocator ---- */

void *md_libc_alloc(size_t size, size_t align, bool zero)
{
    if (zero) return __libc_calloc(1, size);
    if (align > 16) return __libc_memalign(align, size);
    return __libc_malloc(size);
}

void *md_libc_realloc(void *p, size_t size) { return __libc_realloc(p, size); }

void md_libc_free(void *p) { __libc_free(p); }

/* glibc exports no __libc_ form of malloc_usable_size: the next
 * definition after memdbg's is its own.  dlsym may allocate: inside
 * memdbg, such allocations come from the internal pool. */
size_t md_libc_usable_size(void *p)
{
    static size_t (*next)(void *);
    size_t (*fn)(void *) = __atomic_load_n(&next, __ATOMIC_ACQUIRE);
    if (!fn) {
        md_in_runtime++;
        fn = (size_t (*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
        md_in_runtime--;
        if (!fn) return 0;
        __atomic_store_n(&next, fn, __ATOMIC_RELEASE);
    }
    return fn(p);
}
