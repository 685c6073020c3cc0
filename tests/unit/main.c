// SPDX-License-Identifier: MIT
/* Runner of memdbg's unit tests: prints TAP ("1..N", then "ok N - name" or
 * "not ok N - name" with the failed checks as "#" lines).
 *
 *   unit [--list] [--only PATTERN]
 *
 * --only runs the tests whose names contain PATTERN (a POSIX extended
 * regex).  Each test runs in a child process (see unit.h); a test that
 * crashes, or exits without finishing, fails with its status. */
#include "unit.h"

#include <errno.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const struct unit_case *const groups[] = {
    unit_options_cases, unit_suppressions_cases, unit_depot_cases, unit_modules_cases,
    unit_pool_cases, unit_decode_cases, unit_report_cases, unit_sample_gap_cases,
};

/* An exit status no test returns by accident: the test body ran to its end. */
#define UNIT_DONE_PASS 86
#define UNIT_DONE_FAIL 87

static bool failed;

bool unit_failed(void) { return failed; }

void unit_fail_at(const char *file, int line, const char *fmt, ...)
{
    const char *base = strrchr(file, '/');
    va_list ap;
    failed = true;
    printf("#   %s:%d: ", base ? base + 1 : file, line);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

bool unit_streq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

const char *unit_line(const char *text, int n)
{
    static char line[4096];
    const char *p = text;
    for (int i = 0; i < n; i++) {
        p = strchr(p, '\n');
        if (!p) return NULL;
        p++;
    }
    if (!*p) return NULL;
    size_t len = strcspn(p, "\n");
    if (len >= sizeof line) len = sizeof line - 1;
    memcpy(line, p, len);
    line[len] = 0;
    return line;
}

int unit_line_count(const char *text)
{
    int n = 0;
    while (unit_line(text, n)) n++;
    return n;
}

bool unit_match(const char *s, const char *regex)
{
    regex_t re;
    if (!s || regcomp(&re, regex, REG_EXTENDED | REG_NOSUB) != 0) return false;
    bool m = regexec(&re, s, 0, NULL, 0) == 0;
    regfree(&re);
    return m;
}

/* Reads fd to its end into a malloc'd string. */
static char *slurp(int fd)
{
    size_t cap = 4096, len = 0;
    char *s = malloc(cap);
    for (;;) {
        if (len + 1 == cap) s = realloc(s, cap *= 2);
        ssize_t r = read(fd, s + len, cap - len - 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        len += (size_t)r;
    }
    s[len] = 0;
    return s;
}

int unit_capture(void (*fn)(void *), void *arg, char **out)
{
    int p[2];
    fflush(stdout);
    if (pipe(p) != 0) { perror("pipe"); exit(2); }
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); exit(2); }
    if (pid == 0) {
        close(p[0]);
        dup2(p[1], 1);
        dup2(p[1], 2);
        close(p[1]);
        fn(arg);
        fflush(stdout);
        _exit(0);
    }
    close(p[1]);
    *out = slurp(p[0]);
    close(p[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) { }
    return status;
}

static void run_case(void *arg)
{
    const struct unit_case *c = arg;
    c->run();
    fflush(stdout);
    _exit(failed ? UNIT_DONE_FAIL : UNIT_DONE_PASS);
}

static void usage(void)
{
    fprintf(stderr, "usage: unit [--list] [--only PATTERN]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *only = NULL;
    bool list = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--list") == 0) list = true;
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
        else usage();
    }
    regex_t re;
    if (only && regcomp(&re, only, REG_EXTENDED | REG_NOSUB) != 0) {
        fprintf(stderr, "unit: bad pattern '%s'\n", only);
        return 2;
    }

    const struct unit_case *chosen[512];
    int n = 0;
    for (size_t g = 0; g < sizeof groups / sizeof *groups; g++)
        for (const struct unit_case *c = groups[g]; c->name; c++)
            if ((!only || regexec(&re, c->name, 0, NULL, 0) == 0) && n < 512) chosen[n++] = c;
    if (list) {
        for (int i = 0; i < n; i++) printf("%s\n", chosen[i]->name);
        return 0;
    }

    printf("1..%d\n", n);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        char *out;
        int status = unit_capture(run_case, (void *)chosen[i], &out);
        bool pass = WIFEXITED(status) && WEXITSTATUS(status) == UNIT_DONE_PASS;
        printf("%s %d - %s\n", pass ? "ok" : "not ok", i + 1, chosen[i]->name);
        /* a failed test's output: the checks' own lines are "#" already,
         * anything else it printed (a crash's message) is made a comment;
         * a passing test's warnings (expected ones) are not shown */
        for (int l = 0; !pass && unit_line(out, l); l++) {
            const char *t = unit_line(out, l);
            printf("%s%s\n", t[0] == '#' ? "" : "#   ", t);
        }
        if (!WIFEXITED(status))
            printf("#   killed by signal %d\n", WTERMSIG(status));
        else if (!pass && WEXITSTATUS(status) != UNIT_DONE_FAIL)
            printf("#   exited with status %d before its end\n", WEXITSTATUS(status));
        free(out);
        bad += !pass;
    }
    printf("# %d passed, %d failed\n", n - bad, bad);
    return bad ? 1 : 0;
}
