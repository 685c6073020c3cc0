/* SPDX-License-Identifier: MIT */
/* Writes the user documentation of libmemdbg's options from the table the
 * library itself parses (options.inc), so the two cannot disagree:
 *
 *   memdbg-options-doc markdown          docs/options.md, on stdout
 *   memdbg-options-doc man PAGE          PAGE (libmemdbg.7) on stdout, its
 *                                        text between the BEGIN/END GENERATED
 *                                        OPTIONS comments replaced
 *
 * `make docs` runs both; tests/cli/run.sh fails when the checked-in files
 * differ from what this prints.  It fails, as the library would at start,
 * when a default in the table is outside its own option's range. */
#include "base/options_table.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>

#define MAN_BEGIN ".\\\" BEGIN GENERATED OPTIONS"
#define MAN_END ".\\\" END GENERATED OPTIONS"

static const char regenerate[] = "made from memdbg/base/options.inc by build/memdbg-options-doc; run `make docs` after editing the table";

/* ---- Markdown ---- */

/* Table cells: a '|' would end the cell. */
static void md_cell(const char *s)
{
    for (; *s; s++) {
        if (*s == '|') putchar('\\');
        putchar(*s);
    }
}

static void md_accepts(const struct md_option_desc *d)
{
    char text[160];
    if (d->type == MD_OPTION_TYPE_ENUM) {
        const char *const *names = md_option_enum_names(d);
        for (int i = 0; names[i]; i++) printf("%s`%s`", i ? ", " : "", names[i]);
        return;
    }
    md_option_accepts(d, text, sizeof text);
    if (d->type == MD_OPTION_TYPE_BOOL) printf("`0`/`1`");
    else if (d->type == MD_OPTION_TYPE_PATH) printf("%s bytes", text);
    else md_cell(text[0] ? text : "any");
}

static void markdown(void)
{
    char text[160];
    printf("<!-- SPDX-License-Identifier: MIT -->\n"
           "<!-- Generated file, %s. -->\n\n", regenerate);
    printf("# libmemdbg options\n\n"
           "`MEMDBG_OPTIONS=key=value:key=value` sets them (the ASan convention; `,` and white\n"
           "space also separate, so values cannot contain them). As with ASan, an unknown\n"
           "key is reported with a warning\n"
           "(`==PID==WARNING: memdbg: unknown option 'KEY' in MEMDBG_OPTIONS ignored`)\n"
           "and the program goes on, so option strings shared between versions or tools\n"
           "keep working; a bad value of a known key (or a `key` without `=value`) stops\n"
           "the program at start with a message that names the option, the value and what\n"
           "the option accepts. `MEMDBG_OPTIONS=help=1` prints the options, one line each\n"
           "with its type, range, default and description, to standard error, and the\n"
           "program runs on.\n\n"
           "Types: a **bool** takes `0`/`1`, `false`/`true` or `no`/`yes`; an **int** a\n"
           "decimal or `0x` hexadecimal number; a **size** a number of bytes, decimal or\n"
           "hexadecimal, with an optional binary suffix `K`, `M`, `G` or `T` (`64G`); a\n"
           "**path** a file name; an **enum** one of the names listed.\n\n");
    printf("| option | type | accepts | default | meaning |\n"
           "| --- | --- | --- | --- | --- |\n");
    for (size_t i = 0; i < MD_OPTION_ID_COUNT; i++) {
        const struct md_option_desc *d = &md_option_table[i];
        printf("| `%s` | %s | ", d->name, md_option_type_name(d));
        md_accepts(d);
        md_option_default_text(d, text, sizeof text);
        printf(strcmp(text, "none") ? " | `%s` | " : " | %s | ", text);
        md_cell(d->doc);
        if (d->details[0]) {
            printf(". ");
            md_cell(d->details);
        }
        printf(" |\n");
    }
    printf("\n## Electric Fence variables\n\n"
           "They are read before `MEMDBG_OPTIONS`, which wins over them.\n\n"
           "| variable | effect |\n| --- | --- |\n");
    for (size_t i = 0; i < md_env_option_count; i++) {
        printf("| `%s` | ", md_env_option_table[i].variable);
        md_cell(md_env_option_table[i].doc);
        printf(" |\n");
    }
}

/* ---- troff ---- */

/* Text with `code` spans in bold; backslashes escaped, and a hyphen in
 * code is a minus (what the reader types). */
