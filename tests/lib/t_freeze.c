/* SPDX-License-Identifier: MIT */
/* Frozen blocks (<memdbg.h>): memdbg_freeze makes a live block read-only;
 * a write into it is reported with the writer's, the freezer's and the
 * allocator's stacks; thaw, free and realloc end the freeze; fork keeps
 * it; bad arguments are EINVAL; without memdbg every call is ENOSYS. */

// TEST: freeze: a stray write into a frozen table names the writer
// RUN: %memdbg %t stray
// EXIT: 1
// CHECK-ERROR: write-to-frozen-block
// CHECK: ^WRITE of size 4 at 0x[0-9a-f]+ thread T0$
// CHECK: is located 20 bytes inside of 64-byte region \[0x[0-9a-f]+,0x[0-9a-f]+\)
// CHECK-STACK: ^WRITE of size 4 | stray_write | main
// CHECK-STACK: ^frozen by thread T0 here: | freeze_table | main
// CHECK-STACK: ^allocated by thread T0 here: | malloc | build_table | main
// CHECK-ORDER: ^frozen by thread | ^allocated by thread
// CHECK: ^SUMMARY: memdbg: write-to-frozen-block .*stray_write
// CHECK-OUT: ^built$
// CHECK-OUT-NOT: survived
//
// TEST: freeze: the JSON report carries the freezing stack
// RUN: %memdbg -o log_format=json %t stray
// EXIT: 1
// CHECK: ^\{.*"kind":"write-to-frozen-block".*"frozen":\[\{.*"function":"freeze_table".*"allocation":\[
// CHECK-OUT: ^built$

// TEST: freeze: reads are free, thaw makes it writable, interior pointers name the block
// RUN: %memdbg %t api
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-OUT: ^api ok$
//
// TEST: freeze: bad arguments are EINVAL and change nothing
// RUN: %memdbg %t badargs
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-OUT: ^badargs ok$
//
// TEST: freeze: freeze_many and thaw_many over 3000 blocks
// RUN: %memdbg %t many
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-OUT: ^many ok 3000$
//
// TEST: freeze: free and realloc of frozen blocks are allowed, realloc's block is not frozen
// RUN: %memdbg %t lifetime
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-OUT: ^lifetime ok$
//
// TEST: freeze: report_free_frozen=1 reports free of a frozen block
// RUN: %memdbg -o report_free_frozen=1 %t lifetime
// EXIT: 1
// CHECK-ERROR: free-of-frozen-block
// CHECK-STACK: ^free of 0x | free_frozen | lifetime | main
// CHECK-STACK: ^frozen by thread T0 here: | lifetime | main
// CHECK-OUT-NOT: lifetime ok
//
// TEST: freeze: halt_on_error=0 reports once per site and lets the writes through
// RUN: %memdbg -o halt_on_error=0 %t goon
// EXIT: 1
// CHECK-COUNT: 1 ERROR: memdbg: write-to-frozen-block
// CHECK-STACK: ^WRITE of size 4 | poke | goon | main
// CHECK-OUT: ^goon 7 7 frozen=0 0$
//
// TEST: freeze: a fork child inherits frozen blocks frozen
// RUN: %memdbg %t fork
// EXIT: 0
// CHECK-OUT: ^child frozen=1$
// CHECK-OUT: ^child: exit 1$
// CHECK-OUT: ^parent frozen=1 still 5$
// CHECK-ERROR: write-to-frozen-block
// CHECK-STACK: ^WRITE of size 4 | child_writes | main
//
// TEST: freeze: threads race freeze, thaw and free on their own blocks
// RUN: %memdbg %t threads
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-OUT: ^threads ok$
//
// TEST: freeze: read(2) into a frozen block fails with EFAULT; the leak check reads frozen blocks
// RUN: %memdbg %t kernel
// EXIT: 1
// CHECK-OUT: ^read EFAULT, block unchanged$
// CHECK-NOT: ERROR: memdbg: write
// CHECK: ^Direct leak of 24 byte\(s\) in 1 object\(s\)
// CHECK-STACK: ^Direct leak of 24 | malloc | lost_frozen | kernel_writes | main
// CHECK: ^SUMMARY: memdbg: 24 byte\(s\) leaked in 1 allocation\(s\)\.$
//
// One VMA however many blocks are frozen: freezing maps nothing, the first
// freeze included.
// TEST: freeze: 20,000 blocks frozen and thawed, /proc/self/maps unchanged
// REQUIRES: backend=nonlinear
// RUN: %memdbg %t maps
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-OUT: ^maps unchanged after freezing 20000 blocks and thawing them$
//
// In compact mode the block's own virtual page becomes read-only; the
// other blocks of its file page stay writable through their own pages.
// TEST: freeze: compact mode freezes the block's own page only, also in a fork child
// REQUIRES: backend=nonlinear
// RUN: %memdbg -o compact=1 %t compact
// EXIT: 0
// CHECK-NOT: ERROR: memdbg
// CHECK-OUT: ^compact ok$
// RUN: %memdbg -o compact=1 %t stray
// EXIT: 1
// CHECK-ERROR: write-to-frozen-block
// CHECK-STACK: ^frozen by thread T0 here: | freeze_table | main
// CHECK-STACK: ^allocated by thread T0 here: | malloc | build_table | main
// RUN: %memdbg -o compact=1 %t fork
// EXIT: 0
// CHECK-OUT: ^child frozen=1$
// CHECK-OUT: ^child: exit 1$
// CHECK-OUT: ^parent frozen=1 still 5$
// CHECK-ERROR: write-to-frozen-block
//
// The guard backend's frozen block is a VMA of its own: the program takes
// most of vm.max_map_count itself (cheap untouched mappings), then freezes
// until memdbg refuses with ENOMEM, warned once, never a crash.
// TEST: freeze: guard backend refuses with ENOMEM before vm.max_map_count
// REQUIRES: backend=guard
// RUN: %memdbg %t limit
// EXIT: 0
// CHECK-COUNT: 1 WARNING: memdbg: memdbg_freeze stops at about [0-9]+ VMAs of vm.max_map_count=[0-9]+
// CHECK-OUT: ^limit ok ENOMEM after [0-9]+ freezes, again after a thaw$
// CHECK-OUT-NOT: FAIL
// CHECK-NOT: ERROR: memdbg
//
// TEST: freeze: without memdbg every call is ENOSYS
// RUN: %t nosys
// EXIT: 0
// CHECK-OUT: ^nosys ok$

