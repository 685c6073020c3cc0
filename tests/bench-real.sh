#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make bench, real programs: allocation-heavy programs from
# Debian packages, each run plain, under memdbg (each backend the kernel
# offers), valgrind memcheck, Electric Fence and DUMA, one after the other
# in the same run; per run: CPU time (user+sys of the whole process tree),
# wall time, peak RSS (largest process of the tree), peak Pss (sampled;
# largest process), peak lines of /proc/PID/maps (largest process) and how
# it ended.  Figures, not a test.
#
#   tests/bench-real.sh [--build DIR] [--out DIR] [--host-only | --guest-only]
#                       [--only W1,W2] [--tools T1,T2] [--scale N] [--guest-scale N]
#                       [--timeout S] [--guest-timeout S] [--guest-mem MIB]
#                       [--valgrind-scale N] [--kernel IMAGE] [--dry-run]
#                       [--plot-only] [--markdown]
#
#   workloads (--only):  perl-hash python-objs cxx-map gcc-O2 sqlite-insert
#                        bash-assoc git-log
#   tools (--tools):     plain memdbg-guard memdbg-mprotect memdbg-nonlinear
#                        memdbg-compact memdbg-s5000 memdbg-s100 memdbg-s1
#                        gwp-5000 gwp-100 valgrind efence duma (memdbg
#                        backends the kernel lacks are left out;
#                        memdbg-compact is nonlinear with compact=1, whose
#                        memory shows in Pss, not RSS; memdbg-sN is
#                        sample_rate=N on nonlinear with compact=1 where
#                        the kernel has it, else on the first usable
#                        backend; gwp-N is LLVM's Scudo with GWP-ASan
#                        sampling 1 in N, from libclang-rt-19-dev)
#   --scale N            divide every workload's size by N (host: 1)
#   --valgrind-scale N   valgrind runs the workload divided by N more
#                        (default 4), and a plain run of that reduced size
#                        (tool plain-vg) is its baseline for the ratios
#   --guest-scale N      the same in the patched TCG guest (default 5:
#                        TCG runs 5-10x slower than the host)
#   --kernel IMAGE       the guest's kernel (default: patched, see vm-run.sh)
#   --dry-run            list the runs, run nothing
#   --plot-only          redraw the tables and PNGs from OUT's data files
#   --markdown           print OUT's data as the tables of docs/libmemdbg.md
#
# Output: progress on stderr ("[3/42] perl-hash valgrind ..."), the table of
# each machine on stdout and in OUT (default build/bench): real-host.dat and
# real-guest.dat (one key=value line per run), real-host.txt and
# real-guest.txt (the tables), real-cpu.png and real-rss.png (gnuplot).
# Environment for fair comparisons: memdbg with detect_leaks=0, valgrind
# --leak-check=no --trace-children=yes, no pager, the same input for all;
# child processes (gcc's cc1 and as) inherit LD_PRELOAD.
#
# Inside the guest this script runs itself with --inside (not for users).
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 2
build=${BUILD:-build}
out=
where=both
only=
tools=
scale=1
guest_scale=5
vg_scale=4
timeout=120
guest_timeout=240
guest_mem=${BENCH_GUEST_MEM:-6144}
kimage=patched
dry=0 plot_only=0 markdown=0 inside=
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--host-only) where=host; shift ;;
	--guest-only) where=guest; shift ;;
	--only) only=$2; shift 2 ;;
	--tools) tools=$2; shift 2 ;;
	--scale) scale=$2; shift 2 ;;
	--guest-scale) guest_scale=$2; shift 2 ;;
	--valgrind-scale) vg_scale=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--guest-timeout) guest_timeout=$2; shift 2 ;;
	--guest-mem) guest_mem=$2; shift 2 ;;
	--kernel) kimage=$2; shift 2 ;;
	--dry-run) dry=1; shift ;;
	--plot-only) plot_only=1; shift ;;
	--markdown) markdown=1; shift ;;
	--inside) inside=$2; shift 2 ;;
	-h | --help) sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	*) echo "$0: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done
