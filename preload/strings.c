/* SPDX-License-Identifier: MIT */
/* memcpy, strlen and the other mem and str functions (and the _chk forms
 * that _FORTIFY_SOURCE programs call): each checks the whole range it will
 * read and write against the heap block the pointer is in
 * (report/access.c), then calls the C library's own function.
 *
 * Which calls come here: a program's and its libraries' calls through the
 * PLT, which the dynamic linker binds to the first definition in the
 * process, this library's (it is preloaded).  glibc resolves its own
 * memcpy with an IFUNC to the variant for this CPU; dlsym(RTLD_NEXT) below
 * returns that variant.  Not seen: copies the compiler expands inline
 * (small constant sizes, __builtin_memcpy), the C library's calls to its
 * own functions (printf, fgets), and static binaries.
 *
 * Safe where memdbg is: before start-up (the arena is empty, nothing is in
 * it), in memdbg's own work (md_in_runtime: malloc filling padding,
 * realloc copying, libunwind and libdw during a report call straight
 * through, unchecked), and in signal handlers (no lock, no allocation on
 * the checked path).  Until dlsym has found glibc's functions (and while
 * it runs, if it allocates), plain byte loops stand in.
 *
 * Built with -fno-builtin and -fno-tree-loop-distribute-patterns
 * (memdbg/lib.mk): the compiler must neither turn these functions' loops
 * into calls to themselves nor assume they are the C library's. */

#include "alloc/alloc.h"
#include <dlfcn.h>
#include <string.h>

/* ---- the C library's functions, found at the first call ---- */

enum real_fn {
    R_MEMCPY, R_MEMPCPY, R_MEMMOVE, R_MEMSET, R_MEMCMP, R_MEMCHR,
    R_STRLEN, R_STRNLEN, R_STRCMP, R_STRNCMP, R_STRCHR, R_STRRCHR,
    R_STRCPY, R_STPCPY, R_STRNCPY, R_STRCAT, R_STRNCAT,
    R_MEMCPY_CHK, R_MEMPCPY_CHK, R_MEMMOVE_CHK, R_MEMSET_CHK,
    R_STRCPY_CHK, R_STPCPY_CHK, R_STRNCPY_CHK, R_STRCAT_CHK, R_STRNCAT_CHK,
    R_COUNT
};
static const char *const real_names[R_COUNT] = {
    "memcpy", "mempcpy", "memmove", "memset", "memcmp", "memchr",
    "strlen", "strnlen", "strcmp", "strncmp", "strchr", "strrchr",
    "strcpy", "stpcpy", "strncpy", "strcat", "strncat",
    "__memcpy_chk", "__mempcpy_chk", "__memmove_chk", "__memset_chk",
    "__strcpy_chk", "__stpcpy_chk", "__strncpy_chk", "__strcat_chk", "__strncat_chk",
};
static void *real_fns[R_COUNT];
static int resolved;                  /* every real_fns[] entry is set */
static MEMDBG_TLS int resolving;      /* this thread is in dlsym below */

/* dlsym may allocate, and memdbg's start-up uses memset: a call made
 * meanwhile on this thread gets the byte loops (false). */
static bool resolve(void)
{
    if (__builtin_expect(__atomic_load_n(&resolved, __ATOMIC_ACQUIRE), 1)) return true;
    if (resolving) return false;
    resolving = 1;
    bool all = true;
    for (int i = 0; i < R_COUNT; i++) {
        void *f = dlsym(RTLD_NEXT, real_names[i]);
        __atomic_store_n(&real_fns[i], f, __ATOMIC_RELAXED);
        all &= f != 0;
    }
    resolving = 0;
    if (all) __atomic_store_n(&resolved, 1, __ATOMIC_RELEASE);
    return all;
}

#define REAL(name, type) ((type)real_fns[name])
typedef void *(*copy_fn)(void *, const void *, size_t);
typedef void *(*copy_chk_fn)(void *, const void *, size_t, size_t);
typedef void *(*set_fn)(void *, int, size_t);
typedef void *(*set_chk_fn)(void *, int, size_t, size_t);
typedef int (*cmp_fn)(const void *, const void *, size_t);
typedef void *(*chr_fn)(const void *, int, size_t);
typedef size_t (*len_fn)(const char *);
typedef size_t (*nlen_fn)(const char *, size_t);
typedef int (*scmp_fn)(const char *, const char *);
typedef int (*sncmp_fn)(const char *, const char *, size_t);
typedef char *(*schr_fn)(const char *, int);
typedef char *(*scpy_fn)(char *, const char *);
typedef char *(*sncpy_fn)(char *, const char *, size_t);
typedef char *(*scpy_chk_fn)(char *, const char *, size_t);
typedef char *(*sncpy_chk_fn)(char *, const char *, size_t, size_t);

