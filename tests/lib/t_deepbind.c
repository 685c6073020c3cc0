/* SPDX-License-Identifier: MIT */
/* A plugin opened with RTLD_DEEPBIND (tests/lib/mod_deepbind.c) would get
 * the C library's malloc and free while the program has memdbg's: memdbg
 * drops the flag with one warning, so blocks cross between the two
 * without a false bad-free or a glibc abort, and the plugin's own errors
 * are found. */

// TEST: RTLD_DEEPBIND plugin: blocks cross both ways, no false report
// RUN: %memdbg %t share
// EXIT: 0
// CHECK: WARNING: memdbg: dlopen\(".*mod_deepbind.so", RTLD_DEEPBIND\): the flag is dropped
// CHECK-COUNT: 1 RTLD_DEEPBIND
// CHECK-NOT: ERROR
// CHECK-OUT: copied hello, grown hello
// CHECK-OUT: survived
//
// TEST: RTLD_DEEPBIND plugin: its overflow is caught at the access
// RUN: %memdbg %t overflow
// EXIT: 1
// CHECK-ERROR: heap-buffer-overflow
// CHECK: ^WRITE of size 1 at 0x
// CHECK: is located 0 bytes after 24-byte region
// CHECK-STACK: ^WRITE of size | plugin_overflow | main
// CHECK-STACK: ^allocated by thread T0 here: | malloc | plugin_overflow | main
//
// TEST: dlopen by name still searches the caller's RUNPATH ($ORIGIN), with and without RTLD_DEEPBIND
// RUN: %memdbg %t byname
// EXIT: 0
// CHECK-NOT: ERROR
// CHECK-OUT: found by name: plain, deepbind
//
// TEST: RTLD_DEEPBIND plugin without memdbg works the same
// RUN: %t share
// EXIT: 0
// CHECK-OUT: survived

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The test is linked with RUNPATH $ORIGIN (memdbg/lib.mk): a bare name is
 * found only if dlopen sees main as its caller, not libmemdbg. */
static void open_by_name(void)
{
    void *plain = dlopen("mod_deepbind.so", RTLD_NOW);
    if (!plain) { fprintf(stderr, "dlopen by name: %s\n", dlerror()); exit(2); }
    void *deep = dlopen("mod_deepbind.so", RTLD_NOW | RTLD_DEEPBIND);
    if (!deep) { fprintf(stderr, "dlopen by name, RTLD_DEEPBIND: %s\n", dlerror()); exit(2); }
    printf("found by name: plain, deepbind\n");
    dlclose(deep);
    dlclose(plain);
}

static void *open_plugin(void)
{
    char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 64);
    if (n <= 0) { perror("readlink"); exit(2); }
    path[n] = 0;
    strcpy(strrchr(path, '/') + 1, "mod_deepbind.so");
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (!h) { fprintf(stderr, "dlopen: %s\n", dlerror()); exit(2); }
    return h;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "share";
    if (!strcmp(mode, "byname")) {
        open_by_name();
        return 0;
    }
    void *h = open_plugin();
    char *(*copy)(const char *) = (char *(*)(const char *))dlsym(h, "plugin_copy");
    void (*release)(char *) = (void (*)(char *))dlsym(h, "plugin_release");
    char *(*grow)(char *, size_t) = (char *(*)(char *, size_t))dlsym(h, "plugin_grow");
    void (*overflow)(size_t) = (void (*)(size_t))dlsym(h, "plugin_overflow");
    if (!copy || !release || !grow || !overflow) { fprintf(stderr, "dlsym: %s\n", dlerror()); return 2; }
    if (!strcmp(mode, "overflow")) {
        overflow(24);
    } else {
        char *c = copy("hello");           /* plugin's malloc, program's free */
        printf("copied %s", c);
        free(c);
        char *mine = strdup("hello");      /* program's malloc, plugin's realloc and free */
        mine = grow(mine, 4096);
        printf(", grown %s\n", mine);
        release(mine);
        dlclose(dlopen(0, RTLD_NOW | RTLD_DEEPBIND));   /* a second one: no second warning */
    }
    dlclose(h);
    puts("survived");
    return 0;
}
