/* SPDX-License-Identifier: MIT */
// Sampled guarding: every allocation function gives blocks of both kinds
// (guarded, in memdbg's arena, and glibc's), and free, realloc, usable
// size and delete route each by its address; bugs in guarded blocks are
// still found.  The fork test runs with compact=0: compact mode loses
// blocks of threads that allocate while another forks, sampled or not,
// which is a separate bug.

// TEST: sample_rate=4: every allocation function routes both ways
// RUN: %memdbg -o sample_rate=4 %t routing
// EXIT: 0
// CHECK-OUT: ^guarded fraction 0\.2[0-9]*$
// CHECK-OUT: ^every cycle position guarded$
// CHECK-OUT: ^routing ok$
// CHECK-NOT: ERROR: memdbg
//
// TEST: sample_rate=4: realloc keeps the bytes across the boundary both ways
// RUN: %memdbg -o sample_rate=4 %t realloc
// EXIT: 0
// CHECK-OUT: ^guarded to glibc ok$
// CHECK-OUT: ^glibc to guarded ok$
// CHECK-NOT: ERROR: memdbg
//
// TEST: sample_rate=4: after fork, parent and child guard different allocations
// RUN: %memdbg -o sample_rate=4 %t fork
// EXIT: 0
// CHECK-OUT: ^child guarded (1[5-9][0-9]|2[0-9][0-9]|3[0-4][0-9]) of 1000$
// CHECK-OUT: ^parent and child differ$
// CHECK-NOT: ERROR: memdbg
//
// TEST: sample_rate=10: 5,000 live guarded blocks leave /proc/self/maps as it was
// REQUIRES: backend!=mprotect
// RUN: %memdbg -o sample_rate=10 %t pool
// EXIT: 0
// CHECK-OUT: ^guarded live (4[5-9][0-9]{2}|5[0-4][0-9]{2})$
// CHECK-OUT: ^maps lines grew by 0$
// CHECK-NOT: ERROR: memdbg
//
// TEST: sample_rate=4: fork from threads and from a signal handler while threads allocate
// RUN: %memdbg -o sample_rate=4:compact=0 %t fork_threads
// EXIT: 0
// CHECK-OUT: ^children ok 20 of 20$
// CHECK-NOT: ERROR: memdbg
//
// TEST: sample_rate=4: new[] / free mismatch on a guarded block
// RUN: %memdbg -o sample_rate=4 %t mismatch
// EXIT: 1
// CHECK-ERROR: alloc-dealloc-mismatch
// CHECK: \(operator new \[\] vs free\)
// CHECK-STACK: ^allocated by thread T0 here: | operator new\[\]\(unsigned long\) | make_array\(\) | main
//
// TEST: sample_rate=100: an overflow repeated in a loop is caught
// RUN: %memdbg -o sample_rate=100 %t overflow_loop
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: WRITE of size 1 at 0x[0-9a-f]+ thread T0
// CHECK: is located 0 bytes after 20-byte region
// CHECK-STACK: ^allocated by thread T0 here: | malloc | make_record | main
//
// TEST: sample_rate=100: a use-after-free repeated in a loop is caught with both stacks
// RUN: %memdbg -o sample_rate=100 %t uaf_loop
// EXIT: 1
// CHECK-ERROR: heap-use-after-free
// CHECK: READ of size 1 at 0x[0-9a-f]+ thread T0
// CHECK-STACK: ^freed by thread T0 here: | free | drop_record | main
// CHECK-STACK: ^previously allocated by thread T0 here: | malloc | make_record | main
//
// TEST: sample_rate=100: the leak check covers the guarded blocks and says so
// RUN: %memdbg -o sample_rate=100 %t leak
// EXIT: 1
// CHECK: ^Direct leak of 48 byte\(s\) in 1 object\(s\) allocated from:
// CHECK: SUMMARY: memdbg: 48 byte\(s\) leaked in 1 allocation\(s\)\. Sampled mode: only the guarded blocks \(about 1 in 100\) are checked\.
//
// TEST: sample_rate=100: a guarded block reachable only from glibc's blocks is no leak
// RUN: %memdbg -o sample_rate=100 %t reachable
// EXIT: 0
// CHECK-OUT: ^reachable ok$
// CHECK-NOT: leak

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <malloc.h>
#include <new>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dlfcn.h>

