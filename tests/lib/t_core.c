/* SPDX-License-Identifier: MIT */
/* A process that dies with a core under memdbg: the core keeps the live
 * blocks (a marker string in one) but not the heap's unused reservation.
 *   t_core segv    a null write, no handler: dies of SIGSEGV
 *   t_core abort   a use-after-free, run with abort_on_error=1: SIGABRT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *keep[100];

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "segv";
    for (int i = 0; i < 100; i++) keep[i] = malloc(100 + i * 50);
    for (int i = 0; i < 100; i += 2) free(keep[i]);
    /* assembled at run time, so only the heap holds it whole */
    strcpy(keep[1], "memdbg-core-");
    strcat(keep[1], "live-marker");
    fflush(stdout);
    if (!strcmp(mode, "abort")) return keep[0][3];
    *(volatile int *)(argv[0] ? 0 : 8) = 1;
    return 0;
}
