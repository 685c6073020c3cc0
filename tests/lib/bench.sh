#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Benchmark: ns per malloc/free pair, RSS and VMA count at 1k/10k/100k (and
# optionally 1M) live blocks, for memdbg (each usable backend), Electric
# Fence, DUMA and glibc.  Usage (from the repository root):
#   tests/lib/bench.sh [--build DIR] [--backend NAME|auto] [--sizes "1000 10000 100000"] [--big N]
#                      [--rounds R] [--quick]
# Iteration counts follow a short calibration run, so that the same command
# finishes in minutes both natively and in the emulated (TCG) guest, where
# everything is 10-30x slower; there (or with --quick) the 100k size is
# left out unless --sizes is given.  --big N (default 1000000, 0: none)
# adds a row at N live blocks for the memdbg backends that keep the heap in
# one VMA, when MemAvailable has room for it (about 4.5 KiB per block);
# Electric Fence and DUMA would need 2N VMAs there.  --rounds R (default
# 0) then measures the 10k-live ratio R times interleaved (first memdbg
# backend, Electric Fence, DUMA, one after the other in each round), which
# holds up better than single rows on a loaded machine.
set -u
BUILD=build
BACKEND=auto
SIZES=
QUICK=0
BIG=1000000
ROUNDS=0
while [ $# -gt 0 ]; do
    case "$1" in
        --build) BUILD=$2; shift 2 ;;
        --backend) BACKEND=$2; shift 2 ;;
        --sizes) SIZES=$2; shift 2 ;;
        --quick) QUICK=1; shift ;;
        --big) BIG=$2; shift 2 ;;
        --rounds) ROUNDS=$2; shift 2 ;;
        *) echo "usage: $0 [--build DIR] [--backend NAME|auto] [--sizes LIST] [--big N] [--rounds R] [--quick]" >&2; exit 2 ;;
    esac
done
LIB=$(cd "$BUILD" && pwd)/libmemdbg.so
BENCH=$(cd "$BUILD" && pwd)/tests/lib/bench
[ -x "$BENCH" ] || { echo "missing $BENCH: run make lib-bench" >&2; exit 1; }

EFENCE=$(ls /usr/lib/libefence.so* /usr/lib/*/libefence.so* 2>/dev/null | head -n 1)
DUMA=$(ls /usr/lib/libduma.so* /usr/lib/*/libduma.so* 2>/dev/null | head -n 1)
VALGRIND=$(command -v valgrind 2>/dev/null)

# Which memdbg backends work here (the library's own detection decides).
backends=()
if [ "$BACKEND" = auto ]; then cands="nonlinear guard mprotect"; else cands=$BACKEND; fi
for b in $cands; do
    if LD_PRELOAD=$LIB MEMDBG_OPTIONS="backend=$b:detect_leaks=0" /bin/true 2>/dev/null; then backends+=("$b"); fi
done

# Calibration: ns per pair of the first memdbg backend at 1000 live blocks.
# Each memdbg row then gets about 1.5 s of pairs (30000 at most), the slow
# allocators a fifteenth of that.
CAL_NS=20000
if [ ${#backends[@]} -gt 0 ]; then
    cal=$(LD_PRELOAD=$LIB MEMDBG_OPTIONS="backend=${backends[0]}:detect_leaks=0" timeout 300 "$BENCH" 1000 1000 2>/dev/null |
          sed -n 's/.* ns_per_pair=\([0-9]*\).*/\1/p')
    [ -n "$cal" ] && [ "$cal" -gt 0 ] && CAL_NS=$cal
fi
MD_ITERS=$(( 1500000000 / CAL_NS ))
[ $MD_ITERS -gt 30000 ] && MD_ITERS=30000
[ $MD_ITERS -lt 3000 ] && MD_ITERS=3000
SLOW_ITERS=$(( MD_ITERS / 15 ))
[ $SLOW_ITERS -lt 300 ] && SLOW_ITERS=300
GLIBC_ITERS=$(( MD_ITERS * 33 ))
[ "$QUICK" = 1 ] && { MD_ITERS=$(( MD_ITERS / 3 )); SLOW_ITERS=$(( SLOW_ITERS / 3 )); }
if [ -z "$SIZES" ]; then
    # 100k live blocks take minutes to set up under emulation
    if [ "$QUICK" = 1 ] || [ "$CAL_NS" -gt 150000 ]; then SIZES="1000 10000"; else SIZES="1000 10000 100000"; fi
fi
# Electric Fence and DUMA need two VMAs per live block: past
# vm.max_map_count they die (after a long setup), so such rows are skipped.
MAX_MAP=$(cat /proc/sys/vm/max_map_count 2>/dev/null || echo 65530)

iters_for() { case "$1" in efence|duma|valgrind) echo $SLOW_ITERS ;; glibc) echo $GLIBC_ITERS ;; *) echo $MD_ITERS ;; esac; }

