#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make bench, plots: PNGs drawn with gnuplot from measured runs.
#
#   vmas.png     lines of /proc/PID/maps and VMAs holding allocator memory at
#                the peak, against live blocks: glibc, Electric Fence, DUMA,
#                memdbg guard and mprotect (host) and nonlinear (patched
#                guest); measured here with `memdbg compare` on
#                examples/live_blocks.
#   malloc.png   time per malloc/free pair against live blocks, from the
#                tables of tests/lib/bench.sh (host, and the patched guest).
#   remap.png    remap_file_pages() cost per page, stock against patched
#                kernel, against pages, from tests/kernel/bench.sh's table.
#
# Each PNG says which run it comes from (date, kernels, machine); the same
# line goes to OUT/run-info.txt and the data to OUT/*.dat.
#
#   tests/bench-plots.sh [--build DIR] [--out DIR] [--sizes "1000 3000 ..."]
#                        [--no-guest] [--kernel-image IMAGE]
#                        [--lib-host FILE] [--lib-guest FILE] [--kernel FILE]
#
# --lib-host, --lib-guest and --kernel name the saved output of those
# benchmarks (default: build/bench/lib-host.txt, lib-guest.txt,
# kernel.txt, as tests/bench.sh writes them); a plot whose input is
# missing is left out, and said so.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 2
build=${BUILD:-build}
out=
sizes="1000 3000 10000 30000 100000"
guest=1
kimage=patched
lib_host= lib_guest= kern=
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--sizes) sizes=$2; shift 2 ;;
	--no-guest) guest=0; shift ;;
	--kernel-image) kimage=$2; shift 2 ;;
	--lib-host) lib_host=$2; shift 2 ;;
	--lib-guest) lib_guest=$2; shift 2 ;;
	--kernel) kern=$2; shift 2 ;;
	-h | --help) sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	*) echo "$0: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done
out=${out:-$build/bench}
lib_host=${lib_host:-$build/bench/lib-host.txt}
lib_guest=${lib_guest:-$build/bench/lib-guest.txt}
kern=${kern:-$build/bench/kernel.txt}
mkdir -p "$out"
command -v gnuplot >/dev/null || { echo "$0: gnuplot is not installed (make deps installs gnuplot-nox)" >&2; exit 2; }
md=$build/memdbg
lb=$build/examples/live_blocks
for f in "$md" "$lb"; do [ -x "$f" ] || { echo "$0: $f is missing: run make" >&2; exit 2; }; done

cpu=$(sed -n 's/^model name[^:]*: *//p' /proc/cpuinfo | head -n 1)
mem_gb=$(awk '/^MemTotal:/ { printf "%.0f", $2 / 1048576 }' /proc/meminfo)
machine="$(nproc)x ${cpu:-unknown CPU}, ${mem_gb} GB"
today=$(date -u +%Y-%m-%d)
status=0

# --- 1. maps lines and VMAs against live blocks ----------------------------------------
max_map=$(cat /proc/sys/vm/max_map_count 2>/dev/null || echo 65530)
field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
# "lines vmas" of one compare row, or "? ?" when the run did not end well
cells() { # raw-row
	if [ "$(field "$1" status)" = ok ]; then
		echo "$(field "$1" peak_maps_lines) $(field "$1" peak_vmas)"
	else
		echo "? ?"
	fi
}
echo "bench-plots: maps lines and VMAs against live blocks ($sizes) on the host ..." >&2
{
	echo "# blocks glibc_lines glibc_vmas efence_lines efence_vmas duma_lines duma_vmas guard_lines guard_vmas mprotect_lines mprotect_vmas nonlinear_lines nonlinear_vmas"
	echo "# peak over the run of build/examples/live_blocks N 24 --keep (the blocks stay live to the exit snapshot), memdbg compare --raw; ? = died or not run"
} >"$out/vmas.dat"
declare -A host_row
for n in $sizes; do
	row="$n"
	for a in glibc efence duma; do
		if [ "$a" != glibc ] && [ $((2 * n + 100)) -gt "$max_map" ]; then
			row+=" ? ?"   # two VMAs per block: dies at vm.max_map_count
			continue
		fi
		r=$("$md" compare --raw --only "$a" -- "$lb" "$n" 24 --keep 2>/dev/null | head -n 1)
		row+=" $(cells "$r")"
	done
	for b in guard mprotect; do
		r=$("$md" compare --raw --only memdbg --options "backend=$b:detect_leaks=0" -- "$lb" "$n" 24 --keep 2>/dev/null | head -n 1)
		row+=" $(cells "$r")"
	done
	host_row[$n]=$row
