/* SPDX-License-Identifier: MIT */
// C++ operator new/delete in every form, so that new[]/free and new/delete[]
// mismatches are seen: each form records or checks its allocation kind.
#include <new>
#include <cstddef>
#include <cerrno>
#include <cstdlib>
#include <dlfcn.h>
#include <unistd.h>

extern "C" {
void *md_alloc(size_t size, size_t align, int kind, bool zero) __attribute__((visibility("hidden")));
void md_free(void *p, int dealloc) __attribute__((visibility("hidden")));
void md_delete(void *p, int dealloc, size_t size, size_t align) __attribute__((visibility("hidden")));
// sample_rate > 1: glibc's block for an unsampled new (NULL: the long
// way), glibc's free for an unsampled delete (false: the long way)
void *md_new_unsampled(size_t size) __attribute__((visibility("hidden")));
bool md_delete_unsampled(void *p) __attribute__((visibility("hidden")));
}

// libmemdbg.so does not link libstdc++: mapping and relocating it cost
// every process's start-up, and a C program never needs it.  What these
// operators take from the C++ runtime are weak references, which the
// loader binds when the program has libstdc++ (every C++ program does).
// A C++ library that a C program loads with RTLD_LOCAL brings its own
// libstdc++, out of the weak references' reach: there dlsym finds them.
std::new_handler cxx_get_new_handler() noexcept __asm__("_ZSt15get_new_handlerv") __attribute__((weak));
void cxx_throw_bad_alloc() __asm__("_ZSt17__throw_bad_allocv") __attribute__((weak, noreturn));
// The catch below needs these two and the personality routine, which
// memdbg/lib.mk makes weak in the object (no declaration reaches it).
extern "C" {
void *__cxa_begin_catch(void *) noexcept __attribute__((weak));
void __cxa_end_catch() __attribute__((weak));
}

#define API __attribute__((visibility("default")))

namespace {
enum { MD_KIND_MALLOC = 0, MD_KIND_NEW, MD_KIND_NEW_ARRAY };
enum { MD_DEALLOC_FREE = 0, MD_DEALLOC_DELETE, MD_DEALLOC_DELETE_ARRAY };

// A function of the C++ runtime: the weak reference, else the loaded
// libstdc++'s (only when an allocation failed).
void *runtime_function(void *weak_ref, const char *name)
{
    if (weak_ref) return weak_ref;
    void *lib = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD);
    return lib ? dlsym(lib, name) : nullptr;
}

std::new_handler current_new_handler()
{
    auto get = (std::new_handler(*)())runtime_function((void *)&cxx_get_new_handler, "_ZSt15get_new_handlerv");
    return get ? get() : nullptr;
}

[[noreturn]] void throw_bad_alloc()
{
    auto thrower = (void (*)())runtime_function((void *)&cxx_throw_bad_alloc, "_ZSt17__throw_bad_allocv");
    if (thrower) thrower();
    static const char msg[] = "memdbg: operator new: out of memory, and no C++ runtime loaded to throw "
                              "std::bad_alloc\n";
    ssize_t r = write(2, msg, sizeof msg - 1);
    (void)r;
    abort();
}

// Throwing forms: retry through the new_handler, then std::bad_alloc.
void *new_throw(std::size_t n, std::size_t align, int kind)
{
    if (!align) {
        void *p = md_new_unsampled(n);
        if (p) return p;
    }
    for (;;) {
        void *p = md_alloc(n, align, kind, false);
        if (p) return p;
        std::new_handler h = current_new_handler();
        if (!h) throw_bad_alloc();
        h();
    }
}

// Nothrow forms: the same, with NULL where those throw.
void *new_nothrow(std::size_t n, std::size_t align, int kind) noexcept
{
    if (!align) {
        void *p = md_new_unsampled(n);
        if (p) return p;
    }
    for (;;) {
        void *p = md_alloc(n, align, kind, false);
        if (p) return p;
        std::new_handler h = current_new_handler();
        if (!h) return nullptr;
        try {
            h();
        } catch (...) {
            return nullptr;
        }
    }
}
}  // namespace

API void *operator new(std::size_t n) { return new_throw(n, 0, MD_KIND_NEW); }
API void *operator new[](std::size_t n) { return new_throw(n, 0, MD_KIND_NEW_ARRAY); }
API void *operator new(std::size_t n, const std::nothrow_t &) noexcept { return new_nothrow(n, 0, MD_KIND_NEW); }
API void *operator new[](std::size_t n, const std::nothrow_t &) noexcept { return new_nothrow(n, 0, MD_KIND_NEW_ARRAY); }
API void *operator new(std::size_t n, std::align_val_t a) { return new_throw(n, (std::size_t)a, MD_KIND_NEW); }
API void *operator new[](std::size_t n, std::align_val_t a) { return new_throw(n, (std::size_t)a, MD_KIND_NEW_ARRAY); }
API void *operator new(std::size_t n, std::align_val_t a, const std::nothrow_t &) noexcept
{ return new_nothrow(n, (std::size_t)a, MD_KIND_NEW); }
API void *operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t &) noexcept
{ return new_nothrow(n, (std::size_t)a, MD_KIND_NEW_ARRAY); }

// Every delete goes through md_delete, which checks the size and
// alignment the form states (none: NO_SIZE, 0) against the block's.
constexpr std::size_t NO_SIZE = (std::size_t)-1;
namespace {
inline void delete_block(void *p, int dealloc, std::size_t size, std::size_t align)
{
    if (!md_delete_unsampled(p)) md_delete(p, dealloc, size, align);
}
}  // namespace
API void operator delete(void *p) noexcept { delete_block(p, MD_DEALLOC_DELETE, NO_SIZE, 0); }
API void operator delete[](void *p) noexcept { delete_block(p, MD_DEALLOC_DELETE_ARRAY, NO_SIZE, 0); }
API void operator delete(void *p, std::size_t n) noexcept { delete_block(p, MD_DEALLOC_DELETE, n, 0); }
API void operator delete[](void *p, std::size_t n) noexcept { delete_block(p, MD_DEALLOC_DELETE_ARRAY, n, 0); }
API void operator delete(void *p, const std::nothrow_t &) noexcept { delete_block(p, MD_DEALLOC_DELETE, NO_SIZE, 0); }
API void operator delete[](void *p, const std::nothrow_t &) noexcept
{ delete_block(p, MD_DEALLOC_DELETE_ARRAY, NO_SIZE, 0); }
API void operator delete(void *p, std::align_val_t a) noexcept
{ delete_block(p, MD_DEALLOC_DELETE, NO_SIZE, (std::size_t)a); }
API void operator delete[](void *p, std::align_val_t a) noexcept
{ delete_block(p, MD_DEALLOC_DELETE_ARRAY, NO_SIZE, (std::size_t)a); }
API void operator delete(void *p, std::size_t n, std::align_val_t a) noexcept
{ delete_block(p, MD_DEALLOC_DELETE, n, (std::size_t)a); }
API void operator delete[](void *p, std::size_t n, std::align_val_t a) noexcept
{ delete_block(p, MD_DEALLOC_DELETE_ARRAY, n, (std::size_t)a); }
API void operator delete(void *p, std::align_val_t a, const std::nothrow_t &) noexcept
{ delete_block(p, MD_DEALLOC_DELETE, NO_SIZE, (std::size_t)a); }
API void operator delete[](void *p, std::align_val_t a, const std::nothrow_t &) noexcept
{ delete_block(p, MD_DEALLOC_DELETE_ARRAY, NO_SIZE, (std::size_t)a); }