# A memdbg row is memdbg-BACKEND[/VARIANT]...; md_variant NAME sets opts
# (its MEMDBG_OPTIONS) and threads (the benchmark's thread count):
#   2threads   2 threads, LIVE blocks each: pairs/s against one thread's
#   batch64    free_batch=64: guards installed 64 at a time
#   recycle    the speed/quarantine trade-off (docs/libmemdbg.md)
#   compact    compact=1: small blocks share file pages (nonlinear only)
#   defer64    compact_defer=64: compact frees sent 64 at a time
md_variant() {
    local spec=${1#memdbg-} v
    opts="backend=${spec%%/*}:detect_leaks=0" threads=1
    [ "$spec" = "${spec#*/}" ] && return
    local IFS=/
    for v in ${spec#*/}; do
        case "$v" in
            2threads) threads=2 ;;
            batch64) opts+=":free_batch=64" ;;
            recycle) opts+=":recycle_pages=1:quarantine_size_mb=64" ;;
            compact) opts+=":compact=1" ;;
            defer64) opts+=":compact_defer=64" ;;
            *) echo "$0: unknown variant '$v' in $1" >&2; return 1 ;;
        esac
    done
}

one() {   # one NAME LIVE -> prints a table row
    local name=$1 live=$2 iters line tmo=300
    [ "$live" -ge 500000 ] && tmo=1500   # setting up 1M blocks takes minutes under TCG
    iters=$(iters_for "$name")
    case "$name" in efence|duma)
        if [ $(( live * 2 )) -gt "$MAX_MAP" ]; then
            printf '%-22s %9s %12s %12s %12s %10s\n' "$name" "$live" "skipped" "-" "-" "maps>max"
            return
        fi ;;
    esac
    case "$name" in
        glibc) line=$("$BENCH" "$live" "$iters" 2>/dev/null) ;;
        efence) line=$(EF_ALLOW_MALLOC_0=1 LD_PRELOAD=$EFENCE timeout 300 "$BENCH" "$live" "$iters" 2>/dev/null) ;;
        duma) line=$(DUMA_DISABLE_BANNER=1 LD_PRELOAD=$DUMA timeout 300 "$BENCH" "$live" "$iters" 2>/dev/null) ;;
        valgrind)   # memcheck, leak check off as for memdbg (detect_leaks=0)
            line=$(timeout 600 "$VALGRIND" -q --leak-check=no "$BENCH" "$live" "$iters" 2>/dev/null) ;;
        memdbg-*)
            local opts threads
            md_variant "$name"
            line=$(LD_PRELOAD=$LIB MEMDBG_OPTIONS="$opts" timeout $tmo "$BENCH" "$live" "$iters" $threads 2>/dev/null) ;;
    esac
    local rc=$?
    if echo "$line" | grep -q ns_per_pair; then
        local ns cpu rss vmas
        ns=$(echo "$line" | sed -n 's/.* ns_per_pair=\([0-9]*\).*/\1/p')
        cpu=$(echo "$line" | sed -n 's/.*cpu_ns_per_pair=\([0-9]*\).*/\1/p')
        rss=$(echo "$line" | sed -n 's/.*rss_kb=\([0-9]*\).*/\1/p')
        vmas=$(echo "$line" | sed -n 's/.*vmas=\([0-9]*\).*/\1/p')
        pps=$(echo "$line" | sed -n 's/.*pairs_per_s=\([0-9]*\).*/\1/p')
        printf '%-22s %9s %12s %12s %12s %10s %10s\n' "$name" "$live" "$ns" "$cpu" "$rss" "$vmas" "${pps:--}"
        local key=${name//-/_}; key=${key//\//_}
        eval "NS_${key}_$live=$ns"
        eval "CPU_${key}_$live=$cpu"
        eval "PPS_${key}_$live=${pps:-0}"
    else
        printf '%-22s %9s %12s %12s %12s %10s\n' "$name" "$live" "FAILED" "-" "-" "rc=$rc"
    fi
}

