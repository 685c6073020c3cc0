#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Tests of the memdbg command (memdbg(1)): every subcommand's exit codes,
# output and errors, make install/uninstall, the man pages.  Prints TAP.
#
#   tests/cli/run.sh [--build DIR] [--no-vm]
#
# The 'memdbg vm' test boots one guest: on the patched kernel of DIR
# (make kernel-patched), or on the image MEMDBG_TEST_KERNEL names; it is
# skipped when there is neither, and with --no-vm.
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo" || exit 2
build=build
vm=1
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	--no-vm) vm=0; shift ;;
	*) echo "usage: $0 [--build DIR] [--no-vm]" >&2; exit 2 ;;
	esac
done
build=$(cd "$build" && pwd)
md=$build/memdbg
ex=$build/examples
tmp=$(mktemp -d "${TMPDIR:-/tmp}/memdbg-cli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)) failed=$((failed + 1))
	echo "not ok $n - $1"
	shift
	for l in "$@"; do printf '#   %s\n' "$l"; done
}
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
# check NAME CONDITION-COMMAND... : ok when the command succeeds; on failure
# the files named in $show are printed.
show=
check() {
	local name=$1
	shift
	if "$@"; then ok "$name"; else
		not_ok "$name" "failed: $*"
		local f
		for f in $show; do [ -f "$f" ] && sed 's/^/#   | /' "$f" | head -n 30; done
	fi
}
# run OUT ERR command... : runs it, records its status in $rc
run() {
	local out=$1 err=$2
	shift 2
	rc=0
	"$@" >"$out" 2>"$err" </dev/null || rc=$?
}
kv() { sed -n "s/^$2=//p" "$1" | head -n 1; }
is_num() { [[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]]; }

for f in "$md" "$build/libmemdbg.so" "$build/memdbg-probe" "$build/memdbg-options-doc" "$ex/uaf" "$ex/live_blocks"; do
	[ -e "$f" ] || { echo "1..1"; echo "not ok 1 - $f is missing: run make"; exit 1; }
done

# --- help, version, usage errors ---------------------------------------------------
run "$tmp/o" "$tmp/e" "$md" --help
show="$tmp/o $tmp/e"
check "memdbg --help: exit 0, lists every command" \
	eval '[ $rc = 0 ] && for c in run vm maps compare symbolize; do grep -q "^  $c " "$tmp/o" || exit 1; done'
for c in run vm maps compare symbolize; do
	run "$tmp/o" "$tmp/e" "$md" "$c" --help
	check "memdbg $c --help: exit 0, usage of $c" eval '[ $rc = 0 ] && grep -q "^usage: memdbg $c" "$tmp/o"'
	[ "$c" = symbolize ] && continue
	run "$tmp/o" "$tmp/e" "$md" "$c" --no-such-option -- true
	check "memdbg $c --no-such-option: exit 2, names the option" \
		eval '[ $rc = 2 ] && grep -q "unknown option .--no-such-option. for $c" "$tmp/e" && [ ! -s "$tmp/o" ]'
done
run "$tmp/o" "$tmp/e" "$md" --version
check "memdbg --version: 'memdbg VERSION' from the VERSION file" \
	eval '[ $rc = 0 ] && grep -qx "memdbg $(cat VERSION)\(+g[0-9a-f]*\(\.dirty\)\{0,1\}\)\{0,1\}" "$tmp/o"'
run "$tmp/o" "$tmp/e" "$md" frobnicate
check "memdbg frobnicate: exit 2, unknown command" eval '[ $rc = 2 ] && grep -q "unknown command .frobnicate." "$tmp/e"'
run "$tmp/o" "$tmp/e" "$md"
check "memdbg without a command: exit 2 and the usage on stderr" eval '[ $rc = 2 ] && grep -q "^usage: memdbg run" "$tmp/e" && [ ! -s "$tmp/o" ]'
run "$tmp/o" "$tmp/e" "$md" run --backend quantum -- true
check "memdbg run --backend quantum: exit 2, lists the backends" eval '[ $rc = 2 ] && grep -q "expected auto, nonlinear, guard or mprotect" "$tmp/e"'
run "$tmp/o" "$tmp/e" "$md" run --
check "memdbg run without a program: exit 2" eval '[ $rc = 2 ] && grep -q "missing program" "$tmp/e"'
run "$tmp/o" "$tmp/e" "$md" run -- /no/such/program
check "memdbg run of a missing program: exit 2, says so" eval '[ $rc = 2 ] && grep -q "program not found: /no/such/program" "$tmp/e"'

