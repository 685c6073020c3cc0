/* SPDX-License-Identifier: MIT */
/* Page faults the program takes in N malloc/free pairs of small blocks:
 * malloc's slots come committed and resident from the thread's cache, so
 * the first write takes no fault.  Counted with the page-faults software
 * event (getrusage's ru_minflt also counts the faults a populate call
 * makes inside the kernel for memdbg, which are not the program's).
 * Prints faults=N, or faults=unknown when perf events are refused. */
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int counter = -1;

static long minflt(void)
{
    long long v = -1;
    if (counter < 0 || read(counter, &v, sizeof v) != sizeof v) return -1;
    return (long)v;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 2000;
    static char *keep[256];
    for (int i = 0; i < 256; i++) keep[i] = malloc(100);   /* some live blocks, warm-up */
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_PAGE_FAULTS;
    a.exclude_kernel = 1;   /* allowed at perf_event_paranoid 2; user-mode faults still count */
    a.exclude_hv = 1;
    counter = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
    long f0 = minflt();
    for (int i = 0; i < n; i++) {
        char *p = malloc(16 + (size_t)(i * 37) % 900);
        memset(p, 1, 16);
        free(keep[i % 256]);
        keep[i % 256] = p;
    }
    long f1 = minflt();
    if (f0 < 0 || f1 < 0) printf("pairs=%d faults=unknown\n", n);
    else printf("pairs=%d faults=%ld\n", n, f1 - f0);
    for (int i = 0; i < 256; i++) free(keep[i]);
    return 0;
}