#include <memdbg.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static int fails;
#define EXPECT(cond)                                                                  \
    do {                                                                              \
        if (!(cond)) {                                                                \
            printf("FAIL line %d: %s (errno %s)\n", __LINE__, #cond, strerror(errno)); \
            fails++;                                                                  \
        }                                                                             \
    } while (0)
#define EXPECT_ERR(call, err) \
    do {                      \
        errno = 0;            \
        EXPECT((call) == -1); \
        EXPECT(errno == err); \
    } while (0)

static int global_table[16];

static int *build_table(void)
{
    int *t = malloc(16 * sizeof *t);
    for (int i = 0; i < 16; i++) t[i] = i * i;
    return t;
}

static void freeze_table(int *t)
{
    if (memdbg_freeze(t) != 0) { perror("memdbg_freeze"); exit(3); }
}

static void stray_write(int *t, int i)
{
    t[i] = -1;
}

static void poke(int *p)
{
    *p = 7;
}

static void api(void)
{
    int *t = build_table();
    EXPECT(memdbg_running() == 1);
    EXPECT(memdbg_is_frozen(t) == 0);
    EXPECT(memdbg_freeze(t + 5) == 0);   /* interior pointer: the whole block */
    EXPECT(memdbg_is_frozen(t) == 1);
    EXPECT(memdbg_is_frozen((char *)t + 63) == 1);
    EXPECT(memdbg_freeze(t) == 0);       /* already frozen */
    long sum = 0;
    for (int i = 0; i < 16; i++) sum += t[i];   /* reads are free */
    EXPECT(sum == 1240);
    EXPECT(memdbg_thaw(t) == 0);
    EXPECT(memdbg_is_frozen(t) == 0);
    EXPECT(memdbg_thaw(t) == 0);         /* not frozen: nothing to do */
    t[3] = 42;                            /* writable again */
    EXPECT(t[3] == 42);
    free(t);
    if (!fails) puts("api ok");
}

static void badargs(void)
{
    int local = 1;
    int *t = build_table();
    int *gone = build_table();
    free(gone);
    EXPECT_ERR(memdbg_freeze(NULL), EINVAL);
    EXPECT_ERR(memdbg_freeze(&local), EINVAL);
    EXPECT_ERR(memdbg_freeze(global_table), EINVAL);
    EXPECT_ERR(memdbg_freeze(gone), EINVAL);            /* freed */
    EXPECT_ERR(memdbg_freeze((char *)t + 64), EINVAL);  /* one past the end: padding */
    EXPECT_ERR(memdbg_freeze((char *)t - 1), EINVAL);
    EXPECT_ERR(memdbg_thaw(gone), EINVAL);
    EXPECT_ERR(memdbg_is_frozen(&local), EINVAL);
    const void *mixed[3] = { t, &local, t };
    EXPECT_ERR(memdbg_freeze_many(mixed, 3), EINVAL);
    EXPECT(memdbg_is_frozen(t) == 0);                    /* nothing changed */
    EXPECT_ERR(memdbg_freeze_many(NULL, 2), EINVAL);
    EXPECT(memdbg_freeze_many(NULL, 0) == 0);
    const void *twice[2] = { t, t + 1 };
    EXPECT(memdbg_freeze_many(twice, 2) == 0);           /* one block named twice */
    EXPECT(memdbg_is_frozen(t) == 1);
    EXPECT(memdbg_thaw_many(twice, 2) == 0);
    EXPECT(memdbg_is_frozen(t) == 0);
    t[0] = 9;
    free(t);
    if (!fails) puts("badargs ok");
}

#define MANY 3000
static void many(void)
{
    static char *blocks[MANY];
    for (int i = 0; i < MANY; i++) {
        blocks[i] = malloc(24 + i % 100);
        memset(blocks[i], i & 0x7f, 24);
    }
    EXPECT(memdbg_freeze_many((const void *const *)blocks, MANY) == 0);
    int frozen = 0;
    for (int i = 0; i < MANY; i++) frozen += memdbg_is_frozen(blocks[i]) == 1 && blocks[i][23] == (i & 0x7f);
    EXPECT(frozen == MANY);
    /* the odd ones thawed, the even ones freed frozen */
    static const void *odd[MANY / 2];
    for (int i = 0; i < MANY / 2; i++) odd[i] = blocks[2 * i + 1];
    EXPECT(memdbg_thaw_many(odd, MANY / 2) == 0);
    int ok = 0;
    for (int i = 0; i < MANY; i++) {
        if (i % 2) {
            blocks[i][0] = 1;
            ok += memdbg_is_frozen(blocks[i]) == 0;
        } else {
            ok += memdbg_is_frozen(blocks[i]) == 1;
        }
        free(blocks[i]);
    }
    if (!fails) printf("many ok %d\n", ok);
}

static void free_frozen(char *p)
{
    free(p);
}

static void lifetime(void)
{
    char *a = malloc(100), *b = malloc(5000), *c = malloc(40);
    memset(a, 'a', 100);
    memset(b, 'b', 5000);
    memset(c, 'c', 40);
    EXPECT(memdbg_freeze(a) == 0 && memdbg_freeze(b) == 0 && memdbg_freeze(c) == 0);
    free_frozen(a);
    char *b2 = realloc(b, 9000);          /* moves: the new block is not frozen */
    EXPECT(b2 && b2[4999] == 'b');
    EXPECT(memdbg_is_frozen(b2) == 0);
    b2[8999] = 1;
    char *c2 = realloc(c, 39);            /* in place: no longer frozen either */
    EXPECT(c2 && c2[38] == 'c');
    EXPECT(memdbg_is_frozen(c2) == 0);
    c2[0] = 1;
    free(b2);
    free(c2);
    char *d = malloc(100);                /* whatever it reuses is writable */
    memset(d, 0, 100);
    free(d);
    if (!fails) puts("lifetime ok");
}

static void goon(void)
{
    int *x = malloc(sizeof *x), *y = malloc(sizeof *y);
    *x = *y = 0;
    memdbg_freeze(x);
    memdbg_freeze(y);
    poke(x);   /* reported, thawed, written */
    poke(y);   /* same instruction: thawed and written, no second report */
    printf("goon %d %d frozen=%d %d\n", *x, *y, memdbg_is_frozen(x), memdbg_is_frozen(y));
    free(x);
    free(y);
}

static void child_writes(int *p)
{
    *p = 6;
}

static void fork_frozen(void)
{
    int *p = malloc(sizeof *p);
    *p = 5;
    memdbg_freeze(p);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        printf("child frozen=%d\n", memdbg_is_frozen(p));
        fflush(stdout);
        child_writes(p);
        puts("child survived");
        exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    printf("child: exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    printf("parent frozen=%d still %d\n", memdbg_is_frozen(p), *p);
    memdbg_thaw(p);
    free(p);
}

#define THREADS 4
#define ROUNDS 300
static void *racer(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    char *mine[8] = { 0 };
    for (int r = 0; r < ROUNDS; r++) {
        int i = rand_r(&seed) % 8;
        if (!mine[i]) {
            mine[i] = malloc(16 + rand_r(&seed) % 3000);
            mine[i][0] = 1;
            continue;
        }
        switch (rand_r(&seed) % 4) {
        case 0: if (memdbg_freeze(mine[i]) != 0) return (void *)1; break;
        case 1: if (memdbg_thaw(mine[i]) != 0) return (void *)2; mine[i][0]++; break;
        case 2: free(mine[i]); mine[i] = 0; break;
        default: if (memdbg_is_frozen(mine[i]) == 0) mine[i][0]++; break;
        }
    }
    for (int i = 0; i < 8; i++) free(mine[i]);
    return 0;
}

static void threads(void)
{
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++) pthread_create(&th[i], 0, racer, (void *)(uintptr_t)(i + 1));
    int bad = 0;
    for (int i = 0; i < THREADS; i++) {
        void *r;
        pthread_join(th[i], &r);
        bad += r != 0;
    }
    EXPECT(bad == 0);
    if (!fails) puts("threads ok");
}

static void *kept;
static void lost_frozen(void)
{
    char *lost = malloc(24);
    memset(lost, 1, 24);
    memdbg_freeze(lost);   /* leaked while frozen: still found */
}

static void kernel_writes(void)
{
    char *buf = malloc(32);
    memset(buf, 'x', 32);
    memdbg_freeze(buf);
    int fd = open("/proc/self/cmdline", O_RDONLY);
    errno = 0;
    ssize_t n = read(fd, buf, 16);
    close(fd);
    if (n == -1 && errno == EFAULT && buf[0] == 'x') puts("read EFAULT, block unchanged");
    else printf("read returned %zd errno %d\n", n, errno);
    free(buf);
    /* a frozen block that holds the only pointer to another: no leak */
    void **holder = malloc(sizeof(void *));
    *holder = malloc(48);
    memdbg_freeze(holder);
    kept = holder;
    lost_frozen();
}

/* compact: neighbours sharing the frozen block's file page stay writable */
static void compact(void)
{
    char *b[8];
    for (int i = 0; i < 8; i++) {
        b[i] = malloc(40);
        memset(b[i], i, 40);
    }
    EXPECT(memdbg_freeze(b[3]) == 0);
    for (int i = 0; i < 8; i++)
        if (i != 3) memset(b[i], 0x55, 40);
    EXPECT(b[3][39] == 3);
    EXPECT(memdbg_thaw(b[3]) == 0);
    b[3][0] = 1;
    for (int i = 0; i < 8; i++) free(b[i]);
    if (!fails) puts("compact ok");
}

static long count_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    long n = 0;
    int c;
    while ((c = getc(f)) != EOF) n += c == '\n';
    fclose(f);
    return n;
}

