// SPDX-License-Identifier: MIT
/* Report formatting (report.c): the text of a report for a fabricated
 * block and address, checked line by line.  The stacks are made of
 * addresses in this file's functions, so the real symbolizer names them
 * with their lines; the functions sit on one line each with the constant
 * that records that line. */
#include "unit_lib.h"
#include "unit.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The fabricated stacks' functions, each with its line. */
__attribute__((noinline)) static void fake_malloc(void) { } static const int fake_malloc_line = __LINE__;
__attribute__((noinline)) static void fake_free(void) { } static const int fake_free_line = __LINE__;
__attribute__((noinline)) static void make_buffer(void) { } static const int make_buffer_line = __LINE__;
__attribute__((noinline)) static void free_buffer(void) { } static const int free_buffer_line = __LINE__;
__attribute__((noinline)) static void use_buffer(void) { } static const int use_buffer_line = __LINE__;
__attribute__((noinline)) static void fake_main(void) { } static const int fake_main_line = __LINE__;

/* A frame as a stored return address names it: its entry + 1. */
#define RA(fn) ((uintptr_t)(fn) + 1)

static void unit_report_setup(void)
{
    unsetenv("MEMDBG_OPTIONS");
    md_options_init();
    md_internal_init();
    md_depot_init();
    md_modules_refresh();
    md_report_init();
}

/* "    #N 0x<pc> in FUNC <this file>:LINE" */
static char *frame_re(int no, uintptr_t pc, const char *fn, int line)
{
    static char re[8][256];
    static int k;
    char *r = re[k++ % 8];
    snprintf(r, 256, "^    #%d 0x%lx in %s [^ ]*tests/unit/test_report\\.c:%d$", no, (unsigned long)pc, fn, line);
    return r;
}

/* "    (raw: unit+0xOFF ...)" with each frame's offset in this program */
static char *raw_re(const uintptr_t *frames, int n)
{
    static char re[512];
    size_t len = (size_t)snprintf(re, sizeof re, "^    \\(raw:");
    for (int i = 0; i < n; i++) {
        Dl_info info;
        dladdr((void *)frames[i], &info);
        len += (size_t)snprintf(re + len, sizeof re - len, " unit\\+0x%lx",
                                (unsigned long)(frames[i] - (uintptr_t)info.dli_fbase));
    }
    snprintf(re + len, sizeof re - len, "\\)$");
    return re;
}

static char *hex_re(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *hex_re(const char *fmt, ...)
{
    static char re[4][512];
    static int k;
    char *r = re[k++ % 4];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r, 512, fmt, ap);
    va_end(ap);
    return r;
}

/* Every line of out against its pattern (NULL ends the list). */
static void check_lines(const char *out, const char *const *want)
{
    int n = 0;
    for (; want[n]; n++) {
        const char *got = unit_line(out, n);
        if (!unit_match(got, want[n])) {
            UNIT_FAIL("line %d: '%s' does not match /%s/", n + 1, got ? got : "(none)", want[n]);
            printf("#   the report:\n");
            for (int l = 0; unit_line(out, l); l++) printf("#     %s\n", unit_line(out, l));
            return;
        }
    }
    UNIT_EQ_U(unit_line_count(out), n, "lines in the report");
}

struct report_case {
    struct md_error_info e;
    struct md_slot slot;
};

static void report_child(void *arg)
{
    struct report_case *c = arg;
    unit_report_setup();
    if (c->e.slot) c->e.slot = &c->slot;
    md_report_error(&c->e);
    printf("returned\n");
}

static char *report_of(struct report_case *c)
{
    char *out;
    int status = unit_capture(report_child, c, &out);
    UNIT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x: the report did not return", status);
    return out;
}

#define BLOCK ((uintptr_t)0x7e0000001fe0)

