#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make demo: the stock 6.12 kernel next to memdbg's patched one.
#
# 1. remap_file_pages() VMA counts: build/examples/remap_reverse remaps N
#    pages of a memfd mapping in reverse order, one page per call, in a
#    stock guest and in a patched guest, and the table shows the VMAs each
#    kernel needed and where the stock emulation gives up.
# 2. Page-guard debuggers with many live blocks: build/examples/live_blocks
#    keeps N blocks alive under glibc, Electric Fence, DUMA and libmemdbg,
#    and the table shows the lines of /proc/PID/maps and the cost per malloc,
#    or where the debugger gave up, on the host (memdbg's fallback backend).
# 3. The same for memdbg's nonlinear backend in the patched guest: the heap
#    stays one VMA however many blocks are live.
# 4. A caught bug: examples/uaf.c keeps a pointer into a table that
#    realloc() moves; `memdbg run` shows memdbg's full, symbolized report
#    (and with memdbg-symbolize built, the same from a symbolize=0 log).
# 5. `memdbg compare` of one program (40000 live blocks) under glibc,
#    memdbg, Electric Fence and DUMA: peak mappings, RSS, time, and how
#    each run ended.
# 6. A frozen block: examples/frozen_table.c freezes a table once it is
#    built (memdbg_freeze from <memdbg.h>); a stray write into it goes
#    unnoticed under glibc and is reported with its writer under memdbg.
# About 2-3 minutes after the builds (TCG guests on 2 cores).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
build=${BUILD:-build}
# no_timer_check: on a loaded host a TCG guest can fail the kernel's
# IO-APIC timer check and panic at boot.
vm="kernel/scripts/vm-run.sh --append no_timer_check"
sizes=${DEMO_PAGES:-"1024 10000 70000"}
prog=$build/examples/remap_reverse
[ -x "$prog" ] || { echo "demo: $prog is missing: run make examples" >&2; exit 1; }

field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
heading() { # number title what-it-shows
	echo
	echo "=== Part $1 of 6: $2"
	echo "    $3"
	echo
}
demo_start=$(date +%s)

heading 1 "remap_file_pages() on the stock and the patched kernel" \
	"How many VMAs one memfd mapping needs when its pages are put in reverse order: one per page on stock, one in all on patched."

guest_cmd=""
for n in $sizes; do
	guest_cmd+="$prog $n; "
done
guest_cmd+="echo max_map_count=\$(cat /proc/sys/vm/max_map_count)"

declare -A out
for kernel in stock patched; do
	echo "demo: booting the $kernel kernel in QEMU and remapping $sizes pages ..." >&2
	if ! out[$kernel]=$($vm --kernel "$kernel" -- "$guest_cmd"); then
		# remap_reverse exits 1 when a call fails; that is the point of the
		# stock run, so only a runner failure (no output) is fatal.
		[ -n "${out[$kernel]}" ] || { echo "demo: the $kernel guest failed" >&2; exit 1; }
	fi
done

release() { field "$(printf '%s\n' "${out[$1]}" | head -1)" kernel; }
result() {
	local line=$1
	if [ "$(field "$line" error)" = none ]; then
		echo "ok"
	else
		echo "$(field "$line" error) at call $(($(field "$line" calls_ok) + 1))"
	fi
}

echo
echo "remap_file_pages(): N pages of one memfd mapping put in reverse order, one page per call"
echo "(vm.max_map_count = $(printf '%s\n' "${out[stock]}" | sed -n 's/^max_map_count=//p'))"
echo
printf '%-8s | %-30s | %-30s\n' "" "stock $(release stock)" "patched $(release patched)"
printf '%-8s | %-8s %-21s | %-8s %-21s\n' pages VMAs result VMAs result
printf -- '---------+--------------------------------+-------------------------------\n'
i=1
for n in $sizes; do
	s=$(printf '%s\n' "${out[stock]}" | sed -n "${i}p")
	p=$(printf '%s\n' "${out[patched]}" | sed -n "${i}p")
	printf '%-8s | %-8s %-21s | %-8s %-21s\n' "$n" \
		"$(field "$s" vmas_after)" "$(result "$s")" "$(field "$p" vmas_after)" "$(result "$p")"
	i=$((i + 1))
done
echo
echo "VMAs: lines of /proc/PID/maps covering the mapping after the remaps (1 before)."

# --- 2. live blocks under page-guard debuggers ---------------------------------
heading 2 "live heap blocks under page-guard debuggers, on this host" \
	"Electric Fence and DUMA pay two VMAs per live block and abort near vm.max_map_count; memdbg's heap stays one mapping."
blocks=${DEMO_BLOCKS:-"1000 10000 40000 200000"}
lb=$build/examples/live_blocks
lib=$PWD/$build/libmemdbg.so
[ -x "$lb" ] || { echo "demo: $lb is missing: run make examples" >&2; exit 1; }

# One cell: "maps_lines / ns per malloc", or what stopped the program.
cell() { # preload-library-or-empty, blocks
	local out rc=0
	out=$(env ${1:+LD_PRELOAD=$1} EF_ALLOW_MALLOC_0=1 MEMDBG_OPTIONS=detect_leaks=0 \
		timeout 300 "$lb" "$2" 2>&1) || rc=$?
	local line
	line=$(printf '%s\n' "$out" | grep '^blocks=' | tail -1)
	if [ "$rc" = 0 ] && [ -n "$line" ]; then
		awk -v m="$(field "$line" maps_lines)" -v ns="$(field "$line" ns_per_malloc)" \
			'BEGIN { printf "%s maps, %.1f us\n", m, ns / 1000 }'
	elif [ "$rc" = 124 ]; then
		echo "timeout"
	elif printf '%s' "$out" | grep -q 'mprotect() failed\|mmap() failed\|Cannot allocate'; then
		echo "ENOMEM, aborted"
	else
		echo "failed ($rc)"
	fi
}

