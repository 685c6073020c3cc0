/* SPDX-License-Identifier: MIT */
/* Use-after-free long after the free: the freed block's addresses stay
 * guarded until the arena's never-used address space runs out, so the
 * report names the right block with its stacks; once addresses had to be
 * reused, the report says so. */

// TEST: long window: a use-after-free 10 million allocations after the free (sample_rate=1000)
// RUN: %memdbg -o sample_rate=1000 %t small
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
// CHECK: READ of size 1 at 0x[0-9a-f]+ thread T0
// CHECK: is located 3 bytes inside of 24-byte region
// CHECK-STACK: ^freed by thread T0 here: | free | free_victim | main
// CHECK-STACK: ^previously allocated by thread T0 here: | malloc | make_victim | main
// CHECK-NOT: this address was reused
//
// TEST: long window: a use-after-free after 5 GiB of freed 1 MiB blocks
// RUN: %memdbg %t big
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
// CHECK: is located 3 bytes inside of 1048576-byte region
// CHECK-STACK: ^freed by thread T0 here: | free | free_victim | main
// CHECK-STACK: ^previously allocated by thread T0 here: | malloc | make_victim | main
// CHECK-NOT: this address was reused
//
// TEST: long window: once a 16 MiB arena had to reuse the address, the report says so
// RUN: %memdbg -o arena_size=16M %t reuse
// EXIT: 1
// CHECK: ERROR: memdbg: (heap-use-after-free|heap-buffer-overflow|heap-buffer-underflow|wild-access)
// CHECK: ^note: this address was reused: [0-9]+ (or more )?blocks have lain there since the start
// RUN: %memdbg -o arena_size=16M:log_format=json %t reuse
// EXIT: 1
// CHECK: ^\{.*"address_reused":[0-9]+,

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uintptr_t arena_lo, arena_hi;

static int guarded(const void *p) { return (uintptr_t)p - arena_lo < arena_hi - arena_lo; }

/* A block in memdbg's heap (with sampling, the first one drawn there). */
__attribute__((noinline)) char *make_victim(size_t size)
{
    for (;;) {
        char *p = malloc(size);
        if (guarded(p)) return p;
        free(p);
    }
}

__attribute__((noinline)) void free_victim(char *p) { free(p); }

int main(int argc, char **argv)
{
    int (*heap_range)(void **, size_t *, const char **) =
        (int (*)(void **, size_t *, const char **))dlsym(RTLD_DEFAULT, "memdbg_heap_range");
    if (!heap_range) return 3;
    void *lo;
    size_t size;
    const char *backend;
    heap_range(&lo, &size, &backend);
    arena_lo = (uintptr_t)lo;
    arena_hi = arena_lo + size;
    const char *what = argc > 1 ? argv[1] : "small";
    size_t victim_size = !strcmp(what, "big") ? 1 << 20 : !strcmp(what, "reuse") ? 20000 : 24;
    char *victim = make_victim(victim_size);
    memset(victim, 'v', victim_size);
    free_victim(victim);
    if (!strcmp(what, "small")) {          /* 10 million small allocations, about 10,000 guarded */
        for (long i = 0; i < 10000000; i++) free(malloc(16 + (i & 7) * 8));
    } else if (!strcmp(what, "big")) {     /* 5 GiB of address space: more than 4 GiB */
        for (int i = 0; i < 4000; i++) free(malloc(1 << 20));
    } else {                               /* 5-page blocks: no thread cache; 3 times a 16 MiB arena */
        for (int i = 0; i < 2000; i++) free(malloc(20000));
    }
    printf("%c\n", ((volatile char *)victim)[3]);
    printf("not caught\n");
    return 0;
}
