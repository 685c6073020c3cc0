/* SPDX-License-Identifier: MIT */
// operator new/delete in all forms, clean: no report, bad_alloc on overflow.

// TEST: C++ new/delete in all forms
// RUN: %memdbg %t
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok

#include <cstdio>
#include <cstdint>
#include <new>
#include <vector>
#include <string>
#include <map>

struct alignas(256) Wide { char c[300]; };

int main()
{
    int fails = 0;
    int *a = new int(3); delete a;
    int *b = new int[10]; delete[] b;
    int *c = new (std::nothrow) int(4); delete c;
    int *d = new (std::nothrow) int[4]; delete[] d;
    Wide *w = new Wide; if ((uintptr_t)w % 256) fails++; delete w;
    Wide *wa = new Wide[3]; if ((uintptr_t)wa % 256) fails++; delete[] wa;
    Wide *wn = new (std::nothrow) Wide; if ((uintptr_t)wn % 256) fails++; delete wn;
    ::operator delete(::operator new(10), 10);
    ::operator delete[](::operator new[](10), 10);
    ::operator delete(::operator new(10, std::align_val_t(64)), std::align_val_t(64));
    ::operator delete(::operator new(10, std::align_val_t(64)), 10, std::align_val_t(64));
    try {
        volatile size_t huge = SIZE_MAX / 2;
        char *x = new char[huge];
        fails++;
        delete[] x;
    } catch (const std::bad_alloc &) {
    }
    volatile size_t huge2 = SIZE_MAX / 2;
    if (new (std::nothrow) char[huge2] != nullptr) fails++;
    std::map<std::string, std::vector<int>> m;
    for (int i = 0; i < 2000; i++) m[std::to_string(i)].push_back(i);
    m.clear();
    if (fails) { std::printf("fails=%d\n", fails); return 1; }
    std::puts("ok");
    return 0;
}