static uintptr_t arena_lo, arena_hi;

static bool guarded(const void *p)
{
    return (uintptr_t)p - arena_lo < arena_hi - arena_lo;
}

static void fail(const char *what)
{
    printf("FAIL: %s\n", what);
    fflush(stdout);
    exit(3);
}

#define TRIES 100000

// One allocation function: allocate until a block of each kind has been
// seen, checking each; free with the matching function.
template <typename Alloc, typename Free>
static void both_kinds(const char *name, size_t size, size_t align, Alloc alloc, Free release)
{
    bool seen[2] = { false, false };
    for (int i = 0; i < TRIES && !(seen[0] && seen[1]); i++) {
        unsigned char *p = (unsigned char *)alloc();
        if (!p) fail(name);
        if (align && (uintptr_t)p % align) fail(name);
        if (malloc_usable_size(p) < size) fail(name);
        memset(p, 0x5a, size);
        seen[guarded(p)] = true;
        release(p);
    }
    if (!seen[0] || !seen[1]) fail(name);
}

// calloc's zeroes on both sides, after the same size was dirtied.
static void calloc_both_kinds(void)
{
    bool seen[2] = { false, false };
    for (int i = 0; i < TRIES && !(seen[0] && seen[1]); i++) {
        void *d = malloc(200);
        memset(d, 0xff, 200);
        free(d);
        unsigned char *p = (unsigned char *)calloc(10, 20);
        for (int k = 0; k < 200; k++)
            if (p[k]) fail("calloc");
        seen[guarded(p)] = true;
        free(p);
    }
    if (!seen[0] || !seen[1]) fail("calloc");
}

static void routing(void)
{
    // about a quarter guarded
    const int rounds = 20000;   // a quarter guarded: 0.25 +- 0.003 (one standard deviation)
    int n_guarded = 0;
    for (int i = 0; i < rounds; i++) {
        void *p = malloc(16);
        n_guarded += guarded(p);
        free(p);
    }
    printf("guarded fraction %.3f\n", (double)n_guarded / rounds);
    // a fixed cycle of four allocations: every position is guarded sometimes
    int per_pos[4] = { 0, 0, 0, 0 };
    for (int i = 0; i < 400; i++) {
        void *p = malloc(8 + i % 4);
        per_pos[i % 4] += guarded(p);
        free(p);
    }
    if (per_pos[0] && per_pos[1] && per_pos[2] && per_pos[3]) printf("every cycle position guarded\n");

    both_kinds("malloc", 100, 0, [] { return malloc(100); }, [](void *p) { free(p); });
    calloc_both_kinds();
    both_kinds("memalign", 100, 64, [] { return memalign(64, 100); }, [](void *p) { free(p); });
    both_kinds("aligned_alloc", 256, 256, [] { return aligned_alloc(256, 256); }, [](void *p) { free(p); });
    both_kinds("posix_memalign", 40, 32, [] {
        void *p = 0;
        if (posix_memalign(&p, 32, 40) != 0) return (void *)0;
        return p;
    }, [](void *p) { free(p); });
    both_kinds("valloc", 100, 4096, [] { return valloc(100); }, [](void *p) { free(p); });
    both_kinds("pvalloc", 100, 4096, [] { return pvalloc(100); }, [](void *p) { free(p); });
    both_kinds("new", sizeof(long), 0, [] { return (void *)new long(1); }, [](void *p) { delete (long *)p; });
    both_kinds("new[]", 80, 0, [] { return (void *)new char[80]; }, [](void *p) { delete[] (char *)p; });
    both_kinds("aligned new", 64, 128, [] { return (void *)new (std::align_val_t(128)) char[64]; },
               [](void *p) { ::operator delete[](p, std::align_val_t(128)); });
    both_kinds("realloc(NULL)", 30, 0, [] { return realloc(0, 30); }, [](void *p) { free(p); });
    printf("routing ok\n");
}

