#!/bin/bash
# SPDX-License-Identifier: MIT
# Runs inside a debug-kernel guest: the race storm for NL_RACE_SECONDS
# (default 1800), then the kernel log's reports (KASAN, lockdep, warnings,
# BUG), which must be none.
set -u
echo "# kernel $(uname -r), $(nproc) vCPUs, start $(date -u +%H:%M:%S)"
NL_RACE_SECONDS=${NL_RACE_SECONDS:-1800} build/tests/kernel/nl_race_stress_test -t remap_fault_truncate_storm
rc=$?
echo "# end $(date -u +%H:%M:%S), test exit $rc"
n=$(dmesg | grep -c -E 'BUG|WARNING|KASAN|lockdep|circular locking|possible recursive|Call Trace')
echo "# kernel log reports: $n"
dmesg | grep -E -A20 'BUG|WARNING|KASAN|circular locking' | head -60
exit $rc