out=${out:-$build/bench}
[ -n "$inside" ] || mkdir -p "$out"   # the guest writes its lines to stdout
build_abs=$(cd "$build" 2>/dev/null && pwd) || build_abs=$repo/$build
lib=$build_abs/libmemdbg.so
runner=$build_abs/tests/bench/bench-run
cxx_map=$build_abs/tests/bench/cxx_map

all_workloads="perl-hash python-objs cxx-map gcc-O2 sqlite-insert bash-assoc git-log"
all_tools="plain memdbg-guard memdbg-mprotect memdbg-nonlinear memdbg-compact memdbg-s5000 memdbg-s100 memdbg-s1 gwp-5000 gwp-100 valgrind efence duma"
for w in ${only//,/ }; do
	case " $all_workloads " in *" $w "*) ;; *) echo "$0: --only: unknown workload '$w' ($all_workloads)" >&2; exit 2 ;; esac
done
for t in ${tools//,/ }; do
	case " $all_tools " in *" $t "*) ;; *) echo "$0: --tools: unknown tool '$t' ($all_tools)" >&2; exit 2 ;; esac
done
tools=${tools//,/ }   # the lists below split on spaces
workloads=${only//,/ }
workloads=${workloads:-$all_workloads}

# The git-log workload reads this repository's history up to a fixed
# commit, so that reruns on later code log the same commits.
git_rev=2e043139adc446efd63ef94f46cbc3dda8a12fda
git_rev_short=2e04313

# Size of a workload at scale 1: the plain run takes 0.1-0.5 s on the
# development host (2 cores of an AMD EPYC).
size_of() { # workload scale
	local n
	case $1 in
	perl-hash) n=200000 ;;     # hash entries
	python-objs) n=100000 ;;   # dict entries, each a list of a str and a tuple
	cxx-map) n=20000 ;;        # std::map entries per thread, 4 threads
	gcc-O2) n=50 ;;            # functions in the generated C file
	sqlite-insert) n=300000 ;; # rows
	bash-assoc) n=50000 ;;     # associative-array entries
	git-log) n=80 ;;           # commits of git log -p (the history has 79)
	esac
	n=$((n / $2))
	[ "$n" -ge 1 ] || n=1
	echo "$n"
}

# The command of a workload of size N; files it needs go to $work.
command_of() { # workload n
	local n=$2
	case $1 in
	perl-hash) echo perl -e "'my %h; \$h{\"key\$_\"} = \$_ for 1..$n; my \$s = 0; \$s += \$_ for values %h; print scalar(keys %h), \" \$s\\n\"'" ;;
	python-objs) echo env PYTHONMALLOC=malloc /usr/bin/python3 -c "'d = {i: [str(i), (i, i * 2)] for i in range($n)}; print(len(d), sum(len(v[0]) for v in d.values()))'" ;;
	cxx-map) echo "$cxx_map" "$n" 4 ;;
	gcc-O2) echo gcc -O2 -c "$work/big-$n.c" -o "$work/big.o" ;;
	sqlite-insert) echo sqlite3 :memory: "<$work/insert-$n.sql" ;;
	bash-assoc) echo bash -c "'declare -A a; for ((i = 0; i < $n; i++)); do a[key\$i]=\$i; done; echo \${#a[@]}'" ;;
	git-log) echo env GIT_PAGER=cat PAGER=cat git --no-pager -C "$work/repo.git" log -p --stat -M -C -C --no-color -n "$n" "$git_rev" ;;
	esac
}

