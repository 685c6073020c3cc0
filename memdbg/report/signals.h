/* SPDX-License-Identifier: MIT */
/* The program's SIGSEGV disposition, kept by memdbg (signals.c), and the
 * fault handler's hooks into it (fault.c). */
#ifndef MEMDBG_SIGNALS_H
#define MEMDBG_SIGNALS_H
#include <signal.h>
#include "base/base.h"

/* Installs memdbg's SIGSEGV handler; what was installed before becomes the
 * program's recorded disposition. */
void md_signals_install(void (*handler)(int, siginfo_t *, void *)) MEMDBG_HIDDEN;
/* Delivers a SIGSEGV that is not memdbg's (a fault outside the heap, or a
 * sent signal) as the kernel would have with the program's disposition. */
void md_segv_chain(int sig, siginfo_t *si, void *uc) MEMDBG_HIDDEN;
/* fork() child: the disposition lock may have been held by another thread. */
void md_signals_fork_child(void) MEMDBG_HIDDEN;
#endif
