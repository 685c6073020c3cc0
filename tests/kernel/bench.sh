#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The kernel benchmarks in the patched and the stock guest, one after the
# other:
#   remap  build/tests/kernel/bench_remap's table for each kernel
#          (labelled with its uname -r), then the stock/patched ratio of the
#          per-page remap cost; the goal is a ratio of at least 10 and a VMA
#          count of 1 on the patched kernel;
#   guard  build/tests/kernel/bench_guard in the same patched
#          guest run: ns per guard page installed and removed by MAP_CHGPROT,
#          mprotect and munmap+mmap, with VMA counts and the vm_area_struct
#          slab; first at the default vm.max_map_count, then, for the sizes
#          that need more VMAs than it allows, with it raised (--max-map);
#   fault  build/tests/kernel/bench_fault_remap in the same patched guest
#          run (2 vCPUs): one thread's fault rate in a nonlinear VMA while
#          another cycles guard remaps on its own window, over the same
#          with MADV_DONTNEED cycles (the read-side floor; goal >= 0.9);
#   cycle  build/tests/kernel/bench_cycle_threads in the same patched guest
#          run: every vCPU's thread cycles guard remaps on its own window
#          of one VMA, against the same with MADV_DONTNEED cycles; cycles
#          per second with 1 and with all threads, TLB shootdowns per cycle;
#   memcg  tests/kernel/bench_memcg.sh in its own patched guest
#          (--memcg-mem MiB, default 3072; 3 GiB swap): memdbg holding
#          --memcg-blocks live blocks (default 300000) under a memory.max of
#          a quarter of its RSS, nonlinear backend against mprotect.
# Figures, not pass/fail.
#
#   tests/kernel/bench.sh [--kernels "patched stock"] [--parts "remap guard fault cycle memcg"]
#                         [--reps N] [--cpus N] [--guards "1000 10000 50000"] [--max-map N]
#                         [--out FILE] [--memcg-blocks N] [--memcg-mem MIB] [PAGES...]
#
# PAGES (bench_remap) default to 1000 10000 60000.  --cpus sets the vCPUs
# of the remap/guard/fault/cycle guests (default 2).  --out also writes the
# tables as a markdown fragment to FILE (e.g. for docs/).  Run from the
# repository root after 'make kernel-bench'; boots one guest at a time.
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo" || exit 2
build=${BUILD:-build}
kernels="patched stock"
parts="remap guard fault cycle memcg"
cpus=2
memcg_blocks=300000
memcg_mem=3072
reps=3
guards="1000 10000 50000"
max_map=262144
out=
sizes=()
while [ $# -gt 0 ]; do
	case $1 in
	--kernels) kernels=$2; shift 2 ;;
	--parts) parts=$2; shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--cpus) cpus=$2; shift 2 ;;
	--guards) guards=$2; shift 2 ;;
	--max-map) max_map=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--memcg-blocks) memcg_blocks=$2; shift 2 ;;
	--memcg-mem) memcg_mem=$2; shift 2 ;;
	-h | --help) sed -n '2,35s/^# \{0,1\}//p' "$0"; exit 0 ;;
	-*) echo "$0: unknown option '$1'" >&2; exit 2 ;;
	*) sizes+=("$1"); shift ;;
	esac
done
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000 60000)
prog=$build/tests/kernel/bench_remap
gprog=$build/tests/kernel/bench_guard
fprog=$build/tests/kernel/bench_fault_remap
cprog=$build/tests/kernel/bench_cycle_threads
want_part() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }
mprog=$build/tests/kernel/bench_memcg_heap
for p in $(want_part remap && echo "$prog") $(want_part guard && echo "$gprog") \
	$(want_part fault && echo "$fprog") $(want_part cycle && echo "$cprog") \
	$(want_part memcg && echo "$mprog $build/libmemdbg.so"); do
	if [ ! -x "$p" ]; then
		echo "$0: $p is missing: run 'make kernel-bench' first" >&2
		exit 2
	fi
