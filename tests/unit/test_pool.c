// SPDX-License-Identifier: MIT
/* Size classes (arena.c) and the nonlinear backend's pool of file pages
 * (nonlinear_pool.c). */
#include "unit_lib.h"
#include "backend/nonlinear_pool.h"
#include "unit.h"

#include <stdlib.h>

static void classes_exact(void)
{
    for (uint32_t p = 1; p <= 16; p++) {
        UNIT_EQ_U(md_class_of(p), p - 1, "class of a small page count");
        UNIT_EQ_U(md_class_pages(p - 1), p, "pages of a small class");
    }
    UNIT_EQ_U(md_class_of(0), 0, "class of 0 pages");
}

/* Above 16 pages: four classes per power of two.  Known points, then for
 * every count up to 2^20 pages: the class holds it, the class below does
 * not, at most a quarter is unused, and classes never go down. */
static void classes_rounding(void)
{
    static const struct { uint32_t pages, cls, cap; } known[] = {
        { 17, 16, 20 }, { 20, 16, 20 }, { 21, 17, 24 }, { 24, 17, 24 }, { 25, 18, 28 }, { 28, 18, 28 },
        { 29, 19, 32 }, { 32, 19, 32 }, { 33, 20, 40 }, { 40, 20, 40 }, { 41, 21, 48 }, { 64, 23, 64 },
        { 65, 24, 80 }, { 1000, 39, 1024 }, { 1025, 40, 1280 }, { 262144, 71, 262144 },
    };
    for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
        UNIT_CHECK(md_class_of(known[i].pages) == known[i].cls && md_class_pages(known[i].cls) == known[i].cap,
                   "%u pages: class %u of %u pages, expected class %u of %u", known[i].pages,
                   md_class_of(known[i].pages), md_class_pages(md_class_of(known[i].pages)), known[i].cls,
                   known[i].cap);
    }
    uint32_t prev = 0;
    int bad = 0;
    for (uint32_t p = 1; p <= (1u << 20) && bad < 5; p++) {
        uint32_t c = md_class_of(p), cap = md_class_pages(c);
        bool ok = cap >= p && (c == 0 || md_class_pages(c - 1) < p) && c >= prev && c < MD_NCLASSES &&
                  (p <= 16 || (uint64_t)cap * 4 <= (uint64_t)p * 5 + 4);
        if (!ok) {
            UNIT_FAIL("%u pages: class %u of %u pages (class below: %u pages)", p, c, cap,
                      c ? md_class_pages(c - 1) : 0);
            bad++;
        }
        prev = c;
    }
    UNIT_EQ_U(md_class_pages(MD_NCLASSES - 1) >= (1u << 31) || md_class_pages(MD_NCLASSES - 1) == UINT32_MAX, 1,
              "the last class holds 2^31 pages");
}

/* The pool reserves its tables from the arena's page count. */
static void pool_setup(uint32_t pages)
{
    unsetenv("MEMDBG_OPTIONS");
    md_options_init();
    md_fp_init(pages);
}

static void pool_fresh_runs(void)
{
    pool_setup(1000);
    uint32_t first = 99;
    struct md_fp_history h = { .pad_hi = 7 };
    UNIT_CHECK(!md_fp_has_run(3), "a run of class 3 waits in a new pool");
    UNIT_EQ_U(md_fp_take_run(3, 4, &first, &h), 0, "take a 4-page run");
    UNIT_EQ_U(first, 0, "first file page of the first run");
    UNIT_CHECK(h.fresh && h.pad_hi == 0, "a never-used run: fresh %d pad_hi %u", h.fresh, h.pad_hi);
    UNIT_EQ_U(md_fp_take_run(0, 1, &first, &h), 0, "take a 1-page run");
    UNIT_EQ_U(first, 4, "next never-used file page");
    UNIT_EQ_U(md_fp_extent(), 5, "file pages used");
    UNIT_CHECK(md_fp_take_run(10, 996, &first, &h) == -1, "996 pages taken from 995 left");
    UNIT_EQ_U(md_fp_take_run(10, 995, &first, &h), 0, "the last 995 pages");
    UNIT_EQ_U(md_fp_extent(), 1000, "file pages used");
    UNIT_CHECK(md_fp_take_run(0, 1, &first, &h) == -1, "a page from the empty pool");
}

/* A freed run serves its class next, with the padding history it was put
 * back with; other classes do not see it. */
