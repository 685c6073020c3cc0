#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make bench, sampled guarding: the pool of guarded blocks and detection,
# memdbg against Scudo's GWP-ASan (libclang-rt-19-dev).  Figures, not a
# test.
#
#   pool:    tests/lib/bench/sample_pool.c keeps COUNT 32-byte blocks live,
#            each asking for a guarded slot (memdbg sample_rate=1, GWP-ASan
#            SampleRate=1 with MaxSimultaneousAllocations raised to the
#            count); per step: guarded blocks, /proc/PID/maps lines, Pss,
#            RSS, seconds.  Host: memdbg on its first backend, GWP-ASan up
#            to past vm.max_map_count.  Guest: memdbg on nonlinear with
#            compact=1 up to --guest-pool blocks.
#   detect:  tests/lib/bench/detect.sh: the bug corpus at 1 in --rate,
#            --runs runs per case and tool, on the host.
#   uaf-10m: a use-after-free 10 million allocations after the free, at
#            1 in --rate: memdbg on every backend (host guard and
#            mprotect, guest nonlinear with compact=1) and GWP-ASan.
#
#   tests/bench-sample.sh [--build DIR] [--out DIR] [--host-only | --guest-only]
#                         [--parts pool,detect,uaf-10m] [--runs K] [--rate N]
#                         [--host-pool N] [--guest-pool N] [--kernel IMAGE]
#
# Output: OUT (default build/bench) sample-host.txt and sample-guest.txt,
# and sample-pool.png (gnuplot: maps lines and Pss against guarded blocks).
# Inside the guest this script runs itself with --inside (not for users).
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 2
build=${BUILD:-build}
out= where=both parts="pool detect uaf-10m" runs=200 rate=100
host_pool=60000 guest_pool=1000000 kimage=patched inside=0
guest_mem=${BENCH_GUEST_MEM:-6144}
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--host-only) where=host; shift ;;
	--guest-only) where=guest; shift ;;
	--parts) parts=${2//,/ }; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--rate) rate=$2; shift 2 ;;
	--host-pool) host_pool=$2; shift 2 ;;
	--guest-pool) guest_pool=$2; shift 2 ;;
	--kernel) kimage=$2; shift 2 ;;
	--inside) inside=1; shift ;;
	-h | --help) sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	*) echo "$0: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done
out=${out:-$build/bench}
build_abs=$(cd "$build" && pwd)
lib=$build_abs/libmemdbg.so
pool=$build_abs/tests/lib/sample_pool
scudo=$(ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.scudo_standalone-x86_64.so 2>/dev/null | sort -V | tail -n 1)
for f in "$lib" "$pool" "$build_abs/tests/lib/bug_corpus"; do
	[ -e "$f" ] || { echo "$0: $f is missing: run make lib lib-bench" >&2; exit 2; }
done
has() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }

