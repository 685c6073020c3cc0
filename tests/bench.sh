#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make bench: every benchmark, figures only (no pass/fail).  The output is
# also kept in build/bench/.
#   kernel: tests/kernel/bench.sh boots the patched and the stock guest and
#           times remap_file_pages() against mmap/mprotect per page;
#   lib:    tests/lib/bench.sh in one patched-guest run (the backends that
#           kernel offers), then on the host (its fallback backends);
#   real:   tests/bench-real.sh: perl, python3, a C++ std::map program,
#           gcc, sqlite3, bash and git plain and under memdbg, valgrind,
#           Electric Fence and DUMA, on the host and in the patched guest
#           (tables build/bench/real-{host,guest}.txt, real-{cpu,rss}.png);
#   sample: tests/bench-sample.sh: sampled guarding against GWP-ASan: the
#           pool of guarded blocks (host, and a million blocks on the
#           patched guest's nonlinear backend), the bug corpus's detection
#           and a use-after-free 10 million allocations after its free
#           (build/bench/sample-{host,guest}.txt, sample-pool.png);
#   plots:  tests/bench-plots.sh draws build/bench/{vmas,malloc,remap}.png
#           with gnuplot from those tables and from memdbg compare runs of
#           examples/live_blocks (host and patched guest); each PNG names
#           the run it comes from (build/bench/run-info.txt).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
build=${BUILD:-build}
export BUILD=$build
mkdir -p "$build/bench"
status=0

part() { # name, command...
	local name=$1
	shift
	echo "== bench $name: $*"
	"$@" 2>&1 | tee "$build/bench/$name.txt"
	[ "${PIPESTATUS[0]}" = 0 ] || { echo "bench: $name failed"; status=1; }
}

part kernel tests/kernel/bench.sh
# lib: 6 GiB of guest memory so that the 1M-live-block row fits (about
# 4.5 GiB); the host's load average goes into the table's header.
BENCH_HOST_LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
export BENCH_HOST_LOAD
part lib-guest kernel/scripts/vm-run.sh --kernel patched --append no_timer_check --timeout "${BENCH_GUEST_TIMEOUT:-3000}" \
	--mem "${BENCH_GUEST_MEM:-6144}" --env BENCH_HOST_LOAD -- tests/lib/bench.sh --build "$build" --rounds 5
part lib-host tests/lib/bench.sh --build "$build"
part real tests/bench-real.sh --build "$build" --out "$build/bench"
part sample tests/bench-sample.sh --build "$build" --out "$build/bench"
part plots tests/bench-plots.sh --build "$build" --out "$build/bench"
echo "bench: figures kept in $build/bench/ (tables *.txt, plots *.png; docs/benchmarks.md shows committed ones)"
exit $status
