/* Leaks: 3 x 100 bytes from leak_small, 1000 bytes from leak_big, and a
 * list whose head is lost (direct) with one node behind it (indirect).
 * global_keep stays reachable and must not be reported. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *global_keep;
struct node { struct node *next; char pad[40]; };

void leak_small(void) { char *p = malloc(100); memset(p, 1, 100); p = 0; }
void leak_big(void) { char *p = malloc(1000); memset(p, 1, 1000); p = 0; }
void leak_list(void)
{
    struct node *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    a->next = b;
    b->next = 0;
}
void keep_reachable(void) { global_keep = malloc(77); }
/* overwrite dead stack slots so no stale copy of a pointer survives */
void scrub_stack(void) { volatile char junk[8192]; memset((char *)junk, 0, sizeof junk); }

int main(void)
{
    for (int i = 0; i < 3; i++) leak_small();
    leak_big();
    leak_list();
    keep_reachable();
    scrub_stack();
    puts("done");
    return 0;
}
