/* SPDX-License-Identifier: MIT */
/* heap-buffer-underflow: with protect_below=1 the guard page is right
 * before the block (fault); otherwise the padding before it is checked at
 * free. */

// TEST: heap-buffer-underflow with protect_below=1
// RUN: %memdbg -o protect_below=1 %t guard
// EXIT: 1
// CHECK-ERROR: heap-buffer-underflow
// CHECK: ^READ of size 1
// CHECK: is located 1 bytes before 16-byte region
// CHECK-STACK: ^READ of size | do_underflow_read | main
// CHECK-STACK: ^allocated by thread T0 here: | malloc | make_buffer | main
//
// TEST: EF_PROTECT_BELOW=1 is honoured
// RUN: EF_PROTECT_BELOW=1 %memdbg %t guard
// EXIT: 1
// CHECK-ERROR: heap-buffer-underflow
// CHECK: is located 1 bytes before 16-byte region
// CHECK-STACK: ^READ of size 1 | do_underflow_read | main
// CHECK-STACK: ^allocated by thread T0 here: | malloc | make_buffer | main
//
// TEST: heap-buffer-underflow in the padding, found at free
// RUN: %memdbg %t slack
// EXIT: 1
// CHECK-ERROR: heap-buffer-underflow
// CHECK: is located 3 bytes before 16-byte region
// CHECK-STACK: ^WRITE of  | free | free_buffer | main
// CHECK-STACK: ^allocated by thread T0 here: | malloc | make_buffer | main

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *make_buffer(size_t n) { return malloc(n); }
int do_underflow_read(char *p, long i) { return p[i]; }
void do_underflow_write(char *p, long i) { p[i] = 1; }
void free_buffer(char *p) { free(p); }

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "guard";
    char *p = make_buffer(16);
    memset(p, 0, 16);
    if (!strcmp(mode, "guard")) printf("%d\n", do_underflow_read(p, -1));
    else if (!strcmp(mode, "slack")) { do_underflow_write(p, -3); free_buffer(p); }
    puts("survived");
    return 0;
}
