/* SPDX-License-Identifier: MIT */
/* File-page pool of the nonlinear backend (nonlinear_pool.c). */
#ifndef MEMDBG_NONLINEAR_POOL_H
#define MEMDBG_NONLINEAR_POOL_H
#include <stdbool.h>
#include <stdint.h>

struct md_fp_history {
    bool fresh;                /* never used: reads as zero */
    uint32_t pad_lo, pad_hi;   /* pad_hi > pad_lo: only [pad_lo, pad_hi) is not padding */
    uint32_t pages;            /* ...in the first `pages` pages of the run */
};

void md_fp_init(uint32_t total_pages);
uint32_t *md_fp_page_map(void);   /* arena page -> file page, kept by the backend */
uint32_t md_fp_extent(void);       /* file pages ever used */
uint32_t md_fp_loose_count(void);
bool md_fp_has_run(uint32_t cls);   /* a freed run of the class is waiting */
int md_fp_take_run(uint32_t cls, uint32_t len, uint32_t *first, struct md_fp_history *h);
uint32_t md_fp_generation(void);   /* changes in a fork child whose copy lacks free runs */
void md_fp_put_run(uint32_t cls, uint32_t first, uint32_t pad_lo, uint32_t pad_hi, uint32_t pages,
                   uint32_t seen);
void md_fp_put_loose(uint32_t page);
void md_fp_fork_child(void);
int md_fp_take_pages(uint32_t *out, uint32_t n, bool *fresh);
#endif
