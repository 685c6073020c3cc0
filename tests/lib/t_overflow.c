/* SPDX-License-Identifier: MIT */
/* heap-buffer-overflow: on the guard page (fault) and in the padding
 * (found at free or at exit).  Mode in argv[1]. */

// TEST: heap-buffer-overflow on the guard page (write)
// RUN: %memdbg %t guard
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: ^WRITE of size 1 at 0x
// CHECK: is located 0 bytes after 16-byte region \[0x
// CHECK-STACK: ^WRITE of size | do_overflow_write | main
// CHECK-STACK: ^allocated by thread T0 here: | malloc | make_buffer | main
// CHECK: ^SUMMARY: memdbg: heap-buffer-overflow in do_overflow_write .*t_overflow.c:
// CHECK-NOT: survived
//
// TEST: heap-buffer-overflow on the guard page (read, 8 bytes after)
// RUN: %memdbg %t read
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: ^READ of size 1 at 0x
// CHECK: is located 8 bytes after 32-byte region
// CHECK-STACK: ^READ of size | do_overflow_read | main
// CHECK-STACK: ^allocated by thread T0 here: | malloc | make_buffer | main
// CHECK: ^SUMMARY: memdbg: heap-buffer-overflow in do_overflow_read .*t_overflow.c:
//
// TEST: heap-buffer-overflow in the padding, found at free
// RUN: %memdbg -o alignment=16 %t slack
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: is located 0 bytes after 10-byte region
// CHECK: found when it was freed
// CHECK-STACK: ^WRITE of  | free | free_buffer | main
// CHECK-STACK: ^allocated by thread T0 here: | malloc | make_buffer | main
//
// TEST: heap-buffer-overflow in the padding of a live block, found at exit
// RUN: %memdbg -o alignment=16 %t exit
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: is located 2 bytes after 10-byte region
// CHECK: found at exit
// CHECK-STACK: ^allocated by thread T0 here: | malloc | make_buffer | main
// CHECK-OUT: survived
// CHECK: ^SUMMARY: memdbg: heap-buffer-overflow
//
// TEST: heap-buffer-overflow past a multi-page block
// RUN: %memdbg -o alignment=16 %t big
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: is located 4 bytes after 12388-byte region
// CHECK: found at exit
// CHECK-STACK: ^allocated by thread T0 here: | malloc | make_buffer | main
//
// TEST: EF_ALIGNMENT=1: one byte past the end faults
// RUN: EF_ALIGNMENT=1 %memdbg %t slack
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: ^WRITE of size 1
// CHECK: is located 0 bytes after 10-byte region
// CHECK-NOT: found when it was freed
// CHECK-STACK: ^WRITE of size | do_overflow_write | main

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *make_buffer(size_t n) { return malloc(n); }
void do_overflow_write(char *p, size_t i) { p[i] = 'x'; }
int do_overflow_read(char *p, size_t i) { return p[i]; }
void free_buffer(char *p) { free(p); }

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "guard";
    if (!strcmp(mode, "guard")) {          /* 16 bytes: the guard page starts at p+16 */
        char *p = make_buffer(16);
        memset(p, 0, 16);
        do_overflow_write(p, 16);
    } else if (!strcmp(mode, "read")) {    /* 8 bytes into the guard page */
        char *p = make_buffer(32);
        printf("%d\n", do_overflow_read(p, 40));
    } else if (!strcmp(mode, "slack")) {   /* 10 bytes + 6 padding: found at free */
        char *p = make_buffer(10);
        do_overflow_write(p, 10);
        free_buffer(p);
    } else if (!strcmp(mode, "exit")) {    /* never freed: found by the exit check */
        static char *keep;
        keep = make_buffer(10);
        do_overflow_write(keep, 12);
    } else if (!strcmp(mode, "big")) {     /* a multi-page block */
        char *p = make_buffer(3 * 4096 + 100);
        memset(p, 1, 3 * 4096 + 100);
        do_overflow_write(p, 3 * 4096 + 100 + 4);
    }
    puts("survived");
    return 0;
}