# --- run ------------------------------------------------------------------------------
run "$tmp/o" "$tmp/uaf.err" "$md" run -- "$ex/uaf"
show="$tmp/uaf.err"
check "memdbg run: use-after-free reported at examples/uaf.c:34, exit 1" \
	eval '[ $rc = 1 ] && grep -q "ERROR: memdbg: heap-use-after-free" "$tmp/uaf.err" &&
	      grep -q "#0 0x[0-9a-f]* in main examples/uaf.c:34" "$tmp/uaf.err" &&
	      grep -q "in add examples/uaf.c:21" "$tmp/uaf.err"'
run "$tmp/o" "$tmp/e" "$md" run --options exitcode=42 -- "$ex/uaf"
check "memdbg run --options exitcode=42: the program's status is 42" eval '[ $rc = 42 ]'
run "$tmp/o" "$tmp/e" "$md" run -- sh -c 'echo out; exit 7'
check "memdbg run: a clean program's status (7) and output pass through" eval '[ $rc = 7 ] && [ "$(cat "$tmp/o")" = out ]'
run "$tmp/o" "$tmp/e" "$md" run --backend mprotect --options verbosity=1 -- true
check "memdbg run --backend mprotect: the library runs that backend" eval '[ $rc = 0 ] && grep -q "memdbg: backend mprotect" "$tmp/e"'
run "$tmp/o" "$tmp/e" "$md" run --sample 100 --options verbosity=1 -- true
check "memdbg run --sample 100: the library guards 1 in 100 allocations" \
	eval '[ $rc = 0 ] && grep -q "guarding 1 in 100 allocations" "$tmp/e"'
for bad in 0 -1 abc 1099511627776; do
	run "$tmp/o" "$tmp/e" "$md" run --sample "$bad" -- true
	check "memdbg run --sample $bad: exit 2, names the range" \
		eval '[ $rc = 2 ] && grep -q "sample takes a whole number from 1 to 1000000000" "$tmp/e"'
done
run "$tmp/o" "$tmp/e" "$md" run --options sample_rate=1099511627776 -- true
check "sample_rate=2^40 in the options: the library refuses it, names the range" \
	eval '[ $rc = 1 ] && grep -q "bad value .1099511627776. for option .sample_rate.: expected an integer from 1 to 1000000000" "$tmp/e"'
printf '#!/bin/sh\necho script ran\n' >"$tmp/script.sh" && chmod +x "$tmp/script.sh"
run "$tmp/o" "$tmp/e" "$md" run -- "$tmp/script.sh"
show="$tmp/e"
check "memdbg run of a script: one note that only its interpreter is checked" \
	eval '[ $rc = 0 ] && grep -qx "script ran" "$tmp/o" && [ "$(grep -c "note: .*script.sh is a script: memdbg checks its interpreter (/bin/sh), not the programs it runs" "$tmp/e")" = 1 ]'
run "$tmp/o" "$tmp/e" "$md" run --follow-children=yes -- "$tmp/script.sh"
check "memdbg run --follow-children=yes of a script: no note" eval '[ $rc = 0 ] && ! grep -q "note:" "$tmp/e"'
run "$tmp/o" "$tmp/e" "$md" run --options follow_children=1 -- "$tmp/script.sh"
check "memdbg run --options follow_children=1 of a script: no note" eval '[ $rc = 0 ] && ! grep -q "note:" "$tmp/e"'
if command -v perl >/dev/null; then
	run "$tmp/o" "$tmp/e" "$md" run -- perl -e 'print "perl ran\n"'
	show="$tmp/e"
	check "memdbg run -- perl: perl frees its interpreter at exit, no leak reported, exit 0" \
		eval '[ $rc = 0 ] && grep -qx "perl ran" "$tmp/o" && ! grep -q "leak" "$tmp/e"'
	run "$tmp/o" "$tmp/e" env PERL_DESTRUCT_LEVEL=0 "$md" run -- perl -e 1
	check "memdbg run -- perl with PERL_DESTRUCT_LEVEL=0 set: kept, the interpreter's blocks reported" \
		eval '[ $rc = 1 ] && grep -q "detected memory leaks" "$tmp/e" && grep -q " in perl_construct " "$tmp/e"'