/* ---- byte loops for the calls before resolve() ---- */

static void *loop_memmove(void *d, const void *s, size_t n)
{
    unsigned char *dp = d;
    const unsigned char *sp = s;
    if (dp < sp) for (size_t i = 0; i < n; i++) dp[i] = sp[i];
    else for (size_t i = n; i > 0; i--) dp[i - 1] = sp[i - 1];
    return d;
}
static void *loop_memset(void *d, int c, size_t n)
{
    unsigned char *dp = d;
    for (size_t i = 0; i < n; i++) dp[i] = (unsigned char)c;
    return d;
}
static int loop_memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (size_t i = 0; i < n; i++) if (x[i] != y[i]) return x[i] - y[i];
    return 0;
}
static void *loop_memchr(const void *s, int c, size_t n)
{
    const unsigned char *p = s;
    for (size_t i = 0; i < n; i++) if (p[i] == (unsigned char)c) return (void *)(p + i);
    return 0;
}
static size_t loop_strnlen(const char *s, size_t max)
{
    size_t n = 0;
    while (n < max && s[n]) n++;
    return n;
}
static int loop_strncmp(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
        if (x != y || !x) return x - y;
    }
    return 0;
}
static char *loop_strchr(const char *s, int c, bool last)
{
    const char *found = 0;
    for (;; s++) {
        if (*s == (char)c) {
            found = s;
            if (!last) return (char *)s;
        }
        if (!*s) return (char *)found;
    }
}
static char *loop_strncpy(char *d, const char *s, size_t n)
{
    size_t len = loop_strnlen(s, n);
    loop_memmove(d, s, len);
    loop_memset(d + len, 0, n - len);
    return d;
}

/* ---- the checks ---- */

#define ALWAYS_INLINE static inline __attribute__((always_inline))
enum { READ = 1, WRITE = 2 };

ALWAYS_INLINE bool checking(void)
{
    return !md_in_runtime && md_heap.initialized && md_opt.check_string_functions;
}

/* [p, p + n) must lie in p's live block when p is in the arena.  Inlined
 * into each interceptor, so the report's frame #0 is the interceptor. */
ALWAYS_INLINE void check_range(const void *p, size_t n, int access)
{
    if (!n || !md_in_arena((uintptr_t)p)) return;
    size_t room = md_block_room(p);
    if (room < n) md_report_bad_range(p, n, room, access);
}

ALWAYS_INLINE void check_overlap(const char *fn, const void *a, size_t an, const void *b, size_t bn)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    if (md_opt.check_overlap && an && bn && x < y + bn && y < x + an) md_report_overlap(fn, a, an, b, bn);
}

/* strnlen(s, max) that reads no byte past s's block: a string that runs
 * off its block is reported as a read of the block's rest and one byte
 * more, the least the call had to read. */
ALWAYS_INLINE size_t checked_strnlen(const char *s, size_t max)
{
    if (md_in_arena((uintptr_t)s)) {
        size_t room = md_block_room(s);
        if (room < max) {
            const char *nul = REAL(R_MEMCHR, chr_fn)(s, 0, room);
            if (nul) return (size_t)(nul - s);
            md_report_bad_range(s, room + 1, room, READ);
        }
    }
    /* halt_on_error=0: what the program asked */
    return max == SIZE_MAX ? REAL(R_STRLEN, len_fn)(s) : REAL(R_STRNLEN, nlen_fn)(s, max);
}

/* Whether strncmp(a, b, n) may run unchecked: neither string runs off its
 * block within n bytes.  Otherwise compare byte by byte: the call reads
 * only up to the first difference, which may come before the block's end. */
ALWAYS_INLINE bool stays_in_block(const char *s, size_t n)
{
    if (!md_in_arena((uintptr_t)s)) return true;
    size_t room = md_block_room(s);
    return room >= n || REAL(R_MEMCHR, chr_fn)(s, 0, room) != 0;
}

