/* SPDX-License-Identifier: MIT */
// C++ operator new/delete in every form, so that new[]/free and new/delete[]
// mismatches are seen: each form records or checks its allocation kind.
#include <new>
#include <cstddef>
#include <cerrno>

extern "C" {
void *md_alloc(size_t size, size_t align, int kind, bool zero) __attribute__((visibility("hidden")));
void md_free(void *p, int dealloc) __attribute__((visibility("hidden")));
void md_delete(void *p, int dealloc, size_t size, size_t align) __attribute__((visibility("hidden")));
}

#define API __attribute__((visibility("default")))

namespace {
enum { MD_KIND_MALLOC = 0, MD_KIND_NEW, MD_KIND_NEW_ARRAY };
enum { MD_DEALLOC_FREE = 0, MD_DEALLOC_DELETE, MD_DEALLOC_DELETE_ARRAY };

// Throwing forms: retry through the new_handler, then std::bad_alloc.
void *new_throw(std::size_t n, std::size_t align, int kind)
{
    for (;;) {
        void *p = md_alloc(n, align, kind, false);
        if (p) return p;
        std::new_handler h = std::get_new_handler();
        if (!h) throw std::bad_alloc();
        h();
    }
}

void *new_nothrow(std::size_t n, std::size_t align, int kind) noexcept
{
    try {
        return new_throw(n, align, kind);
    } catch (...) {
        return nullptr;
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
API void operator delete(void *p) noexcept { md_delete(p, MD_DEALLOC_DELETE, NO_SIZE, 0); }
API void operator delete[](void *p) noexcept { md_delete(p, MD_DEALLOC_DELETE_ARRAY, NO_SIZE, 0); }
API void operator delete(void *p, std::size_t n) noexcept { md_delete(p, MD_DEALLOC_DELETE, n, 0); }
API void operator delete[](void *p, std::size_t n) noexcept { md_delete(p, MD_DEALLOC_DELETE_ARRAY, n, 0); }
API void operator delete(void *p, const std::nothrow_t &) noexcept { md_delete(p, MD_DEALLOC_DELETE, NO_SIZE, 0); }
API void operator delete[](void *p, const std::nothrow_t &) noexcept
{ md_delete(p, MD_DEALLOC_DELETE_ARRAY, NO_SIZE, 0); }
API void operator delete(void *p, std::align_val_t a) noexcept
{ md_delete(p, MD_DEALLOC_DELETE, NO_SIZE, (std::size_t)a); }
API void operator delete[](void *p, std::align_val_t a) noexcept
{ md_delete(p, MD_DEALLOC_DELETE_ARRAY, NO_SIZE, (std::size_t)a); }
API void operator delete(void *p, std::size_t n, std::align_val_t a) noexcept
{ md_delete(p, MD_DEALLOC_DELETE, n, (std::size_t)a); }
API void operator delete[](void *p, std::size_t n, std::align_val_t a) noexcept
{ md_delete(p, MD_DEALLOC_DELETE_ARRAY, n, (std::size_t)a); }
API void operator delete(void *p, std::align_val_t a, const std::nothrow_t &) noexcept
{ md_delete(p, MD_DEALLOC_DELETE, NO_SIZE, (std::size_t)a); }
API void operator delete[](void *p, std::align_val_t a, const std::nothrow_t &) noexcept
{ md_delete(p, MD_DEALLOC_DELETE_ARRAY, NO_SIZE, (std::size_t)a); }
