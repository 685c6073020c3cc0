/* SPDX-License-Identifier: MIT */
/* A module for dlopen whose TLS is dynamic (allocated by __tls_get_addr
 * with malloc, reachable only through each thread's DTV): the 100 KB array
 * does not fit glibc's static TLS surplus. */
#include <stdlib.h>

__thread void *dyn_tls_ptr;
__thread char dyn_tls_big[100000];

void dyn_tls_set(size_t n)
{
    dyn_tls_ptr = malloc(n);
    dyn_tls_big[7] = 1;
}
