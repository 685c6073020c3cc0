/* SPDX-License-Identifier: MIT */
/* Which pages of a private anonymous range hold data, from
 * /proc/self/pagemap: a page that is neither present nor swapped out was
 * never written and reads as zeros.  Reading such a page instead maps the
 * zero page, one fault per page, which for a block of many GiB that the
 * program touched in a few places takes minutes. */
#include "sys/sys.h"
#include <fcntl.h>
#include <unistd.h>

#define PM_PRESENT (1ull << 63)
#define PM_SWAPPED (1ull << 62)

void md_pagemap_open(struct md_pagemap *pm)
{
    pm->fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    pm->first = pm->count = 0;
}

void md_pagemap_close(struct md_pagemap *pm)
{
    if (pm->fd >= 0) close(pm->fd);
    pm->fd = -1;
}

/* True when the page at addr may hold data: present, swapped, or unknown
 * (no pagemap, a short read). */
bool md_pagemap_has_data(struct md_pagemap *pm, uintptr_t addr)
{
    if (pm->fd < 0) return true;
    uintptr_t page = addr >> MD_PAGE_SHIFT;
    if (page < pm->first || page >= pm->first + pm->count) {
        ssize_t got = pread(pm->fd, pm->entries, sizeof pm->entries, (off_t)(page * sizeof(uint64_t)));
        if (got < (ssize_t)sizeof(uint64_t)) return true;
        pm->first = page;
        pm->count = (size_t)got / sizeof(uint64_t);
    }
    return (pm->entries[page - pm->first] & (PM_PRESENT | PM_SWAPPED)) != 0;
}