ALWAYS_INLINE int checked_strncmp(const char *a, const char *b, size_t n)
{
    if (!stays_in_block(a, n) || !stays_in_block(b, n)) {
        size_t ra = md_block_room(a), rb = md_block_room(b);
        for (size_t i = 0; i < n; i++) {
            if (i >= ra) { md_report_bad_range(a, i + 1, ra, READ); break; }
            if (i >= rb) { md_report_bad_range(b, i + 1, rb, READ); break; }
            unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
            if (x != y || !x) return x - y;
        }
    }
    return n == SIZE_MAX ? REAL(R_STRCMP, scmp_fn)(a, b) : REAL(R_STRNCMP, sncmp_fn)(a, b, n);
}

/* memchr, strchr: the call stops at the byte it looks for, so only a
 * search that leaves the block without finding it is an error. */
ALWAYS_INLINE void *checked_memchr(const void *s, int c, size_t n)
{
    if (n && md_in_arena((uintptr_t)s)) {
        size_t room = md_block_room(s);
        if (room < n) {
            void *found = REAL(R_MEMCHR, chr_fn)(s, c, room);
            if (found) return found;
            md_report_bad_range(s, n, room, READ);
        }
    }
    return REAL(R_MEMCHR, chr_fn)(s, c, n);
}

ALWAYS_INLINE void check_strchr(const char *s, int c)
{
    if (!md_in_arena((uintptr_t)s)) return;
    size_t room = md_block_room(s);
    if (REAL(R_MEMCHR, chr_fn)(s, 0, room)) return;
    if ((char)c && REAL(R_MEMCHR, chr_fn)(s, c, room)) return;
    md_report_bad_range(s, room + 1, room, READ);
}

ALWAYS_INLINE void check_copy(const char *fn, void *d, const void *s, size_t n)
{
    check_overlap(fn, d, n, s, n);
    check_range(s, n, READ);
    check_range(d, n, WRITE);
}

ALWAYS_INLINE size_t check_strcpy(const char *fn, char *d, const char *s)
{
    size_t n = checked_strnlen(s, SIZE_MAX) + 1;
    check_overlap(fn, d, n, s, n);
    check_range(d, n, WRITE);
    return n;
}

/* strncpy writes all n bytes (NUL padding) and reads up to the NUL. */
ALWAYS_INLINE void check_strncpy(const char *fn, char *d, const char *s, size_t n)
{
    size_t len = checked_strnlen(s, n);
    size_t read = len < n ? len + 1 : n;
    check_overlap(fn, d, n, s, read);
    check_range(d, n, WRITE);
}

/* strcat and strncat (n: SIZE_MAX for strcat) append after d's string. */
ALWAYS_INLINE void check_strcat(const char *fn, char *d, const char *s, size_t n)
{
    size_t dlen = checked_strnlen(d, SIZE_MAX);
    size_t slen = checked_strnlen(s, n);
    size_t read = slen < n ? slen + 1 : n;
    check_overlap(fn, d, dlen + slen + 1, s, read);
    check_range(d + dlen, slen + 1, WRITE);
}

/* ---- the functions ----
 * The common call touches no block of the arena (with sampling on, almost
 * none does): each function tests that inline, with the few loads it
 * takes, and calls the C library's function; everything else (start-up,
 * memdbg's own calls, checks, reports) is in its slow_ form, which is
 * kept out of line so that the fast path saves and restores nothing.  A
 * report's frame 0 is still the interceptor: md_capture_stack keeps the
 * outermost of memdbg's frames. */
#define SLOW static __attribute__((noinline))
/* This file is built with sibling calls on (memdbg/lib.mk), so that the
 * fast path jumps to glibc's function instead of calling it; the call to
 * the slow_ form must stay a call, or the interceptor's frame would be
 * gone from a report: the empty asm after it keeps it one. */
#define KEEP_FRAME(call)                     \
    do {                                     \
        __typeof__(call) kept_ = (call);     \
        __asm__ volatile("" ::: "memory");   \
        return kept_;                        \
    } while (0)

ALWAYS_INLINE bool ready(void)
{
    return __builtin_expect(__atomic_load_n(&resolved, __ATOMIC_ACQUIRE), 1);
}

