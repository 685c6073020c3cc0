/* SPDX-License-Identifier: MIT */
/* A plugin that t_deepbind opens with RTLD_DEEPBIND: it allocates blocks
 * the program frees, frees blocks the program allocated, and overflows a
 * block of its own. */
#include <stdlib.h>
#include <string.h>

char *plugin_copy(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    memcpy(p, s, n);
    return p;
}

void plugin_release(char *p)
{
    free(p);
}

char *plugin_grow(char *p, size_t n)
{
    return realloc(p, n);
}

void plugin_overflow(volatile size_t n)
{
    char *p = malloc(n);
    p[n] = 1;
    free(p);
}
