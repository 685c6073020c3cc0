/* SPDX-License-Identifier: MIT */
/* 4 threads allocate; each block is freed by the next thread (cross-thread
 * frees through a locked ring). */

// TEST: 4 threads with cross-thread frees
// RUN: %memdbg %t
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ok

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 4
#define PER_THREAD 20000
#define RING 256

struct ring { pthread_mutex_t m; void *slot[RING]; size_t size[RING]; int head, tail; };
static struct ring rings[THREADS];
static int failures, finished;
static void drain(struct ring *r);
static __thread struct ring *my_ring;

static void push(struct ring *r, void *p, size_t n)
{
    for (;;) {
        pthread_mutex_lock(&r->m);
        if ((r->head + 1) % RING != r->tail) {
            r->slot[r->head] = p; r->size[r->head] = n; r->head = (r->head + 1) % RING;
            pthread_mutex_unlock(&r->m);
            return;
        }
        pthread_mutex_unlock(&r->m);
        drain(my_ring);   /* keep our consumer side moving while we wait */
        sched_yield();
    }
}

static int pop(struct ring *r, void **p, size_t *n)
{
    pthread_mutex_lock(&r->m);
    int ok = r->head != r->tail;
    if (ok) { *p = r->slot[r->tail]; *n = r->size[r->tail]; r->tail = (r->tail + 1) % RING; }
    pthread_mutex_unlock(&r->m);
    return ok;
}

static void drain(struct ring *r)
{
    void *p; size_t n;
    while (pop(r, &p, &n)) {
        for (size_t i = 0; i < n; i++) if (((unsigned char *)p)[i] != (unsigned char)n) __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
        free(p);
    }
}

static void *worker(void *arg)
{
    int me = (int)(long)arg;
    struct ring *mine = &rings[me], *next = &rings[(me + 1) % THREADS];
    my_ring = mine;
    for (int i = 0; i < PER_THREAD; i++) {
        size_t n = 1 + (size_t)(i * 31 + me) % 300;
        unsigned char *p = malloc(n);
        memset(p, (int)(unsigned char)n, n);
        push(next, p, n);
        if (i % 8 == 0) drain(mine);
    }
    __atomic_add_fetch(&finished, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&finished, __ATOMIC_SEQ_CST) < THREADS) { drain(mine); sched_yield(); }
    return 0;
}

int main(void)
{
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) pthread_mutex_init(&rings[i].m, 0);
    for (int i = 0; i < THREADS; i++) pthread_create(&t[i], 0, worker, (void *)(long)i);
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], 0);
    for (int i = 0; i < THREADS; i++) drain(&rings[i]);
    if (failures) { printf("%d corrupted bytes\n", failures); return 2; }
    puts("ok");
    return 0;
}
