/* SPDX-License-Identifier: MIT */
/* fork() while another thread is in the middle of a report: the child
 * must be able to report an error of its own, not hang on a lock held by a
 * thread that does not exist in the child.
 * A thread hits a use-after-free while stderr is a full pipe, so its
 * report blocks in write(2) (holding everything the report holds); the
 * main thread then forks, and the child does a double free with its
 * stderr back on the real one.  Prints "child: exit N" or "child: hung";
 * then lets the reporting thread finish (the process ends with its
 * report). */

// The child of a fork during another thread's report can report.
// TEST: fork while another thread reports: the child reports
// RUN: %memdbg %t
// EXIT: 1
// CHECK-OUT: ^child: exit 1$
// CHECK: ERROR: memdbg: double-free
// CHECK-STACK: ^free of 0x | free | child_double_free | main
// CHECK: ERROR: memdbg: heap-use-after-free

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile pid_t reporter_tid;

char *make_buffer(size_t n) { return malloc(n); }
int use_after_free(volatile char *p) { return p[3]; }
void child_double_free(char *p) { free(p); free(p); }

static void *reporter(void *arg)
{
    (void)arg;
    char *p = make_buffer(16);
    free(p);
    reporter_tid = gettid();
    return (void *)(long)use_after_free(p);
}

/* The thread is blocked in write(2) (syscall 1 on x86-64). */
static int in_write(pid_t tid)
{
    char path[64], buf[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    return n > 2 && buf[0] == '1' && buf[1] == ' ';
}

static void nap(void) { struct timespec ts = { 0, 10 * 1000 * 1000 }; nanosleep(&ts, 0); }

int main(void)
{
    int real_err = dup(2);
    int p[2];
    if (pipe(p) != 0) return 2;
    fcntl(p[1], F_SETPIPE_SZ, 4096);
    fcntl(p[1], F_SETFL, O_NONBLOCK);
    static char fill[4096];
    size_t prefill = 0;
    for (;;) {
        ssize_t w = write(p[1], fill, sizeof fill);
        if (w <= 0) break;
        prefill += (size_t)w;
    }
    fcntl(p[1], F_SETFL, 0);
    dup2(p[1], 2);

    pthread_t t;
    pthread_create(&t, 0, reporter, 0);
    int waited = 0;
    while (!(reporter_tid && in_write(reporter_tid))) {
        if (++waited > 1000) { dprintf(real_err, "reporter never blocked in write\n"); return 2; }
        nap();
    }

    pid_t c = fork();
    if (c == 0) {
        dup2(real_err, 2);
        child_double_free(make_buffer(24));
        _exit(0);
    }
    int st = 0, done = 0;
    for (int i = 0; i < 1000 && !done; i++) {   /* up to 10 s */
        if (waitpid(c, &st, WNOHANG) == c) done = 1;
        else nap();
    }
    if (!done) {
        kill(c, SIGKILL);
        waitpid(c, &st, 0);
        printf("child: hung\n");
    } else if (WIFEXITED(st)) {
        printf("child: exit %d\n", WEXITSTATUS(st));
    } else {
        printf("child: signal %d\n", WTERMSIG(st));
    }
    fflush(stdout);
    /* let the reporting thread go on: the process ends with its report */
    char buf[4096];
    for (;;) {
        ssize_t n = read(p[0], buf, sizeof buf);
        if (n <= 0) break;
        size_t skip = prefill < (size_t)n ? prefill : (size_t)n;
        prefill -= skip;
        if ((size_t)n > skip) write(real_err, buf + skip, (size_t)n - skip);
    }
    return 3;
}
