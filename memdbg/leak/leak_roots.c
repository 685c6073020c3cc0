/* SPDX-License-Identifier: MIT */
/* Roots of the leak scan, as LeakSanitizer takes them: the writable
 * segments of the loaded objects (.data, .bss, relro), every thread's stack
 * from its stack pointer up (static TLS and the thread descriptor sit at the
 * top of a glibc thread stack), each thread's TLS blocks through its DTV,
 * the scanning thread's registers, and the ranges the program registered.
 * Not every writable mapping: memory the program mmap'd itself is not a
 * root, so a huge reservation or a shared file mapping longer than its file
 * costs nothing and cannot fault.
 *
 * Memory outside the heap is read with process_vm_readv on our own pid,
 * which returns EFAULT for an unreadable page instead of raising SIGSEGV or
 * SIGBUS (fallback: pread of /proc/self/mem, then plain loads of ranges
 * /proc/self/maps shows as readable private memory).
 *
 * Other threads are not stopped: the heap lock is held, so none of them
 * allocates or frees meanwhile; a thread blocked in a system call has its
 * stack pointer in /proc/self/task/TID/syscall; for a running one the whole
 * stack mapping recorded at its first malloc is scanned. */

#include "leak/leak.h"
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/uio.h>

/* Threads are recorded at their first malloc (md_thread_id, runtime.c). */

/* ---- reading memory that may be unreadable ---- */

#define CHUNK (64 * 1024)
static uintptr_t chunk[CHUNK / sizeof(uintptr_t)];   /* in our own .bss: never a root */
static int read_method;                               /* 0 untried, 1 process_vm_readv, 2 /proc/self/mem, 3 plain */
static int mem_fd = -1;
static pid_t self_pid;

struct mapping { uintptr_t lo, hi; bool readable, private_mem, anon_rw; };
static struct mapping *maps;
static size_t nmaps;

static const struct mapping *mapping_of(uintptr_t a)
{
    size_t lo = 0, hi = nmaps;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (a < maps[mid].lo) hi = mid;
        else if (a >= maps[mid].hi) lo = mid + 1;
        else return &maps[mid];
    }
    return 0;
}

static bool pvr_refused(void) { return errno == ENOSYS || errno == EPERM; }

/* Reads [a, a+n) (within one page) into dst; false if it cannot be read. */
static bool read_page_part(void *dst, uintptr_t a, size_t n)
{
    if (read_method <= 1) {
        struct iovec l = { dst, n }, r = { (void *)a, n };
        ssize_t got = process_vm_readv(self_pid, &l, 1, &r, 1, 0);
        if (got == (ssize_t)n) { read_method = 1; return true; }
        if (got >= 0 || !pvr_refused()) return false;
        read_method = 2;   /* seccomp or no CONFIG_CROSS_MEMORY_ATTACH: /proc/self/mem */
    }
    if (read_method == 2) {
        if (mem_fd < 0) mem_fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
        if (mem_fd >= 0) {
            ssize_t got = pread(mem_fd, dst, n, (off_t)a);
            if (got == (ssize_t)n) return true;
            if (got >= 0 || errno == EIO || errno == EFAULT) return false;
        }
        read_method = 3;
    }
    /* plain loads, only where /proc/self/maps shows private readable memory
     * (a shared file mapping may end before the mapping does: SIGBUS) */
    const struct mapping *m = mapping_of(a);
    if (!m || !m->readable || !m->private_mem || a + n > m->hi) return false;
    memcpy(dst, (const void *)a, n);
    return true;
}

