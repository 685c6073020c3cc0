/* SPDX-License-Identifier: MIT */
/* The program's SIGSEGV dispositions must behave as without memdbg, which
 * keeps its own handler in the kernel's table and chains to them.
 * Each mode prints what it observed; the exit status or death by signal
 * is checked by the TEST lines below.
 *   resethand       SA_RESETHAND handler: runs once, the refault kills (SIGSEGV)
 *   sysv-resethand  the same through sysv_signal(), plain handler
 *   nodefer         SA_NODEFER + sa_mask {SIGUSR1}: the mask inside the handler
 *   defer           no SA_NODEFER, sa_mask {SIGUSR2}
 *   nodefer-nested  SA_NODEFER: a fault inside the handler re-enters it
 *   raise | kill    no handler: raise(SIGSEGV) / kill(getpid(), SIGSEGV) kill
 *   raise-handler   SA_SIGINFO handler sees si_code SI_TKILL (raise) and
 *                   SI_USER with our pid (kill), and the program goes on
 *   sigqueue-heap   a sent SIGSEGV whose si_addr is a freed heap block is
 *                   not a heap fault: default action, killed by SIGSEGV
 *   query           sigaction(SIGSEGV, NULL, &old) and the return values of
 *                   signal, sysv_signal, bsd_signal, sigset, sigignore are the
 *                   program's; then a heap use-after-free is still reported
 *   sysv-uaf        a handler set with sysv_signal(), then a heap
 *                   use-after-free: memdbg still reports it
 *   ign             SIG_IGN and a non-heap fault: killed by SIGSEGV
 *   ign-raise-uaf   SIG_IGN: raise(SIGSEGV) is ignored; a heap
 *                   use-after-free afterwards is still reported
 *   restart | no-restart  a SIGSEGV sent to a thread blocked in read(2):
 *                   with SA_RESTART the read goes on, without it EINTR */

// TEST: SA_RESETHAND handler runs once, then SIGSEGV kills
// RUN: %memdbg %t resethand
// EXIT: 139
// CHECK-NOT: ERROR: memdbg
// CHECK-OUT-COUNT: 1 ^handler
//
// sysv_signal: one-shot too, a plain handler; heap faults stay memdbg's.
// TEST: sysv_signal handler runs once, then SIGSEGV kills; heap faults still reported
// RUN: %memdbg %t sysv-resethand
// EXIT: 139
// CHECK-NOT: ERROR: memdbg
// CHECK-OUT-COUNT: 1 ^plain handler
// RUN: %memdbg %t sysv-uaf
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
// CHECK-STACK: ^READ of size 1 | read_freed | main
// CHECK-OUT-NOT: plain handler
//
// TEST: SA_NODEFER and sa_mask apply inside the program's handler
// RUN: %memdbg %t nodefer
// EXIT: 4
// CHECK-OUT: ^mask segv=0 usr1=1 usr2=0$
// RUN: %memdbg %t defer
// EXIT: 4
// CHECK-OUT: ^mask segv=1 usr1=0 usr2=1$
// RUN: %memdbg %t nodefer-nested
// EXIT: 4
// CHECK-OUT: ^depth 2$
//
// Sent SIGSEGVs are not faults: the default action kills.
// TEST: raise/kill SIGSEGV kill by SIGSEGV, or reach the handler with SI_TKILL/SI_USER
// RUN: %memdbg %t raise
// EXIT: 139
// CHECK-NOT: ERROR: memdbg
// CHECK-OUT-NOT: survived
// RUN: %memdbg %t kill
// EXIT: 139
// CHECK-NOT: ERROR: memdbg
// CHECK-OUT-NOT: survived
// RUN: %memdbg %t raise-handler
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^sig 11 code SI_TKILL pid self$
// CHECK-OUT: ^sig 11 code SI_USER pid self$
// CHECK-OUT: ^after$
//
// SA_RESTART decides whether read(2) goes on after a sent SIGSEGV.
// TEST: SA_RESTART of the program's handler: read(2) restarted after a sent SIGSEGV
// RUN: %memdbg %t restart
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^handler$
// CHECK-OUT: ^read 1$
// RUN: %memdbg %t no-restart
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-NOT: WARNING
// CHECK-OUT: ^handler$
// CHECK-OUT: ^read EINTR[ ]
//
// si_code SI_QUEUE with si_addr a freed block: still not a heap fault.
// TEST: a sent SIGSEGV carrying a heap address is not a heap fault
// RUN: %memdbg %t sigqueue-heap
// EXIT: 139
// CHECK-NOT: ERROR: memdbg
//
// sigaction(SIGSEGV, NULL, &old) and friends return the program's.
// TEST: sigaction/signal/sysv_signal/bsd_signal/sigset/sigignore: the program's dispositions
// RUN: %memdbg %t query
// EXIT: 1
// CHECK-OUT: ^query ok$
// CHECK-ERROR: heap-use-after-free
// CHECK-STACK: ^READ of size 1 | read_freed | query | main
//
// SIG_IGN: a fault still kills, a sent SIGSEGV is dropped.
// TEST: SIG_IGN: a fault kills by SIGSEGV, raise(SIGSEGV) is dropped
// RUN: %memdbg %t ign
// EXIT: 139
// CHECK-NOT: ERROR: memdbg
// RUN: %memdbg %t ign-raise-uaf
// EXIT: 1
// CHECK-OUT: ^ignored$
// CHECK-ERROR: heap-use-after-free
// CHECK-STACK: ^READ of size 1 | read_freed | main

