// SPDX-License-Identifier: MIT
/* Descriptors memdbg keeps: the heap's memfd and fork's copy of it. */
#include "sys/sys.h"
#include <fcntl.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>

/* A descriptor kept after setup is moved to a high number, out of the way
 * of programs that expect the lowest free descriptors, and remembered by
 * device and inode: a program may still close it (closefrom(3)) and get
 * the number back for a file of its own, so it is checked before any use. */
int md_memfd(const char *name)
{
    int fd = (int)syscall(SYS_memfd_create, name, 1u /* MFD_CLOEXEC */);
    if (fd < 0) return fd;
    struct rlimit rl;
    int want = 900;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 1024)
        want = (int)rl.rlim_cur * 3 / 4;
    int high = want > fd ? fcntl(fd, F_DUPFD_CLOEXEC, want) : -1;
    if (high < 0) return fd;
    close(fd);
    return high;
}

void md_fd_identity(int fd, uint64_t *dev, uint64_t *ino)
{
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0) {
        *dev = st.st_dev;
        *ino = st.st_ino;
    } else {
        *dev = *ino = 0;
    }
}

bool md_fd_is(int fd, uint64_t dev, uint64_t ino)
{
    struct stat st;
    return fd >= 0 && ino && fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}