else
	skip "memdbg run -- perl: no leak reported" "no perl"
	skip "memdbg run -- perl with PERL_DESTRUCT_LEVEL=0" "no perl"
fi
run "$tmp/o" "$tmp/e" "$md" run -- "$ex/uaf"
check "memdbg run of a compiled program: no note" eval '! grep -q "note:" "$tmp/e"'
run "$tmp/o" "$tmp/e" "$md" run --log "$tmp/logs" -- "$ex/uaf"
show="$tmp/e"
check "memdbg run --log DIR: the report goes to DIR/memdbg.PID, not stderr" \
	eval '[ $rc = 1 ] && ! grep -q "ERROR: memdbg" "$tmp/e" && grep -q "heap-use-after-free" "$tmp"/logs/memdbg.[0-9]*'

# --- maps ---------------------------------------------------------------------------------
run "$tmp/maps.raw" "$tmp/e" "$md" maps --raw --options detect_leaks=0 -- "$ex/live_blocks" 500 24 --keep
show="$tmp/maps.raw $tmp/e"
lb=$(kv "$tmp/maps.raw" live_blocks)
check "memdbg maps -- prog: snapshot at exit, heap in 1 VMA with its 500+ live blocks" \
	eval '[ $rc = 0 ] && [ "$(kv "$tmp/maps.raw" when)" = exit ] && [ "$(kv "$tmp/maps.raw" heap_vmas)" = 1 ] &&
	      [ "$(kv "$tmp/maps.raw" vmas_memdbg_heap)" = 1 ] && [ "$lb" -ge 501 ] && [ "$lb" -le 520 ]'
check "memdbg maps -- prog: guard pages >= live blocks, quarantine and heap RSS are numbers" \
	eval 'g=$(kv "$tmp/maps.raw" guard_pages); [ "$g" -ge 500 ] && is_num "$(kv "$tmp/maps.raw" quarantined_blocks)" &&
	      is_num "$(kv "$tmp/maps.raw" quarantine_bytes)" && [ "$(kv "$tmp/maps.raw" heap_rss_kb)" -ge 500 ]'
check "memdbg maps -- prog: the maps line count is the sum of the kinds" \
	eval 'total=$(kv "$tmp/maps.raw" maps_lines); sum=$(sed -n "s/^vmas_[A-Za-z_]*=//p" "$tmp/maps.raw" | awk "{ s += \$1 } END { print s }"); [ "$total" = "$sum" ] && [ "$total" -gt 10 ]'
run "$tmp/maps.txt" "$tmp/e" "$md" maps --options detect_leaks=0 -- "$ex/live_blocks" 300 24 --keep
show="$tmp/maps.txt"
check "memdbg maps: the summary names the heap's VMAs, live blocks and guard pages" \
	eval 'grep -q "^  memdbg heap  *1 " "$tmp/maps.txt" && grep -Eq "^  live blocks +30[0-9] " "$tmp/maps.txt" &&
	      grep -Eq "^  guard pages +[0-9]+ of [0-9]+ arena pages" "$tmp/maps.txt" && grep -q "^program: exit 0" "$tmp/maps.txt"'
run "$tmp/maps.sig" "$tmp/e" "$md" maps --raw --signal USR1 -- sh -c 'kill -USR1 $$; exit 4'
show="$tmp/maps.sig $tmp/e"
check "memdbg maps --signal USR1: a snapshot at the signal (swallowed), one at exit, status 4" \
	eval '[ $rc = 4 ] && grep -qx "when=signal SIGUSR1" "$tmp/maps.sig" && grep -qx "when=exit" "$tmp/maps.sig" &&
	      grep -qx "snapshots=2" "$tmp/maps.sig"'
