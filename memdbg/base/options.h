/* SPDX-License-Identifier: MIT */
/* The MEMDBG_OPTIONS settings (options.c). */
#ifndef MEMDBG_BASE_OPTIONS_H
#define MEMDBG_BASE_OPTIONS_H

#include "base/base.h"

/* ---- options (options.c, options_table.c; the table is options.inc) ---- */
enum md_backend_id {
#define MD_BACKEND(id, name) MD_BACKEND_##id,
#include "base/options.inc"
};

enum md_log_format_id {
#define MD_LOG_FORMAT(id, name) MD_LOG_FORMAT_##id,
#include "base/options.inc"
};

/* One id per row of options.inc, aliases included: the index of the row in
 * md_option_table and the bit of struct md_options.given. */
enum md_option_id {
#define MD_OPTION(type, name, dflt, lo, hi, doc, details) MD_OPTION_ID_##name,
#define MD_OPTION_ALIAS(type, name, target, lo, hi, doc, details) MD_OPTION_ID_##name,
#include "base/options.inc"
    MD_OPTION_ID_COUNT
};

/* The C type of each option type's field (a PATH holds HI bytes and a NUL). */
#define MD_OPTION_FIELD_BOOL(name, hi) int name;
#define MD_OPTION_FIELD_INT(name, hi) int name;
#define MD_OPTION_FIELD_SIZE(name, hi) size_t name;
#define MD_OPTION_FIELD_ALIGN(name, hi) size_t name;
#define MD_OPTION_FIELD_ENUM(name, hi) int name;
#define MD_OPTION_FIELD_PATH(name, hi) char name[(hi) + 1];

struct md_options {
#define MD_OPTION(type, name, dflt, lo, hi, doc, details) MD_OPTION_FIELD_##type(name, hi)
#include "base/options.inc"
    uint64_t given;   /* bit MD_OPTION_ID_x: the user set option x (directly, by an alias or EF_*) */
};
extern struct md_options md_opt MEMDBG_HIDDEN;
void md_options_init(void) MEMDBG_HIDDEN;
static inline bool md_option_given(enum md_option_id id) { return md_opt.given >> id & 1; }

#endif