/* before start-up the arena is empty: every address is outside */
ALWAYS_INLINE bool outside_arena(const void *p)
{
    return __builtin_expect((uintptr_t)p - md_heap.base >= md_heap.size, 1);
}

/* two ranges of n bytes do not overlap (what check_overlap reports) */
ALWAYS_INLINE bool apart(const void *a, const void *b, size_t n)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return !n || x >= y + n || y >= x + n;
}

SLOW void *slow_memcpy(void *d, const void *s, size_t n)
{
    if (!resolve()) return loop_memmove(d, s, n);
    if (checking()) check_copy("memcpy", d, s, n);
    return REAL(R_MEMCPY, copy_fn)(d, s, n);
}

MEMDBG_API void *memcpy(void *d, const void *s, size_t n)
{
    if (ready() && outside_arena(d) && outside_arena(s) && apart(d, s, n)) return REAL(R_MEMCPY, copy_fn)(d, s, n);
    KEEP_FRAME(slow_memcpy(d, s, n));
}

SLOW void *slow_mempcpy(void *d, const void *s, size_t n)
{
    if (!resolve()) return (char *)loop_memmove(d, s, n) + n;
    if (checking()) check_copy("mempcpy", d, s, n);
    return REAL(R_MEMPCPY, copy_fn)(d, s, n);
}

MEMDBG_API void *mempcpy(void *d, const void *s, size_t n)
{
    if (ready() && outside_arena(d) && outside_arena(s) && apart(d, s, n)) return REAL(R_MEMPCPY, copy_fn)(d, s, n);
    KEEP_FRAME(slow_mempcpy(d, s, n));
}

SLOW void *slow_memmove(void *d, const void *s, size_t n)
{
    if (!resolve()) return loop_memmove(d, s, n);
    if (checking()) {
        check_range(s, n, READ);
        check_range(d, n, WRITE);
    }
    return REAL(R_MEMMOVE, copy_fn)(d, s, n);
}

MEMDBG_API void *memmove(void *d, const void *s, size_t n)
{
    if (ready() && outside_arena(d) && outside_arena(s)) return REAL(R_MEMMOVE, copy_fn)(d, s, n);
    KEEP_FRAME(slow_memmove(d, s, n));
}

SLOW void *slow_memset(void *d, int c, size_t n)
{
    if (!resolve()) return loop_memset(d, c, n);
    if (checking()) check_range(d, n, WRITE);
    return REAL(R_MEMSET, set_fn)(d, c, n);
}

MEMDBG_API void *memset(void *d, int c, size_t n)
{
    if (ready() && outside_arena(d)) return REAL(R_MEMSET, set_fn)(d, c, n);
    KEEP_FRAME(slow_memset(d, c, n));
}

SLOW int slow_memcmp(const void *a, const void *b, size_t n)
{
    if (!resolve()) return loop_memcmp(a, b, n);
    if (checking()) {   /* the whole ranges, as ASan's strict_memcmp */
        check_range(a, n, READ);
        check_range(b, n, READ);
    }
    return REAL(R_MEMCMP, cmp_fn)(a, b, n);
}

MEMDBG_API int memcmp(const void *a, const void *b, size_t n)
{
    if (ready() && outside_arena(a) && outside_arena(b)) return REAL(R_MEMCMP, cmp_fn)(a, b, n);
    KEEP_FRAME(slow_memcmp(a, b, n));
}

SLOW void *slow_memchr(const void *s, int c, size_t n)
{
    if (!resolve()) return loop_memchr(s, c, n);
    if (checking()) return checked_memchr(s, c, n);
    return REAL(R_MEMCHR, chr_fn)(s, c, n);
}

MEMDBG_API void *memchr(const void *s, int c, size_t n)
{
    if (ready() && outside_arena(s)) return REAL(R_MEMCHR, chr_fn)(s, c, n);
    KEEP_FRAME(slow_memchr(s, c, n));
}

SLOW size_t slow_strlen(const char *s)
{
    if (!resolve()) return loop_strnlen(s, SIZE_MAX);
    if (checking()) return checked_strnlen(s, SIZE_MAX);
    return REAL(R_STRLEN, len_fn)(s);
}

