#include <stdio.h>
#include <stdlib.h>

char *make_buffer(size_t n) { return malloc(n); }
void first_free(char *p) { free(p); }
void second_free(char *p) { free(p); }

int main(void)
{
    char *p = make_buffer(24);
    first_free(p);
    second_free(p);
    second_free(p);       /* with halt_on_error=0 this is reported again */
    puts("survived");
    return 0;
}
