/* SPDX-License-Identifier: MIT */
/* fork().  With the guard and mprotect backends the arena is a private
 * anonymous mapping: the kernel gives the child a copy-on-write copy (guard
 * markers and protections included), and there is nothing to do but reset
 * the locks.  The nonlinear backend's heap is a MAP_SHARED memfd, so a
 * child would share its parent's heap: its private copy is made in the
 * parent (prepare handler, heap locked) *before* fork, since copying in the
 * child would race with the parent, which keeps running and writing its
 * heap; the child handler maps the copy over the arena.  That copy holds
 * the live blocks' pages only (backend_nonlinear.c).  In a multi-threaded
 * parent, writes other threads make to their blocks while the copy is
 * taken may be missing from the child's heap.
 *
 * fork() may come from a signal handler that interrupted malloc or free on
 * the forking thread (glibc keeps fork async-signal-safe in a
 * single-threaded process).  If that call holds the heap lock, waiting for
 * it would hang: the heap is left as the call left it, and the call,
 * resumed in both processes when the handler returns, finishes its work
 * and releases the lock in each.  The child must not touch the heap
 * before that, so the other threads' deferred guards wait for the thread
 * that adopts their cache. */
#include "lifecycle/lifecycle.h"
#include <pthread.h>
#include <unistd.h>


/* The allocator's thread caches (alloc/slot_cache.c), above this layer,
 * register their child handler when the first cache is made: before
 * that they have nothing a child must fix. */
static void (*caches_child)(bool may_lock);

void md_fork_set_caches_child(void (*fn)(bool may_lock))
{
    __atomic_store_n(&caches_child, fn, __ATOMIC_RELEASE);
}

static int copy_fd = -1;
static uint64_t copy_dev, copy_ino;
static bool held_by_interrupted_call;   /* this thread held the lock at fork */

static void prepare(void)
{
    held_by_interrupted_call = md_heap_lock_mine();
    md_in_runtime++;
    md_unwind_fork_prepare();
    if (!held_by_interrupted_call) md_heap_lock();
    if (!md_heap.initialized || !md_heap.backend->fork_prepare) return;
    copy_fd = md_heap.backend->fork_prepare(held_by_interrupted_call);
    md_fd_identity(copy_fd, &copy_dev, &copy_ino);
}

static void parent(void)
{
    /* Another thread may have closed it and reused the number meanwhile. */
    if (md_fd_is(copy_fd, copy_dev, copy_ino)) close(copy_fd);
    copy_fd = -1;
    if (!held_by_interrupted_call) md_heap_unlock();
    md_unwind_fork_parent();
    md_in_runtime--;
}

static void child(void)
{
    /* Taken by prepare() in the parent, or still held by the interrupted
     * call, which the child resumes (this thread keeps its token; the
     * other threads that may have been waiting do not exist here). */
    md_heap.lock = held_by_interrupted_call ? md_token() : 0;
    md_report_fd_reset();
    md_children_fork_child();
    md_memo_fork_child();
    md_unwind_fds_fork_child();
    md_internal_fork_child();
    if (md_heap.initialized) {
        if (md_heap.backend->fork_prepare &&
            (copy_fd < 0 || md_heap.backend->after_fork(copy_fd, held_by_interrupted_call) != 0))
            md_die_msg("memdbg: fork: cannot give the child its own copy of the heap (",
                       md_heap.backend->name, " backend); exiting the child");
        copy_fd = -1;
        void (*fn)(bool) = __atomic_load_n(&caches_child, __ATOMIC_ACQUIRE);
        if (fn) fn(!held_by_interrupted_call);
    }
    md_in_runtime--;
}

void md_fork_init(void)
{
    pthread_atfork(prepare, parent, child);
}