run "$tmp/maps.segv" "$tmp/e" "$md" maps --raw -- "$ex/uaf"
show="$tmp/maps.segv"
check "memdbg maps -- prog with a bug: snapshot after the report, errors=1, status 1" \
	eval '[ $rc = 1 ] && [ "$(kv "$tmp/maps.segv" errors)" = 1 ] && [ "$(kv "$tmp/maps.segv" when)" = exit ]'
"$md" run --options detect_leaks=0 -- "$ex/live_blocks" 400 24 --wait >"$tmp/wait.out" &
wpid=$!
for _ in $(seq 100); do [ -s "$tmp/wait.out" ] && break; sleep 0.1; done
run "$tmp/maps.pid" "$tmp/e" "$md" maps --raw "$wpid"
kill "$wpid" 2>/dev/null
wait "$wpid" 2>/dev/null
show="$tmp/maps.pid $tmp/e"
check "memdbg maps PID: a running process's heap, 1 VMA, 400+ live blocks" \
	eval '[ $rc = 0 ] && [ "$(kv "$tmp/maps.pid" heap_vmas)" = 1 ] && [ "$(kv "$tmp/maps.pid" live_blocks)" -ge 401 ]'
run "$tmp/o" "$tmp/e" "$md" maps --raw $$
check "memdbg maps PID without libmemdbg: memdbg=no, kinds still counted" \
	eval '[ $rc = 0 ] && grep -qx "memdbg=no" "$tmp/o" && grep -q "^vmas_libraries=" "$tmp/o"'
run "$tmp/o" "$tmp/e" "$md" maps 999999999
check "memdbg maps of no process: exit 1, says so" eval '[ $rc = 1 ] && grep -q "no process 999999999" "$tmp/e"'
run "$tmp/o" "$tmp/e" "$md" maps --signal NOTASIG -- true
check "memdbg maps --signal NOTASIG: exit 2" eval '[ $rc = 2 ] && grep -q "unknown signal" "$tmp/e"'

# --- compare ---------------------------------------------------------------------------------
run "$tmp/cmp.txt" "$tmp/e" "$md" compare -- "$ex/live_blocks" 2000 24 --keep
show="$tmp/cmp.txt $tmp/e"
row() { grep -E "^$1 " "$tmp/cmp.txt"; }
numeric_row() { # label-regex: status ok and five numeric columns
	local r
	r=$(row "$1" | sed -E "s/^$1 +//") || return 1
	set -- $r
	[ "$1" = ok ] && is_num "$2" && is_num "$3" && is_num "$4" && is_num "$5" && is_num "$6"
}
check "memdbg compare: exit 0 and a header with the columns" \
	eval '[ $rc = 0 ] && grep -Eq "^allocator +status +maps lines +VMAs +peak RSS kB +CPU s +wall s" "$tmp/cmp.txt"'
for a in glibc 'memdbg \([a-z]+\)' 'Electric Fence' DUMA; do
	check "memdbg compare: row '$a' is ok with numeric columns" numeric_row "$a"
done
col() { row "$1" | sed -E "s/^$1 +ok +//" | awk -v c="$2" '{ print $c }'; }
check "memdbg compare: memdbg's peak maps lines < 200, Electric Fence's and DUMA's > 4000 (2 per live block, 2000 blocks)" \
	eval 'm=$(col "memdbg \([a-z]+\)" 1); e=$(col "Electric Fence" 1); d=$(col DUMA 1);
	      [ "$m" -lt 200 ] && [ "$e" -gt 4000 ] && [ "$d" -gt 4000 ]'
run "$tmp/cmp.raw" "$tmp/e" "$md" compare --raw --only glibc,memdbg -- "$ex/uaf"
show="$tmp/cmp.raw $tmp/e"
check "memdbg compare: a program memdbg stops is shown so (memdbg report, exit 1), glibc ok" \
	eval 'grep -q "^allocator=memdbg status=memdbg_report_(exit_1) " "$tmp/cmp.raw" && grep -q "^allocator=glibc status=ok " "$tmp/cmp.raw" && [ $(wc -l <"$tmp/cmp.raw") = 2 ]'
