#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The kernel's own mm and memfd selftests, run INSIDE a guest (the goal:
# "do no worse than on stock"), one binary at a time with a timeout, so
# that the same command on the stock and on the patched kernel gives two
# comparable lists.  The binaries are built on the host from the kernel
# tree without writing into it (see docs/kernel.md, "Selftests"):
#
#   tests/kernel/kselftest_mm.sh --dir DIR [--timeout S] [--only "a b"]
#
# DIR holds mm/ and memfd/ (the OUTPUT= directories of the build).  Setup,
# the same on every kernel: debugfs mounted, 64 huge pages reserved, THP
# "madvise".  For each test it prints one line
#   kst NAME rc=N pass=P fail=F skip=S secs=T
# (P/F/S from the kselftest "# Totals:" line when there is one, else from
# the exit status: 0 pass, 4 skip, 124 timeout, other fail), and the
# output of every test that did not pass, between "--- NAME" and "---".
set -u

dir=
per_test=240
only=
while [ $# -gt 0 ]; do
	case $1 in
	--dir) dir=$2; shift 2 ;;
	--timeout) per_test=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	*) echo "$0: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
[ -d "$dir/mm" ] || { echo "$0: no $dir/mm" >&2; exit 2; }
dir=$(cd "$dir" && pwd)

# Left out, the same on every kernel: transhuge-stress (runs until killed),
# hmm-tests (needs the test_hmm module), uffd-stress (the long stress run
# of run_vmtests.sh, needs arguments), fuse_test (needs a FUSE mount),
# write_to_hugetlbfs and hugepage-vmemmap (need arguments or
# /proc/kpageflags walks), compaction_test (fills memory for minutes
# under TCG), mlock-random-test (sizes from RLIMIT_MEMLOCK, minutes).
tests="mm/cow mm/gup_longterm mm/gup_test mm/madv_populate mm/map_fixed_noreplace
mm/map_populate mm/mkdirty mm/mlock2-tests mm/mremap_dontunmap mm/mremap_test
mm/mseal_test mm/seal_elf mm/pagemap_ioctl mm/soft-dirty mm/migration
mm/ksm_functional_tests mm/uffd-unit-tests mm/mrelease_test mm/mdwe_test
mm/droppable mm/memfd_secret mm/on-fault-limit mm/va_high_addr_switch
mm/virtual_address_range mm/protection_keys_64 mm/pkey_sighandler_tests_64
mm/split_huge_page_test mm/hugepage-mmap mm/hugepage-shm mm/hugepage-mremap
mm/map_hugetlb mm/hugetlb-madvise mm/hugetlb_fault_after_madv
mm/hugetlb_madv_vs_map mm/hugetlb_dio mm/hugetlb-read-hwpoison
mm/hugetlb-soft-offline mm/thuge-gen mm/ksm_tests memfd/memfd_test"
[ -n "$only" ] && tests=$only

mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug 2>/dev/null
echo 64 >/proc/sys/vm/nr_hugepages
echo madvise >/sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null
echo "# kselftest_mm: $(uname -r), $(nproc) CPUs, HugePages_Total $(awk '/^HugePages_Total:/ { print $2 }' /proc/meminfo)"
work=$(mktemp -d)
for t in $tests; do
	bin=$dir/$t
	name=${t#*/}
	if [ ! -x "$bin" ]; then
		echo "kst $name rc=none pass=0 fail=0 skip=0 secs=0 (not built)"
		continue
	fi
	# Some tests write files next to themselves; run them in a tmpfs
	t0=$(date +%s)
	(cd "$work" && exec timeout -k 10 "$per_test" "$bin") >"$work/out" 2>&1 </dev/null
	rc=$?
	secs=$(($(date +%s) - t0))
	totals=$(grep -a '^# Totals:' "$work/out" | tail -n 1)
	if [ -n "$totals" ]; then
		# (" pass:", " fail:": not xpass:, xfail:)
		p=$(sed 's/.* pass:\([0-9]*\).*/\1/' <<<"$totals")
		f=$(sed 's/.* fail:\([0-9]*\).*/\1/' <<<"$totals")
		s=$(sed 's/.* skip:\([0-9]*\).*/\1/' <<<"$totals")
		e=$(sed -n 's/.* error:\([0-9]*\).*/\1/p' <<<"$totals")
		f=$((f + ${e:-0}))
	else
		p=0 f=0 s=0
		case $rc in 0) p=1 ;; 4) s=1 ;; *) f=1 ;; esac
	fi
	echo "kst $name rc=$rc pass=$p fail=$f skip=$s secs=$secs"
	if [ "$rc" != 0 ] || [ "$f" != 0 ]; then
		echo "--- $name"
		grep -av '^ok \|^# ok' "$work/out" | tail -n 40
		echo "---"
	fi
done
rm -rf "$work"