# Inputs: generated once per machine and size, the same for every tool.
prepare() { # workload n
	local n=$2
	case $1 in
	gcc-O2)
		[ -f "$work/big-$n.c" ] && return
		awk -v n="$n" 'BEGIN {
			print "#include <string.h>\n#include <stdlib.h>\nstruct rec { int a, b; double c; char name[32]; };"
			for (i = 0; i < n; i++) {
				printf "int f%d(struct rec *r, int k) {\n\tint s = 0;\n", i
				printf "\tfor (int j = 0; j < k; j++) {\n\t\tr[j].a = j * %d + r[j].b;\n", i + 3
				printf "\t\tif (r[j].a %% %d == 0) s += r[j].a; else s -= (int)(r[j].c * %d.5);\n", i % 7 + 2, i
				printf "\t\tswitch (j & 3) { case 0: s ^= %d; break; case 1: s += f%d(r + 1, k / 2); break; default: s -= j; }\n", i, (i > 0 ? i - 1 : 0)
				printf "\t\tmemcpy(r[j].name, \"n%d\", %d);\n\t}\n\treturn s;\n}\n", i, length("n" i) + 1
			}
			printf "int main(void) {\n\tstruct rec *r = calloc(64, sizeof(*r));\n\tint s = 0;\n"
			for (i = 0; i < n; i++) printf "\ts += f%d(r, 8);\n", i
			printf "\treturn s & 1;\n}\n"
		}' >"$work/big-$n.c"
		;;
	sqlite-insert)
		[ -f "$work/insert-$n.sql" ] && return
		cat >"$work/insert-$n.sql" <<EOF
CREATE TABLE t(id INTEGER PRIMARY KEY, k TEXT, v INTEGER);
BEGIN;
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < $n)
INSERT INTO t(k, v) SELECT printf('key%08d', (x * 7919) % 1000003), x FROM c;
COMMIT;
SELECT count(*), sum(v) FROM t;
EOF
		;;
	git-log)
		[ -d "$work/repo.git" ] && return
		# A bare clone of its own (one pack, as a fresh clone has): the
		# guest sees this checkout read-only, and reruns read the same.
		git clone -q --bare --no-local "$repo" "$work/repo.git" 2>/dev/null ||
			git clone -q --bare "$repo" "$work/repo.git"
		git -C "$work/repo.git" cat-file -e "$git_rev^{commit}" 2>/dev/null || {
			echo "bench-real: commit $git_rev_short is missing: git-log logs HEAD instead" >&2
			git_rev=HEAD
		}
		;;
	esac
}

# The backend of the sampled tools: nonlinear with compact mode (sampled
# small blocks share physical pages) where this kernel has it, else the
# first usable one.
sample_backend() {
	LD_PRELOAD=$lib MEMDBG_OPTIONS=backend=nonlinear:compact=1:detect_leaks=0 /bin/true 2>/dev/null &&
		echo ":backend=nonlinear:compact=1"
}

# MEMDBG_OPTIONS of a memdbg tool: its backend, and compact mode for
# memdbg-compact.
memdbg_options() { # tool
	case $1 in
	memdbg-compact) echo "backend=nonlinear:compact=1" ;;
	memdbg-s*) echo "sample_rate=${1#memdbg-s}$sampled_on" ;;
	*) echo "backend=${1#memdbg-}" ;;
	esac
}

# The environment/wrapper in front of the workload's command for a tool.
prefix_of() { # tool
	case $1 in
	plain) echo env ;;
	memdbg-*) echo env LD_PRELOAD="$lib" MEMDBG_OPTIONS="$(memdbg_options "$1"):detect_leaks=0" ;;
	plain-vg) echo env ;;
	valgrind) echo valgrind -q --tool=memcheck --leak-check=no --trace-children=yes --log-file="$work/valgrind.%p.log" ;;
	efence) echo env EF_ALLOW_MALLOC_0=1 LD_PRELOAD="$efence" ;;
	duma) echo env DUMA_DISABLE_BANNER=1 LD_PRELOAD="$duma" ;;
	gwp-*) echo env LD_PRELOAD="$scudo" SCUDO_OPTIONS="GWP_ASAN_Enabled=true:GWP_ASAN_SampleRate=${1#gwp-}" ;;
	esac
}

