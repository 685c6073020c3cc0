/* SPDX-License-Identifier: MIT */
/* Every alignment function: alignment of the result, usable size, the whole
 * block writable, and errno / return values for bad arguments. */

// TEST: every alignment function, errno on bad alignment
// RUN: %memdbg -o alignment=16 %t
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
#include <unistd.h>

static int fails;
#define CHECK(c) do { if (!(c)) { printf("FAIL line %d: %s\n", __LINE__, #c); fails++; } } while (0)

static void use(void *p, size_t n, size_t align)
{
    CHECK(p != 0);
    if (!p) return;
    CHECK(((uintptr_t)p & (align - 1)) == 0);
    CHECK(malloc_usable_size(p) >= n);
    memset(p, 0x5a, n);
    free(p);
}

int main(void)
{
    for (size_t a = 1; a <= 65536; a *= 2)
        for (size_t n = 0; n < 3 * 4096; n = n * 3 + 1) {
            use(memalign(a, n), n, a);
            if (a >= sizeof(void *)) {
                void *p = (void *)1;
                CHECK(posix_memalign(&p, a, n) == 0);
                use(p, n, a);
            }
            use(aligned_alloc(a, n), n, a);
        }
    long page = sysconf(_SC_PAGESIZE);
    use(valloc(100), 100, (size_t)page);
    void *pv = pvalloc(100);
    CHECK(malloc_usable_size(pv) >= (size_t)page);
    use(pv, (size_t)page, (size_t)page);
    use(malloc(7), 7, 16);                       /* malloc keeps max_align_t */

    /* bad arguments */
    void *p = (void *)1;
    errno = 0;
    CHECK(posix_memalign(&p, 3, 10) == EINVAL);
    CHECK(posix_memalign(&p, sizeof(void *) / 2, 10) == EINVAL);
    CHECK(p == (void *)1);                       /* untouched on error */
    CHECK(errno == 0);                           /* posix_memalign does not set errno */
    CHECK(posix_memalign(&p, 64, SIZE_MAX / 2) == ENOMEM);
    errno = 0;
    CHECK(aligned_alloc(3, 10) == 0 && errno == EINVAL);
    errno = 0;
    CHECK(memalign(SIZE_MAX / 2 + 2, 10) == 0 && errno == EINVAL);
    void *m = memalign(24, 10);                  /* glibc rounds to 32 */
    use(m, 10, 32);
    errno = 0;
    CHECK(memalign(64, SIZE_MAX - 10) == 0 && errno == ENOMEM);
    errno = 0;
    CHECK(pvalloc(SIZE_MAX - 10) == 0 && errno == ENOMEM);
    errno = 0;
    CHECK(valloc(SIZE_MAX / 2) == 0 && errno == ENOMEM);
    if (fails) return 1;
    puts("ok");
    return 0;
}
