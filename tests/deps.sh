#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install the Debian packages memdbg needs, non-interactively and only when
# something is missing (make deps; make check and make demo call it).
#
#   deps.sh            install what is missing
#   deps.sh --list     print the package list
#   deps.sh --check    exit 1 (naming them) if packages are missing
#   deps.sh --cross    also install the optional cross toolchains (below)
#   deps.sh --list-cross   print those
#   deps.sh --bench    also install what make bench's real programs need
#   deps.sh --list-bench   print those
set -euo pipefail

packages=(
	# build tools
	gcc g++ make git ccache
	# kernel build
	linux-source-6.12 flex bison bc libelf-dev libssl-dev cpio xz-utils
	# guest runner (mkswap, flock, timeout come from util-linux/coreutils)
	qemu-system-x86 util-linux coreutils
	# libmemdbg: unwinding and symbolization
	libunwind-dev libdw-dev
	# comparisons in make bench / make demo / memdbg compare
	electric-fence duma
	# tests drive real programs; docs/man/md2man.py
	python3
	# make bench draws its plots
	gnuplot-nox
	# the man pages are checked with man --warnings
	man-db groff-base
)

# Optional, not installed by make deps: cross compilers for make
# kernel-crosscheck, which builds mm/ and fs/proc/ of the patched tree for
# arm64 and alpha (deps.sh --cross installs them).
cross_packages=(
	gcc-aarch64-linux-gnu gcc-alpha-linux-gnu
)

# Only for make bench (tests/bench-real.sh): the debugger it compares
# against and a workload program that is not in a minimal install (perl,
# bash and git are there already: git and man-db need them).
bench_packages=(
	valgrind sqlite3
	# Scudo with GWP-ASan, beside memdbg's sampled mode
	libclang-rt-19-dev
)

missing() {
	local p
	for p in "${packages[@]}"; do
		[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || printf '%s\n' "$p"
	done
}

case ${1:-} in
--list) printf '%s\n' "${packages[@]}"; exit 0 ;;
--list-cross) printf '%s\n' "${cross_packages[@]}"; exit 0 ;;
--cross) packages+=("${cross_packages[@]}"); set -- "" ;;
--list-bench) printf '%s\n' "${bench_packages[@]}"; exit 0 ;;
--bench) packages+=("${bench_packages[@]}"); set -- "" ;;
--check | "") ;;
*) echo "deps.sh: unknown option '$1' (use --list, --check, --cross, --list-cross, --bench or --list-bench)" >&2; exit 2 ;;
esac

command -v dpkg-query >/dev/null || { echo "deps.sh: this is not a Debian system (no dpkg-query); install by hand: ${packages[*]}" >&2; exit 1; }

todo=$(missing)
if [ -z "$todo" ]; then
	[ "${1:-}" = --check ] || echo "deps: all ${#packages[@]} packages present"
	exit 0
fi
if [ "${1:-}" = --check ]; then
	echo "deps: missing packages:" $todo >&2
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages:" $todo >&2
	echo "deps: run as root: apt-get install" $todo >&2
	exit 1
fi

echo "deps: installing:" $todo
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp /tmp/memdbg-deps.XXXXXX)
if ! apt-get update >"$log" 2>&1; then
	tail -5 "$log" >&2
	echo "deps: apt-get update failed (full log: $log); continuing with the cached package lists" >&2
fi
# shellcheck disable=SC2086
if ! apt-get install -y --no-install-recommends $todo >>"$log" 2>&1; then
	grep -E '^E:' "$log" >&2 || tail -10 "$log" >&2
	still=$(missing)
	echo "deps: could not install:" $still >&2
	for p in $still; do
		apt-cache policy "$p" 2>/dev/null | grep -q 'Candidate: (none)' && echo "deps:   $p: no installable candidate in the configured package sources" >&2
	done
	echo "deps: full log: $log" >&2
	exit 1
fi
still=$(missing)
if [ -n "$still" ]; then
	echo "deps: still missing after apt-get install:" $still "(log: $log)" >&2
	exit 1
fi
rm -f "$log"
echo "deps: done"