static void use_after_free(void)
{
    unit_report_setup();   /* the depot ids, in this process and the child alike */
    uintptr_t at[] = { (uintptr_t)use_buffer + 4, RA(fake_main) };
    uintptr_t freed[] = { RA(fake_free), RA(free_buffer), RA(fake_main) };
    uintptr_t alloc[] = { RA(fake_malloc), RA(make_buffer), RA(fake_main) };
    struct report_case c = {
        .e = { .kind = MD_ERROR_UAF, .addr = BLOCK + 5, .access = 1, .access_size = 4, .frames = at, .nframes = 2,
               .slot = (struct md_slot *)1, .pc = at[0], .sp = 0x7ffd00001000, .bp = 0x7ffd00001040 },
        .slot = { .user = BLOCK, .size = 32, .state = MD_SLOT_QUARANTINED, .alloc_tid = 1, .free_tid = 2,
                  .alloc_stack = md_depot_put(alloc, 3), .free_stack = md_depot_put(freed, 3) },
    };
    unit_stub_thread_id = 3;
    char *out = report_of(&c);
    const char *const want[] = {
        "^=================================================================$",
        "^==[0-9]+==ERROR: memdbg: heap-use-after-free on address 0x7e0000001fe5 at pc 0x[0-9a-f]+ bp 0x7ffd00001040 sp 0x7ffd00001000$",
        "^READ of size 4 at 0x7e0000001fe5 thread T3$",
        raw_re(at, 2),
        frame_re(0, at[0], "use_buffer", use_buffer_line),
        frame_re(1, at[1], "fake_main", fake_main_line),
        "^$",
        "^0x7e0000001fe5 is located 5 bytes inside of 32-byte region \\[0x7e0000001fe0,0x7e0000002000\\)$",
        "^freed by thread T2 here:$",
        frame_re(0, freed[0], "fake_free", fake_free_line),
        frame_re(1, freed[1], "free_buffer", free_buffer_line),
        frame_re(2, freed[2], "fake_main", fake_main_line),
        "^$",
        "^previously allocated by thread T1 here:$",
        frame_re(0, alloc[0], "fake_malloc", fake_malloc_line),
        frame_re(1, alloc[1], "make_buffer", make_buffer_line),
        frame_re(2, alloc[2], "fake_main", fake_main_line),
        "^$",
        hex_re("^SUMMARY: memdbg: heap-use-after-free in use_buffer [^ ]*tests/unit/test_report\\.c:%d$", use_buffer_line),
        "^returned$",
        NULL,
    };
    check_lines(out, want);
    free(out);
}

/* A live block: "allocated by", the distance after its end; no pc. */
static void overflow_live(void)
{
    unit_report_setup();
    uintptr_t at[] = { RA(use_buffer), RA(fake_main) };
    uintptr_t alloc[] = { RA(fake_malloc), RA(make_buffer) };
    struct report_case c = {
        .e = { .kind = MD_ERROR_OVERFLOW, .addr = BLOCK + 16 + 7, .access = 2, .access_size = 1, .frames = at,
               .nframes = 2, .slot = (struct md_slot *)1, .how = "found when it was freed" },
        .slot = { .user = BLOCK, .size = 16, .state = MD_SLOT_LIVE, .alloc_stack = md_depot_put(alloc, 2) },
    };
    unit_stub_thread_id = 0;
    char *out = report_of(&c);
    const char *const want[] = {
        "^=+$",
        "^==[0-9]+==ERROR: memdbg: heap-buffer-overflow on address 0x7e0000001ff7$",
        "^WRITE of size 1 at 0x7e0000001ff7 thread T0$",
        "^    \\(found when it was freed\\)$",
        raw_re(at, 2),
        frame_re(0, at[0], "use_buffer", use_buffer_line),
        frame_re(1, at[1], "fake_main", fake_main_line),
        "^$",
        "^0x7e0000001ff7 is located 7 bytes after 16-byte region \\[0x7e0000001fe0,0x7e0000001ff0\\)$",
        "^allocated by thread T0 here:$",
        frame_re(0, alloc[0], "fake_malloc", fake_malloc_line),
        frame_re(1, alloc[1], "make_buffer", make_buffer_line),
        "^$",
        /* no pc: frame #0 is the allocator's entry, the culprit is #1 */
        hex_re("^SUMMARY: memdbg: heap-buffer-overflow in fake_main [^ ]*tests/unit/test_report\\.c:%d$", fake_main_line),
        "^returned$",
        NULL,
    };
    check_lines(out, want);
    free(out);
}