run "$tmp/cmp.sig" "$tmp/e" "$md" compare --raw --only glibc -- sh -c 'kill -SEGV $$'
check "memdbg compare: a program killed by a signal shows the signal's name" \
	eval 'grep -q "^allocator=glibc status=SIGSEGV " "$tmp/cmp.sig"'
run "$tmp/o" "$tmp/e" "$md" compare --only glibc,tcmalloc -- true
check "memdbg compare --only with an unknown allocator: exit 2" eval '[ $rc = 2 ] && grep -q "unknown allocator .tcmalloc." "$tmp/e"'

# --- symbolize -------------------------------------------------------------------------------
if [ -x "$build/memdbg-symbolize" ]; then
	run "$tmp/o" "$tmp/raw.err" "$md" run --options symbolize=0 -- "$ex/uaf"
	rc=0
	"$md" symbolize <"$tmp/raw.err" >"$tmp/sym.out" 2>"$tmp/e" || rc=$?
	# "#N function file:line" of every frame the live report could place
	frames() { sed -nE 's/^ *(#[0-9]+) 0x[0-9a-f]+ in ([^ ]+) ([^ ]+:[0-9]+)$/\1 \2 \3/p' "$1"; }
	show="$tmp/raw.err $tmp/sym.out"
	check "memdbg symbolize: a symbolize=0 report gets the live report's frames (function, file:line)" \
		eval '[ $rc = 0 ] && [ -n "$(frames "$tmp/uaf.err")" ] && [ "$(frames "$tmp/sym.out")" = "$(frames "$tmp/uaf.err")" ]'
else
	skip "memdbg symbolize: frames of a symbolize=0 report" "$build/memdbg-symbolize is not built in this tree"
	run "$tmp/o" "$tmp/e" "$md" symbolize
	check "memdbg symbolize without memdbg-symbolize: exit 2, says what is missing" \
		eval '[ $rc = 2 ] && grep -q "memdbg-symbolize is not there" "$tmp/e"'
fi

# --- vm ----------------------------------------------------------------------------------------
run "$tmp/o" "$tmp/e" "$md" vm --kernel /no/such/bzImage -- true
check "memdbg vm with a missing kernel image: exit 2, says so" eval '[ $rc = 2 ] && grep -q "/no/such/bzImage does not exist" "$tmp/e"'
mkdir -p "$tmp/fakebuild"
cp "$md" "$build/memdbg-probe" "$build/libmemdbg.so" "$tmp/fakebuild/"
run "$tmp/o" "$tmp/e" "$tmp/fakebuild/memdbg" vm --kernel stock -- true
check "memdbg vm when the kernel is not built: exit 2, names the make target" \
	eval '[ $rc = 2 ] && grep -q "no stock kernel image at .*: build it with .make kernel-stock." "$tmp/e"'
kimg=
if [ -f "$build/kernel/obj-patched/arch/x86/boot/bzImage" ]; then kimg=patched
elif [ -n "${MEMDBG_TEST_KERNEL:-}" ] && [ -f "$MEMDBG_TEST_KERNEL" ]; then kimg=$MEMDBG_TEST_KERNEL
fi
if [ "$vm" = 0 ]; then
	skip "memdbg vm: status passed through from the patched guest, nonlinear backend" "--no-vm"
elif [ -z "$kimg" ]; then
	skip "memdbg vm: status passed through from the patched guest, nonlinear backend" "no patched kernel image (make kernel-patched)"
else
	# One boot: the status (3) comes back and the library ran its nonlinear backend.
	run "$tmp/o" "$tmp/vm.err" "$md" vm --kernel "$kimg" --options verbosity=1 -- sh -c 'echo in-guest; exit 3'
	show="$tmp/o $tmp/vm.err"
	check "memdbg vm --kernel patched: status 3 passed through, output back, nonlinear backend" \
		eval '[ $rc = 3 ] && grep -qx in-guest "$tmp/o" && grep -q "memdbg: backend nonlinear" "$tmp/vm.err"'
fi

