/* SPDX-License-Identifier: MIT */
/* A table corrupted by a stray write, and how memdbg_freeze names the
 * writer (docs/user-guide.md, "Frozen blocks").
 *
 * The program builds a table of prices once, then only reads it.  A
 * helper that keeps a running discount writes through a pointer it
 * computed from the wrong base, into the table: without memdbg the
 * program just prints a wrong total.  Freezing the table after it is
 * built makes that write stop the program under memdbg, with the stack
 * of the write, of the freeze and of the allocation.  Without memdbg the
 * freeze is a no-op (ENOSYS) and the program runs as before. */
#include <memdbg.h>
#include <stdio.h>
#include <stdlib.h>

struct item { const char *name; int cents; };

static struct item *build_prices(int n)
{
    struct item *t = malloc((size_t)n * sizeof *t);
    static const char *names[] = { "tea", "bread", "milk", "eggs" };
    for (int i = 0; i < n; i++) {
        t[i].name = names[i % 4];
        t[i].cents = 100 + 25 * i;
    }
    return t;
}

/* The bug: the discount slot is meant to be the caller's `extra`, but the
 * index is taken relative to the table. */
static void apply_discount(struct item *prices, int *extra, int which)
{
    int *slot = which < 0 ? extra : &prices[which].cents;
    *slot -= 10;
}

int main(void)
{
    int n = 4, extra = 0;
    struct item *prices = build_prices(n);
    memdbg_freeze(prices);   /* built: from here on it is only read */
    apply_discount(prices, &extra, 2);
    long total = extra;
    for (int i = 0; i < n; i++) total += prices[i].cents;
    printf("total: %ld cents (expected 550)\n", total);
    free(prices);
    return 0;
}
