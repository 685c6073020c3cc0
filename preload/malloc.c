/* SPDX-License-Identifier: MIT */
/* The C allocation API of libmemdbg.so.  Each entry point only checks its
 * arguments (errno and return values as glibc documents them) and calls the
 * allocator in memdbg/alloc/heap.c, which guards the block or, with
 * sample_rate, hands most blocks to glibc's __libc_malloc and friends.  No
 * dlsym on the allocation path, so it works before constructors run. */

#include "alloc/alloc.h"
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool is_pow2(size_t a) { return a && !(a & (a - 1)); }

MEMDBG_API void *malloc(size_t size)
{
    return md_alloc(size, 0, MD_KIND_MALLOC, false);
}

MEMDBG_API void free(void *p)
{
    md_free(p, MD_DEALLOC_FREE);
}

MEMDBG_API void cfree(void *p)
{
    md_free(p, MD_DEALLOC_FREE);
}

MEMDBG_API void *calloc(size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) { errno = ENOMEM; return 0; }
    return md_alloc(total, 0, MD_KIND_MALLOC, true);
}

MEMDBG_API void *realloc(void *p, size_t size)
{
    return md_realloc(p, size);
}

MEMDBG_API void *reallocarray(void *p, size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) { errno = ENOMEM; return 0; }
    return md_realloc(p, total);
}

/* glibc: a non-power-of-two alignment is rounded up; absurd ones fail. */
MEMDBG_API void *memalign(size_t align, size_t size)
{
    if (align > SIZE_MAX / 2 + 1) { errno = EINVAL; return 0; }
    if (align && !is_pow2(align)) align = (size_t)1 << (64 - __builtin_clzl(align));
    return md_alloc(size, align, MD_KIND_MALLOC, false);
}

/* C17/glibc >= 2.38: the alignment must be a power of two (EINVAL). */
MEMDBG_API void *aligned_alloc(size_t align, size_t size)
{
    if (!is_pow2(align)) { errno = EINVAL; return 0; }
    return md_alloc(size, align, MD_KIND_MALLOC, false);
}

MEMDBG_API int posix_memalign(void **out, size_t align, size_t size)
{
    if (!is_pow2(align) || align % sizeof(void *)) return EINVAL;
    int saved = errno;
    void *p = md_alloc(size, align, MD_KIND_MALLOC, false);
    if (!p && (size || md_opt.allow_malloc_0)) { errno = saved; return ENOMEM; }
    errno = saved;
    *out = p;
    return 0;
}

MEMDBG_API void *valloc(size_t size)
{
    return md_alloc(size, MD_PAGE, MD_KIND_MALLOC, false);
}

MEMDBG_API void *pvalloc(size_t size)
{
    if (size > SIZE_MAX - MD_PAGE) { errno = ENOMEM; return 0; }
    size_t rounded = (size + MD_PAGE - 1) & ~(MD_PAGE - 1);
    return md_alloc(rounded ? rounded : MD_PAGE, MD_PAGE, MD_KIND_MALLOC, false);
}

MEMDBG_API size_t malloc_usable_size(void *p)
{
    return md_usable_size(p);
}

/* glibc tuning calls have nothing to act on here. */
MEMDBG_API int malloc_trim(size_t pad) { (void)pad; return 0; }
MEMDBG_API int mallopt(int param, int value) { (void)param; (void)value; return 1; }

/* Test hook: the arena range, so tests can count its VMAs. */
MEMDBG_API int memdbg_heap_range(void **start, size_t *size, const char **backend)
{
    md_ensure_init();
    *start = (void *)md_heap.base;
    *size = md_heap.size;
    *backend = md_heap.backend->name;
    return 0;
}
