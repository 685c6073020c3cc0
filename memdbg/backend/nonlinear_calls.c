// SPDX-License-Identifier: MIT
/* The nonlinear backend's remap_file_pages calls: one call, and the calls
 * of malloc's and free's common path made without the heap lock.  The
 * backend (nonlinear.c) and compact mode (compact.c) both make them. */

#include "backend/backend.h"
#include "nonlinear_abi.h"
#include "compact.h"
#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Every call is MAP_NONBLOCK: guards need no page, and a new block's pages
 * are brought in by malloc's own first write (the padding fill), which in
 * this kernel costs less than populating them inside the call (no GUP
 * walk, no LRU drain). */
int md_nonlinear_rfp(uintptr_t addr, size_t len, int prot, size_t pgoff)
{
    if (md_opt.nonlinear_emulation) {
        /* Test aid for stock kernels: same page semantics through
         * mmap(MAP_FIXED), at the price of one VMA per call. */
        if (!md_heap_fd_ok()) { errno = EBADF; return -1; }
        void *r = mmap((void *)addr, len, prot, MAP_SHARED | MAP_FIXED | MAP_NORESERVE, md_heap.fd,
                       (off_t)pgoff << MD_PAGE_SHIFT);
        return r == MAP_FAILED ? -1 : 0;
    }
    /* EINTR comes only with a fatal signal pending (mmap_write_lock_killable) */
    for (;;) {
        if (syscall(SYS_remap_file_pages, addr, len, prot, pgoff, MAP_CHGPROT | MAP_NONBLOCK) == 0) return 0;
        if (errno != EINTR) return -1;
    }
}

/* The heap lock is given up around the calls of a malloc's or a free's
 * common path, so that no thread waits for another's kernel work: the
 * call maps or guards pages only this thread can reach (a slot being set
 * up: MD_SLOT_READY, in no list; or a block being freed: MD_SLOT_QUARANTINED,
 * not in the FIFO yet, so its addresses are not reused, its run back in
 * the pool only after the call).  The nids slots ids[] are those whose
 * mapping is in flight, for fork (SLOT_F_SENDING).  Called with the lock,
 * returns with it. */
uint32_t md_nonlinear_send_unlocked(const uint32_t *ids, uint32_t nids, const struct md_rfp_entry *e,
                                    uint32_t n, uint32_t (*send)(const struct md_rfp_entry *, uint32_t))
{
    MD_DCHECK(md_heap_lock_mine());
    for (uint32_t i = 0; i < nids; i++) md_heap.slots[ids[i]].flags |= SLOT_F_SENDING;
    md_heap_unlock();
    uint32_t done = send(e, n);
    int err = errno;
    md_heap_lock();
    for (uint32_t i = 0; i < nids; i++) md_heap.slots[ids[i]].flags &= (uint8_t)~SLOT_F_SENDING;
    errno = err;
    return done;
}

static uint32_t send_one(const struct md_rfp_entry *e, uint32_t n)
{
    return n && md_nonlinear_rfp((uintptr_t)e->addr, (size_t)e->size, (int)e->prot, (size_t)e->pgoff) == 0;
}

/* One call of the common path without the heap lock (above); `sending`
 * (0: none) is the slot it maps. */
int md_nonlinear_rfp_unlocked(uint32_t sending, uintptr_t addr, size_t len, int prot, size_t pgoff)
{
    struct md_rfp_entry e = { .addr = addr, .size = len, .pgoff = pgoff, .prot = (uint32_t)prot };
    return md_nonlinear_send_unlocked(&sending, sending ? 1 : 0, &e, 1, send_one) == 1 ? 0 : -1;
}

