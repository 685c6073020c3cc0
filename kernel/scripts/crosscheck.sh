#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Cross-build the parts of the patched kernel the series touches (mm/ with
# the remap_file_pages() syscall, fs/proc/) for other architectures, to
# catch what an x86-only build hides: a uapi flag missing from an
# architecture's own asm/mman.h, x86 symbols used in generic code, 64-bit
# assumptions.
#
#   crosscheck.sh [arm64|alpha|mips ...]     (default: arm64 alpha)
#
# Needs Debian's cross compilers (optional packages, see tests/deps.sh):
#   gcc-aarch64-linux-gnu, gcc-alpha-linux-gnu, gcc-mips-linux-gnu
# A missing compiler skips its architecture with a message (status 0 only
# if at least one architecture was checked and none failed).
#
# Builds build/kernel/linux as it is (the patched branch, local commits and
# edits included) out of tree into build/kernel/obj-cross-<arch>, from
# allnoconfig plus what the series needs (SHMEM, SWAP, THP where the
# architecture has it; on arm64 also TEST_HMM, for mm/hmm.o), with warnings as errors for the touched
# directories.
#
# Environment: BUILD (default <repo>/build), JOBS (default 2).
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$repo/build}
case $build in /*) ;; *) build=$repo/$build ;; esac
src=$build/kernel/linux
jobs=${JOBS:-2}

say() { printf 'memdbg-crosscheck: %s\n' "$*" >&2; }
die() { printf 'memdbg-crosscheck: error: %s\n' "$*" >&2; exit 1; }

[ -f "$src/Makefile" ] || die "no kernel tree at $src: run 'make kernel-patched' first"
[ $# -gt 0 ] || set -- arm64 alpha

kmake() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES make "$@"; }

checked=0 failed=0
for arch in "$@"; do
	case $arch in
	arm64) cross=aarch64-linux-gnu- ;;
	alpha) cross=alpha-linux-gnu- ;;
	mips) cross=mips-linux-gnu- ;;
	*) die "unknown architecture '$arch' (arm64, alpha or mips)" ;;
	esac
	if ! command -v "${cross}gcc" >/dev/null; then
		say "$arch: ${cross}gcc not installed (apt-get install gcc-${cross%-}): skipped"
		continue
	fi
	obj=$build/kernel/obj-cross-$arch
	mkdir -p "$obj"
	frag=$obj/memdbg.fragment
	{
		echo CONFIG_MMU=y
		echo CONFIG_SHMEM=y
		echo CONFIG_TMPFS=y
		echo CONFIG_MEMFD_CREATE=y
		echo CONFIG_SWAP=y
		echo CONFIG_PROC_FS=y
		echo CONFIG_PROC_PAGE_MONITOR=y
		echo CONFIG_ADVISE_SYSCALLS=y
		echo CONFIG_USERFAULTFD=y
		[ "$arch" = arm64 ] && echo CONFIG_TRANSPARENT_HUGEPAGE=y
		# mm/hmm.c (hmm_range_fault() faults nonlinear entries in) is
		# built only with HMM_MIRROR, which only selects reach:
		# TEST_HMM, on ZONE_DEVICE and DEVICE_PRIVATE.
		[ "$arch" = arm64 ] && printf '%s\n' CONFIG_MIGRATION=y \
			CONFIG_SPARSEMEM_VMEMMAP=y CONFIG_MEMORY_HOTPLUG=y \
			CONFIG_MEMORY_HOTREMOVE=y CONFIG_ZONE_DEVICE=y \
			CONFIG_DEVICE_PRIVATE=y CONFIG_RUNTIME_TESTING_MENU=y \
			CONFIG_TEST_HMM=y
		[ "$arch" = mips ] && echo CONFIG_64BIT=y
		true
	} >"$frag"
	log=$obj/build.log
	say "$arch: configuring and building mm/ fs/proc/ (log: $log)"
	if kmake -s -C "$src" O="$obj" ARCH="$arch" CROSS_COMPILE="$cross" \
		KCONFIG_ALLCONFIG="$frag" allnoconfig >"$log" 2>&1 &&
		kmake -C "$src" O="$obj" ARCH="$arch" CROSS_COMPILE="$cross" -j"$jobs" \
			KCFLAGS=-Werror mm/ fs/proc/ >>"$log" 2>&1; then
		if [ "$arch" = arm64 ] && [ ! -f "$obj/mm/hmm.o" ]; then
			say "$arch: FAILED: mm/hmm.o not built (CONFIG_HMM_MIRROR: $(grep HMM_MIRROR "$obj/.config" || echo absent))"
			failed=$((failed + 1))
			continue
		fi
		say "$arch: ok ($(grep -c '^  CC ' "$log" || true) files compiled)"
		checked=$((checked + 1))
	else
		grep -E 'error|warning' "$log" | head -30 >&2 || true
		tail -5 "$log" >&2
		say "$arch: FAILED (full log: $log)"
		failed=$((failed + 1))
	fi
done
[ "$failed" = 0 ] || exit 1
[ "$checked" -gt 0 ] || die "no cross compiler installed: nothing was checked"
say "$checked architecture(s) build mm/ and fs/proc/ cleanly"
