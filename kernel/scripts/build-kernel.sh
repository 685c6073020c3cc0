#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build a memdbg guest kernel from Debian's linux-source-6.12 tarball.
#
#   build-kernel.sh patched|stock|debug [more flavours...]
#   build-kernel.sh --image-key FLAVOUR   print the flavour's image cache key
#
# The source tree build/kernel/linux is a git repository whose first
# commit is the pristine tarball (branch "pristine"); its branch "patched"
# is pristine plus the series listed in kernel/series, and is where kernel
# work happens.  The stock kernel builds from a separate worktree of
# pristine, build/kernel/stock/linux, so patch work never leaks into it.
# Each flavour builds out of tree into build/kernel/obj-<flavour>
# (obj-stock is a link to stock/obj):
#   stock   pristine source, base.config          (uname -r: 6.12.N-stock)
#   patched series applied, base.config           (6.12.N-memdbg)
#   debug   series applied, base + debug.config   (6.12.N-memdbg-debug)
# Every object directory sits next to its source as ../linux, so ccache
# (with CCACHE_BASEDIR) sees the same relative paths for all flavours and
# shares their objects; a one-patch change recompiles only what it touches.
#
# Environment:
#   BUILD=dir          output directory (default: <repo>/build)
#   KERNEL_TARBALL=f   source tarball (default /usr/src/linux-source-6.12.tar.xz)
#   KERNEL_LOCAL=1     build the patched tree as it is (local commits or
#                      edits), without resetting it to pristine + series
#   JOBS=n             parallel jobs (default: cores + 1)
#   KERNEL_CACHE=dir   finished images, by what they are built from
#                      (default ~/.cache/memdbg/kernels; empty: no cache)
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$repo/build}
case $build in /*) ;; *) build=$repo/$build ;; esac
kdir=$build/kernel
src=$kdir/linux
stock_src=$kdir/stock/linux
tarball=${KERNEL_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
jobs=${JOBS:-$(($(nproc) + 1))}

say() { printf 'memdbg-kernel: %s\n' "$*" >&2; }
die() { printf 'memdbg-kernel: error: %s\n' "$*" >&2; exit 1; }

[ $# -ge 1 ] || die "usage: $0 patched|stock|debug ... | --mark-applied"
mark_applied=0 print_key=0
if [ "$1" = --mark-applied ]; then
	# Called by export-series.sh once kernel/series describes the tree.
	mark_applied=1
	shift
elif [ "$1" = --image-key ]; then
	print_key=1
	shift
	[ $# = 1 ] || die "usage: $0 --image-key patched|stock|debug"
fi
for flavour in "$@"; do
	case $flavour in
	patched|stock|debug) ;;
	*) die "unknown kernel flavour '$flavour' (expected patched, stock or debug)" ;;
	esac
done

[ -f "$tarball" ] || die "no kernel source at $tarball: install Debian's linux-source-6.12 package (make deps) or set KERNEL_TARBALL"

mkdir -p "$kdir"
# Two concurrent builds (make vm-run in two shells) must not interleave
# their checkouts or write the same objects, and a guest must not boot an
# image that is being written; but a build of one flavour must not hold up
# a build or a boot of another (make demo waiting for a debug build).
# - $kdir/lock.FLAVOUR: held exclusively while that flavour configures and
#   compiles; kernel/scripts/vm-run.sh takes it shared before it boots the
#   flavour's image.
# - $kdir/.lock, the source tree build/kernel/linux: exclusive for the
#   extraction and for applying kernel/series, shared while patched or
#   debug compile from it.  The stock flavour has a worktree of its own.
# An exclusive holder writes what it is doing into the lock file, so a
# waiter can say what it waits for.  Order: a flavour's lock, then the
# tree's; each flavour releases both before the next one starts.
declare -A lock_file lock_mode
trap 'unlock 9; unlock 8' EXIT
lock() { # fd, file, -s|-x, what this process needs it for[, what it does holding it]
	local holder
	eval "exec $1>>\"\$2\""
	if ! flock -n "$3" "$1"; then
		holder=$(cat "$2" 2>/dev/null)
		say "$4 waits for ${holder:-the builds or guests using it} (lock $2)"
		flock "$3" "$1"
	fi
	lock_file[$1]=$2 lock_mode[$1]=$3
	[ "$3" = -s ] || printf '%s\n' "$5" >"$2"
}
unlock() { # fd: an exclusive holder leaves the file empty (no stale name)
	[ -n "${lock_file[$1]:-}" ] || return 0
	[ "${lock_mode[$1]}" = -s ] || : >"${lock_file[$1]}"
	flock -u "$1"
	lock_file[$1]=""
}
tar_id=$(stat -c '%s %Y' "$tarball")
tree_ready() {
	[ "$(cat "$kdir/pristine.stamp" 2>/dev/null)" = "$tar_id" ] && [ -f "$kdir/stock/linux/Makefile" ]
}
# Extraction happens once; later runs need the tree lock only for the
# flavours that use the tree.
tree_ready || lock 9 "$kdir/.lock" -x "extracting the source" "the extraction of the kernel source (pid $$)"

# gc.auto=0: a background "git gc" would inherit the lock and run for minutes.
git_src() { git -C "$src" -c gc.auto=0 -c user.name=memdbg -c user.email=memdbg@localhost "$@"; }

# --- 1. pristine tree --------------------------------------------------------
if [ ! -f "$kdir/pristine.stamp" ] || [ "$(cat "$kdir/pristine.stamp")" != "$tar_id" ]; then
	say "extracting $(basename "$tarball") into $src (about a minute)"
	rm -rf "$src" "$kdir"/obj-* "$kdir/stock" "$kdir/series.applied"
	mkdir -p "$src"
	tar -xJf "$tarball" -C "$src" --strip-components=1
	say "recording the pristine source as a git commit"
	git_src init -q -b pristine
	git_src config gc.auto 0
	git_src add -A -f .
	git_src commit -q -m "linux-source-6.12 as shipped by Debian ($(basename "$tarball"))"
	git_src branch patched
	printf '%s\n' "$tar_id" >"$kdir/pristine.stamp"
fi
if [ ! -f "$stock_src/Makefile" ]; then
	rm -rf "$kdir/stock"
	git_src worktree prune
	git_src worktree add -q --detach "$stock_src" pristine
	mkdir -p "$kdir/stock/obj"
	rm -rf "$kdir/obj-stock"
	ln -s stock/obj "$kdir/obj-stock"
fi

# --- 2. the series ------------------------------------------------------------
series_patches() {
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$repo/kernel/series" | grep -v '^$' || true
}

series_id() {
	{
		cat "$repo/kernel/series"
		series_patches | while read -r p; do
			[ -f "$repo/kernel/$p" ] || die "kernel/series names $p, but kernel/$p does not exist"
			cat "$repo/kernel/$p"
		done
	} | sha256sum | cut -d' ' -f1
}

# The patched build must be exactly pristine + series: refuse a tree with
# uncommitted edits instead of silently building them.
require_clean() {
	if [ -n "$(git_src status --porcelain -uno)" ]; then
		die "$src has uncommitted changes: build them with KERNEL_LOCAL=1, or commit and 'make kernel-export' them"
	fi
}

# True when apply_series has nothing to change in the tree.
series_current() {
	[ "${KERNEL_LOCAL:-0}" = 1 ] && return 0
	[ -z "$(git_src status --porcelain -uno)" ] &&
		[ "$(git_src rev-parse --abbrev-ref HEAD)" = patched ] &&
		[ "$(cat "$kdir/series.applied" 2>/dev/null || true)" = "$(series_id) $(git_src rev-parse patched)" ]
}

# The source tree for a patched or debug build: held shared for the build,
# taken exclusively only when the series must be (re)applied first.
hold_tree() { # flavour
	while :; do
		lock 9 "$kdir/.lock" -s "the $1 kernel build"
		series_current && { apply_series; return 0; }
		unlock 9
		lock 9 "$kdir/.lock" -x "applying kernel/series for the $1 kernel" \
			"the $1 kernel build applying kernel/series (pid $$)"
		apply_series
		unlock 9
	done
}

apply_series() {
	local want applied head
	want=$(series_id)
	applied=$(cat "$kdir/series.applied" 2>/dev/null || true)
	head=$(git_src rev-parse patched)
	if [ "${KERNEL_LOCAL:-0}" = 1 ]; then
		say "KERNEL_LOCAL=1: building $src as it is (branch $(git_src rev-parse --abbrev-ref HEAD))"
		return 0
	fi
	require_clean
	[ "$(git_src rev-parse --abbrev-ref HEAD)" = patched ] || git_src checkout -q patched
	if [ "$applied" = "$want $head" ]; then
		return 0
	fi
	if [ -n "$applied" ] && [ "${applied#* }" != "$head" ]; then
		die "branch 'patched' in $src has commits that are not in kernel/series: run 'make kernel-export' to save them, or 'git -C $src branch -f patched pristine' to drop them"
	fi
	say "applying kernel/series ($(series_patches | wc -l) patches) to linux-source-6.12"
	git_src reset -q --hard pristine
	local p
	for p in $(series_patches); do
		say "  $p"
		if ! git_src am -q --whitespace=nowarn "$repo/kernel/$p" >"$kdir/am.log" 2>&1; then
			# git am's advice on --continue/--skip does not apply here.
			grep -vE '^hint:|^When you have resolved|^If you prefer to skip|^To restore the original' "$kdir/am.log" >&2
			git_src am --abort >/dev/null 2>&1 || true
			git_src reset -q --hard pristine
			rm -f "$kdir/series.applied"
			die "kernel/$p does not apply (the failing file and hunk are shown above); the tree was reset to pristine"
		fi
	done
	printf '%s %s\n' "$want" "$(git_src rev-parse HEAD)" >"$kdir/series.applied"
}

if [ "$mark_applied" = 1 ]; then
	printf '%s %s\n' "$(series_id)" "$(git_src rev-parse patched)" >"$kdir/series.applied"
	exit 0
fi

# --- 3. configure and build ---------------------------------------------------
fragments_for() {
	case $1 in
	debug) echo "$repo/kernel/config/base.config $repo/kernel/config/debug.config" ;;
	*) echo "$repo/kernel/config/base.config" ;;
	esac
}

localversion_for() {
	case $1 in
	stock) echo -stock ;;
	patched) echo -memdbg ;;
	debug) echo -memdbg-debug ;;
	esac
}

# Fail when a requested symbol did not survive olddefconfig: it is a typo
# or a missing dependency, and a guest without it would fail much later in
# a confusing way.
verify_config() {
	local obj=$1 frag line sym bad=""
	for frag in $2; do
		while IFS= read -r line; do
			case $line in
			CONFIG_*=*)
				grep -qxF "$line" "$obj/.config" || bad+="  wanted $line, got: $(grep -E "^(# )?${line%%=*}[= ]" "$obj/.config" || echo 'absent')"$'\n'
				;;
			"# CONFIG_"*" is not set")
				sym=${line#\# }; sym=${sym%% *}
				grep -q "^$sym=" "$obj/.config" && bad+="  wanted $sym off, got: $(grep "^$sym=" "$obj/.config")"$'\n'
				;;
			esac
		done <"$frag"
	done
	if [ -n "$bad" ]; then
		printf '%s' "$bad" >&2
		die "the kernel config in $obj lacks options from $2"
	fi
}

# The kernel's make must not inherit flags (-s, a jobserver) from a make
# that called this script, or the log stays empty and -j is ignored.
kmake() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES make "$@"; }

src_of() { if [ "$1" = stock ]; then echo "$stock_src"; else echo "$src"; fi; }
obj_of() { if [ "$1" = stock ]; then echo "$kdir/stock/obj"; else echo "$kdir/obj-$1"; fi; }

configure() {
	local flavour=$1 obj tree frags id
	obj=$(obj_of "$flavour") tree=$(src_of "$flavour")
	frags=$(fragments_for "$flavour")
	# shellcheck disable=SC2086
	id=$(cat $frags | sha256sum | cut -d' ' -f1)
	mkdir -p "$obj"
	if [ -f "$obj/.config" ] && [ "$(cat "$obj/config.stamp" 2>/dev/null)" = "$id" ]; then
		return 0
	fi
	say "configuring the $flavour kernel from $(echo "$frags" | sed "s|$repo/||g")"
	# shellcheck disable=SC2086
	cat $frags >"$obj/memdbg.fragment"
	kmake -s -C "$tree" O="$obj" KCONFIG_ALLCONFIG="$obj/memdbg.fragment" allnoconfig >"$obj/config.log" 2>&1 ||
		{ cat "$obj/config.log" >&2; die "allnoconfig failed"; }
	kmake -s -C "$tree" O="$obj" olddefconfig >>"$obj/config.log" 2>&1 ||
		{ cat "$obj/config.log" >&2; die "olddefconfig failed"; }
	verify_config "$obj" "$frags"
	printf '%s\n' "$id" >"$obj/config.stamp"
}

compile() {
	local flavour=$1 obj tree log cc=gcc start pid rc
	obj=$(obj_of "$flavour") tree=$(src_of "$flavour")
	log=$obj/build.log
	if command -v ccache >/dev/null; then
		cc="ccache gcc"
		export CCACHE_BASEDIR=$kdir CCACHE_NOHASHDIR=true CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
	fi
	# What a first build costs on 2 idle cores; KASAN and lockdep make the
	# debug flavour several times slower.
	first="about 4 minutes"
	if [ "$flavour" = debug ]; then first="10 minutes or more"; fi
	say "building the $flavour kernel with $jobs jobs (first build: $first; log: $log)"
	start=$(date +%s)
	# LOCALVERSION on the command line instead of CONFIG_LOCALVERSION: it
	# only reaches utsrelease.h, so the flavours share ccache entries.
	kmake -C "$tree" O="$obj" -j"$jobs" CC="$cc" LOCALVERSION="$(localversion_for "$flavour")" \
		KBUILD_BUILD_USER=memdbg KBUILD_BUILD_HOST=memdbg \
		KBUILD_BUILD_TIMESTAMP="linux-source-6.12" bzImage >"$log" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		sleep 30
		kill -0 "$pid" 2>/dev/null &&
			say "  $flavour: $(grep -c '^  CC ' "$log" || true) files compiled, $(($(date +%s) - start)) s"
	done
	rc=0
	wait "$pid" || rc=$?
	if [ "$rc" != 0 ]; then
		grep -E 'error|Error|warning: ' "$log" | head -40 >&2 || true
		tail -20 "$log" >&2
		die "the $flavour kernel failed to build (full log: $log)"
	fi
	say "$flavour kernel ready: $obj/arch/x86/boot/bzImage ($(cat "$obj/include/config/kernel.release"), $(($(date +%s) - start)) s)"
}

# What a finished build was made from: the source commit and the config.
# A matching stamp skips the build entirely, which matters for stock: it
# would otherwise switch the tree to pristine and back on every run.
build_id() {
	local flavour=$1 commit
	case $flavour in
	stock) commit=$(git_src rev-parse pristine) ;;
	*) commit=$(git_src rev-parse patched) ;;
	esac
	# shellcheck disable=SC2046
	echo "$commit $(cat $(fragments_for "$flavour") | sha256sum | cut -d' ' -f1)"
}

# --- 4. finished images ----------------------------------------------------------
# A fresh clone (CI, another worktree) builds the same images from the
# same inputs as the last build on this machine; ccache saves the
# compiler's work, but not kbuild's walk of the tree and the links, which
# still take minutes per flavour.  A finished image is kept under a key
# made of everything it is built from: the tarball, the series and every
# patch in it (patched, debug), the config fragments, this script and the
# compiler.  A local build (KERNEL_LOCAL=1) neither uses nor fills it.
cache_dir=${KERNEL_CACHE-${XDG_CACHE_HOME:-$HOME/.cache}/memdbg/kernels}
cache_keep=12	# images kept: a few series versions of each flavour

image_key() { # flavour
	# shellcheck disable=SC2046
	{
		echo "$1 $(basename "$tarball") $tar_id"
		[ "$1" = stock ] || series_id
		cat $(fragments_for "$1") "$repo/kernel/scripts/build-kernel.sh"
		gcc --version | head -1
	} | sha256sum | cut -c1-32
}

# Installs a cached image into the flavour's object directory; fails when
# there is none.
image_from_cache() { # flavour
	local obj entry
	[ -n "$cache_dir" ] && [ "${KERNEL_LOCAL:-0}" != 1 ] || return 1
	obj=$(obj_of "$1") entry=$cache_dir/$(image_key "$1")
	[ -f "$entry/bzImage" ] && [ -f "$entry/kernel.release" ] || return 1
	mkdir -p "$obj/arch/x86/boot" "$obj/include/config"
	cp "$entry/bzImage" "$obj/arch/x86/boot/bzImage.cache" &&
		mv "$obj/arch/x86/boot/bzImage.cache" "$obj/arch/x86/boot/bzImage" &&
		cp "$entry/kernel.release" "$obj/include/config/kernel.release" || return 1
	touch "$entry"
	say "$1 kernel taken from the image cache ($(cat "$entry/kernel.release"); $entry)"
}

# Keeps a freshly built image; entries appear whole (renamed into place)
# so that a concurrent build never takes a half-copied one.
image_to_cache() { # flavour
	local obj entry tmp
	[ -n "$cache_dir" ] && [ "${KERNEL_LOCAL:-0}" != 1 ] || return 0
	obj=$(obj_of "$1") entry=$cache_dir/$(image_key "$1")
	[ -d "$entry" ] && return 0
	mkdir -p "$cache_dir" || return 0
	tmp=$(mktemp -d "$cache_dir/.new.XXXXXX") || return 0
	if cp "$obj/arch/x86/boot/bzImage" "$obj/include/config/kernel.release" "$tmp/" &&
		cp "$obj/.config" "$tmp/config" && mv -T "$tmp" "$entry" 2>/dev/null; then
		# shellcheck disable=SC2012
		ls -1dt "$cache_dir"/*/ 2>/dev/null | tail -n +$((cache_keep + 1)) | xargs -r rm -rf
	else
		rm -rf "$tmp"
	fi
}

if [ "$print_key" = 1 ]; then
	image_key "$1"
	exit 0
fi

unlock 9   # (the extraction's)
for flavour in "$@"; do
	obj=$(obj_of "$flavour")
	lock 8 "$kdir/lock.$flavour" -x "the $flavour kernel build" "the $flavour kernel build (pid $$)"
	[ "$flavour" = stock ] || hold_tree "$flavour"
	if [ "${KERNEL_LOCAL:-0}" != 1 ] && [ -f "$obj/arch/x86/boot/bzImage" ] &&
		[ "$(cat "$obj/built.stamp" 2>/dev/null)" = "$(build_id "$flavour")" ]; then
		[ -n "${MEMDBG_KERNEL_QUIET:-}" ] ||
			say "$flavour kernel is up to date ($(cat "$obj/include/config/kernel.release"))"
	elif image_from_cache "$flavour"; then
		build_id "$flavour" >"$obj/built.stamp"
	else
		configure "$flavour"
		compile "$flavour"
		if [ "${KERNEL_LOCAL:-0}" != 1 ]; then
			build_id "$flavour" >"$obj/built.stamp"
			image_to_cache "$flavour"
		else
			rm -f "$obj/built.stamp"
		fi
	fi
	unlock 9
	unlock 8
done