/* Scans the words of [lo, hi) that can be read; heap words go to consider(). */
void md_scan_foreign(uintptr_t lo, uintptr_t hi, void (*consider)(uintptr_t))
{
    lo = (lo + 7) & ~(uintptr_t)7;
    hi &= ~(uintptr_t)7;
    while (lo < hi) {
        /* up to 16 pages, one iovec each: process_vm_readv stops at the
         * first iovec it cannot read, so a bad page costs only itself */
        uintptr_t end = hi - lo > CHUNK ? lo + CHUNK : hi;
        struct iovec l[16], r[16];
        size_t nio = 0, want = 0;
        for (uintptr_t a = lo; a < end && nio < 16; nio++) {
            uintptr_t pe = (a | (MD_PAGE - 1)) + 1;
            if (pe > end) pe = end;
            l[nio].iov_base = (char *)chunk + want;
            r[nio].iov_base = (void *)a;
            l[nio].iov_len = r[nio].iov_len = pe - a;
            want += pe - a;
            a = pe;
        }
        size_t got = 0;
        bool bad = false;
        if (read_method <= 1) {
            ssize_t n = process_vm_readv(self_pid, l, nio, r, nio, 0);
            if (n >= 0) {
                read_method = 1;
                got = (size_t)n;
                bad = got < want;
            } else if (!pvr_refused()) {
                bad = true;   /* the first page */
            } else {
                read_method = 2;
            }
        }
        if (read_method >= 2) {
            for (size_t i = 0; i < nio; i++) {
                if (!read_page_part(l[i].iov_base, (uintptr_t)r[i].iov_base, l[i].iov_len)) { bad = true; break; }
                got += l[i].iov_len;
            }
        }
        for (size_t i = 0; i + 8 <= got; i += 8) consider(chunk[i / 8]);
        lo += got;
        if (bad) lo = (lo | (MD_PAGE - 1)) + 1;   /* skip the page that failed */
    }
}

static uintptr_t read_word(uintptr_t a, bool *ok)
{
    uintptr_t v = 0;
    *ok = (a & 7) == 0 && read_page_part(&v, a, sizeof v);
    return v;
}

/* ---- /proc/self/maps ---- */

static uintptr_t hexnum(const char **pp, const char *end)
{
    uintptr_t v = 0;
    const char *p = *pp;
    for (; p < end; p++) {
        char c = *p;
        if (c >= '0' && c <= '9') v = v * 16 + (uintptr_t)(c - '0');
        else if (c >= 'a' && c <= 'f') v = v * 16 + (uintptr_t)(c - 'a' + 10);
        else break;
    }
    *pp = p;
    return v;
}

static char *read_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    size_t cap = 64 * 1024, n = 0;
    char *buf = md_internal_alloc(cap, 16);
    while (buf) {
        if (n + 4096 > cap) {
            buf = md_internal_realloc(buf, cap * 2);
            cap *= 2;
            if (!buf) break;
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        n += (size_t)r;
    }
    close(fd);
    if (buf) buf[n] = 0;
    *len = n;
    return buf;
}

static void load_maps(void)
{
    size_t len;
    char *t = read_file("/proc/self/maps", &len);
    nmaps = 0;
    if (!t) return;
    size_t lines = 0;
    for (size_t i = 0; i < len; i++) lines += t[i] == '\n';
    maps = md_internal_alloc((lines + 1) * sizeof *maps, 16);
    if (!maps) return;
    const char *p = t, *end = t + len;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol) eol = end;
        struct mapping m;
        m.lo = hexnum(&p, eol);
        if (p < eol) p++;
        m.hi = hexnum(&p, eol);
        if (p + 4 < eol) {
            m.readable = p[1] == 'r';
            /* "p": private; a shared mapping is read only by the safe methods */
            m.private_mem = p[4] == 'p' && !memmem(p, (size_t)(eol - p), "[vvar", 5);
            /* private writable memory with no file: glibc's heap ([heap]
             * and its mmap'd arenas and chunks) among others */
            const char *path = memchr(p, '/', (size_t)(eol - p));
            m.anon_rw = m.readable && m.private_mem && p[2] == 'w' &&
                        (!path || memmem(p, (size_t)(eol - p), "[heap]", 6)) &&
                        !memmem(p, (size_t)(eol - p), "[stack", 6) && !memmem(p, (size_t)(eol - p), "[v", 2);
            maps[nmaps++] = m;
        }
        p = eol + 1;
    }
}

/* ---- the roots ---- */

struct root_ctx { void (*consider)(uintptr_t); uintptr_t self_data, exe_base; };

