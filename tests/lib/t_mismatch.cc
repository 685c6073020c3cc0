// alloc-dealloc-mismatch in its three common forms (argv[1]).
#include <cstdio>
#include <cstdlib>
#include <cstring>

char *make_array() { return new char[40]; }
int *make_object() { return new int(5); }
void *make_malloc() { return malloc(12); }
void release_with_free(void *p) { free(p); }
void release_with_delete_array(int *p) { delete[] p; }
void release_with_delete(char *p) { delete (int *)(void *)p; }

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "newarray_free";
    if (!strcmp(mode, "newarray_free")) release_with_free(make_array());
    else if (!strcmp(mode, "new_deletearray")) release_with_delete_array(make_object());
    else if (!strcmp(mode, "malloc_delete")) release_with_delete((char *)make_malloc());
    puts("survived");
    return 0;
}
