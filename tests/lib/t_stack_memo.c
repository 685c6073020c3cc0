/* An allocation wrapper entered from three callers at the same stack
 * depth, as bash's xmalloc or a C++ operator new is: the call into malloc
 * has one return address and one stack pointer for all three, and only the
 * words above it (the callers' return addresses) tell the stacks apart.
 * memdbg's per-thread stack memo (stackmemo.c) must keep the three apart
 * (the report names the right caller) and serve them (print_stats counts
 * the captures it served).  The last round frees the block from a caller
 * other than the usual one; with "uaf" it then reads it: the report's
 * "allocated by" stack must name from_beta only, "freed by" release_gamma
 * only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

NOINLINE void *wrap_alloc(size_t n) { return malloc(n); }
NOINLINE void wrap_free(void *p) { free(p); }
NOINLINE char *from_alpha(void) { return wrap_alloc(40); }
NOINLINE char *from_beta(void) { return wrap_alloc(40); }
NOINLINE char *from_gamma(void) { return wrap_alloc(40); }
NOINLINE void release_alpha(char *p) { wrap_free(p); }
NOINLINE void release_beta(char *p) { wrap_free(p); }
NOINLINE void release_gamma(char *p) { wrap_free(p); }
NOINLINE int read_freed(const char *p) { return *(const volatile char *)(p + 3); }

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 3000;
    int uaf = argc > 2 && !strcmp(argv[2], "uaf");   /* else: exit 0, for the counts */
    char *a = 0, *b = 0, *c = 0;
    for (int r = 0; r < rounds; r++) {
        a = from_alpha();
        b = from_beta();
        c = from_gamma();
        memset(a, 1, 40);
        memset(b, 2, 40);
        memset(c, 3, 40);
        release_alpha(a);
        if (r + 1 == rounds) break;
        release_beta(b);
        release_gamma(c);
    }
    release_gamma(b);   /* the usual stack frees c here */
    release_beta(c);
    printf("rounds %d\n", rounds);
    fflush(stdout);
    return uaf ? read_freed(b) : 0;
}
