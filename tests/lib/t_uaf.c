/* heap-use-after-free: read and write through a dangling pointer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *make_buffer(size_t n) { return malloc(n); }
void free_buffer(char *p) { free(p); }
int use_after_free(char *p, size_t i) { return p[i]; }
void write_after_free(int *p, size_t i) { p[i] = 7; }

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "read";
    char *p = make_buffer(32);
    memset(p, 0, 32);
    free_buffer(p);
    if (!strcmp(mode, "read")) printf("%d\n", use_after_free(p, 5));
    else {
        /* many frees later the address is still quarantined */
        for (int i = 0; i < 10000; i++) free(malloc(64));
        write_after_free((int *)p, 4);
    }
    puts("survived");
    return 0;
}