# --- install / uninstall -------------------------------------------------------------------------
dest=$tmp/dest
run "$tmp/inst.out" "$tmp/inst.err" make -s -C "$repo" BUILD="$build" install DESTDIR="$dest" PREFIX=/usr
show="$tmp/inst.out $tmp/inst.err"
check "make install DESTDIR PREFIX=/usr: command, library, helpers, man pages, docs" \
	eval '[ $rc = 0 ] && [ -x "$dest/usr/bin/memdbg" ] && [ -f "$dest/usr/lib/memdbg/libmemdbg.so" ] &&
	      [ -x "$dest/usr/lib/memdbg/memdbg-probe" ] && [ -f "$dest/usr/share/man/man1/memdbg.1" ] &&
	      [ -f "$dest/usr/share/man/man7/libmemdbg.7" ] && [ -f "$dest/usr/share/man/man2/remap_file_pages.2memdbg" ] &&
	      [ -f "$dest/usr/share/doc/memdbg/docs/libmemdbg.md" ] && [ -f "$dest/usr/share/doc/memdbg/README.md" ] &&
	      [ -f "$dest/usr/share/man/man3/memdbg_freeze.3" ] && [ -f "$dest/usr/share/man/man3/memdbg_thaw.3" ]'
# <memdbg.h> and memdbg.pc: a program built with pkg-config links with no
# library and runs with or without memdbg.
printf '#include <memdbg.h>\n#include <stdio.h>\n#include <stdlib.h>\nint main(void){int *p=malloc(4);int r=memdbg_freeze(p);printf("%%d %%d\\n",memdbg_running(),r);free(p);return 0;}\n' >"$tmp/hdr.c"
PKG_CONFIG_PATH="$dest/usr/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$dest" \
	run "$tmp/o" "$tmp/e" sh -c 'cc -Wall -Werror $(pkg-config --cflags memdbg) "$1" -o "$2" $(pkg-config --libs memdbg)' sh "$tmp/hdr.c" "$tmp/hdr"
show="$tmp/e"
check "installed <memdbg.h> and memdbg.pc: a program builds with no library" eval '[ $rc = 0 ] && [ -x "$tmp/hdr" ]'
run "$tmp/o" "$tmp/e" "$tmp/hdr"
check "<memdbg.h> without memdbg: not running, freeze fails" eval '[ $rc = 0 ] && [ "$(cat "$tmp/o")" = "0 -1" ]'
run "$tmp/o" "$tmp/e" "$dest/usr/bin/memdbg" run -- "$tmp/hdr"
check "<memdbg.h> under the installed memdbg: running, freeze succeeds" eval '[ $rc = 0 ] && [ "$(cat "$tmp/o")" = "1 0" ]'
( cd / && "$dest/usr/bin/memdbg" run -- "$ex/uaf" ) >"$tmp/o" 2>"$tmp/inst.uaf" </dev/null
rc=$?
show="$tmp/inst.uaf"
check "installed memdbg run, from /: finds its library, reports the use-after-free" \
	eval '[ $rc = 1 ] && grep -q "heap-use-after-free" "$tmp/inst.uaf" && grep -q "in main examples/uaf.c:34" "$tmp/inst.uaf"'
ln -s "$dest/usr/bin/memdbg" "$tmp/memdbg-link"
( cd / && "$tmp/memdbg-link" run --options verbosity=1 -- true ) >"$tmp/o" 2>"$tmp/e" </dev/null
rc=$?
check "installed memdbg through a symlink: still finds its library" eval '[ $rc = 0 ] && grep -q "memdbg: backend" "$tmp/e"'
( cd / && "$dest/usr/bin/memdbg" maps --raw --options detect_leaks=0 -- "$ex/live_blocks" 50 24 --keep ) >"$tmp/o" 2>"$tmp/e" </dev/null
check "installed memdbg maps: its helpers are found next to the library" \
	eval '[ "$(kv "$tmp/o" heap_vmas)" = 1 ] && [ "$(kv "$tmp/o" live_blocks)" -ge 51 ]'
run "$tmp/o" "$tmp/e" "$dest/usr/bin/memdbg" --version
check "installed memdbg --version: the build's version" eval '[ "$(cat "$tmp/o")" = "$("$md" --version)" ]'
run "$tmp/o" "$tmp/e" env -u MEMDBG_REPO "$dest/usr/bin/memdbg" vm -- true
check "installed memdbg vm without a checkout: exit 2, says it needs one" \
	eval '[ $rc = 2 ] && grep -q "needs a memdbg checkout" "$tmp/e"'