#define _GNU_SOURCE
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"   /* sigset, sigignore: tested on purpose */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

extern __sighandler_t sysv_signal(int, __sighandler_t);
extern __sighandler_t bsd_signal(int, __sighandler_t);

static volatile int calls;

static void say(const char *s) { write(1, s, strlen(s)); }

static void say_num(const char *s, long n)
{
    char b[64];
    int len = snprintf(b, sizeof b, "%s%ld\n", s, n);
    write(1, b, (size_t)len);
}

int read_null(volatile char *p) { return p[0]; }
char *make_buffer(size_t n) { return malloc(n); }
int read_freed(volatile char *p) { return p[1]; }

static void count_and_return(int sig, siginfo_t *si, void *uc)
{
    (void)sig; (void)si; (void)uc;
    say_num("handler ", ++calls);
    if (calls >= 3) _exit(5);   /* SA_RESETHAND ignored: stop the loop */
}

static void plain_count(int sig)
{
    (void)sig;
    say_num("plain handler ", ++calls);
    if (calls >= 3) _exit(5);
}

static void show_mask(int sig, siginfo_t *si, void *uc)
{
    (void)sig; (void)si; (void)uc;
    sigset_t cur;
    sigprocmask(SIG_BLOCK, 0, &cur);
    char b[96];
    int n = snprintf(b, sizeof b, "mask segv=%d usr1=%d usr2=%d\n", sigismember(&cur, SIGSEGV),
                     sigismember(&cur, SIGUSR1), sigismember(&cur, SIGUSR2));
    write(1, b, (size_t)n);
    _exit(4);
}

static void nested(int sig, siginfo_t *si, void *uc)
{
    (void)sig; (void)si; (void)uc;
    say_num("depth ", ++calls);
    if (calls == 1) read_null(0);
    _exit(4);
}

static void sent(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    char b[128];
    int n = snprintf(b, sizeof b, "sig %d code %s pid %s\n", sig,
                     si->si_code == SI_TKILL ? "SI_TKILL" : si->si_code == SI_USER ? "SI_USER" : "other",
                     si->si_pid == getpid() ? "self" : "other");
    write(1, b, (size_t)n);
}

static int install(void (*fn)(int, siginfo_t *, void *), int flags, int masked);
static int pipefd[2];
static volatile pid_t reader_tid;
static void *reader(void *arg)
{
    (void)arg;
    char c;
    reader_tid = gettid();
    ssize_t n = read(pipefd[0], &c, 1);
    if (n < 0) say_num(errno == EINTR ? "read EINTR " : "read error ", errno);
    else say_num("read ", (long)n);
    return 0;
}

static volatile int handled;
static void quiet(int sig, siginfo_t *si, void *uc) { (void)sig; (void)si; (void)uc; say("handler\n"); handled = 1; }

static int restart(int flags)
{
    install(quiet, flags, 0);
    if (pipe(pipefd) != 0) return 2;
    pthread_t t;
    pthread_create(&t, 0, reader, 0);
    /* wait until the reader is blocked in read(2) (syscall 0 on x86-64) */
    struct timespec ts = { 0, 10 * 1000 * 1000 };
    for (int i = 0; i < 1000; i++) {
        char path[64], buf[32] = "";
        snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)reader_tid);
        FILE *f = reader_tid ? fopen(path, "r") : 0;
        if (f) { fgets(buf, sizeof buf, f); fclose(f); }
        if (buf[0] == '0' && buf[1] == ' ') break;
        nanosleep(&ts, 0);
    }
    pthread_kill(t, SIGSEGV);
    while (!handled) nanosleep(&ts, 0);   /* restarted or EINTR is decided by now */
    write(pipefd[1], "x", 1);
    pthread_join(t, 0);
    return 0;
}

static void h1(int s) { (void)s; }
static void h2(int s) { (void)s; }
static void h3(int s) { (void)s; }

static int install(void (*fn)(int, siginfo_t *, void *), int flags, int masked)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = fn;
    sa.sa_flags = SA_SIGINFO | flags;
    sigemptyset(&sa.sa_mask);
    if (masked) sigaddset(&sa.sa_mask, masked);
    return sigaction(SIGSEGV, &sa, 0);
}

