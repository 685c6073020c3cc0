#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Run a shell command inside a QEMU guest booted on a memdbg kernel.
#
#   vm-run.sh [options] [--] 'shell command'
#
# The guest sees the host's root filesystem read-only over virtio-9p, so
# every host program and every binary of this repository runs there.  It
# has /proc, /sys, /dev, a tmpfs on /run (TMPDIR and HOME point into it),
# a tmpfs on /tmp (unless the working directory is under /tmp), cgroup2 on
# /sys/fs/cgroup and an active swap device.  Its memory is split into two
# emulated NUMA nodes (numa=fake=2), so page migration can be driven with
# move_pages(2).  The command runs as root with
# /bin/sh -c in the host's current directory; its stdout and stderr stream
# back to the host's, and this script exits with its status.
#
# Options (environment variable in brackets):
#   --kernel patched|stock|debug|PATH   [KERNEL]      default patched
#   --timeout SECONDS                   [VM_TIMEOUT]  default 300
#   --mem MIB                           [VM_MEM]      default 2048
#   --cpus N                            [VM_CPUS]     default 2
#   --swap MIB                          [VM_SWAP]     default 2048
#   --swap-iops N                       [VM_SWAP_IOPS] throttle the swap device to N
#                                                     requests per second (default: none),
#                                                     so that swap-in holds a fault for a while
#   --kvm auto|on|off                   [VM_KVM]      default auto (probe)
#   --cpu-model MODEL                   [VM_CPU_MODEL] TCG only: qemu -cpu value, default max
#                                                     (e.g. 'max,vendor=GenuineIntel' makes the
#                                                     guest kernel treat the CPU as L1TF-affected)
#   --env NAME                          [VM_ENV]      pass a host variable (repeatable;
#                                                     VM_ENV is a space-separated list)
#   --console                           [VM_CONSOLE=1] copy the kernel console to stderr
#   --append ARGS                       [VM_APPEND]   extra kernel command line
#
# Exit status: the command's; 124 when the guest was killed at the
# timeout; 125 when the guest died without finishing the command, or its
# kernel log shows an oops, BUG, WARNING, KASAN, lockdep or similar report
# (the command's own status is printed then).  The console log of every
# run is kept under build/vm/runs/ and its path is printed on failure.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$repo/build}
case $build in /*) ;; *) build=$repo/$build ;; esac

kernel=${KERNEL:-patched}
timeout=${VM_TIMEOUT:-300}
mem=${VM_MEM:-2048}
cpus=${VM_CPUS:-2}
swap_mib=${VM_SWAP:-2048}
swap_iops=${VM_SWAP_IOPS:-}
kvm=${VM_KVM:-auto}
cpu_model=${VM_CPU_MODEL:-max}
console=${VM_CONSOLE:-0}
append=${VM_APPEND:-}
pass_env=${VM_ENV:-}

say() { printf 'memdbg vm-run: %s\n' "$*" >&2; }
die() { printf 'memdbg vm-run: error: %s\n' "$*" >&2; exit 2; }
usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }

need_value() { [ $# -ge 2 ] && [ -n "$2" ] || die "option $1 needs a value"; }
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) need_value "$@"; kernel=$2; shift 2 ;;
	--timeout) need_value "$@"; timeout=$2; shift 2 ;;
	--mem) need_value "$@"; mem=$2; shift 2 ;;
	--cpus) need_value "$@"; cpus=$2; shift 2 ;;
	--swap) need_value "$@"; swap_mib=$2; shift 2 ;;
	--swap-iops) need_value "$@"; swap_iops=$2; shift 2 ;;
	--kvm) need_value "$@"; kvm=$2; shift 2 ;;
	--cpu-model) need_value "$@"; cpu_model=$2; shift 2 ;;
	--env) need_value "$@"; pass_env+=" $2"; shift 2 ;;
	--console) console=1; shift ;;
	--append) need_value "$@"; append+=" $2"; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	--) shift; break ;;
	-*) die "unknown option '$1' (see --help)" ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || die "no command given; usage: vm-run.sh [options] -- 'shell command'"
cmd=$*

for n in timeout mem cpus swap_mib; do
	[[ ${!n} =~ ^[1-9][0-9]*$ ]] || die "$n must be a positive integer, got '${!n}'"
done
[ -z "$swap_iops" ] || [[ $swap_iops =~ ^[1-9][0-9]*$ ]] ||
	die "--swap-iops must be a positive integer, got '$swap_iops'"
# QEMU's throttle lets a burst of a tenth of a second through by default:
# a burst of one request makes every request wait its turn.
swap_throttle=
[ -z "$swap_iops" ] ||
	swap_throttle=",throttling.iops-total=$swap_iops,throttling.iops-total-max=$swap_iops,throttling.iops-total-max-length=1"
case $kvm in auto | on | off) ;; *) die "--kvm takes auto, on or off, got '$kvm'" ;; esac

flavour_lock=
case $kernel in
patched | stock | debug)
	image=$build/kernel/obj-$kernel/arch/x86/boot/bzImage
	flavour_lock=$build/kernel/lock.$kernel
	;;
*) image=$kernel ;;
esac
# A build of this flavour (kernel/scripts/build-kernel.sh) holds its lock
# exclusively and rewrites the image in place: wait for that build only,
# saying so, and boot a copy taken under the lock, so that a build started
# during the run waits for nothing.  Builds of other flavours do not
# matter here.
if [ -n "$flavour_lock" ] && [ -d "${flavour_lock%/*}" ]; then
	exec 7>>"$flavour_lock"
	if ! flock -n -s 7; then
		say "waiting for the $kernel kernel: $(cat "$flavour_lock" 2>/dev/null || true) holds $flavour_lock"
		flock -s 7
	fi
fi
if [ ! -f "$image" ]; then
	case $kernel in
	patched | stock | debug) die "no $kernel kernel at $image: run 'make kernel' first" ;;
	*) die "kernel image $image does not exist" ;;
	esac
fi
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 is not installed: run 'make deps'"

# Runs may overlap (two shells, or make -j): each gets its own directory,
# and the shared swap image is opened with snapshot=on so no run writes it.
mkdir -p "$build/vm/runs"
swap_img=$build/vm/swap-${swap_mib}M.img
(
	flock 9
	if [ ! -f "$swap_img" ]; then
		truncate -s "${swap_mib}M" "$swap_img.tmp"
		chmod 600 "$swap_img.tmp"
		# Sparse is fine: the guest sees a block device, not a file.
		mkswap "$swap_img.tmp" >/dev/null 2>&1 || die "mkswap $swap_img failed"
		mv "$swap_img.tmp" "$swap_img"
	fi
) 9>"$build/vm/.swap.lock"

rundir=$(mktemp -d "$build/vm/runs/$(date +%Y%m%d-%H%M%S)-XXXX")
if [ -n "$flavour_lock" ]; then
	cp "$image" "$rundir/bzImage" || die "cannot copy $image into $rundir"
	image=$rundir/bzImage
	exec 7>&-
fi
share=$rundir/share
mkdir -p "$share"
log=$rundir/console.log
printf '%s\n' "$cmd" >"$share/cmd"
pwd >"$share/cwd"
: >"$share/env"
for name in $pass_env; do
	[[ $name =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || die "--env: '$name' is not a variable name"
	[ -n "${!name+set}" ] && printf 'export %s=%q\n' "$name" "${!name}" >>"$share/env"
done
# Keep the last 30 runs' logs, but never the directory of a run that is
# still going: make check boots one guest beside the others, and a long
# run would otherwise lose its share directory to a burst of short ones.
echo $$ >"$rundir/pid"
ls -1dt "$build/vm/runs"/*/ 2>/dev/null | tail -n +31 | while read -r old; do
	pid=$(cat "$old/pid" 2>/dev/null) || pid=
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		continue
	fi
	rm -rf "$old"
