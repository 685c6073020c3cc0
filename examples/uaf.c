/* SPDX-License-Identifier: MIT */
/* uaf: a use-after-free as it happens in real code, for `make demo` and the
 * README.  A table of names grows with realloc(); the caller kept a pointer
 * to an entry from before the table moved, and reads through it.  glibc
 * usually lets this pass silently (the old memory still holds the name);
 * under memdbg the old table's pages are guards, so the read faults and the
 * report names the line, the realloc that freed the table and the malloc
 * that made it.
 *
 *   build/memdbg run -- build/examples/uaf      (exit status 1, a report) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct table { char (*names)[16]; int n, cap; };

static void add(struct table *t, const char *name)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 2;
		t->names = realloc(t->names, t->cap * sizeof(*t->names));   /* frees the old table */
	}
	snprintf(t->names[t->n++], sizeof(*t->names), "%s", name);
}

int main(void)
{
	struct table t = { 0 };

	add(&t, "alice");
	add(&t, "bob");
	const char *first = t.names[0];     /* points into the table... */
	add(&t, "carol");                   /* ...which this call moves */
	printf("first: %c...\n", first[0]); /* use after free */
	printf("%d names\n", t.n);
	free(t.names);
	return 0;
}
