/* SPDX-License-Identifier: MIT */
/* The memdbg_stats symbol: a read-only window on the heap's counters for
 * tools outside the process (`memdbg maps PID` reads it through
 * /proc/PID/mem).  It holds no counters itself: it says where the heap
 * state lies and where each counter sits in it, so reading it costs the
 * library nothing and heap.c needs no hooks.
 *
 * ABI (version 1, documented in docs/libmemdbg.md and libmemdbg(7)):
 * all fields are native-endian; a reader checks magic, version and size,
 * reads heap_bytes bytes at heap_addr, and picks the counters out at the
 * given offsets (each a size_t / uint32_t / pointer as named).  Fields are
 * only ever appended; a new meaning gets a new version. */
#ifndef MEMDBG_STATS_EXPORT_H
#define MEMDBG_STATS_EXPORT_H

#include <stdint.h>

#define MEMDBG_STATS_MAGIC "MDSTATS"  /* 8 bytes with the NUL */
#define MEMDBG_STATS_VERSION 1

struct memdbg_stats_v1 {
    char magic[8];
    uint32_t version;
    uint32_t size;                 /* sizeof(struct memdbg_stats_v1) */
    uint64_t heap_addr;            /* the heap state, in the process */
    uint32_t heap_bytes;           /* bytes of it to read */
    /* offsets in the heap state; size_t counters unless noted */
    uint32_t off_initialized;      /* int: 0 until the first malloc */
    uint32_t off_base;             /* uintptr_t: arena start */
    uint32_t off_size;             /* size_t: arena bytes */
    uint32_t off_backend;          /* pointer to the backend record */
    uint32_t backend_name_off;     /* in that record: const char *name */
    uint32_t off_live_blocks, off_live_bytes, off_peak_live_blocks, off_peak_live_bytes;
    uint32_t off_total_allocs, off_total_frees, off_errors_reported;
    uint32_t off_q_bytes;          /* bytes of address space in quarantine */
    uint32_t off_bump_page;        /* uint32_t: arena pages ever handed to slots */
    uint32_t off_guarded_frontier; /* uint32_t: pages below are guarded up front */
    uint32_t off_slots;            /* pointer to the slot array (id 0 unused) */
    uint32_t off_nslots;           /* uint32_t: slots in use, ids 1..nslots */
    /* one slot record */
    uint32_t slot_bytes;
    uint32_t slot_off_pages;       /* uint32_t: capacity, guard page included */
    uint32_t slot_off_data_pages;  /* uint32_t: pages made accessible */
    uint32_t slot_off_state;       /* uint8_t */
    uint8_t state_live, state_quarantined, state_free, state_ready;
    uint32_t page_size;
};

#endif
