/* SPDX-License-Identifier: MIT */
/* main returns while other threads are inside malloc and free: the
 * padding check of live blocks at exit must not take a block whose
 * padding another thread is still writing for an overflow. */

// main returns while 3 threads churn: no false padding error at exit, in
// any of 5 runs.
// TEST: exit while other threads malloc: no false padding error
// RUN: %memdbg -o detect_leaks=0 %t
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// RUN: %memdbg -o detect_leaks=0 %t
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// RUN: %memdbg -o detect_leaks=0 %t
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// RUN: %memdbg -o detect_leaks=0 %t
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// RUN: %memdbg -o detect_leaks=0 %t
// EXIT: 0
// CHECK-NOT: ERROR: memdbg

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define SLOTS 64

static void *churn(void *arg)
{
    void *keep[SLOTS] = { 0 };
    unsigned seed = (unsigned)(uintptr_t)arg;
    for (unsigned i = 0;; i++) {
        unsigned k = (seed + i * 7) % SLOTS;
        free(keep[k]);
        keep[k] = malloc(16 + (i * 37 + seed) % 2000);
    }
    return NULL;
}

int main(void)
{
    pthread_t t;
    for (int i = 0; i < 3; i++)
        if (pthread_create(&t, NULL, churn, (void *)(uintptr_t)(i + 1)) != 0) return 2;
    struct timespec ts = { 0, 5 * 1000 * 1000 };
    nanosleep(&ts, NULL);
    return 0;
}
