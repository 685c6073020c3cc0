/* Memory stays bounded while the quarantine holds freed addresses: 100k
 * blocks of 4000 bytes are written and freed (400 MB in total), with 100
 * live at a time.  Prints VmRSS at the end, in KiB. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Memory held by the heap file itself (freed pages that are only unmapped,
 * not returned, do not show in VmRSS but do here). */
static long heap_file_kb(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    long kb = 0;   /* no heap file: the arena is anonymous (guard, mprotect) */
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

static long status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t kl = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, kl)) { v = atol(line + kl); break; }
    if (f) fclose(f);
    return v;
}

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
    printf("heap_file_kb=%ld\n", heap_file_kb());
    return 0;
}
