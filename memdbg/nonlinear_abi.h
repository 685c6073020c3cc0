/* ABI of the patched kernel's nonlinear remap_file_pages (kernel/ series,
 * patch 9: include/uapi/asm-generic/mman-common.h).
 *
 * remap_file_pages(addr, len, prot, pgoff, MAP_CHGPROT) maps the file pages
 * starting at pgoff at addr with protection prot, inside one VMA.
 * prot == PROT_NONE makes a guard page that costs no memory. */
#ifndef MEMDBG_NONLINEAR_ABI_H
#define MEMDBG_NONLINEAR_ABI_H

#ifndef MAP_CHGPROT
#define MAP_CHGPROT 0x400000
#endif

#endif
