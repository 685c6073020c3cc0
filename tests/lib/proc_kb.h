/* SPDX-License-Identifier: MIT */
/* Memory figures the test programs print, read from /proc (shared by
 * t_rss, t_compact and the bench program). */
#ifndef MEMDBG_TESTS_PROC_KB_H
#define MEMDBG_TESTS_PROC_KB_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The value after `key` in a /proc file of "Key: N kB" lines, or -1. */
static inline long proc_kb(const char *file, const char *key)
{
    FILE *f = fopen(file, "r");
    char line[256];
    long v = -1;
    size_t kl = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, kl)) { v = atol(line + kl); break; }
    if (f) fclose(f);
    return v;
}

/* KiB allocated to memdbg's heap file (the nonlinear backend's memfd: freed
 * pages only unmapped, not returned, show here but not in VmRSS), or
 * `none` when the process has no such file (an anonymous arena). */
static inline long heap_file_kb(long none)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    long kb = none;
    while (d && (e = readdir(d))) {
        char path[300], target[256];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(path, target, sizeof target - 1);
        if (n <= 0) continue;
        target[n] = 0;
        struct stat st;
        if (strstr(target, "memfd:memdbg-heap") && stat(path, &st) == 0) kb = (long)st.st_blocks / 2;
    }
    if (d) closedir(d);
    return kb;
}

#endif
