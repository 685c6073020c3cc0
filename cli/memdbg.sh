#!/bin/sh
# SPDX-License-Identifier: MIT
# memdbg: the command-line front end of libmemdbg.so (see memdbg(1)).
#   memdbg run|vm|maps|compare|symbolize ... ; memdbg --version ; memdbg --help
# The build (cli/cli.mk) and make install fill in the @...@ values.
set -u

prog=memdbg
version='@VERSION@'
layout='@LAYOUT@'       # build: build/memdbg; installed: PREFIX/bin/memdbg

# Where this script really is (a symlink in PATH points at it).
self=$0
case $self in */*) ;; *) self=$(command -v -- "$self") ;; esac
self=$(readlink -f -- "$self" 2>/dev/null || printf '%s\n' "$self")
here=$(cd "$(dirname "$self")" && pwd)
if [ "$layout" = installed ]; then
	libexecdir=$(cd "$here/../lib/memdbg" 2>/dev/null && pwd || printf '%s\n' "$here/../lib/memdbg")
	repo=${MEMDBG_REPO:-}
	build=${repo:+$repo/build}
else
	libexecdir=$here
	repo=${MEMDBG_REPO:-'@REPO@'}
	build=$here
fi
lib=${MEMDBG_LIB:-$libexecdir/libmemdbg.so}
probe=$libexecdir/memdbg-probe

# Exit statuses (memdbg(1) EXIT STATUS).
EX_USAGE=2

die() { printf '%s: %s\n' "$prog" "$*" >&2; exit $EX_USAGE; }

usage_main() {
	cat <<EOF
usage: $prog run [--backend B] [--options O] [--log DIR] -- program [args...]
       $prog vm [--kernel patched|stock|debug|IMAGE] [options] -- program [args...]
       $prog maps [--raw] PID
       $prog maps [--raw] [--signal SIG] [options] -- program [args...]
       $prog compare [--vm] [--only LIST] [options] -- program [args...]
       $prog symbolize < log
       $prog --version | --help

Commands:
  run        run a program under libmemdbg.so (LD_PRELOAD)
  vm         run a program under libmemdbg.so in a QEMU guest on the patched
             (or stock/debug) memdbg kernel (build tree only)
  maps       the mappings of a process and memdbg's heap: 'maps PID', or
             'maps -- program args' (snapshot at exit or at a signal)
  compare    a program under glibc, memdbg, Electric Fence and DUMA (and with
             --vm memdbg on the stock and patched kernels), side by side
  symbolize  symbolize a report written with symbolize=0 (stdin to stdout)

  $prog COMMAND --help     options of one command
  $prog --version          version of this memdbg

Exit status: 0 success; 2 usage error or a missing component; run, vm and
'maps -- program' exit with the program's status. See memdbg(1), libmemdbg(7).
EOF
}

# --- shared option handling ---------------------------------------------------

opts=${MEMDBG_OPTIONS:-}
add_opt() { if [ -n "$opts" ]; then opts="$opts:$1"; else opts=$1; fi; }
need_arg() { [ "$2" -ge 2 ] || die "$1 needs a value (try '$prog $cmd --help')"; }
check_backend() {
	case $1 in auto | nonlinear | guard | mprotect) ;;
	*) die "unknown backend '$1': expected auto, nonlinear, guard or mprotect" ;;
	esac
}
need_lib() {
	[ -f "$lib" ] || die "cannot find libmemdbg.so at $lib (build it with 'make', or set MEMDBG_LIB)"
}
need_probe() {
	[ -x "$probe" ] || die "cannot find $probe (built by 'make'; installed by 'make install')"
}
need_program() {
	[ $# -ge 1 ] || die "$cmd: missing program (usage: $prog $cmd [options] -- program [args...])"
	command -v -- "$1" >/dev/null 2>&1 || die "$cmd: program not found: $1"
}
# One word for sh -c, whatever it holds.
shquote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
shquote_all() {
	q=
	for a in "$@"; do q="$q $(shquote "$a")"; done
	printf '%s\n' "${q# }"
}
# key=value from a snapshot/run file
kv() { sed -n "s/^$2=//p" "$1" 2>/dev/null | head -n 1; }

# --- run -------------------------------------------------------------------------

usage_run() {
	cat <<EOF
usage: $prog run [--backend auto|nonlinear|guard|mprotect] [--sample N]
                 [--options 'key=value:...'] [--log DIR] [--log-format text|json]
                 [--follow-children=no|yes] [--child-leak-exitcode=no|yes] -- program [args...]

Runs program with LD_PRELOAD=$lib.
  --backend B    the heap backend (option backend=B)
  --sample N     guard about 1 in N allocations, the others from glibc's malloc
                 (option sample_rate=N; 1, the default, guards every block)
  --options O    libmemdbg options (libmemdbg(7)); appended to MEMDBG_OPTIONS
                 from the environment, later keys win
  --log DIR      write reports to DIR/memdbg.PID instead of stderr
  --log-format F text (as AddressSanitizer) or json (one JSON object per
                 report and line; option log_format=F)
  --follow-children=no|yes
                 whether the programs it executes run under memdbg too
                 (default no, as valgrind: option follow_children=0)
  --child-leak-exitcode=no|yes
                 whether leaks of the processes it forks or executes make
                 their exit status exitcode (default no: only the program's
                 own leaks do; option child_leak_exitcode=0)
Exit status: the program's (libmemdbg's exitcode, 1 by default, after a report).
EOF
}

# The library checks the value too; failing here names the command's option.
check_sample() {
	case $1 in
	'' | *[!0-9]* | 0*) die "--sample takes a whole number from 1 to 1000000000, not '$1'" ;;
	esac
	[ ${#1} -le 10 ] && [ "$1" -le 1000000000 ] || die "--sample takes a whole number from 1 to 1000000000, not '$1'"
}

cmd_run() {
	add_opt follow_children=0   # valgrind's default: --follow-children=yes (or --options) overrides
	add_opt child_leak_exitcode=0   # a script's tools that leak do not stop it
	while [ $# -gt 0 ]; do
		case $1 in
		-h | --help) usage_run; exit 0 ;;
		--follow-children=yes) add_opt follow_children=1; shift ;;
		--follow-children=no) add_opt follow_children=0; shift ;;
		--follow-children=*) die "--follow-children takes yes or no" ;;
		--child-leak-exitcode=yes) add_opt child_leak_exitcode=1; shift ;;
		--child-leak-exitcode=no) add_opt child_leak_exitcode=0; shift ;;
		--child-leak-exitcode*) die "--child-leak-exitcode takes yes or no" ;;
		--backend) need_arg "$1" $#; check_backend "$2"; add_opt "backend=$2"; shift 2 ;;
		--backend=*) check_backend "${1#*=}"; add_opt "backend=${1#*=}"; shift ;;
		--sample) need_arg "$1" $#; check_sample "$2"; add_opt "sample_rate=$2"; shift 2 ;;
		--sample=*) check_sample "${1#*=}"; add_opt "sample_rate=${1#*=}"; shift ;;
		--options) need_arg "$1" $#; add_opt "$2"; shift 2 ;;
		--options=*) add_opt "${1#*=}"; shift ;;
		--log) need_arg "$1" $#; set_log "$2"; shift 2 ;;
		--log=*) set_log "${1#*=}"; shift ;;
		--log-format) need_arg "$1" $#; set_log_format "$2"; shift 2 ;;
		--log-format=*) set_log_format "${1#*=}"; shift ;;
		--) shift; break ;;
		-*) die "unknown option '$1' for run (try '$prog run --help')" ;;
		*) break ;;
		esac
	done
	need_program "$@"
	need_lib
	warn_unchecked "$1"
	note_script "$1"
	exec_under_memdbg "$@"
}

# A script (or a wrapper such as a pyenv shim) runs under memdbg as its
# interpreter only: without --follow-children=yes the programs it executes,
# often the one the user meant, are not checked.  Say so once, rather than
# let a clean run suggest they were.
note_script() {
	path=$(command -v -- "$1" 2>/dev/null) || return 0
	case $path in /*) ;; *) return 0 ;; esac
	[ -f "$path" ] && [ "$(head -c 2 -- "$path" 2>/dev/null)" = '#!' ] || return 0
	follow=$(printf '%s\n' "$opts" | tr ':' '\n' | sed -n 's/^follow_children=//p' | tail -n 1)
	case $follow in 1 | yes | true) return 0 ;; esac
	interp=$(head -n 1 -- "$path" | cut -c 3- | sed 's/^ *//')
	printf '%s: note: %s is a script: memdbg checks its interpreter (%s), not the programs it runs (--follow-children=yes checks those too)\n' \
		"$prog" "$path" "$interp" >&2
}

