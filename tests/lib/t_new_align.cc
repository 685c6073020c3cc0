// SPDX-License-Identifier: MIT
// operator new keeps what compilers assume of it: 16-byte alignment from
// 16 bytes on (__STDCPP_DEFAULT_NEW_ALIGNMENT__), the largest power of two
// not above the size below that; aligned new its own alignment.  Prints
// the number of blocks that break it.
// TEST: operator new: 16-byte alignment from 16 bytes on, aligned new as asked
// RUN: %memdbg %t
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^misaligned 0$

#include <cstdint>
#include <cstdio>
#include <new>

static std::size_t expected(std::size_t n)
{
    if (n >= __STDCPP_DEFAULT_NEW_ALIGNMENT__) return __STDCPP_DEFAULT_NEW_ALIGNMENT__;
    std::size_t a = 1;
    while (a * 2 <= n) a *= 2;
    return a;
}

int main()
{
    int wrong = 0;
    for (std::size_t n = 1; n <= 100; n++) {
        void *p = operator new(n);
        char *q = new char[n];
        void *r = operator new(n, std::align_val_t(64));
        if ((std::uintptr_t)p % expected(n) || (std::uintptr_t)q % expected(n) || (std::uintptr_t)r % 64) {
            std::printf("size %zu: new %p new[] %p aligned new %p\n", n, p, (void *)q, r);
            wrong++;
        }
        operator delete(p);
        delete[] q;
        operator delete(r, std::align_val_t(64));
    }
    std::printf("misaligned %d\n", wrong);
    return 0;
}
