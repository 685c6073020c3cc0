/* SPDX-License-Identifier: MIT */

// TEST: bad-free of an interior pointer
// RUN: %memdbg %t interior
// EXIT: 1
// CHECK-ERROR: bad-free
// CHECK: is located 8 bytes inside of 64-byte region
// CHECK-STACK: ^free of 0x | free | bad_free_interior | main
// CHECK-STACK: ^allocated by thread T0 here: | malloc | make_buffer | main
//
// TEST: bad-free of a stack address
// RUN: %memdbg %t stack
// EXIT: 1
// CHECK-ERROR: bad-free
// CHECK: was not allocated by malloc
// CHECK-STACK: ^free of 0x | free | bad_free_stack | main
//
// TEST: sampled mode: bad-free of a stack address is reported, not passed to glibc
// RUN: %memdbg -o sample_rate=1000000000 %t stack
// EXIT: 1
// CHECK-ERROR: bad-free
// CHECK: was not allocated by malloc
// CHECK-STACK: ^free of 0x | free | bad_free_stack | main

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *make_buffer(size_t n) { return malloc(n); }
void bad_free_interior(char *p) { free(p + 8); }
void bad_free_stack(void) { char local[16]; memset(local, 0, sizeof local); free(local); }

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "interior";
    if (!strcmp(mode, "interior")) bad_free_interior(make_buffer(64));
    else bad_free_stack();
    puts("survived");
    return 0;
}
