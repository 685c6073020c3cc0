#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The memcg row, run INSIDE a patched guest (tests/kernel/bench.sh
# --parts memcg boots one): memdbg holding BLOCKS live blocks
# (build/tests/kernel/bench_memcg_heap) under a cgroup2 memory.max of a
# quarter of its RSS, with swap, on the nonlinear backend (one VMA) and on
# the mprotect backend (one VMA per block and guard, so vm.max_map_count
# is raised to MAX_MAP for it).
#
#   1. sizing: nonlinear without a limit, in its own cgroup; RSS = VmHWM
#   2. nonlinear with memory.max = RSS / 4
#   3. mprotect with the same memory.max
#   4. if that fails (its ~2 VMAs per block are kernel memory, which swap
#      cannot free): mprotect without a limit, then with memory.max = its
#      RSS / 4 + its cgroup "kernel" charge; --mprotect-only runs 1 and 4
#   (5. with --unlimited: mprotect without a limit too)
#
# Each run is in a fresh cgroup (so memory.peak is its own); the table has
# wall seconds, the program's own phase seconds, VmHWM, the cgroup's
# memory.peak and swap peak, and oom kills; then the time ratio of 2 over 3
# (goal: at most 2x).  The program checks every block's contents each
# round and exits 1 on a mismatch.
#
#   tests/kernel/bench_memcg.sh [--build DIR] [--blocks N] [--rounds R]
#                               [--every F] [--max-map N] [--unlimited] [--mprotect-only]
#                               [--divisor D]   (memory.max = RSS / D, default 4)
#                               [--nonlinear-only]   (runs 1 and 2)
set -uo pipefail

build=build
blocks=300000
rounds=3
every=10
max_map=1048576
unlimited=0
mprotect_only=0
nonlinear_only=0
divisor=4
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	--blocks) blocks=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--every) every=$2; shift 2 ;;
	--max-map) max_map=$2; shift 2 ;;
	--unlimited) unlimited=1; shift ;;
	--mprotect-only) mprotect_only=1; shift ;;
	--divisor) divisor=$2; shift 2 ;;
	--nonlinear-only) nonlinear_only=1; shift ;;
	-h | --help) sed -n '2,27s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "$0: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
build=$(cd "$build" && pwd) || exit 2
prog=$build/tests/kernel/bench_memcg_heap
lib=$build/libmemdbg.so
for f in "$prog" "$lib"; do
	[ -e "$f" ] || { echo "$0: $f is missing (make lib kernel-bench)" >&2; exit 2; }
done
cg=/sys/fs/cgroup
[ -w $cg/cgroup.subtree_control ] || { echo "$0: no writable cgroup2 at $cg" >&2; exit 2; }
echo +memory >$cg/cgroup.subtree_control || exit 2
swap_kb=$(awk '/^SwapTotal:/ { print $2 }' /proc/meminfo)
echo "# guest $(uname -r), $(nproc) CPUs, MemTotal $(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) KiB, swap $swap_kb KiB"
echo "# bench_memcg_heap -n $blocks -r $rounds -f $every (every ${every}th block reallocated per round, all checked)"
[ "${swap_kb:-0}" -gt 0 ] || { echo "$0: no swap in this guest" >&2; exit 2; }

cgval() { cat "$1" 2>/dev/null || echo n/a; }
events() { awk -v k="$2" '$1 == k { print $2 }' "$1/memory.events" 2>/dev/null; }

# run NAME BACKEND LIMIT(bytes or max): one run in a fresh cgroup; prints a
# table row and leaves "NAME wall hwm" in $out
out=$(mktemp)
status=0
run() {
	local name=$1 backend=$2 limit=$3 dir=$cg/bench_memcg_$1 log t0 t1 rc line
	log=$(mktemp)
	mkdir "$dir" || return 1
	echo "$limit" >"$dir/memory.max"
	t0=$(date +%s.%N)
	sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$dir" \
		env LD_PRELOAD="$lib" MEMDBG_OPTIONS="backend=$backend:detect_leaks=0" \
		"$prog" -n "$blocks" -r "$rounds" -f "$every" >"$log" 2>&1
	rc=$?
	t1=$(date +%s.%N)
	line=$(grep '^benchmemcg ' "$log")
	sed 's/^/#   /' "$log" | grep -v '^#   benchmemcg '
	printf '%-22s %-9s %10s %8.1f  %s peak=%s swap_peak=%s oom_kill=%s rc=%s\n' "$name" "$backend" \
		"$([ "$limit" = max ] && echo max || echo $((limit >> 20))M)" \
		"$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')" "${line#benchmemcg }" \
		"$(($(cgval "$dir/memory.peak") >> 20))M" \
		"$(v=$(cgval "$dir/memory.swap.peak"); [ "$v" = n/a ] && echo n/a || echo $((v >> 20))M)" \
		"$(events "$dir" oom_kill)" "$rc"
	hwm=$(sed -n 's/.*hwm_kb=\([0-9]*\).*/\1/p' <<<"$line")
	kern=$(sed -n 's/.*cg_kernel_kb=\([0-9-]*\).*/\1/p' <<<"$line")
	echo "$name $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') ${hwm:-0} $rc ${kern:-0}" >>"$out"
	rmdir "$dir"
	rm -f "$log"
	[ "$rc" = 0 ] || status=1
}

