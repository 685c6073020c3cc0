// SPDX-License-Identifier: MIT
/* /proc/self/maps read without stdio or malloc (the mprotect backend's
 * VMA budget, print_stats). */
#include "sys/sys.h"
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

/* Counts VMAs of /proc/self/maps overlapping [start,end), or all if start==end==0. */
int md_count_vmas(uintptr_t start, uintptr_t end)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char buf[8192];
    int count = 0;
    size_t have = 0;
    bool at_line_start = true;
    for (;;) {
        ssize_t r = read(fd, buf + have, sizeof buf - have);
        if (r <= 0) break;
        have += (size_t)r;
        size_t i = 0;
        while (i < have) {
            char *nl = memchr(buf + i, '\n', have - i);
            if (!nl) break;
            if (at_line_start) {
                uintptr_t lo = 0, hi = 0;
                char *p = buf + i;
                while (*p != '-') { lo = lo * 16 + (uintptr_t)(*p <= '9' ? *p - '0' : *p - 'a' + 10); p++; }
                p++;
                while (*p != ' ') { hi = hi * 16 + (uintptr_t)(*p <= '9' ? *p - '0' : *p - 'a' + 10); p++; }
                if ((start == 0 && end == 0) || (lo < end && hi > start)) count++;
            }
            i = (size_t)(nl - buf) + 1;
        }
        memmove(buf, buf + i, have - i);
        have -= i;
        if (have == sizeof buf) have = 0;  /* absurdly long line: drop it */
    }
    close(fd);
    return count;
}

/* vm.max_map_count, the most VMAs a process may have (65530 when it
 * cannot be read). */
long md_max_map_count(void)
{
    int fd = open("/proc/sys/vm/max_map_count", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 65530;
    char buf[32];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    long v = 0;
    for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++) v = v * 10 + (buf[i] - '0');
    return v > 0 ? v : 65530;
}
