/* SPDX-License-Identifier: MIT */
/* madvise over many ranges in one kernel entry.  process_madvise(2) on the
 * caller's own process accepts any advice since Linux 6.13, and since 6.14
 * it takes PIDFD_SELF, so no descriptor is opened (a program may close or
 * reuse any number).  Older kernels refuse the call or the advice: then,
 * and for the ranges after a partial failure, one madvise per range. */
#include "sys/sys.h"
#include <errno.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef SYS_process_madvise
#define SYS_process_madvise 440
#endif
#define PIDFD_SELF_THREAD (-10000)   /* the calling thread; its mm is ours */
#define VEC_MAX 1024                  /* UIO_MAXIOV */

/* Per advice, whether process_madvise refused it: 0 unknown, 1 works, 2 refused. */
static uint8_t vec_state[128];

static int madv_one(const struct iovec *v, int advice)
{
    for (;;) {
        if (madvise(v->iov_base, v->iov_len, advice) == 0) return 0;
        if (errno != EINTR && errno != EAGAIN) return -1;
    }
}

/* Ranges [from, n) one by one; ok[] (may be NULL) per range. */
static size_t one_by_one(const struct iovec *iov, size_t from, size_t n, int advice, bool *ok)
{
    size_t failed = 0;
    for (size_t i = from; i < n; i++) {
        bool good = madv_one(&iov[i], advice) == 0;
        if (ok) ok[i] = good;
        failed += !good;
    }
    return failed;
}

bool md_madvise_vectored(int advice)
{
    return advice >= 0 && advice < (int)sizeof vec_state &&
           __atomic_load_n(&vec_state[advice], __ATOMIC_RELAXED) != 2;
}

size_t md_madvise_ranges(const struct iovec *iov, size_t n, int advice, bool *ok)
{
    size_t done = 0;
    uint8_t *st = advice >= 0 && advice < (int)sizeof vec_state ? &vec_state[advice] : 0;
    while (done < n && n - done > 1 && st && __atomic_load_n(st, __ATOMIC_RELAXED) != 2) {
        size_t k = n - done < VEC_MAX ? n - done : VEC_MAX;
        size_t want = 0;
        for (size_t i = 0; i < k; i++) want += iov[done + i].iov_len;
        long r = syscall(SYS_process_madvise, PIDFD_SELF_THREAD, iov + done, k, advice, 0u);
        if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (r < 0 && (errno == EBADF || errno == EINVAL || errno == ENOSYS || errno == EPERM ||
                      errno == ESRCH) && __atomic_load_n(st, __ATOMIC_RELAXED) == 0) {
            __atomic_store_n(st, 2, __ATOMIC_RELAXED);   /* this kernel: never vectored */
            break;
        }
        if (r > 0) __atomic_store_n(st, 1, __ATOMIC_RELAXED);
        if (r >= 0 && (size_t)r == want) {
            if (ok) for (size_t i = 0; i < k; i++) ok[done + i] = true;
            done += k;
            continue;
        }
        /* Partial: the ranges fully covered by r succeeded, in order. */
        size_t got = r > 0 ? (size_t)r : 0, i = 0;
        while (i < k && iov[done + i].iov_len <= got) {
            got -= iov[done + i].iov_len;
            if (ok) ok[done + i] = true;
            i++;
        }
        done += i;
        break;   /* the rest one by one: tells which range failed */
    }
    return one_by_one(iov, done, n, advice, ok);
}
