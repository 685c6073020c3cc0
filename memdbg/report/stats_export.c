/* SPDX-License-Identifier: MIT */
/* memdbg_stats: where tools outside the process find the heap counters
 * (see stats_export.h for the ABI).  A constant table of addresses and
 * offsets: nothing runs, nothing is written, so the allocator's hot paths
 * and heap.c stay as they are. */
#include "report/report.h"
#include "stats_export.h"
#include <stddef.h>

#define HEAP_OFF(field) ((uint32_t)offsetof(struct md_heap, field))
#define SLOT_OFF(field) ((uint32_t)offsetof(struct md_slot, field))

MEMDBG_API __attribute__((used)) const struct memdbg_stats_v1 memdbg_stats = {
    .magic = MEMDBG_STATS_MAGIC,
    .version = MEMDBG_STATS_VERSION,
    .size = sizeof(struct memdbg_stats_v1),
    .heap_addr = (uint64_t)(uintptr_t)&md_heap,
    .heap_bytes = sizeof(struct md_heap),
    .off_initialized = HEAP_OFF(initialized),
    .off_base = HEAP_OFF(base),
    .off_size = HEAP_OFF(size),
    .off_backend = HEAP_OFF(backend),
    .backend_name_off = (uint32_t)offsetof(struct md_backend, name),
    .off_live_blocks = HEAP_OFF(live_blocks),
    .off_live_bytes = HEAP_OFF(live_bytes),
    .off_peak_live_blocks = HEAP_OFF(peak_live_blocks),
    .off_peak_live_bytes = HEAP_OFF(peak_live_bytes),
    .off_total_allocs = HEAP_OFF(total_allocs),
    .off_total_frees = HEAP_OFF(total_frees),
    .off_errors_reported = HEAP_OFF(errors_reported),
    .off_q_bytes = HEAP_OFF(q_bytes),
    .off_bump_page = HEAP_OFF(bump_page),
    .off_guarded_frontier = HEAP_OFF(guarded_frontier),
    .off_slots = HEAP_OFF(slots),
    .off_nslots = HEAP_OFF(nslots),
    .slot_bytes = sizeof(struct md_slot),
    .slot_off_pages = SLOT_OFF(pages),
    .slot_off_data_pages = SLOT_OFF(data_pages),
    .slot_off_state = SLOT_OFF(state),
    .state_live = MD_SLOT_LIVE,
    .state_quarantined = MD_SLOT_QUARANTINED,
    .state_free = MD_SLOT_FREE,
    .state_ready = MD_SLOT_READY,
    .page_size = MD_PAGE,
};
