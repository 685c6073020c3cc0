/* SPDX-License-Identifier: MIT */
/* The LeakSanitizer interface (sanitizer/lsan_interface.h), exported from
 * libmemdbg.so so that programs written for LSan work unchanged: they
 * declare these functions themselves (often weak) and call them.
 *
 *  __lsan_ignore_object(p)      the block holding p is never reported; it is
 *                               a root (what it points to is not either)
 *  __lsan_disable/__lsan_enable blocks this thread allocates in between are
 *                               ignored that way (nestable, per thread)
 *  __lsan_do_leak_check()       the exit-time check, now; exits with
 *                               exitcode on leaks; no check at exit after it
 *  __lsan_do_recoverable_leak_check()  a check now; 1 if leaks were found
 *  __lsan_register_root_region / __lsan_unregister_root_region
 *                               memory (e.g. the program's own mmap) that is
 *                               scanned as a root
 * Ignore marks are one byte per slot, set or cleared at every allocation
 * once any of this was used (alloc/leak_ignore.c). */

#include "leak/leak.h"
#include <string.h>


static void warn(const char *what)
{
    char mem[256];
    struct md_buf buf, *b = &buf;
    md_warn_begin(b, mem, sizeof mem);
    md_puts(b, what);
    md_putc(b, '\n');
    md_warn_end(b);
}

MEMDBG_API void __lsan_ignore_object(const void *p)
{
    md_ensure_init();
    md_in_runtime++;
    md_heap_lock();
    struct md_slot *s = md_slot_of_addr((uintptr_t)p);
    bool ok = s && s->state == MD_SLOT_LIVE && (uintptr_t)p >= s->user && (uintptr_t)p <= s->user + s->size;
    if (ok) md_leak_ignore_slot((uint32_t)(s - md_heap.slots));
    md_heap_unlock();
    md_in_runtime--;
    if (!ok && md_opt.verbosity >= 1) warn("__lsan_ignore_object(): not a live heap block; ignored");
}

MEMDBG_API void __lsan_disable(void)
{
    md_ensure_init();
    if (!__atomic_load_n(&md_leak_ignore_on, __ATOMIC_ACQUIRE)) {
        md_in_runtime++;
        md_heap_lock();
        md_leak_marks_on();
        md_heap_unlock();
        md_in_runtime--;
    }
    md_leak_disable_thread();
}

MEMDBG_API void __lsan_enable(void)
{
    if (!md_leak_enable_thread()) warn("unmatched call to __lsan_enable(); ignored");
}

MEMDBG_API void __lsan_do_leak_check(void)
{
    md_leak_check_now(true);
}

MEMDBG_API int __lsan_do_recoverable_leak_check(void)
{
    return md_leak_check_now(false);
}

MEMDBG_API void __lsan_register_root_region(const void *p, size_t size)
{
    md_ensure_init();
    md_leak_root_region(p, size, true);
}

MEMDBG_API void __lsan_unregister_root_region(const void *p, size_t size)
{
    md_ensure_init();
    md_leak_root_region(p, size, false);
}
