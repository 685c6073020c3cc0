#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# kmemleak after the kernel tests (the debug kernel: CONFIG_DEBUG_KMEMLEAK
# with the automatic scan off, kernel/config/debug.config): two scans,
# then every unreferenced object whose allocation backtrace passes through
# the series' code fails the check, unless it is a known false positive
# (below, each with its reason).  Objects allocated elsewhere (early boot,
# drivers) are listed by count only: they are not the series' to fix, and
# one stray report must not fail the suite.
#
#   tests/kernel/kmemleak_check.sh   (prints TAP: one ok / not ok line)
km=/sys/kernel/debug/kmemleak
if [ ! -e "$km" ]; then
	echo "ok 1 - kmemleak # SKIP no $km (kernel without CONFIG_DEBUG_KMEMLEAK)"
	exit 0
fi
t0=$(date +%s)
# kmemleak turns itself off for good when it cannot allocate its own
# metadata or finds its state inconsistent; then it refuses to scan, and
# the run went unchecked: that fails, with kmemleak's reason.
scan() {
	if ! echo scan 2>/dev/null >"$km"; then
		dmesg | grep -i kmemleak | tail -n 5 | sed 's/^/# /'
		echo "not ok 1 - kmemleak: the scan was refused (kmemleak disabled itself)"
		exit 1
	fi
}
# An object younger than kmemleak's minimum age (5 s) is never reported,
# and one found unreferenced in a single scan may be a pointer in flight:
# report what stays unreferenced over two scans.
scan
sleep 6
scan
t1=$(date +%s)
report=$(cat "$km")
total=$(printf '%s\n' "$report" | grep -c '^unreferenced object')
# The series' functions: mm/nonlinear_index.c, the nonlinear paths of
# mm/memory.c, mm/mmap.c, mm/rmap.c, mm/madvise.c and fs/proc/task_mmu.c.
# Known false positives, matched on the backtrace, with their reason:
#   (none so far)
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
