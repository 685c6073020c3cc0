// SPDX-License-Identifier: MIT
/* Who is running: whether this thread is inside memdbg (md_in_runtime),
 * its thread number for reports, and the record of every thread the
 * leak scan reads (stack pointer and thread pointer, taken at the
 * thread's first malloc).  The lowest layer holds them because the
 * allocator, the reports and the leak check all ask. */
#include "base/base.h"
#include <unistd.h>
#include <sys/syscall.h>

MEMDBG_TLS int md_in_runtime MEMDBG_HIDDEN;
MEMDBG_TLS sigjmp_buf *md_block_read_jmp MEMDBG_HIDDEN;
MEMDBG_TLS uintptr_t md_block_read_fault MEMDBG_HIDDEN;
static MEMDBG_TLS uint32_t tls_thread_id;   /* thread number + 1 */
static uint32_t next_thread_id;

#define MAX_THREADS 8192   /* keyed by thread pointer: a reused stack reuses its entry */
static struct md_thread_rec threads[MAX_THREADS];

uintptr_t md_thread_pointer(void)
{
    uintptr_t tp;
#if defined(__x86_64__)
    __asm__("mov %%fs:0, %0" : "=r"(tp));
#else
    tp = (uintptr_t)__builtin_thread_pointer();
#endif
    return tp;
}

/* Called once per thread, possibly with the heap lock held: no malloc, no
 * lock, one system call. */
static void record_thread(void)
{
    uintptr_t tp = md_thread_pointer();
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    pid_t tid = (pid_t)syscall(SYS_gettid);
    uint32_t h = (uint32_t)((tp >> 12) * 2654435761u) % MAX_THREADS;
    for (uint32_t i = 0; i < MAX_THREADS; i++) {
        struct md_thread_rec *t = &threads[(h + i) % MAX_THREADS];
        uintptr_t cur = __atomic_load_n(&t->tp, __ATOMIC_ACQUIRE);
        if (cur == 0) {
            uintptr_t zero = 0;
            if (!__atomic_compare_exchange_n(&t->tp, &zero, tp, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) &&
                zero != tp)
                continue;
            cur = tp;
        }
        if (cur == tp) {
            __atomic_store_n(&t->sp_hint, sp, __ATOMIC_RELEASE);
            __atomic_store_n(&t->tid, tid, __ATOMIC_RELEASE);
            return;
        }
    }
    /* table full: the thread is still scanned if it is blocked (sp from /proc) */
}

const struct md_thread_rec *md_thread_of_tid(pid_t tid)
{
    for (size_t i = 0; i < MAX_THREADS; i++)
        if (threads[i].tp && threads[i].tid == tid) return &threads[i];
    return 0;
}

uint32_t md_thread_id(void)
{
    if (!tls_thread_id) {
        tls_thread_id = __atomic_add_fetch(&next_thread_id, 1, __ATOMIC_RELAXED);
        record_thread();   /* leak roots: this thread's stack and TLS */
    }
    return tls_thread_id - 1;
}
