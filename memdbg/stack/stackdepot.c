/* SPDX-License-Identifier: MIT */
/* Stack depot: each distinct allocation/free stack is stored once and named
 * by a 32-bit id, so a block record carries two ids instead of two arrays,
 * and leak reports can group blocks by id.  Called under the heap lock. */
#include "stack/stack.h"
#include <stddef.h>
#include <string.h>

#define DEPOT_BUCKETS (1u << 20)
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

uint32_t md_depot_put(const uintptr_t *frames, int n)
{
    if (n <= 0) return 0;
    uint64_t h = hash_frames(frames, n);
    uint32_t *slot = &buckets[h & (DEPOT_BUCKETS - 1)];
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
