/* SPDX-License-Identifier: MIT */
/* fork() from a signal handler that interrupted malloc or free, as crash
 * handlers and supervisors do.  glibc makes fork async-signal-safe in a
 * single-threaded process (it skips its malloc locks there); memdbg's
 * atfork handler took the heap lock that the interrupted malloc of the same
 * thread held, so the process hung.
 *
 * A CPU-time timer fires every 200 us while the program does malloc/free
 * pairs and checks the contents of a set of live blocks.  The handler
 * forks; the parent waits for the child there.  The child returns from
 * the handler (finishing the interrupted malloc or free), then allocates,
 * frees and checks blocks itself and exits 0 if its heap is intact.
 *
 *   t_fork_in_handler self     one thread
 *   t_fork_in_handler thread   plus a thread doing malloc/free pairs (the
 *                              timer signal goes to the main thread;
 *                              forks start after its warm-up, see main)
 *   t_fork_in_handler twice    the child forks again in the same handler
 *                              (the interrupted call holds the lock in the
 *                              child too); child and grandchild check
 *   t_fork_in_handler exit     the child calls exit() in the handler (the
 *                              exit checks must not wait for the lock the
 *                              interrupted call holds); children that took
 *                              2 s or more count as failed (the checks
 *                              gave up after 2 s of waiting)
 *
 * Prints "forks N, children failed M" and exits 0 when every child passed;
 * a hang ends at the watchdog (alarm, SIGALRM kills). */
#define _GNU_SOURCE
// TEST: fork from a signal handler inside malloc/free: no hang, the child's heap works (also forking again, exiting)
// RUN: %memdbg %t self
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^forks 100, children failed 0$
// RUN: %memdbg %t thread
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^forks 100, children failed 0$
// RUN: %memdbg %t twice
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^forks 100, children failed 0$
// In exit mode what is timed is the wait for the lock, not a leak scan.
// RUN: %memdbg -o detect_leaks=0 %t exit
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^forks 100, children failed 0$
//
// TEST: compact: fork from a signal handler inside malloc/free
// REQUIRES: backend=nonlinear
// RUN: %memdbg -o compact=1 %t self
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^forks 100, children failed 0$
// RUN: %memdbg -o compact=1 %t thread
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^forks 100, children failed 0$

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LIVE 64
#define FORKS 100

static unsigned char *live[LIVE];
static volatile sig_atomic_t in_child, forks, children_failed;
static volatile int stop_worker, worker_warm;
static enum { SELF, THREAD, TWICE, EXIT } mode;

static int child_ok(pid_t pid)
{
    int status;
    return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(seed + i);
}

static int intact(const unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(seed + i)) return 0;
    return 1;
}

static size_t size_of(int i) { return 16 + (size_t)i * 24; }

static void on_prof(int sig)
{
    (void)sig;
    if (in_child || forks >= FORKS) return;
    double t0 = now();
    pid_t pid = fork();
    if (pid == 0) {
        if (mode == EXIT) exit(0);   /* atexit checks, lock held by the interrupted call */
        in_child = 1;   /* back to the interrupted malloc/free, then check */
        if (mode == TWICE) {
            pid_t g = fork();
            if (g == 0) return;   /* the grandchild checks too */
            if (!child_ok(g)) _exit(5);
        }
        return;
    }
    forks++;
    if (!child_ok(pid) || (mode == EXIT && now() - t0 >= 2.0))
        children_failed++;
}

/* In the child, after the interrupted call returned: the heap still works
 * and the blocks written before the fork are there. */
static void child_checks(void)
{
    for (int i = 0; i < LIVE; i++)
        if (!intact(live[i], size_of(i), (unsigned)i)) _exit(2);
    for (int round = 0; round < 100; round++) {
        unsigned char *p = malloc(100 + round);
        if (!p) _exit(3);
        fill(p, 100 + round, 7);
        if (!intact(p, 100 + round, 7)) _exit(4);
        free(p);
    }
    _exit(0);
}

static void *worker(void *arg)
{
    (void)arg;   /* SIGPROF is blocked here from the start (main) */
    for (long pairs = 0; !stop_worker; pairs++) {
        void *p = malloc(48);
        if (p) memset(p, 1, 48);
        free(p);
        if (pairs == 2000) worker_warm = 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const modes[] = { "self", "thread", "twice", "exit" };
    int m = 0;
    while (argc == 2 && m < 4 && strcmp(argv[1], modes[m]) != 0) m++;
    if (argc != 2 || m == 4) {
        fprintf(stderr, "usage: t_fork_in_handler self|thread|twice|exit\n");
        return 2;
    }
    mode = m;
    int threaded = mode == THREAD;
    setvbuf(stdout, 0, _IONBF, 0);
    alarm(300);   /* watchdog when run by hand: a deadlock ends by SIGALRM */
    for (int i = 0; i < LIVE; i++) {
        live[i] = malloc(size_of(i));
        fill(live[i], size_of(i), (unsigned)i);
    }
    pthread_t th;
    /* The worker is born with SIGPROF blocked: a signal that reached it
     * before its own pthread_sigmask forked a copy of the worker, which
     * never checks in_child, and the parent waited for it forever. */
    sigset_t prof, old;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    pthread_sigmask(SIG_BLOCK, &prof, &old);
    if (threaded && pthread_create(&th, 0, worker, 0) != 0) return 2;
    pthread_sigmask(SIG_SETMASK, &old, 0);
    /* Forks start once the worker's stacks come from memdbg's memo: a
     * fork while it is inside libunwind or dl_iterate_phdr leaves their
     * locks held in the child, whose first unwind then waits forever
     * (glibc's and libunwind's limit, docs/libmemdbg.md, Fork). */
    while (threaded && !worker_warm) usleep(1000);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_prof;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGPROF, &sa, 0);
    struct itimerval it = { { 0, 200 }, { 0, 200 } };
    setitimer(ITIMER_PROF, &it, 0);
    for (long pairs = 0; forks < FORKS && pairs < 100000000; pairs++) {
        unsigned char *p = malloc(32 + pairs % 200);
        if (in_child) child_checks();
        fill(p, 32 + pairs % 200, 3);
        free(p);
        if (in_child) child_checks();
    }
    struct itimerval off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_PROF, &off, 0);
    if (threaded) {
        stop_worker = 1;
        pthread_join(th, 0);
    }
    for (int i = 0; i < LIVE; i++) {
        if (!intact(live[i], size_of(i), (unsigned)i)) {
            printf("block %d changed in the parent\n", i);
            return 1;
        }
        free(live[i]);
    }
    printf("forks %d, children failed %d\n", (int)forks, (int)children_failed);
    return children_failed ? 1 : 0;
}
