/* SPDX-License-Identifier: MIT */
/* unshare(CLONE_NEWUSER) needs a single-threaded process: memdbg must not
 * have started a thread behind the program's back, even after mallocs made
 * after the constructors ran. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    for (int i = 0; i < 1000; i++) free(malloc(64 + i));
    char *keep = malloc(1000);
    if (unshare(CLONE_NEWUSER) != 0) { printf("unshare: %s\n", strerror(errno)); return 1; }
    for (int i = 0; i < 1000; i++) free(malloc(64 + i));
    free(keep);
    puts("ok");
    return 0;
}
