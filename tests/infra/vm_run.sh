#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# TAP tests of the guest runner's contract (kernel/scripts/vm-run.sh and
# make vm-run): what the guest looks like, exit statuses, stdout/stderr,
# timeouts, crash and kernel-warning detection, concurrent runs.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
vm=kernel/scripts/vm-run.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 bad=0

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); bad=$((bad + 1)); echo "not ok $n - $1"
	shift
	for f in "$@"; do sed 's/^/# /' "$f" | head -20; done
}
check() { # description, then a test command; out/err files are shown on failure
	local what=$1; shift
	if "$@"; then ok "$what"; else not_ok "$what" "$tmp/out" "$tmp/err"; fi
}
run() { # run the guest; status in $rc, output in $tmp/out and $tmp/err
	rc=0
	"$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
}

# One boot of the patched kernel answers most questions at once.
run $vm -- 'uname -r; grep -c "^/dev/vda" /proc/swaps; nproc;
	awk "/MemTotal/ {print \$2}" /proc/meminfo; pwd;
	echo scratch >"$TMPDIR/x" && cat "$TMPDIR/x"; echo tmp >/tmp/y && cat /tmp/y;
	grep -c " /sys/fs/cgroup cgroup2" /proc/mounts; id -u;
	echo to-stderr >&2; exit 7'
mapfile -t line <"$tmp/out"
check "patched guest exits with the command's status (7)" test "$rc" = 7
check "patched guest runs a 6.12 -memdbg kernel (${line[0]:-none})" \
	bash -c '[[ "$1" =~ ^6\.12\.[0-9]+-memdbg$ ]]' _ "${line[0]:-}"
check "a swap device is active in the guest" test "${line[1]:-0}" = 1
check "the guest has 2 CPUs" test "${line[2]:-0}" = 2
check "the guest has at least 1.9 GiB of RAM (${line[3]:-0} kB)" test "${line[3]:-0}" -ge 1900000
check "the command runs in the host's current directory" test "${line[4]:-}" = "$PWD"
check "TMPDIR is writable in the guest" test "${line[5]:-}" = scratch
check "/tmp is writable in the guest" test "${line[6]:-}" = tmp
check "cgroup2 is mounted on /sys/fs/cgroup" test "${line[7]:-}" = 1
check "the command runs as root" test "${line[8]:-}" = 0
check "stderr comes back separately from stdout" \
	bash -c '[ "$(grep -v "^memdbg vm-run:" "$1")" = to-stderr ] && ! grep -q to-stderr "$2"' _ "$tmp/err" "$tmp/out"

# The build lock is per flavour: while a debug build holds its lock, the
# stock kernel boots at once and a debug boot says what it waits for.  (A
# build tree of its own whose images are the real ones, so that holding its
# lock holds up nobody else.)
lb=$tmp/build
for f in stock debug; do
	mkdir -p "$lb/kernel/obj-$f/arch/x86/boot"
	ln -s "$PWD/build/kernel/obj-$f/arch/x86/boot/bzImage" "$lb/kernel/obj-$f/arch/x86/boot/bzImage"
done
(
	exec 6>>"$lb/kernel/lock.debug"
	flock -x 6
	echo "the debug kernel build (pid $BASHPID)" >"$lb/kernel/lock.debug"
	touch "$tmp/held"
	exec sleep 600
) &
holder=$!
while [ ! -e "$tmp/held" ]; do sleep 0.1; done
run env BUILD="$lb" $vm --kernel stock -- 'uname -r'
check "KERNEL=stock boots the unpatched 6.12 (-stock) kernel" \
	bash -c '[ "$1" = 0 ] && grep -qE "^6\.12\.[0-9]+-stock$" "$2"' _ "$rc" "$tmp/out"
check "a stock boot does not wait for a debug build" \
	bash -c '[ "$1" = 0 ] && ! grep -q waiting "$2"' _ "$rc" "$tmp/err"
run env BUILD="$lb" timeout 5 $vm --kernel debug -- true
check "a debug boot waits for the debug build and names it" \
	bash -c '[ "$1" = 124 ] && grep -q "waiting for the debug kernel: the debug kernel build (pid [0-9]*) holds .*/lock.debug" "$2"' \
	_ "$rc" "$tmp/err"
kill "$holder"
wait "$holder" 2>/dev/null

run $vm -- 'no-such-command-memdbg'
check "a command that does not exist returns 127, like a shell" test "$rc" = 127

run $vm -- 'echo "WARNING: CPU: 0 PID: 1 at memdbg/selftest" >/dev/kmsg; true'
check "a WARNING in the guest kernel log fails the run (125) and names the log" \
	bash -c '[ "$1" = 125 ] && grep -q "console log: .*console.log" "$2"' _ "$rc" "$tmp/err"

