#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The library's layers, checked on the built objects: every call or data
# reference between two object files of build/lib/obj (an undefined symbol
# of one that another defines) is an edge between their files and between
# their folders.  The folders must form no cycle, no cycle may run through
# files of different folders, and every edge must go down the order below
# (a file may use its own folder and the folders before it).  Prints TAP;
# a failure names the cycle or the edge with the symbol that makes it.
#
# Symbols the library exports with default visibility (malloc, free, close,
# __lsan_*) are the program's interface: a call to them from inside the
# library is a call through libc's API that the preloaded definition
# happens to answer, not a dependency on the file that defines it.
#
#   tests/infra/layer_check.sh [--build DIR]
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
build=${BUILD:-build}
[ "${1:-}" = --build ] && build=$2
obj=$build/lib/obj

# Lowest first; memdbg/backend and memdbg/stack do not use each other.
layers="memdbg/base memdbg/sys memdbg/core memdbg/backend memdbg/stack memdbg/report memdbg/lifecycle
	memdbg/alloc memdbg/leak preload"

if ! find "$obj" -name '*.o' 2>/dev/null | grep -q .; then
	echo "not ok 1 - objects of the library in $obj (run make lib first)"
	exit 1
fi

# One line per symbol: D|U file symbol (D: defined, not default visibility).
# An object whose source is gone (left in build/ by an older tree) is not
# part of the library any more and is skipped.
symbols() {
	local o f
	find "$obj" -name '*.o' | sort | while read -r o; do
		f=${o#"$obj"/}
		f=${f%.o}
		[ -f "$f.c" ] || [ -f "$f.cc" ] || continue
		readelf -sW "$o" | awk -v f="$f" '
			NR > 3 && ($5 == "GLOBAL" || $5 == "WEAK") && $8 != "" {
				if ($7 == "UND") print "U", f, $8
				else if ($6 != "DEFAULT") print "D", f, $8
			}'
	done
}

symbols | python3 -c '
import sys
from collections import defaultdict

layers = sys.argv[1].split()
rank = {name: i for i, name in enumerate(layers)}
definer, uses = {}, []
for line in sys.stdin:
    kind, f, sym = line.split()
    if kind == "D":
        definer[sym] = f
    else:
        uses.append((f, sym))

def folder(f):
    return f.rsplit("/", 1)[0]

# file -> file -> the symbols behind the edge
fedges = defaultdict(lambda: defaultdict(list))
for f, sym in uses:
    g = definer.get(sym)
    if g and g != f:
        fedges[f][g].append(sym)
files = sorted(set(definer.values()) | {f for f, _ in uses})
dedges = defaultdict(set)
for f in fedges:
    for g in fedges[f]:
        if folder(f) != folder(g):
            dedges[folder(f)].add(folder(g))

def sccs(nodes, succ):
    """Strongly connected components (Tarjan, iterative)."""
    index, low, on, stack, out, n = {}, {}, set(), [], [], [0]
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(succ(root))))]
        index[root] = low[root] = n[0]; n[0] += 1
        stack.append(root); on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        x = stack.pop(); on.discard(x); comp.append(x)
                        if x == v:
                            break
                    out.append(sorted(comp))
            elif w not in index:
                index[w] = low[w] = n[0]; n[0] += 1
                stack.append(w); on.add(w)
                work.append((w, iter(sorted(succ(w)))))
            elif w in on:
                low[v] = min(low[v], index[w])
    return [c for c in out if len(c) > 1]

def cycle_in(comp, succ):
    """One cycle through the component, as a list of nodes."""
    inside = set(comp)
    start, path, seen = comp[0], [comp[0]], {comp[0]: 0}
    while True:
        nxt = next(w for w in sorted(succ(path[-1])) if w in inside)
        if nxt in seen:
            return path[seen[nxt]:] + [nxt]
        seen[nxt] = len(path)
        path.append(nxt)

def cycle_across(comp, succ):
    """A cycle through the component that crosses folders: an edge f -> g
    between two folders, then the shortest way back from g to f."""
    inside = set(comp)
    for f in comp:
        for g in sorted(succ(f)):
            if g in inside and folder(g) != folder(f):
                back, queue = {g: None}, [g]
                while queue and f not in back:
                    v = queue.pop(0)
                    for w in sorted(succ(v)):
                        if w in inside and w not in back:
                            back[w] = v
                            queue.append(w)
                path, v = [], f
                while v is not None:
                    path.append(v)
                    v = back[v]
                return [f] + path[::-1]
    return cycle_in(comp, succ)

