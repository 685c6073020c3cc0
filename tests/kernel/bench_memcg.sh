#!/usr/bin/env bash
# Issue 11's memcg row, run INSIDE a patched guest (tests/kernel/bench.sh
# --parts memcg boots one): memdbg holding BLOCKS live blocks
# (build/tests/kernel/bench_memcg_heap) under a cgroup2 memory.max of a
# quarter of its RSS, with swap, on the nonlinear backend (one VMA) and on
# the mprotect backend (one VMA per block and guard, so vm.max_map_count
# is raised to MAX_MAP for it).
#
#   1. sizing: nonlinear without a limit, in its own cgroup; RSS = VmHWM
#   2. nonlinear with memory.max = RSS / 4
#   3. mprotect with the same memory.max
#   (4. with --unlimited: mprotect without a limit too)
#
# Each run is in a fresh cgroup (so memory.peak is its own); the table has
# wall seconds, the program's own phase seconds, VmHWM, the cgroup's
# memory.peak and swap peak, and oom kills; then the time ratio of 2 over 3
# (goal: at most 2x).  The program checks every block's contents each
# round and exits 1 on a mismatch.
#
#   tests/kernel/bench_memcg.sh [--build DIR] [--blocks N] [--rounds R]
#                               [--every F] [--max-map N] [--unlimited]
set -uo pipefail

build=build
blocks=300000
rounds=3
every=10
max_map=1048576
unlimited=0
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	--blocks) blocks=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--every) every=$2; shift 2 ;;
	--max-map) max_map=$2; shift 2 ;;
	--unlimited) unlimited=1; shift ;;
	-h | --help) sed -n '2,21s/^# \{0,1\}//p' "$0"; exit 0 ;;
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
	echo "$name $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') $(sed -n 's/.*hwm_kb=\([0-9]*\).*/\1/p' <<<"$line") $rc" >>"$out"
	rmdir "$dir"
	rm -f "$log"
	[ "$rc" = 0 ] || status=1
}

printf '%-22s %-9s %10s %8s  %s\n' run backend memory.max wall_s "program figures (s, KiB), cgroup peaks"
run sizing nonlinear max
hwm_kb=$(awk '$1 == "sizing" { print $3 }' "$out")
[ -n "$hwm_kb" ] || { echo "$0: the sizing run gave no VmHWM" >&2; exit 1; }
limit=$((hwm_kb * 1024 / 4))
run limited_nonlinear nonlinear $limit
old_max=$(cat /proc/sys/vm/max_map_count)
echo "$max_map" >/proc/sys/vm/max_map_count
run limited_mprotect mprotect $limit
[ "$unlimited" = 1 ] && run unlimited_mprotect mprotect max
echo "$old_max" >/proc/sys/vm/max_map_count

awk -v blocks="$blocks" '
	{ wall[$1] = $2; hwm[$1] = $3; rc[$1] = $4 }
	END {
		printf "== memcg row: %d live blocks, memory.max = VmHWM/4 = %d MiB (VmHWM %d MiB unlimited)\n",
			blocks, hwm["sizing"] / 4 / 1024, hwm["sizing"] / 1024
		if (rc["limited_nonlinear"] != 0 || rc["limited_mprotect"] != 0) {
			printf "limited runs did not both complete (status nonlinear %s, mprotect %s)\n",
				rc["limited_nonlinear"], rc["limited_mprotect"]
			exit
		}
		printf "nonlinear %.1f s, mprotect %.1f s: ratio %.2f (goal <= 2)\n",
			wall["limited_nonlinear"], wall["limited_mprotect"],
			wall["limited_nonlinear"] / wall["limited_mprotect"]
		printf "benchmemcgrow blocks=%d limit_kb=%d nonlinear_s=%.1f mprotect_s=%.1f ratio=%.3f\n",
			blocks, hwm["sizing"] / 4, wall["limited_nonlinear"], wall["limited_mprotect"],
			wall["limited_nonlinear"] / wall["limited_mprotect"]
	}' "$out"
rm -f "$out"
exit $status