done
guest_kernel=
if [ "$guest" = 1 ]; then
	echo "bench-plots: the same with memdbg's nonlinear backend in the patched guest ..." >&2
	gcmd="uname -r; for n in $sizes; do echo n=\$n \$($md compare --raw --only memdbg --options backend=nonlinear:detect_leaks=0 -- $lb \$n 24 --keep | head -n 1); done"
	# The guest runner itself, not memdbg vm (which would preload the
	# library into the shell and the measuring tools as well).
	gout=$(kernel/scripts/vm-run.sh --kernel "$kimage" --timeout 1200 --append no_timer_check -- "$gcmd" 2>/dev/null) || true
	guest_kernel=$(printf '%s\n' "$gout" | head -n 1)
fi
for n in $sizes; do
	g=$(printf '%s\n' "${gout:-}" | sed -n "s/^n=$n //p" | head -n 1)
	if [ -n "$g" ]; then echo "${host_row[$n]} $(cells "$g")"; else echo "${host_row[$n]} ? ?"; fi
done >>"$out/vmas.dat"
info_vmas="run $today: host $(uname -r)${guest_kernel:+, guest $guest_kernel (TCG)}; $machine"

# --- 2. time per malloc/free pair against live blocks --------------------------------------
# Rows of tests/lib/bench.sh: "name live ns/pair cpu/pair rss_kB vmas".
series_time=() where_time=()
: >"$out/malloc.dat"
add_series() { # file where
	local file=$1 where=$2 name
	[ -s "$file" ] || return
	for name in $(awk '$2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ { print $1 }' "$file" | awk '!seen[$0]++'); do
		case $name in */nothread | */recycle) continue ;; esac
		{
			echo "# $name ($where)"
			awk -v n="$name" '$1 == n && $2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ { print $2, $3 / 1000 }' "$file" | sort -n
			printf '\n\n'
		} >>"$out/malloc.dat"
		series_time+=("$name")
		where_time+=("$where")
	done
}
add_series "$lib_host" host
add_series "$lib_guest" "patched guest"
kern_of() { sed -n 's/.*kernel \([^ ;]*\).*/\1/p' "$1" 2>/dev/null | head -n 1; }
info_malloc="run $(date -u -r "$lib_host" +%Y-%m-%d 2>/dev/null || echo "?"): host $(kern_of "$lib_host")"
[ -s "$lib_guest" ] && info_malloc+=", guest $(kern_of "$lib_guest") (TCG)"
info_malloc+="; $machine"

# --- 3. remap_file_pages() per page, stock and patched -----------------------------------------
# tests/kernel/bench.sh's summary: "pages | stock ns VMAs | patched ns VMAs | ratio"
: >"$out/remap.dat"
if [ -s "$kern" ]; then
	echo "# pages stock_ns_per_page stock_vmas patched_ns_per_page patched_vmas" >"$out/remap.dat"
	sed -n '/^== remap_file_pages() per page/,/^$/p' "$kern" |
		awk -F'|' 'NF >= 4 && $1 ~ /^ *[0-9]+ *$/ { split($2, s, " "); split($3, p, " "); print $1 + 0, s[1], s[2], p[1], p[2] }' \
		>>"$out/remap.dat"
	rel=$(sed -n 's/^# stock = \(.*\), patched = \(.*\)$/stock \1, patched \2/p' "$kern" | head -n 1)
	info_remap="run $(date -u -r "$kern" +%Y-%m-%d): $rel (TCG guests); $machine"
fi

