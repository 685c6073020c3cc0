/* SPDX-License-Identifier: MIT */
/* memdbg-symbolize: symbolizes a memdbg (or AddressSanitizer) report
 * written with symbolize=0.  Reads the report on stdin and writes it on
 * stdout with every frame that ends in "(MODULE+0xOFFSET)" replaced by
 * what a live report prints for it (function, file:line, inline frames,
 * C++ names demangled: the same code, symcore.c), frames renumbered
 * within each stack as inline frames are added; a SUMMARY line that ends
 * in a module location gets the function and line too.  All other lines
 * are copied unchanged.  The module files are read from the paths in the
 * report, so run it where they are. */
#include "symcore.h"
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: memdbg-symbolize [--help] < report > symbolized-report\n"
    "Replaces each '(MODULE+0xOFFSET)' stack frame of a memdbg report written\n"
    "with MEMDBG_OPTIONS=symbolize=0 by function, file:line and inline frames,\n"
    "as a live report shows them.  Other lines are copied unchanged.\n"
    "Exit status: 0 done, 1 read or write error, 2 bad usage.\n";

static void file_write(void *ctx, const char *s, size_t n)
{
    fwrite(s, 1, n, ctx);
}

/* one libdwfl session per module file, opened at its first frame */
static struct cached { char *path; Dwfl *dwfl; } *cache;
static size_t ncache;

static Dwfl *dwfl_for(const char *mod, size_t len)
{
    for (size_t i = 0; i < ncache; i++)
        if (strlen(cache[i].path) == len && memcmp(cache[i].path, mod, len) == 0) return cache[i].dwfl;
    struct cached *c = realloc(cache, (ncache + 1) * sizeof *cache);
    if (!c) return 0;
    cache = c;
    c[ncache].path = strndup(mod, len);
    c[ncache].dwfl = c[ncache].path ? md_sym_open(c[ncache].path) : 0;
    return c[ncache++].dwfl;
}

/* "    #N 0xADDR rest": returns rest, or NULL for other lines */
static char *frame_line(char *s, unsigned long *no, unsigned long long *pc)
{
    char *p = s;
    while (*p == ' ' || *p == '\t') p++;
    if (*p++ != '#') return 0;
    char *end;
    *no = strtoul(p, &end, 10);
    if (end == p || end[0] != ' ' || end[1] != '0' || end[2] != 'x') return 0;
    p = end + 1;
    *pc = strtoull(p, &end, 16);
    if (*end != ' ' && *end != 0) return 0;
    return end;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage, stdout);
            return 0;
        }
        fprintf(stderr, "memdbg-symbolize: unknown argument '%s'\n%s", argv[i], usage);
        return 2;
    }
    const struct md_sym_out out = { file_write, stdout };
    char *line = 0;
    size_t cap = 0;
    ssize_t len;
    int no = 0;   /* output frame number in the current stack */
    while ((len = getline(&line, &cap, stdin)) > 0) {
        bool nl = line[len - 1] == '\n';
        if (nl) line[--len] = 0;
        unsigned long in_no;
        unsigned long long pc;
        const char *mod;
        size_t modlen;
        uint64_t off;
        char *rest = frame_line(line, &in_no, &pc);
        if (rest) {
            if (in_no == 0) no = 0;   /* a new stack */
            if (md_sym_parse_module_location(line, (size_t)len, &mod, &modlen, &off)) {
                char *path = strndup(mod, modlen);
                no += md_sym_frame_lines(&out, dwfl_for(mod, modlen), path, off, pc, no);
                free(path);
                continue;
            }
            /* a frame already symbolized: keep it, renumbered */
            char *hash = strchr(line, '#');
            fwrite(line, 1, (size_t)(hash - line), stdout);
            printf("#%d 0x%llx%s%s", no++, pc, rest, nl ? "\n" : "");
            continue;
        }
        const char *at;
        if (!strncmp(line, "SUMMARY: ", 9) &&
            (at = md_sym_parse_module_location(line, (size_t)len, &mod, &modlen, &off)) &&
            at > line && at[-1] == ' ' && !strstr(line, " in ")) {
            char *path = strndup(mod, modlen);
            fwrite(line, 1, (size_t)(at - line), stdout);
            md_sym_location(&out, dwfl_for(mod, modlen), path, off);
            free(path);
            if (nl) putchar('\n');
            continue;
        }
        fwrite(line, 1, (size_t)len, stdout);
        if (nl) putchar('\n');
    }
    free(line);
    if (ferror(stdin) || fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "memdbg-symbolize: read or write error\n");
        return 1;
    }
    return 0;
}