static void maps_constant(void)
{
    enum { N = 20000 };
    static void *blocks[N];
    for (int i = 0; i < N; i++) {
        blocks[i] = malloc(16 + (size_t)(i % 200));
        if (!blocks[i]) { puts("malloc failed"); fails++; return; }
    }
    long before = count_maps();
    if (memdbg_freeze_many((const void *const *)blocks, N) != 0) {
        printf("freeze_many: %s\n", strerror(errno));
        fails++;
        return;
    }
    long frozen = count_maps();
    if (memdbg_thaw_many((const void *const *)blocks, N) != 0) {
        printf("thaw_many: %s\n", strerror(errno));
        fails++;
        return;
    }
    long thawed = count_maps();
    if (before == frozen && frozen == thawed)
        printf("maps unchanged after freezing %d blocks and thawing them\n", N);
    else
        printf("maps lines %ld, frozen %ld, thawed %ld\n", before, frozen, thawed);
    for (int i = 0; i < N; i++) free(blocks[i]);
}

static void limit(void)
{
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    long max = 0;
    if (!f || fscanf(f, "%ld", &max) != 1) { puts("no max_map_count"); return; }
    fclose(f);
    /* leave room for about 1,500 frozen blocks under memdbg's 7/8 limit:
     * more than one batch of freeze_many, less than the blocks below */
    long take = (max - max / 8 - count_maps() - 3000) / 2;
    if (take > 0) {
        char *r = mmap(0, (size_t)(2 * take + 1) * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        for (long i = 0; i < take; i++)
            mmap(r + (2 * i + 1) * 4096, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    }
    enum { MAXB = 2000 };
    static char *b[MAXB];
    for (int i = 0; i < MAXB; i++) b[i] = malloc(16);
    /* one call past the limit: refused whole, its first batches undone */
    errno = 0;
    EXPECT(memdbg_freeze_many((const void *const *)b, MAXB) == -1 && errno == ENOMEM);
    int left = 0;
    for (int i = 0; i < MAXB; i++) left += memdbg_is_frozen(b[i]) != 0;
    EXPECT(left == 0);
    for (int i = 0; i < MAXB; i++) free(b[i]);
    int n = 0, err = 0;
    for (; n < MAXB; n++) {
        b[n] = malloc(16);
        if (memdbg_freeze(b[n]) != 0) { err = errno; break; }
    }
    EXPECT(err == ENOMEM && n > 100 && n < MAXB);
    errno = 0;
    EXPECT(memdbg_freeze(b[n]) == -1 && errno == ENOMEM);   /* again, no second warning */
    EXPECT(memdbg_thaw(b[0]) == 0);
    EXPECT(memdbg_freeze(b[n]) == 0);                        /* room again */
    b[0][0] = 1;
    for (int i = 0; i <= n && i < MAXB; i++) free(b[i]);
    if (!fails) printf("limit ok %s after %d freezes, again after a thaw\n", err == ENOMEM ? "ENOMEM" : "?", n);
}

static void nosys(void)
{
    int *p = malloc(4);
    const void *v[1] = { p };
    EXPECT(memdbg_running() == 0);
    EXPECT_ERR(memdbg_freeze(p), ENOSYS);
    EXPECT_ERR(memdbg_thaw(p), ENOSYS);
    EXPECT_ERR(memdbg_freeze_many(v, 1), ENOSYS);
    EXPECT_ERR(memdbg_thaw_many(v, 1), ENOSYS);
    EXPECT_ERR(memdbg_is_frozen(p), ENOSYS);
    *p = 1;
    free(p);
    if (!fails) puts("nosys ok");
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    setvbuf(stdout, 0, _IONBF, 0);
    if (!strcmp(mode, "stray")) {
        int *t = build_table();
        puts("built");
        freeze_table(t);
        stray_write(t, 5);
        puts("survived");
    } else if (!strcmp(mode, "api")) {
        api();
    } else if (!strcmp(mode, "badargs")) {
        badargs();
    } else if (!strcmp(mode, "many")) {
        many();
    } else if (!strcmp(mode, "lifetime")) {
        lifetime();
    } else if (!strcmp(mode, "goon")) {
        goon();
    } else if (!strcmp(mode, "fork")) {
        fork_frozen();
    } else if (!strcmp(mode, "threads")) {
        threads();
    } else if (!strcmp(mode, "kernel")) {
        kernel_writes();
    } else if (!strcmp(mode, "compact")) {
        compact();
    } else if (!strcmp(mode, "limit")) {
        limit();
    } else if (!strcmp(mode, "maps")) {
        maps_constant();
    } else if (!strcmp(mode, "nosys")) {
        nosys();
    } else {
        return 2;
    }
    return fails ? 4 : 0;
}
