#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# How many VMAs remap_file_pages() leaves behind, and whether every page
# ends up where it was asked to be (examples/remap_reverse.c).
#   stock kernel:   the emulation adds one VMA per call and stops with
#                   ENOMEM near vm.max_map_count;
#   patched kernel: the mapping stays one VMA, however many remaps, and no
#                   call fails.
build=$1 flavour=$2
prog=$build/examples/remap_reverse
n=0 bad=0
ok() { n=$((n + 1)); echo "ok $n - $flavour: $1"; }
not_ok() { n=$((n + 1)); bad=$((bad + 1)); echo "not ok $n - $flavour: $1"; echo "# $2"; }
field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

if [ ! -x "$prog" ]; then
	echo "not ok 1 - $prog is missing (make examples)"
	echo "1..1"
	exit 1
fi

out=$($prog 1024)
if [ "$(field "$out" calls_ok)" = 1024 ] && [ "$(field "$out" mismatched)" = 0 ]; then
	ok "1024 reverse single-page remaps put every page in place"
else
	not_ok "1024 reverse single-page remaps put every page in place" "$out"
fi

max=$(cat /proc/sys/vm/max_map_count)
if [ "$flavour" = stock ]; then
	if [ "$(field "$out" vmas_after)" = 1024 ]; then
		ok "the stock emulation adds 1023 VMAs for 1024 remaps"
	else
		not_ok "the stock emulation adds 1023 VMAs for 1024 remaps" "$out"
	fi
	out=$($prog 70000)
	calls=$(field "$out" calls_ok)
	if [ "$(field "$out" error)" = ENOMEM ] && [ "$calls" -lt "$max" ] &&
		[ "$calls" -gt $((max - 1000)) ] && [ "$(field "$out" mismatched)" = 0 ]; then
		ok "70000 remaps fail with ENOMEM after $calls calls (vm.max_map_count=$max)"
	else
		not_ok "70000 remaps fail with ENOMEM near vm.max_map_count=$max" "$out"
	fi
fi
if [ "$flavour" != stock ]; then
	if [ "$(field "$out" vmas_after)" = 1 ]; then
		ok "1024 remaps leave the mapping one VMA"
	else
		not_ok "1024 remaps leave the mapping one VMA" "$out"
	fi
	out=$($prog 100000)
	if [ "$(field "$out" calls_ok)" = 100000 ] && [ "$(field "$out" vmas_after)" = 1 ] &&
		[ "$(field "$out" mismatched)" = 0 ]; then
		ok "100000 remaps (past vm.max_map_count=$max) succeed, one VMA, every page in place"
	else
		not_ok "100000 remaps succeed with one VMA and every page in place" "$out"
	fi
fi
echo "1..$n"
[ "$bad" = 0 ]