/* Below the block, an access of unknown kind and size, a block without an
 * allocation stack. */
static void underflow_unknown(void)
{
    unit_report_setup();
    uintptr_t at[] = { RA(use_buffer) };
    struct report_case c = {
        .e = { .kind = MD_ERROR_UNDERFLOW, .addr = BLOCK - 3, .frames = at, .nframes = 1, .slot = (struct md_slot *)1 },
        .slot = { .user = BLOCK, .size = 10, .state = MD_SLOT_LIVE, .alloc_tid = 4 },
    };
    char *out = report_of(&c);
    const char *const want[] = {
        "^=+$",
        "^==[0-9]+==ERROR: memdbg: heap-buffer-underflow on address 0x7e0000001fdd$",
        "^ACCESS of unknown size at 0x7e0000001fdd thread T0$",
        raw_re(at, 1),
        frame_re(0, at[0], "use_buffer", use_buffer_line),
        "^$",
        "^0x7e0000001fdd is located 3 bytes before 10-byte region \\[0x7e0000001fe0,0x7e0000001fea\\)$",
        "^allocated by thread T4 here:$",
        "^    <empty stack>$",
        "^$",
        hex_re("^SUMMARY: memdbg: heap-buffer-underflow in use_buffer [^ ]*tests/unit/test_report\\.c:%d$", use_buffer_line),
        "^returned$",
        NULL,
    };
    check_lines(out, want);
    free(out);
}

static void double_free(void)
{
    unit_report_setup();
    uintptr_t at[] = { RA(fake_free), RA(free_buffer), RA(fake_main) };
    uintptr_t first[] = { RA(fake_free), RA(fake_main) };
    uintptr_t alloc[] = { RA(fake_malloc) };
    struct report_case c = {
        .e = { .kind = MD_ERROR_DOUBLE_FREE, .addr = BLOCK, .frames = at, .nframes = 3, .slot = (struct md_slot *)1,
               .dealloc_kind = MD_DEALLOC_FREE },
        .slot = { .user = BLOCK, .size = 24, .state = MD_SLOT_QUARANTINED, .alloc_stack = md_depot_put(alloc, 1),
                  .free_stack = md_depot_put(first, 2) },
    };
    char *out = report_of(&c);
    const char *const want[] = {
        "^=+$",
        "^==[0-9]+==ERROR: memdbg: double-free on address 0x7e0000001fe0$",
        "^free of 0x7e0000001fe0 thread T0$",
        raw_re(at, 3),
        frame_re(0, at[0], "fake_free", fake_free_line),
        frame_re(1, at[1], "free_buffer", free_buffer_line),
        frame_re(2, at[2], "fake_main", fake_main_line),
        "^$",
        "^0x7e0000001fe0 is located 0 bytes inside of 24-byte region \\[0x7e0000001fe0,0x7e0000001ff8\\)$",
        "^freed by thread T0 here:$",
        frame_re(0, first[0], "fake_free", fake_free_line),
        frame_re(1, first[1], "fake_main", fake_main_line),
        "^$",
        "^previously allocated by thread T0 here:$",
        frame_re(0, alloc[0], "fake_malloc", fake_malloc_line),
        "^$",
        hex_re("^SUMMARY: memdbg: double-free in free_buffer [^ ]*tests/unit/test_report\\.c:%d$", free_buffer_line),
        "^returned$",
        NULL,
    };
    check_lines(out, want);
    free(out);
}

