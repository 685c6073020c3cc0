/* SPDX-License-Identifier: MIT */
/* strdup and strndup: the copy is a block of bytes, placed to end at its
 * guard page at any length (MD_ALIGN_BYTES), so a read one past the
 * string faults although its size (length + 1) is odd.  The source's
 * length is measured by the checked strnlen (strings.c).
 *
 * They allocate, so their frame heads the stacks of the blocks they make:
 * this file is built with debug information like malloc.c, and the frame
 * names its file and line as malloc's and operator new's do (strings.c is
 * built without it, for the reason given there). */

#include "alloc/alloc.h"
#include <string.h>

/* Not inlined: the frame that heads a copy's allocation stack is the
 * entry point the program called, strdup or strndup, not this helper. */
static __attribute__((noinline)) char *copy_string(const char *s, size_t max)
{
    size_t n = strnlen(s, max);
    char *d = md_alloc(n + 1, MD_ALIGN_BYTES, MD_KIND_MALLOC, false);
    if (!d) return 0;
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

MEMDBG_API char *strndup(const char *s, size_t max)
{
    return copy_string(s, max);
}

MEMDBG_API char *strdup(const char *s)
{
    return copy_string(s, SIZE_MAX);
}

/* the name glibc's own headers once used for strdup */
MEMDBG_API char *__strdup(const char *s)
{
    return copy_string(s, SIZE_MAX);
}
