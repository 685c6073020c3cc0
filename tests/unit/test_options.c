// SPDX-License-Identifier: MIT
/* Option parsing and validation, through the parser's entry point
 * md_options_init(): it reads MEMDBG_OPTIONS and the Electric Fence EF_*
 * variables and fills md_opt.  A bad value of a known option ends the
 * process with exit status 1 and a message naming it, so those cases run
 * in a child (unit_capture). */
#include "unit_lib.h"
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static const char *const ef_vars[] = {
    "EF_PROTECT_BELOW", "EF_ALIGNMENT", "EF_ALLOW_MALLOC_0", "EF_FILL", "EF_PROTECT_FREE",
};

/* The environment of one parse: MEMDBG_OPTIONS=options, no EF_* unless set after. */
static void parse_with(const char *options)
{
    for (size_t i = 0; i < sizeof ef_vars / sizeof *ef_vars; i++) unsetenv(ef_vars[i]);
    if (options) setenv("MEMDBG_OPTIONS", options, 1);
    else unsetenv("MEMDBG_OPTIONS");
    md_options_init();
}

static void defaults(void)
{
    parse_with(NULL);
    UNIT_EQ_U(md_opt.backend, MD_BACKEND_AUTO, "backend");
    UNIT_EQ_U(md_opt.alignment, 2, "alignment");
    UNIT_EQ_U(md_opt.quarantine_size, (size_t)16 << 40, "quarantine_size");
    UNIT_EQ_U(md_opt.malloc_fill_byte, 0xbe, "malloc_fill_byte");
    UNIT_EQ_U(md_opt.max_malloc_fill_size, 4096, "max_malloc_fill_size");
    UNIT_CHECK(md_opt.free_fill_byte == -1, "free_fill_byte %d, expected -1", md_opt.free_fill_byte);
    UNIT_EQ_U(md_opt.detect_leaks, 1, "detect_leaks");
    UNIT_EQ_U(md_opt.exitcode, 1, "exitcode");
    UNIT_EQ_U(md_opt.halt_on_error, 1, "halt_on_error");
    UNIT_EQ_U(md_opt.abort_on_error, 0, "abort_on_error");
    UNIT_EQ_U(md_opt.malloc_context_size, 16, "malloc_context_size");
    UNIT_EQ_U(md_opt.arena_size, (size_t)64 << 30, "arena_size");
    UNIT_EQ_U(md_opt.free_batch, 1, "free_batch");
    UNIT_EQ_U(md_opt.stack_memo, 1, "stack_memo");
    UNIT_EQ_U(md_opt.symbolize, 1, "symbolize");
    UNIT_EQ_U(md_opt.compact, 0, "compact");
    UNIT_EQ_U(md_opt.compact_max, 1024, "compact_max");
    UNIT_EQ_U(md_option_given(MD_OPTION_ID_quarantine_size), 0, "quarantine_size given");
    UNIT_EQ_S(md_opt.log_path, "", "log_path");
    UNIT_EQ_S(md_opt.suppressions, "", "suppressions");
}

/* One accepted setting: the options string and the field it must set. */
struct accepted {
    const char *options;
    const char *field;
    unsigned long long want;
};

static unsigned long long field_value(const char *field)
{
#define FIELD(name) if (strcmp(field, #name) == 0) return (unsigned long long)md_opt.name
    FIELD(backend); FIELD(protect_below); FIELD(alignment); FIELD(quarantine_size);
    FIELD(malloc_fill_byte); FIELD(max_malloc_fill_size); FIELD(free_fill_byte);
    FIELD(detect_leaks); FIELD(exitcode); FIELD(abort_on_error); FIELD(halt_on_error);
    FIELD(malloc_context_size); FIELD(verbosity); FIELD(print_stats); FIELD(free_batch);
    FIELD(arena_size); FIELD(allow_malloc_0); FIELD(compact_max); FIELD(compact_defer);
    if (strcmp(field, "quarantine_given") == 0) return md_option_given(MD_OPTION_ID_quarantine_size);
    FIELD(symbolize); FIELD(recycle_pages);
#undef FIELD
    UNIT_FAIL("no field %s in the test's list", field);
    return ~0ull;
}

