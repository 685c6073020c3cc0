// SPDX-License-Identifier: MIT
/* The padding around a block (MD_PAD_BYTE between the block and its slot's
 * data bounds): checked at free, at realloc, and for live blocks at exit.
 * The allocator writes it; this file only reads it. */
#include "core/core.h"
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>

static const uint64_t PAD_WORD = 0xababababababababull;

/* Index of the first byte != MD_PAD_BYTE in [p, p+n), or n. */
static size_t first_bad(const unsigned char *p, size_t n)
{
    size_t i = 0;
    while (i < n && ((uintptr_t)(p + i) & 7)) { if (p[i] != MD_PAD_BYTE) return i; i++; }
    /* Every free checks up to a page of padding: test 64 bytes per branch
     * (the compiler vectorises the OR), then find the byte word by word. */
    for (; i + 64 <= n; i += 64) {
        const uint64_t *w = (const uint64_t *)(p + i);
        uint64_t acc = 0;
        for (int k = 0; k < 8; k++) acc |= w[k] ^ PAD_WORD;
        if (acc) break;
    }
    for (; i + 8 <= n; i += 8)
        if (*(const uint64_t *)(p + i) != PAD_WORD) break;
    for (; i < n; i++) if (p[i] != MD_PAD_BYTE) return i;
    return n;
}

bool md_check_padding(struct md_slot *s, uintptr_t *bad)
{
    if (s->direct) return true;   /* a mapping of its own: no padding filled (direct.c) */
    if (!s->data_pages) return true;
    uintptr_t ds = md_slot_data_lo(s), de = md_slot_data_hi(s);
    uintptr_t end = s->user + s->size;
    size_t i = first_bad((const unsigned char *)end, de - end);
    if (i < de - end) { *bad = end + i; return false; }
    size_t head = s->user - ds;
    if (first_bad((const unsigned char *)ds, head) < head) {
        /* report the corrupted byte nearest the block */
        const unsigned char *p = (const unsigned char *)s->user;
        size_t k = 1;
        while (p[-(ptrdiff_t)k] == MD_PAD_BYTE) k++;
        *bad = s->user - k;
        return false;
    }
    return true;
}

/* A compact block's head padding is also where the block below it in
 * the shared page ends up when it overflows past its redzone: when that
 * neighbour is live and its own tail padding is damaged, it is the
 * culprit (an underflow of s would not touch it).  Returns its id, 0 if
 * none; *bad: the damaged byte of its padding nearest to it. */
uint32_t md_overflow_from_below(const struct md_slot *s, uintptr_t *bad)
{
    const struct md_backend *be = md_heap.backend;
    uint32_t id = be->window_below && s->win_hi ? be->window_below(s) : 0;
    if (!id) return 0;
    struct md_slot *n = &md_heap.slots[id];
    if (__atomic_load_n(&n->filling, __ATOMIC_ACQUIRE)) return 0;
    /* The program may have made the neighbour's page unreadable (as
     * t_protected_block does to its own block): then no blame. */
    sigjmp_buf env, *outer = md_block_read_jmp;
    sigset_t mask;
    volatile bool overflowed = false;
    pthread_sigmask(SIG_SETMASK, NULL, &mask);
    if (sigsetjmp(env, 0) == 0) {
        md_block_read_jmp = &env;
        overflowed = !md_check_padding(n, bad) && *bad >= n->user + n->size;
    } else {
        pthread_sigmask(SIG_SETMASK, &mask, NULL);
    }
    md_block_read_jmp = outer;
    return overflowed ? id : 0;
}

/* The mirror case: s's redzone, damaged over [*lo, *lo + n), lies
 * between s's end and the start of the live block above it in the shared
 * page (a block freed meanwhile is not looked for: its chunk may hold
 * another block by now); when the damage is nearer to that block's start than to s's end,
 * that block was written below its start.  Returns its id (0: s is the
 * culprit) and moves *lo into that block's own page, which shows the same
 * file page, so that the report's offsets are in its terms. */
uint32_t md_underflow_from_above(const struct md_slot *s, uintptr_t *lo, size_t n)
{
    const struct md_backend *be = md_heap.backend;
    uint32_t id = be->window_above && s->win_hi ? be->window_above(s) : 0;
    if (!id || !n) return 0;
    const struct md_slot *above = &md_heap.slots[id];
    const uintptr_t in_page = MD_PAGE - 1;
    uintptr_t end = s->user + s->size;
    if (*lo < end) return 0;
    uintptr_t last_off = (*lo + n - 1) & in_page, above_off = above->user & in_page;
    if (above_off <= last_off) return 0;
    if (above_off - last_off > *lo - end + 1) return 0;   /* nearer to s's end: its overflow */
    *lo = (above->user & ~in_page) + (*lo & in_page);
    return id;
}

/* The damaged part of a block's padding on the side of bad (a byte
 * md_check_padding found): *lo gets its lowest address; returns its size,
 * from the lowest to the highest changed byte, so a report names the
 * whole range written (an int stored 4 bytes below the block is 4 bytes
 * at p-4, not the byte nearest to the block). */
size_t md_padding_damage(const struct md_slot *s, uintptr_t bad, uintptr_t *lo)
{
    const unsigned char *b = (const unsigned char *)bad;
    if (bad >= s->user + s->size) {   /* after the block: bad is the lowest */
        size_t n = md_slot_data_hi(s) - bad;
        while (n > 1 && b[n - 1] == MD_PAD_BYTE) n--;
        *lo = bad;
        return n;
    }
    uintptr_t ds = md_slot_data_lo(s);   /* before it: bad is the highest */
    *lo = ds + first_bad((const unsigned char *)ds, bad - ds);
    return bad + 1 - *lo;
}

/* Past a compact block's window lie bytes of the shared page that other
 * chunks own, live or free: a freed one holds no pattern to check, so
 * the damage seen may be only the start of what was written. */
bool md_damage_reaches_window_end(const struct md_slot *s, uintptr_t lo, size_t n)
{
    return s->win_hi && lo + n == md_slot_data_hi(s);
}