# The tools this machine can run, in table order.
tools_here() {
	local t b list=
	for t in ${tools:-$all_tools}; do
		case $t in
		memdbg-*)
			LD_PRELOAD=$lib MEMDBG_OPTIONS="$(memdbg_options "$t"):detect_leaks=0" /bin/true 2>/dev/null || continue ;;
		valgrind) command -v valgrind >/dev/null || continue ;;
		efence) [ -n "$efence" ] || continue ;;
		duma) [ -n "$duma" ] || continue ;;
		gwp-*) [ -n "$scudo" ] || continue ;;
		esac
		list+=" $t"
	done
	echo "$list"
}

# How a run ended, in a few words: ok, exit N, a signal, timeout, "ENOMEM
# at N maps" (the tool said so, or sat at vm.max_map_count), memdbg report.
outcome() { # status peak_maps errfile
	local st=$1 maps=$2 err=$3
	case $st in
	ok) echo ok; return ;;
	stuck) echo "ENOMEM at $maps maps (stuck)"; return ;;
	timeout) echo timeout; return ;;
	esac
	if grep -qE 'mprotect\(\) failed|mmap\(\) failed|Cannot allocate memory|ENOMEM|[Oo]ut of memory|MemoryError' "$err" 2>/dev/null; then
		echo "ENOMEM at $maps maps (${st/exit_/exit })"
	elif grep -q 'ERROR: memdbg:' "$err" 2>/dev/null; then
		echo "memdbg report (${st/exit_/exit })"
	elif ls "$work"/valgrind.*.log >/dev/null 2>&1 && grep -q 'Invalid \|uninitialised' "$work"/valgrind.*.log; then
		echo "valgrind report (${st/exit_/exit })"
	else
		echo "${st/exit_/exit }"
	fi
}

kv() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1; }

# Runs every (workload, tool) of this machine; one line per run on stdout:
# machine=.. workload=.. size=.. tool=.. status=.. cpu_s=.. wall_s=.. maxrss_kb=.. peak_maps=.. peak_pss_kb=..
measure() { # machine scale timeout
	local machine=$1 sc=$2 tmo=$3 w t n i=0 total list cmd r st why
	efence=$(ls /usr/lib/libefence.so* /usr/lib/*/libefence.so* 2>/dev/null | head -n 1)
	duma=$(ls /usr/lib/libduma.so* /usr/lib/*/libduma.so* 2>/dev/null | head -n 1)
	scudo=$(ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.scudo_standalone-x86_64.so 2>/dev/null | sort -V | tail -n 1)
	sampled_on=$(sample_backend)
	list=$(tools_here)
	# valgrind on a reduced workload, after a plain run of that size
	[ "$vg_scale" -gt 1 ] && list=${list/ valgrind/ plain-vg valgrind}
	total=$(( $(echo $workloads | wc -w) * $(echo $list | wc -w) ))
	echo "bench-real: $machine ($(uname -r)), scale 1/$sc, tools:$list, $total runs, timeout ${tmo}s each" >&2
	work=$(mktemp -d "${TMPDIR:-/tmp}/bench-real.XXXXXX")
	for w in $workloads; do
		for t in $list; do
			n=$(size_of "$w" "$sc")
			case $t in valgrind | plain-vg) n=$(size_of "$w" $((sc * vg_scale))) ;; esac
			[ "$dry" = 1 ] || prepare "$w" "$n"
			cmd=$(command_of "$w" "$n")
			i=$((i + 1))
			if [ "$dry" = 1 ]; then
				echo "[$i/$total] $w $t: $(prefix_of "$t") $cmd"
				continue
			fi
			printf '[%d/%d] %s %s ... ' "$i" "$total" "$w" "$t" >&2
			rm -f "$work"/valgrind.*.log
			# eval: the command holds quoted perl/python/bash programs
			eval "\"$runner\" --out \"$work/result\" --timeout $tmo -- $(prefix_of "$t") $cmd" \
				>/dev/null 2>"$work/err" </dev/null
			r=$(cat "$work/result" 2>/dev/null)
			[ -n "$r" ] || r="status=exit_127 cpu_s=- wall_s=- maxrss_kb=- peak_maps=- peak_pss_kb=-"
			st=$(kv "$r" status)
			why=$(outcome "$st" "$(kv "$r" peak_maps)" "$work/err")
			echo "$why, cpu $(kv "$r" cpu_s) s, wall $(kv "$r" wall_s) s, RSS $(kv "$r" maxrss_kb) kB, Pss $(kv "$r" peak_pss_kb) kB, maps $(kv "$r" peak_maps)" >&2
			if [ "$why" != ok ]; then
				tail -n 3 "$work/err" | cut -c1-200 | sed 's/^/    /' >&2
			fi
			# what the tool or program said when it failed, for the notes under the table
			note=
			[ "$why" = ok ] || note=$(grep -m1 -iE 'error|fatal|abort|fail|cannot|segmentation|memdbg:' "$work/err" |
				tr -s ' \t' ' ' | cut -c1-100 | tr ' =' '_:')
			echo "machine=$machine kernel=$(uname -r) workload=$w size=$n tool=$t outcome=${why// /_} $r${note:+ note=$note}"
		done
	done
	rm -rf "$work"
}

