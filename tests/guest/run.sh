#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs inside a guest (tests/check.sh boots it with vm-run.sh): every
# suite that needs a memdbg or stock kernel, in one boot.  TAP on stdout.
#
#   tests/guest/run.sh patched|debug|stock
flavour=${1:-}
case $flavour in
patched | debug | stock) ;;
*) echo "usage: $0 patched|debug|stock" >&2; exit 2 ;;
esac
if [ "${MEMDBG_GUEST:-}" != 1 ]; then
	echo "$0: run this inside a guest: kernel/scripts/vm-run.sh -- $0 $flavour" >&2
	exit 2
fi
build=${BUILD:-build}
echo "# guest kernel $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ {print $2}' /proc/meminfo) kB"
status=0
echo "# suite tests/kernel/run.sh ($flavour kernel)"
tests/kernel/run.sh --build "$build" --kernel "$flavour" || status=1
# The allocator's tests in the guest, on its nonlinear backend: that is
# what the patched kernel adds (the host runs cover guard and mprotect).
# The backend must be usable on a memdbg kernel (MEMDBG_REQUIRE_BACKEND):
# a detection that falls back would otherwise hide a kernel regression.
# The debug (KASAN, lockdep) kernel runs the kernel tests only: under TCG it
# is several times slower, and the library adds no kernel path of its own.
if [ "$flavour" = patched ] && [ -x tests/lib/run.sh ]; then
	echo "# suite tests/lib/run.sh (backend nonlinear, $flavour kernel)"
	MEMDBG_REQUIRE_BACKEND=1 MEMDBG_TEST_TIMEOUT=${MEMDBG_TEST_TIMEOUT:-400} tests/lib/run.sh --build "$build" --backend nonlinear || status=1
fi
exit $status