MEMDBG_API size_t strlen(const char *s)
{
    if (ready() && outside_arena(s)) return REAL(R_STRLEN, len_fn)(s);
    KEEP_FRAME(slow_strlen(s));
}

SLOW size_t slow_strnlen(const char *s, size_t max)
{
    if (!resolve()) return loop_strnlen(s, max);
    if (checking()) return checked_strnlen(s, max);
    return REAL(R_STRNLEN, nlen_fn)(s, max);
}

MEMDBG_API size_t strnlen(const char *s, size_t max)
{
    if (ready() && outside_arena(s)) return REAL(R_STRNLEN, nlen_fn)(s, max);
    KEEP_FRAME(slow_strnlen(s, max));
}

SLOW int slow_strcmp(const char *a, const char *b)
{
    if (!resolve()) return loop_strncmp(a, b, SIZE_MAX);
    if (checking()) return checked_strncmp(a, b, SIZE_MAX);
    return REAL(R_STRCMP, scmp_fn)(a, b);
}

MEMDBG_API int strcmp(const char *a, const char *b)
{
    if (ready() && outside_arena(a) && outside_arena(b)) return REAL(R_STRCMP, scmp_fn)(a, b);
    KEEP_FRAME(slow_strcmp(a, b));
}

SLOW int slow_strncmp(const char *a, const char *b, size_t n)
{
    if (!resolve()) return loop_strncmp(a, b, n);
    if (checking()) return checked_strncmp(a, b, n);
    return REAL(R_STRNCMP, sncmp_fn)(a, b, n);
}

MEMDBG_API int strncmp(const char *a, const char *b, size_t n)
{
    if (ready() && outside_arena(a) && outside_arena(b)) return REAL(R_STRNCMP, sncmp_fn)(a, b, n);
    KEEP_FRAME(slow_strncmp(a, b, n));
}

SLOW char *slow_strchr(const char *s, int c)
{
    if (!resolve()) return loop_strchr(s, c, false);
    if (checking()) check_strchr(s, c);
    return REAL(R_STRCHR, schr_fn)(s, c);
}

MEMDBG_API char *strchr(const char *s, int c)
{
    if (ready() && outside_arena(s)) return REAL(R_STRCHR, schr_fn)(s, c);
    KEEP_FRAME(slow_strchr(s, c));
}

SLOW char *slow_strrchr(const char *s, int c)
{
    if (!resolve()) return loop_strchr(s, c, true);
    if (checking()) check_strchr(s, 0);   /* reads the whole string */
    return REAL(R_STRRCHR, schr_fn)(s, c);
}

MEMDBG_API char *strrchr(const char *s, int c)
{
    if (ready() && outside_arena(s)) return REAL(R_STRRCHR, schr_fn)(s, c);
    KEEP_FRAME(slow_strrchr(s, c));
}

SLOW char *slow_strcpy(char *d, const char *s)
{
    if (!resolve()) return loop_memmove(d, s, loop_strnlen(s, SIZE_MAX) + 1);
    if (checking()) check_strcpy("strcpy", d, s);
    return REAL(R_STRCPY, scpy_fn)(d, s);
}

MEMDBG_API char *strcpy(char *d, const char *s)
{
    if (ready() && outside_arena(d) && outside_arena(s)) {
        size_t n = REAL(R_STRLEN, len_fn)(s) + 1;   /* the overlap check needs it anyway */
        if (apart(d, s, n)) return REAL(R_MEMCPY, copy_fn)(d, s, n);   /* memcpy returns d */
    }
    KEEP_FRAME(slow_strcpy(d, s));
}

SLOW char *slow_stpcpy(char *d, const char *s)
{
    if (!resolve()) {
        size_t n = loop_strnlen(s, SIZE_MAX);
        return (char *)loop_memmove(d, s, n + 1) + n;
    }
    if (checking()) check_strcpy("stpcpy", d, s);
    return REAL(R_STPCPY, scpy_fn)(d, s);
}

MEMDBG_API char *stpcpy(char *d, const char *s)
{
    if (ready() && outside_arena(d) && outside_arena(s)) {
        size_t n = REAL(R_STRLEN, len_fn)(s) + 1;   /* the overlap check needs it anyway */
        if (apart(d, s, n)) {
            REAL(R_MEMCPY, copy_fn)(d, s, n);
            return d + n - 1;
        }
    }
    KEEP_FRAME(slow_stpcpy(d, s));
}

