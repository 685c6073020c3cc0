/* Symbolization at report time with elfutils libdwfl: function, file and
 * line for each return address.  libdwfl allocates; callers run with
 * md_in_runtime set so those allocations come from the internal pool and
 * never from the debugged heap. */

#include "memdbg.h"
#include <elfutils/libdwfl.h>
#include <string.h>
#include <unistd.h>

/* libstdc++'s demangler, if the process has it (we link it for operator new). */
extern char *__cxa_demangle(const char *, char *, size_t *, int *) __attribute__((weak));

static Dwfl *dwfl;
static pid_t symbolized_pid;
static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .debuginfo_path = &debuginfo_path,
};

static Dwfl *get_dwfl(void)
{
    if (!md_opt.symbolize) return 0;
    pid_t pid = getpid();
    if (dwfl && symbolized_pid == pid) {
        /* modules may have been dlopen'ed since: refresh the map */
        dwfl_report_begin_add(dwfl);
        dwfl_linux_proc_report(dwfl, pid);
        dwfl_report_end(dwfl, 0, 0);
        return dwfl;
    }
    dwfl = dwfl_begin(&callbacks);
    if (!dwfl) return 0;
    symbolized_pid = pid;
    dwfl_report_begin(dwfl);
    if (dwfl_linux_proc_report(dwfl, pid) != 0) { dwfl_end(dwfl); dwfl = 0; return 0; }
    dwfl_report_end(dwfl, 0, 0);
    return dwfl;
}

void md_frame_location(struct md_buf *b, uintptr_t pc, bool is_return_addr)
{
    Dwfl *d = dwfl ? dwfl : get_dwfl();
    uintptr_t a = is_return_addr && pc ? pc - 1 : pc;
    Dwfl_Module *m = d ? dwfl_addrmodule(d, a) : 0;
    const char *fn = m ? dwfl_module_addrname(m, a) : 0;
    if (fn) {
        char *dem = 0;
        if (__cxa_demangle && fn[0] == '_' && fn[1] == 'Z') {
            int st;
            dem = __cxa_demangle(fn, 0, 0, &st);
        }
        md_puts(b, "in ");
        md_puts(b, dem ? dem : fn);
    }
    Dwfl_Line *line = m ? dwfl_module_getsrc(m, a) : 0;
    int lineno = 0;
    const char *file = line ? dwfl_lineinfo(line, 0, &lineno, 0, 0, 0) : 0;
    if (file) {
        md_putc(b, ' ');
        md_puts(b, file);
        md_putc(b, ':');
        md_putu(b, (unsigned long long)lineno);
        return;
    }
    const char *modname = 0;
    Dwarf_Addr start = 0;
    if (m) modname = dwfl_module_info(m, 0, &start, 0, 0, 0, 0, 0);
    md_puts(b, fn ? " (" : "(");
    md_puts(b, modname ? modname : "<unknown module>");
    if (modname) { md_putc(b, '+'); md_putx(b, a - start); }
    md_putc(b, ')');
}

void md_print_stack(struct md_buf *b, const uintptr_t *frames, int n, bool first_exact)
{
    if (n == 0) { md_puts(b, "    <empty stack>\n"); return; }
    get_dwfl();
    for (int i = 0; i < n; i++) {
        md_puts(b, "    #");
        md_putu(b, (unsigned long long)i);
        md_putc(b, ' ');
        md_putx(b, frames[i]);
        md_putc(b, ' ');
        md_frame_location(b, frames[i], i > 0 || !first_exact);
        md_putc(b, '\n');
    }
}
