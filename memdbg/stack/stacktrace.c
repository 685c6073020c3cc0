/* SPDX-License-Identifier: MIT */
/* Stack capture with libunwind.  At malloc/free only raw return addresses
 * are stored (symbolization is deferred to report time).  Frames inside
 * libmemdbg itself are dropped, except the outermost one: the public entry
 * point (malloc, free, operator new...), which is what ASan users expect to
 * see as frame #0. */

#define UNW_LOCAL_ONLY
#include "stack/stack.h"
#include <libunwind.h>
#include <link.h>
#include <string.h>

/* libmemdbg.so's path as the loader opened it: the symbolizer library
 * lies next to it (symbolize.c). */
static char self_path[4096];

const char *md_self_path(void)
{
    return self_path;
}

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
            size_t n = info->dlpi_name ? md_strlen(info->dlpi_name) : 0;
            if (n < sizeof self_path) memcpy(self_path, info->dlpi_name, n + 1);
            return 1;
        }
    }
    return 0;
}

void md_stacktrace_init(void)
{
    dl_iterate_phdr(find_self, 0);
    md_modules_refresh();
    md_unwind_fds_init((void *)&unw_step);
    /* libunwind initializes itself here and opens its pipe (unwind_fds.c) */
    if (md_unwind_begin()) {
        /* Debian's libunwind is built without the per-thread cache: this
         * falls back to its global one, whose lock masks signals
         * (unwind_fds.c makes that free). */
        unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
        md_unwind_end();
    }
}

static bool in_self(uintptr_t pc)
{
    return pc - md_heap.self_start < md_heap.self_end - md_heap.self_start;
}

int md_capture_stack(uintptr_t *frames, int max)
{
    if (max <= 0) return 0;
    if (max > MD_MAX_FRAMES) max = MD_MAX_FRAMES;
    /* sized by the depth asked for: malloc's stack use stays small at the
     * default depth, whatever the limit */
    int want = max + 24;
    void *raw[want];
    if (!md_unwind_begin()) {
        frames[0] = (uintptr_t)__builtin_return_address(0);
        return 1;
    }
    /* A new module's frames need its table entry.  Inside the unwind
     * window: dl_iterate_phdr holds the loader's lock, which a program's
     * SIGPROF handler unwinding with libunwind would wait for forever. */
    md_modules_refresh();
    int n = unw_backtrace(raw, want);
    md_unwind_end();
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
    if (max <= 0) return 0;
    if (!md_unwind_begin()) {
        frames[0] = (uintptr_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
        return 1;
    }
    int n = 0;
    if (unw_init_local2(&cursor, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) == 0) {
        do {
            unw_word_t ip;
            if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || ip == 0) break;
            frames[n++] = (uintptr_t)ip;
        } while (n < max && unw_step(&cursor) > 0);
    }
    md_unwind_end();
    return n;
}

/* Records a stack word of the program's frames that the unwinder loaded a
 * register from, so that a memo entry can check it still holds the same
 * value (stackmemo.c).  Words below the program's stack pointer are
 * memdbg's own frames, which the memo key covers. */
static bool record_loc(struct md_stack *st, unw_cursor_t *c, int reg)
{
    unw_save_loc_t sl;
    if (unw_get_save_loc(c, reg, &sl) != 0) return false;
    if (sl.type == UNW_SLT_NONE) return true;
    if (sl.type != UNW_SLT_MEMORY) return false;
    uintptr_t a = (uintptr_t)sl.u.addr;
    if (a < st->sp) return true;
    for (int i = 0; i < st->nslots; i++) if (st->slot_addr[i] == a) return true;
    if (st->nslots >= MD_MEMO_SLOTS) return false;
    st->slot_addr[st->nslots] = a;
    st->slot_val[st->nslots] = *(const uintptr_t *)a;
    st->nslots++;
    return true;
}

/* Whether the frame's CFA may follow RBP rather than RSP: its function
 * starts with the frame-pointer prologue (push %rbp; mov %rsp,%rbp), or
 * with gcc's stack realignment (lea 8(%rsp),%r10), or is unknown.  Only
 * then can its callers' stack differ while RSP at the call is the same
 * (alloca, variable-length arrays, realignment). */
static bool frame_may_use_rbp(unw_cursor_t *c)
{
    unw_proc_info_t pi;
    if (unw_get_proc_info(c, &pi) != 0 || !pi.start_ip) return true;
    const unsigned char *p = (const unsigned char *)pi.start_ip;
    if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa) p += 4;   /* endbr64 */
    if (p[0] == 0x55 && p[1] == 0x48 && ((p[2] == 0x89 && p[3] == 0xe5) || (p[2] == 0x8b && p[3] == 0xec)))
        return true;
    if (p[0] == 0x4c && p[1] == 0x8d && p[2] == 0x54 && p[3] == 0x24) return true;
    return false;
}

