// SPDX-License-Identifier: MIT
// operator new of blocks larger than the room the arena leaves under an
// address-space limit (ulimit -v 524288, 512 MiB): new[] of 300 MiB is
// served, as with glibc; a size beyond the limit throws std::bad_alloc,
// and the nothrow form returns nullptr.  The program sets the limit and
// executes itself, so memdbg starts under it.

// TEST: ulimit -v 512 MiB: new[] of 300 MiB is served, too much throws bad_alloc
// RUN: %memdbg %t 524288
// EXIT: 0
// CHECK-NOT: ERROR
// CHECK-OUT: ^new\[\] 300 MiB: written at both ends$
// CHECK-OUT: ^aligned new 300 MiB: aligned, written$
// CHECK-OUT: ^new\[\] 600 MiB: std::bad_alloc$
// CHECK-OUT: ^nothrow new\[\] 600 MiB: nullptr$

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <sys/resource.h>
#include <unistd.h>

static const size_t MIB = size_t(1) << 20;

struct alignas(4096) page_t { char b[4096]; };

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    if (strcmp(argv[1], "run") != 0) {
        struct rlimit rl;
        rl.rlim_cur = rl.rlim_max = strtoull(argv[1], 0, 10) * 1024;
        if (setrlimit(RLIMIT_AS, &rl) != 0) { perror("setrlimit"); return 2; }
        char run[] = "run";
        char *args[] = { argv[0], run, 0 };
        execv("/proc/self/exe", args);
        perror("execv");
        return 2;
    }
    size_t n = 300 * MIB;
    try {
        char *p = new char[n];
        p[0] = 'a';
        p[n - 1] = 'z';
        printf("new[] 300 MiB: written at both ends\n");
        delete[] p;
    } catch (const std::bad_alloc &) {
        printf("new[] 300 MiB: std::bad_alloc\n");
    }
    try {
        page_t *pg = new page_t[n / sizeof(page_t)];
        bool aligned = (reinterpret_cast<uintptr_t>(pg) & 4095) == 0;
        pg[0].b[0] = 1;
        pg[n / sizeof(page_t) - 1].b[4095] = 1;
        printf("aligned new 300 MiB: %s, written\n", aligned ? "aligned" : "NOT aligned");
        delete[] pg;
    } catch (const std::bad_alloc &) {
        printf("aligned new 300 MiB: std::bad_alloc\n");
    }
    volatile size_t too_much = 600 * MIB;
    try {
        char *q = new char[too_much];
        printf("new[] 600 MiB: served\n");
        delete[] q;
    } catch (const std::bad_alloc &) {
        printf("new[] 600 MiB: std::bad_alloc\n");
    }
    char *r = new (std::nothrow) char[too_much];
    printf("nothrow new[] 600 MiB: %s\n", r ? "served" : "nullptr");
    delete[] r;
    return 0;
}