MEMDBG_API char *strncpy(char *d, const char *s, size_t n)
{
    if (!resolve()) return loop_strncpy(d, s, n);
    if (checking()) check_strncpy("strncpy", d, s, n);
    return REAL(R_STRNCPY, sncpy_fn)(d, s, n);
}

MEMDBG_API char *strcat(char *d, const char *s)
{
    if (!resolve()) {
        strcpy(d + loop_strnlen(d, SIZE_MAX), s);
        return d;
    }
    if (checking()) check_strcat("strcat", d, s, SIZE_MAX);
    return REAL(R_STRCAT, scpy_fn)(d, s);
}

MEMDBG_API char *strncat(char *d, const char *s, size_t n)
{
    if (!resolve()) {
        char *end = d + loop_strnlen(d, SIZE_MAX);
        size_t len = loop_strnlen(s, n);
        loop_memmove(end, s, len);
        end[len] = 0;
        return d;
    }
    if (checking()) check_strcat("strncat", d, s, n);
    return REAL(R_STRNCAT, sncpy_fn)(d, s, n);
}

/* _FORTIFY_SOURCE's forms: the heap check first (it knows the block), then
 * glibc's, which compares with the size the compiler knew and aborts. */

MEMDBG_API void *__memcpy_chk(void *d, const void *s, size_t n, size_t dlen)
{
    if (!resolve()) return loop_memmove(d, s, n);
    if (checking()) check_copy("memcpy", d, s, n);
    return REAL(R_MEMCPY_CHK, copy_chk_fn)(d, s, n, dlen);
}

MEMDBG_API void *__mempcpy_chk(void *d, const void *s, size_t n, size_t dlen)
{
    if (!resolve()) return (char *)loop_memmove(d, s, n) + n;
    if (checking()) check_copy("mempcpy", d, s, n);
    return REAL(R_MEMPCPY_CHK, copy_chk_fn)(d, s, n, dlen);
}

MEMDBG_API void *__memmove_chk(void *d, const void *s, size_t n, size_t dlen)
{
    if (!resolve()) return loop_memmove(d, s, n);
    if (checking()) {
        check_range(s, n, READ);
        check_range(d, n, WRITE);
    }
    return REAL(R_MEMMOVE_CHK, copy_chk_fn)(d, s, n, dlen);
}

MEMDBG_API void *__memset_chk(void *d, int c, size_t n, size_t dlen)
{
    if (!resolve()) return loop_memset(d, c, n);
    if (checking()) check_range(d, n, WRITE);
    return REAL(R_MEMSET_CHK, set_chk_fn)(d, c, n, dlen);
}

MEMDBG_API char *__strcpy_chk(char *d, const char *s, size_t dlen)
{
    if (!resolve()) return strcpy(d, s);
    if (checking()) check_strcpy("strcpy", d, s);
    return REAL(R_STRCPY_CHK, scpy_chk_fn)(d, s, dlen);
}

MEMDBG_API char *__stpcpy_chk(char *d, const char *s, size_t dlen)
{
    if (!resolve()) return stpcpy(d, s);
    if (checking()) check_strcpy("stpcpy", d, s);
    return REAL(R_STPCPY_CHK, scpy_chk_fn)(d, s, dlen);
}

MEMDBG_API char *__strncpy_chk(char *d, const char *s, size_t n, size_t dlen)
{
    if (!resolve()) return loop_strncpy(d, s, n);
    if (checking()) check_strncpy("strncpy", d, s, n);
    return REAL(R_STRNCPY_CHK, sncpy_chk_fn)(d, s, n, dlen);
}

MEMDBG_API char *__strcat_chk(char *d, const char *s, size_t dlen)
{
    if (!resolve()) return strcat(d, s);
    if (checking()) check_strcat("strcat", d, s, SIZE_MAX);
    return REAL(R_STRCAT_CHK, scpy_chk_fn)(d, s, dlen);
}

MEMDBG_API char *__strncat_chk(char *d, const char *s, size_t n, size_t dlen)
{
    if (!resolve()) return strncat(d, s, n);
    if (checking()) check_strcat("strncat", d, s, n);
    return REAL(R_STRNCAT_CHK, sncpy_chk_fn)(d, s, n, dlen);
}
