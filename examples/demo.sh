#!/usr/bin/env bash
# make demo: the stock 6.12 kernel next to memdbg's patched one.
#
# 1. remap_file_pages() VMA counts: build/examples/remap_reverse remaps N
#    pages of a memfd mapping in reverse order, one page per call, in a
#    stock guest and in a patched guest, and the table shows the VMAs each
#    kernel needed and where the stock emulation gives up.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
build=${BUILD:-build}
vm=kernel/scripts/vm-run.sh
sizes=${DEMO_PAGES:-"1024 10000 70000"}
prog=$build/examples/remap_reverse
[ -x "$prog" ] || { echo "demo: $prog is missing: run make examples" >&2; exit 1; }

field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

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
