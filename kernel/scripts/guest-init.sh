#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# PID 1 of a memdbg guest (see vm-run.sh).  The root filesystem is the
# host's, read-only over virtio-9p; the run's files (command, working
# directory, environment, and the stdout/stderr/status written back) live
# in a second, writable 9p share tagged "memdbgshare".
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH

fail() {
	echo "memdbg-guest: $*" >/dev/console
	echo b >/proc/sysrq-trigger
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs -o mode=1777 shm /dev/shm
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tmpfs -o mode=755 run /run || fail "cannot mount /run"
mkdir -p /run/memdbg/share /run/memdbg/scratch
chmod 1777 /run/memdbg/scratch
share=/run/memdbg/share
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 memdbgshare $share ||
	fail "cannot mount the result share"

cwd=$(cat $share/cwd)
# A writable, empty /tmp.  When the host's working directory lives under
# /tmp (a CI clone, say), the host directory holding it is bound back at
# the same path on top of the tmpfs, so the command still finds its files.
case $cwd in
/tmp) ;;
/tmp/*)
	mkdir -p /run/memdbg/hosttmp
	mount --bind /tmp /run/memdbg/hosttmp
	mount -t tmpfs -o mode=1777 tmp /tmp
	top=${cwd#/tmp/}
	top=${top%%/*}
	mkdir -p "/tmp/$top"
	mount --bind "/run/memdbg/hosttmp/$top" "/tmp/$top" ||
		fail "cannot bind the host's /tmp/$top"
	;;
*) mount -t tmpfs -o mode=1777 tmp /tmp ;;
esac

if [ -b /dev/vda ]; then
	swapon /dev/vda 2>$share/swapon.err || echo "memdbg-guest: swapon /dev/vda failed" >/dev/console
fi

export HOME=/run/memdbg/scratch TMPDIR=/run/memdbg/scratch TERM=dumb
export MEMDBG_GUEST=1
[ -f $share/env ] && . $share/env

cd "$cwd" || fail "cannot enter $cwd"
echo "memdbg-guest: running the command" >/dev/console
/bin/sh -c "$(cat $share/cmd)" >$share/stdout 2>$share/stderr </dev/null
echo $? >$share/status.tmp
mv $share/status.tmp $share/status
echo "memdbg-guest: command finished with status $(cat $share/status)" >/dev/console
umount $share
echo b >/proc/sysrq-trigger
