/* Stack capture with libunwind.  At malloc/free only raw return addresses
 * are stored (symbolization is deferred to report time).  Frames inside
 * libmemdbg itself are dropped, except the outermost one: the public entry
 * point (malloc, free, operator new...), which is what ASan users expect to
 * see as frame #0. */

#define UNW_LOCAL_ONLY
#include "memdbg.h"
#include <libunwind.h>
#include <link.h>

static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size; (void)data;
    uintptr_t me = (uintptr_t)&md_capture_stack;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (me >= lo && me < hi) {
            md_heap.self_start = lo;
            md_heap.self_end = hi;
            return 1;
        }
    }
    return 0;
}

void md_stacktrace_init(void)
{
    dl_iterate_phdr(find_self, 0);
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
}

static bool in_self(uintptr_t pc)
{
    return pc - md_heap.self_start < md_heap.self_end - md_heap.self_start;
}

int md_capture_stack(uintptr_t *frames, int max)
{
    void *raw[MD_MAX_FRAMES + 24];
    if (max <= 0) return 0;
    int want = max + 24;
    if (want > (int)(sizeof raw / sizeof *raw)) want = (int)(sizeof raw / sizeof *raw);
    int n = unw_backtrace(raw, want);
    int first = 0;
    while (first < n && in_self((uintptr_t)raw[first])) first++;
    if (first > 0) first--;
    int out = 0;
    for (int i = first; i < n && out < max; i++) frames[out++] = (uintptr_t)raw[i];
    return out;
}

/* For the fault handler: unwind the interrupted context, so frame #0 is the
 * faulting instruction itself. */
int md_capture_stack_from_ucontext(void *uc, uintptr_t *frames, int max)
{
    unw_cursor_t cursor;
    if (unw_init_local2(&cursor, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) != 0) return 0;
    int n = 0;
    do {
        unw_word_t ip;
        if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || ip == 0) break;
        frames[n++] = (uintptr_t)ip;
    } while (n < max && unw_step(&cursor) > 0);
    return n;
}