# LD_PRELOAD does nothing for a statically linked program, and the loader
# ignores it for a setuid/setgid one run by another user: say so, once,
# rather than run it unchecked in silence.
warn_unchecked() {
	path=$(command -v -- "$1" 2>/dev/null) || return 0
	case $path in /*) ;; *) return 0 ;; esac   # a builtin or function
	[ -f "$path" ] && [ "$(head -c 4 -- "$path" 2>/dev/null | tail -c 3)" = ELF ] || return 0
	if { [ -u "$path" ] && [ "$(stat -c %u -- "$path")" != "$(id -u)" ]; } ||
		{ [ -g "$path" ] && [ "$(stat -c %g -- "$path")" != "$(id -g)" ]; }; then
		printf '%s: warning: %s is setuid/setgid: the loader ignores LD_PRELOAD for it, so memdbg checks nothing\n' "$prog" "$path" >&2
	elif command -v ldd >/dev/null 2>&1 && ldd -- "$path" 2>&1 | grep -q -e 'statically linked' -e 'not a dynamic executable'; then
		printf '%s: warning: %s is statically linked: LD_PRELOAD has no effect on it, so memdbg checks nothing\n' "$prog" "$path" >&2
	fi
	return 0
}

set_log_format() {
	case $1 in text | json) add_opt "log_format=$1" ;;
	*) die "--log-format takes text or json, not '$1'" ;;
	esac
}

set_log() {
	mkdir -p -- "$1" || die "--log: cannot create directory $1"
	add_opt "log_path=$(cd "$1" && pwd)/memdbg"
}

exec_under_memdbg() {
	if [ -n "${LD_PRELOAD:-}" ]; then LD_PRELOAD="$lib:$LD_PRELOAD"; else LD_PRELOAD=$lib; fi
	MEMDBG_OPTIONS=$opts
	export LD_PRELOAD MEMDBG_OPTIONS
	# Perl leaves its interpreter's memory to the system at exit unless
	# told to free it, so every perl program, and every script that runs
	# one, would fail the leak check on some 50 kB it means to keep.  A
	# value the user set is kept.
	if [ -z "${PERL_DESTRUCT_LEVEL+set}" ]; then
		PERL_DESTRUCT_LEVEL=2
		export PERL_DESTRUCT_LEVEL
	fi
	exec "$@"
}

# --- vm ---------------------------------------------------------------------------

usage_vm() {
	cat <<EOF
usage: $prog vm [--kernel patched|stock|debug|IMAGE] [--backend B] [--options O]
                [--timeout SECONDS] [--mem MIB] -- program [args...]

Runs program under libmemdbg.so in a QEMU guest booted on this project's
kernel (default: patched, where the nonlinear backend works), through
kernel/scripts/vm-run.sh. The guest sees the host's files read-only and runs
in the current directory; output streams back.
Needs a memdbg build tree with the kernel built ('make kernel-patched',
'make kernel-stock', 'make kernel-debug'); an installed memdbg uses the
checkout named by MEMDBG_REPO.
Exit status: the program's; 124 the guest timed out (--timeout, default 600);
125 the guest died or its kernel reported a problem; 2 usage or no kernel.
EOF
}

runner() {
	[ -n "$repo" ] && [ -x "$repo/kernel/scripts/vm-run.sh" ] ||
		die "$cmd needs a memdbg checkout (kernel/scripts/vm-run.sh and the guest kernels are not installed): run it as build/memdbg in the checkout, or set MEMDBG_REPO=/path/to/checkout"
	printf '%s\n' "$repo/kernel/scripts/vm-run.sh"
}

kernel_image() { # flavour|path -> image path, or dies naming the make target
	case $1 in
	patched | stock | debug)
		img=$build/kernel/obj-$1/arch/x86/boot/bzImage
		[ -f "$img" ] || die "no $1 kernel image at $img: build it with 'make kernel-$1' in $repo"
		printf '%s\n' "$img" ;;
	*) [ -f "$1" ] || die "kernel image $1 does not exist (use patched, stock, debug or a bzImage path)"
		printf '%s\n' "$1" ;;
	esac
}

cmd_vm() {
	kernel=patched timeout=600 mem=2048
	while [ $# -gt 0 ]; do
		case $1 in
		-h | --help) usage_vm; exit 0 ;;
		--kernel) need_arg "$1" $#; kernel=$2; shift 2 ;;
		--kernel=*) kernel=${1#*=}; shift ;;
		--backend) need_arg "$1" $#; check_backend "$2"; add_opt "backend=$2"; shift 2 ;;
		--backend=*) check_backend "${1#*=}"; add_opt "backend=${1#*=}"; shift ;;
		--options) need_arg "$1" $#; add_opt "$2"; shift 2 ;;
		--options=*) add_opt "${1#*=}"; shift ;;
		--timeout) need_arg "$1" $#; timeout=$2; shift 2 ;;
		--mem) need_arg "$1" $#; mem=$2; shift 2 ;;
		--) shift; break ;;
		-*) die "unknown option '$1' for vm (try '$prog vm --help')" ;;
		*) break ;;
		esac
	done
	case $timeout in '' | *[!0-9]*) die "--timeout needs a number of seconds" ;; esac
	case $mem in '' | *[!0-9]*) die "--mem needs a number of MiB" ;; esac
	need_program "$@"
	need_lib
	vmrun=$(runner) || exit $EX_USAGE
	img=$(kernel_image "$kernel") || exit $EX_USAGE
	guest_cmd="LD_PRELOAD=$(shquote "$lib") MEMDBG_OPTIONS=$(shquote "$opts") exec $(shquote_all "$@")"
	# no_timer_check: a TCG guest on a loaded host can fail the kernel's
	# IO-APIC timer check and panic at boot ("IO-APIC + timer doesn't work").
	BUILD=$build exec "$vmrun" --kernel "$img" --timeout "$timeout" --mem "$mem" --append no_timer_check -- "$guest_cmd"
}

# --- maps -------------------------------------------------------------------------

usage_maps() {
	cat <<EOF
usage: $prog maps [--raw] PID
       $prog maps [--raw] [--signal SIG] [--backend B] [--options O] -- program [args...]

The process's mappings summarized: lines of /proc/PID/maps, VMAs by kind
(memdbg heap, program, libraries, anonymous, PROT_NONE guards, stacks, ...),
and, when libmemdbg.so is loaded, its heap: VMAs, live blocks, guard pages,
quarantine and RSS (read from the library's memdbg_stats through
/proc/PID/mem, which needs ptrace permission on the process).
  PID             a running process, now
  -- program     run program under libmemdbg.so and take the snapshot when it
                  exits (also after a fatal signal or a memdbg report)
  --signal SIG    also take one each time the program receives SIG (e.g. USR1;
                  the signal is swallowed): kill -USR1 PID from another shell
  --raw           key=value lines instead of the summary
Exit status: 0 for PID (1: no such process); the program's status otherwise.
EOF
}

# Summary of one snapshot (key=value file) and its copy of the maps.
print_snapshot() { # snapfile mapsfile
	s=$1 m=$2
	if [ "$raw" = 1 ]; then
		cat "$s"
		[ -f "$m" ] && awk -v lo="$(kv "$s" heap_start)" -v hi="$(kv "$s" heap_end)" \
			-v exe="$(kv "$s" exe)" -f "$awk_kinds" -v raw=1 "$m"
		return
	fi
	echo "memdbg maps: PID $(kv "$s" pid) ($(kv "$s" comm)), $(kv "$s" when):" \
		"$(kv "$s" maps_lines) lines in /proc/$(kv "$s" pid)/maps"
	[ -f "$m" ] && awk -v lo="$(kv "$s" heap_start)" -v hi="$(kv "$s" heap_end)" \
		-v exe="$(kv "$s" exe)" -f "$awk_kinds" -v raw=0 "$m"
	echo "RSS $(kv "$s" rss_kb) KiB, peak $(kv "$s" hwm_kb) KiB"
	case $(kv "$s" memdbg) in
	yes)
		echo "memdbg heap ($(kv "$s" memdbg_backend) backend), $(kv "$s" heap_start)-$(kv "$s" heap_end):"
		printf '  %-18s %s\n' "VMAs" "$(kv "$s" heap_vmas)" \
			"live blocks" "$(kv "$s" live_blocks) ($(kv "$s" live_bytes) bytes; peak $(kv "$s" peak_live_blocks))" \
			"allocs / frees" "$(kv "$s" allocs) / $(kv "$s" frees)" \
			"guard pages" "$(kv "$s" guard_pages) of $(kv "$s" arena_pages_used) arena pages in use" \
			"quarantine" "$(kv "$s" quarantined_blocks) freed blocks, $(( $(kv "$s" quarantine_bytes) / 1024 )) KiB of addresses" \
			"RSS" "$(kv "$s" heap_rss_kb) KiB" \
			"errors reported" "$(kv "$s" errors)"
		;;
	no) echo "memdbg: libmemdbg.so is not loaded in this process" ;;
	*) echo "memdbg: $(kv "$s" memdbg)" ;;
	esac
}

cmd_maps() {
	raw=0 sig= pid=
	while [ $# -gt 0 ]; do
		case $1 in
		-h | --help) usage_maps; exit 0 ;;
		--raw) raw=1; shift ;;
		--signal) need_arg "$1" $#; sig=$2; shift 2 ;;
		--signal=*) sig=${1#*=}; shift ;;
		--backend) need_arg "$1" $#; check_backend "$2"; add_opt "backend=$2"; shift 2 ;;
		--backend=*) check_backend "${1#*=}"; add_opt "backend=${1#*=}"; shift ;;
		--options) need_arg "$1" $#; add_opt "$2"; shift 2 ;;
		--options=*) add_opt "${1#*=}"; shift ;;
		--) shift; break ;;
		-*) die "unknown option '$1' for maps (try '$prog maps --help')" ;;
		*) pid=$1; shift; break ;;
		esac
	done
	need_probe
	awk_kinds=$libexecdir/maps-kinds.awk
	[ -f "$awk_kinds" ] || die "cannot find $awk_kinds"
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/memdbg-maps.XXXXXX") || die "cannot create a temporary directory"
	trap 'rm -rf "$tmp"' EXIT
	if [ -n "$pid" ]; then
		[ $# -eq 0 ] || die "maps: give either a PID or -- program, not both"
		[ -z "$sig" ] || die "maps: --signal needs '-- program'"
		case $pid in *[!0-9]* | '') die "maps: '$pid' is not a process id" ;; esac
		[ -d "/proc/$pid" ] || { echo "$prog: maps: no process $pid" >&2; exit 1; }
		"$probe" pid "$pid" >"$tmp/snap-1.txt" || exit 1
		cp "/proc/$pid/maps" "$tmp/maps-1.txt" 2>/dev/null
		print_snapshot "$tmp/snap-1.txt" "$tmp/maps-1.txt"
		exit 0
	fi
	need_program "$@"
	need_lib
	# The probe is not run under the library; the program is.
	status=0
	"$probe" run --dir "$tmp" ${sig:+--signal "$sig"} -- env LD_PRELOAD="$lib${LD_PRELOAD:+:$LD_PRELOAD}" \
		MEMDBG_OPTIONS="$opts" "$@" || status=$?
	[ -f "$tmp/run.txt" ] || exit "$status"
	n=1
	while [ -f "$tmp/snap-$n.txt" ]; do
		[ "$raw" = 1 ] || echo
		print_snapshot "$tmp/snap-$n.txt" "$tmp/maps-$n.txt"
		n=$((n + 1))
	done
	if [ "$raw" = 1 ]; then cat "$tmp/run.txt"; else
		echo "program: $(kv "$tmp/run.txt" status), peak $(kv "$tmp/run.txt" peak_maps_lines) maps lines," \
			"peak RSS $(kv "$tmp/run.txt" peak_rss_kb) KiB"
	fi
	exit "$status"
}

# --- compare ------------------------------------------------------------------------

usage_compare() {
	cat <<EOF
usage: $prog compare [--vm] [--only LIST] [--options O] [--timeout SECONDS] [--raw]
                     -- program [args...]

Runs program under each allocator in turn (glibc, memdbg, Electric Fence,
DUMA; with --vm also memdbg in the stock and the patched kernel's guest) and
prints, side by side: how it ended (ok, exit N, signal name, ENOMEM abort,
memdbg report, timeout), the peak lines of /proc/PID/maps, the peak VMAs
holding allocator memory (anonymous, [heap], memfd), the peak RSS, CPU
(user+system) and wall time. Its output is kept apart; the last lines of
the errors of a run that failed are shown under the table.
  --only LIST     comma-separated subset of glibc,memdbg,efence,duma,stock,patched
  --options O     libmemdbg options for the memdbg rows (default detect_leaks=0)
  --timeout S     per run (default 300)
  --raw           one key=value line per row
Exit status: 0 when the table was printed (whatever the program did), 2 usage.
EOF
}

find_preload() { # name -> path of lib<name>.so or nothing
	for f in /usr/lib/lib$1.so /usr/lib/*/lib$1.so /usr/lib/lib$1.so.0 /usr/lib/*/lib$1.so.0 /usr/local/lib/lib$1.so; do
		[ -f "$f" ] && { printf '%s\n' "$f"; return; }
	done
}

# How a run ended, in a few words.
outcome() { # runfile errfile
	code=$(kv "$1" exit_code) sig=$(kv "$1" term_signal)
	if [ -z "$code" ]; then echo "not run"; return; fi
	if [ "$code" = 124 ] && [ -z "$sig" ] && [ "$(kv "$1" timed_out)" = 1 ]; then echo timeout; return; fi
	if grep -qE 'mprotect\(\) failed|mmap\(\) failed|Cannot allocate memory|ENOMEM|[Oo]ut of memory' "$2" 2>/dev/null &&
		[ "$code" != 0 ]; then
		echo "ENOMEM abort${sig:+ ($sig)}"
	elif grep -q 'ERROR: memdbg:' "$2" 2>/dev/null && [ "$code" != 0 ]; then
		echo "memdbg report (exit $code)"
	elif [ -n "$sig" ]; then echo "$sig"
	elif [ "$code" = 0 ]; then echo ok
	else echo "exit $code"
	fi
}

compare_row() { # label dir id
	r=$2/run.txt
	if [ ! -f "$r" ]; then
		why=$(cat "$2/failed" 2>/dev/null || echo 'not run')
		if [ "$raw" = 1 ]; then
			printf 'allocator=%s status=%s peak_maps_lines=- peak_vmas=- peak_rss_kb=- cpu_s=- wall_s=-\n' "$3" "$(echo "$why" | tr ' ' '_')"
		else
			printf '%-32s %-24s %10s %10s %12s %9s %9s\n' "$1" "$why" - - - - -
		fi
		return
	fi
	cpu=$(awk -v u="$(kv "$r" user_s)" -v s="$(kv "$r" sys_s)" 'BEGIN { printf "%.2f", u + s }')
	wall=$(awk -v w="$(kv "$r" wall_s)" 'BEGIN { printf "%.2f", w }')
	if [ "$raw" = 1 ]; then
		printf 'allocator=%s status=%s peak_maps_lines=%s peak_vmas=%s peak_rss_kb=%s cpu_s=%s wall_s=%s\n' \
			"$3" "$(outcome "$r" "$2/err" | tr ' ' '_')" "$(kv "$r" peak_maps_lines)" \
			"$(kv "$r" peak_anon_vmas)" "$(kv "$r" peak_rss_kb)" "$cpu" "$wall"
	else
		printf '%-32s %-24s %10s %10s %12s %9s %9s\n' "$1" "$(outcome "$r" "$2/err")" \
			"$(kv "$r" peak_maps_lines)" "$(kv "$r" peak_anon_vmas)" "$(kv "$r" peak_rss_kb)" "$cpu" "$wall"
	fi
}

compare_host() { # dir NAME=VALUE... program args
	d=$1
	shift
	mkdir -p "$d"
	rc=0
	timeout -k 5 "$ctimeout" "$probe" run --dir "$d" -- env -- "$@" >"$d/out" 2>"$d/err" </dev/null || rc=$?
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		[ -f "$d/run.txt" ] || printf 'exit_code=124\ntimed_out=1\n' >"$d/run.txt"
		grep -q '^timed_out' "$d/run.txt" || echo timed_out=1 >>"$d/run.txt"
	fi
}

compare_guest() { # dir kernel-flavour program args
	d=$1 k=$2
	shift 2
	mkdir -p "$d"
	vmrun=$(runner 2>"$d/failed.tmp") || { sed 's/^memdbg: //' "$d/failed.tmp" >"$d/err"; echo "no checkout" >"$d/failed"; return; }
	img=$(kernel_image "$k" 2>"$d/err") || { echo "no $k kernel" >"$d/failed"; return; }
	gcmd="d=\$(mktemp -d); $(shquote "$probe") run --dir \"\$d\" -- env LD_PRELOAD=$(shquote "$lib") MEMDBG_OPTIONS=$(shquote "$copts") $(shquote_all "$@") >\"\$d/out\" 2>\"\$d/err\" </dev/null; echo @@run; cat \"\$d/run.txt\"; echo @@err; tail -n 20 \"\$d/err\"; echo @@kernel; uname -r"
	BUILD=$build "$vmrun" --kernel "$img" --timeout "$((ctimeout + 120))" --append no_timer_check -- "$gcmd" >"$d/guest.out" 2>"$d/guest.err" </dev/null
	sed -n '/^@@run$/,/^@@err$/p' "$d/guest.out" | sed '1d;$d' >"$d/run.txt"
	sed -n '/^@@err$/,/^@@kernel$/p' "$d/guest.out" | sed '1d;$d' >"$d/err"
	sed -n '/^@@kernel$/{n;p}' "$d/guest.out" >"$d/kernel"
	[ -s "$d/run.txt" ] || { rm -f "$d/run.txt"; echo "guest failed" >"$d/failed"; tail -n 5 "$d/guest.err" >>"$d/err"; }
}

cmd_compare() {
	raw=0 use_vm=0 only= ctimeout=300 copts=
	while [ $# -gt 0 ]; do
		case $1 in
		-h | --help) usage_compare; exit 0 ;;
		--vm) use_vm=1; shift ;;
		--raw) raw=1; shift ;;
		--only) need_arg "$1" $#; only=$2; shift 2 ;;
		--only=*) only=${1#*=}; shift ;;
		--options) need_arg "$1" $#; copts=$2; shift 2 ;;
		--options=*) copts=${1#*=}; shift ;;
		--timeout) need_arg "$1" $#; ctimeout=$2; shift 2 ;;
		--) shift; break ;;
		-*) die "unknown option '$1' for compare (try '$prog compare --help')" ;;
		*) break ;;
		esac
	done
	case $ctimeout in '' | *[!0-9]*) die "--timeout needs a number of seconds" ;; esac
	for a in $(printf '%s\n' "$only" | tr ',' ' '); do
		case $a in glibc | memdbg | efence | duma | stock | patched) ;;
		*) die "--only: unknown allocator '$a' (glibc, memdbg, efence, duma, stock, patched)" ;;
		esac
	done
	need_program "$@"
	need_lib
	need_probe
	[ -n "$copts" ] || copts=detect_leaks=0
	want() { [ -z "$only" ] || case ",$only," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/memdbg-compare.XXXXXX") || die "cannot create a temporary directory"
	trap 'rm -rf "$tmp"' EXIT
	efence=$(find_preload efence) duma=$(find_preload duma)
	rows=
	if want glibc; then compare_host "$tmp/glibc" "$@"; rows="$rows glibc"; fi
	if want memdbg; then
		compare_host "$tmp/memdbg" LD_PRELOAD="$lib" MEMDBG_OPTIONS="$copts" "$@"
		rows="$rows memdbg"
	fi
	if want efence; then
		if [ -n "$efence" ]; then compare_host "$tmp/efence" EF_ALLOW_MALLOC_0=1 LD_PRELOAD="$efence" "$@"
		else mkdir -p "$tmp/efence"; echo "not installed" >"$tmp/efence/failed"; fi
		rows="$rows efence"
	fi
	if want duma; then
		if [ -n "$duma" ]; then compare_host "$tmp/duma" DUMA_DISABLE_BANNER=1 LD_PRELOAD="$duma" "$@"
		else mkdir -p "$tmp/duma"; echo "not installed" >"$tmp/duma/failed"; fi
		rows="$rows duma"
	fi
	if [ "$use_vm" = 1 ]; then
		for k in stock patched; do
			want "$k" || continue
			echo "$prog compare: booting the $k kernel ..." >&2
			compare_guest "$tmp/$k" "$k" "$@"
			rows="$rows $k"
		done
	fi
	label() {
		case $1 in
		glibc) echo glibc ;;
		memdbg) echo "memdbg ($(LD_PRELOAD=$lib MEMDBG_OPTIONS="$copts:verbosity=1" /bin/true 2>&1 | sed -n 's/.*memdbg: backend \([a-z]*\).*/\1/p' | head -n 1))" ;;
		efence) echo "Electric Fence" ;;
		duma) echo DUMA ;;
		stock | patched) kr=$(cat "$tmp/$1/kernel" 2>/dev/null); echo "memdbg, $1${kr:+ $kr}" ;;
		esac
	}
	if [ "$raw" != 1 ]; then
		echo "$prog compare: $* (host kernel $(uname -r))"
		printf '%-32s %-24s %10s %10s %12s %9s %9s\n' allocator status "maps lines" VMAs "peak RSS kB" "CPU s" "wall s"
		printf '%-32s %-24s %10s %10s\n' "" "" "(peak)" "(peak)"
	fi
	for r in $rows; do compare_row "$(label "$r")" "$tmp/$r" "$r"; done
	if [ "$raw" != 1 ]; then
		echo
		echo "maps lines: lines of /proc/PID/maps; VMAs: those holding allocator memory"
		echo "(anonymous, [heap], memfd). Electric Fence and DUMA need two per live block."
		for r in $rows; do
			[ -s "$tmp/$r/err" ] || continue
			case $(outcome "$tmp/$r/run.txt" "$tmp/$r/err") in ok) continue ;; esac
			echo
			echo "$(label "$r"): last lines of its errors:"
			grep -v "^[[:space:]]*$" "$tmp/$r/err" | tail -n 3 | sed "s/^/    /"
		done
	fi
	exit 0
}

