/* SPDX-License-Identifier: MIT */
/* The loaded modules, with their history, for naming stack frames.
 *
 * A stored malloc/free stack is symbolized only when a report is printed,
 * maybe after the module it went through was dlclose'd, or after another
 * module was loaded at the same addresses.  So memdbg keeps a table of
 * every module it has seen (address range, load bias, path) with the
 * epochs during which it was loaded; each depot entry carries the epoch it
 * was stored in (stackdepot.c), and a frame is looked up in the modules of
 * its stack's epoch.
 *
 * The table comes from the loader (dl_iterate_phdr), never from
 * /proc/self/maps: libelf maps the module files it reads while
 * symbolizing, and those mappings carry the module's path, so a module
 * range rebuilt from the maps file later starts too low (that made every
 * stack after a report's first one show wrong offsets in dlopen'ed
 * libraries).  It is rescanned when the loader's counts of loads and
 * unloads (dlpi_adds, dlpi_subs) change: checked on each stack capture
 * that unwinds (memo misses) and before each report. */
#include "stack/stack.h"
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#define MAX_MODULES 65536
#define NAME_POOL ((size_t)8 << 20)

static struct md_module *mods;
static uint32_t nmods;           /* published count: entries below are complete */
static char *names;
static size_t names_used;
static uint32_t epoch;
static unsigned long long seen_adds = ~0ull, seen_subs = ~0ull;
static bool scan_lock;
static uint32_t scan_no;
static bool scanned_once;

uint32_t md_modules_epoch(void)
{
    return __atomic_load_n(&epoch, __ATOMIC_ACQUIRE);
}

const char *md_module_path(const struct md_module *m)
{
    return names + m->name_off;
}

/* path of a module: absolute as the loader has it, the executable's
 * through /proc/self/exe, a relative dlopen path joined to the cwd */
static uint32_t store_name(const char *name)
{
    char buf[4096];
    size_t n = 0;
    if (!name[0]) {
        ssize_t r = readlink("/proc/self/exe", buf, sizeof buf - 1);
        n = r > 0 ? (size_t)r : 0;
    } else if (name[0] != '/' && strchr(name, '/') && getcwd(buf, sizeof buf - 1)) {
        n = md_strlen(buf);
        size_t l = md_strlen(name);
        if (n + 1 + l < sizeof buf) { buf[n++] = '/'; memcpy(buf + n, name, l); n += l; }
        else n = 0;
    }
    if (!n) {
        n = md_strlen(name);
        if (n >= sizeof buf) n = sizeof buf - 1;
        memcpy(buf, name, n);
    }
    buf[n] = 0;
    if (names_used + n + 1 > NAME_POOL) return 0;   /* offset 0 holds "" */
    uint32_t off = (uint32_t)names_used;
    memcpy(names + off, buf, n + 1);
    names_used += n + 1;
    return off;
}

static int count_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    unsigned long long *c = data;
    if (size < offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        c[0] = c[1] = ~0ull - 1;   /* no counts: always rescan */
        return 1;
    }
    c[0] = info->dlpi_adds;
    c[1] = info->dlpi_subs;
    return 1;
}

struct scan { uint32_t new_epoch; };

static int scan_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct scan *sc = data;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        uintptr_t s = info->dlpi_addr + ph->p_vaddr, e = s + ph->p_memsz;
        if (s < lo) lo = s;
        if (e > hi) hi = e;
    }
    if (hi <= lo) return 0;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    uint32_t n = __atomic_load_n(&nmods, __ATOMIC_RELAXED);
    for (uint32_t i = 0; i < n; i++) {
        struct md_module *m = &mods[i];
        if (m->removed || m->start != lo || m->end != hi || m->bias != info->dlpi_addr) continue;
        /* same range and bias: the same module unless the name differs
         * (the executable's "" was stored as its path) */
        if (name[0] == '/' && strcmp(name, names + m->name_off) != 0) continue;
        m->seen = scan_no;
        return 0;
    }
    if (n >= MAX_MODULES) return 0;
    struct md_module *m = &mods[n];
    m->start = lo;
    m->end = hi;
    m->bias = info->dlpi_addr;
    m->added = sc->new_epoch;
    m->removed = 0;
    m->seen = scan_no;
    m->name_off = store_name(name);
    m->sym = 0;
    __atomic_store_n(&nmods, n + 1, __ATOMIC_RELEASE);
    return 0;
}

static void rescan(void)
{
    /* The first scan's modules belong to epoch 0, the epoch of stacks
     * stored before it. */
    struct scan sc = { scanned_once ? md_modules_epoch() + 1 : 0 };
    scan_no++;
    uint32_t before = __atomic_load_n(&nmods, __ATOMIC_RELAXED);
    dl_iterate_phdr(scan_cb, &sc);
    bool changed = __atomic_load_n(&nmods, __ATOMIC_RELAXED) != before;
    for (uint32_t i = 0; i < before; i++) {
        if (mods[i].removed || mods[i].seen == scan_no) continue;
        mods[i].removed = sc.new_epoch;
        changed = true;
    }
    scanned_once = true;
    if (changed && sc.new_epoch) __atomic_store_n(&epoch, sc.new_epoch, __ATOMIC_RELEASE);
}

/* a scan lock held in the parent by a thread that fork did not copy */
static void child_after_fork(void)
{
    __atomic_clear(&scan_lock, __ATOMIC_RELAXED);
}

void md_modules_refresh(void)
{
    if (!mods) {
        /* from md_stacktrace_init, single-threaded */
        mods = md_reserve(MAX_MODULES * sizeof *mods, "module table");
        names = md_reserve(NAME_POOL, "module names");
        names_used = 1;
        pthread_atfork(0, 0, child_after_fork);
    }
    /* Never wait: a thread that holds the loader's lock (a dl_iterate_phdr
     * callback calling malloc) could be waiting for us.  Another thread
     * scanning right now gives the same table. */
    if (__atomic_test_and_set(&scan_lock, __ATOMIC_ACQUIRE)) return;
    unsigned long long c[2] = { 0, 0 };
    dl_iterate_phdr(count_cb, c);
    if (c[0] != seen_adds || c[1] != seen_subs || !scanned_once) {
        rescan();
        seen_adds = c[0];
        seen_subs = c[1];
    }
    __atomic_clear(&scan_lock, __ATOMIC_RELEASE);
}

const struct md_module *md_module_find(uintptr_t pc, uint32_t at_epoch)
{
    uint32_t n = __atomic_load_n(&nmods, __ATOMIC_ACQUIRE);
    const struct md_module *found = 0;
    for (uint32_t i = 0; i < n; i++) {
        const struct md_module *m = &mods[i];
        if (pc < m->start || pc >= m->end || m->added > at_epoch) continue;
        if (m->removed && m->removed <= at_epoch) continue;
        found = m;
    }
    return found;
}

void md_module_set_sym(const struct md_module *m, void *sym)
{
    ((struct md_module *)m)->sym = sym;
}
