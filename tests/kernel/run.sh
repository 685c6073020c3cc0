#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Kernel tests, run inside a guest by tests/guest/run.sh.  Each program in
# build/tests/kernel/ prints TAP (kselftest harness); shell checks here
# print TAP too.  Numbering restarts per program; tests/check.sh counts
# every ok / not ok line.
#
#   tests/kernel/run.sh [--build DIR] --kernel patched|debug|stock
#
# On the stock kernel only the baseline and the error-case tests run: the
# feature tests assert what the stock emulation cannot do.  On the debug
# kernel kmemleak_check.sh follows the tests (a skip without kmemleak).
build=build
flavour=
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	--kernel) flavour=$2; shift 2 ;;
	*) echo "$0: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
case $flavour in
patched | debug | stock) ;;
*) echo "usage: $0 [--build DIR] --kernel patched|debug|stock" >&2; exit 2 ;;
esac
status=0
# Time-bounded race rounds: on the debug kernel each round is several
# times slower, and its point is the checkers seeing every path.
if [ "$flavour" = debug ]; then
	NL_FORK_RACE_SECONDS=${NL_FORK_RACE_SECONDS:-30}
	export NL_FORK_RACE_SECONDS
fi

# Baseline measurement shared by both kernels (make demo shows the same).
tests/kernel/remap_vma_count.sh "$build" "$flavour" || status=1

for t in "$build"/tests/kernel/*_test; do
	[ -x "$t" ] || continue
	if [ "$flavour" = stock ]; then
		case $t in *errors_test) ;; *) continue ;; esac
	fi
	echo "# $t"
	t0=$(date +%s)
	"$t" || status=1
	# Where a suite's time goes, for keeping make check short
	echo "# $t: $(($(date +%s) - t0)) s"
done
# Objects the tests' kernel paths allocated that nothing references any
# more, where the debug kernel has kmemleak.
if [ "$flavour" = debug ]; then
	echo "# tests/kernel/kmemleak_check.sh"
	tests/kernel/kmemleak_check.sh || status=1
fi
exit $status