def why(f, g):
    return ", ".join(sorted(set(fedges[f][g]))[:3])

def folder_edge_example(a, b):
    for f in sorted(fedges):
        if folder(f) == a:
            for g in sorted(fedges[f]):
                if folder(g) == b:
                    return "%s -> %s (%s)" % (f, g, why(f, g))
    return ""

n, bad = 0, 0
def tap(ok, what, details=()):
    global n, bad
    n += 1
    if not ok:
        bad += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", n, what))
    for d in details:
        print("#   " + d)

nedges = sum(len(v) for v in fedges.values())
tap(len(files) > 0 and nedges > 0, "%d object files, %d file->file edges from their symbols" % (len(files), nedges))

unknown = sorted({folder(f) for f in files} - set(layers))
tap(not unknown, "every folder has its place in the layer order",
    ["not in the order of tests/infra/layer_check.sh: " + u for u in unknown])

comps = sccs(sorted(dedges), lambda v: dedges.get(v, ()))
details = []
for comp in comps:
    cyc = cycle_in(comp, lambda v: dedges.get(v, ()))
    details.append("cycle: " + " -> ".join(cyc) + " (all of: " + ", ".join(comp) + ")")
    for a, b in zip(cyc, cyc[1:]):
        details.append("  " + folder_edge_example(a, b))
tap(not comps, "no cycle between folders", details)

fsucc = lambda v: fedges.get(v, {}).keys()
details = []
inner = []
for comp in sccs(files, fsucc):
    across = len({folder(f) for f in comp}) > 1
    cyc = cycle_across(comp, fsucc) if across else cycle_in(comp, fsucc)
    text = " -> ".join(cyc)
    if across:
        details.append("cycle: " + text)
        for a, b in zip(cyc, cyc[1:]):
            details.append("  %s -> %s (%s)" % (a, b, why(a, b)))
    else:
        inner.append(text)
tap(not details, "no cycle between files of different folders", details)

details = []
for f in sorted(fedges):
    for g in sorted(fedges[f]):
        a, b = folder(f), folder(g)
        if a in rank and b in rank and rank[b] > rank[a]:
            details.append("%s -> %s (%s): %s is above %s" % (f, g, why(f, g), b, a))
tap(not details, "every edge goes to the same folder or one below it", details)

# The headers say the same: a file includes the headers of its own
# folder and of the folders below it only (paths from memdbg/, as -Imemdbg).
import glob, re
details = []
for path in sorted(glob.glob("memdbg/*/*.[ch]") + glob.glob("preload/*.c*")):
    here = folder(path)
    if here not in rank:
        continue
    for k, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
        m = re.match(r"\s*#\s*include\s+\"(([a-z_]+)/[^\"]+)\"", line)
        if m and "memdbg/" + m.group(2) in rank:
            there = "memdbg/" + m.group(2)
            if rank[there] > rank[here]:
                details.append("%s:%d includes %s, which is above %s" % (path, k, m.group(1), here))
tap(not details, "every #include names its own folder or one below it", details)

# Every source file, script and makefile names its license in its first
# lines (LICENSE: MIT, GPL-2.0 for the kernel tests and patches).
import os, subprocess
listed = subprocess.run(["git", "ls-files"], capture_output=True, text=True)
if listed.returncode == 0:
    kinds = re.compile(r"(\.(c|h|cc|sh|py|mk|inc|awk)|(^|/)Makefile|^\.ci/run)$")
    unlicensed = []
    for path in listed.stdout.split():
        if not kinds.search(path) or not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            head = "".join(f.readline() for _ in range(3))
        if "SPDX-License-Identifier:" not in head:
            unlicensed.append(path + " has no SPDX-License-Identifier line")
    tap(not unlicensed, "every source file, script and makefile has an SPDX line", unlicensed)
else:
    print("ok %d - SPDX lines # SKIP not a git checkout" % (n + 1))
    n += 1

for text in inner:
    print("# cycle within one folder: " + text)
sys.exit(1 if bad else 0)
' "$layers"