/* Mismatches name both sides; the deallocation names the stack's header. */
static void mismatch(void)
{
    static const struct { int alloc, dealloc; const char *pair, *header; } kinds[] = {
        { MD_KIND_NEW_ARRAY, MD_DEALLOC_FREE, "operator new \\[\\] vs free", "free" },
        { MD_KIND_NEW, MD_DEALLOC_DELETE_ARRAY, "operator new vs operator delete \\[\\]", "operator delete \\[\\]" },
        { MD_KIND_MALLOC, MD_DEALLOC_DELETE, "malloc vs operator delete", "operator delete" },
        { MD_KIND_NEW, MD_DEALLOC_REALLOC, "operator new vs realloc", "realloc" },
    };
    unit_report_setup();
    uintptr_t at[] = { RA(fake_free), RA(free_buffer) };
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        struct report_case c = {
            .e = { .kind = MD_ERROR_MISMATCH, .addr = BLOCK, .frames = at, .nframes = 2, .slot = (struct md_slot *)1,
                   .alloc_kind = kinds[i].alloc, .dealloc_kind = kinds[i].dealloc },
            .slot = { .user = BLOCK, .size = 8, .state = MD_SLOT_LIVE, .kind = (uint8_t)kinds[i].alloc },
        };
        char *out = report_of(&c);
        const char *const want[] = {
            "^=+$",
            hex_re("^==[0-9]+==ERROR: memdbg: alloc-dealloc-mismatch on address 0x7e0000001fe0 \\(%s\\)$", kinds[i].pair),
            hex_re("^%s of 0x7e0000001fe0 thread T0$", kinds[i].header),
            raw_re(at, 2),
            frame_re(0, at[0], "fake_free", fake_free_line),
            frame_re(1, at[1], "free_buffer", free_buffer_line),
            "^$",
            "^0x7e0000001fe0 is located 0 bytes inside of 8-byte region \\[0x7e0000001fe0,0x7e0000001fe8\\)$",
            "^allocated by thread T0 here:$",
            "^    <empty stack>$",
            "^$",
            "^SUMMARY: memdbg: alloc-dealloc-mismatch in free_buffer ",
            "^returned$",
            NULL,
        };
        check_lines(out, want);
        free(out);
    }
}

/* No block: outside the heap, or in it between blocks. */
static void bad_free_and_wild(void)
{
    unit_report_setup();
    uintptr_t at[] = { RA(fake_free), RA(fake_main) };
    struct report_case c = {
        .e = { .kind = MD_ERROR_BAD_FREE, .addr = 0x7ffd00000010, .frames = at, .nframes = 2 },
    };
    char *out = report_of(&c);
    const char *const want[] = {
        "^=+$",
        "^==[0-9]+==ERROR: memdbg: bad-free on address 0x7ffd00000010$",
        "^free of 0x7ffd00000010 thread T0$",
        raw_re(at, 2),
        frame_re(0, at[0], "fake_free", fake_free_line),
        frame_re(1, at[1], "fake_main", fake_main_line),
        "^$",
        "^0x7ffd00000010 was not allocated by malloc \\(not in the memdbg heap\\)$",
        "^$",
        "^SUMMARY: memdbg: bad-free in fake_main ",
        "^returned$",
        NULL,
    };
    check_lines(out, want);
    free(out);

    md_heap.base = 0x7e0000000000;   /* copied into the child by fork */
    md_heap.size = 1 << 20;
    c.e.addr = BLOCK + 0x100;
    out = report_of(&c);
    UNIT_EQ_S(unit_line(out, 7), "0x7e00000020e0 is in the memdbg heap but not in any block", "bad-free in the heap");
    free(out);

    c.e.kind = MD_ERROR_UNKNOWN_CRASH;
    c.e.nframes = 0;
    out = report_of(&c);
    const char *const wild[] = {
        "^=+$",
        "^==[0-9]+==ERROR: memdbg: wild-access on address 0x7e00000020e0$",
        "^ACCESS of unknown size at 0x7e00000020e0 thread T0$",
        "^    <empty stack>$",
        "^$",
        "^0x7e00000020e0 is in the memdbg heap but not in any block$",
        "^$",
        "^SUMMARY: memdbg: wild-access$",
        "^returned$",
        NULL,
    };
    check_lines(out, wild);
    free(out);
}

/* md_error_finish: ABORTING, then exitcode, a return (halt_on_error=0 and
 * an error that is not fatal), or SIGABRT (abort_on_error=1). */
