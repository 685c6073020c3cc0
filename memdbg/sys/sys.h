/* SPDX-License-Identifier: MIT */
/* Kernel interfaces that know nothing of the heap: descriptors,
 * /proc/self/maps and pagemap, mappings at an exact address, madvise over
 * many ranges, x86 instruction decoding. */
#ifndef MEMDBG_SYS_H
#define MEMDBG_SYS_H

#include "base/base.h"

/* ---- descriptors (fd.c), /proc/self/maps (proc_maps.c) ---- */
/* VMAs of /proc/self/maps overlapping [start, end), or all if both are 0. */
int md_count_vmas(uintptr_t start, uintptr_t end) MEMDBG_HIDDEN;
long md_max_map_count(void) MEMDBG_HIDDEN;   /* vm.max_map_count */
int md_memfd(const char *name) MEMDBG_HIDDEN;   /* at a high number, close-on-exec */
void md_fd_identity(int fd, uint64_t *dev, uint64_t *ino) MEMDBG_HIDDEN;
bool md_fd_is(int fd, uint64_t dev, uint64_t ino) MEMDBG_HIDDEN; /* still that file? */

/* ---- a mapping at an exact address (map_at.c) ---- */
/* Private anonymous, unreserved memory of protection prot at [addr,
 * addr + len), only where nothing is mapped: 0, or -1 with nothing
 * mapped. */
int md_map_anon_at(uintptr_t addr, size_t len, int prot) MEMDBG_HIDDEN;

/* ---- many ranges per kernel entry (madvise_vec.c) ---- */
struct iovec;
/* madvise(advice) over n ranges, through process_madvise when the kernel
 * takes it; ok[i] (may be NULL) per range.  Returns the failed count. */
size_t md_madvise_ranges(const struct iovec *iov, size_t n, int advice, bool *ok) MEMDBG_HIDDEN;
/* Whether md_madvise_ranges(advice) may still use one call for many
 * ranges (false once the kernel refused it). */
bool md_madvise_vectored(int advice) MEMDBG_HIDDEN;

/* ---- pages that hold data (pagemap.c) ---- */
/* A reader of /proc/self/pagemap with a window of entries; fd -1 when it
 * cannot be read (every page then counts as holding data). */
struct md_pagemap {
    int fd;
    uintptr_t first;            /* page number of entries[0] */
    size_t count;               /* entries read */
    uint64_t entries[512];      /* 2 MiB of address space per read */
};
void md_pagemap_open(struct md_pagemap *pm) MEMDBG_HIDDEN;
void md_pagemap_close(struct md_pagemap *pm) MEMDBG_HIDDEN;
/* Whether the page at addr of a private anonymous mapping may hold data
 * (present or swapped out); false only for a page never written. */
bool md_pagemap_has_data(struct md_pagemap *pm, uintptr_t addr) MEMDBG_HIDDEN;

/* ---- the faulting instruction (x86_access.c) ---- */
/* Width of the access at pc, 0 if not recognised. */
int md_decode_access_size(const unsigned char *pc) MEMDBG_HIDDEN;

#endif
