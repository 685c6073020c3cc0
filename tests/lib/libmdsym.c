/* SPDX-License-Identifier: MIT */
/* A library for the symbolization tests (t_dlopen): malloc, free and a
 * heap read happen inside it, so every stack of a use-after-free report
 * goes through a dlopen'ed module.  Built twice: libmdsym.so, and with
 * -DMDSYM_SECOND libmdsym2.so, whose functions lie at other offsets (it is
 * loaded where the first one was, after the first one is dlclose'd). */
#include <stdlib.h>

#ifdef MDSYM_SECOND
#define F(name) second_##name
/* code before the functions, so their offsets differ from libmdsym.so's */
int second_padding(int x)
{
    volatile int a[64];
    for (int i = 0; i < 64; i++) a[i] = x * i;
    for (int i = 0; i < 64; i++) x += a[i] * a[63 - i];
    return x;
}
#else
#define F(name) name
#endif

char *F(lib_alloc)(size_t n)
{
    return malloc(n);   /* MARK: lib_alloc */
}

void F(lib_free)(char *p)
{
    free(p);            /* MARK: lib_free */
}

int F(lib_read)(const char *p, int i)
{
    return p[i];        /* MARK: lib_read */
}