echo
echo "Live heap blocks (24 bytes each) kept at once, on the host ($(uname -r)):"
echo "lines of /proc/PID/maps at the peak, and time per malloc"
echo
printf '%-8s | %-20s | %-20s | %-20s | %-20s\n' blocks glibc "Electric Fence" DUMA memdbg
printf -- '---------+----------------------+----------------------+----------------------+---------------------\n'
for n in $blocks; do
	printf '%-8s | %-20s | %-20s | %-20s | %-20s\n' "$n" "$(cell "" "$n")" \
		"$(cell /usr/lib/libefence.so "$n")" "$(cell /usr/lib/libduma.so "$n")" \
		"$( [ -f "$lib" ] && cell "$lib" "$n" || echo "not built")"
done
echo
echo "Electric Fence and DUMA need two VMAs per live block and abort near vm.max_map_count;"
echo "memdbg's whole heap is one of its lines (the others are the program and its libraries)."
echo "memdbg backend here: $(MEMDBG_OPTIONS=verbosity=1 LD_PRELOAD=$lib "$lb" 1 2>&1 | sed -n 's/.*memdbg: backend \([a-z]*\).*/\1/p' | head -1)"

# --- 3. memdbg on the patched kernel ---------------------------------------------
gblocks=${DEMO_GUEST_BLOCKS:-"1000 10000 200000"}
gcmd=""
for n in $gblocks; do
	gcmd+="echo n=$n; MEMDBG_OPTIONS=backend=nonlinear:detect_leaks=0 LD_PRELOAD=$lib $lb $n 2>&1 | grep '^blocks=' | tail -1; "
done
heading 3 "memdbg's nonlinear backend in the patched guest" \
	"The same program with remap_file_pages + MAP_CHGPROT: guards without VMAs, up to $(echo $gblocks | awk '{print $NF}') live blocks."
echo "demo: booting the patched kernel again for memdbg's nonlinear backend ($gblocks live blocks) ..." >&2
gout=$($vm --kernel patched --mem 3072 --timeout 900 -- "$gcmd") || true
echo "memdbg on the patched kernel (backend nonlinear: remap_file_pages + MAP_CHGPROT),"
echo "same program: lines of /proc/PID/maps at the peak, and time per malloc (TCG guest)"
echo
printf '%-8s | %-30s\n' blocks "memdbg nonlinear"
printf -- '---------+-------------------------------\n'
for n in $gblocks; do
	line=$(printf '%s\n' "$gout" | sed -n "/^n=$n\$/{n;p}")
	if [ -n "$line" ]; then
		cellv=$(awk -v m="$(field "$line" maps_lines)" -v ns="$(field "$line" ns_per_malloc)" \
			'BEGIN { printf "%s maps, %.1f us", m, ns / 1000 }')
	else
		cellv="failed"
	fi
	printf '%-8s | %-30s\n' "$n" "$cellv"
done
echo
echo "The maps count is the same at every size: the heap is one VMA, guards included."

# --- 4. a caught bug ---------------------------------------------------------------
md=$build/memdbg
uaf=$build/examples/uaf
heading 4 "a use-after-free caught (examples/uaf.c)" \
	"A pointer into a table that realloc() moved: glibc prints stale data and exits 0; memdbg stops at the read."
if [ -x "$md" ] && [ -x "$uaf" ]; then
	echo "\$ $uaf"
	"$uaf"
	echo "(exit status $?: the bug went unnoticed)"
	echo
	echo "\$ $md run -- $uaf"
	"$md" run -- "$uaf" 2>&1
	echo "(exit status $?: memdbg's report names the read at uaf.c:34, the realloc that freed the"
	echo " table at uaf.c:21 called from line 33, and the one that made it, called from line 30)"
	if [ -x "$build/memdbg-symbolize" ]; then
		echo
		echo "The same report written without symbols (symbolize=0: module+offset per frame),"
		echo "symbolized afterwards by memdbg symbolize, first frames:"
		"$md" run --options symbolize=0 -- "$uaf" 2>"$build/demo-uaf.log" >/dev/null
		"$md" symbolize <"$build/demo-uaf.log" | grep -m 3 '#[0-9]'
	fi
else
	echo "demo: $md or $uaf is missing: run make" >&2
fi

# --- 5. memdbg compare ------------------------------------------------------------
cblocks=${DEMO_COMPARE_BLOCKS:-40000}
heading 5 "memdbg compare -- live_blocks $cblocks" \
	"One command, four allocators: peak /proc/PID/maps lines and VMAs, peak RSS, CPU and wall time, and how each run ended."
echo "\$ $md compare -- $lb $cblocks 24 --keep"
"$md" compare -- "$lb" "$cblocks" 24 --keep

# --- 6. a frozen block --------------------------------------------------------------
ft=$build/examples/frozen_table
heading 6 "a stray write into a frozen table (examples/frozen_table.c)" \
	"The table is frozen once built (memdbg_freeze); glibc prints a wrong total, memdbg names the writer."
if [ -x "$ft" ]; then
	echo "\$ $ft"
	"$ft"
	echo "(exit status $?: without memdbg the freeze is a no-op and the bug goes unnoticed)"
	echo
	echo "\$ $md run -- $ft"
	"$md" run -- "$ft" 2>&1
	echo "(exit status $?: the write at frozen_table.c:34, the freeze at line 41, the table's malloc"
	echo " at line 20)"
else
	echo "demo: $ft is missing: run make" >&2
fi
echo
echo "demo: done in $(( $(date +%s) - demo_start )) s."
