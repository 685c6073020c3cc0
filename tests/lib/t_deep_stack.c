/* SPDX-License-Identifier: MIT */
/* Stacks up to 256 frames (malloc_context_size, as ASan's): a block
 * allocated and freed at recursion depth 200 keeps all 200 frames of
 * both stacks. */

// TEST: malloc_context_size=256 keeps a 200-deep allocation and free stack
// RUN: %memdbg -o malloc_context_size=256 %t
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
// CHECK-COUNT: 402 ^    #[0-9]+ 0x[0-9a-f]+ in descend 
// CHECK-STACK: ^freed by thread T0 here: | free | release | descend | main
// CHECK-STACK: ^previously allocated by thread T0 here: | malloc | descend | main
//
// TEST: malloc_context_size=16 (the default) keeps 16 frames
// RUN: %memdbg %t
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
// CHECK: ^    #15 0x
// CHECK-NOT: ^    #16 0x
// RUN: %memdbg -o malloc_context_size=257 %t
// EXIT: 1
// CHECK: ^memdbg: bad value '257' for option 'malloc_context_size': expected an integer from 0 to 256$

#include <stdlib.h>

void release(char *p) { free(p); }

/* Two frames of descend per level at the bottom: the malloc and the free
 * each see depth + 1 frames of it (the first call is depth 200). */
char *descend(int depth)
{
    if (depth == 0) {
        char *p = malloc(24);
        release(p);
        return p;
    }
    return descend(depth - 1);
}

int main(void)
{
    char *p = descend(200);
    return p[3];
}