printf '%-22s %-9s %10s %8s  %s\n' run backend memory.max wall_s "program figures (s, KiB), cgroup peaks"
field() { awk -v n="$1" -v f="$2" '$1 == n { print $f }' "$out"; }
run sizing nonlinear max
hwm_kb=$(field sizing 3)
[ "${hwm_kb:-0}" -gt 0 ] || { echo "$0: the sizing run gave no VmHWM" >&2; exit 1; }
limit=$((hwm_kb * 1024 / divisor))
[ "$mprotect_only" = 1 ] || run limited_nonlinear nonlinear $limit
old_max=$(cat /proc/sys/vm/max_map_count)
echo "$max_map" >/proc/sys/vm/max_map_count
[ "$mprotect_only" = 1 ] || [ "$nonlinear_only" = 1 ] || run limited_mprotect mprotect $limit
# The mprotect heap's VMAs are unswappable kernel memory: if it did not
# fit, give it a quarter of its own RSS plus its own kernel charge.
if [ "$nonlinear_only" != 1 ] && { [ "$mprotect_only" = 1 ] || [ "$(field limited_mprotect 4)" != 0 ]; }; then
	run sizing_mprotect mprotect max
	limit_k=$(( ($(field sizing_mprotect 3) / divisor + $(field sizing_mprotect 5)) * 1024 ))
	run limited_mprotect_k mprotect $limit_k
fi
[ "$unlimited" = 1 ] && run unlimited_mprotect mprotect max
echo "$old_max" >/proc/sys/vm/max_map_count

awk -v blocks="$blocks" -v d="$divisor" '
	{ wall[$1] = $2; hwm[$1] = $3; rc[$1] = $4; kern[$1] = $5; seen[$1] = 1 }
	END {
		printf "== memcg row: %d live blocks; unlimited: nonlinear VmHWM %d MiB, cgroup kernel charge %d MiB",
			blocks, hwm["sizing"] / 1024, kern["sizing"] / 1024
		if ("sizing_mprotect" in seen)
			printf "; mprotect VmHWM %d MiB, kernel charge %d MiB", hwm["sizing_mprotect"] / 1024,
				kern["sizing_mprotect"] / 1024
		printf "\n"
		if ("limited_nonlinear" in seen)
			printf "nonlinear at memory.max = its VmHWM/%d (%d MiB): %s\n", d, hwm["sizing"] / d / 1024,
				rc["limited_nonlinear"] == 0 ? sprintf("%.1f s", wall["limited_nonlinear"]) : "failed, status " rc["limited_nonlinear"]
		if ("limited_mprotect" in seen)
			printf "mprotect at the same memory.max: %s\n",
				rc["limited_mprotect"] == 0 ? sprintf("%.1f s", wall["limited_mprotect"]) : "failed, status " rc["limited_mprotect"]
		if ("limited_mprotect_k" in seen)
			printf "mprotect at its VmHWM/%d + its kernel charge (%d MiB): %s\n", d,
				(hwm["sizing_mprotect"] / d + kern["sizing_mprotect"]) / 1024,
				rc["limited_mprotect_k"] == 0 ? sprintf("%.1f s", wall["limited_mprotect_k"]) : "failed, status " rc["limited_mprotect_k"]
		m = rc["limited_mprotect"] == 0 && ("limited_mprotect" in seen) ? "limited_mprotect" : "limited_mprotect_k"
		if (rc["limited_nonlinear"] == 0 && (m in seen) && rc[m] == 0 && ("limited_nonlinear" in seen))
			printf "ratio nonlinear / mprotect (%s): %.2f (goal <= 2)\nbenchmemcgrow blocks=%d nonlinear_s=%.1f mprotect_s=%.1f ratio=%.3f\n",
				m, wall["limited_nonlinear"] / wall[m], blocks, wall["limited_nonlinear"], wall[m],
				wall["limited_nonlinear"] / wall[m]
	}' "$out"
rm -f "$out"
exit $status