echo "# malloc/free pairs with N live blocks (sizes 16..512, random victim); kernel $(uname -r)"
echo "# ns/pair: wall clock; cpu/pair: CPU time of the thread(s) making the pairs, per pair"
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs${BENCH_HOST_LOAD:+ (host: $BENCH_HOST_LOAD)}; calibration ${CAL_NS} ns/pair: $MD_ITERS pairs per memdbg row, $SLOW_ITERS for efence/duma"
echo "# pairs/s: all threads' pairs per second of wall clock (the /2threads rows run 2 threads of LIVE blocks each)"
# The floor any page-guard allocator stands on here: one page faulted in
# and zapped, with 1 thread, 2 threads and 2 processes.  Under a
# hypervisor that shadows page tables this, not memdbg, sets the figures.
PAGE_CYCLE=$(cd "$BUILD" && pwd)/tests/lib/page_cycle
if [ -x "$PAGE_CYCLE" ]; then
    pc=$(timeout 300 "$PAGE_CYCLE" $([ "$CAL_NS" -gt 150000 ] && echo 4000) 2>&1)
    echo "# platform: $pc"
fi
printf '%-22s %9s %12s %12s %12s %10s %10s\n' allocator live ns/pair cpu/pair rss_kB vmas pairs/s
names=()
for b in "${backends[@]}"; do names+=("memdbg-$b"); done
# 2 threads (scaling), each backend; free_batch=64 (deferred guards) where
# it acts (nonlinear guards inside free; compact_defer is its deferral)
for b in "${backends[@]}"; do
    names+=("memdbg-$b/2threads")
    [ "$b" = nonlinear ] || names+=("memdbg-$b/batch64")
done
# recycle_pages acts on mprotect only (guard frees the page with the guard)
for b in "${backends[@]}"; do [ "$b" = mprotect ] && names+=("memdbg-$b/recycle"); done
# compact mode (nonlinear only): at once, deferred, and 2 threads of each
for b in "${backends[@]}"; do
    [ "$b" = nonlinear ] && names+=("memdbg-$b/compact" "memdbg-$b/compact/defer64" "memdbg-$b/compact/2threads" "memdbg-$b/compact/defer64/2threads")
done
[ -n "$EFENCE" ] && names+=(efence)
[ -n "$DUMA" ] && names+=(duma)
[ -n "$VALGRIND" ] && names+=(valgrind)
names+=(glibc)
for live in $SIZES; do
    for n in "${names[@]}"; do one "$n" "$live"; done
done
if [ "$BIG" -gt 0 ]; then
    avail_kb=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
    for b in "${backends[@]}"; do
        case "$b" in nonlinear|guard) ;; *) continue ;; esac
        if [ $(( BIG * 9 / 2 )) -gt "$avail_kb" ]; then
            printf '%-22s %9s %12s %12s %12s %10s\n' "memdbg-$b" "$BIG" "skipped" "-" "-" "needs $(( BIG * 9 / 2048 ))M"
            continue
        fi
        one "memdbg-$b" "$BIG"
    done
    for n in efence duma; do
        printf '%-22s %9s %12s %12s %12s %10s\n' "$n" "$BIG" "skipped" "-" "-" "maps>max"
    done
