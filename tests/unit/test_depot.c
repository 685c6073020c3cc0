// SPDX-License-Identifier: MIT
/* The stack depot (stackdepot.c): one copy of each distinct stack, named
 * by a 32-bit id; id 0 is "no stack"; a full depot answers 0 for new
 * stacks and still finds the stored ones. */
#include "unit_lib.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static void setup(const char *options)
{
    if (options) setenv("MEMDBG_OPTIONS", options, 1);
    else unsetenv("MEMDBG_OPTIONS");
    md_options_init();
    md_depot_init();
}

static bool same_frames(uint32_t id, const uintptr_t *want, int n)
{
    const uintptr_t *f;
    return md_depot_get(id, &f) == n && memcmp(f, want, (size_t)n * sizeof *f) == 0;
}

static void dedup(void)
{
    setup(NULL);
    uintptr_t a[] = { 0x401000, 0x402000, 0x403000, 0x7f0000001234 };
    uintptr_t a_copy[4];
    memcpy(a_copy, a, sizeof a);
    uint32_t id = md_depot_put(a, 4);
    UNIT_CHECK(id != 0, "a stack got id 0");
    UNIT_EQ_U(md_depot_put(a, 4), id, "the same stack again");
    UNIT_EQ_U(md_depot_put(a_copy, 4), id, "an equal stack from another buffer");
    a_copy[3]++;
    uint32_t other = md_depot_put(a_copy, 4);
    UNIT_CHECK(other != 0 && other != id, "a stack differing in its last frame: id %u (first %u)", other, id);
    uint32_t prefix = md_depot_put(a, 3);
    UNIT_CHECK(prefix != 0 && prefix != id && prefix != other, "its 3-frame prefix: id %u", prefix);
    UNIT_CHECK(same_frames(id, a, 4), "frames of the first stack changed");
    UNIT_CHECK(same_frames(other, a_copy, 4), "frames of the second stack");
    UNIT_CHECK(same_frames(prefix, a, 3), "frames of the prefix");
}

static void empty_and_zero(void)
{
    setup(NULL);
    uintptr_t a[] = { 1 };
    UNIT_EQ_U(md_depot_put(a, 0), 0, "id of an empty stack");
    UNIT_EQ_U(md_depot_put(a, -1), 0, "id of a negative count");
    const uintptr_t *f = a;
    UNIT_EQ_U(md_depot_get(0, &f), 0, "frames of id 0");
    UNIT_CHECK(f == NULL, "id 0 gave frames %p", (void *)f);
}

/* Many stacks, some sharing hash buckets by chance: every one keeps its
 * own id and frames. */
static void many(void)
{
    setup(NULL);
    enum { N = 20000 };
    static uint32_t ids[N];
    for (int i = 0; i < N; i++) {
        uintptr_t f[3] = { 0x400000 + (uintptr_t)i, 0x500000, (uintptr_t)i * 7919 };
        ids[i] = md_depot_put(f, 1 + i % 3);
    }
    int bad = 0;
    for (int i = 0; i < N && bad < 5; i++) {
        uintptr_t f[3] = { 0x400000 + (uintptr_t)i, 0x500000, (uintptr_t)i * 7919 };
        if (ids[i] == 0 || md_depot_put(f, 1 + i % 3) != ids[i] || !same_frames(ids[i], f, 1 + i % 3)) {
            UNIT_FAIL("stack %d: id %u not found again with its frames", i, ids[i]);
            bad++;
        }
        if (i && ids[i] <= ids[i - 1]) { UNIT_FAIL("ids not increasing at %d", i); bad++; }
    }
}

/* A few hundred stacks (a sampled run's) touch a few pages of the
 * depot, not one page of the bucket table each: a fault costs tens of
 * microseconds on a VM host. */
static void few_pages(void)
{
    setup(NULL);
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    for (int i = 0; i < 500; i++) {
        uintptr_t f[4] = { 0x401000 + (uintptr_t)i * 16, 0x402000, 0x403000, 0x404000 };
        UNIT_CHECK(md_depot_put(f, 4) != 0, "stack %d stored", i);
    }
    getrusage(RUSAGE_SELF, &after);
    long faults = after.ru_minflt - before.ru_minflt;
    /* 500 entries of 56 bytes: 7 pages of store, one or two of buckets */
    UNIT_CHECK(faults <= 40, "500 stacks cost %ld page faults", faults);
}

/* The depot is a 64th of arena_size, at least 64 MiB: fill it with
 * 64-frame stacks (536 bytes each with their header). */
static void capacity(void)
{
    setup("arena_size=1G");
    size_t entry = 24 + 64 * sizeof(uintptr_t);
    size_t fits = (((size_t)64 << 20) - 8) / entry;
    uintptr_t f[64];
    for (int k = 0; k < 64; k++) f[k] = 0x1000 * (uintptr_t)(k + 1);
    uint32_t first = 0, last = 0;
    size_t stored = 0;
    for (size_t i = 0; i < fits + 10; i++) {
        f[0] = 0x7f0000000000 + i;
        uint32_t id = md_depot_put(f, 64);
        if (!id) break;
        if (!first) first = id;
        last = id;
        stored++;
    }
    UNIT_EQ_U(stored, fits, "stacks stored before the depot was full");
    f[0] = 0x7f0000000000 + stored + 100;
    UNIT_EQ_U(md_depot_put(f, 64), 0, "a new stack in the full depot");
    uintptr_t small = 42;
    UNIT_EQ_U(md_depot_put(&small, 1) != 0, stored * entry + 8 + 32 <= ((size_t)64 << 20), "a 1-frame stack");
    f[0] = 0x7f0000000000;
    UNIT_EQ_U(md_depot_put(f, 64), first, "the first stack, found in the full depot");
    f[0] = 0x7f0000000000 + stored - 1;
    UNIT_EQ_U(md_depot_put(f, 64), last, "the last stack, found in the full depot");
    UNIT_CHECK(same_frames(last, f, 64), "the last stack's frames");
}

/* A stored stack keeps the module epoch it was stored in; frames outside
 * the depot are of the current epoch. */
static void epochs(void)
{
    setup(NULL);
    md_modules_refresh();
    uintptr_t a[] = { 0x401000, 0x402000 };
    uint32_t id = md_depot_put(a, 2);
    const uintptr_t *f;
    md_depot_get(id, &f);
    UNIT_EQ_U(md_depot_epoch_of(f), md_modules_epoch(), "epoch of a stack stored now");
    UNIT_EQ_U(md_depot_epoch_of(a), md_modules_epoch(), "epoch of frames outside the depot");
}

const struct unit_case unit_depot_cases[] = {
    { "stack depot: equal stacks share an id, different ones do not", dedup },
    { "stack depot: empty stacks are id 0, id 0 has no frames", empty_and_zero },
    { "stack depot: 20,000 stacks keep their ids and frames", many },
    { "stack depot: full at its size, stored stacks still found", capacity },
    { "stack depot: 500 stacks touch a few pages, not one each", few_pages },
    { "stack depot: a stack keeps the module epoch it was stored in", epochs },
    { 0, 0 },
};