/* Loaded objects' address ranges, for suppressions by module name without
 * dladdr (which takes ld.so's load lock: a thread inside dlopen may hold it
 * while it waits for the heap lock that the check holds). */
#define MAX_MODULE_RANGES 1024
static struct { uintptr_t lo, hi; const char *name; } modules[MAX_MODULE_RANGES];
static int nmodules;
static char exe_path[512];

const char *md_module_of(uintptr_t pc)
{
    for (int i = 0; i < nmodules; i++)
        if (pc - modules[i].lo < modules[i].hi - modules[i].lo) return modules[i].name;
    return 0;
}

static uintptr_t self_lo, self_hi;   /* memdbg's own segments */

/* Writable PT_LOAD segments of every loaded object but memdbg itself (its
 * tables point at every block). */
static int phdr_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct root_ctx *c = arg;
    bool self = false;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && c->self_data - lo < ph->p_memsz) self = true;
    }
    for (int i = 0; self && i < info->dlpi_phnum; i++) {   /* for scan_unsampled_heap */
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type != PT_LOAD) continue;
        if (!self_lo || lo < self_lo) self_lo = lo;
        if (lo + ph->p_memsz > self_hi) self_hi = lo + ph->p_memsz;
    }
    const char *name = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : 0;
    if (!name && info->dlpi_addr == c->exe_base) name = exe_path;
    for (int i = 0; i < info->dlpi_phnum && name; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || nmodules == MAX_MODULE_RANGES) continue;
        modules[nmodules].lo = info->dlpi_addr + ph->p_vaddr;
        modules[nmodules].hi = modules[nmodules].lo + ph->p_memsz;
        modules[nmodules++].name = name;
    }
    if (self) return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W)) continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        md_scan_foreign(lo, lo + ph->p_memsz, c->consider);
    }
    return 0;
}

/* A thread's stack range from sp up to the end of its mapping; for a glibc
 * thread the mapping ends with its static TLS and thread descriptor. */
static void scan_stack_from(uintptr_t sp, bool whole, void (*consider)(uintptr_t))
{
    const struct mapping *m = mapping_of(sp);
    if (!m || md_in_arena(sp) || md_is_metadata(m->lo, m->hi)) return;
    md_scan_foreign(whole ? m->lo : sp, m->hi, consider);
}

static size_t static_tls_size, pthread_size;

/* Static TLS below the thread pointer, the thread descriptor above it, and
 * the dynamic TLS blocks the DTV points at (heap blocks malloc'd by
 * __tls_get_addr: reachable through the DTV only). */
static void scan_tls(uintptr_t tp, void (*consider)(uintptr_t))
{
    if (!tp) return;
    md_scan_foreign(tp - static_tls_size, tp + pthread_size, consider);
    bool ok;
    uintptr_t dtv = read_word(tp + sizeof(uintptr_t), &ok);   /* tcbhead_t: tcb, dtv, self */
    if (!ok || !dtv) return;
    consider(dtv);
    uintptr_t n = read_word(dtv - 2 * sizeof(uintptr_t), &ok);   /* dtv[-1].counter */
    if (!ok || n > 65536) return;
    md_scan_foreign(dtv, dtv + (n + 1) * 2 * sizeof(uintptr_t), consider);
}

static bool task_sp(pid_t tid, uintptr_t *sp)
{
    char path[64] = "/proc/self/task/";
    size_t k = md_strlen(path);
    char digits[16];
    int nd = 0;
    for (unsigned v = (unsigned)tid; v || !nd; v /= 10) digits[nd++] = (char)('0' + v % 10);
    while (nd) path[k++] = digits[--nd];
    memcpy(path + k, "/syscall", 9);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char buf[256];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return false;
    buf[n] = 0;
    if (buf[0] == 'r') return false;   /* "running" */
    /* "nr a1 .. a6 sp pc", or "-1 sp pc" when blocked outside a system call */
    const char *f[9];
    int nf = 0;
    for (char *p = buf; *p && nf < 9;) {
        while (*p == ' ') p++;
        if (!*p || *p == '\n') break;
        f[nf++] = p;
        while (*p && *p != ' ' && *p != '\n') p++;
    }
    if (nf < 3) return false;
    const char *s = f[nf - 2];
    if (s[0] != '0' || s[1] != 'x') return false;
    s += 2;
    *sp = hexnum(&s, s + 16);
    return *sp != 0;
}