# One machine's part; every line of the pool goes out as
# "pool TOOL live guarded maps pss_kb rss_kb seconds".
measure() { # machine
	local m=$1 step n max
	echo "# $m: $(date -u '+%Y-%m-%d %H:%M') UTC, Linux $(uname -r), $(nproc) CPUs, vm.max_map_count $(cat /proc/sys/vm/max_map_count), load $(cut -d' ' -f1-3 /proc/loadavg)"
	if has pool; then
		if [ "$m" = guest ]; then
			n=$guest_pool opts=backend=nonlinear:compact=1
		else
			n=$host_pool opts=
		fi
		step=$((n / 10))
		echo "# pool: memdbg sample_rate=1${opts:+ $opts}, $n blocks of 32 bytes"
		LD_PRELOAD=$lib MEMDBG_OPTIONS="sample_rate=1:detect_leaks=0${opts:+:$opts}" nice "$pool" memdbg "$n" 32 "$step" 2>&1 |
			sed "s/^[0-9]/pool memdbg &/"
		echo "# pool: plain (glibc), $n blocks of 32 bytes"
		nice "$pool" memdbg "$n" 32 "$step" 2>&1 | awk '{ $2 = 0; print "pool plain " $0 }'
		if [ -n "$scudo" ]; then
			# GWP-ASan's slots each take two mappings: past about
			# vm.max_map_count / 2 live slots its mprotect fails
			for max in 16 20000 40000; do
				echo "# pool: GWP-ASan SampleRate=1 MaxSimultaneousAllocations=$max, $((max > 16 ? max : 2000)) blocks of 32 bytes"
				n=$((max > 16 ? max : 2000))
				LD_PRELOAD=$scudo SCUDO_OPTIONS="GWP_ASAN_Enabled=true:GWP_ASAN_SampleRate=1:GWP_ASAN_MaxSimultaneousAllocations=$max" \
					nice "$pool" gwp "$n" 32 $((n / 4)) 2>&1 | sed "s/^[0-9]/pool gwp-$max &/; s/^[A-Z]/# gwp-$max said: &/"
				printf "\n# gwp-%s exit status %s\n" "$max" "${PIPESTATUS[0]}"
			done
		fi
	fi
	if has detect && [ "$m" = host ]; then
		tests/lib/bench/detect.sh --build "$build" --runs "$runs" --rate "$rate" | sed 's/^[a-z]/detect &/'
	fi
	if has uaf-10m; then
		local backends="guard mprotect" tools=memdbg
		[ "$m" = guest ] && backends=nonlinear:compact=1
		for b in $backends; do
			DETECT_MEMDBG_OPTIONS=backend=$b tests/lib/bench/detect.sh --build "$build" --tools memdbg --runs 3 --rate "$rate" \
				--cases uaf-long --attempts 1000 --long-gap 10000000 | sed "s/^memdbg/uaf-10m memdbg-${b%%:*}/; /^#/d"
		done
		[ "$m" = host ] && tests/lib/bench/detect.sh --build "$build" --tools gwp --runs 3 --rate "$rate" \
			--cases uaf-long --attempts 1000 --long-gap 10000000 | sed 's/^gwp/uaf-10m gwp/; /^#/d'
	fi
}

plot() {
	command -v gnuplot >/dev/null || { echo "bench-sample: no gnuplot: no PNG" >&2; return 0; }
	local f data=() m
	for m in host guest; do grep -q "^pool " "$out/sample-$m.txt" 2>/dev/null && data+=("$m"); done
	[ ${#data[@]} -gt 0 ] || return 0
	local cmd="set terminal pngcairo size 1200,480 font 'DejaVu Sans,9'; set output '$out/sample-pool.png'; set key top left; set grid;
	 set logscale xy; set xlabel 'live guarded blocks (32 bytes each)'; set multiplot layout 1,2 title 'Pool of guarded blocks: memdbg against GWP-ASan';"
	for what in "3:lines of /proc/PID/maps" "4:Pss (MB)"; do
		local col=${what%%:*} plots=
		cmd+=" set ylabel '${what#*:}';"
		for m in "${data[@]}"; do
			for t in $(awk '$1 == "pool" && $2 != "plain" { print $2 }' "$out/sample-$m.txt" | sort -u); do
				f=$out/sample-$m-$t.dat
				awk -v t="$t" '$1 == "pool" && $2 == t { print $4, $5, $6 / 1024 }' "$out/sample-$m.txt" >"$f"
				plots+="${plots:+, }'$f' u 1:$((col - 1)) w linespoints t '$m $t'"
			done
		done
		cmd+=" plot $plots;"
	done
	cmd+=" unset multiplot"
	if gnuplot -e "$cmd" 2>"$out/sample-pool.gnuplot.err"; then
		rm -f "$out/sample-pool.gnuplot.err"
		echo "bench-sample: wrote $out/sample-pool.png" >&2
	else
		echo "bench-sample: gnuplot failed (see $out/sample-pool.gnuplot.err)" >&2
	fi
}

if [ "$inside" = 1 ]; then
	measure guest
	exit 0
fi
mkdir -p "$out"
status=0
if [ "$where" != guest ]; then
	measure host | tee "$out/sample-host.txt"
fi
if [ "$where" != host ]; then
	echo "bench-sample: booting the guest ($kimage, ${guest_mem} MiB) ..." >&2
	kernel/scripts/vm-run.sh --kernel "$kimage" --append no_timer_check --timeout 3600 --mem "$guest_mem" -- \
		"tests/bench-sample.sh --inside --build $build --parts ${parts// /,} --rate $rate --guest-pool $guest_pool" |
		tee "$out/sample-guest.txt"
	[ "${PIPESTATUS[0]}" = 0 ] || { echo "bench-sample: the guest run failed" >&2; status=1; }
fi
plot
exit $status
