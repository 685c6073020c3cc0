/* fork(): the heap is a MAP_SHARED memfd, so a child would otherwise share
 * its parent's heap.  The private copy for the child is made in the parent
 * (prepare handler, heap locked), *before* fork: copying in the child would
 * race with the parent, which keeps running and writing its heap.  The child
 * handler then maps the copy over the arena.  In a multi-threaded parent,
 * writes other threads make between the copy and fork may be missing from
 * the child's heap (single-threaded programs get an exact snapshot). */
#include "memdbg.h"
#include <pthread.h>
#include <string.h>
#include <unistd.h>

MEMDBG_HIDDEN void md_report_fd_reset(void);

static int copy_fd = -1;

static void prepare(void)
{
    md_in_runtime++;
    pthread_mutex_lock(&md_heap.lock);
    if (!md_heap.initialized) return;
    copy_fd = md_memfd("memdbg-heap");
    if (copy_fd >= 0 && (ftruncate(copy_fd, (off_t)md_heap.size) != 0 ||
                         md_copy_heap_file(md_heap.fd, copy_fd, md_heap.backend->file_extent()) != 0)) {
        close(copy_fd);
        copy_fd = -1;
    }
}

static void parent(void)
{
    if (copy_fd >= 0) close(copy_fd);
    copy_fd = -1;
    pthread_mutex_unlock(&md_heap.lock);
    md_in_runtime--;
}

static void child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    memcpy(&md_heap.lock, &fresh, sizeof fresh);
    md_report_fd_reset();
    if (md_heap.initialized) {
        if (copy_fd < 0 || md_heap.backend->after_fork(copy_fd) != 0)
            md_die_msg("memdbg: fork: cannot give the child its own copy of the heap (",
                       md_heap.backend->name, " backend); exiting the child");
        copy_fd = -1;
        md_worker_fork_child();
    }
    md_in_runtime--;
}

void md_fork_init(void)
{
    pthread_atfork(prepare, parent, child);
}
