/* SPDX-License-Identifier: MIT */
/* Compact mode (compact=1, nonlinear backend): small blocks share file
 * pages, each seen through its own virtual page.  Mode in argv[1]:
 *   share      two 32-byte blocks: is the second one's data visible
 *              through the first one's page?  prints shared=0|1
 *   reuse      a freed block's bytes serve the next block of its size at
 *              a new address; prints the offsets within the page
 *   uaf        read a 32-byte block after 100k frees of blocks of its
 *              size (its bytes reused meanwhile): must fault
 *   pageend    overflow by 1 of a block that ends at its page's end
 *   inpage     overflow by 1 of a 32-byte block that does not: found at
 *              free in compact mode (at the access with a page per block)
 *   blame N [keep]  two 96-byte blocks of one page, the lower one
 *              overflowed by N bytes (past its 16-byte redzone into the
 *              upper one's padding), then the upper one freed (keep: both
 *              stay live to exit; protect: the lower one's page made
 *              unreadable first): the report must name the lower one
 *              (make_lower), not the upper (make_upper), unless it
 *              cannot be read
 *   rss N SIZE N live blocks of SIZE bytes: prints VmRSS, Pss and the
 *              heap file's size in KiB */
// Compact mode needs the nonlinear backend (the emulated one on the host).
// TEST: compact: small blocks share a file page
// REQUIRES: backend=nonlinear
// RUN: %memdbg -o compact=1 %t share
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^shared=1$
// A page per block: not shared.
// RUN: %memdbg -o compact=0 %t share
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^shared=0$
//
// TEST: compact: a freed block's bytes serve the next block at a new address
// REQUIRES: backend=nonlinear
// RUN: %memdbg -o compact=1 %t reuse
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^reuse new_address=1 same_offset=1$
//
// TEST: compact: use-after-free page-exact after 100k reuses of its bytes (also compact_defer)
// REQUIRES: backend=nonlinear
// RUN: %memdbg -o compact=1 %t uaf
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
// CHECK: is located 5 bytes inside of 32-byte region
// CHECK-STACK: ^freed by thread T0 here: | free | free_buffer | main
// CHECK-STACK: ^previously allocated by thread T0 here: | malloc | make_buffer | main
// CHECK-OUT: ^reading$
// CHECK-OUT-NOT: ^read[ ]
// RUN: %memdbg -o compact=1:compact_defer=64 %t uaf
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
// CHECK: is located 5 bytes inside of 32-byte region
// CHECK-STACK: ^freed by thread T0 here: | free | free_buffer | main
// CHECK-STACK: ^previously allocated by thread T0 here: | malloc | make_buffer | main
// CHECK-OUT: ^reading$
// CHECK-OUT-NOT: ^read[ ]
//
// TEST: compact: overflow at the page end faults at the access
// REQUIRES: backend=nonlinear
// RUN: %memdbg -o compact=1 %t pageend
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: is located 0 bytes after 32-byte region
// CHECK-STACK: ^WRITE of size 1 | do_overflow_write | main
// CHECK-OUT-NOT: survived
//
// Inside the shared page an overflow is found at free; with a page per block
// at the access.
// TEST: compact: overflow within the shared page found at free
// REQUIRES: backend=nonlinear
// RUN: %memdbg -o compact=1 %t inpage
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: is located 0 bytes after 32-byte region
// CHECK: found when it was freed
// CHECK-OUT: ^survived the write$
// RUN: %memdbg -o compact=0 %t inpage
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK-OUT-NOT: survived
// CHECK-NOT: found when it was freed
//
// t_align checks glibc's 16-byte promise, which alignment=16 keeps.
// TEST: compact: double free, realloc, memalign, calloc, fork, C++, stress
// REQUIRES: backend=nonlinear
// RUN: %memdbg -o compact=1 %T/t_double_free
// EXIT: 1
// CHECK-ERROR: double-free
// RUN: %memdbg -o compact=1 %T/t_realloc_chain
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok
// RUN: %memdbg -o compact=1:alignment=16 %T/t_align
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok
// RUN: %memdbg -o compact=1 %T/t_sizes
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok
// RUN: %memdbg -o compact=1 %T/t_fork
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok
// RUN: %memdbg -o compact=1 %T/t_cxx
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok
// RUN: %memdbg -o compact=1 %T/t_stress 20000
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^ok$
// RUN: %memdbg -o compact=1:compact_defer=16 %T/t_realloc_chain
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok
// RUN: %memdbg -o compact=1:compact_defer=16:alignment=16 %T/t_align
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok
// RUN: %memdbg -o compact=1:compact_defer=16 %T/t_sizes
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok
// RUN: %memdbg -o compact=1:compact_defer=16 %T/t_fork
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok
// RUN: %memdbg -o compact=1:compact_defer=16 %T/t_cxx
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok
// RUN: %memdbg -o compact=1:compact_defer=16 %T/t_stress 20000
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^ok$
// RUN: %memdbg -o compact=1:quarantine_size_mb=0 %T/t_realloc_chain
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok
// RUN: %memdbg -o compact=1:quarantine_size_mb=0:alignment=16 %T/t_align
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok
// RUN: %memdbg -o compact=1:quarantine_size_mb=0 %T/t_sizes
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok
// RUN: %memdbg -o compact=1:quarantine_size_mb=0 %T/t_fork
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok
// RUN: %memdbg -o compact=1:quarantine_size_mb=0 %T/t_cxx
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok
// RUN: %memdbg -o compact=1:quarantine_size_mb=0 %T/t_stress 20000
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^ok$
//
// TEST: compact: 4 threads with cross-thread frees
// REQUIRES: backend=nonlinear
// RUN: %memdbg -o compact=1 %T/t_threads
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok
// RUN: %memdbg -o compact=1:compact_defer=16 %T/t_threads
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok
// RUN: %memdbg -o compact=1:quarantine_size_mb=0 %T/t_threads
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok
//
// An overflow past the redzone is the overflowing block's, not its neighbour's.
// TEST: compact: an overflow into the block above is reported as the overflowing block's
// REQUIRES: backend=nonlinear
// RUN: %memdbg -o compact=1 %t blame 24
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK-OUT: ^overflowed$
// CHECK-OUT-NOT: not neighbours
// CHECK: is located 0 bytes after 96-byte region
// CHECK: into the padding of the block above it
// CHECK-STACK: ^allocated by thread | make_lower
// CHECK-NOT: [ ]in make_upper[ ]
// Both live at exit: one report, the overflowing block's.
// RUN: %memdbg -o compact=1:detect_leaks=0 %t blame 40 keep
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: is located 0 bytes after 96-byte region
// CHECK-STACK: ^allocated by thread | make_lower
// CHECK-COUNT: 1 ERROR: memdbg
// CHECK-NOT: heap-buffer-underflow
// The lower block's page unreadable: the upper one's damage as before, no
// fault in memdbg.
// RUN: %memdbg -o compact=1:detect_leaks=0 %t blame 24 protect
// EXIT: 1
// CHECK-ERROR: heap-buffer-underflow
// CHECK: is located 16 bytes before 96-byte region
// CHECK-NOT: SEGV|fault in report
//
// TEST: compact (emulated): an overflow into the block above is reported as the overflowing block's
// REQUIRES: backend!=nonlinear
// RUN: LD_PRELOAD=%lib MEMDBG_OPTIONS=backend=nonlinear:nonlinear_emulation=1:compact=1 %t blame 24
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK-OUT: ^overflowed$
// CHECK-OUT-NOT: not neighbours
// CHECK: is located 0 bytes after 96-byte region
// CHECK: into the padding of the block above it
// CHECK-STACK: ^allocated by thread | make_lower
// CHECK-NOT: [ ]in make_upper[ ]
// Both live at exit: one report, the overflowing block's.
// RUN: LD_PRELOAD=%lib MEMDBG_OPTIONS=backend=nonlinear:nonlinear_emulation=1:compact=1:detect_leaks=0 %t blame 40 keep
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: is located 0 bytes after 96-byte region
// CHECK-STACK: ^allocated by thread | make_lower
// CHECK-COUNT: 1 ERROR: memdbg
// CHECK-NOT: heap-buffer-underflow
// The lower block's page unreadable: the upper one's damage as before, no
// fault in memdbg.
// RUN: LD_PRELOAD=%lib MEMDBG_OPTIONS=backend=nonlinear:nonlinear_emulation=1:compact=1:detect_leaks=0 %t blame 24 protect
// EXIT: 1
// CHECK-ERROR: heap-buffer-underflow
// CHECK: is located 16 bytes before 96-byte region
// CHECK-NOT: SEGV|fault in report
//
// Blocks at a page start cannot share pages: warned, a page per block.
// TEST: compact=1 with protect_below=1: warned and ignored
// REQUIRES: backend=nonlinear
// RUN: %memdbg -o compact=1:protect_below=1 %t share
// EXIT: 0
// CHECK-OUT: ^shared=0
// CHECK: ^==[0-9]+==WARNING: memdbg: compact=1 is ignored with protect_below=1
//
// TEST: compact=1 with protect_below=1 (emulated): warned and ignored
// REQUIRES: backend!=nonlinear
// RUN: LD_PRELOAD=%lib MEMDBG_OPTIONS=backend=nonlinear:nonlinear_emulation=1:compact=1:protect_below=1 %t share
// EXIT: 0
// CHECK-OUT: ^shared=0
// CHECK: ^==[0-9]+==WARNING: memdbg: compact=1 is ignored with protect_below=1