run $vm -- 'echo c >/proc/sysrq-trigger; sleep 5'
check "a guest that panics is reported (125) with the log path" \
	bash -c '[ "$1" = 125 ] && grep -q "stopped before the command finished" "$2" && grep -q "console log:" "$2"' _ "$rc" "$tmp/err"

t0=$(date +%s)
run $vm --timeout 20 -- 'sleep 600'
t1=$(date +%s)
check "a hung guest is killed at the timeout (124) with a message and the log path ($((t1 - t0)) s)" \
	bash -c '[ "$1" = 124 ] && [ "$2" -lt 60 ] && grep -q "did not finish within 20 s" "$3" && grep -q "console log:" "$3"' \
	_ "$rc" "$((t1 - t0))" "$tmp/err"

# Two runs at once: separate run directories, swap opened snapshot=on.
$vm -- 'swapon --show=NAME --noheadings; echo first' >"$tmp/a" 2>&1 &
a=$!
$vm -- 'swapon --show=NAME --noheadings; echo second' >"$tmp/b" 2>&1 &
b=$!
ra=0 rb=0
wait $a || ra=$?
wait $b || rb=$?
check "two concurrent runs both succeed with their own output" \
	bash -c '[ "$1" = 0 ] && [ "$2" = 0 ] && grep -qx first "$3" && grep -qx second "$4" && grep -qx /dev/vda "$3" && grep -qx /dev/vda "$4"' \
	_ "$ra" "$rb" "$tmp/a" "$tmp/b"

run make -s vm-run CMD='printf "%s|" "a b" '\''c'\'' "$$"; echo; exit 3'
check "make vm-run passes CMD to the guest shell unchanged and fails with its status (Error 3)" \
	bash -c '[ "$1" != 0 ] && grep -qx "a b|c|[0-9][0-9]*|" "$2" && grep -q "Error 3" "$3"' _ "$rc" "$tmp/out" "$tmp/err"

run make -s vm-run CMD='uname -r'
check "make vm-run succeeds when CMD does" \
	bash -c '[ "$1" = 0 ] && grep -qE "^6\.12\.[0-9]+-memdbg$" "$2"' _ "$rc" "$tmp/out"

run make -s vm-run
check "make vm-run without CMD explains how to use it" \
	bash -c '[ "$1" != 0 ] && grep -q "set CMD=" "$2"' _ "$rc" "$tmp/err"

run $vm --kernel nosuch -- true
check "an unknown kernel is a clear error" \
	bash -c '[ "$1" = 2 ] && grep -q "kernel image nosuch does not exist" "$2"' _ "$rc" "$tmp/err"

run $vm --frobnicate -- true
check "an unknown option is a clear error" \
	bash -c '[ "$1" = 2 ] && grep -q "unknown option .--frobnicate" "$2"' _ "$rc" "$tmp/err"

# A fresh tree takes a finished image from the image cache instead of
# building it.  The tree is a build directory of its own whose sources are
# links to the real ones, with nothing built; the cache holds a stand-in
# image under the stock kernel's key.  (timeout: a cache miss would start
# a real build.)
cb=$tmp/cbuild kc=$tmp/kcache
mkdir -p "$cb/kernel/stock"
ln -s "$PWD/build/kernel/linux" "$cb/kernel/linux"
ln -s "$PWD/build/kernel/stock/linux" "$cb/kernel/stock/linux"
cp build/kernel/pristine.stamp "$cb/kernel/"
key=$(BUILD=$cb KERNEL_CACHE=$kc kernel/scripts/build-kernel.sh --image-key stock 2>"$tmp/err")
mkdir -p "$kc/$key"
echo stand-in >"$kc/$key/bzImage"
echo 6.12.0-stock >"$kc/$key/kernel.release"
run env BUILD="$cb" KERNEL_CACHE="$kc" timeout 120 kernel/scripts/build-kernel.sh stock
check "a fresh tree takes the stock image from the image cache" \
	bash -c '[ "$1" = 0 ] && [ "$(cat "$2")" = stand-in ] && grep -q "stock kernel taken from the image cache (6.12.0-stock" "$3"' \
	_ "$rc" "$cb/kernel/stock/obj/arch/x86/boot/bzImage" "$tmp/err"
run env BUILD="$cb" KERNEL_CACHE="$kc" timeout 120 kernel/scripts/build-kernel.sh stock
check "the next build finds the cached image up to date" \
	bash -c '[ "$1" = 0 ] && grep -q "stock kernel is up to date (6.12.0-stock)" "$2"' _ "$rc" "$tmp/err"
keys=$(for f in stock patched debug; do BUILD=$cb kernel/scripts/build-kernel.sh --image-key $f 2>/dev/null; done | sort -u | grep -c '^[0-9a-f]\{32\}$')
check "each flavour has an image key of its own ($keys distinct)" test "$keys" = 3

echo "1..$n"
[ "$bad" = 0 ]
