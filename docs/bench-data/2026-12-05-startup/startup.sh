#!/bin/bash
# SPDX-License-Identifier: MIT
# usage: startup.sh RUNS ROUNDS lib1 [lib2...]  (lib: none | scudo | path to libmemdbg.so)
runs=$1 rounds=$2; shift 2
SC=$(ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.scudo_standalone-x86_64.so | sort -V | tail -1)
for r in $(seq $rounds); do
for cmdname in true sqlite bash; do
  case $cmdname in true) cmd=(/bin/true);; sqlite) cmd=(sqlite3 :memory: 'select 1');; bash) cmd=(bash -c :);; esac
  for lib in "$@"; do
    case $lib in none) env=();; scudo) env=(LD_PRELOAD=$SC SCUDO_OPTIONS=GWP_ASAN_Enabled=true:GWP_ASAN_SampleRate=5000);;
      *) env=(LD_PRELOAD=$lib MEMDBG_OPTIONS=sample_rate=5000);; esac
    out=$(env "${env[@]}" perf stat -r $runs -x, -e task-clock,page-faults "${cmd[@]}" 2>&1 >/dev/null)
    echo "round=$r cmd=$cmdname lib=$lib $(echo "$out" | awk -F, '{printf "%s=%s(+-%s) ", $3, $1, $4}')"
  done
done; done
