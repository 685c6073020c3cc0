/* SPDX-License-Identifier: MIT */
/* The heap lock's slow paths (the fast paths are inline in core/core.h).
 *
 * The lock word holds the owner's token (core/core.h), or 0, plus
 * MD_LOCK_WAITERS when a thread may sleep on it.  A pthread mutex records
 * its owner only after the atomic that takes it, so a signal landing in
 * between could not tell that its own thread holds the lock; here the one
 * compare-and-swap that takes the lock also names the owner. */
#include "core/core.h"
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

MEMDBG_TLS uint32_t md_lock_token MEMDBG_HIDDEN;
static uint32_t tokens_given;

/* Never 0 and never with the waiters bit: 2^31 threads before a wrap. */
uint32_t md_lock_token_new(void)
{
    uint32_t t = (__atomic_add_fetch(&tokens_given, 1, __ATOMIC_RELAXED) & ~MD_LOCK_WAITERS);
    if (!t) t = 1;
    md_lock_token = t;
    return t;
}

void md_heap_lock_wait(uint32_t token)
{
    for (;;) {
        uint32_t seen = __atomic_load_n(&md_heap.lock, __ATOMIC_RELAXED);
        if (seen == 0) {
            /* Others may still sleep on the word: keep the bit, so the
             * next unlock wakes one of them. */
            if (__atomic_compare_exchange_n(&md_heap.lock, &seen, token | MD_LOCK_WAITERS, false,
                                            __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
                return;
            continue;
        }
        if (!(seen & MD_LOCK_WAITERS) &&
            !__atomic_compare_exchange_n(&md_heap.lock, &seen, seen | MD_LOCK_WAITERS, false,
                                         __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            continue;
        syscall(SYS_futex, &md_heap.lock, FUTEX_WAIT_PRIVATE, seen | MD_LOCK_WAITERS, 0, 0, 0);
    }
}

void md_heap_lock_wake(void)
{
    syscall(SYS_futex, &md_heap.lock, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0);
}
