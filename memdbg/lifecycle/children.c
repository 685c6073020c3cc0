/* SPDX-License-Identifier: MIT */
/* Programs a process under memdbg executes.  LD_PRELOAD is inherited, so
 * by default every exec'd program runs under memdbg too, with its leak
 * check and exitcode: a `set -e` script whose tools leak (sort, date)
 * stops at the first one.  With follow_children=0 (memdbg run's default,
 * as valgrind's) the library removes itself from LD_PRELOAD at start, so
 * only this process is checked; its fork children keep memdbg (same
 * image), the programs it executes do not.  With child_leak_exitcode=0
 * (memdbg run's default) the processes below the top one, forked or
 * executed, report their leaks but keep their own exit status. */
#include "lifecycle/lifecycle.h"
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* A process that another process under memdbg forked or executed (not the
 * top one): with child_leak_exitcode=0 its leaks leave its exit status
 * alone. */
static bool descendant;

/* This library's file name, for the LD_PRELOAD a program executes with. */
static const char *lib_name;
static size_t lib_name_len;

static const char *base_name(const char *p, size_t n, size_t *len)
{
    const char *b = p;
    for (size_t i = 0; i < n; i++)
        if (p[i] == '/') b = p + i + 1;
    *len = n - (size_t)(b - p);
    return b;
}

/* LD_PRELOAD entries are separated by ':' or blanks; the ones whose file
 * name is this library's go, the rest keep their order.  The string is
 * edited in place (it only gets shorter); no allocation. */
static void leave_ld_preload(const char *me, size_t me_len)
{
    char *v = getenv("LD_PRELOAD");
    if (!v) return;
    char *w = v;
    const char *r = v;
    while (*r) {
        while (*r == ':' || *r == ' ' || *r == '\t') r++;
        const char *e = r;
        while (*r && *r != ':' && *r != ' ' && *r != '\t') r++;
        size_t n = (size_t)(r - e), bl;
        const char *b = base_name(e, n, &bl);
        if (!n || (bl == me_len && !memcmp(b, me, bl))) continue;
        if (w != v) *w++ = ':';
        memmove(w, e, n);
        w += n;
    }
    *w = 0;
    if (w == v) unsetenv("LD_PRELOAD");
}

/* Skips white space, then parses a number in base 10 or 16 up to the
 * next character that is not a digit of it. */
static unsigned long long parse_number(const char **p, const char *end, unsigned base)
{
    while (*p < end && **p == ' ') (*p)++;
    unsigned long long v = 0;
    for (; *p < end; (*p)++) {
        char c = **p;
        unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
                   : base == 16 && c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10) : base;
        if (d >= base) break;
        v = v * base + d;
    }
    return v;
}

/* One line of /proc/PID/maps, "start-end perms offset MAJ:MIN inode path":
 * whether it maps this library's file (the same device and inode, so a
 * symlink or another path to it counts), or a file of the same name (the
 * parent may still map a copy rebuilt since). */
static bool maps_line_is_me(const char *l, const char *end, const struct stat *me_st, const char *me, size_t me_len)
{
    const char *p = l;
    for (int field = 0; field < 3; field++) {   /* range, perms, offset */
        while (p < end && *p == ' ') p++;
        while (p < end && *p != ' ') p++;
    }
    unsigned long long dev_major = parse_number(&p, end, 16);
    if (p < end && *p == ':') p++;
    unsigned long long dev_minor = parse_number(&p, end, 16);
    unsigned long long inode = parse_number(&p, end, 10);
    if (inode && inode == (unsigned long long)me_st->st_ino && dev_major == major(me_st->st_dev) &&
        dev_minor == minor(me_st->st_dev))
        return true;
    size_t len = (size_t)(end - l);
    return len > me_len && l[len - me_len - 1] == '/' && !memcmp(end - me_len, me, me_len);
}

/* Whether the parent process maps this library, from its /proc/PID/maps.
 * Read without stdio or malloc (this runs before the heap exists); a
 * parent we may not read counts as one without memdbg. */
