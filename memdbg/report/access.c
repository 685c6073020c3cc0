/* SPDX-License-Identifier: MIT */
/* The range checks behind the mem and str interceptors (preload/strings.c):
 * a call's whole source and destination are compared with the live block
 * they point into before the call touches a byte, so the report gives the
 * call's size and its first bad byte, and bytes a fault cannot see (the
 * alignment slack after a block, the padding before it, the neighbours'
 * chunks of a compact page) count as outside the block. */
#include "report/report.h"
#include <string.h>

size_t md_block_room(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    if (!md_in_arena(a)) return SIZE_MAX;
    const struct md_slot *s = md_slot_of_addr(a);
    if (!s || s->state != MD_SLOT_LIVE || a < s->user || a - s->user >= s->size) return 0;
    return s->user + s->size - a;
}

/* The stack from the interceptor on: md_capture_stack keeps the last of
 * memdbg's frames, which is the interceptor's (memcpy, strlen...). */
static int capture(uintptr_t *frames)
{
    int depth = md_opt.malloc_context_size > 8 ? md_opt.malloc_context_size : 8;
    return md_capture_stack(frames, depth);
}

__attribute__((noinline)) void md_report_bad_range(const void *p, size_t n, size_t room, int access)
{
    md_in_runtime++;
    uintptr_t frames[MD_MAX_FRAMES];
    struct md_error_info e;
    memset(&e, 0, sizeof e);
    e.addr = (uintptr_t)p + room;   /* the first byte outside the block */
    e.access = access;
    e.access_size = n;
    e.frames = frames;
    e.nframes = capture(frames);
    md_classify_addr(&e, e.addr);
    md_report_error(&e);
    md_in_runtime--;
    md_error_finish(false);
}

__attribute__((noinline)) void md_report_overlap(const char *fn, const void *a, size_t an, const void *b,
                                                  size_t bn)
{
    md_in_runtime++;
    uintptr_t frames[MD_MAX_FRAMES];
    struct md_error_info e;
    memset(&e, 0, sizeof e);
    e.kind = MD_ERROR_PARAM_OVERLAP;
    e.function = fn;
    e.addr = (uintptr_t)a;
    e.access_size = an;
    e.addr2 = (uintptr_t)b;
    e.size2 = bn;
    e.frames = frames;
    e.nframes = capture(frames);
    md_report_error(&e);
    md_in_runtime--;
    md_error_finish(false);
}
