/* SPDX-License-Identifier: MIT */
/* A heap bug, repeated on many blocks, for the detection benchmark of
 * sampled guarding: under a sampling tool only some blocks are guarded,
 * so one run commits the bug on ATTEMPTS blocks of SIZE bytes (victims),
 * among allocation traffic of 32-byte blocks, until the tool stops it.
 * Before touching a victim the program writes "victim ADDR SIZE" to
 * stderr, so the benchmark can tell whether a report names that block.
 *
 *   bug_corpus CASE ATTEMPTS SIZE GAP
 *
 * CASE: uaf-short (write into the block right after its free),
 *       uaf-long (free every victim, run GAP allocations, then write
 *       into each freed victim), overflow-1 and overflow-100 (write 1 and
 *       100 bytes past the end), underflow (write 1 byte before the
 *       start), double-free.  GAP: allocations of traffic between
 *       victims (uaf-long: between the frees and the first use).
 * Each misuse runs in a child process of its own (see misuse()); the
 * program exits with the status of the first child the tool stopped, or
 * 0 when no misuse was stopped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

enum { TRAFFIC_RING = 256, TRAFFIC_SIZE = 32 };

static char *traffic_ring[TRAFFIC_RING];
static unsigned long traffic_next;

/* GAP allocations of traffic; 256 of them stay live, as in a program
 * with a working set. */
static void traffic(unsigned long gap)
{
    for (unsigned long i = 0; i < gap; i++, traffic_next++) {
        char **slot = &traffic_ring[traffic_next % TRAFFIC_RING];
        free(*slot);
        *slot = malloc(TRAFFIC_SIZE);
        if (*slot) (*slot)[0] = (char)i;
    }
}

/* Says which block is about to be misused, unbuffered, before the tool's
 * report. */
static void announce(const char *victim, size_t size)
{
    char line[64];
    int n = snprintf(line, sizeof line, "victim %p %zu\n", (const void *)victim, size);
    if (write(2, line, (size_t)n) < 0) _exit(3);
}

/* The bugs are the point: the compiler is told not to warn of them, and
 * stores go through a volatile pointer so that it keeps every one. */
#pragma GCC diagnostic ignored "-Wuse-after-free"
#pragma GCC diagnostic ignored "-Warray-bounds"
static void store(char *p, long offset)
{
    volatile char *v = p;
    v[offset] = 1;
}

/* Commits the bug on one victim in a child process: the allocator's
 * own checks (glibc's and Scudo's) abort at an unguarded victim's
 * overflow or double free, and the next attempt must still run.  Returns
 * 0 to go on, or the status to exit with: the tool stopped the child. */
static int misuse(const char *bug, char *victim, size_t size, int freed)
{
    fflush(0);
    pid_t child = fork();
    if (child < 0) return 2;
    if (child == 0) {
        announce(victim, size);
        if (!strcmp(bug, "uaf-short") || !strcmp(bug, "uaf-long")) {
            if (!freed) free(victim);
            store(victim, 0);
        } else if (!strcmp(bug, "overflow-1")) {
            store(victim, (long)size);
            free(victim);
        } else if (!strcmp(bug, "overflow-100")) {
            store(victim, (long)size + 99);
            free(victim);
        } else if (!strcmp(bug, "underflow")) {
            store(victim, -1);
            free(victim);
        } else if (!strcmp(bug, "double-free")) {
            free(victim);
            free(victim);
        }
        _exit(0);
    }
    int status = 0;
    if (waitpid(child, &status, 0) != child) return 2;
    if (WIFSIGNALED(status)) return WTERMSIG(status) == SIGABRT ? 0 : 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
    const char *bugs[] = {"uaf-short", "uaf-long", "overflow-1", "overflow-100", "underflow", "double-free"};
    int known = 0;
    for (size_t i = 0; argc == 5 && i < sizeof bugs / sizeof *bugs; i++) known |= !strcmp(argv[1], bugs[i]);
    if (!known) {
        fprintf(stderr, "usage: bug_corpus uaf-short|uaf-long|overflow-1|overflow-100|underflow|double-free ATTEMPTS SIZE GAP\n");
        return 2;
    }
    const char *bug = argv[1];
    long attempts = strtol(argv[2], 0, 0);
    size_t size = strtoul(argv[3], 0, 0);
    unsigned long gap = strtoul(argv[4], 0, 0);
    int status = 0;

    if (!strcmp(bug, "uaf-long")) {
        char **victims = calloc((size_t)attempts, sizeof *victims);
        if (!victims) return 2;
        for (long i = 0; i < attempts; i++) {
            victims[i] = malloc(size);
            memset(victims[i], 0x5a, size);
            free(victims[i]);
            traffic(1);
        }
        traffic(gap);
        for (long i = 0; i < attempts && !status; i++) status = misuse(bug, victims[i], size, 1);
        return status;
    }
    for (long i = 0; i < attempts && !status; i++) {
        traffic(gap);
        char *victim = malloc(size);
        memset(victim, 0x5a, size);
        status = misuse(bug, victim, size, 0);
        if (!strcmp(bug, "overflow-1") || !strcmp(bug, "overflow-100") || !strcmp(bug, "underflow")) free(victim);
    }
    return status;
}