done
# Guard counts whose 2G+1 VMAs (mprotect, mmap) exceed the default limit.
big_guards=
for g in $guards; do
	[ $((2 * g + 100)) -gt 65530 ] && big_guards+=" $g"
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
echo "# host: $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs (TCG guests: figures move with host load)"
for k in $kernels; do
	want_part remap || want_part guard || want_part fault || want_part cycle || continue
	echo "== $k kernel"
	# The guest runs the same binaries; -k adds key=value lines for the summaries.
	cmd="echo \"# guest: \$(uname -r), \$(nproc) CPUs\""
	want_part remap && cmd+="; $prog -r $reps -k ${sizes[*]}"
	# MAP_CHGPROT exists on the patched (and debug) kernel only.
	if want_part guard && [ "$k" != stock ]; then
		cmd+="; $gprog -r $reps -k $guards"
		[ -n "$big_guards" ] && cmd+="; $gprog -r $reps -M $max_map -k$big_guards"
	fi
	want_part fault && [ "$k" != stock ] && cmd+="; $fprog -r $reps -k"
	want_part cycle && [ "$k" != stock ] && cmd+="; $cprog -r $reps -k"
	if kernel/scripts/vm-run.sh --kernel "$k" --cpus "$cpus" --timeout "${VM_TIMEOUT:-900}" -- "$cmd" >"$tmp/$k.out"; then
		grep -v '^bench \|^benchguard \|^benchfault \|^benchcycle ' "$tmp/$k.out"
	else
		rc=$?
		cat "$tmp/$k.out"
		echo "# $k guest run failed with status $rc"
		status=1
	fi
	echo
done

# The memcg row: one patched guest of its own (it needs the memory).
if want_part memcg && [[ " $kernels " == *" patched "* ]]; then
	echo "== memcg row: patched kernel, $memcg_blocks live blocks under memdbg"
	if ! kernel/scripts/vm-run.sh --kernel patched --timeout "${VM_MEMCG_TIMEOUT:-4500}" \
		--mem "$memcg_mem" --swap 3072 -- \
		tests/kernel/bench_memcg.sh --build "$build" --blocks "$memcg_blocks" | tee "$tmp/memcg.out"; then
		echo "# memcg guest run failed"
		status=1
	fi
	echo
fi

# remap ns/page, stock over patched, per size.
if want_part remap && [ -s "$tmp/stock.out" ] && [ -s "$tmp/patched.out" ]; then
	echo "== remap_file_pages() per page: stock emulation / patched (goal >= 10x, patched VMAs = 1)"
	awk '
		$1 == "bench" {
			delete kv
			for (i = 2; i <= NF; i++) { split($i, f, "="); kv[f[1]] = f[2] }
			k = FILENAME ~ /stock/ ? "stock" : "patched"
			ns[k, kv["pages"]] = kv["remap_ns"]; vm[k, kv["pages"]] = kv["remap_vmas"]
			done[k, kv["pages"]] = kv["remap_done"]; rel[k] = kv["kernel"]
			if (!(kv["pages"] in seen)) { seen[kv["pages"]] = 1; order[++n] = kv["pages"] }
		}
		END {
			printf "# stock = %s, patched = %s\n", rel["stock"], rel["patched"]
			printf "%8s | %12s %8s | %12s %8s | %7s\n", "pages", "stock ns", "VMAs", "patched ns", "VMAs", "ratio"
			for (i = 1; i <= n; i++) {
				n_ = order[i]
				r = ns["patched", n_] > 0 ? ns["stock", n_] / ns["patched", n_] : 0
				printf "%8s | %12.0f %8s | %12.0f %8s | %6.1fx\n", n_, ns["stock", n_], vm["stock", n_],
					ns["patched", n_], vm["patched", n_], r
			}
		}' "$tmp/stock.out" "$tmp/patched.out"
