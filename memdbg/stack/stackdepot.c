/* SPDX-License-Identifier: MIT */
/* Stack depot: each distinct allocation/free stack is stored once and named
 * by a 32-bit id, so a block record carries two ids instead of two arrays,
 * and leak reports can group blocks by id.  Called under the heap lock. */
#include "stack/stack.h"
#include <stddef.h>
#include <string.h>

/* The bucket table grows by doubling, from DEPOT_BUCKETS_MIN to
 * DEPOT_BUCKETS, keeping about one entry per bucket: a new stack's bucket
 * is a random entry of the table, and a table of a million buckets
 * touched at random makes a page fault of most of the first thousand
 * stacks (27 us each on a VM host), when a sampled run stores a few
 * hundred stacks in all.  Its address space is reserved whole. */
#define DEPOT_BUCKETS (1u << 20)
#define DEPOT_BUCKETS_MIN (1u << 10)
/* Address space (lazily backed; it counts against `ulimit -v`): a 64th of
 * arena_size, between 64 MiB (16 MiB under a limit) and 1 GiB, about 7
 * million 16-frame stacks (md_depot_bytes, as_limit.c). */
static size_t depot_bytes;
#define DEPOT_BYTES depot_bytes

struct depot_entry {
    uint32_t next;      /* next entry id in the bucket chain */
    uint32_t n;
    uint64_t hash;
    uint32_t epoch;     /* module epoch when stored (modules.c) */
    uint32_t unused;
    uintptr_t frames[];
};

static uint32_t *buckets;
static uint32_t nbuckets = DEPOT_BUCKETS_MIN;   /* in use: a power of two */
static uint32_t nentries;
static char *store;
static size_t store_used = 8;   /* id 0 means "no stack" */

void md_depot_init(void)
{
    if (buckets) return;
    depot_bytes = md_depot_bytes(md_opt.arena_size);
    buckets = md_reserve(DEPOT_BUCKETS * sizeof(uint32_t), "stack depot");
    store = md_reserve(DEPOT_BYTES, "stack depot");
}

static uint64_t hash_frames(const uintptr_t *f, int n)
{
    uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)n;
    for (int i = 0; i < n; i++) {
        h ^= f[i];
        h *= 0x100000001b3ull;
        h ^= h >> 29;
    }
    return h;
}

static struct depot_entry *entry(uint32_t id)
{
    return (struct depot_entry *)(store + (size_t)id * 8);
}

/* Doubles the table in place: bucket i's chain splits between i and
 * i + nbuckets by the next bit of each entry's hash. */
static void grow_buckets(void)
{
    uint32_t old = nbuckets;
    for (uint32_t i = 0; i < old; i++) {
        uint32_t stay = 0, move = 0;
        for (uint32_t id = buckets[i]; id; ) {
            struct depot_entry *e = entry(id);
            uint32_t next = e->next;
            uint32_t *head = (e->hash & old) ? &move : &stay;
            e->next = *head;
            *head = id;
            id = next;
        }
        buckets[i] = stay;
        buckets[i + old] = move;
    }
    nbuckets = old * 2;
}

uint32_t md_depot_put(const uintptr_t *frames, int n)
{
    if (n <= 0) return 0;
    uint64_t h = hash_frames(frames, n);
    uint32_t *slot = &buckets[h & (nbuckets - 1)];
    for (uint32_t id = *slot; id; ) {
        struct depot_entry *e = (struct depot_entry *)(store + (size_t)id * 8);
        if (e->hash == h && e->n == (uint32_t)n && memcmp(e->frames, frames, n * sizeof *frames) == 0)
            return id;
        id = e->next;
    }
    size_t need = sizeof(struct depot_entry) + (size_t)n * sizeof(uintptr_t);
    if (store_used + need > DEPOT_BYTES) return 0;
    uint32_t id = (uint32_t)(store_used / 8);
    struct depot_entry *e = (struct depot_entry *)(store + store_used);
    e->next = *slot;
    e->n = (uint32_t)n;
    e->hash = h;
    e->epoch = md_modules_epoch();
    memcpy(e->frames, frames, n * sizeof *frames);
    store_used += need;
    *slot = id;
    if (++nentries > nbuckets && nbuckets < DEPOT_BUCKETS) grow_buckets();
    return id;
}

int md_depot_get(uint32_t id, const uintptr_t **frames)
{
    if (!id) { *frames = 0; return 0; }
    struct depot_entry *e = (struct depot_entry *)(store + (size_t)id * 8);
    *frames = e->frames;
    return (int)e->n;
}

uint32_t md_depot_epoch_of(const uintptr_t *frames)
{
    uintptr_t a = (uintptr_t)frames;
    if (!store || a - (uintptr_t)store >= store_used) return md_modules_epoch();
    const struct depot_entry *e =
        (const struct depot_entry *)(a - offsetof(struct depot_entry, frames));
    return e->epoch;
}