static const struct accepted accepted[] = {
    { "backend=auto", "backend", MD_BACKEND_AUTO },
    { "backend=nonlinear", "backend", MD_BACKEND_NONLINEAR },
    { "backend=guard", "backend", MD_BACKEND_GUARD },
    { "backend=mprotect", "backend", MD_BACKEND_MPROTECT },
    { "protect_below=1", "protect_below", 1 },
    { "alignment=1", "alignment", 1 },
    { "alignment=0", "alignment", 1 },              /* EF_ALIGNMENT=0: byte alignment */
    { "alignment=4096", "alignment", 4096 },
    { "alignment=0x40", "alignment", 64 },
    { "quarantine_size_mb=0", "quarantine_size", 0 },
    { "quarantine_size_mb=3", "quarantine_size", 3 << 20 },
    { "quarantine_size_mb=3", "quarantine_given", 1 },
    { "quarantine_size=2G", "quarantine_size", 2ull << 30 },
    { "quarantine_size=5k", "quarantine_size", 5 << 10 },
    { "quarantine_size=1T", "quarantine_size", 1ull << 40 },
    { "malloc_fill_byte=-1", "malloc_fill_byte", (unsigned long long)-1 },
    { "malloc_fill_byte=255", "malloc_fill_byte", 255 },
    { "free_fill_byte=0x55", "free_fill_byte", 0x55 },
    { "max_malloc_fill_size=1M", "max_malloc_fill_size", 1 << 20 },
    { "detect_leaks=0", "detect_leaks", 0 },
    { "detect_leaks=false", "detect_leaks", 0 },
    { "detect_leaks=no", "detect_leaks", 0 },
    { "detect_leaks=yes", "detect_leaks", 1 },
    { "print_stats=true", "print_stats", 1 },
    { "exitcode=0", "exitcode", 0 },
    { "exitcode=255", "exitcode", 255 },
    { "abort_on_error=1", "abort_on_error", 1 },
    { "halt_on_error=0", "halt_on_error", 0 },
    { "malloc_context_size=0", "malloc_context_size", 0 },
    { "malloc_context_size=256", "malloc_context_size", 256 },
    { "verbosity=3", "verbosity", 3 },
    { "free_batch=256", "free_batch", 256 },
    { "arena_size=16M", "arena_size", 16 << 20 },
    { "arena_size=16T", "arena_size", 16ull << 40 },
    { "arena_size=17000001", "arena_size", 17000001 & ~4095ull },   /* whole pages */
    { "allow_malloc_0=0", "allow_malloc_0", 0 },
    { "compact_max=2000", "compact_max", 2000 },
    { "compact_defer=512", "compact_defer", 512 },
    { "symbolize=0", "symbolize", 0 },
    { "recycle_pages=1", "recycle_pages", 1 },
    /* the last of a key wins; separators as ASan takes them */
    { "exitcode=3:exitcode=4", "exitcode", 4 },
    { "verbosity=1,exitcode=9", "exitcode", 9 },
    { "  exitcode=8\tverbosity=0\n", "exitcode", 8 },
    { "::exitcode=6::", "exitcode", 6 },
};

static void accepted_values(void)
{
    for (size_t i = 0; i < sizeof accepted / sizeof *accepted; i++) {
        const struct accepted *a = &accepted[i];
        parse_with(a->options);
        unsigned long long got = field_value(a->field);
        UNIT_CHECK(got == a->want, "MEMDBG_OPTIONS='%s': %s = %llu, expected %llu", a->options, a->field, got,
                   a->want);
    }
}

static void strings(void)
{
    parse_with("log_path=/tmp/x.log:suppressions=/etc/supp");
    UNIT_EQ_S(md_opt.log_path, "/tmp/x.log", "log_path");
    UNIT_EQ_S(md_opt.suppressions, "/etc/supp", "suppressions");
}

/* A rejected value: the process ends with status 1 and this message. */
struct rejected {
    const char *options;
    const char *message;   /* a line of stderr, exactly */
};