# --- draw -------------------------------------------------------------------------------------------
plot() { # name gnuplot-commands
	if gnuplot -e "$2" 2>"$out/$1.gnuplot.err"; then
		echo "bench-plots: wrote $out/$1.png" >&2
		rm -f "$out/$1.gnuplot.err"
	else
		echo "bench-plots: gnuplot failed for $1 (see $out/$1.gnuplot.err)" >&2
		status=1
	fi
}
term="set terminal pngcairo size 960,640 font 'DejaVu Sans,10'; set datafile missing '?'; set key below horizontal; set grid; set autoscale xfix"
plot vmas "$term; set output '$out/vmas.png';
 set multiplot layout 1,2 title \"Page-guard debuggers: mappings at the peak against live blocks\n{/*0.8 $info_vmas}\";
 set logscale xy; set xlabel 'live blocks (24 bytes)'; set ylabel 'lines of /proc/PID/maps'; set title 'maps lines';
 f='$out/vmas.dat';
 plot f u 1:2 w lp t 'glibc', f u 1:4 w lp t 'Electric Fence', f u 1:6 w lp t 'DUMA', f u 1:8 w lp t 'memdbg guard', f u 1:10 w lp t 'memdbg mprotect', f u 1:12 w lp t 'memdbg nonlinear (patched)';
 set ylabel 'VMAs holding allocator memory'; set title 'VMAs (anonymous, [heap], memfd)';
 plot f u 1:3 w lp t 'glibc', f u 1:5 w lp t 'Electric Fence', f u 1:7 w lp t 'DUMA', f u 1:9 w lp t 'memdbg guard', f u 1:11 w lp t 'memdbg mprotect', f u 1:13 w lp t 'memdbg nonlinear (patched)';
 unset multiplot"
echo "vmas.png: $info_vmas" >"$out/run-info.txt"

if [ ${#series_time[@]} -gt 0 ]; then
	# One panel per place: host and guest times are not comparable.
	cmd="$term; set output '$out/malloc.png';"
	cmd+=" set multiplot layout 1,2 title \"Time per malloc/free pair against live blocks\n{/*0.8 $info_malloc}\";"
	cmd+=" set logscale xy; set xlabel 'live blocks (16..512 bytes)'; set ylabel 'microseconds per pair (wall)';"
	for where in host "patched guest"; do
		p=
		for i in "${!series_time[@]}"; do
			[ "${where_time[$i]}" = "$where" ] || continue
			# the same colour for an allocator in both panels
			case ${series_time[$i]} in
			glibc) lc=1 ;; efence) lc=2 ;; duma) lc=3 ;; memdbg-guard) lc=4 ;; memdbg-mprotect) lc=5 ;; memdbg-nonlinear) lc=6 ;; *) lc=7 ;;
			esac
			p+=" '$out/malloc.dat' index $i u 1:2 w lp lt $lc t '${series_time[$i]}',"
		done
		[ -n "$p" ] && cmd+=" set title '$where'; plot ${p%,};"
	done
	cmd+=" unset multiplot"
	plot malloc "$cmd"
	echo "malloc.png: $info_malloc" >>"$out/run-info.txt"
else
	echo "bench-plots: no tests/lib/bench.sh output ($lib_host, $lib_guest): malloc.png left out" >&2
fi

if [ -s "$out/remap.dat" ] && [ "$(grep -vc '^#' "$out/remap.dat")" -gt 0 ]; then
	plot remap "$term; set output '$out/remap.png';
	 set multiplot layout 1,2 title \"remap\\\\_file\\\\_pages(): one page per call, N pages of one memfd mapping\n{/*0.8 $info_remap}\";
	 set logscale xy; set xlabel 'pages'; set ylabel 'ns per page'; set title 'cost per call';
	 f='$out/remap.dat';
	 plot f u 1:2 w lp t 'stock 6.12 (emulated: mmap per call)', f u 1:4 w lp t 'patched (nonlinear)';
	 set ylabel 'VMAs of the mapping'; set title 'VMAs afterwards'; set yrange [0.5:*];
	 plot f u 1:3 w lp t 'stock', f u 1:5 w lp t 'patched';
	 unset multiplot"
	echo "remap.png: $info_remap" >>"$out/run-info.txt"
else
	echo "bench-plots: no remap table in $kern: remap.png left out" >&2
fi
cat "$out/run-info.txt"
exit $status