fi

# Guard pages: ns per guard, MAP_CHGPROT against the VMA-splitting ways.
for k in $kernels; do
	if [ ! -s "$tmp/$k.out" ] || ! grep -q '^benchguard ' "$tmp/$k.out"; then
		continue
	fi
	echo "== guard pages on the $k kernel: ns per guard installed / removed (median), VMAs with the guards in place"
	awk '
		$1 == "benchguard" {
			delete kv
			for (i = 2; i <= NF; i++) { split($i, f, "="); kv[f[1]] = f[2] }
			g = kv["guards"]; m = kv["method"]
			# A run at a raised vm.max_map_count replaces one that stopped early.
			if ((g, m) in inst && done[g, m] >= g + 0) next
			if ((g, m) in inst) stopped[g, m] = sprintf("%s: ENOMEM at guard %d with vm.max_map_count %s", m, done[g, m] + 1, lim[g, m])
			inst[g, m] = kv["install_ns"]; rem[g, m] = kv["remove_ns"]; vm[g, m] = kv["vmas"]
			done[g, m] = kv["installed"]; lim[g, m] = kv["max_map_count"]
			sl[g, m] = kv["slab"] >= 0 ? kv["slab"] - kv["slab_before"] : "n/a"
			if (!(g in seen)) { seen[g] = 1; order[++n] = g }
		}
		END {
			printf "%7s | %-17s | %-17s | %-17s | %s\n", "guards", "chgprot", "mprotect", "munmap+mmap", "mprotect/chgprot (install, remove)"
			for (i = 1; i <= n; i++) {
				g = order[i]
				for (j = 1; j <= 3; j++) {
					m = j == 1 ? "chgprot" : j == 2 ? "mprotect" : "mmap"
					c[j] = sprintf("%6.0f / %-6.0f", inst[g, m], rem[g, m])
					if (done[g, m] < g + 0) c[j] = sprintf("stopped at %d", done[g, m])
				}
				printf "%7s | %-17s | %-17s | %-17s | %5.1fx, %5.1fx\n", g, c[1], c[2], c[3],
					(inst[g, "chgprot"] > 0 ? inst[g, "mprotect"] / inst[g, "chgprot"] : 0),
					(rem[g, "chgprot"] > 0 ? rem[g, "mprotect"] / rem[g, "chgprot"] : 0)
				printf "%7s | VMAs %-12s | VMAs %-12s | VMAs %-12s | vm_area_struct +%s / +%s / +%s%s\n", "",
					vm[g, "chgprot"], vm[g, "mprotect"], vm[g, "mmap"], sl[g, "chgprot"], sl[g, "mprotect"], sl[g, "mmap"],
					(lim[g, "mprotect"] != 65530 ? sprintf(" (vm.max_map_count %s)", lim[g, "mprotect"]) : "")
				for (j = 2; j <= 3; j++) {
					m = j == 2 ? "mprotect" : "mmap"
					if ((g, m) in stopped) printf "%7s | (%s)\n", "", stopped[g, m]
				}
			}
		}' "$tmp/$k.out"
	echo
done

if [ -n "$out" ]; then
	{
		echo "<!-- generated by tests/kernel/bench.sh on $(date -u +%Y-%m-%dT%H:%MZ) -->"
		for k in $kernels; do
			[ -s "$tmp/$k.out" ] || continue
			echo
			echo "### $k kernel"
			echo
			echo '```'
			grep -v '^bench \|^benchguard \|^benchfault \|^benchcycle ' "$tmp/$k.out"
			echo '```'
		done
		if [ -s "$tmp/memcg.out" ]; then
			echo
			echo "### memcg row (patched kernel)"
			echo
			echo '```'
			cat "$tmp/memcg.out"
			echo '```'
		fi
	} >"$out"
	echo "# tables written to $out"
fi
exit $status