static const struct rejected rejected[] = {
    { "backend=fast", "memdbg: bad value 'fast' for option 'backend': expected auto, nonlinear, guard or mprotect" },
    { "alignment=3", "memdbg: bad value '3' for option 'alignment': expected a power of two from 1 to 4096" },
    { "alignment=8192", "memdbg: bad value '8192' for option 'alignment': expected a power of two from 1 to 4096" },
    { "exitcode=256", "memdbg: bad value '256' for option 'exitcode': expected an integer from 0 to 255" },
    { "exitcode=abc", "memdbg: bad value 'abc' for option 'exitcode': expected an integer from 0 to 255" },
    { "exitcode=1k", "memdbg: bad value '1k' for option 'exitcode': expected an integer from 0 to 255" },
    { "exitcode=-1", "memdbg: bad value '-1' for option 'exitcode': expected an integer from 0 to 255" },
    { "detect_leaks=maybe", "memdbg: bad value 'maybe' for option 'detect_leaks': expected 0 or 1 (or false/true, no/yes)" },
    { "detect_leaks=2", "memdbg: bad value '2' for option 'detect_leaks': expected 0 or 1 (or false/true, no/yes)" },
    { "malloc_fill_byte=256", "memdbg: bad value '256' for option 'malloc_fill_byte': expected an integer from -1 to 255" },
    { "malloc_context_size=257", "memdbg: bad value '257' for option 'malloc_context_size': expected an integer from 0 to 256" },
    { "verbosity=4", "memdbg: bad value '4' for option 'verbosity': expected an integer from 0 to 3" },
    { "free_batch=0", "memdbg: bad value '0' for option 'free_batch': expected an integer from 1 to 256" },
    { "arena_size=15M", "memdbg: bad value '15M' for option 'arena_size': expected bytes from 16M to 16T (K, M, G, T suffixes)" },
    { "arena_size=17T", "memdbg: bad value '17T' for option 'arena_size': expected bytes from 16M to 16T (K, M, G, T suffixes)" },
    { "arena_size=64Q", "memdbg: bad value '64Q' for option 'arena_size': expected bytes from 16M to 16T (K, M, G, T suffixes)" },
    { "quarantine_size=", "memdbg: bad value '' for option 'quarantine_size': expected bytes (K, M, G, T suffixes)" },
    { "quarantine_size=99999999999999999999", "memdbg: bad value '99999999999999999999' for option 'quarantine_size': expected bytes (K, M, G, T suffixes)" },
    { "quarantine_size=17000000T", "memdbg: bad value '17000000T' for option 'quarantine_size': expected bytes (K, M, G, T suffixes)" },
    { "quarantine_size_mb=-1", "memdbg: bad value '-1' for option 'quarantine_size_mb': expected an integer from 0 to 1073741824 MiB" },
    { "compact_max=2001", "memdbg: bad value '2001' for option 'compact_max': expected bytes from 0 to 2000 (K, M, G, T suffixes)" },
    { "compact_defer=513", "memdbg: bad value '513' for option 'compact_defer': expected an integer from 0 to 512" },
    { "log_path=", "memdbg: bad value '' for option 'log_path': expected a path of 1 to 487 bytes" },
    { "exitcode", "memdbg: option without '=value' in MEMDBG_OPTIONS: 'exitcode'" },
};

static void parse_in_child(void *options)
{
    parse_with(options);
    printf("accepted\n");
}

static void rejected_values(void)
{
    for (size_t i = 0; i < sizeof rejected / sizeof *rejected; i++) {
        const struct rejected *r = &rejected[i];
        char *out;
        int status = unit_capture(parse_in_child, (void *)r->options, &out);
        UNIT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1, "MEMDBG_OPTIONS='%s': status %#x, expected exit 1",
                   r->options, status);
        UNIT_CHECK(unit_line_count(out) == 1 && unit_streq(unit_line(out, 0), r->message),
                   "MEMDBG_OPTIONS='%s': printed '%s', expected '%s'", r->options, out, r->message);
        free(out);
    }
}

