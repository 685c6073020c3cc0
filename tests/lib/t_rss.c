/* SPDX-License-Identifier: MIT */
/* Memory stays bounded while the quarantine holds freed addresses: 100k
 * blocks of 4000 bytes are written and freed (400 MB in total), with 100
 * live at a time.  Prints VmRSS at the end, in KiB. */
#include "proc_kb.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static long status_kb(const char *key) { return proc_kb("/proc/self/status", key); }

int main(void)
{
    char *live[100] = { 0 };
    for (int i = 0; i < 100000; i++) {
        int k = i % 100;
        free(live[k]);
        live[k] = malloc(4000);
        memset(live[k], i & 0xff, 4000);
    }
    for (int k = 0; k < 100; k++) free(live[k]);
    printf("rss_kb=%ld\n", status_kb("VmRSS:"));
    printf("heap_file_kb=%ld\n", heap_file_kb(0));
    return 0;
}
