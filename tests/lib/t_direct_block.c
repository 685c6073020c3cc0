/* SPDX-License-Identifier: MIT */
/* Blocks larger than the arena (arena_size=16M here) get a mapping of
 * their own, as glibc serves them: 32 MiB blocks written at both ends,
 * realloc'd larger and smaller with their bytes kept, sized by
 * malloc_usable_size, freed; an overflow faults at the access and names
 * the block, a read after free names the free, the leak check lists a
 * lost one; a size no mapping can have is still NULL with ENOMEM.
 * Modes: ok, many, overflow, uaf, leak. */

// TEST: a block larger than the arena: written, realloc'd, sized, freed
// RUN: %memdbg -o arena_size=16M %t ok
// EXIT: 0
// CHECK-NOT: ERROR
// CHECK-OUT: ^written at both ends, usable 33554432$
// CHECK-OUT: ^realloc to 48 MiB keeps the bytes$
// CHECK-OUT: ^realloc to 1000 bytes keeps the bytes$
// CHECK-OUT: ^calloc'd 40 MiB reads zero$
// CHECK-OUT: ^impossible size: NULL, ENOMEM$
//
// TEST: blocks larger than the arena, 600 in turn: their mappings are reused
// RUN: %memdbg -o arena_size=16M %t many
// EXIT: 0
// CHECK-NOT: ERROR
// CHECK-OUT: ^600 blocks of 32 MiB in turn, 40 live at once$
//
// TEST: a block larger than the arena: an overflow faults at the access
// RUN: %memdbg -o arena_size=16M %t overflow
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: ^WRITE of size 1 at
// CHECK: is located 0 bytes after 33554432-byte region
// CHECK-STACK: ^WRITE of size | poke | main
// CHECK-STACK: ^allocated by thread | malloc | main
//
// TEST: a block larger than the arena: a read after free names the free
// RUN: %memdbg -o arena_size=16M %t uaf
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
// CHECK: is located 5 bytes inside of 33554432-byte region
// CHECK-STACK: ^freed by thread | free | main
//
// TEST: a block larger than the arena: the leak check lists it
// RUN: %memdbg -o arena_size=16M %t leak
// EXIT: 1
// CHECK: ^Direct leak of 33554432 byte\(s\) in 1 object\(s\) allocated from:
// CHECK-STACK: ^Direct leak of 33554432 | malloc | lose_block | main

#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIG ((size_t)32 << 20)

__attribute__((noinline)) int poke(char *p, size_t i) { return p[i] = 1; }
__attribute__((noinline)) int peek(const char *p, size_t i) { return p[i]; }

__attribute__((noinline)) void lose_block(void)
{
    char *volatile p = malloc(BIG);
    p[0] = 1;
    p = NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "ok";
    char *p = malloc(BIG);
    if (!p) { printf("malloc 32 MiB: %s\n", strerror(errno)); return 3; }
    if (!strcmp(mode, "overflow")) return poke(p, BIG);
    if (!strcmp(mode, "uaf")) {
        free(p);
        return peek(p, 5);
    }
    if (!strcmp(mode, "many")) {   /* more than the 256 mappings memdbg keeps track of */
        free(p);
        char *live[40] = { 0 };
        for (int i = 0; i < 600; i++) {
            free(live[i % 40]);
            live[i % 40] = malloc(BIG);
            if (!live[i % 40]) { printf("block %d: %s\n", i, strerror(errno)); return 3; }
            live[i % 40][BIG - 1] = (char)i;
        }
        for (int i = 0; i < 40; i++) free(live[i]);
        printf("600 blocks of 32 MiB in turn, 40 live at once\n");
        return 0;
    }
    if (!strcmp(mode, "leak")) {
        free(p);
        lose_block();
        return 0;
    }
    p[0] = 'a';
    p[BIG - 1] = 'z';
    printf("written at both ends, usable %zu\n", malloc_usable_size(p));
    p = realloc(p, BIG + (16 << 20));
    if (p && p[0] == 'a' && p[BIG - 1] == 'z') printf("realloc to 48 MiB keeps the bytes\n");
    p[BIG + (16 << 20) - 1] = 'y';
    p = realloc(p, 1000);
    if (p && p[0] == 'a') printf("realloc to 1000 bytes keeps the bytes\n");
    free(p);
    char *z = calloc(40, 1 << 20);
    if (z && !z[0] && !z[(40 << 20) - 1]) printf("calloc'd 40 MiB reads zero\n");
    free(z);
    errno = 0;
    volatile size_t huge = SIZE_MAX / 2;
    void *none = malloc(huge);
    if (!none && errno == ENOMEM) printf("impossible size: NULL, ENOMEM\n");
    return 0;
}
