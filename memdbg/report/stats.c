// SPDX-License-Identifier: MIT
/* print_stats=1: one line at exit with the heap's counters, the peak RSS,
 * the heap's VMAs and the memory of the heap file. */
#include "report/report.h"
#include <sys/resource.h>
#include <sys/stat.h>


static long vmhwm_kb(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : -1;
}

void md_print_stats(void)
{
    struct md_buf buf, *b = &buf;
    md_report_begin(b);
    md_put_pid_prefix(b);
    md_puts(b, "memdbg stats: backend ");
    md_puts(b, md_heap.backend->name);
    md_puts(b, ", allocs "); md_putu(b, md_heap.total_allocs);
    md_puts(b, ", frees "); md_putu(b, md_heap.total_frees);
    md_puts(b, ", live blocks "); md_putu(b, md_heap.live_blocks);
    md_puts(b, " ("); md_putu(b, md_heap.live_bytes); md_puts(b, " bytes)");
    md_puts(b, ", peak live blocks "); md_putu(b, md_heap.peak_live_blocks);
    md_puts(b, ", peak RSS "); md_puti(b, vmhwm_kb()); md_puts(b, " KiB");
    md_puts(b, ", heap VMAs ");
    md_puti(b, md_count_vmas(md_heap.base, md_heap.base + md_heap.size));
    md_puts(b, ", slots "); md_putu(b, md_heap.nslots);
    md_puts(b, ", quarantine "); md_putu(b, md_heap.q_bytes >> 20); md_puts(b, " MiB");
    md_puts(b, ", mallocs from thread caches "); md_putu(b, md_heap.ready_hits);
    md_puts(b, " of "); md_putu(b, md_heap.ready_hits + md_heap.ready_misses);
    md_puts(b, " ("); md_putu(b, md_heap.cache_refills); md_puts(b, " refills)");
    md_puts(b, ", reallocs by moving pages "); md_putu(b, md_heap.realloc_moves);
    md_puts(b, " ("); md_putu(b, md_heap.realloc_moved_pages); md_puts(b, " pages)");
    md_puts(b, ", stacks from the memo "); md_putu(b, md_heap.memo_hits);
    md_puts(b, " of "); md_putu(b, md_heap.memo_hits + md_heap.memo_misses);
    /* Memory of the heap file: pages kept for reuse (recycle_pages) are
     * unmapped behind guards, so RSS does not show them. */
    struct stat st;
    if (md_heap_fd_ok() && fstat(md_heap.fd, &st) == 0) {
        md_puts(b, ", heap file "); md_putu(b, (unsigned long long)st.st_blocks / 2); md_puts(b, " KiB");
    }
    md_putc(b, '\n');
    md_report_end(b);
}
