/* SPDX-License-Identifier: MIT */
/* execve: says when the program about to run will not get memdbg although
 * its environment asks for it (lifecycle/children.c), then makes the
 * system call itself, which is all glibc's execve does.  glibc's execvp,
 * posix_spawn and system reach the kernel through an internal alias, not
 * through this symbol: programs started that way are not checked here
 * (bash, make's recipes run through a shell, and Python's subprocess
 * without posix_spawn call execve). */

#include "lifecycle/lifecycle.h"
#include <sys/syscall.h>
#include <unistd.h>

MEMDBG_API int execve(const char *path, char *const argv[], char *const envp[])
{
    md_children_exec_check(path, envp);
    return (int)syscall(SYS_execve, path, argv, envp);
}
