// SPDX-License-Identifier: MIT
/* Suppression matching, table-driven, through md_suppression_for(): the
 * suppressions file holds the row's pattern, the allocation stack is one
 * frame in a function of this file (symbolized for real: "in FUNC
 * .../test_suppressions.c:LINE") and md_module_of() (a stub) answers the
 * row's module path.  The file is read once per process, so each row
 * runs in a child. */
#include "unit_lib.h"
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Frames of the fabricated stacks: a return address inside each. */
__attribute__((noinline)) static uintptr_t leak_big(void) { return (uintptr_t)__builtin_return_address(0); }
__attribute__((noinline)) static uintptr_t leak_small(void) { return (uintptr_t)__builtin_return_address(0); }
__attribute__((noinline)) static uintptr_t make_leaky_block(void) { return (uintptr_t)__builtin_return_address(0); }

/* A pc inside fn, as a stored return address would be: fn's entry + 1
 * (md_frame_location looks up pc - 1, the entry itself). */
static uintptr_t pc_in(uintptr_t (*fn)(void)) { return (uintptr_t)fn + 1; }

struct row {
    const char *pattern;
    const char *function;     /* leak_big, leak_small or make_leaky_block */
    const char *module;       /* what md_module_of answers (NULL: no module) */
    bool match;
};

static const struct row rows[] = {
    /* function names: anywhere in the name unless anchored */
    { "leak_big", "leak_big", NULL, true },
    { "big", "leak_big", NULL, true },
    { "leak_", "leak_small", NULL, true },
    { "leak_big", "leak_small", NULL, false },
    { "^leak_big$", "leak_big", NULL, true },
    { "^leak_bi$", "leak_big", NULL, false },
    { "^eak_big", "leak_big", NULL, false },
    { "^leak", "leak_big", NULL, true },
    { "big$", "leak_big", NULL, true },
    { "bi$", "leak_big", NULL, false },
    /* '*' is any run of characters, also none */
    { "^leak_sm*l$", "leak_small", NULL, true },
    { "^leak_*$", "leak_small", NULL, true },
    { "^l*k*y*k$", "make_leaky_block", NULL, false },
    { "^m*k*y*k$", "make_leaky_block", NULL, true },
    { "make*block", "make_leaky_block", NULL, true },
    { "block*make", "make_leaky_block", NULL, false },
    { "*", "leak_big", NULL, true },
    { "leak_big*", "leak_big", NULL, true },
    /* the source file, without its line */
    { "test_suppressions.c", "leak_big", NULL, true },
    { "test_suppressions.c$", "leak_big", NULL, true },
    { "tests/unit/", "leak_small", NULL, true },
    { "test_suppressions.c:", "leak_big", NULL, false },
    { "other_file.c", "leak_big", NULL, false },
    /* the module path */
    { "libelf", "leak_big", "/usr/lib/x86_64-linux-gnu/libelf.so.1", true },
    { "libelf", "leak_big", "/usr/lib/x86_64-linux-gnu/libdw.so.1", false },
    { "^/usr/lib/*/libdw.so.1$", "leak_big", "/usr/lib/x86_64-linux-gnu/libdw.so.1", true },
    { "^libdw", "leak_big", "/usr/lib/x86_64-linux-gnu/libdw.so.1", false },
    { "libdw.so.1$", "leak_small", "/usr/lib/x86_64-linux-gnu/libdw.so.1", true },
};

static uintptr_t (*function_named(const char *name))(void)
{
    if (strcmp(name, "leak_big") == 0) return leak_big;
    if (strcmp(name, "leak_small") == 0) return leak_small;
    return make_leaky_block;
}

static char supp_path[64];

static void write_file(const char *text)
{
    snprintf(supp_path, sizeof supp_path, "/tmp/memdbg-unit-supp.%d", (int)getpid());
    FILE *f = fopen(supp_path, "w");
    fputs(text, f);
    fclose(f);
    snprintf(md_opt.suppressions, sizeof md_opt.suppressions, "%s", supp_path);
}

/* Options, depot and modules as the library has them at a leak check. */
static void setup(void)
{
    unsetenv("MEMDBG_OPTIONS");
    md_options_init();
    md_internal_init();
    md_depot_init();
    md_modules_refresh();
}

/* Child: prints the index of the suppression matching a one-frame stack. */
static void match_row(void *arg)
{
    const struct row *r = arg;
    char text[256];
    setup();
    snprintf(text, sizeof text, "leak:%s\n", r->pattern);
    write_file(text);
    unit_stub_module = r->module;
    uintptr_t frame = pc_in(function_named(r->function));
    uint32_t id = md_depot_put(&frame, 1);
    printf("%d\n", md_suppression_for(id));
    unlink(supp_path);
}

static void table(void)
{
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        const struct row *r = &rows[i];
        char *out;
        int status = unit_capture(match_row, (void *)r, &out);
        const char *want = r->match ? "0\n" : "-1\n";
        UNIT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0 && strcmp(out, want) == 0,
                   "pattern '%s' against %s (module %s): printed '%s', expected %s", r->pattern, r->function,
                   r->module ? r->module : "none", out, r->match ? "a match" : "none");
        free(out);
    }
}

/* The first matching line wins; later frames are tried when the first
 * frame matches nothing. */