struct linux_dirent64 { uint64_t ino; int64_t off; unsigned short reclen; unsigned char type; char name[]; };

static void scan_other_threads(pid_t self_tid, void (*consider)(uintptr_t), size_t *unscanned)
{
    int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    char buf[4096];
    for (;;) {
        long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (n <= 0) break;
        for (long off = 0; off < n;) {
            struct linux_dirent64 *d = (struct linux_dirent64 *)(buf + off);
            off += d->reclen;
            pid_t tid = 0;
            for (const char *p = d->name; *p >= '0' && *p <= '9'; p++) tid = tid * 10 + (*p - '0');
            if (!tid || tid == self_tid) continue;
            const struct md_thread_rec *t = md_thread_of_tid(tid);
            uintptr_t sp;
            const struct mapping *ms = 0;
            if (task_sp(tid, &sp)) {
                scan_stack_from(sp, false, consider);
                ms = mapping_of(sp);
            }
            /* running, or on an alternate signal stack: its recorded stack, whole */
            if (t && t->sp_hint && mapping_of(t->sp_hint) != ms) scan_stack_from(t->sp_hint, true, consider);
            if (!ms && !t) (*unscanned)++;
            if (t) scan_tls(t->tp, consider);
        }
    }
    close(fd);
}

/* ---- registered root regions (__lsan_register_root_region) ---- */
#define MAX_ROOT_REGIONS 256
static struct { uintptr_t lo, hi; } regions[MAX_ROOT_REGIONS];
static int nregions;

void md_leak_root_region(const void *p, size_t size, bool add)
{
    md_heap_lock();
    uintptr_t lo = (uintptr_t)p, hi = lo + size;
    if (add) {
        if (nregions < MAX_ROOT_REGIONS) { regions[nregions].lo = lo; regions[nregions].hi = hi; nregions++; }
    } else {
        for (int i = 0; i < nregions; i++)
            if (regions[i].lo == lo && regions[i].hi == hi) { regions[i] = regions[--nregions]; break; }
    }
    md_heap_unlock();
}

/* Before the heap lock is taken: what needs ld.so's lock (dlsym). */
static uintptr_t exe_base;

void md_scan_roots_prepare(void)
{
    if (pthread_size) return;
    void (*info)(size_t *, size_t *) = (void (*)(size_t *, size_t *))dlsym(RTLD_DEFAULT, "_dl_get_tls_static_info");
    size_t align;
    if (info) info(&static_tls_size, &align);
    if (static_tls_size > ((size_t)16 << 20)) static_tls_size = 0;
    const unsigned *ps = dlsym(RTLD_DEFAULT, "_thread_db_sizeof_pthread");
    pthread_size = ps ? *ps : MD_PAGE;
    ssize_t n = readlink("/proc/self/exe", exe_path, sizeof exe_path - 1);
    exe_path[n > 0 ? n : 0] = 0;
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
    size_t phnum = getauxval(AT_PHNUM);
    for (size_t i = 0; ph && i < phnum; i++)
        if (ph[i].p_type == PT_PHDR) exe_base = (uintptr_t)ph - ph[i].p_vaddr;
}

/* The stack pointer to scan this thread's stack from when the scan runs on
 * memdbg's report stack (0: the current one). */
static uintptr_t program_sp;

void md_scan_roots_set_sp(uintptr_t sp)
{
    program_sp = sp;
}

/* leak_scan_exit_frames=0, in the check at exit: the frames below exit's
 * caller are exit's own and the handlers': they lie over stack the
 * program used before (the frames of main and its callees, once main
 * returned) and leave many of its words unwritten, so a stale copy of a
 * pointer there hides a leak.  The program's live frames start at exit's
 * caller; the values its callee-saved registers had at the call are roots
 * as well (exit's frames save them somewhere below).  The default scans
 * those frames, as LeakSanitizer does. */
