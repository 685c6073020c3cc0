// SPDX-License-Identifier: MIT
/* What the library modules under test call in the parts of memdbg this
 * binary leaves out (unit.mk says which): the heap's thread numbering, the
 * signal layer, the unwinder, the leak scan's module ranges and the
 * quarantine.  None of the tests reaches the real ones; each stub answers
 * as an idle process would, or as the test sets it. */
#include "unit_lib.h"
#include "report/signals.h"
#include "unit.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <ucontext.h>

MEMDBG_TLS int md_in_runtime;

const char *unit_stub_module;
uint32_t unit_stub_thread_id;

/* heap.c: the report's "thread T<n>" */
uint32_t md_thread_id(void) { return unit_stub_thread_id; }

/* leak_roots.c: the module a suppression by module name is matched against */
const char *md_module_of(uintptr_t pc)
{
    (void)pc;
    return unit_stub_module;
}

/* runtime.c: no leak scan reads blocks in the unit tests */
MEMDBG_TLS sigjmp_buf *md_block_read_jmp MEMDBG_HIDDEN;
MEMDBG_TLS uintptr_t md_block_read_fault MEMDBG_HIDDEN;

/* stacktrace.c: a fault's stack is its faulting pc alone (no unwinder) */
int md_capture_stack_from_ucontext(void *uc, uintptr_t *frames, int max)
{
    if (max < 1) return 0;
    frames[0] = (uintptr_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
    return 1;
}

/* stacktrace.c: where libmemdbg.so would be, for the symbolizer library
 * next to it: this binary is build/tests/unit/unit, the library build/. */
const char *md_self_path(void)
{
    static char path[4096];
    if (!path[0]) {
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 32);
        char *slash = n > 0 ? memrchr(path, '/', (size_t)n) : 0;
        if (slash) strcpy(slash, "/../../libmemdbg.so");
        else path[0] = 0;
    }
    return path;
}

/* signals.c: the SIGSEGV disposition layer (its sigaction() interposes
 * every caller in the process, so it stays out of this binary).  The
 * handler goes in as a plain one: the fault tests make real faults. */
void md_signals_install(void (*handler)(int, siginfo_t *, void *))
{
    struct sigaction sa = { .sa_sigaction = handler, .sa_flags = SA_SIGINFO };
    sigaction(SIGSEGV, &sa, 0);
}
void md_segv_chain(int sig, siginfo_t *si, void *uc) { (void)si; (void)uc; signal(sig, SIG_DFL); raise(sig); }
void md_signals_fork_child(void) { }