static void finish_child(void *options)
{
    setenv("MEMDBG_OPTIONS", options, 1);
    md_options_init();
    md_report_init();
    md_error_finish(false);
    printf("continued\n");
    fflush(stdout);
    md_error_finish(true);
    printf("survived\n");
}

static void finish(void)
{
    char *out;
    int status = unit_capture(finish_child, "exitcode=23", &out);
    UNIT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 23, "exitcode=23: status %#x", status);
    UNIT_CHECK(unit_match(unit_line(out, 0), "^==[0-9]+==ABORTING$") && unit_line_count(out) == 1,
               "exitcode=23: printed '%s'", out);
    free(out);
    status = unit_capture(finish_child, "halt_on_error=0:exitcode=7", &out);
    UNIT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 7, "halt_on_error=0: status %#x", status);
    UNIT_CHECK(unit_streq(unit_line(out, 0), "continued") && unit_match(unit_line(out, 1), "^==[0-9]+==ABORTING$"),
               "halt_on_error=0: printed '%s'", out);
    free(out);
    status = unit_capture(finish_child, "abort_on_error=1", &out);
    UNIT_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "abort_on_error=1: status %#x", status);
    free(out);
}

/* log_path=P: the report goes to P.PID, opened at the first report. */
static void log_child(void *path)
{
    unit_report_setup();
    snprintf(md_opt.log_path, sizeof md_opt.log_path, "%s", (const char *)path);
    struct md_error_info e = { .kind = MD_ERROR_BAD_FREE, .addr = 0x10 };
    md_report_error(&e);
    printf("pid %d\n", (int)getpid());
}

static void log_path(void)
{
    char base[64], *out;
    snprintf(base, sizeof base, "/tmp/memdbg-unit-log.%d", (int)getpid());
    unit_capture(log_child, base, &out);
    int pid = 0;
    UNIT_CHECK(sscanf(out, "pid %d", &pid) == 1 && unit_line_count(out) == 1, "printed '%s' (a report on stderr?)",
               out);
    char path[96];
    snprintf(path, sizeof path, "%s.%d", base, pid);
    int fd = open(path, O_RDONLY);
    UNIT_CHECK(fd >= 0, "no file %s", path);
    if (fd >= 0) {
        char text[4096] = "";
        ssize_t n = read(fd, text, sizeof text - 1);
        text[n > 0 ? n : 0] = 0;
        close(fd);
        unlink(path);
        UNIT_CHECK(unit_match(unit_line(text, 1), "^==[0-9]+==ERROR: memdbg: bad-free on address 0x10$"),
                   "log file line 2: '%s'", unit_line(text, 1));
    }
    free(out);
}

/* JSON strings: every input byte sequence gives valid JSON whose value is
 * the text, control characters escaped and bytes that are not UTF-8
 * replaced by U+FFFD. */
static void json_escaping(void)
{
    static const struct { const char *in; size_t len; const char *want; } rows[] = {
        { "plain /usr/lib/x.so", 19, "\"plain /usr/lib/x.so\"" },
        { "q\"b\\s", 5, "\"q\\\"b\\\\s\"" },
        { "\n\r\t\b\f", 5, "\"\\n\\r\\t\\b\\f\"" },
        { "\x01\x1f\x7f", 3, "\"\\u0001\\u001f\\u007f\"" },
        { "nul\0in", 6, "\"nul\\u0000in\"" },
        { "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14, "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"" },
        { "\xff", 1, "\"\\ufffd\"" },
        { "a\xc3", 2, "\"a\\ufffd\"" },                          /* truncated sequence */
        { "\xc0\xaf", 2, "\"\\ufffd\\ufffd\"" },                  /* overlong '/' */
        { "\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\"" },        /* a surrogate */
        { "\xf4\x90\x80\x80", 4, "\"\\ufffd\\ufffd\\ufffd\\ufffd\"" }, /* above U+10FFFF */
        { "\xe2\x82x", 3, "\"\\ufffd\\ufffdx\"" },
        { "", 0, "\"\"" },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char mem[128];
        struct md_buf b;
        md_buf_init(&b, mem, sizeof mem - 1, -1);
        md_json_put_string(&b, rows[i].in, rows[i].len);
        mem[b.len] = 0;
        UNIT_EQ_S(mem, rows[i].want, "escaped");
    }
}