static struct md_caller_frame exit_caller;
static bool have_exit_caller;

void md_scan_roots_set_exit_caller(const struct md_caller_frame *f)
{
    have_exit_caller = f != NULL;
    if (f) exit_caller = *f;
}

/* With sampling, most blocks are glibc's and memdbg does not know which
 * of them are live: every private writable anonymous mapping outside
 * memdbg's arena and metadata (glibc's heap, its arenas and large chunks,
 * and whatever else the program mapped) is a root, so a guarded block
 * reachable only from an unsampled one is not a leak.  Stale pointers in
 * glibc's free chunks may hide a leak: the check errs on the quiet side. */
static void scan_unsampled_heap(void (*consider)(uintptr_t))
{
    for (size_t i = 0; i < nmaps; i++) {
        const struct mapping *m = &maps[i];
        if (!m->anon_rw || md_in_heap(m->lo) || md_is_metadata(m->lo, m->hi)) continue;
        if (m->lo < self_hi && m->hi > self_lo) continue;   /* memdbg's .bss: its tables */
        md_scan_foreign(m->lo, m->hi, consider);
    }
}

/* Feeds every root word to consider(); called with the heap lock held.
 * Returns the number of threads whose stack could not be found. */
__attribute__((noinline)) size_t md_scan_roots(void (*consider)(uintptr_t))
{
    MD_DCHECK(md_heap_lock_mine());
    /* this thread's registers: callee-saved ones may hold the only copy of
     * a pointer of a caller (e.g. of main, which called exit); they go to
     * this frame, which the stack scan from the current sp covers, as do
     * the registers our own prologues saved */
    volatile uintptr_t regs[8];
    uintptr_t sp;
    MD_SPILL_REGISTERS(regs, sp);
    self_pid = getpid();
    load_maps();
    struct root_ctx c = { consider, (uintptr_t)&md_heap, exe_base };
    nmodules = 0;
    dl_iterate_phdr(phdr_cb, &c);

    pid_t self_tid = (pid_t)syscall(SYS_gettid);
    uintptr_t stack_from = program_sp ? program_sp : sp;
    const struct mapping *stack_map = mapping_of(stack_from);
    if (have_exit_caller && exit_caller.sp > stack_from && stack_map && exit_caller.sp < stack_map->hi) {
        stack_from = exit_caller.sp;
        for (int i = 0; i < MD_CALLEE_SAVED; i++) consider(exit_caller.regs[i]);
    }
    scan_stack_from(stack_from, false, consider);
    (void)regs[0];
    scan_tls(md_thread_pointer(), consider);
    size_t unscanned = 0;
    scan_other_threads(self_tid, consider, &unscanned);

    for (int i = 0; i < nregions; i++) md_scan_foreign(regions[i].lo, regions[i].hi, consider);
    if (md_opt.sample_rate > 1) scan_unsampled_heap(consider);
    return unscanned;
}

/* ---- the dynamic linker's own allocations ---- */
/* ld.so keeps some pointers to its malloc'd data (DTV slot lists, scope
 * arrays of the first link maps) in memory from its startup allocator,
 * which is no object's segment: like LSan, blocks whose allocating caller
 * is ld.so count as roots. */
static uintptr_t ldso_lo, ldso_hi;

static int ldso_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    if (info->dlpi_addr != *(uintptr_t *)arg) return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        ldso_lo = info->dlpi_addr + ph->p_vaddr;
        ldso_hi = ldso_lo + ph->p_memsz;
    }
    return 1;
}

bool md_allocated_by_ldso(uint32_t stack)
{
    if (!ldso_hi) {
        uintptr_t base = getauxval(AT_BASE);
        if (!base) return false;
        dl_iterate_phdr(ldso_cb, &base);
        if (!ldso_hi) { ldso_hi = 1; return false; }
    }
    const uintptr_t *f;
    int n = md_depot_get(stack, &f);
    for (int i = 0; i < n; i++) {
        if (f[i] - md_heap.self_start < md_heap.self_end - md_heap.self_start) continue;
        return f[i] - ldso_lo < ldso_hi - ldso_lo;
    }
    return false;
}
