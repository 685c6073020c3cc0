/* SPDX-License-Identifier: MIT */
/* Anonymous memory at one exact address, never over another mapping. */

#include "sys/sys.h"
#include <sys/mman.h>

int md_map_anon_at(uintptr_t addr, size_t len, int prot)
{
    void *p = mmap((void *)addr, len, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED) return -1;
    if ((uintptr_t)p != addr) {   /* a kernel before 4.17 takes the flag for a hint */
        munmap(p, len);
        return -1;
    }
    return 0;
}
