/* SPDX-License-Identifier: MIT */
/* <memdbg.h>: frozen blocks, the program's side of libmemdbg.
 *
 * memdbg_freeze(p) makes the whole live heap block containing p read-only
 * until memdbg_thaw(p), free or realloc: a write into it stops the program
 * with a "write-to-frozen-block" report naming the writer, who froze the
 * block and who allocated it.  See memdbg_freeze(3).
 *
 * The header needs no library at link time.  Each function looks up
 * libmemdbg's own at its first call (dlsym, RTLD_DEFAULT); in a program
 * that runs without memdbg every call returns -1 with errno ENOSYS, and
 * memdbg_running() returns 0.  With glibc older than 2.34 link with -ldl
 * (pkg-config --libs memdbg gives it). */
#ifndef MEMDBG_PUBLIC_H
#define MEMDBG_PUBLIC_H

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* glibc's RTLD_DEFAULT needs _GNU_SOURCE; its value is the null handle */
#ifdef RTLD_DEFAULT
#define MEMDBG__DEFAULT_HANDLE RTLD_DEFAULT
#else
#define MEMDBG__DEFAULT_HANDLE ((void *)0)
#endif

/* Resolved once per translation unit; a missing symbol is looked up again
 * (cheap, and right if memdbg is dlopen'ed later, which it never is). */
static inline void *memdbg__lookup(void **cache, const char *name)
{
    void *fn = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (!fn) {
        fn = dlsym(MEMDBG__DEFAULT_HANDLE, name);
        __atomic_store_n(cache, fn, __ATOMIC_RELEASE);
    }
    return fn;
}

/* The functions never read through p: no "may be used uninitialized"
 * warning for a block frozen before it is filled */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#define MEMDBG__NO_ACCESS __attribute__((access(none, 1)))
#define MEMDBG__NO_ACCESS3 __attribute__((access(none, 3)))
#else
#define MEMDBG__NO_ACCESS
#define MEMDBG__NO_ACCESS3
#endif

typedef int (*memdbg__one_fn)(const void *) MEMDBG__NO_ACCESS;
typedef int (*memdbg__many_fn)(const void *const *, size_t);
typedef int (*memdbg__void_fn)(void);

MEMDBG__NO_ACCESS3 static inline int memdbg__one(void **cache, const char *name, const void *p)
{
    void *sym = memdbg__lookup(cache, name);
    memdbg__one_fn fn;
    memcpy(&fn, &sym, sizeof fn);   /* object to function pointer, as dlsym needs */
    if (!fn) {
        errno = ENOSYS;
        return -1;
    }
    return fn(p);
}

static inline int memdbg__many(void **cache, const char *name, const void *const *blocks, size_t n)
{
    void *sym = memdbg__lookup(cache, name);
    memdbg__many_fn fn;
    memcpy(&fn, &sym, sizeof fn);
    if (!fn) {
        errno = ENOSYS;
        return -1;
    }
    return fn(blocks, n);
}

/* 0: the block containing p is read-only now (already frozen: 0 too).
 * -1 and errno: EINVAL p is in no live memdbg heap block; ENOSYS memdbg
 * is not running; ENOTSUP the backend cannot freeze; ENOMEM a VMA or
 * memory limit (mprotect-based backends: near vm.max_map_count). */
MEMDBG__NO_ACCESS static inline int memdbg_freeze(const void *p)
{
    static void *fn;
    return memdbg__one(&fn, "memdbg_freeze", p);
}

/* 0: the block containing p is writable again (or was not frozen). */
MEMDBG__NO_ACCESS static inline int memdbg_thaw(const void *p)
{
    static void *fn;
    return memdbg__one(&fn, "memdbg_thaw", p);
}

/* The blocks containing blocks[0..n) at once: one kernel call per 1024
 * blocks on the nonlinear backend.  Every pointer is checked first; on
 * any error no block is changed. */
static inline int memdbg_freeze_many(const void *const *blocks, size_t n)
{
    static void *fn;
    return memdbg__many(&fn, "memdbg_freeze_many", blocks, n);
}

static inline int memdbg_thaw_many(const void *const *blocks, size_t n)
{
    static void *fn;
    return memdbg__many(&fn, "memdbg_thaw_many", blocks, n);
}

/* 1 frozen, 0 not; -1 and errno as memdbg_freeze. */
MEMDBG__NO_ACCESS static inline int memdbg_is_frozen(const void *p)
{
    static void *fn;
    return memdbg__one(&fn, "memdbg_is_frozen", p);
}

/* 1 when the program runs under libmemdbg; 0 (errno ENOSYS) without. */
static inline int memdbg_running(void)
{
    static void *cache;
    void *sym = memdbg__lookup(&cache, "memdbg_running");
    memdbg__void_fn fn;
    memcpy(&fn, &sym, sizeof fn);
    if (!fn) {
        errno = ENOSYS;
        return 0;
    }
    return fn();
}

#undef MEMDBG__NO_ACCESS
#undef MEMDBG__NO_ACCESS3

#ifdef __cplusplus
}
#endif

#endif
