/* SPDX-License-Identifier: MIT */
/* Preloaded before libmemdbg by t_fd_dup2_wrapped: wraps read(), close()
 * and pipe2() the way fd tracers and sandboxes do (the real call, then
 * work of its own, so never a tail call).  memdbg then cannot tell
 * libunwind's calls by their caller and must check libunwind's pipe
 * before every unwind (memdbg/stack/unwind_fds.c). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/types.h>

static volatile unsigned long calls_seen;

ssize_t read(int fd, void *buf, size_t n)
{
	static ssize_t (*real)(int, void *, size_t);
	if (!real) real = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
	ssize_t r = real(fd, buf, n);
	calls_seen++;
	return r;
}

int close(int fd)
{
	static int (*real)(int);
	if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "close");
	int r = real(fd);
	calls_seen++;
	return r;
}

int pipe2(int fds[2], int flags)
{
	static int (*real)(int[2], int);
	if (!real) real = (int (*)(int[2], int))dlsym(RTLD_NEXT, "pipe2");
	int r = real(fds, flags);
	calls_seen++;
	return r;
}
