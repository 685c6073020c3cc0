/* heap-buffer-underflow: with protect_below=1 the guard page is right
 * before the block (fault); otherwise the padding before it is checked at
 * free. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *make_buffer(size_t n) { return malloc(n); }
int do_underflow_read(char *p, long i) { return p[i]; }
void do_underflow_write(char *p, long i) { p[i] = 1; }
void free_buffer(char *p) { free(p); }

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "guard";
    char *p = make_buffer(16);
    memset(p, 0, 16);
    if (!strcmp(mode, "guard")) printf("%d\n", do_underflow_read(p, -1));
    else if (!strcmp(mode, "slack")) { do_underflow_write(p, -3); free_buffer(p); }
    puts("survived");
    return 0;
}
