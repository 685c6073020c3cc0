/* SPDX-License-Identifier: MIT */
// operator new's new_handler and bad_alloc come from the program's C++
// runtime, which libmemdbg.so does not link: a handler is called and
// retried, bad_alloc is thrown when there is none, and the nothrow forms
// give NULL when the handler throws.

// TEST: C++ new_handler retried, then bad_alloc; nothrow new NULL after a throwing handler
// RUN: %memdbg %t
// EXIT: 0
// CHECK-OUT: ^handler called 1 time, then bad_alloc$
// CHECK-OUT: ^nothrow new: NULL after the handler threw$
// CHECK-OUT: ^nothrow new\[\]: NULL after the handler threw$
// CHECK-NOT: ERROR

#include <cstdio>
#include <new>

static int calls;

static void give_up()
{
    calls++;
    std::set_new_handler(nullptr);   // the retry then throws
}

static void throw_bad_alloc()
{
    throw std::bad_alloc();
}

int main()
{
    volatile std::size_t huge = std::size_t(1) << 62;
    std::set_new_handler(give_up);
    try {
        char *p = new char[huge];
        std::printf("allocated %p\n", (void *)p);
    } catch (const std::bad_alloc &) {
        std::printf("handler called %d time, then bad_alloc\n", calls);
    }
    std::set_new_handler(throw_bad_alloc);
    int *one = new (std::nothrow) int[huge / 8];
    std::printf("nothrow new[]: %s\n", one ? "a block" : "NULL after the handler threw");
    struct Big { char bytes[std::size_t(1) << 62]; };   // more than any address space
    Big *big = new (std::nothrow) Big;
    std::printf("nothrow new: %s\n", big ? "a block" : "NULL after the handler threw");
    return 0;
}
