#!/bin/bash
# SPDX-License-Identifier: MIT
# interleaved rounds: startup figures and bench-real sqlite/bash rows, main vs lazy
cd /work/wt/lazy
for r in 1 2 3; do
  echo "=== round $r $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
  /tmp/lazy/startup.sh 30 1 none /tmp/lazy/bm/libmemdbg.so /tmp/lazy/bl/libmemdbg.so scudo | sed "s/round=1/round=$r/"
  for d in bm bl; do
    tests/bench-real.sh --build /tmp/lazy/$d --out /tmp/lazy/out-$d-$r --host-only --only sqlite-insert,bash-assoc --tools plain,memdbg-s5000,gwp-5000 2>/dev/null
  done
done
