#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run every test suite, on the host and in guests, and count the results.
# Each suite prints TAP (ok / not ok / # SKIP lines); this script keeps each
# suite's output in build/test-results/<suite>.tap, shows it as it runs and
# ends with one line: "N passed, N failed, N skipped".  The longest guest
# suite runs in the background beside the others (see CHECK_BACKGROUND).
#
#   tests/check.sh [SUITE...]     default: all suites (see --list)
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 2
build=${BUILD:-build}
results=$build/test-results
mkdir -p "$results"

# name | where | command (run from the repository root)
suites=(
	"unit|host|tests/unit/run.sh --build $build"
	"layers|host|tests/infra/layer_check.sh --build $build"
	"infra|host|tests/infra/vm_run.sh"
	"docs|host|tests/infra/doc_links.py"
	"bench-real|host|tests/infra/bench_real.sh --build $build"
	"lib-host|host|tests/lib/run.sh --build $build --backend auto"
	"lib-host-mprotect|host|tests/lib/run.sh --build $build --backend mprotect"
	"cli|host|tests/cli/run.sh --build $build"
	"guest-patched|host|kernel/scripts/vm-run.sh --kernel patched --timeout ${GUEST_TIMEOUT:-1800} -- tests/guest/run.sh patched"
	"guest-debug|host|kernel/scripts/vm-run.sh --kernel debug --timeout ${GUEST_TIMEOUT:-2400} -- tests/guest/run.sh debug"
	"guest-stock|host|kernel/scripts/vm-run.sh --kernel stock --timeout ${GUEST_TIMEOUT:-1200} -- tests/guest/run.sh stock"
	"guest-races|host|kernel/scripts/vm-run.sh --kernel debug --swap-iops 20 --timeout ${GUEST_TIMEOUT:-600} -- env NL_LINK_RACE_SECONDS=30 NL_LINK_RACE_MIN_OPEN=10 $build/tests/kernel/nl_link_race_test"
)

# The suites started first and run beside the others.  A TCG guest keeps
# one host core busy for the whole of its suite, and the host suites are
# mostly serial, so on two cores the longest guest suite overlaps the rest
# instead of adding to it.  CHECK_BACKGROUND names them (space-separated);
# CHECK_BACKGROUND= runs everything one after the other, to time a suite
# alone.
background=" ${CHECK_BACKGROUND-guest-patched} "

if [ "${1:-}" = --list ]; then
	printf '%s\n' "${suites[@]}" | cut -d'|' -f1
	exit 0
fi
wanted=" $* "

passed=0 failed=0 skipped=0
failures=()
start_all=$(date +%s)

# Count one suite's TAP.  A suite that exits non-zero without a "not ok"
# line (a crash, a missing binary, a guest that died) still counts as a
# failure, so nothing can pass by printing nothing.
count_suite() {
	local name=$1 tap=$2 status=$3 p f s
	p=$(grep -cE '^ok [0-9]+' "$tap" | head -1)
	s=$(grep -cE '^ok [0-9]+.*# *(SKIP|skip)' "$tap" | head -1)
	f=$(grep -cE '^not ok [0-9]+' "$tap" | head -1)
	p=$((p - s))
	if [ "$status" != 0 ] && [ "$f" = 0 ]; then
		f=1
		failures+=("$name: exited with status $status without a failing test (see $tap)")
	fi
	if [ "$((p + f + s))" = 0 ]; then
		f=1
		failures+=("$name: ran no test (see $tap)")
	fi
	while IFS= read -r line; do
		failures+=("$name: $line")
	done < <(grep -E '^not ok [0-9]+' "$tap")
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	printf '== %s: %d passed, %d failed, %d skipped (%s s)\n' "$name" "$p" "$f" "$s" "$4"
}

selected() {
	[ "$wanted" = "  " ] || [[ $wanted == *" $1 "* ]]
}

# Start one suite in the background.  Its TAP goes to its file and to the
# terminal with the suite's name in front of every line; its status and
# time go to files that the count at the end reads.
started=()
start_background() {
	local name=$1 cmd=$2 tap=$results/$1.tap
	echo "== $name (background): $cmd"
	rm -f "$tap.status"
	(
		t0=$(date +%s)
		# shellcheck disable=SC2086
		$cmd 2>&1 | tee "$tap" | sed -u "s/^/[$name] /"
		status=${PIPESTATUS[0]}
		echo "$status $(($(date +%s) - t0))" >"$tap.status"
	) &
	started+=("$name")
}

for entry in "${suites[@]}"; do
	IFS='|' read -r name where cmd <<<"$entry"
	selected "$name" || continue
	[ -x "${cmd%% *}" ] || continue
	[[ $background == *" $name "* ]] && start_background "$name" "$cmd"
done

for entry in "${suites[@]}"; do
	IFS='|' read -r name where cmd <<<"$entry"
	selected "$name" || continue
	[[ $background == *" $name "* ]] && [ -x "${cmd%% *}" ] && continue
	script=${cmd%% *}
	tap=$results/$name.tap
	if [ ! -x "$script" ]; then
		echo "not ok 1 - $name: $script is missing" >"$tap"
		count_suite "$name" "$tap" 1 0
		continue
	fi
	echo "== $name ($where): $cmd"
	t0=$(date +%s)
	# shellcheck disable=SC2086
	$cmd 2>&1 | tee "$tap"
	status=${PIPESTATUS[0]}
	count_suite "$name" "$tap" "$status" "$(($(date +%s) - t0))"
done

if [ ${#started[@]} -gt 0 ]; then
	echo "== waiting for ${started[*]}"
	wait
	for name in "${started[@]}"; do
		tap=$results/$name.tap
		read -r status secs <"$tap.status" 2>/dev/null || status=1 secs=0
		count_suite "$name" "$tap" "$status" "$secs"
	done
fi

echo
if [ ${#failures[@]} -gt 0 ]; then
	echo "Failures:"
	printf '  %s\n' "${failures[@]}"
	echo
fi
echo "Results per suite are in $results/ (total $(($(date +%s) - start_all)) s)."
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
