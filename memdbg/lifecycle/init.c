// SPDX-License-Identifier: MIT
/* Start-up: memdbg initialises itself at the first malloc, or from its
 * constructor in a program that allocates nothing before main, in the
 * order the layers need (options first: reservation sizes follow them). */
#include "lifecycle/lifecycle.h"
#include "backend/backend.h"
#include <sched.h>


static int init_state;                      /* 0 none, 1 running, 2 done */

/* verbosity>=1: the backend chosen and why, the arena, the main options. */
static void print_startup(void)
{
    struct md_buf buf, *b = &buf;
    md_report_begin(b);
    md_put_pid_prefix(b);
    md_puts(b, "memdbg: backend ");
    md_puts(b, md_heap.backend->name);
    md_puts(b, ": ");
    md_puts(b, md_heap.backend_reason);
    md_puts(b, "; arena ");
    md_putu(b, md_heap.size >> 20);
    md_puts(b, " MiB at ");
    md_putx(b, md_heap.base);
    md_puts(b, ", quarantine ");
    md_putu(b, (md_opt.quarantine_size < md_heap.size ? md_opt.quarantine_size : md_heap.size) >> 20);
    md_puts(b, " MiB, guard ");
    md_puts(b, md_opt.protect_below ? "below" : "above");
    md_puts(b, ", alignment ");
    md_putu(b, md_opt.alignment);
    if (md_opt.sample_rate > 1) {
        md_puts(b, ", guarding 1 in ");
        md_putu(b, (unsigned)md_opt.sample_rate);
        md_puts(b, " allocations");
    }
    md_putc(b, '\n');
    md_report_end(b);
}

static void do_init(void)
{
    md_options_init();   /* first: reservation sizes follow arena_size */
    md_children_init();
    md_internal_init();
    md_save_stderr();
    md_depot_init();
    md_stacktrace_init();
    md_backend_select();
    md_arena_init();
    md_fault_init();
    md_fork_init();
    md_heap.initialized = 1;
    md_thread_id();   /* the initialising thread is T0 */
    if (md_opt.verbosity >= 1) print_startup();
}

void md_ensure_init(void)
{
    if (__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) == 2) return;
    int expected = 0;
    if (__atomic_compare_exchange_n(&init_state, &expected, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        md_in_runtime++;
        do_init();
        md_in_runtime--;
        __atomic_store_n(&init_state, 2, __ATOMIC_RELEASE);
        return;
    }
    while (__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) != 2) sched_yield();
}

/* memdbg is initialised from the first malloc; this constructor covers
 * programs that never call it before main. */
__attribute__((constructor)) static void md_constructor(void)
{
    md_ensure_init();
}