static void order(void)
{
    setup();
    write_file("# comment\n\n  leak:nothing_here  \nleak:leak_small\n\tleak:leak_\n");
    uintptr_t frames[] = { pc_in(leak_big), pc_in(leak_small) };
    uint32_t both = md_depot_put(frames, 2);
    uint32_t big = md_depot_put(frames, 1);
    UNIT_CHECK(md_have_suppressions(), "no suppressions loaded");
    UNIT_EQ_U(md_suppression_for(both), 2, "leak_big then leak_small: the first frame's match (leak_)");
    uintptr_t frames2[] = { pc_in(make_leaky_block), pc_in(leak_small) };
    UNIT_EQ_U(md_suppression_for(md_depot_put(frames2, 2)), 1, "make_leaky_block then leak_small");
    UNIT_EQ_U(md_suppression_for(big), 2, "leak_big alone");
    uintptr_t none = pc_in(make_leaky_block);
    UNIT_CHECK(md_suppression_for(md_depot_put(&none, 1)) == -1, "make_leaky_block matched");
    unlink(supp_path);
}

/* Counts per suppression, printed as LSan's table and reset. */
static void used_table(void)
{
    setup();
    write_file("leak:leak_big\nleak:^leak_sm*l$\nleak:unused\n");
    UNIT_CHECK(md_have_suppressions(), "no suppressions loaded");
    md_suppression_hit(0, 1000);
    md_suppression_hit(1, 100);
    md_suppression_hit(1, 200);
    md_suppression_hit(1, 12345678);
    char mem[1024];
    struct md_buf b;
    md_buf_init(&b, mem, sizeof mem - 1, -1);
    md_print_suppressions_used(&b);
    mem[b.len] = 0;
    static const char *const want[] = {
        "-----------------------------------------------------",
        "Suppressions used:",
        "  count      bytes template",
        "      1       1000 leak_big",
        "      3   12345978 ^leak_sm*l$",
        "-----------------------------------------------------",
    };
    UNIT_EQ_U(unit_line_count(mem), 6, "lines");
    for (int i = 0; i < 6; i++) UNIT_EQ_S(unit_line(mem, i), want[i], "table line");
    md_buf_init(&b, mem, sizeof mem - 1, -1);
    md_print_suppressions_used(&b);
    UNIT_EQ_U(b.len, 0, "bytes printed by the second call (counts reset)");
    unlink(supp_path);
}

/* Malformed lines warn with file:line and are skipped; the others load. */
static void bad_lines(void *arg)
{
    (void)arg;
    setup();
    write_file("leak:leak_big\nthis line is wrong\nleak:\nfoo:bar\n  leak:  leak_small \n");
    uintptr_t f = pc_in(leak_small);
    printf("have %d, leak_small -> %d\n", md_have_suppressions(), md_suppression_for(md_depot_put(&f, 1)));
    unlink(supp_path);
    snprintf(md_opt.suppressions, sizeof md_opt.suppressions, "/nonexistent/memdbg-unit-supp");
}

static void malformed(void)
{
    char *out;
    int status = unit_capture(bad_lines, NULL, &out);
    UNIT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
    static const char *const want[] = {
        "^==[0-9]+==WARNING: memdbg: suppressions /tmp/memdbg-unit-supp\\.[0-9]+:2: expected 'leak:PATTERN': "
        "'this line is wrong'; line ignored$",
        "^==[0-9]+==WARNING: memdbg: suppressions /tmp/memdbg-unit-supp\\.[0-9]+:3: empty pattern: 'leak:'; line ignored$",
        "^==[0-9]+==WARNING: memdbg: suppressions /tmp/memdbg-unit-supp\\.[0-9]+:4: unknown suppression type "
        "\\(memdbg knows 'leak'\\): 'foo:bar'; line ignored$",
        "^have 1, leak_small -> 1$",
    };
    UNIT_EQ_U(unit_line_count(out), 4, "lines");
    for (int i = 0; i < 4; i++)
        UNIT_CHECK(unit_match(unit_line(out, i), want[i]), "line %d '%s' does not match /%s/", i, unit_line(out, i),
                   want[i]);
    free(out);
}

static void missing(void *arg)
{
    (void)arg;
    setup();
    snprintf(md_opt.suppressions, sizeof md_opt.suppressions, "/nonexistent/memdbg-unit-supp");
    printf("have %d\n", md_have_suppressions());
}

static void missing_file(void)
{
    char *out;
    unit_capture(missing, NULL, &out);
    UNIT_CHECK(unit_match(unit_line(out, 0), "^==[0-9]+==WARNING: memdbg: suppressions /nonexistent/memdbg-unit-supp: "
                                             "file not found; line ignored$"),
               "line '%s'", unit_line(out, 0));
    UNIT_EQ_S(unit_line(out, 1), "have 0", "after the warning");
    free(out);
}

const struct unit_case unit_suppressions_cases[] = {
    { "suppressions: pattern against function, file and module (table)", table },
    { "suppressions: first matching frame, first matching line", order },
    { "suppressions: the 'Suppressions used' table counts and resets", used_table },
    { "suppressions: malformed lines warn with file:line", malformed },
    { "suppressions: a missing file warns", missing_file },
    { 0, 0 },
};