# --- tables and plots --------------------------------------------------------------

table() { # datfile -> text table with ratios to the plain run
	awk '
	function v(k,   i, a) { for (i = 1; i <= NF; i++) { split($i, a, "="); if (a[1] == k) return a[2] } return "-" }
	function ratio(a, b) { return (a != "-" && b != "-" && b + 0 > 0) ? sprintf("%.1fx", a / b) : "-" }
	/^#/ { print; next }
	/^machine=/ {
		w = v("workload"); t = v("tool")
		# valgrind on a reduced workload compares with plain-vg, the plain run of that size
		b = (t == "plain-vg" || (t == "valgrind" && (w SUBSEP "vg") in pc)) ? w SUBSEP "vg" : w
		if (t == "plain" || t == "plain-vg") { pc[b] = v("cpu_s"); pw[b] = v("wall_s"); pr[b] = v("maxrss_kb"); pp[b] = v("peak_pss_kb") }
		ok = v("outcome") == "ok"
		cpu = v("cpu_s"); wall = v("wall_s"); rss = v("maxrss_kb"); pss = v("peak_pss_kb")
		o = v("outcome"); gsub(/_/, " ", o)
		# a run killed at the timeout had used that much: a lower bound
		lb = v("outcome") == "timeout" ? ">" : ""
		if (w != lastw) { printf "%-14s %-7s\n", w, "(" v("size") ")"; lastw = w; size = v("size") }
		if (v("size") != size) t = t " (" v("size") ")"
		printf "  %-17s %-30s %8s %8s %9s %9s %10s %8s %8s %8s %8s\n", t, o, cpu, wall,
			ok || lb ? lb ratio(cpu, pc[b]) : "-", ok || lb ? lb ratio(wall, pw[b]) : "-",
			rss == "-" ? "-" : sprintf("%.0f", rss / 1024), ok ? ratio(rss, pr[b]) : "-",
			pss == "-" || pss < 0 ? "-" : sprintf("%.0f", pss / 1024), ok ? ratio(pss, pp[b]) : "-", v("peak_maps")
	}' "$1"
}

