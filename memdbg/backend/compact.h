/* SPDX-License-Identifier: MIT */
/* Compact mode of the nonlinear backend (compact.c). */
#ifndef MEMDBG_COMPACT_H
#define MEMDBG_COMPACT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct md_slot;

void md_compact_init(void);                       /* after the arena is mapped */
uint32_t md_compact_take(size_t size, size_t align);   /* backend take_window */
int md_compact_release(struct md_slot *s);        /* a slot with a window */
uint32_t md_compact_below(const struct md_slot *s);   /* backend window_below */
uint32_t md_compact_above(const struct md_slot *s);   /* backend window_above */
/* Deferred guards and maps go to the kernel before any other change of
 * the mapping, so that the calls stay in order. */
void md_compact_flush(void);
/* fork child: forget the calls other threads had in flight (their slots
 * are lost to the child, their cache places must not be). */
void md_compact_fork_child(void);

/* nonlinear_calls.c: one remap_file_pages(MAP_CHGPROT | MAP_NONBLOCK). */
int md_nonlinear_rfp(uintptr_t addr, size_t len, int prot, size_t pgoff);
/* send(e, n) with the heap lock given up meanwhile; ids[0..nids) are the
 * slots whose mappings are among them.  Returns what send returned. */
struct md_rfp_entry;
uint32_t md_nonlinear_send_unlocked(const uint32_t *ids, uint32_t nids, const struct md_rfp_entry *e,
                                    uint32_t n, uint32_t (*send)(const struct md_rfp_entry *, uint32_t));
/* One call of the common path without the heap lock; `sending` (0: none)
 * is the slot it maps. */
int md_nonlinear_rfp_unlocked(uint32_t sending, uintptr_t addr, size_t len, int prot, size_t pgoff);
#endif
