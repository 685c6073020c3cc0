/* SPDX-License-Identifier: MIT */
/* exit() from a thread with a 64 KiB stack, with a leaked block: the leak
 * report at exit symbolizes, which must not run on that small stack. */

// exit() from a 64 KiB-stack thread: the leak report runs on memdbg's stack.
// TEST: exit() from a 64 KiB-stack thread: full leak report
// RUN: %memdbg %t
// EXIT: 1
// CHECK: ^Direct leak of 100 byte\(s\) in 1 object\(s\) allocated from:
// CHECK-STACK: ^Direct leak of 100 | malloc | leak_and_exit

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void *leak_and_exit(void *arg)
{
    (void)arg;
    char *p = malloc(100);
    p[0] = 1;
    p = NULL;
    fflush(stdout);
    exit(0);
}

int main(void)
{
    pthread_attr_t attr;
    pthread_t t;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 65536);
    if (pthread_create(&t, &attr, leak_and_exit, NULL) != 0) return 2;
    pthread_join(t, NULL);
    return 3;
}