# The tables of docs/libmemdbg.md "Real programs": slowdown, then memory;
# one row per workload, one column per tool.
markdown() { # datfile
	awk '
	function v(k,   i, a) { for (i = 1; i <= NF; i++) { split($i, a, "="); if (a[1] == k) return a[2] } return "-" }
	function r(a, b) { return (a != "-" && b != "-" && b + 0 > 0) ? sprintf(a / b >= 10 ? "%.0f" : "%.1f", a / b) : "-" }
	function short(o) { gsub(/_/, " ", o); sub(/ \(stuck\)/, ", stuck", o); return o }
	/^machine=/ {
		w = v("workload"); t = v("tool")
		if (!(w in seenw)) { seenw[w] = 1; ws[++nw] = w; size[w] = v("size") }
		if (!(t in seent)) { seent[t] = 1; ts[++nt] = t }
		o[w, t] = v("outcome"); c[w, t] = v("cpu_s"); wl[w, t] = v("wall_s"); m[w, t] = v("maxrss_kb"); mp[w, t] = v("peak_maps")
		ps[w, t] = v("peak_pss_kb"); if (ps[w, t] + 0 <= 0) ps[w, t] = "-"; if (ps[w, t] != "-") anypss = 1
	}
	END {
		printf "| workload (size) | plain: CPU / wall s |"; for (j = 1; j <= nt; j++) if (ts[j] != "plain" && ts[j] != "plain-vg") printf " %s |", ts[j]; print ""
		printf "| --- | --- |"; for (j = 1; j <= nt; j++) if (ts[j] != "plain" && ts[j] != "plain-vg") printf " --- |"; print ""
		for (i = 1; i <= nw; i++) {
			w = ws[i]
			printf "| %s (%s) | %s / %s |", w, size[w], c[w, "plain"], wl[w, "plain"]
			for (j = 1; j <= nt; j++) {
				t = ts[j]; if (t == "plain" || t == "plain-vg") continue
				# valgrind on a reduced workload: against plain-vg, the plain run of that size
				b = (t == "valgrind" && o[w, "plain-vg"] != "") ? "plain-vg" : "plain"
				if (o[w, t] == "") printf " not run |"
				else if (o[w, t] == "ok") printf " %sx / %sx |", r(c[w, t], c[w, b]), r(wl[w, t], wl[w, b])
				else if (o[w, t] == "timeout") printf " timeout at %.0f s: >%sx / >%sx |", wl[w, t], r(c[w, t], c[w, b]), r(wl[w, t], wl[w, b])
				else printf " %s |", short(o[w, t])
			}
			print ""
		}
		print ""
		# with Pss samples (bench-run since the compact tool): RSS / Pss / maps
		printf "| workload | plain: RSS MB%s / maps |", anypss ? " / Pss MB" : ""; for (j = 1; j <= nt; j++) if (ts[j] != "plain") printf " %s |", ts[j]; print ""
		printf "| --- | --- |"; for (j = 2; j <= nt; j++) printf " --- |"; print ""
		for (i = 1; i <= nw; i++) {
			w = ws[i]
			printf "| %s | %.0f", w, m[w, "plain"] / 1024
			if (anypss) printf " / %s", ps[w, "plain"] == "-" ? "-" : sprintf("%.0f", ps[w, "plain"] / 1024)
			printf " / %s |", mp[w, "plain"]
			for (j = 1; j <= nt; j++) {
				t = ts[j]; if (t == "plain") continue
				if (m[w, t] == "-" || m[w, t] == "") { printf " - |"; continue }
				printf " %.0f MB%s", m[w, t] / 1024, o[w, t] == "ok" ? " (" r(m[w, t], m[w, "plain"]) "x)" : ""
				if (anypss) {
					if (ps[w, t] == "-") printf " / -"
					else printf " / %.0f MB%s", ps[w, t] / 1024, o[w, t] == "ok" ? " (" r(ps[w, t], ps[w, "plain"]) "x)" : ""
				}
				printf " / %s |", mp[w, t]
			}
			print ""
		}
	}' "$1"
}

header_line() { printf '  %-17s %-30s %8s %8s %9s %9s %10s %8s %8s %8s %8s\n' tool "how it ended" "CPU s" "wall s" "CPU x" "wall x" "RSS MB" "RSS x" "Pss MB" "Pss x" "maps"; }

show() { # machine
	local dat=$out/real-$1.dat
	[ -s "$dat" ] || return 0
	{
		grep '^#' "$dat"
		echo "# workload (size); CPU = user+sys of the process tree; x = ratio to the plain run (ok runs; >: killed at the timeout);"
		echo "# RSS = peak RSS of the largest process of the tree; Pss = its largest sampled Pss; maps = peak lines of /proc/PID/maps of the largest"
		header_line
		table <(grep -v '^#' "$dat")
		grep ' note=' "$dat" | sed 's/.* workload=\([^ ]*\) .* tool=\([^ ]*\) .* note=\([^ ]*\).*/\1 \2: \3/' |
			tr '_' ' ' | sed 's/^/# /'
	} >"$out/real-$1.txt"
	cat "$out/real-$1.txt"
}