/* log_format=json: the use-after-free of use_after_free() as one line
 * holding the common fields, the block and the three stacks. */
static void json_child(void *arg)
{
    struct report_case *c = arg;
    unit_report_setup();
    md_opt.log_format = MD_LOG_FORMAT_JSON;
    c->e.slot = &c->slot;
    md_report_error(&c->e);
}

static void json_report(void)
{
    unit_report_setup();
    uintptr_t at[] = { (uintptr_t)use_buffer + 4, RA(fake_main) };
    uintptr_t freed[] = { RA(fake_free), RA(free_buffer), RA(fake_main) };
    uintptr_t alloc[] = { RA(fake_malloc), RA(make_buffer), RA(fake_main) };
    struct report_case c = {
        .e = { .kind = MD_ERROR_UAF, .addr = BLOCK + 5, .access = 2, .access_size = 8, .frames = at, .nframes = 2,
               .pc = at[0] },
        .slot = { .user = BLOCK, .size = 32, .state = MD_SLOT_QUARANTINED, .alloc_tid = 1, .free_tid = 2,
                  .alloc_stack = md_depot_put(alloc, 3), .free_stack = md_depot_put(freed, 3) },
    };
    unit_stub_thread_id = 3;
    char *out;
    int status = unit_capture(json_child, &c, &out);
    UNIT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
    UNIT_EQ_U(unit_line_count(out), 1, "lines");
    const char *want[] = {
        "^\\{\"schema_version\":1,\"kind\":\"heap-use-after-free\",\"memdbg_version\":\"[^\"]+\",\"pid\":[0-9]+,"
            "\"options\":\"backend=auto:[^\"]*:log_format=json:",
        ",\"address\":\"0x7e0000001fe5\",\"size\":8,\"direction\":\"write\",\"thread\":3,",
        ",\"block\":\\{\"start\":\"0x7e0000001fe0\",\"size\":32,\"state\":\"freed\",\"relation\":\"inside\","
            "\"distance\":5,\"allocation_thread\":1,\"free_thread\":2\\},",
        "\"stacks\":\\{\"access\":\\[\\{\"pc\":\"0x[0-9a-f]+\",\"module\":\"[^\"]*/unit\",\"offset\":\"0x[0-9a-f]+\","
            "\"function\":\"use_buffer\",\"file\":\"[^\"]*tests/unit/test_report.c\",\"line\":[0-9]+\\},",
        "\\],\"free\":\\[\\{[^]]*\"function\":\"fake_free\"[^]]*\"function\":\"free_buffer\"",
        "\\],\"allocation\":\\[\\{[^]]*\"function\":\"fake_malloc\"[^]]*\"function\":\"make_buffer\"[^]]*\\]\\}\\}",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        UNIT_CHECK(unit_match(out, want[i]), "JSON lacks /%s/: %s", want[i], out);
    size_t len = strlen(out);
    UNIT_CHECK(len > 3 && !strcmp(out + len - 3, "}}\n"), "the object does not end the line");
    free(out);
}

const struct unit_case unit_report_cases[] = {
    { "report: JSON strings escaped, ill-formed UTF-8 replaced", json_escaping },
    { "report: log_format=json, one line with the block and three stacks", json_report },
    { "report: heap-use-after-free, line by line", use_after_free },
    { "report: heap-buffer-overflow of a live block, found at free", overflow_live },
    { "report: heap-buffer-underflow, unknown access, no allocation stack", underflow_unknown },
    { "report: double-free names the first free and the allocation", double_free },
    { "report: alloc-dealloc-mismatch names both functions", mismatch },
    { "report: bad-free outside and inside the heap, wild access", bad_free_and_wild },
    { "report: ABORTING, exitcode, halt_on_error=0, abort_on_error=1", finish },
    { "report: log_path=P writes P.PID", log_path },
    { 0, 0 },
};
