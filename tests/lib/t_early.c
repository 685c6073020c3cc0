/* SPDX-License-Identifier: MIT */
/* Allocation before main and before other constructors. */

// TEST: allocation in constructors before main
// RUN: %memdbg %t
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok
//
// ASan's way with an unknown option: warn, ignore the key, go on.
// TEST: unknown option: warning with its name, the key is ignored (as ASan)
// RUN: %memdbg -o no_such_key=1:detect_leaks=0 %t
// EXIT: 0
// CHECK-OUT: ok
// CHECK: ^==[0-9]+==WARNING: memdbg: unknown option 'no_such_key' in MEMDBG_OPTIONS ignored
//
// TEST: bad option values stop with a message
// RUN: %memdbg -o alignment=3 %t
// EXIT: 1
// CHECK: bad value '3' for option 'alignment'
// RUN: %memdbg -o exitcode=abc %t
// EXIT: 1
// CHECK: bad value 'abc' for option 'exitcode'
//
// TEST: verbosity=1 startup line names the backend and why
// RUN: %memdbg -o verbosity=1 %t
// EXIT: 0
// CHECK: memdbg: backend %backend: .*nonlinear: (yes|no), .*guard: (yes|no), .*mprotect: yes
//
// TEST: print_stats=1
// RUN: %memdbg -o print_stats=1 %t
// EXIT: 0
// CHECK: memdbg stats: backend %backend, allocs [0-9]+, frees [0-9]+, .*peak RSS [0-9]+ KiB, heap VMAs [0-9]+
//
// At 1, odd-sized blocks sit at odd addresses, which some programs do not
// survive: memdbg says so.
// TEST: alignment=1 warns
// RUN: %memdbg -o alignment=1 %t
// EXIT: 0
// CHECK-OUT: ok
// CHECK: WARNING: memdbg: alignment=1 puts odd-sized blocks at odd addresses

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *early;
__attribute__((constructor(101))) static void very_early(void)
{
    early = strdup("constructed");
    void *p = calloc(3, 7);
    free(p);
}

int main(void)
{
    if (!early || strcmp(early, "constructed")) return 2;
    free(early);
    puts("ok");
    return 0;
}
