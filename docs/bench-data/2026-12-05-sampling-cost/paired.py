#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Medians, paired ratios (a run over the plain run of the same round) and the
# interquartile range of each cell, from a raw file that bench.py wrote.
import sys, collections, statistics
rows = [dict(kv.split('=',1) for kv in l.split()) for l in open(sys.argv[1]) if l.startswith('round=')]
by = collections.defaultdict(dict)
for r in rows: by[(r['workload'], r['round'])][r['config']] = float(r['cpu_s'])
wls = list(dict.fromkeys(r['workload'] for r in rows)); cfgs = list(dict.fromkeys(r['config'] for r in rows))
print("%-14s %-13s %9s %9s %9s" % ("workload", "config", "median", "paired", "IQR/med"))
for w in wls:
    rounds = [k for k in by if k[0] == w]
    for c in cfgs:
        v = [by[k][c] for k in rounds if c in by[k]]
        ratio = [by[k][c] / by[k]['plain'] for k in rounds if c in by[k] and 'plain' in by[k]]
        if len(v) < 2: continue
        q = statistics.quantiles(v, n=4)
        print("%-14s %-13s %8.1fms %8.3fx %8.1f%%" % (w, c, statistics.median(v)*1000, statistics.median(ratio), (q[2]-q[0])/statistics.median(v)*100))
