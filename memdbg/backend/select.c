/* SPDX-License-Identifier: MIT */
/* Backend detection.  All three probes run every time, whichever backend is
 * asked for, so the startup line can say why each one is or isn't usable. */
#include "backend/backend.h"
#include "nonlinear_abi.h"
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

static void append(char *dst, size_t cap, const char *a, const char *b)
{
    size_t n = md_strlen(dst);
    for (const char *s = a; s && *s && n + 1 < cap; s++) dst[n++] = *s;
    for (const char *s = b; s && *s && n + 1 < cap; s++) dst[n++] = *s;
    dst[n] = 0;
}

void md_backend_select(void)
{
    static const struct md_backend *const order[] = {
        &md_backend_nonlinear, &md_backend_guard, &md_backend_mprotect,
    };
    static const int ids[] = { MD_BACKEND_NONLINEAR, MD_BACKEND_GUARD, MD_BACKEND_MPROTECT };
    char why[3][160];
    int ok[3];
    for (int i = 0; i < 3; i++) {
        why[i][0] = 0;
        ok[i] = order[i]->probe(why[i], sizeof why[i]) == 0;
    }
    const struct md_backend *chosen = 0;
    const char *how = "";
    for (int i = 0; i < 3; i++) {
        if (md_opt.backend == ids[i]) {
            if (!ok[i]) {
                static const char m[] = "memdbg: backend=";
                md_write_all(2, m, sizeof m - 1);
                md_die_msg(order[i]->name, " is not usable here: ", why[i]);
            }
            chosen = order[i];
            how = "selected by backend=";
        }
    }
    if (!chosen) {
        for (int i = 0; i < 3 && !chosen; i++)
            if (ok[i]) { chosen = order[i]; how = "first usable of nonlinear, guard, mprotect"; }
    }
    md_heap.backend = chosen;
    /* Blocks share pages only through aliases in one nonlinear mapping:
     * say so rather than run a page per block as if asked for it. */
    if (md_opt.compact && chosen != &md_backend_nonlinear) {
        md_warn3("compact=1 needs the nonlinear backend (a kernel with memdbg's remap_file_pages series); ignored with backend ",
                 chosen->name, md_strlen(chosen->name), "\n");
        md_opt.compact = 0;
    }
    char *r = md_heap.backend_reason;
    r[0] = 0;
    append(r, sizeof md_heap.backend_reason, how, " (");
    for (int i = 0; i < 3; i++) {
        append(r, sizeof md_heap.backend_reason, order[i]->name, ok[i] ? ": yes, " : ": no, ");
        append(r, sizeof md_heap.backend_reason, why[i], i < 2 ? "; " : ")");
    }
}
