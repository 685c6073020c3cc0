/* SPDX-License-Identifier: MIT */
/* The three backends and the choice between them (select.c). */
#ifndef MEMDBG_BACKEND_H
#define MEMDBG_BACKEND_H

#include "core/core.h"

extern const struct md_backend md_backend_nonlinear MEMDBG_HIDDEN;
extern const struct md_backend md_backend_guard MEMDBG_HIDDEN;
extern const struct md_backend md_backend_mprotect MEMDBG_HIDDEN;
void md_backend_select(void) MEMDBG_HIDDEN;

#endif
