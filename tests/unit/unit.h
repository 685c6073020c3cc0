// SPDX-License-Identifier: MIT
/* The unit tests' harness (main.c): each test is a function run in a child
 * process of its own, so the library's static state (the options, the
 * depot, the pool, the loaded suppressions) starts fresh for every test and
 * a crash is one failing test, not the end of the run. */
#ifndef MEMDBG_UNIT_H
#define MEMDBG_UNIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct unit_case {
    const char *name;
    void (*run)(void);
};

/* Each test file exports its cases, ended by { 0, 0 }. */
extern const struct unit_case unit_options_cases[];
extern const struct unit_case unit_suppressions_cases[];
extern const struct unit_case unit_depot_cases[];
extern const struct unit_case unit_modules_cases[];
extern const struct unit_case unit_pool_cases[];
extern const struct unit_case unit_decode_cases[];
extern const struct unit_case unit_report_cases[];
extern const struct unit_case unit_sample_gap_cases[];

/* A failed check prints "#   file:line: what" and marks the test failed;
 * the test goes on, so one run shows every wrong row of a table. */
void unit_fail_at(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define UNIT_FAIL(...) unit_fail_at(__FILE__, __LINE__, __VA_ARGS__)
#define UNIT_CHECK(cond, ...) \
    do { if (!(cond)) UNIT_FAIL(__VA_ARGS__); } while (0)
#define UNIT_EQ_U(got, want, what) \
    do { unsigned long long g_ = (got), w_ = (want); \
         if (g_ != w_) UNIT_FAIL("%s: %llu, expected %llu", what, g_, w_); } while (0)
#define UNIT_EQ_S(got, want, what) \
    do { const char *g_ = (got), *w_ = (want); \
         if (!unit_streq(g_, w_)) UNIT_FAIL("%s: '%s', expected '%s'", what, g_ ? g_ : "(null)", w_); } while (0)
bool unit_streq(const char *a, const char *b);
bool unit_failed(void);

/* Runs fn(arg) in a child with its stdout and stderr captured: *out gets
 * what it wrote (NUL-terminated, the caller frees it), the return value is
 * the wait status.  For code that ends the process (_exit on a bad option
 * value) or writes a report to fd 2. */
int unit_capture(void (*fn)(void *), void *arg, char **out);

/* Lines of text: unit_line(text, n) is line n (from 0) without its
 * newline, in a static buffer; NULL past the end. */
const char *unit_line(const char *text, int n);
int unit_line_count(const char *text);
/* POSIX extended regex match of s (for report lines). */
bool unit_match(const char *s, const char *regex);

/* Test controls of the stubs (stubs.c): what the parts of memdbg this
 * binary does not link would answer. */
extern const char *unit_stub_module;      /* md_module_of() for every pc */
extern uint32_t unit_stub_thread_id;      /* md_thread_id() */

#endif
