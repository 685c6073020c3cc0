#!/bin/bash
# SPDX-License-Identifier: MIT
# Runs inside one guest boot (kernel/scripts/vm-run.sh): every thread
# cycling guard remaps against MADV_DONTNEED (bench_cycle_threads), then
# memdbg's threaded C++ workload with 1, 2 and 4 threads, each line with
# its wall seconds and the TLB shootdown interrupts it caused (the "TLB"
# row of /proc/interrupts, all CPUs).
#
#   guest-ipis.sh [ENTRIES_PER_THREAD]      default 1000
set -u
n=${1:-1000}
b=build
echo "# kernel $(uname -r), $(nproc) vCPUs"
"$b"/tests/kernel/bench_cycle_threads -r 3 -s 1 -k
tlb() { awk '$1 == "TLB:" { s = 0; for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/) s += $i; print s }' /proc/interrupts; }
for t in 1 2 4; do
	i0=$(tlb)
	s=$EPOCHREALTIME
	env LD_PRELOAD="$b"/libmemdbg.so MEMDBG_OPTIONS=backend=nonlinear:detect_leaks=0 \
		"$b"/tests/bench/cxx_map "$n" "$t" >/dev/null 2>&1
	rc=$?
	e=$EPOCHREALTIME
	printf 'wl cxx-map %s memdbg %.2f s rc=%d tlb_ipis=%d\n' "$t" "$(echo "$e - $s" | bc)" "$rc" $(($(tlb) - i0))
done