// realloc until the block changes sides, keeping its bytes.
static void *realloc_until(void *p, size_t size, bool want_guarded, const char *what)
{
    for (int i = 0; i < TRIES; i++) {
        size += 8;
        unsigned char *n = (unsigned char *)realloc(p, size);
        if (!n) fail(what);
        for (size_t k = 0; k < 64; k++)
            if (n[k] != (unsigned char)k) fail(what);
        p = n;
        if (guarded(p) == want_guarded) return p;
    }
    fail(what);
    return 0;
}

static void realloc_both_ways(void)
{
    unsigned char *p;
    do {
        p = (unsigned char *)malloc(64);
        if (!guarded(p)) { free(p); p = 0; }
    } while (!p);
    for (int k = 0; k < 64; k++) p[k] = (unsigned char)k;
    p = (unsigned char *)realloc_until(p, 64, false, "guarded to glibc");
    printf("guarded to glibc ok\n");
    p = (unsigned char *)realloc_until(p, malloc_usable_size(p), true, "glibc to guarded");
    printf("glibc to guarded ok\n");
    free(p);
}

static int maps_lines(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) fail("maps");
    int n = 0, c;
    while ((c = fgetc(f)) != EOF) n += c == '\n';
    fclose(f);
    return n;
}

// 50,000 live blocks, about 5,000 of them guarded, all in one heap VMA.
static void pool(void)
{
    const int count = 50000;
    static void *held[count];
    for (int i = 0; i < 1000; i++) free(malloc(32));   // glibc's heap and memdbg's caches exist
    int before = maps_lines();
    int n = 0;
    for (int i = 0; i < count; i++) {
        held[i] = malloc(32);
        n += guarded(held[i]);
    }
    int after = maps_lines();
    printf("guarded live %d\n", n);
    printf("maps lines grew by %d\n", after - before);
    for (int i = 0; i < count; i++) free(held[i]);
}

static volatile int stop_churn;

// Allocates and frees blocks of both kinds until told to stop.
static void *churn(void *arg)
{
    (void)arg;
    void *keep[16] = {};
    for (unsigned i = 0; !stop_churn; i++) {
        free(keep[i % 16]);
        keep[i % 16] = i % 3 ? malloc(24 + i % 200) : realloc(malloc(16), 300);
    }
    for (int i = 0; i < 16; i++) free(keep[i]);
    return 0;
}

// A child checks that both allocators work in it, then exits.
static void child_work(void)
{
    int both[2] = { 0, 0 };
    for (int i = 0; i < 400; i++) {
        char *p = (char *)malloc(40);
        memset(p, 1, 40);
        both[guarded(p)]++;
        p = (char *)realloc(p, 4000);
        free(p);
    }
    _exit(both[0] && both[1] ? 0 : 4);
}

static pid_t handler_child;
static void on_usr1(int sig)
{
    (void)sig;
    pid_t pid = fork();
    if (pid == 0) child_work();
    handler_child = pid;
}

// 10 forks from a thread and 10 from a signal handler, while 3 threads
// allocate and free.
static void fork_threads(void)
{
    pthread_t t[3];
    for (int i = 0; i < 3; i++) pthread_create(&t[i], 0, churn, 0);
    signal(SIGUSR1, on_usr1);
    int ok = 0;
    for (int round = 0; round < 10; round++) {
        pid_t pid = fork();
        if (pid == 0) child_work();
        int st;
        if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0) ok++;
        handler_child = 0;
        raise(SIGUSR1);
        if (handler_child > 0 && waitpid(handler_child, &st, 0) == handler_child && WIFEXITED(st) &&
            WEXITSTATUS(st) == 0)
            ok++;
    }
    stop_churn = 1;
    for (int i = 0; i < 3; i++) pthread_join(t[i], 0);
    printf("children ok %d of 20\n", ok);
}