done

# qemu's command line, for a run whose files are in $1 (share) and $2 (log).
# no_timer_check: under TCG on a busy host the boot-time check that the
# IO-APIC timer ticks can miss its window, and the kernel panics with
# "IO-APIC + timer doesn't work" (seen at load average 9 on 2 cores).
# pci=noacpi: the PCI interrupt routing comes from the BIOS's table,
# not from evaluating ACPI's _PRT method.  Under TCG the debug kernel
# (KASAN, lockdep) spends about 30 s of its boot in that AML; with
# kmemleak as well it passes ACPI's 30 s loop timeout, a virtio device
# is left without an interrupt line ("PCI INT A: no GSI") and the guest
# hangs at its first I/O on it.
qemu_cmd() {
	qemu=(
		qemu-system-x86_64 -nodefaults -no-reboot -display none -monitor none
		-m "$mem" -smp "$cpus"
		-kernel "$image"
		-serial "file:$2"
		-fsdev "local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap"
		-device "virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot"
		-fsdev "local,id=share,path=$1,security_model=none,multidevs=remap"
		-device "virtio-9p-pci,fsdev=share,mount_tag=memdbgshare"
		-drive "file=$swap_img,format=raw,if=virtio,snapshot=on$swap_throttle"
		-append "console=ttyS0,115200 root=hostroot rootfstype=9p rootflags=trans=virtio,version=9p2000.L,cache=loose,msize=262144 ro init=$repo/kernel/scripts/guest-init.sh panic=-1 numa=fake=2 no_timer_check pci=noacpi $append"
	)
}

