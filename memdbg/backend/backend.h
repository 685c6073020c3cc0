/* SPDX-License-Identifier: MIT */
/* The three backends and the choice between them (select.c). */
#ifndef MEMDBG_BACKEND_H
#define MEMDBG_BACKEND_H

#include "core/core.h"

extern const struct md_backend md_backend_nonlinear MEMDBG_HIDDEN;
extern const struct md_backend md_backend_guard MEMDBG_HIDDEN;
extern const struct md_backend md_backend_mprotect MEMDBG_HIDDEN;
void md_backend_select(void) MEMDBG_HIDDEN;
/* protect_many of the backends (readonly.c): mprotect for guard and
 * mprotect, MAP_CHGPROT entries for nonlinear. */
uint32_t md_protect_mprotect_many(struct md_slot *const *slots, uint32_t n, bool ro) MEMDBG_HIDDEN;
uint32_t md_protect_nonlinear_many(struct md_slot *const *slots, uint32_t n, bool ro) MEMDBG_HIDDEN;

#endif