fi
for n in "${names[@]}"; do
    case "$n" in memdbg-*) ;; *) continue ;; esac
    k=${n//-/_}; k=${k//\//_}
    v=NS_${k}_10000; vc=CPU_${k}_10000
    if [ -n "${!v:-}" ] && [ -n "${NS_efence_10000:-}" ] && [ -n "${NS_duma_10000:-}" ]; then
        echo "# at 10k live blocks $n: $(( NS_efence_10000 / ${!v} ))x (wall) / $(( CPU_efence_10000 / ${!vc} ))x (cpu) faster than Electric Fence, $(( NS_duma_10000 / ${!v} ))x / $(( CPU_duma_10000 / ${!vc} ))x than DUMA${NS_valgrind_10000:+, $(awk -v a="$NS_valgrind_10000" -v b="${!v}" 'BEGIN { printf "%.2f", a / b }')x (wall) than valgrind memcheck} (goal: 50x)"
    fi
done

# Scaling: pairs per second of 2 threads against one thread's, same options
# (goal: at least 1.5x).
for n in "${names[@]}"; do
    case "$n" in memdbg-*/2threads) ;; *) continue ;; esac
    base=${n%/2threads}
    for live in $SIZES; do
        k2=${n//-/_}; k2=PPS_${k2//\//_}_$live
        k1=${base//-/_}; k1=PPS_${k1//\//_}_$live
        [ "${!k2:-0}" -gt 0 ] && [ "${!k1:-0}" -gt 0 ] || continue
        echo "# $live live blocks: $n $(awk -v a="${!k2}" -v b="${!k1}" 'BEGIN { printf "%.2f", a / b }')x the pairs/s of $base (goal: >= 1.5x)"
    done
done

# Interleaved rounds at 10k live blocks: each memdbg variant that guards
# every free at once (the first backend; with nonlinear also compact mode),
# Electric Fence and DUMA one after the other in each round; the ratio of
# each round, then the median and the lowest.
if [ "$ROUNDS" -gt 0 ] && [ ${#backends[@]} -gt 0 ] && [ -n "$EFENCE" ] && [ -n "$DUMA" ]; then
    variants=("memdbg-${backends[0]}")
    [ "${backends[0]}" = nonlinear ] && variants+=("memdbg-nonlinear/compact")
    echo "# $ROUNDS interleaved rounds at 10000 live blocks: ${variants[*]} 8000 pairs each, efence 800, duma 500 (us per pair, wall/cpu)"
    declare -A ratios_e ratios_d
    pair_ns() { sed -n 's/.* ns_per_pair=\([0-9]*\) cpu_ns_per_pair=\([0-9]*\).*/\1 \2/p'; }
    for r in $(seq 1 "$ROUNDS"); do
        ms=()
        for v in "${variants[@]}"; do
            md_variant "$v"
            ms+=("$(LD_PRELOAD=$LIB MEMDBG_OPTIONS="$opts" timeout 300 "$BENCH" 10000 8000 2>/dev/null | pair_ns)")
        done
        e=$(EF_ALLOW_MALLOC_0=1 LD_PRELOAD=$EFENCE timeout 300 "$BENCH" 10000 800 2>/dev/null | pair_ns)
        d=$(DUMA_DISABLE_BANNER=1 LD_PRELOAD=$DUMA timeout 300 "$BENCH" 10000 500 2>/dev/null | pair_ns)
        if [ -z "$e" ] || [ -z "$d" ]; then echo "# round $r: FAILED (efence '$e', duma '$d')"; continue; fi
        set -- $e $d
        text="# round $r: efence $(( $1 / 1000 ))/$(( $2 / 1000 )) duma $(( $3 / 1000 ))/$(( $4 / 1000 ))"
        for k in "${!variants[@]}"; do
            v=${variants[$k]}
            set -- ${ms[$k]} $e $d
            if [ $# -ne 6 ]; then text+="; $v FAILED"; continue; fi
            re=$(awk -v a="$3" -v b="$1" 'BEGIN { printf "%.1f", a / b }')
            rd=$(awk -v a="$5" -v b="$1" 'BEGIN { printf "%.1f", a / b }')
            ratios_e[$v]+="$re " ratios_d[$v]+="$rd "
            text+="; $v $(( $1 / 1000 ))/$(( $2 / 1000 )): ${re}x Electric Fence, ${rd}x DUMA"
        done
        echo "$text"
    done
    med() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
    least() { printf '%s\n' "$@" | sort -n | head -n 1; }
    # the goal holds when every round reaches it: the minimum too
    for v in "${variants[@]}"; do
        [ -n "${ratios_e[$v]:-}" ] || continue
        set -- ${ratios_e[$v]}; n=$#; me=$(med "$@"); le=$(least "$@")
        set -- ${ratios_d[$v]}
        echo "# median of $n rounds: $v ${me}x faster than Electric Fence (lowest round ${le}x), $(med "$@")x than DUMA (lowest $(least "$@")x) (goal: >= 50x than Electric Fence at 10k live blocks, every round)"
    done
fi
