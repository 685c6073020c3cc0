/* heap-buffer-overflow: on the guard page (fault) and in the padding
 * (found at free or at exit).  Mode in argv[1]. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *make_buffer(size_t n) { return malloc(n); }
void do_overflow_write(char *p, size_t i) { p[i] = 'x'; }
int do_overflow_read(char *p, size_t i) { return p[i]; }
void free_buffer(char *p) { free(p); }

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "guard";
    if (!strcmp(mode, "guard")) {          /* 16 bytes: the guard page starts at p+16 */
        char *p = make_buffer(16);
        memset(p, 0, 16);
        do_overflow_write(p, 16);
    } else if (!strcmp(mode, "read")) {    /* 8 bytes into the guard page */
        char *p = make_buffer(32);
        printf("%d\n", do_overflow_read(p, 40));
    } else if (!strcmp(mode, "slack")) {   /* 10 bytes + 6 padding: found at free */
        char *p = make_buffer(10);
        do_overflow_write(p, 10);
        free_buffer(p);
    } else if (!strcmp(mode, "exit")) {    /* never freed: found by the exit check */
        static char *keep;
        keep = make_buffer(10);
        do_overflow_write(keep, 12);
    } else if (!strcmp(mode, "big")) {     /* a multi-page block */
        char *p = make_buffer(3 * 4096 + 100);
        memset(p, 1, 3 * 4096 + 100);
        do_overflow_write(p, 3 * 4096 + 100 + 4);
    }
    puts("survived");
    return 0;
}