# --- symbolize ------------------------------------------------------------------------

cmd_symbolize() {
	case ${1:-} in
	-h | --help)
		cat <<EOF
usage: $prog symbolize [options] < log > symbolized-log

Replaces the module+offset frames of a report written with symbolize=0 by
function, file and line, with $libexecdir/memdbg-symbolize
(see its own --help for options). Exit status: the symbolizer's; 2 when it
is not there.
EOF
		exit 0 ;;
	esac
	[ -x "$libexecdir/memdbg-symbolize" ] ||
		die "symbolize: $libexecdir/memdbg-symbolize is not there (it is built by 'make lib' and installed by 'make install' from a memdbg that has it)"
	exec "$libexecdir/memdbg-symbolize" "$@"
}

# --- main -------------------------------------------------------------------------------

[ $# -ge 1 ] || { usage_main >&2; exit $EX_USAGE; }
cmd=$1
shift
case $cmd in
-h | --help | help) usage_main ;;
-V | --version | version) echo "memdbg $version" ;;
run) cmd_run "$@" ;;
vm) cmd_vm "$@" ;;
maps) cmd_maps "$@" ;;
compare) cmd_compare "$@" ;;
symbolize) cmd_symbolize "$@" ;;
-*) die "unknown option '$cmd' (try '$prog --help')" ;;
*) die "unknown command '$cmd' (try '$prog --help')" ;;
esac
