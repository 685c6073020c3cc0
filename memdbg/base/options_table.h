/* SPDX-License-Identifier: MIT */
/* The options table (options.inc) as data: each option's name, type,
 * default, accepted range and descriptions, with the parser of one value
 * and the text that says what a type accepts.  Pure functions without I/O
 * or malloc, so that the library (options.c), the docs generator
 * (tools/options_doc.c) and tests share them. */
#ifndef MEMDBG_OPTIONS_TABLE_H
#define MEMDBG_OPTIONS_TABLE_H

#include "base/options.h"

/* hi of a SIZE option without an upper bound */
#define MD_NO_LIMIT (-1LL)

enum md_option_type {
    MD_OPTION_TYPE_BOOL, MD_OPTION_TYPE_INT, MD_OPTION_TYPE_SIZE, MD_OPTION_TYPE_ALIGN, MD_OPTION_TYPE_ENUM, MD_OPTION_TYPE_PATH, MD_OPTION_TYPE_MIB,
};

struct md_option_desc {
    const char *name;
    enum md_option_type type;
    enum md_option_id target;     /* whose field it sets: itself, or an alias's option */
    size_t offset;                /* of that field in struct md_options */
    const char *dflt;             /* as a user writes it; NULL for an alias */
    long long lo, hi;             /* accepted range (PATH: length; MIB: in MiB) */
    const char *doc;              /* one line (help=1) */
    const char *details;          /* more for the generated docs, may be "" */
};

struct md_env_option {
    const char *variable;
    enum md_option_id option;
    const char *value_when_false; /* NULL: the variable's value goes to the option */
    const char *doc;
};

extern const struct md_option_desc md_option_table[MD_OPTION_ID_COUNT] MEMDBG_HIDDEN;
extern const struct md_env_option md_env_option_table[] MEMDBG_HIDDEN;
extern const size_t md_env_option_count MEMDBG_HIDDEN;
extern const char *const md_backend_names[] MEMDBG_HIDDEN;   /* by enum md_backend_id, NULL-ended */
extern const char *const md_log_format_names[] MEMDBG_HIDDEN;   /* by enum md_log_format_id, NULL-ended */
/* The values of an ENUM option, NULL-ended, in its enum's order. */
const char *const *md_option_enum_names(const struct md_option_desc *d) MEMDBG_HIDDEN;

/* The row named NAME (LEN bytes, not NUL-terminated), or NULL. */
const struct md_option_desc *md_option_find(const char *name, size_t len) MEMDBG_HIDDEN;

/* Parses VALUE (LEN bytes) as D's type into its field of OPTS.  Returns
 * true, or false with the accepted values ("expected ...") in WHY. */
bool md_option_parse(const struct md_option_desc *d, const char *value, size_t len,
                     struct md_options *opts, char *why, size_t why_cap) MEMDBG_HIDDEN;

/* Booleans as ASan takes them: 0/1, false/true, no/yes. */
#define MD_OPTION_BOOL_VALUES "0 or 1 (or false/true, no/yes)"
bool md_option_parse_bool(const char *value, size_t len, int *out) MEMDBG_HIDDEN;

/* Sets every option of OPTS to its default (as parsed from the table).
 * Returns NULL, or the row whose default its own parser refuses. */
const struct md_option_desc *md_option_set_defaults(struct md_options *opts) MEMDBG_HIDDEN;

/* "bool", "int", "size", "enum", "path" (an alias: its value's type). */
const char *md_option_type_name(const struct md_option_desc *d) MEMDBG_HIDDEN;

/* What D accepts, e.g. "-1 to 255", "16M to 16T", "auto, nonlinear, guard,
 * mprotect" ("" for any size), into BUF (NUL-terminated, truncated at CAP); returns BUF. */
char *md_option_accepts(const struct md_option_desc *d, char *buf, size_t cap) MEMDBG_HIDDEN;

/* D's default as text ("none" for an empty path); an alias's in its unit. */
char *md_option_default_text(const struct md_option_desc *d, char *buf, size_t cap) MEMDBG_HIDDEN;

/* The value OPTS holds for D, as MEMDBG_OPTIONS takes it back ("64G",
 * "guard", "1"), into BUF (NUL-terminated, truncated at CAP); returns BUF. */
char *md_option_value_text(const struct md_option_desc *d, const struct md_options *opts, char *buf, size_t cap) MEMDBG_HIDDEN;

#endif
