/* SPDX-License-Identifier: MIT */
/* A string copied by strdup or strndup ends at its guard page at any
 * length: "ab" takes 3 bytes, an odd size that the default alignment of
 * 2 would leave one byte short of the guard, so that reading the byte
 * past the terminator read padding and went unreported.  The frame of
 * strdup or strndup that heads the copy's allocation stack names its
 * file and line, as malloc's does. */

// TEST: strdup of an even-length string: reading one past its end faults at the access
// RUN: %memdbg %t strdup
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: READ of size 1 at
// CHECK: is located 0 bytes after 3-byte region
// CHECK-STACK: ^READ of size | read_byte | main
// CHECK-STACK: ^allocated by thread | strdup | main
// CHECK: ^    #0 0x[0-9a-f]+ in strdup preload/strdup\.c:[0-9]+$
// CHECK-OUT-NOT: not caught
//
// TEST: strndup: reading one past the copy faults at the access
// RUN: %memdbg %t strndup
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: is located 0 bytes after 5-byte region
// CHECK-STACK: ^allocated by thread | strndup | main
// CHECK: ^    #0 0x[0-9a-f]+ in strndup preload/strdup\.c:[0-9]+$
//
// TEST: strdup and strndup copy the string and free cleanly
// RUN: %memdbg %t copy
// EXIT: 0
// CHECK-NOT: ERROR
// CHECK-OUT: ^copies ok$
//
// TEST: alignment=16 keeps strdup's copies 16-byte aligned
// RUN: %memdbg -o alignment=16 %t aligned
// EXIT: 0
// CHECK-NOT: ERROR
// CHECK-OUT: ^aligned 1$

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) int read_byte(const char *p, size_t i) { return ((const volatile char *)p)[i]; }

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    if (!strcmp(argv[1], "strdup")) {
        char *s = strdup("ab");
        printf("read %d\n", read_byte(s, 3));
        printf("not caught\n");
        return 0;
    }
    if (!strcmp(argv[1], "strndup")) {
        char *s = strndup("abcdefghij", 4);
        printf("read %d\n", read_byte(s, 5));
        return 0;
    }
    if (!strcmp(argv[1], "copy")) {
        int ok = 1;
        for (size_t n = 0; n < 40; n++) {
            char src[48];
            memset(src, 'a' + (int)(n % 26), n);
            src[n] = 0;
            char *d = strdup(src), *e = strndup(src, n / 2), *f = strndup(src, 100);
            ok &= d && !strcmp(d, src) && e && strlen(e) == n / 2 && !strncmp(e, src, n / 2) && f && !strcmp(f, src);
            free(d);
            free(e);
            free(f);
        }
        printf("%s\n", ok ? "copies ok" : "copies wrong");
        return 0;
    }
    if (!strcmp(argv[1], "aligned")) {
        int ok = 1;
        for (int n = 0; n < 20; n++) {
            char src[24] = "abcdefghijklmnopqrstu";
            src[n] = 0;
            char *d = strdup(src);
            ok &= ((uintptr_t)d & 15) == 0;
            free(d);
        }
        printf("aligned %d\n", ok);
        return 0;
    }
    return 2;
}
