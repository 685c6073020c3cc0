/* SPDX-License-Identifier: MIT */
/* The C allocation API of libmemdbg.so.  Each entry point only checks its
 * arguments (errno and return values as glibc documents them) and calls the
 * allocator in memdbg/alloc/heap.c, which guards the block or, with
 * sample_rate, hands most blocks to glibc's __libc_malloc and friends.  No
 * dlsym on the allocation path, so it works before constructors run.
 *
 * With sample_rate > 1, malloc, calloc, realloc and free first try the
 * unsampled path inline (md_take_unsampled, md_libc_owns_fast): a
 * countdown or a few range compares, then glibc's function, so that an
 * unsampled call costs a handful of instructions more than glibc's. */

#include "alloc/alloc.h"
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool is_pow2(size_t a) { return a && !(a & (a - 1)); }

MEMDBG_API void *malloc(size_t size)
{
    /* malloc(0) goes the long way: allow_malloc_0 decides it */
    if (__builtin_expect(size != 0, 1) && md_take_unsampled()) return __libc_malloc(size);
    return md_alloc(size, 0, MD_KIND_MALLOC, false);
}

MEMDBG_API void free(void *p)
{
    if (md_libc_owns_fast(p)) {
        __libc_free(p);
        return;
    }
    md_free(p, MD_DEALLOC_FREE);
}

MEMDBG_API void cfree(void *p)
{
    if (md_libc_owns_fast(p)) {
        __libc_free(p);
        return;
    }
    md_free(p, MD_DEALLOC_FREE);
}

/* The same two paths for operator new and delete (preload/cxx.cc), which
 * cannot include the allocator's C headers: NULL and false mean "the long
 * way". */
MEMDBG_HIDDEN void *md_new_unsampled(size_t size)
{
    if (__builtin_expect(size != 0, 1) && md_take_unsampled()) return __libc_malloc(size);
    return 0;
}

MEMDBG_HIDDEN bool md_delete_unsampled(void *p)
{
    if (!md_libc_owns_fast(p)) return false;
    __libc_free(p);
    return true;
}

MEMDBG_API void *calloc(size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) { errno = ENOMEM; return 0; }
    if (__builtin_expect(total != 0, 1) && md_take_unsampled()) return __libc_calloc(n, size);
    return md_alloc(total, 0, MD_KIND_MALLOC, true);
}

MEMDBG_API void *realloc(void *p, size_t size)
{
    /* glibc's block staying glibc's; realloc(p, 0) frees, the long way */
    if (p && size && md_libc_owns_fast(p) && md_take_unsampled()) return __libc_realloc(p, size);
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
    if (p && md_libc_owns_fast(p)) return md_libc_usable_size(p);
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