static void pool_reuse(void)
{
    pool_setup(1000);
    uint32_t a, b, c;
    struct md_fp_history h;
    md_fp_take_run(2, 3, &a, &h);
    md_fp_take_run(2, 3, &b, &h);
    md_fp_put_run(2, a, 100, 300, 1, md_fp_generation());
    md_fp_put_run(2, b, 0, 0, 3, md_fp_generation());
    UNIT_CHECK(md_fp_has_run(2), "no run of class 2 waits");
    UNIT_CHECK(!md_fp_has_run(3), "a run of class 3 waits");
    md_fp_take_run(3, 4, &c, &h);
    UNIT_EQ_U(c, 6, "class 3 takes never-used pages");
    UNIT_CHECK(h.fresh, "class 3's run is not fresh");
    md_fp_take_run(2, 3, &c, &h);   /* last put, first out */
    UNIT_EQ_U(c, b, "class 2's first run back");
    UNIT_CHECK(!h.fresh && h.pad_hi == 0, "unknown padding: fresh %d pad_hi %u", h.fresh, h.pad_hi);
    md_fp_take_run(2, 3, &c, &h);
    UNIT_EQ_U(c, a, "class 2's second run back");
    UNIT_CHECK(!h.fresh && h.pad_lo == 100 && h.pad_hi == 300 && h.pages == 1,
               "history fresh %d [%u, %u) pages %u, expected [100, 300) over 1", h.fresh, h.pad_lo, h.pad_hi, h.pages);
    UNIT_CHECK(!md_fp_has_run(2), "class 2 still has a run");
    UNIT_EQ_U(md_fp_extent(), 10, "file pages used");
}

/* A fork child's copy of the file lacks the freed runs' pages: their
 * history is void there, the runs themselves still serve. */
static void pool_fork_generation(void)
{
    pool_setup(100);
    uint32_t a, c;
    struct md_fp_history h;
    md_fp_take_run(1, 2, &a, &h);
    uint32_t g = md_fp_generation();
    md_fp_put_run(1, a, 8, 16, 2, g);
    md_fp_fork_child();
    UNIT_CHECK(md_fp_generation() != g, "generation unchanged by a fork");
    md_fp_take_run(1, 2, &c, &h);
    UNIT_CHECK(c == a && !h.fresh && h.pad_hi == 0, "run %u (expected %u) with pad_hi %u after a fork", c, a,
               h.pad_hi);
    md_fp_put_run(1, a, 8, 16, 2, md_fp_generation());
    md_fp_take_run(1, 2, &c, &h);
    UNIT_CHECK(h.pad_lo == 8 && h.pad_hi == 16, "history of the child's own generation: [%u, %u)", h.pad_lo,
               h.pad_hi);
}

/* Loose pages (left by a realloc that moved part of a block) go first,
 * in the order they were pushed back, then never-used ones. */
static void pool_loose_pages(void)
{
    pool_setup(20);
    uint32_t out[8], first;
    bool fresh;
    struct md_fp_history h;
    md_fp_take_run(4, 5, &first, &h);   /* pages 0..4 */
    UNIT_EQ_U(md_fp_take_pages(out, 3, &fresh), 0, "3 pages");
    UNIT_CHECK(fresh && out[0] == 5 && out[1] == 6 && out[2] == 7, "never-used pages %u %u %u (fresh %d)", out[0],
               out[1], out[2], fresh);
    for (uint32_t p = 4; p >= 2; p--) md_fp_put_loose(p);   /* descending: they pop ascending */
    UNIT_EQ_U(md_fp_loose_count(), 3, "loose pages");
    UNIT_EQ_U(md_fp_take_pages(out, 5, &fresh), 0, "5 pages, 3 loose");
    UNIT_CHECK(!fresh && out[0] == 2 && out[1] == 3 && out[2] == 4 && out[3] == 8 && out[4] == 9,
               "pages %u %u %u %u %u (fresh %d), expected 2 3 4 8 9", out[0], out[1], out[2], out[3], out[4], fresh);
    UNIT_EQ_U(md_fp_loose_count(), 0, "loose pages left");
    UNIT_CHECK(md_fp_take_pages(out, 11, &fresh) == -1, "11 pages from 10 left");
    UNIT_EQ_U(md_fp_extent(), 10, "a refused take changed the pool");
    UNIT_EQ_U(md_fp_take_pages(out, 10, &fresh), 0, "the last 10 pages");
}

const struct unit_case unit_pool_cases[] = {
    { "size classes: exact up to 16 pages", classes_exact },
    { "size classes: four per power of two, tight, monotone, up to 2^20 pages", classes_rounding },
    { "nonlinear pool: never-used runs, exhaustion", pool_fresh_runs },
    { "nonlinear pool: freed runs serve their class with their padding history", pool_reuse },
    { "nonlinear pool: a fork child voids the history of freed runs", pool_fork_generation },
    { "nonlinear pool: loose pages first, ascending, then never-used", pool_loose_pages },
    { 0, 0 },
};
