#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Detection of sampled guarding: each case of tests/lib/bench/bug_corpus.c
# run K times under memdbg and under Scudo's GWP-ASan at the same sample
# rate; per tool and case: the runs in which the tool reported the bug,
# and those whose report names the misused block (its start address and
# size are those of the victim the program announced last).  Figures, not
# a test.
#
#   tests/lib/bench/detect.sh [--build DIR] [--runs K] [--rate N]
#                             [--attempts M] [--size S] [--gap G]
#                             [--long-gap G] [--cases C1,C2] [--tools T1,T2]
#
#   tools: memdbg (MEMDBG_OPTIONS=sample_rate=N plus $DETECT_MEMDBG_OPTIONS,
#          e.g. backend=mprotect) and gwp (SCUDO_OPTIONS with GWP-ASan at
#          GWP_ASAN_SampleRate=N plus $DETECT_GWP_OPTIONS)
#   prints: tool case runs detected attributed seconds
set -uo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$repo" || exit 2
build=${BUILD:-build}
runs=200 rate=100 attempts=100 size=24 gap=100 long_gap=10000
cases="uaf-short uaf-long overflow-1 overflow-100 underflow double-free"
tools="memdbg gwp"
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--rate) rate=$2; shift 2 ;;
	--attempts) attempts=$2; shift 2 ;;
	--size) size=$2; shift 2 ;;
	--gap) gap=$2; shift 2 ;;
	--long-gap) long_gap=$2; shift 2 ;;
	--cases) cases=${2//,/ }; shift 2 ;;
	--tools) tools=${2//,/ }; shift 2 ;;
	-h | --help) sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	*) echo "$0: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done
corpus=$build/tests/lib/bug_corpus
lib=$(cd "$build" && pwd)/libmemdbg.so
scudo=$(ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.scudo_standalone-x86_64.so 2>/dev/null | sort -V | tail -n 1)
[ -x "$corpus" ] || { echo "$0: $corpus is missing: run make lib-bench" >&2; exit 2; }
err=$(mktemp)
trap 'rm -f "$err"' EXIT

# One run's stderr -> "detected attributed" (0/1 each).
judge() { # tool file
	awk -v tool="$1" '
	/^victim 0x/ { if (!reported) { vaddr = $2; vsize = $3 } next }
	tool == "memdbg" && /ERROR: memdbg:/ { reported = 1 }
	tool == "gwp" && /GWP-ASan detected a memory error/ { reported = 1 }
	reported && !blocked {
		# memdbg: "24-byte region [0x...,"; GWP-ASan: "a 24-byte allocation at 0x..." or
		# "Double Free at 0x... (a 24-byte allocation)"
		if (match($0, /[0-9]+-byte region \[0x[0-9a-f]+/)) {
			s = substr($0, RSTART, RLENGTH); split(s, f, /-byte region \[/); bsize = f[1]; baddr = f[2]; blocked = 1
		} else if (match($0, /[0-9]+-byte allocation at 0x[0-9a-f]+/)) {
			s = substr($0, RSTART, RLENGTH); split(s, f, /-byte allocation at /); bsize = f[1]; baddr = f[2]; blocked = 1
		} else if (match($0, /Double Free at 0x[0-9a-f]+ \(a [0-9]+-byte/)) {
			s = substr($0, RSTART, RLENGTH); split(s, f, / /); baddr = f[4]; bsize = f[6] + 0; blocked = 1
		}
	}
	END { print reported + 0, (reported && blocked && baddr == vaddr && bsize == vsize) + 0 }' "$2"
}

echo "# detect: $(date -u '+%Y-%m-%d %H:%M') UTC, Linux $(uname -r), rate 1/$rate, $runs runs, $attempts attempts of size $size, gap $gap (uaf-long: $long_gap), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# tool case runs detected attributed seconds"
for tool in $tools; do
	case $tool in
	memdbg) env=(LD_PRELOAD="$lib" MEMDBG_OPTIONS="sample_rate=$rate:detect_leaks=0${DETECT_MEMDBG_OPTIONS:+:$DETECT_MEMDBG_OPTIONS}") ;;
	gwp)
		[ -n "$scudo" ] || { echo "# gwp: no libclang_rt.scudo_standalone (libclang-rt-19-dev)"; continue; }
		env=(LD_PRELOAD="$scudo" SCUDO_OPTIONS="GWP_ASAN_Enabled=true:GWP_ASAN_SampleRate=$rate${DETECT_GWP_OPTIONS:+:$DETECT_GWP_OPTIONS}") ;;
	*) echo "$0: unknown tool '$tool'" >&2; exit 2 ;;
	esac
	for c in $cases; do
		g=$gap
		[ "$c" = uaf-long ] && g=$long_gap
		detected=0 attributed=0
		t0=$(date +%s.%N)
		for ((k = 0; k < runs; k++)); do
			env "${env[@]}" "$corpus" "$c" "$attempts" "$size" "$g" >/dev/null 2>"$err" </dev/null
			# no process substitution: the guest has no /dev/fd
			set -- $(judge "$tool" "$err")
			detected=$((detected + $1)) attributed=$((attributed + $2))
		done
		t1=$(date +%s.%N)
		printf '%s %s %d %d %d %.1f\n' "$tool" "$c" "$runs" "$detected" "$attributed" "$(echo "$t1 - $t0" | bc)"
	done
done