/* An unknown key warns, as ASan does, and the rest still applies. */
static void unknown_key(void)
{
    char *out;
    int status = unit_capture(parse_in_child, "no_such_key=1:exitcode=5", &out);
    UNIT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x, expected 0", status);
    UNIT_CHECK(unit_match(unit_line(out, 0),
                          "^==[0-9]+==WARNING: memdbg: unknown option 'no_such_key' in MEMDBG_OPTIONS ignored"),
               "first line '%s'", unit_line(out, 0));
    UNIT_EQ_S(unit_line(out, 1), "accepted", "second line");
    parse_with("no_such_key=1:exitcode=5");   /* (warns on this test's output too) */
    UNIT_EQ_U(md_opt.exitcode, 5, "exitcode after the unknown key");
}

static void low_alignment_warns(void)
{
    char *out;
    unit_capture(parse_in_child, "alignment=1", &out);
    UNIT_CHECK(unit_match(unit_line(out, 0), "^==[0-9]+==WARNING: memdbg: alignment=1 puts odd-sized blocks at odd addresses"),
               "first line '%s'", unit_line(out, 0));
    free(out);
    unit_capture(parse_in_child, "alignment=8", &out);
    UNIT_EQ_S(out, "accepted\n", "output with alignment=8");
    free(out);
}

/* Electric Fence's variables are read first; MEMDBG_OPTIONS overrides them. */
static void ef_variables(void)
{
    parse_with(NULL);
    setenv("EF_PROTECT_BELOW", "1", 1);
    setenv("EF_ALIGNMENT", "0", 1);
    setenv("EF_ALLOW_MALLOC_0", "0", 1);
    setenv("EF_FILL", "7", 1);
    setenv("EF_PROTECT_FREE", "0", 1);
    md_options_init();
    UNIT_EQ_U(md_opt.protect_below, 1, "EF_PROTECT_BELOW=1");
    UNIT_EQ_U(md_opt.alignment, 1, "EF_ALIGNMENT=0");
    UNIT_EQ_U(md_opt.allow_malloc_0, 0, "EF_ALLOW_MALLOC_0=0");
    UNIT_EQ_U(md_opt.malloc_fill_byte, 7, "EF_FILL=7");
    UNIT_EQ_U(md_opt.quarantine_size, 0, "EF_PROTECT_FREE=0");
    UNIT_EQ_U(md_option_given(MD_OPTION_ID_quarantine_size), 1, "EF_PROTECT_FREE=0 sets the quarantine");

    setenv("MEMDBG_OPTIONS", "protect_below=0:alignment=32:quarantine_size_mb=1", 1);
    md_options_init();
    UNIT_EQ_U(md_opt.protect_below, 0, "protect_below after MEMDBG_OPTIONS");
    UNIT_EQ_U(md_opt.alignment, 32, "alignment after MEMDBG_OPTIONS");
    UNIT_EQ_U(md_opt.quarantine_size, 1 << 20, "quarantine after MEMDBG_OPTIONS");

    unsetenv("MEMDBG_OPTIONS");
    setenv("EF_PROTECT_FREE", "1", 1);
    unsetenv("EF_ALIGNMENT");
    md_options_init();
    UNIT_EQ_U(md_opt.quarantine_size, (size_t)16 << 40, "EF_PROTECT_FREE=1 keeps the quarantine");
}

static void ef_bad_value(void *arg)
{
    (void)arg;
    parse_with(NULL);
    setenv("EF_PROTECT_FREE", "2", 1);
    md_options_init();
    printf("accepted\n");
}

static void ef_rejected(void)
{
    char *out;
    int status = unit_capture(ef_bad_value, NULL, &out);
    UNIT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status %#x, expected exit 1", status);
    UNIT_EQ_S(unit_line(out, 0), "memdbg: bad value '2' for option 'EF_PROTECT_FREE': expected 0 or 1 (or false/true, no/yes)", "message");
    free(out);
}

const struct unit_case unit_options_cases[] = {
    { "options: defaults without MEMDBG_OPTIONS", defaults },
    { "options: every kind of accepted value sets its field", accepted_values },
    { "options: log_path and suppressions paths", strings },
    { "options: bad values stop with exit 1 and a message naming the option", rejected_values },
    { "options: an unknown key warns and the others apply", unknown_key },
    { "options: alignment=1 warns", low_alignment_warns },
    { "options: EF_* variables, overridden by MEMDBG_OPTIONS", ef_variables },
    { "options: a bad EF_PROTECT_FREE stops", ef_rejected },
    { 0, 0 },
};
