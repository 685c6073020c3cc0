/* SPDX-License-Identifier: MIT */
/* Symbolization of dlopen'ed and dlclose'd modules.
 *   three:  malloc, free and the use-after-free read all happen inside
 *           libmdsym.so: the report's three stacks go through it.
 *   closed: malloc and free inside libmdsym.so, which is then dlclose'd
 *           (and libmdsym2.so loaded, likely at the same addresses) before
 *           main reads the freed block: the stored stacks must still name
 *           libmdsym.so's functions.
 *   leak:   a block allocated in libmdsym.so is dropped and the library
 *           dlclose'd: the leak report at exit must name lib_alloc.
 * Before the report it prints, for each library function it used,
 * "func NAME OFFSET SIZE" (offset from the module's load bias, as in
 * (module+0xOFFSET) frames) so the test can check the offsets. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef char *alloc_fn(size_t);
typedef void free_fn(char *);
typedef int read_fn(const char *, int);

static void *open_lib(const char *name)
{
    char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 64);
    if (n <= 0) { perror("readlink"); exit(2); }
    path[n] = 0;
    strcpy(strrchr(path, '/') + 1, name);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) { fprintf(stderr, "dlopen: %s\n", dlerror()); exit(2); }
    return h;
}

static void *sym(void *h, const char *name)
{
    void *f = dlsym(h, name);
    Dl_info info;
    const ElfW(Sym) *s = 0;
    if (!f || !dladdr1(f, &info, (void **)&s, RTLD_DL_SYMENT) || !s) {
        fprintf(stderr, "dlsym %s failed\n", name);
        exit(2);
    }
    struct link_map *lm;
    dlinfo(h, RTLD_DI_LINKMAP, &lm);
    printf("func %s 0x%lx %lu %s\n", name, (unsigned long)((uintptr_t)f - lm->l_addr),
           (unsigned long)s->st_size, lm->l_name);
    return f;
}

static int mapped(const char *name)
{
    char line[4096];
    int found = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    while (f && fgets(line, sizeof line, f))
        if (strstr(line, name)) found = 1;
    if (f) fclose(f);
    return found;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "three";
    void *h = open_lib("libmdsym.so");
    alloc_fn *lib_alloc = (alloc_fn *)sym(h, "lib_alloc");
    free_fn *lib_free = (free_fn *)sym(h, "lib_free");
    if (!strcmp(mode, "leak")) {
        char *volatile leaked = lib_alloc(48);
        leaked = 0;
        dlclose(h);
        printf("unloaded %s\n", mapped("/libmdsym.so") ? "no" : "yes");
        return leaked != 0;
    }
    char *p = lib_alloc(32);
    memset(p, 1, 32);
    lib_free(p);
    if (!strcmp(mode, "three")) {
        read_fn *lib_read = (read_fn *)sym(h, "lib_read");
        fflush(stdout);
        printf("%d\n", lib_read(p, 5));
    } else {
        dlclose(h);
        printf("unloaded %s\n", mapped("/libmdsym.so") ? "no" : "yes");
        void *h2 = open_lib("libmdsym2.so");
        alloc_fn *second_alloc = (alloc_fn *)sym(h2, "second_lib_alloc");
        free_fn *second_free = (free_fn *)sym(h2, "second_lib_free");
        for (int i = 0; i < 100; i++) second_free(second_alloc(64));
        fflush(stdout);
        printf("%d\n", p[5]);
    }
    puts("survived");
    return 0;
}