# KVM is fast but not always usable (on these machines it fails on MSRs or
# hangs): use it only after a short probe boot has shown it works, and
# remember the answer until the host reboots.
kvm_works() {
	[ -w /dev/kvm ] || return 1
	# The answer is the host's, not the checkout's: keep it per user.
	local stamp=${XDG_CACHE_HOME:-$HOME/.cache}/memdbg/kvm-probe boot_id probe rc=0
	mkdir -p "$(dirname "$stamp")"
	boot_id=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo unknown)
	if [ -f "$stamp" ] && [ "$(head -1 "$stamp")" = "$boot_id" ]; then
		[ "$(sed -n 2p "$stamp")" = yes ]
		return
	fi
	say "probing KVM (once per host boot)"
	probe=$(mktemp -d "$build/vm/runs/kvm-probe-XXXX")
	mkdir -p "$probe/share"
	echo true >"$probe/share/cmd"
	pwd >"$probe/share/cwd"
	qemu_cmd "$probe/share" "$probe/console.log"
	# In a subshell of its own so that qemu aborting is not announced by bash.
	(timeout 30 "${qemu[@]}" -enable-kvm -cpu host >"$probe/qemu.out" 2>&1; exit $?) 2>/dev/null || rc=$?
	if [ "$rc" = 0 ] && [ -f "$probe/share/status" ]; then
		printf '%s\nyes\n' "$boot_id" >"$stamp"
		say "KVM works; using it"
		return 0
	fi
	printf '%s\nno\n' "$boot_id" >"$stamp"
	say "KVM does not work here (see $probe); using TCG"
	return 1
}

accel=(-accel tcg,thread=multi -cpu "$cpu_model")
case $kvm in
on) accel=(-enable-kvm -cpu host) ;;
auto) if kvm_works; then accel=(-enable-kvm -cpu host); fi ;;
esac

start=$(date +%s)
: >"$share/stdout"
: >"$share/stderr"
qemu_cmd "$share" "$log"
"${qemu[@]}" "${accel[@]}" >"$rundir/qemu.out" 2>&1 &
qemu_pid=$!
# Stream the command's output while it runs; tail exits after qemu does,
# once it has copied what was left.
tail -c +1 -f --pid=$qemu_pid "$share/stdout" &
tail_out=$!
tail -c +1 -f --pid=$qemu_pid "$share/stderr" >&2 &
tail_err=$!
tail_con=
if [ "$console" = 1 ]; then
	tail -c +1 -F --pid=$qemu_pid "$log" >&2 2>/dev/null &
	tail_con=$!
fi

cleanup() {
	kill "$qemu_pid" 2>/dev/null || true
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM

timed_out=0
while kill -0 "$qemu_pid" 2>/dev/null; do
	if [ $(($(date +%s) - start)) -ge "$timeout" ]; then
		timed_out=1
		kill "$qemu_pid" 2>/dev/null || true
		break
	fi
	sleep 0.2
done
wait "$qemu_pid" 2>/dev/null || true
[ -z "$flavour_lock" ] || rm -f "$rundir/bzImage"
wait $tail_out $tail_err $tail_con 2>/dev/null || true
trap - EXIT

# Kernel reports that must not pass unnoticed.
# Lockdep's reports start with WARNING: or BUG:; the word "lockdep" alone
# also appears in harmless boot lines of a PROVE_LOCKING kernel.
bad_re='Oops|BUG:|WARNING:|Kernel panic|KASAN:|UBSAN:|general protection fault|DEBUG_LOCKS_WARN_ON|suspicious RCU usage|INFO: task .* blocked|INFO: rcu_.*stall|soft lockup|hard LOCKUP|kernel BUG|list_add corruption|list_del corruption|Bad page|bad pte|Bad rss-counter'
problems=$(grep -aE "$bad_re" "$log" | grep -av 'memdbg-guest:' | head -20 || true)

if [ "$timed_out" = 1 ]; then
	say "the guest did not finish within $timeout s and was killed (--timeout or VM_TIMEOUT to change)"
	say "console log: $log"
	[ -n "$problems" ] && printf '%s\n' "$problems" >&2
	exit 124
fi
if [ ! -f "$share/status" ]; then
	say "the guest stopped before the command finished (kernel panic or crash?)"
	grep -aE "$bad_re|panic|end Kernel" "$log" | tail -20 >&2 || true
	tail -15 "$log" >&2
	say "console log: $log"
	exit 125
fi
status=$(cat "$share/status")
if [ -n "$problems" ]; then
	say "the guest kernel reported problems (command status was $status):"
	printf '%s\n' "$problems" >&2
	say "console log: $log"
	exit 125
fi
rm -rf "$share"
exit "$status"
