/* SPDX-License-Identifier: MIT */
/* heap-use-after-free: read and write through a dangling pointer. */

// TEST: heap-use-after-free (read)
// RUN: %memdbg %t read
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
// CHECK: ^READ of size 1 at 0x
// CHECK: is located 5 bytes inside of 32-byte region
// CHECK-STACK: ^READ of size | use_after_free | main
// CHECK-STACK: ^freed by thread T0 here: | free | free_buffer | main
// CHECK-STACK: ^previously allocated by thread T0 here: | malloc | make_buffer | main
// CHECK: ^SUMMARY: memdbg: heap-use-after-free in use_after_free
//
// TEST: heap-use-after-free (write after 10k other frees)
// RUN: %memdbg %t write
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
// CHECK: ^WRITE of size 4 at 0x
// CHECK: is located 16 bytes inside of 32-byte region
// CHECK-STACK: ^WRITE of size | write_after_free | main
// CHECK-STACK: ^freed by thread T0 here: | free | free_buffer | main
// CHECK-STACK: ^previously allocated by thread T0 here: | malloc | make_buffer | main
//
// Frame-pointer stacks (the test programs keep their frame pointers), also
// a thread's stack, whose bounds come from pthread_getattr_np.
// TEST: fast_unwind_on_malloc=1: malloc/free stacks by frame pointers
// RUN: %memdbg -o fast_unwind_on_malloc=1 %t read
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
// CHECK-STACK: ^freed by thread T0 here: | free | free_buffer | main
// CHECK-STACK: ^previously allocated by thread T0 here: | malloc | make_buffer | main
// RUN: %memdbg -o fast_unwind_on_malloc=1:free_batch=64 %T/t_free_batch thread
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
// CHECK-STACK: ^freed by thread T1 here: | free | thread_main
// CHECK-STACK: ^previously allocated by thread T1 here: | malloc | thread_main
//
// TEST: abort_on_error=1 dies by SIGABRT
// RUN: %memdbg -o abort_on_error=1 %t read
// EXIT: 134
// CHECK-ERROR: heap-use-after-free
//
// TEST: exitcode= on a fault
// RUN: %memdbg -o exitcode=42 %t read
// EXIT: 42
//
// TEST: nonlinear logic (emulated): reports
// REQUIRES: backend!=nonlinear
// RUN: LD_PRELOAD=%lib MEMDBG_OPTIONS=backend=nonlinear:nonlinear_emulation=1 %t read
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
// CHECK: is located 5 bytes inside of 32-byte region
// RUN: LD_PRELOAD=%lib MEMDBG_OPTIONS=backend=nonlinear:nonlinear_emulation=1 %T/t_overflow guard
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: is located 0 bytes after 16-byte region
//
// TEST: memdbg run --backend --options
// RUN: MEMDBG_LIB=%lib %cli run --backend %backend --options exitcode=9 -- %t read
// EXIT: 9
// CHECK-ERROR: heap-use-after-free

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *make_buffer(size_t n) { return malloc(n); }
void free_buffer(char *p) { free(p); }
int use_after_free(char *p, size_t i) { return p[i]; }
void write_after_free(int *p, size_t i) { p[i] = 7; }

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "read";
    char *p = make_buffer(32);
    memset(p, 0, 32);
    free_buffer(p);
    if (!strcmp(mode, "read")) printf("%d\n", use_after_free(p, 5));
    else {
        /* many frees later the address is still quarantined */
        for (int i = 0; i < 10000; i++) free(malloc(64));
        write_after_free((int *)p, 4);
    }
    puts("survived");
    return 0;
}
