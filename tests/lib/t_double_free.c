/* SPDX-License-Identifier: MIT */

// TEST: double-free
// RUN: %memdbg %t
// EXIT: 1
// CHECK-ERROR: double-free
// CHECK: is located 0 bytes inside of 24-byte region
// CHECK-STACK: ^free of 0x | free | second_free | main
// CHECK-STACK: ^freed by thread T0 here: | free | first_free | main
// CHECK-STACK: ^previously allocated by thread T0 here: | malloc | make_buffer | main
// CHECK-COUNT: 1 ERROR: memdbg
//
// halt_on_error=0: report both, go on, exit with exitcode.
// TEST: halt_on_error=0 reports and continues
// RUN: %memdbg -o halt_on_error=0:exitcode=7 %t
// EXIT: 7
// CHECK-COUNT: 2 ERROR: memdbg: double-free
// CHECK-OUT: survived

#include <stdio.h>
#include <stdlib.h>

char *make_buffer(size_t n) { return malloc(n); }
void first_free(char *p) { free(p); }
void second_free(char *p) { free(p); }

int main(void)
{
    char *p = make_buffer(24);
    first_free(p);
    second_free(p);
    second_free(p);       /* with halt_on_error=0 this is reported again */
    puts("survived");
    return 0;
}
