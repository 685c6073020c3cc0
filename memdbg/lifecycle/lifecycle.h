/* SPDX-License-Identifier: MIT */
/* Start-up (init.c) and fork (fork.c). */
#ifndef MEMDBG_LIFECYCLE_H
#define MEMDBG_LIFECYCLE_H

#include "report/report.h"

void md_ensure_init(void) MEMDBG_HIDDEN;   /* the runtime is initialised on return */
void md_fork_init(void) MEMDBG_HIDDEN;
/* fork child: fn(may_lock) after the heap is the child's (fork.c) */
void md_fork_set_caches_child(void (*fn)(bool may_lock)) MEMDBG_HIDDEN;

/* follow_children=0: libmemdbg leaves LD_PRELOAD at start (children.c). */
void md_children_init(void) MEMDBG_HIDDEN;
/* Before execve(path, ..., envp): warns when envp preloads memdbg but the
 * program will run without it (statically linked, setuid). */
void md_children_exec_check(const char *path, char *const envp[]) MEMDBG_HIDDEN;
void md_children_fork_child(void) MEMDBG_HIDDEN;   /* this process is a fork child */
/* Whether leaks found here make the exit status exitcode: always, but with
 * child_leak_exitcode=0 only in the top process. */
bool md_leaks_set_exitcode(void) MEMDBG_HIDDEN;

#endif
