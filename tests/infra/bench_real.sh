#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# TAP sanity test of make bench's real-program part (tests/bench-real.sh)
# and of its measuring wrapper, so that neither rots between benchmark
# runs: what bench-run reports (exit status, signal, timeout, CPU and RSS
# of a grandchild, maps lines), the list of runs of --dry-run, and one
# tiny workload run plain.  A few seconds; no guest.
#   tests/infra/bench_real.sh [--build DIR]
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
build=build
[ "${1:-}" = --build ] && build=$2
run=$build/tests/bench/bench-run
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; shift; [ $# -gt 0 ] && sed 's/^/# /' "$@" | head -20; }
check() { # description file grep-pattern: the file has a line matching the extended regexp
	if grep -qE -- "$3" "$2"; then ok "$1"; else not_ok "$1" "$2"; fi
}
kv() { tr ' ' '\n' <"$1" | sed -n "s/^$2=//p"; }

if [ ! -x "$run" ]; then
	echo "1..1"
	echo "not ok 1 - $run is missing (make tests builds it)"
	exit 1
fi
echo "1..14"

"$run" --out "$tmp/r" -- sh -c 'exit 3' >/dev/null 2>&1
check "bench-run: a program's exit status" "$tmp/r" '^status=exit_3 '
"$run" --out "$tmp/r" -- sh -c 'kill -SEGV $$' >/dev/null 2>&1
check "bench-run: death by a signal is named" "$tmp/r" '^status=SIGSEGV '
start=$(date +%s)
"$run" --out "$tmp/r" --timeout 1 -- sh -c 'sleep 30; echo late' >"$tmp/out" 2>&1
if grep -q '^status=timeout ' "$tmp/r" && [ $(($(date +%s) - start)) -lt 10 ] && ! grep -q late "$tmp/out"; then
	ok "bench-run: --timeout kills the whole process group and says timeout"
else
	not_ok "bench-run: --timeout kills the whole process group and says timeout" "$tmp/r" "$tmp/out"
fi
# CPU time and peak RSS of a grandchild (as gcc's cc1): 60 MB of string in
# perl, spun for a while, under a shell that forks it.
"$run" --out "$tmp/r" -- sh -c 'perl -e '\''$x = "a" x 60e6; $i = 0; $i++ while $i < 2e6; print length($x), "\n"'\''; true' >/dev/null 2>&1
rss=$(kv "$tmp/r" maxrss_kb) cpu=$(kv "$tmp/r" cpu_s)
if [ "${rss:-0}" -ge 60000 ] && awk -v c="${cpu:-0}" 'BEGIN { exit !(c >= 0.02) }'; then
	ok "bench-run: CPU time and peak RSS include a grandchild (${rss} kB, ${cpu} s)"
else
	not_ok "bench-run: CPU time and peak RSS include a grandchild" "$tmp/r"
fi
# a grandchild killed at the timeout, never reaped by its parent (as cc1
# under gcc): its CPU time still counts
"$run" --out "$tmp/r" --timeout 1.5 -- sh -c 'perl -e "1 while 1"; true' >/dev/null 2>&1
cpu=$(kv "$tmp/r" cpu_s)
if grep -q '^status=timeout ' "$tmp/r" && awk -v c="${cpu:-0}" 'BEGIN { exit !(c >= 0.05) }'; then
	ok "bench-run: CPU time of a grandchild killed at the timeout (${cpu} s)"
else
	not_ok "bench-run: CPU time of a grandchild killed at the timeout" "$tmp/r"
fi
# maps lines of the largest process of the group: a grandchild with 300
# shared anonymous mappings (each its own shmem object: they cannot merge)
"$run" --out "$tmp/r" -- sh -c '/usr/bin/python3 -c "
import mmap, time
ms = [mmap.mmap(-1, 4096) for i in range(300)]
time.sleep(2)
"; true' >/dev/null 2>&1
lines=$(kv "$tmp/r" peak_maps)
if [ "${lines:-0}" -ge 300 ]; then ok "bench-run: peak maps lines of a grandchild ($lines)"; else not_ok "bench-run: peak maps lines of a grandchild" "$tmp/r"; fi

# --dry-run: the list of runs, numbered, with the fair-comparison settings
tests/bench-real.sh --build "$build" --host-only --dry-run >"$tmp/dry" 2>&1
runs=$(grep -c '^\[[0-9]*/[0-9]*\] ' "$tmp/dry")
total=$(sed -n 's/^\[1\/\([0-9]*\)\].*/\1/p' "$tmp/dry")
if [ "$runs" -ge 28 ] && [ "$runs" = "$total" ] && [ $((runs % 7)) = 0 ]; then
	ok "bench-real --dry-run lists $runs runs, 7 workloads"
else
	not_ok "bench-real --dry-run lists every run (7 workloads x tools)" "$tmp/dry"
fi
# --tools takes a comma-separated list (it once ran the whole list as one
# tool); valgrind brings its own plain baseline at valgrind's smaller scale
tests/bench-real.sh --build "$build" --host-only --dry-run --only perl-hash --tools plain,valgrind >"$tmp/dry2" 2>&1
if [ "$(grep -c '^\[[0-9]/3\] perl-hash \(plain\|plain-vg\|valgrind\): ' "$tmp/dry2")" = 3 ]; then
	ok "bench-real --tools plain,valgrind: plain, valgrind and valgrind's plain baseline"
else
	not_ok "bench-real --tools plain,valgrind: plain, valgrind and valgrind's plain baseline" "$tmp/dry2"
fi
check "bench-real: memdbg runs without the leak check" "$tmp/dry" '^\[[0-9/]*\] perl-hash memdbg-[a-z]*: env LD_PRELOAD=[^ ]*libmemdbg.so MEMDBG_OPTIONS=backend=[a-z]*:detect_leaks=0 perl'
check "bench-real: valgrind follows children, no leak check" "$tmp/dry" '^\[[0-9/]*\] gcc-O2 valgrind: valgrind .*--leak-check=no --trace-children=yes .*gcc -O2'
check "bench-real: python with PYTHONMALLOC=malloc" "$tmp/dry" 'python-objs plain: env env PYTHONMALLOC=malloc '
tests/bench-real.sh --build "$build" --only nope --dry-run >/dev/null 2>&1
if [ $? = 2 ]; then ok "bench-real: an unknown workload is a usage error"; else not_ok "bench-real: an unknown workload is a usage error"; fi

# One tiny run: two workloads plain, scaled down 100x
tests/bench-real.sh --build "$build" --host-only --tools plain --only cxx-map,bash-assoc --scale 100 --out "$tmp/o" >"$tmp/tiny" 2>&1
if [ "$(grep -c 'tool=plain outcome=ok status=ok ' "$tmp/o/real-host.dat" 2>/dev/null)" = 2 ]; then
	ok "bench-real: a scaled-down plain run of two workloads ends ok"
else
	not_ok "bench-real: a scaled-down plain run of two workloads ends ok" "$tmp/tiny"
fi
if grep -qE '^  plain +ok +[0-9.]+ +[0-9.]+ +1\.0x +1\.0x ' "$tmp/o/real-host.txt" 2>/dev/null &&
	grep -q '^cxx-map  *(200)' "$tmp/o/real-host.txt"; then
	ok "bench-real: its table has the workload, its size and the ratios"
else
	not_ok "bench-real: its table has the workload, its size and the ratios" "$tmp/tiny"
fi