static bool parent_runs_memdbg(const char *file, const char *me, size_t me_len)
{
    struct stat me_st;
    if (stat(file, &me_st) != 0) memset(&me_st, 0, sizeof me_st);
    char path[40], buf[8192];
    struct md_buf b;
    md_buf_init(&b, path, sizeof path - 1, -1);
    md_puts(&b, "/proc/");
    md_putu(&b, (unsigned long long)getppid());
    md_puts(&b, "/maps");
    path[b.len] = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    bool found = false;
    size_t have = 0;
    while (!found) {
        ssize_t r = read(fd, buf + have, sizeof buf - have);
        if (r <= 0) break;
        have += (size_t)r;
        size_t start = 0;
        for (size_t i = 0; i < have && !found; i++) {
            if (buf[i] != '\n') continue;
            found = maps_line_is_me(buf + start, buf + i, &me_st, me, me_len);
            start = i + 1;
        }
        if (start == 0 && have == sizeof buf) start = have;   /* a line longer than the buffer */
        memmove(buf, buf + start, have - start);
        have -= start;
    }
    close(fd);
    return found;
}

void md_children_init(void)
{
    Dl_info info;
    if (!dladdr((void *)md_children_init, &info) || !info.dli_fname) return;
    size_t me_len;
    const char *me = base_name(info.dli_fname, md_strlen(info.dli_fname), &me_len);
    lib_name = me;
    lib_name_len = me_len;
    if (!md_opt.follow_children) leave_ld_preload(me, me_len);
    /* only then is the answer needed: a read of the parent's maps per exec */
    if (!md_opt.child_leak_exitcode) descendant = parent_runs_memdbg(info.dli_fname, me, me_len);
}

void md_children_fork_child(void)
{
    descendant = true;
}

bool md_leaks_set_exitcode(void)
{
    return md_opt.child_leak_exitcode || !descendant;
}

/* ---- programs the loader will not load memdbg into ----
 * A statically linked program has no loader to read LD_PRELOAD, and the
 * loader ignores it for a setuid or setgid program that raises
 * privileges: either runs unchecked although the user asked for memdbg.
 * execve (preload/exec.c) says so before the call.  It may run in a vfork
 * child, sharing the parent's memory: no allocation, no stdio. */

/* An ELF program without PT_INTERP: no loader, so no LD_PRELOAD. */
static bool elf_without_loader(int fd)
{
    Elf64_Ehdr eh;
    if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) ||
        (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
        return false;
    Elf64_Phdr ph[64];
    unsigned n = eh.e_phnum < 64 ? eh.e_phnum : 64;
    ssize_t want = (ssize_t)(n * sizeof *ph);
    if (n == 0 || pread(fd, ph, (size_t)want, (off_t)eh.e_phoff) != want) return false;
    for (unsigned i = 0; i < n; i++)
        if (ph[i].p_type == PT_INTERP) return false;
    return true;
}

/* Why path will run without memdbg, as the end of a warning (NULL: it
 * will not, or it cannot be read). */
static const char *unchecked_reason(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    const char *why = 0;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
        (((st.st_mode & S_ISUID) && st.st_uid != geteuid()) || ((st.st_mode & S_ISGID) && st.st_gid != getegid())))
        why = " is setuid or setgid: the loader ignores LD_PRELOAD for it, so it runs without memdbg\n";
    else if (elf_without_loader(fd))
        why = " is statically linked: LD_PRELOAD cannot load memdbg into it, so it runs without memdbg\n";
    close(fd);
    return why;
}

/* The environment asks for this library in LD_PRELOAD. */
static bool env_preloads_me(char *const envp[])
{
    for (size_t i = 0; envp && envp[i]; i++) {
        const char *v = envp[i];
        if (strncmp(v, "LD_PRELOAD=", 11) != 0) continue;
        v += 11;
        const char *end = v + md_strlen(v);
        while (v < end) {
            while (v < end && (*v == ':' || *v == ' ' || *v == '\t')) v++;
            const char *e = v;
            while (v < end && *v != ':' && *v != ' ' && *v != '\t') v++;
            size_t bl;
            const char *b = base_name(e, (size_t)(v - e), &bl);
            if (bl && bl == lib_name_len && !memcmp(b, lib_name, bl)) return true;
        }
    }
    return false;
}

void md_children_exec_check(const char *path, char *const envp[])
{
    if (!lib_name_len || !path || !env_preloads_me(envp)) return;
    const char *why = unchecked_reason(path);
    if (!why) return;
    char mem[512];
    struct md_buf b;
    md_warn_begin(&b, mem, sizeof mem);
    md_puts(&b, path);
    md_puts(&b, why);
    md_warn_end(&b);
}
