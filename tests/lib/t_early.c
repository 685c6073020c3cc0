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
//
// Every type names the option, the value and what it accepts; the program
// does not run.
// TEST: a bad value of each option type: the option, the value and the accepted range
// RUN: %memdbg -o detect_leaks=2 %t
// EXIT: 1
// CHECK-OUT-NOT: ^ok
// CHECK: ^memdbg: bad value '2' for option 'detect_leaks': expected 0 or 1 \(or false/true, no/yes\)$
// RUN: %memdbg -o exitcode=256 %t
// EXIT: 1
// CHECK-OUT-NOT: ^ok
// CHECK: ^memdbg: bad value '256' for option 'exitcode': expected an integer from 0 to 255$
// RUN: %memdbg -o malloc_fill_byte=0x1K %t
// EXIT: 1
// CHECK-OUT-NOT: ^ok
// CHECK: ^memdbg: bad value '0x1K' for option 'malloc_fill_byte': expected an integer from -1 to 255$
// RUN: %memdbg -o arena_size=1M %t
// EXIT: 1
// CHECK-OUT-NOT: ^ok
// CHECK: ^memdbg: bad value '1M' for option 'arena_size': expected bytes from 16M to 16T \(K, M, G, T suffixes\)$
// RUN: %memdbg -o quarantine_size=4Q %t
// EXIT: 1
// CHECK-OUT-NOT: ^ok
// CHECK: ^memdbg: bad value '4Q' for option 'quarantine_size': expected bytes \(K, M, G, T suffixes\)$
// RUN: %memdbg -o alignment=48 %t
// EXIT: 1
// CHECK-OUT-NOT: ^ok
// CHECK: ^memdbg: bad value '48' for option 'alignment': expected a power of two from 1 to 4096$
// RUN: %memdbg -o backend=fast %t
// EXIT: 1
// CHECK-OUT-NOT: ^ok
// CHECK: ^memdbg: bad value 'fast' for option 'backend': expected auto, nonlinear, guard or mprotect$
// RUN: %memdbg -o log_path= %t
// EXIT: 1
// CHECK-OUT-NOT: ^ok
// CHECK: ^memdbg: bad value '' for option 'log_path': expected a path of 1 to 487 bytes$
// RUN: %memdbg -o quarantine_size_mb=-1 %t
// EXIT: 1
// CHECK-OUT-NOT: ^ok
// CHECK: ^memdbg: bad value '-1' for option 'quarantine_size_mb': expected an integer from 0 to 1073741824 MiB$
// RUN: %memdbg -o exitcode %t
// EXIT: 1
// CHECK-OUT-NOT: ^ok
// CHECK: ^memdbg: option without '=value' in MEMDBG_OPTIONS: 'exitcode'$
// RUN: EF_ALIGNMENT=24 %memdbg %t
// EXIT: 1
// CHECK: ^memdbg: bad value '24' for option 'alignment' \(from EF_ALIGNMENT\): expected a power of two
// RUN: EF_PROTECT_FREE=maybe %memdbg %t
// EXIT: 1
// CHECK: ^memdbg: bad value 'maybe' for option 'EF_PROTECT_FREE': expected 0 or 1
//
// TEST: option values at the edges of their ranges, with suffixes, hex and the MiB alias
// RUN: %memdbg -o verbosity=1:arena_size=16M:quarantine_size_mb=0x10:alignment=4K:malloc_fill_byte=-1:exitcode=0xff:detect_leaks=0 %t
// EXIT: 0
// CHECK-OUT: ^ok$
// CHECK: arena 16 MiB at 0x[0-9a-f]+, quarantine 16 MiB, .*alignment 4096
// RUN: %memdbg -o verbosity=1:quarantine_size=3m:arena_size=0x2000001K:detect_leaks=0 %t
// EXIT: 0
// CHECK: arena 32768 MiB at .*quarantine 3 MiB
//
// TEST: log_format: a bad value, memdbg run --log-format
// RUN: %memdbg -o log_format=xml %t
// EXIT: 1
// CHECK-OUT-NOT: ^ok
// CHECK: ^memdbg: bad value 'xml' for option 'log_format': expected text or json$
// RUN: %cli run --log-format=yaml -- /bin/true
// EXIT: 2
// CHECK: log-format takes text or json
//
// The memdbg command's own errors, with the smallest program.
// TEST: memdbg --help
// RUN: %cli --help
// EXIT: 0
// CHECK-OUT: usage: memdbg run
//
// TEST: memdbg: bad subcommand, missing program
// RUN: %cli frobnicate
// EXIT: 2
// CHECK: unknown command 'frobnicate'
// RUN: %cli run --
// EXIT: 2
// CHECK: missing program
// RUN: %cli run -- /no/such/prog
// EXIT: 2
// CHECK: program not found

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