#include "proc_kb.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static char *volatile sink;
char *make_buffer(size_t n) { return malloc(n); }
void do_overflow_write(char *p, size_t i) { p[i] = 'x'; }
int do_read(char *p, size_t i) { return p[i]; }
void free_buffer(char *p) { free(p); }
char *make_upper(size_t n) { return malloc(n); }
char *make_lower(size_t n) { return malloc(n); }

static uintptr_t off(const void *p) { return (uintptr_t)p & 4095; }
static uintptr_t page(const void *p) { return (uintptr_t)p & ~(uintptr_t)4095; }

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "share")) {
        char *p = make_buffer(32), *q = make_buffer(32);
        memset(q, 0x5a, 32);
        /* q's bytes through p's page, at q's offset */
        int shared = page(p) != page(q) && off(p) != off(q) && ((char *)page(p))[off(q)] == 0x5a &&
                     ((char *)page(p))[off(q) + 31] == 0x5a;
        printf("shared=%d\n", shared);
        free(p);
        free(q);
    } else if (!strcmp(mode, "reuse")) {
        char *p = make_buffer(48);
        uintptr_t o = off(p);
        free_buffer(p);
        char *q = make_buffer(48);
        printf("reuse new_address=%d same_offset=%d\n", page(q) != page(p), off(q) == o);
        free(q);
    } else if (!strcmp(mode, "uaf")) {
        char *p = make_buffer(32);
        free_buffer(p);
        for (int i = 0; i < 100000; i++) {
            sink = malloc(32);
            memset(sink, 1, 32);
            free(sink);
        }
        printf("reading\n");
        fflush(stdout);
        printf("read %d\n", do_read(p, 5));   /* must fault */
    } else if (!strcmp(mode, "pageend") || !strcmp(mode, "inpage")) {
        /* among 64 blocks of 32 bytes, one that ends at its page's end
         * (pageend) or one that does not (inpage) */
        char *b[64], *p = 0;
        int want_end = !strcmp(mode, "pageend");
        for (int i = 0; i < 64; i++) {
            b[i] = make_buffer(32);
            if (!p && (off(b[i] + 32) == 0) == want_end) p = b[i];
        }
        if (!p && !want_end) {   /* a page per block: every block ends at its page's end */
            printf("no block inside a page\n");
            p = b[0];
        }
        if (!p) { printf("no such block\n"); return 2; }
        printf("overflowing\n");
        fflush(stdout);
        do_overflow_write(p, 32);
        printf("survived the write\n");
        fflush(stdout);
        free_buffer(p);
        printf("survived free\n");
    } else if (!strcmp(mode, "blame") && argc > 2) {
        /* a fresh file page's chunk 0 lies at its top, chunk 1 below
         * it (112-byte chunks: 96 + the 16-byte redzone); each block is
         * seen at a virtual page of its own */
        size_t n = (size_t)atol(argv[2]);
        char *upper = make_upper(96), *lower = make_lower(96);
        if (off(upper) != 4096 - 96 || off(lower) != 4096 - 112 - 16 - 96)
            printf("not neighbours: %#lx %#lx\n", (unsigned long)off(upper), (unsigned long)off(lower));
        /* byte by byte, not memset: a checked memset would stop the
         * program at the call, before the padding this test is about */
        for (volatile size_t i = 0; i < n; i++) lower[96 + i] = 'Z';
        printf("overflowed\n");
        fflush(stdout);
        if (argc > 3 && !strcmp(argv[3], "keep")) return 0;
        /* the program made the lower block's page unreadable: memdbg must
         * not fault reading its padding (and cannot blame it) */
        if (argc > 3 && !strcmp(argv[3], "protect") && mprotect((void *)page(lower), 4096, PROT_NONE) != 0)
            return 3;
        free_buffer(upper);
        printf("survived free\n");
    } else if (!strcmp(mode, "rss") && argc > 3) {
        long n = atol(argv[2]);
        size_t size = (size_t)atol(argv[3]);
        char **v = malloc(sizeof *v * (size_t)n);
        for (long i = 0; i < n; i++) {
            v[i] = malloc(size);
            memset(v[i], (int)i, size);
        }
        printf("live=%ld size=%zu rss_kb=%ld pss_kb=%ld heap_file_kb=%ld\n", n, size,
               proc_kb("/proc/self/status", "VmRSS:"), proc_kb("/proc/self/smaps_rollup", "Pss:"),
               heap_file_kb(-1));
        for (long i = 0; i < n; i++) free(v[i]);
        free(v);
    } else {
        fprintf(stderr, "usage: t_compact share|reuse|uaf|pageend|inpage|rss N SIZE\n");
        return 2;
    }
    printf("ok\n");
    return 0;
}
