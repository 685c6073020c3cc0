#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# kmemleak after the kernel tests (a kernel with CONFIG_DEBUG_KMEMLEAK and
# the automatic scan off): two scans, then every unreferenced object whose
# allocation backtrace passes through the series' code fails the check.
# Objects allocated elsewhere (early boot, drivers, xarray and maple nodes
# kmemleak cannot see referenced) are listed by count only: they are not
# the series' to fix, and one stray report must not fail the suite.
#
#   tests/kernel/kmemleak_check.sh   (prints TAP: one ok / not ok line)
km=/sys/kernel/debug/kmemleak
if [ ! -w "$km" ]; then
	echo "ok 1 - kmemleak # SKIP no $km (kernel without CONFIG_DEBUG_KMEMLEAK)"
	exit 0
fi
t0=$(date +%s)
# An object younger than kmemleak's minimum age (5 s) is never reported,
# and one found unreferenced in a single scan may be a pointer in flight:
# report what stays unreferenced over two scans.
echo scan >"$km"
sleep 6
echo scan >"$km"
t1=$(date +%s)
report=$(cat "$km")
total=$(printf '%s\n' "$report" | grep -c '^unreferenced object')
# The series' functions: mm/nonlinear_index.c, the nonlinear paths of
# mm/memory.c, mm/mmap.c, mm/rmap.c, mm/madvise.c and fs/proc/task_mmu.c.
ours=$(printf '%s\n' "$report" | awk '
	/^unreferenced object/ { if (blk != "" && hit) { n++; out = out blk } blk = $0 "\n"; hit = 0; next }
	{ blk = blk $0 "\n" }
	/ (nonlinear_[a-z_]+|nl_[a-z_]+|remap_file_pages[a-z_]*|smaps_nonlinear[a-z_]*|rmap_(walk|scan)_nonlinear[a-z_]*)\+0x/ { hit = 1 }
	END { if (blk != "" && hit) { n++; out = out blk } printf "%d\n%s", n, out }')
count=$(printf '%s\n' "$ours" | head -n 1)
echo "# kmemleak: 2 scans in $((t1 - t0)) s, $total unreferenced objects, $count from the series"
if [ "$count" = 0 ]; then
	echo "ok 1 - kmemleak: no unreferenced object allocated by the series"
	exit 0
fi
printf '%s\n' "$ours" | sed -n '2,80s/^/# /p'
echo "not ok 1 - kmemleak: $count unreferenced objects allocated by the series"
exit 1
