/* SPDX-License-Identifier: MIT */
/* Sized and aligned operator delete: the size and alignment the caller
 * passes say what type it believes it deletes; a block new'd with another
 * size or alignment is deleted through the wrong type (a base class
 * without a virtual destructor, a cast), which AddressSanitizer reports as
 * new-delete-type-mismatch.  Checked before the free itself, which reports
 * every other error (double free, bad free, mismatched forms). */
#include "alloc/alloc.h"
#include "report/report.h"

/* The alignment of a block as delete states it: 0 for none (plain new, or
 * an alignment no larger than new's own, which the compiler never passes
 * as std::align_val_t). */
static size_t stated_alignment(size_t align)
{
    return align > 16 ? align : 0;
}

/* Out of line: a correct delete does not reserve the report's frames. */
static __attribute__((noinline, cold)) void report_mismatch(void *p, struct md_slot *s, int dealloc, size_t size,
                                                            size_t alloc_align, size_t align)
{
    md_in_runtime++;
    uintptr_t frames[MD_MAX_FRAMES];
    struct md_error_info e = {
        .kind = MD_ERROR_NEW_DELETE_MISMATCH, .addr = (uintptr_t)p, .frames = frames, .slot = s,
        .alloc_kind = s->kind, .dealloc_kind = dealloc,
        .dealloc_size = size, .alloc_align = alloc_align, .dealloc_align = align,
    };
    e.nframes = md_capture_stack(frames, md_opt.malloc_context_size > 8 ? md_opt.malloc_context_size : 8);
    md_report_error(&e);
    md_in_runtime--;
    if (md_opt.halt_on_error) md_error_finish(true);
}

void md_delete(void *p, int dealloc, size_t size, size_t align)
{
    if (p && !md_in_runtime && md_heap.initialized && md_in_arena((uintptr_t)p)) {
        /* Without the heap lock: the block is the caller's to delete, so
         * nothing else changes its record unless the program races a
         * double free, which md_free reports. */
        struct md_slot *s = md_slot_of_addr((uintptr_t)p);
        bool ours = s && s->state == MD_SLOT_LIVE && s->user == (uintptr_t)p &&
                    ((s->kind == MD_KIND_NEW && dealloc == MD_DEALLOC_DELETE) ||
                     (s->kind == MD_KIND_NEW_ARRAY && dealloc == MD_DEALLOC_DELETE_ARRAY));
        size_t alloc_align = ours && s->new_align_order ? stated_alignment((size_t)1 << (s->new_align_order - 1)) : 0;
        if (ours && ((size != MD_SIZE_NOT_GIVEN && size != s->size) || stated_alignment(align) != alloc_align))
            report_mismatch(p, s, dealloc, size, alloc_align, stated_alignment(align));
    }
    md_free(p, dealloc);
}
