#!/usr/bin/env bash
# make bench: every benchmark, figures only (no pass/fail).  Each part runs
# its own guest boots; the output is also kept in build/bench/.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
build=${BUILD:-build}
mkdir -p "$build/bench"
status=0
for part in tests/kernel/bench.sh tests/lib/bench.sh; do
	name=$(basename "$(dirname "$part")")
	if [ ! -x "$part" ]; then
		echo "bench: $part is missing, skipped"
		continue
	fi
	echo "== bench: $part"
	"$part" --build "$build" 2>&1 | tee "$build/bench/$name.txt"
	[ "${PIPESTATUS[0]}" = 0 ] || { echo "bench: $part failed"; status=1; }
done
echo "bench: figures kept in $build/bench/"
exit $status
