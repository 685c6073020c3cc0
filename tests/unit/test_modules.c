// SPDX-License-Identifier: MIT
/* The module table (modules.c): an address names its module and its
 * offset from the load bias, as of an epoch, so a frame stored before a
 * dlclose is still named after it. */
#include "unit_lib.h"
#include "unit.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) static int local_function(void) { return 7; }

static const char *exe_path(void)
{
    static char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    path[n > 0 ? n : 0] = 0;
    return path;
}

/* build/tests/unit/mod_unit.so, next to this program */
static const char *module_so(void)
{
    static char path[PATH_MAX];
    snprintf(path, sizeof path, "%s", exe_path());
    char *slash = strrchr(path, '/');
    snprintf(slash + 1, sizeof path - (size_t)(slash + 1 - path), "mod_unit.so");
    return path;
}

static bool ends_with(const char *s, const char *tail)
{
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && strcmp(s + a - b, tail) == 0;
}

/* pc -> module path and pc - bias, checked against dladdr */
static void check_lookup(const char *what, uintptr_t pc, const char *path_tail)
{
    const struct md_module *m = md_module_find(pc, md_modules_epoch());
    if (!m) { UNIT_FAIL("%s: no module for %#lx", what, (unsigned long)pc); return; }
    Dl_info info;
    if (!dladdr((void *)pc, &info)) { UNIT_FAIL("%s: dladdr knows no module", what); return; }
    UNIT_CHECK(ends_with(md_module_path(m), path_tail), "%s: module '%s', expected .../%s", what, md_module_path(m),
               path_tail);
    UNIT_CHECK(md_module_path(m)[0] == '/', "%s: path '%s' is not absolute", what, md_module_path(m));
    UNIT_EQ_U(pc - m->bias, pc - (uintptr_t)info.dli_fbase, what);
    UNIT_CHECK(m->start <= pc && pc < m->end, "%s: range [%#lx, %#lx) lacks the pc", what, (unsigned long)m->start,
               (unsigned long)m->end);
}

static void lookup(void)
{
    md_modules_refresh();
    const char *exe = strrchr(exe_path(), '/');
    check_lookup("a function of the program", (uintptr_t)local_function, exe + 1);
    check_lookup("getpid in libc", (uintptr_t)dlsym(RTLD_DEFAULT, "getpid"), "libc.so.6");
    check_lookup("__tls_get_addr in the loader", (uintptr_t)dlsym(RTLD_DEFAULT, "__tls_get_addr"), "ld-linux-x86-64.so.2");
    int on_stack;
    UNIT_CHECK(md_module_find((uintptr_t)&on_stack, md_modules_epoch()) == NULL, "a stack address has a module");
    void *heap = malloc(16);
    UNIT_CHECK(md_module_find((uintptr_t)heap, md_modules_epoch()) == NULL, "a heap address has a module");
    free(heap);
    UNIT_CHECK(md_module_find(0x1000, md_modules_epoch()) == NULL, "address 0x1000 has a module");
    UNIT_CHECK(local_function() == 7, "local_function");
}

static void dlopen_dlclose(void)
{
    md_modules_refresh();
    uint32_t before = md_modules_epoch();
    void *h = dlopen(module_so(), RTLD_NOW);
    if (!h) { UNIT_FAIL("dlopen %s: %s", module_so(), dlerror()); return; }
    uintptr_t fn = (uintptr_t)dlsym(h, "mod_unit_function");
    UNIT_CHECK(md_module_find(fn, md_modules_epoch()) == NULL, "found before the table was refreshed");
    md_modules_refresh();
    uint32_t loaded = md_modules_epoch();
    UNIT_CHECK(loaded > before, "epoch %u after dlopen, %u before", loaded, before);
    check_lookup("a function of the dlopen'ed module", fn, "/mod_unit.so");
    UNIT_CHECK(md_module_find(fn, before) == NULL, "the module found at the epoch before its dlopen");

    const struct md_module *m = md_module_find(fn, loaded);
    uintptr_t offset = m ? fn - m->bias : 0;
    dlclose(h);
    md_modules_refresh();
    uint32_t closed = md_modules_epoch();
    UNIT_CHECK(closed > loaded, "epoch %u after dlclose, %u before", closed, loaded);
    UNIT_CHECK(md_module_find(fn, closed) == NULL, "the module found after its dlclose");
    const struct md_module *old = md_module_find(fn, loaded);
    UNIT_CHECK(old && ends_with(md_module_path(old), "/mod_unit.so") && fn - old->bias == offset,
               "at the epoch it was loaded in, the closed module is %s", old ? md_module_path(old) : "not found");
    md_modules_refresh();
    UNIT_EQ_U(md_modules_epoch(), closed, "epoch after a refresh with nothing changed");
}

const struct unit_case unit_modules_cases[] = {
    { "modules: address -> module path and offset (program, libc, the loader)", lookup },
    { "modules: a dlclose'd module is still found at its epoch", dlopen_dlclose },
    { 0, 0 },
};