static void troff_text(const char *s)
{
    const char *start = s;
    bool code = false;
    for (; *s; s++) {
        if (*s == '`') {
            fputs(code ? "\\fR" : "\\fB", stdout);
            code = !code;
        } else if (*s == '\\') {
            fputs("\\e", stdout);
        } else if (!code && *s == ' ' && s > start && s[-1] == '.' && isupper((unsigned char)s[1])) {
            putchar('\n');   /* a sentence starts a line (troff spaces sentences so) */
        } else if (*s == '-' && (code || (s[1] >= '0' && s[1] <= '9'))) {
            fputs("\\-", stdout);
        } else {
            putchar(*s);
        }
    }
}

/* The tag line: the name, then its type, range and default in roman. */
static void troff_tag(const struct md_option_desc *d)
{
    char accepts[160], dflt[160];
    md_option_accepts(d, accepts, sizeof accepts);
    md_option_default_text(d, dflt, sizeof dflt);
    printf(".BR %s \" (%s", d->name, md_option_type_name(d));
    if (d->type != MD_OPTION_TYPE_BOOL && accepts[0]) {
        printf(": ");
        troff_text(accepts);
        if (d->type == MD_OPTION_TYPE_PATH) printf(" bytes");
    }
    printf("; default ");
    troff_text(dflt);
    printf(")\"\n");
}

static void man_section(void)
{
    printf("%s: %s.\n", MAN_BEGIN, regenerate);
    printf(".SH OPTIONS\n"
           ".B MEMDBG_OPTIONS\n"
           "holds\n"
           ".IR key = value\n"
           "pairs separated by colons, commas or white space.\n"
           "An unknown key is reported with a warning and ignored, as ASan does; a bad\n"
           "value of a known key, or a key without a value, stops the program at start\n"
           "with a message that names the option, the value and what it accepts.\n"
           ".B help=1\n"
           "prints the options below to standard error, one line each, and the program\n"
           "runs on.\n"
           ".PP\n"
           "A \\fIbool\\fR takes 0 or 1 (or false/true, no/yes); an \\fIint\\fR a decimal or\n"
           "0x hexadecimal number; a \\fIsize\\fR a number of bytes with an optional K, M, G\n"
           "or T suffix (powers of 1024); a \\fIpath\\fR a file name.\n");
    for (size_t i = 0; i < MD_OPTION_ID_COUNT; i++) {
        const struct md_option_desc *d = &md_option_table[i];
        printf(".TP\n");
        troff_tag(d);
        putchar(toupper((unsigned char)d->doc[0]));
        troff_text(d->doc + 1);
        printf(".\n");
        if (d->details[0]) {
            troff_text(d->details);
            putchar('\n');
        }
    }
    printf(".SS Electric Fence variables\n"
           "They are read before\n"
           ".BR MEMDBG_OPTIONS ,\n"
           "which wins over them.\n");
    for (size_t i = 0; i < md_env_option_count; i++) {
        printf(".TP\n.B %s\n", md_env_option_table[i].variable);
        putchar(toupper((unsigned char)md_env_option_table[i].doc[0]));
        troff_text(md_env_option_table[i].doc + 1);
        printf(".\n");
    }
    printf("%s\n", MAN_END);
}

/* Copies PAGE with the generated section replaced; fails without both
 * markers, so a page that lost them is not silently left stale. */
static int man(const char *page)
{
    FILE *f = fopen(page, "r");
    if (!f) { perror(page); return 1; }
    char line[4096];
    int state = 0;   /* 0 before the section, 1 inside, 2 after */
    while (fgets(line, sizeof line, f)) {
        if (state == 0 && !strncmp(line, MAN_BEGIN, strlen(MAN_BEGIN))) {
            man_section();
            state = 1;
        } else if (state == 1) {
            if (!strncmp(line, MAN_END, strlen(MAN_END))) state = 2;
        } else {
            fputs(line, stdout);
        }
    }
    fclose(f);
    if (state != 2) {
        fprintf(stderr, "memdbg-options-doc: %s lacks the lines '%s' and '%s'\n", page, MAN_BEGIN, MAN_END);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct md_options defaults;
    const struct md_option_desc *bad = md_option_set_defaults(&defaults);
    if (bad) {   /* the library would refuse to start: say so at build time */
        fprintf(stderr, "memdbg-options-doc: the default '%s' of option '%s' is refused by its own parser\n",
                bad->dflt, bad->name);
        return 1;
    }
    if (argc == 2 && !strcmp(argv[1], "markdown")) {
        markdown();
        return ferror(stdout) ? 1 : 0;
    }
    if (argc == 3 && !strcmp(argv[1], "man")) {
        int rc = man(argv[2]);
        return rc || ferror(stdout) ? 1 : 0;
    }
    fprintf(stderr, "usage: %s markdown | man PAGE\n", argv[0]);
    return 2;
}
