/* SPDX-License-Identifier: MIT */
/* A small program with one heap bug per mode, to try libmemdbg.so:
 *   build/memdbg run -- build/examples/demo_bugs uaf     (make builds it)
 * Modes: overflow, underflow, uaf, double-free, leak, ok. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *copy_name(const char *s)
{
    char *p = malloc(strlen(s));      /* bug for "overflow": no room for the NUL */
    strcpy(p, s);
    return p;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "ok";
    if (!strcmp(mode, "overflow")) {
        char *n = copy_name("sixteen-chars-xx");   /* 16 chars: the NUL hits the guard page */
        free(n);
    } else if (!strcmp(mode, "underflow")) {
        int *v = calloc(4, sizeof *v);
        printf("%d\n", v[-1]);        /* reported with protect_below=1 */
        free(v);
    } else if (!strcmp(mode, "uaf")) {
        char *n = strdup("hello");
        free(n);
        printf("%c\n", n[0]);
    } else if (!strcmp(mode, "double-free")) {
        char *n = malloc(8);
        free(n);
        free(n);
    } else if (!strcmp(mode, "leak")) {
        for (int i = 0; i < 3; i++) malloc(100);
    } else {
        char *n = malloc(6);
        strcpy(n, "fine!");
        puts(n);
        free(n);
    }
    return 0;
}
