/* SPDX-License-Identifier: MIT */
/* A program that keeps flags in the low two bits of pointers to its heap
 * blocks, as the Linux kernel's red-black tree does with a node's colour
 * (perf carries that tree, and crashes under memdbg when it inherits the
 * preload).  With the default alignment=2 a block whose size is 2 more
 * than a multiple of 4 starts 2 bytes past a multiple of 4, and masking
 * the flags off loses bit 1 of its address; alignment=4 keeps such
 * programs working. */

// TEST: pointer tags in the low two bits: alignment=2 (default) breaks them, alignment=4 keeps them
// RUN: %memdbg %t
// EXIT: 1
// CHECK-OUT: ^a 42-byte node at 2 mod 4 loses bit 1 of its address to the tag mask$
// RUN: %memdbg -o alignment=4 %t
// EXIT: 0
// CHECK-OUT: ^every tagged pointer comes back$
// CHECK-NOT: ERROR

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct node {
    uintptr_t parent_colour;   /* parent | colour, as the kernel's struct rb_node */
    char name[34];             /* 42 bytes in all: a node with its name inline */
};

static struct node *parent_of(const struct node *n)
{
    return (struct node *)(n->parent_colour & ~(uintptr_t)3);
}

int main(void)
{
    struct node *nodes[64];
    for (int i = 0; i < 64; i++) {
        nodes[i] = malloc(42);
        nodes[i]->parent_colour = i ? (uintptr_t)nodes[i - 1] | 1 : 0;
    }
    int lost = 0;
    for (int i = 1; i < 64; i++)
        if (parent_of(nodes[i]) != nodes[i - 1]) lost = 1;
    if (lost) printf("a 42-byte node at %d mod 4 loses bit 1 of its address to the tag mask\n",
                     (int)((uintptr_t)nodes[0] % 4));
    else printf("every tagged pointer comes back\n");
    for (int i = 0; i < 64; i++) free(nodes[i]);
    return lost;
}