static int query(void)
{
    struct sigaction old;
    sigaction(SIGSEGV, 0, &old);
    if (old.sa_handler != SIG_DFL) { say("initial disposition is not SIG_DFL\n"); return 2; }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = h1;
    sa.sa_flags = SA_RESETHAND | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGUSR1);
    sigaction(SIGSEGV, &sa, 0);
    sigaction(SIGSEGV, 0, &old);
    if (old.sa_handler != h1 || !(old.sa_flags & SA_RESETHAND) || !(old.sa_flags & SA_NODEFER) ||
        (old.sa_flags & SA_SIGINFO) || !sigismember(&old.sa_mask, SIGUSR1) || sigismember(&old.sa_mask, SIGUSR2)) {
        say("sigaction(SIGSEGV, NULL, &old) is not what we installed\n");
        return 2;
    }
    if (signal(SIGSEGV, h2) != h1) { say("signal() returned the wrong handler\n"); return 2; }
    if (sysv_signal(SIGSEGV, h3) != h2) { say("sysv_signal() returned the wrong handler\n"); return 2; }
    if (bsd_signal(SIGSEGV, h1) != h3) { say("bsd_signal() returned the wrong handler\n"); return 2; }
    if (sigset(SIGSEGV, h2) != h1) { say("sigset() returned the wrong handler\n"); return 2; }
    sigaction(SIGSEGV, 0, &old);
    if (old.sa_handler != h2) { say("sigset() did not install the handler\n"); return 2; }
    if (sigignore(SIGSEGV) != 0) { say("sigignore failed\n"); return 2; }
    sigaction(SIGSEGV, 0, &old);
    if (old.sa_handler != SIG_IGN) { say("sigignore() did not set SIG_IGN\n"); return 2; }
    if (sysv_signal(SIGSEGV, h3) != SIG_IGN) { say("sysv_signal() after sigignore\n"); return 2; }
    say("query ok\n");
    /* whatever the program installed, a heap fault is memdbg's */
    char *p = make_buffer(8);
    free(p);
    return read_freed(p);
}

int main(int argc, char **argv)
{
    const char *m = argc > 1 ? argv[1] : "resethand";
    if (!strcmp(m, "resethand")) {
        install(count_and_return, SA_RESETHAND, 0);
        read_null(0);
        say("survived\n");
        return 0;
    }
    if (!strcmp(m, "sysv-resethand")) {
        sysv_signal(SIGSEGV, plain_count);
        read_null(0);
        say("survived\n");
        return 0;
    }
    if (!strcmp(m, "nodefer")) { install(show_mask, SA_NODEFER, SIGUSR1); return read_null(0); }
    if (!strcmp(m, "defer")) { install(show_mask, 0, SIGUSR2); return read_null(0); }
    if (!strcmp(m, "nodefer-nested")) { install(nested, SA_NODEFER, 0); return read_null(0); }
    if (!strcmp(m, "raise")) { raise(SIGSEGV); say("survived\n"); return 0; }
    if (!strcmp(m, "kill")) { kill(getpid(), SIGSEGV); say("survived\n"); return 0; }
    if (!strcmp(m, "raise-handler")) {
        install(sent, 0, 0);
        raise(SIGSEGV);
        kill(getpid(), SIGSEGV);
        say("after\n");
        return 0;
    }
    if (!strcmp(m, "sigqueue-heap")) {
        char *p = make_buffer(32);
        free(p);
        siginfo_t si;
        memset(&si, 0, sizeof si);
        si.si_signo = SIGSEGV;
        si.si_code = SI_QUEUE;
        si.si_addr = p + 5;   /* overlays si_pid/si_uid: what a sender can forge */
        syscall(SYS_rt_sigqueueinfo, getpid(), SIGSEGV, &si);
        say("survived\n");
        return 0;
    }
    if (!strcmp(m, "query")) return query();
    if (!strcmp(m, "restart")) return restart(SA_RESTART);
    if (!strcmp(m, "no-restart")) return restart(0);
    if (!strcmp(m, "sysv-uaf")) {
        sysv_signal(SIGSEGV, plain_count);
        char *p = make_buffer(8);
        free(p);
        return read_freed(p);
    }
    if (!strcmp(m, "ign-raise-uaf")) {
        signal(SIGSEGV, SIG_IGN);
        raise(SIGSEGV);
        say("ignored\n");
        char *p = make_buffer(8);
        free(p);
        return read_freed(p);
    }
    if (!strcmp(m, "ign")) {
        signal(SIGSEGV, SIG_IGN);
        read_null(0);
        say("survived\n");
        return 0;
    }
    fprintf(stderr, "unknown mode %s\n", m);
    return 2;
}