plot() {
	command -v gnuplot >/dev/null || { echo "bench-real: no gnuplot: no PNGs" >&2; return 0; }
	local m f panels=0 cmd_cpu cmd_rss info=
	for m in host guest; do [ -s "$out/real-$m.dat" ] && panels=$((panels + 1)); done
	[ "$panels" -gt 0 ] || return 0
	# One matrix per machine and figure: rows workloads, columns tools; ? = the run failed.
	for m in host guest; do
		f=$out/real-$m.dat
		[ -s "$f" ] || continue
		for what in cpu rss; do
			# every tool's column on both machines (? where it did not run), so
			# that a tool has the same colour in both panels
			awk -v what="$what" -v tools="${all_tools#plain }" '
			function v(k,   i, a) { for (i = 1; i <= NF; i++) { split($i, a, "="); if (a[1] == k) return a[2] } return "-" }
			/^machine=/ {
				w = v("workload"); t = v("tool")
				if (!(w in seenw)) { seenw[w] = 1; ws[++nw] = w }
				key = what == "cpu" ? "cpu_s" : "maxrss_kb"
				val[w, t] = v("outcome") == "ok" ? v(key) : "?"
				pss[w, t] = v("outcome") == "ok" && v("peak_pss_kb") + 0 > 0 ? v("peak_pss_kb") : "?"
			}
			END {
				nt = split(tools, ts, " ")
				printf "workload"; for (j = 1; j <= nt; j++) if (ts[j] != "plain") printf " %s", ts[j]; print ""
				for (i = 1; i <= nw; i++) {
					w = ws[i]; p = val[w, "plain"]; printf "%s", w
					for (j = 1; j <= nt; j++) {
						if (ts[j] == "plain") continue
						x = val[w, ts[j]]
						# valgrind on a reduced workload: against the plain run of that size
						base = (ts[j] == "valgrind" && (w SUBSEP "plain-vg") in val) ? "plain-vg" : "plain"
						# memory: Pss against Pss where both were sampled (compact mode shows only there)
						if (what == "rss" && pss[w, ts[j]] != "?" && pss[w, ts[j]] != "" && pss[w, base] != "?" && pss[w, base] != "") {
							x = pss[w, ts[j]]; p = pss[w, base]
						} else p = val[w, base]
						printf " %s", (x != "?" && x != "" && p != "?" && p + 0 > 0) ? sprintf("%.2f", x / p) : "?"
					}
					print ""
				}
			}' "$f" >"$out/real-$m-$what.dat"
		done
		info+="${info:+; }$m: $(grep -m1 '^# ' "$f" | sed 's/^# //')"
	done
	local term="set terminal pngcairo size 1280,$((380 * panels + 120)) font 'DejaVu Sans,9'; set datafile missing '?'; set key outside right; set grid y;
	 set style data histogram; set style histogram cluster gap 1; set style fill solid 0.8 border -1; set boxwidth 0.9; set logscale y; set xtics rotate by -20"
	for what in cpu rss; do
		local title ylabel cmd="$term; set output '$out/real-$what.png';"
		if [ "$what" = cpu ]; then title="Real programs: CPU time (user+sys) relative to the plain run"; ylabel="CPU slowdown (x)"
		else title="Real programs: peak memory relative to the plain run (Pss where sampled, else RSS)"; ylabel="peak memory ratio (x)"; fi
		cmd+=" set multiplot layout $panels,1 title \"$title (failed runs: no bar)\";"
		cmd+=" set ylabel '$ylabel'; set yrange [0.5:*];"
		for m in host guest; do
			f=$out/real-$m-$what.dat
			[ -s "$f" ] || continue
			cmd+=" set title \"$(grep -m1 '^# ' "$out/real-$m.dat" | sed 's/^# //; s/"/'"'"'/g')\" noenhanced;"
			cmd+=" plot for [c=2:$(head -n 1 "$f" | wc -w)] '$f' u c:xtic(1) t columnheader(c) noenhanced lt c;"
		done
		cmd+=" unset multiplot"
		if gnuplot -e "$cmd" 2>"$out/real-$what.gnuplot.err"; then
			rm -f "$out/real-$what.gnuplot.err"
			echo "bench-real: wrote $out/real-$what.png" >&2
		else
			echo "bench-real: gnuplot failed for real-$what (see $out/real-$what.gnuplot.err)" >&2
		fi
	done
}

