/* SPDX-License-Identifier: MIT */
/* A block keeps the alignment of its size and ends at its guard page, so
 * the first byte past it faults at the access, reads included (every even
 * size by default, every size with alignment=1).
 *   t_natural_align read N      malloc(N), read p[N]
 *   t_natural_align calloc N    calloc(1, N), read p[N]
 *   t_natural_align realloc N   realloc of a 3-byte block to N, read p[N]
 *   t_natural_align strdup N    strdup of N-1 characters, read s[N]
 *   t_natural_align read4 N     malloc(N), 4-byte read at p[N-2]
 *   t_natural_align under4      malloc(16), int stored at p-4, free: the
 *                               report names the 4 bytes written
 *   t_natural_align align       counts blocks of malloc(1..64) whose address
 *                               is not a multiple of the largest power of
 *                               two (up to 16) dividing their size */
// TEST: blocks keep the alignment of their size; alignment=16 keeps the slack
// RUN: %memdbg %t align
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^misaligned 0$
// RUN: %memdbg -o alignment=16 %t read 10
// EXIT: 0
// CHECK-OUT: ^survived
// One byte of slack: the default keeps odd sizes 2-aligned.
// RUN: %memdbg %t read 9
// EXIT: 0
// CHECK-OUT: ^survived
// RUN: %memdbg -o alignment=1 %t align
// EXIT: 0
// CHECK-OUT: ^misaligned 0$
// CHECK: WARNING: memdbg: alignment=1 puts odd-sized blocks at odd addresses
//
// TEST: heap-buffer-underflow found at free names the whole damaged range
// RUN: %memdbg %t under4
// EXIT: 1
// CHECK-ERROR: heap-buffer-underflow
// CHECK: ^WRITE of size 4 at 0x
// CHECK: is located 4 bytes before 16-byte region
// CHECK: found when it was freed

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *make_block(const char *how, size_t n)
{
    if (!strcmp(how, "calloc")) return calloc(1, n);
    if (!strcmp(how, "realloc")) return realloc(malloc(3), n);
    if (!strcmp(how, "strdup")) {
        static char text[16384];
        memset(text, 'a', n - 1);
        text[n - 1] = 0;
        return strdup(text);
    }
    return malloc(n);
}

int read_byte(const char *p, size_t i) { return ((const volatile char *)p)[i]; }

int read_word(const char *p, size_t i)
{
    int v;
    memcpy(&v, p + i, sizeof v);   /* one 4-byte load at -O0 too (no alignment promised) */
    return v;
}

void store_below(char *p) { int v = 7; memcpy(p - 4, &v, sizeof v); }
void free_block(char *p) { free(p); }

/* Largest power of two dividing n, at most 16. */
static size_t natural(size_t n) { return n & 15 ? n & -n : 16; }

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "read";
    size_t n = argc > 2 ? strtoul(argv[2], 0, 0) : 10;
    if (!strcmp(mode, "align")) {
        int wrong = 0;
        for (size_t k = 1; k <= 64; k++) {
            char *p = malloc(k);
            uintptr_t a = (uintptr_t)p;
            if (a % natural(k)) { printf("malloc(%zu) at %#lx\n", k, (unsigned long)a); wrong++; }
            free(p);
        }
        printf("misaligned %d\n", wrong);
        return 0;
    }
    if (!strcmp(mode, "under4")) {
        char *p = malloc(16);
        memset(p, 0, 16);
        store_below(p);
        free_block(p);
        puts("survived");
        return 0;
    }
    char *p = make_block(!strcmp(mode, "read4") ? "malloc" : mode, n);
    if (!p) return 2;
    int v = !strcmp(mode, "read4") ? read_word(p, n - 2) : read_byte(p, n);
    printf("survived %d\n", v);
    free_block(p);
    return 0;
}
