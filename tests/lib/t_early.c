/* Allocation before main and before other constructors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *early;
__attribute__((constructor(101))) static void very_early(void)
{
    early = strdup("constructed");
    void *p = calloc(3, 7);
    free(p);
}

int main(void)
{
    if (!early || strcmp(early, "constructed")) return 2;
    free(early);
    puts("ok");
    return 0;
}
