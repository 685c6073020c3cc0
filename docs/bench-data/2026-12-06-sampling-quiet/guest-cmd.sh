#!/bin/bash
# SPDX-License-Identifier: MIT
# The command run in the patched guest for docs/perf/2026-12-06-sampling-quiet.md:
#   kernel/scripts/vm-run.sh --kernel patched --timeout 2400 -- THIS_FILE
# (the inputs of bench-guest.py were under /work/perf-s18/in, outside the guest's own /tmp)
# run inside the patched guest
uname -r; nproc; uptime
RAW=/tmp/raw.txt python3 docs/bench-data/2026-12-06-sampling-quiet/bench-guest.py 7 perl-hash,python-objs,cxx-map,gcc-O2,sqlite-insert,bash-assoc,git-log plain=- "s5000=LD_PRELOAD=/work/main/build/libmemdbg.so MEMDBG_OPTIONS=sample_rate=5000:backend=nonlinear:compact=1:detect_leaks=0" "never=LD_PRELOAD=/work/main/build/libmemdbg.so MEMDBG_OPTIONS=sample_rate=1000000000:backend=nonlinear:compact=1:detect_leaks=0" "gwp-5000=LD_PRELOAD=/usr/lib/llvm-19/lib/clang/19/lib/linux/libclang_rt.scudo_standalone-x86_64.so SCUDO_OPTIONS=GWP_ASAN_Enabled=true:GWP_ASAN_SampleRate=5000" "s100=LD_PRELOAD=/work/main/build/libmemdbg.so MEMDBG_OPTIONS=sample_rate=100:backend=nonlinear:compact=1:detect_leaks=0" "gwp-100=LD_PRELOAD=/usr/lib/llvm-19/lib/clang/19/lib/linux/libclang_rt.scudo_standalone-x86_64.so SCUDO_OPTIONS=GWP_ASAN_Enabled=true:GWP_ASAN_SampleRate=100"
echo "=== raw"
cat /tmp/raw.txt