machine_info() {
	local cpu mem
	cpu=$(sed -n 's/^model name[^:]*: *//p' /proc/cpuinfo | head -n 1)
	mem=$(awk '/^MemTotal:/ { printf "%.1f", $2 / 1048576 }' /proc/meminfo)
	echo "$(nproc)x ${cpu:-unknown CPU}, $mem GB"
}

# --- main ----------------------------------------------------------------------------

if [ -n "$inside" ]; then   # in the guest (or a host part run by hand)
	measure "$inside" "$scale" "$timeout"
	exit 0
fi
if [ "$markdown" = 1 ]; then
	for m in host guest; do
		[ -s "$out/real-$m.dat" ] || continue
		grep -m1 '^# ' "$out/real-$m.dat"; echo
		markdown "$out/real-$m.dat"; echo
	done
	exit 0
fi
if [ "$plot_only" = 1 ]; then
	show host; show guest; plot
	exit 0
fi
for f in "$lib" "$runner" "$cxx_map"; do
	[ -x "$f" ] || [ -f "$f" ] || { echo "$0: $f is missing: run make lib benchmarks" >&2; exit 2; }
done
status=0
if [ "$where" != guest ]; then
	dat=$out/real-host.dat
	[ "$dry" = 1 ] && dat=/dev/null
	{
		echo "# host, $(date -u '+%Y-%m-%d %H:%M') UTC, Linux $(uname -r), $(machine_info), load average $(cut -d' ' -f1-3 /proc/loadavg) at the start, scale 1/$scale"
		measure host "$scale" "$timeout"
	} | if [ "$dry" = 1 ]; then cat >&2; else cat >"$dat"; fi
	sed -i "1s/\$/, $(cut -d' ' -f1-3 /proc/loadavg) at the end/" "$dat" 2>/dev/null
fi
if [ "$where" != host ]; then
	gargs="--inside guest --scale $guest_scale --valgrind-scale $vg_scale --timeout $guest_timeout --build $build"
	[ -n "$only" ] && gargs+=" --only $only"
	[ -n "$tools" ] && gargs+=" --tools ${tools// /,}"
	[ "$dry" = 1 ] && gargs+=" --dry-run"
	# Runs in the guest take $guest_timeout at most; the guest's own
	# limit covers the lot (42 runs) with room.
	gtmo=$(( guest_timeout * 42 + 600 ))
	load0=$(cut -d' ' -f1-3 /proc/loadavg)
	start=$(date -u '+%Y-%m-%d %H:%M')
	gout=$(mktemp)
	echo "bench-real: booting the guest ($kimage, ${guest_mem} MiB) ..." >&2
	kernel/scripts/vm-run.sh --kernel "$kimage" --append no_timer_check --timeout "$gtmo" --mem "$guest_mem" -- \
		"tests/bench-real.sh $gargs" >"$gout" || { echo "bench-real: the guest run ended with status $?" >&2; status=1; }
	if [ "$dry" = 1 ]; then
		cat "$gout" >&2
	else
		{
			echo "# patched guest (TCG, $(basename "$kimage"), ${guest_mem} MiB, 2 vCPUs), $start UTC, Linux $(sed -n 's/^machine=guest kernel=\([^ ]*\).*/\1/p' "$gout" | head -n 1), host $(machine_info), host load average $load0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end, scale 1/$guest_scale"
			grep '^machine=guest ' "$gout"
		} >"$out/real-guest.dat"
	fi
	rm -f "$gout"
fi
[ "$dry" = 1 ] && exit 0
[ "$where" != guest ] && show host
[ "$where" != host ] && show guest
plot
exit $status
