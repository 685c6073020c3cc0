#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ab_remap.sh: what remap_file_pages() costs on two or more kernels, side
# by side (the "remap cost per page before/after" figure).
#
# Boots each kernel in turn, ROUNDS rounds alternating (so that load on
# the host hits every kernel alike), runs bench_remap's time mode in the
# guest, and prints each round's ns per page, then per column the median
# over the rounds and the median (min-max) of each round's ratio to the
# first kernel.
#
#   tests/kernel/ab_remap.sh [options] BEFORE AFTER [MORE...]
#     -r ROUNDS    rounds (default 6)
#     -s SECONDS   bench_remap -t SECONDS in each guest (default 5)
#     -p PAGES     pages per mapping (default 1000)
#     -c CPUS      guest vCPUs (default 1: the benchmark is one thread, and
#                  a 1-vCPU TCG guest moves 2-3x less between runs)
#     --build DIR  build directory (default build)
#
# BEFORE, AFTER...: bzImage paths, or patched|debug|stock as for vm-run.sh.
set -euo pipefail

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }
die() { echo "ab_remap.sh: $*" >&2; exit 2; }
posint() { [[ $2 =~ ^[1-9][0-9]*$ ]] || die "$1 takes a positive number, not '$2'"; }

rounds=6 secs=5 pages=1000 cpus=1 build=build
while [ $# -gt 0 ]; do
	case $1 in
	-r) [ $# -ge 2 ] || die "-r needs a value"; posint -r "$2"; rounds=$2; shift 2 ;;
	-s) [ $# -ge 2 ] || die "-s needs a value"; posint -s "$2"; secs=$2; shift 2 ;;
	-p) [ $# -ge 2 ] || die "-p needs a value"; posint -p "$2"; pages=$2; shift 2 ;;
	-c) [ $# -ge 2 ] || die "-c needs a value"; posint -c "$2"; cpus=$2; shift 2 ;;
	--build) [ $# -ge 2 ] || die "--build needs a value"; build=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	--) shift; break ;;
	-*) die "unknown option '$1' (see --help)" ;;
	*) break ;;
	esac
done
[ $# -ge 2 ] || die "give at least two kernels (see --help)"
for k in "$@"; do
	case $k in
	patched | debug | stock) ;;
	*) [ -f "$k" ] || die "no kernel image '$k'" ;;
	esac
done
here=$(cd "$(dirname "$0")/../.." && pwd)
prog=$(cd "$build" 2>/dev/null && pwd)/tests/kernel/bench_remap
[ -x "$prog" ] || die "$prog is missing: run 'make kernel-bench' first"

echo "# ab_remap: $rounds rounds, bench_remap -t $secs $pages, $cpus vCPU(s); ns per page"
echo "# kernel round remap fault remap+pop"
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for r in $(seq "$rounds"); do
	i=0
	for k in "$@"; do
		i=$((i + 1))
		line=$("$here/kernel/scripts/vm-run.sh" --kernel "$k" --cpus "$cpus" \
			--timeout $((secs * 3 + 120)) -- "$prog" -k -t "$secs" "$pages" 2>/dev/null |
			grep '^bench .*mode=time' || true)
		[ -n "$line" ] || die "round $r: no result from kernel $k (run vm-run.sh by hand to see why)"
		vals=$(sed -E 's/.* remap_ns=([0-9.]+) fault_ns=([0-9.]+) remap_pop_ns=([0-9.]+).*/\1 \2 \3/' <<<"$line")
		echo "$i $r $vals" >>"$results"
		printf '%s %d %s\n' "$(basename "$k")" "$r" "$vals"
	done
done

# Medians: per kernel and column, of the ns and of the ratio to kernel 1.
names=$(for k in "$@"; do basename "$k"; done | tr '\n' ' ')
awk -v names="$names" '
function median(a, n,   i, j, t) {
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ ns[$1, $2, 1] = $3; ns[$1, $2, 2] = $4; ns[$1, $2, 3] = $5; if ($1 > nk) nk = $1; if ($2 > nr) nr = $2 }
END {
	split(names, name, " ")
	split("remap fault remap+pop", col, " ")
	print "# median ns per page (median ratio to " name[1] ", min-max)"
	for (k = 1; k <= nk; k++) {
		line = name[k]
		for (c = 1; c <= 3; c++) {
			lo = 1e9; hi = 0
			for (r = 1; r <= nr; r++) {
				v[r] = ns[k, r, c]
				q[r] = ns[k, r, c] / ns[1, r, c]
				if (q[r] < lo) lo = q[r]
				if (q[r] > hi) hi = q[r]
			}
			m = median(v, nr)
			line = line sprintf("  %s %.0f", col[c], m)
			if (k > 1)
				line = line sprintf(" (%.2f, %.2f-%.2f)", median(q, nr), lo, hi)
		}
		print line
	}
}' "$results"
