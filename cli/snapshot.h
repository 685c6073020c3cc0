/* SPDX-License-Identifier: MIT */
/* Snapshots of a process's memory map and of memdbg's heap counters, for
 * memdbg-probe (the helper behind `memdbg maps` and `memdbg compare`). */
#ifndef MEMDBG_CLI_SNAPSHOT_H
#define MEMDBG_CLI_SNAPSHOT_H

#include <stdio.h>
#include <sys/types.h>

/* Lines of /proc/PID/maps, and of them the VMAs that hold allocator
 * memory: anonymous ones, [heap], memfd and [anon:...] mappings.  -1 when
 * the file could not be read (the process is gone). */
struct maps_count { long lines, anon; };
int count_maps(pid_t pid, struct maps_count *c);

/* Writes key=value lines describing pid to out (see memdbg(1), "maps"),
 * with when= as given, and copies /proc/PID/maps to maps_copy when that is
 * not NULL. */
void write_snapshot(pid_t pid, const char *when, FILE *out, const char *maps_copy);

#endif
