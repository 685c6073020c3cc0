/* SPDX-License-Identifier: MIT */
/* realloc chains up to 1 MiB and back, contents preserved at every step. */

// TEST: realloc chains to 1 MiB and back
// RUN: %memdbg %t
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) if (p[i] != (unsigned char)(i * 7)) return 0;
    return 1;
}

int main(void)
{
    for (int chain = 0; chain < 4; chain++) {
        unsigned char *p = 0;
        size_t n = 0;
        while (n < (1u << 20)) {
            size_t m = n + n / 2 + 1 + (size_t)chain * 13;
            if (m > (1u << 20)) m = 1u << 20;
            p = realloc(p, m);
            if (!p || !check(p, n)) { printf("grow failed at %zu\n", m); return 2; }
            for (size_t i = n; i < m; i++) p[i] = (unsigned char)(i * 7);
            n = m;
        }
        while (n > 1) {
            n /= 3;
            if (!n) n = 1;
            p = realloc(p, n);
            if (!p || !check(p, n)) { printf("shrink failed at %zu\n", n); return 3; }
        }
        p = reallocarray(p, 10, 10);
        if (!p || !check(p, 1)) return 4;
        free(p);
    }
    if (realloc(malloc(10), 0) != 0) return 5;   /* glibc: frees, returns NULL */
    puts("ok");
    return 0;
}