/* The slow path of md_stack_capture: unwinds step by step from here and
 * keeps the frames from the entry point's return address (st->entry_ra)
 * on, recording the stack words each step from the program's frames loaded
 * the return address and RBP from.  With the program's RSP and RBP at the
 * call, those words determine the frames, because the CFA rules compilers
 * emit use RSP and RBP only; so a later call with the same key and the
 * same words has the same stack.  A stack through a signal frame is not
 * memoized (see below). */
static int unwind_recording(struct md_stack *st, int max)
{
    unw_context_t uc;
    unw_cursor_t c;
    if (unw_getcontext(&uc) != 0 || unw_init_local(&c, &uc) != 0) return 0;
    int n = 0, skipped = 0;
    bool ok = true;
    for (;;) {
        unw_word_t ip;
        if (unw_get_reg(&c, UNW_REG_IP, &ip) != 0 || ip == 0) break;
        if (n == 0 && ip != st->entry_ra) {
            if (++skipped > 16) return 0;   /* entry frame not found: give up */
        } else {
            st->buf[n++] = (uintptr_t)ip;
            if (n >= max) break;
        }
        /* A program frame whose RBP is still the one of the call (saved in
         * memdbg's frames, below the program's RSP): if it may follow RBP,
         * the memo key needs that RBP. */
        if (n >= 2 && !st->needs_bp) {
            unw_save_loc_t sl;
            if (unw_get_save_loc(&c, UNW_X86_64_RBP, &sl) != 0 ||
                (sl.type == UNW_SLT_MEMORY && (uintptr_t)sl.u.addr < st->sp))
                st->needs_bp = frame_may_use_rbp(&c);
        }
        /* A signal frame reloads RSP from its ucontext, which the words
         * recorded do not cover, and a handler on a sigaltstack above the
         * thread's stack leaves every frame below it out of them (they
         * lie below the key's RSP): such stacks are not memoized. */
        if (n >= 1 && unw_is_signal_frame(&c) > 0) ok = false;
        if (unw_step(&c) <= 0) break;
        if (n >= 1) ok = ok && record_loc(st, &c, UNW_REG_IP) && record_loc(st, &c, UNW_X86_64_RBP);
    }
    st->memoizable = ok;
    return n;
}

int md_unwind_recording(struct md_stack *st, int max)
{
    st->nslots = 0;
    st->memoizable = false;
    st->needs_bp = false;
    if (!md_unwind_begin()) {   /* the program's own frame only */
        st->buf[0] = st->entry_ra;
        return max > 0 ? 1 : 0;
    }
    md_modules_refresh();   /* under the unwind window, see md_capture_stack */
    int n = unwind_recording(st, max);
    md_unwind_end();
    return n;
}

/* Unwinds this thread's stack from here to the first frame that runs the
 * function starting at fn, then one step more, to its caller: the caller's
 * stack pointer at the call and the callee-saved registers as they were
 * there (libunwind finds where each frame on the way saved them). */
static bool find_caller_of(uintptr_t fn, struct md_caller_frame *out)
{
    static const int callee_saved[MD_CALLEE_SAVED] = {
        UNW_X86_64_RBX, UNW_X86_64_RBP, UNW_X86_64_R12,
        UNW_X86_64_R13, UNW_X86_64_R14, UNW_X86_64_R15,
    };
    unw_context_t uc;
    unw_cursor_t c;
    if (unw_getcontext(&uc) != 0 || unw_init_local(&c, &uc) != 0) return false;
    for (int depth = 0; depth < 64; depth++) {
        unw_proc_info_t pi;
        bool found = unw_get_proc_info(&c, &pi) == 0 && pi.start_ip == fn;
        if (unw_step(&c) <= 0) return false;
        if (!found) continue;
        unw_word_t sp;
        if (unw_get_reg(&c, UNW_REG_SP, &sp) != 0) return false;
        out->sp = (uintptr_t)sp;
        for (int i = 0; i < MD_CALLEE_SAVED; i++) {
            unw_word_t v = 0;
            unw_get_reg(&c, callee_saved[i], &v);
            out->regs[i] = (uintptr_t)v;
        }
        return true;
    }
    return false;
}

bool md_caller_of(uintptr_t fn, struct md_caller_frame *out)
{
    if (!fn || !md_unwind_begin()) return false;
    bool found = find_caller_of(fn, out);
    md_unwind_end();
    return found;
}
