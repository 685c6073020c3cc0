#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# bench.py of docs/perf/2026-12-05-sampling-cost.md at the guest's scale (1/5): interleaved rounds (each
# round runs every workload under every configuration once), CPU = user+sys
# of the process tree from getrusage(RUSAGE_CHILDREN), medians per cell.
#   RAW=raw.txt bench.py ROUNDS W1,W2 NAME="ENV=V ..." ...   (NAME=- : no variables)
# Inputs under IN (default /work/perf-s18/in): insert.sql (60000 rows) and big-10.c as
# tests/bench-real.sh makes them, bash.sh (10000 entries), cxx_map, a bare clone repo.git.
import os, sys, resource, subprocess, statistics, json, shlex
I = os.environ.get('IN', '/work/perf-s18/in')
W = {
 'sqlite-insert': ['sqlite3', ':memory:', '.read ' + I + '/insert.sql'],
 'bash-assoc': ['bash', I + '/bash.sh'],
 'perl-hash': ['perl', '-e', 'my %h; $h{"key$_"} = $_ for 1..40000; my $s = 0; $s += $_ for values %h; print scalar(keys %h), " $s\n"'],
 'python-objs': ['env', 'PYTHONMALLOC=malloc', '/usr/bin/python3', '-c', 'd = {i: [str(i), (i, i * 2)] for i in range(20000)}; print(len(d), sum(len(v[0]) for v in d.values()))'],
 'cxx-map': [I + '/cxx_map', '4000', '4'],
 'gcc-O2': ['gcc', '-O2', '-c', I + '/big-10.c', '-o', '/tmp/big.o'],
 'git-log': ['env', 'GIT_PAGER=cat', 'PAGER=cat', 'git', '--no-pager', '-C', I + '/repo.git', 'log', '-p', '--stat', '-M', '-C', '-C', '--no-color', '-n', '16', '2e043139adc446efd63ef94f46cbc3dda8a12fda'],
 'true': ['/bin/true'],
}
rounds = int(sys.argv[1]); wls = sys.argv[2].split(',')
cfgs = []
for a in sys.argv[3:]:
    name, _, envs = a.partition('=')
    env = dict(os.environ)
    for kv in shlex.split(envs):
        if kv == '-': continue
        k, _, v = kv.partition('='); env[k] = v
    cfgs.append((name, env))
res = {(w, n): [] for w in wls for n, _ in cfgs}
raw = open(os.environ.get('RAW', '/dev/null'), 'a')
for r in range(rounds):
  for wl in wls:
    cmd = W[wl]
    for name, env in cfgs:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        u = after.ru_utime - before.ru_utime; s = after.ru_stime - before.ru_stime
        if p.returncode != 0: print(f"# {wl} {name} exit {p.returncode}: {p.stderr[-300:]!r}", flush=True)
        res[(wl, name)].append((u + s, u, s, after.ru_minflt - before.ru_minflt))
        print(f"round={r} workload={wl} config={name} cpu_s={u+s:.4f} user_s={u:.4f} sys_s={s:.4f} minflt={after.ru_minflt - before.ru_minflt} status={p.returncode}", file=raw, flush=True)
for wl in wls:
  base = None
  for name, _ in cfgs:
    v = res[(wl, name)]
    med = statistics.median(x[0] for x in v)
    if base is None: base = med
    print(f"{wl:13s} {name:14s} cpu {med*1000:8.1f} ms  min {min(x[0] for x in v)*1000:7.1f}  user {statistics.median(x[1] for x in v)*1000:7.1f}  sys {statistics.median(x[2] for x in v)*1000:6.1f}  faults {statistics.median(x[3] for x in v):7.0f}  x{med/base:5.3f}")
