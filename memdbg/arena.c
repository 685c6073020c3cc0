/* The arena: one virtual range mapped from the heap memfd, carved into
 * slots.  A slot is a run of pages holding one block's data pages plus its
 * guard page; slots have size classes (in pages) so that a slot whose
 * quarantine ended can be handed to any later block of its class.
 *
 * page_slot[] maps every arena page (guard pages included) to its slot, so
 * address -> block is one array load. */
#include "memdbg.h"
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

struct md_heap md_heap MEMDBG_HIDDEN = { .lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1 };

/* Classes 0..15 are exact (1..16 pages); above that, four classes per
 * power of two, so at most 25% of a large slot's address space is unused. */
uint32_t md_class_of(uint32_t pages)
{
    if (pages <= 16) return pages ? pages - 1 : 0;
    uint32_t lg = 31 - (uint32_t)__builtin_clz(pages - 1);   /* 2^lg < pages <= 2^(lg+1) */
    uint32_t step = 1u << (lg - 2);
    uint32_t k = (pages - (1u << lg) + step - 1) / step;      /* 1..4 */
    return 16 + (lg - 4) * 4 + (k - 1);
}

uint32_t md_class_pages(uint32_t cls)
{
    if (cls < 16) return cls + 1;
    uint32_t lg = (cls - 16) / 4 + 4, k = (cls - 16) % 4 + 1;
    uint64_t p = (1ull << lg) + (uint64_t)k * (1ull << (lg - 2));
    return p > UINT32_MAX ? UINT32_MAX : (uint32_t)p;
}

/* The heap's descriptor is moved to a high number, out of the way of
 * programs that expect the lowest free descriptors or close a few. */
int md_memfd(const char *name)
{
    int fd = (int)syscall(SYS_memfd_create, name, 1u /* MFD_CLOEXEC */);
    if (fd < 0) return fd;
    int high = fcntl(fd, F_DUPFD_CLOEXEC, 900);
    if (high < 0) return fd;
    close(fd);
    return high;
}

void md_arena_init(void)
{
    size_t size = md_opt.arena_size;
    md_heap.size = size;
    md_heap.total_pages = (uint32_t)(size >> MD_PAGE_SHIFT);
    md_heap.max_slots = md_heap.total_pages / 2 + 1;
    md_heap.page_slot = md_reserve((size_t)md_heap.total_pages * sizeof(uint32_t), "page map");
    md_heap.slots = md_reserve((size_t)md_heap.max_slots * sizeof(struct md_slot), "slot table");
    md_heap.class_free = md_reserve(MD_NCLASSES * sizeof(uint32_t), "class lists");
    md_heap.class_free_unguarded = md_reserve(MD_NCLASSES * sizeof(uint32_t), "class lists");
    md_heap.nslots = 0;
    md_heap.bump_page = 0;
    md_heap.guarded_frontier = 0;

    md_heap.fd = md_memfd("memdbg-heap");
    if (md_heap.fd < 0) md_die_msg("memdbg: memfd_create failed: ", strerror(errno), "");
    if (ftruncate(md_heap.fd, (off_t)size) != 0)
        md_die_msg("memdbg: cannot size the heap memfd: ", strerror(errno), "");
    /* Reserve the address range first; the backend maps the memfd over it. */
    void *a = mmap(0, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (a == MAP_FAILED) md_die_msg("memdbg: cannot reserve the arena: ", strerror(errno),
                                    " (try MEMDBG_OPTIONS=arena_size=8G)");
    md_heap.base = (uintptr_t)a;
    if (md_heap.backend->map_arena() != 0)
        md_die_msg("memdbg: cannot map the heap for backend ", md_heap.backend->name, "");
}

/* Guards are installed ahead of the bump pointer in 64 MiB steps, so that
 * wild accesses past the last slot fault too, without paying page-table
 * memory for the whole arena up front. */
static int extend_guarded(uint32_t upto)
{
    const uint32_t step = 16384;
    if (upto <= md_heap.guarded_frontier) return 0;
    uint32_t end = upto + step - (upto % step);
    if (end > md_heap.total_pages) end = md_heap.total_pages;
    if (md_heap.backend->guard_range(md_heap.guarded_frontier, end - md_heap.guarded_frontier) != 0)
        return -1;
    md_heap.guarded_frontier = end;
    return 0;
}

static uint32_t new_slot(uint32_t cls, uint32_t cap)
{
    if (cap > md_heap.total_pages - md_heap.bump_page) return 0;
    if (md_heap.nslots + 1 >= md_heap.max_slots) return 0;
    if (extend_guarded(md_heap.bump_page + cap) != 0) return 0;
    uint32_t id = ++md_heap.nslots;
    struct md_slot *s = &md_heap.slots[id];
    memset(s, 0, sizeof *s);
    s->first_page = md_heap.bump_page;
    s->pages = cap;
    s->cls = (uint8_t)cls;
    s->state = SLOT_FREE;
    s->flags = SLOT_F_FRESH;
    uint32_t *ps = md_heap.page_slot + md_heap.bump_page;
    for (uint32_t i = 0; i < cap; i++) ps[i] = id;
    md_heap.bump_page += cap;
    return id;
}

uint32_t md_slot_get(uint32_t pages_needed, bool unguarded)
{
    uint32_t cls = md_class_of(pages_needed);
    if (cls >= MD_NCLASSES) return 0;
    uint32_t cap = md_class_pages(cls);
    if (cap < pages_needed) return 0;
    uint32_t *list = unguarded ? md_heap.class_free_unguarded : md_heap.class_free;
    for (;;) {
        uint32_t id = list[cls];
        if (id) {
            list[cls] = md_heap.slots[id].next;
            md_heap.slots[id].next = 0;
            struct md_slot *s = &md_heap.slots[id];
            md_slot_settle(s);   /* its old memory must be gone first */
            /* Its pages read as zero again, unless recycle_pages kept them. */
            if (s->flags & SLOT_F_KEPT)
                __atomic_fetch_and(&s->flags, (uint8_t)~(SLOT_F_KEPT | SLOT_F_FRESH), __ATOMIC_RELAXED);
            else
                __atomic_fetch_or(&s->flags, SLOT_F_FRESH, __ATOMIC_RELAXED);
            return id;
        }
        id = new_slot(cls, cap);
        if (id) {
            if (unguarded) md_heap.slots[id].flags |= SLOT_F_UNGUARDED;
            return id;
        }
        /* Out of address space: end the quarantine of the oldest blocks. */
        if (!md_quarantine_evict_one()) return 0;
    }
}
