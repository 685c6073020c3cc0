/* SPDX-License-Identifier: MIT */
/* Size-overflow and edge cases of malloc/calloc/realloc/reallocarray,
 * calloc zeroing after the pages were recycled, malloc(0). */

// TEST: size overflow cases, malloc(0), calloc zeroing
// RUN: %memdbg %t
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok
//
// TEST: calloc zeroing after recycling (quarantine 0)
// RUN: %memdbg -o quarantine_size_mb=0 %t
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok
//
// EF_PROTECT_FREE=0: no quarantine, the address is reused soon.
// TEST: EF_PROTECT_FREE=0
// RUN: EF_PROTECT_FREE=0 %memdbg %t
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok
//
// TEST: nonlinear logic (emulated): recycled file pages, calloc zeroing
// REQUIRES: backend!=nonlinear
// RUN: LD_PRELOAD=%lib MEMDBG_OPTIONS=backend=nonlinear:nonlinear_emulation=1:quarantine_size_mb=0 %t
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok
// RUN: LD_PRELOAD=%lib MEMDBG_OPTIONS=backend=nonlinear:nonlinear_emulation=1:quarantine_size_mb=0 %T/t_realloc_chain
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok

#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails;
#define CHECK(c) do { if (!(c)) { printf("FAIL line %d: %s\n", __LINE__, #c); fails++; } } while (0)

int main(void)
{
    errno = 0; CHECK(malloc(SIZE_MAX) == 0 && errno == ENOMEM);
    errno = 0; CHECK(malloc(SIZE_MAX / 2) == 0 && errno == ENOMEM);
    errno = 0; CHECK(calloc(SIZE_MAX / 2, 4) == 0 && errno == ENOMEM);   /* crashes Electric Fence */
    errno = 0; CHECK(calloc(SIZE_MAX, SIZE_MAX) == 0 && errno == ENOMEM);
    errno = 0; CHECK(calloc((size_t)1 << 33, (size_t)1 << 33) == 0 && errno == ENOMEM);
    errno = 0; CHECK(reallocarray(0, SIZE_MAX / 2, 4) == 0 && errno == ENOMEM);
    char *p = malloc(10);
    memcpy(p, "abcdefghi", 10);
    errno = 0; CHECK(realloc(p, SIZE_MAX) == 0 && errno == ENOMEM);
    CHECK(strcmp(p, "abcdefghi") == 0);         /* still valid after a failed realloc */
    errno = 0; CHECK(reallocarray(p, SIZE_MAX / 2, 4) == 0 && errno == ENOMEM);
    CHECK(malloc_usable_size(p) == 10);
    free(p);
    CHECK(malloc_usable_size(0) == 0);

    void *z1 = malloc(0), *z2 = malloc(0);      /* unique pointers, freeable */
    CHECK(z1 && z2 && z1 != z2);
    free(z1); free(z2);
    free(0);

    /* calloc after recycling: dirty a block, free it, calloc the same size */
    for (int round = 0; round < 200; round++) {
        size_t n = 1 + (size_t)round * 97 % 9000;
        unsigned char *d = malloc(n);
        memset(d, 0xff, n);
        free(d);
        unsigned char *c = calloc(1, n);
        for (size_t i = 0; i < n; i++) if (c[i]) { printf("calloc not zero at %zu of %zu\n", i, n); fails++; break; }
        free(c);
    }
    /* large calloc */
    unsigned char *big = calloc(1000, 1000);
    CHECK(big && big[0] == 0 && big[999999] == 0);
    free(big);
    if (fails) return 1;
    puts("ok");
    return 0;
}
