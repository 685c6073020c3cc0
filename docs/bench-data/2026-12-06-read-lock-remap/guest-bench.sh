#!/bin/bash
# SPDX-License-Identifier: MIT
# Runs inside one guest boot (kernel/scripts/vm-run.sh): the fault rate of
# a thread next to guard remaps (bench_fault_remap), then the allocator's
# multi-threaded workloads plain, under memdbg's nonlinear backend and
# under valgrind, with 1, 2 and 4 threads.  Wall seconds come from
# bash's $EPOCHREALTIME; each line is "workload threads tool seconds rc".
#
#   guest-bench.sh [ENTRIES_PER_THREAD]      default 4000
set -u
n=${1:-4000}
b=build
echo "# kernel $(uname -r), $(nproc) vCPUs"
"$b"/tests/kernel/bench_fault_remap -r 3 -k
run() { # workload threads tool command...
	local w=$1 t=$2 tool=$3 s e rc
	shift 3
	s=$EPOCHREALTIME
	"$@" >/dev/null 2>&1
	rc=$?
	e=$EPOCHREALTIME
	printf 'wl %s %s %s %.2f %d\n' "$w" "$t" "$tool" "$(echo "$e - $s" | bc)" "$rc"
}
lib=$b/libmemdbg.so
opts=backend=nonlinear:detect_leaks=0
for t in 1 2 4; do
	run cxx-map "$t" plain "$b"/tests/bench/cxx_map "$n" "$t"
	run cxx-map "$t" memdbg env LD_PRELOAD="$lib" MEMDBG_OPTIONS="$opts" "$b"/tests/bench/cxx_map "$n" "$t"
	run cxx-map "$t" valgrind valgrind -q "$b"/tests/bench/cxx_map "$n" "$t"
done
run t_threads 4 plain "$b"/tests/lib/t_threads
run t_threads 4 memdbg env LD_PRELOAD="$lib" MEMDBG_OPTIONS="$opts" "$b"/tests/lib/t_threads
run t_threads 4 valgrind valgrind -q "$b"/tests/lib/t_threads
