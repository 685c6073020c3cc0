/* SPDX-License-Identifier: MIT */
/* ABI of the patched kernel's nonlinear remap_file_pages (kernel/ series,
 * patch 9: include/uapi/asm-generic/mman-common.h).
 *
 * remap_file_pages(addr, len, prot, pgoff, MAP_CHGPROT) maps the file pages
 * starting at pgoff at addr with protection prot, inside one VMA.
 * prot == PROT_NONE makes a guard page that costs no memory. */
#ifndef MEMDBG_NONLINEAR_ABI_H
#define MEMDBG_NONLINEAR_ABI_H
#include <stdint.h>

#ifndef MAP_CHGPROT
#define MAP_CHGPROT 0x400000
#endif

/* Patch 14: remap_file_pages(entries, count, 0, 0, MAP_VECTOR | flags)
 * installs count entries (1..1024) under one mmap_lock acquisition and
 * returns the number done (or -1 when the first one failed).  Kernels
 * without it refuse the bit with EINVAL. */
#ifndef MAP_VECTOR
#define MAP_VECTOR 0x800000
#endif
#define MD_RFP_VECTOR_MAX 1024
struct md_rfp_entry {   /* struct remap_file_pages_entry */
    uint64_t addr, size, pgoff;
    uint32_t prot, flags;
};

#endif