run "$tmp/o" "$tmp/e" make -s -C "$repo" BUILD="$build" uninstall DESTDIR="$dest" PREFIX=/usr
show="$tmp/e"
check "make uninstall: removes every installed file" eval '[ $rc = 0 ] && [ -z "$(find "$dest" -type f)" ]'

# --- man pages ------------------------------------------------------------------------------
for page in docs/man/memdbg.1 docs/man/libmemdbg.7 docs/man/remap_file_pages.2 docs/man/memdbg_freeze.3; do
	if [ ! -f "$page" ]; then not_ok "man page $page renders without warnings" "missing"; continue; fi
	LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$page" >"$tmp/man.out" 2>"$tmp/man.err"
	rc=$?
	show="$tmp/man.err"
	check "man page $page renders without warnings" eval '[ $rc = 0 ] && [ ! -s "$tmp/man.err" ] && [ $(wc -l <"$tmp/man.out") -gt 40 ]'
done
python3 docs/man/md2man.py docs/remap_file_pages.2.md >"$tmp/rfp.2" 2>&1
show="$tmp/rfp.2"
check "docs/man/remap_file_pages.2 is what docs/man/md2man.py makes of docs/remap_file_pages.2.md (else: make man)" \
	cmp -s "$tmp/rfp.2" docs/man/remap_file_pages.2
python3 docs/man/md2man.py docs/memdbg_freeze.3.md >"$tmp/freeze.3" 2>&1
show="$tmp/freeze.3"
check "docs/man/memdbg_freeze.3 is what docs/man/md2man.py makes of docs/memdbg_freeze.3.md (else: make man)" \
	cmp -s "$tmp/freeze.3" docs/man/memdbg_freeze.3
check "memdbg(1) documents every subcommand and the exit statuses" \
	eval '( for c in run vm maps compare symbolize; do grep -q "^\.SS \"\{0,1\}$c" docs/man/memdbg.1 || exit 1; done; grep -q "^\.SH EXIT STATUS" docs/man/memdbg.1 )'
# The options docs are generated from memdbg/base/options.inc (make docs): the
# checked-in copies must be what the generator makes of the table now.
options=$(sed -n 's/^MD_OPTION\(_ALIAS\)\{0,1\}([A-Z]*, \([a-z_0-9]*\),.*/\2/p' memdbg/base/options.inc)
run "$tmp/options.md" "$tmp/gen.err" "$build/memdbg-options-doc" markdown
show="$tmp/gen.err"
check "docs/options.md is what memdbg-options-doc makes of memdbg/base/options.inc (else: make docs)" \
	eval '[ $rc = 0 ] && cmp -s "$tmp/options.md" docs/options.md'
run "$tmp/libmemdbg.7" "$tmp/gen.err" "$build/memdbg-options-doc" man docs/man/libmemdbg.7
check "libmemdbg(7)'s OPTIONS section is what memdbg-options-doc makes of memdbg/base/options.inc (else: make docs)" \
	eval '[ $rc = 0 ] && cmp -s "$tmp/libmemdbg.7" docs/man/libmemdbg.7'
show=
check "libmemdbg(7) and docs/options.md document every option of memdbg/base/options.inc" \
	eval '[ $(echo "$options" | wc -w) -ge 30 ] && for o in $options; do
	        grep -q "^\.BR $o " docs/man/libmemdbg.7 && grep -q "^| \`$o\` |" docs/options.md ||
	        { echo "# missing option $o"; exit 1; }; done'
sed '/^\.\\" BEGIN GENERATED OPTIONS/,$d' docs/man/libmemdbg.7 >"$tmp/man.head"
run "$tmp/o" "$tmp/gen.err" "$build/memdbg-options-doc" man "$tmp/man.head"
check "memdbg-options-doc man: a page without the generated-section markers is an error" \
	eval '[ $rc = 1 ] && grep -q "lacks the lines" "$tmp/gen.err"'

echo "1..$n"
[ "$failed" = 0 ]