// Which of 1000 allocations are guarded, after a fork, in both processes.
static void fork_sequences(void)
{
    int fds[2];
    if (pipe(fds) != 0) fail("pipe");
    pid_t pid = fork();
    if (pid < 0) fail("fork");
    char mine[1000];
    for (int i = 0; i < 1000; i++) {
        void *p = malloc(32);
        mine[i] = guarded(p);
        free(p);
    }
    if (pid == 0) {
        if (write(fds[1], mine, sizeof mine) != (ssize_t)sizeof mine) _exit(3);
        _exit(0);
    }
    char theirs[1000];
    size_t got = 0;
    while (got < sizeof theirs) {
        ssize_t r = read(fds[0], theirs + got, sizeof theirs - got);
        if (r <= 0) fail("read");
        got += (size_t)r;
    }
    int status;
    waitpid(pid, &status, 0);
    int n = 0;
    for (int i = 0; i < 1000; i++) n += theirs[i];
    printf("child guarded %d of 1000\n", n);
    if (memcmp(mine, theirs, sizeof mine) != 0) printf("parent and child differ\n");
}

__attribute__((noinline)) char *make_array() { return new char[40]; }
__attribute__((noinline)) char *make_record() { return (char *)malloc(20); }
__attribute__((noinline)) void drop_record(char *p) { free(p); }

// A guarded 48-byte block, dropped; the glibc ones are freed.
__attribute__((noinline)) static void leak_one_guarded(void)
{
    char *p;
    do {
        p = (char *)malloc(48);
        if (!guarded(p)) { free(p); p = 0; }
    } while (!p);
    p[0] = 1;
}

// Dead stack slots overwritten: no stale copy of a pointer survives.
__attribute__((noinline)) static void scrub_stack(void)
{
    volatile char junk[8192];
    memset((char *)junk, 0, sizeof junk);
}

int main(int argc, char **argv)
{
    void *lo;
    size_t size;
    const char *backend;
    auto heap_range = (int (*)(void **, size_t *, const char **))dlsym(RTLD_DEFAULT, "memdbg_heap_range");
    if (!heap_range) fail("not under memdbg");
    heap_range(&lo, &size, &backend);
    arena_lo = (uintptr_t)lo;
    arena_hi = arena_lo + size;
    const char *what = argc > 1 ? argv[1] : "";
    if (!strcmp(what, "routing")) {
        routing();
    } else if (!strcmp(what, "fork_threads")) {
        fork_threads();
    } else if (!strcmp(what, "pool")) {
        pool();
    } else if (!strcmp(what, "fork")) {
        fork_sequences();
    } else if (!strcmp(what, "realloc")) {
        realloc_both_ways();
    } else if (!strcmp(what, "mismatch")) {
        for (int i = 0; i < TRIES; i++) {
            char *p = make_array();
            bool g = guarded(p);
            free(p);
            if (g) break;
        }
        fail("no guarded new[]");
    } else if (!strcmp(what, "overflow_loop")) {
        for (int i = 0; i < TRIES; i++) {
            char *p = make_record();
            ((volatile char *)p)[20] = 1;   // glibc's blocks of 20 bytes have 24 usable
            drop_record(p);
        }
        fail("never caught");
    } else if (!strcmp(what, "uaf_loop")) {
        for (int i = 0; i < TRIES; i++) {
            char *p = make_record();
            drop_record(p);
            (void)((volatile char *)p)[3];
        }
        fail("never caught");
    } else if (!strcmp(what, "leak")) {
        leak_one_guarded();
        scrub_stack();
    } else if (!strcmp(what, "reachable")) {
        static void **holder;
        do {   // a glibc block holding the only pointer to a guarded one
            holder = (void **)malloc(64);
            if (guarded(holder)) { free(holder); holder = 0; }
        } while (!holder);
        void *g;
        do {
            g = malloc(48);
            if (!guarded(g)) { free(g); g = 0; }
        } while (!g);
        holder[3] = g;
        g = 0;
        printf("reachable ok\n");
    }
    return 0;
}
