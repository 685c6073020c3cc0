#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *make_buffer(size_t n) { return malloc(n); }
void bad_free_interior(char *p) { free(p + 8); }
void bad_free_stack(void) { char local[16]; memset(local, 0, sizeof local); free(local); }

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "interior";
    if (!strcmp(mode, "interior")) bad_free_interior(make_buffer(64));
    else bad_free_stack();
    puts("survived");
    return 0;
}
