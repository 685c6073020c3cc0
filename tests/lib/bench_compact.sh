#!/bin/sh
# SPDX-License-Identifier: MIT
# Compact-mode figures (docs/libmemdbg.md, Compact mode), for the patched
# guest: us per pair, remap_file_pages calls per pair (strace -c), memory
# (Pss, heap file) of t_compact, perl and python3.  Needs make lib-tests
# lib-bench; the populate row needs a build in build-pop with
# -DMD_COMPACT_POPULATE (skipped without it).
cd "$(dirname "$0")/../.." || exit 1
L=build/libmemdbg.so
B=build/tests/lib/bench
for o in compact=0 compact=1 compact=1:compact_defer=64; do
  for r in 1 2; do
    echo "bench $o: $(LD_PRELOAD=$L MEMDBG_OPTIONS=backend=nonlinear:detect_leaks=0:$o $B 10000 20000)"
  done
done
[ -f build-pop/libmemdbg.so ] && for r in 1 2; do
  echo "bench compact=1 populated by the call: $(LD_PRELOAD=build-pop/libmemdbg.so MEMDBG_OPTIONS=backend=nonlinear:detect_leaks=0:compact=1 $B 10000 20000)"
done
echo "plain: $($B 10000 200000)"
for o in compact=0 compact=1 compact=1:compact_defer=64; do
  for it in 0 20000; do
    n=$(strace -f -c -e trace=remap_file_pages -o $TMPDIR/st env LD_PRELOAD=$L MEMDBG_OPTIONS=backend=nonlinear:detect_leaks=0:$o $B 10000 $it >/dev/null 2>&1; awk '/remap_file_pages/ {print $4}' $TMPDIR/st)
    echo "strace $o iters=$it remap_file_pages calls=$n"
  done
done
echo "memory (t_compact rss 100000 32):"
for o in compact=0 compact=1; do
  echo "$o: $(LD_PRELOAD=$L MEMDBG_OPTIONS=backend=nonlinear:detect_leaks=0:$o build/tests/lib/t_compact rss 100000 32 | head -1)"
done
echo "plain: $(build/tests/lib/t_compact rss 100000 32 | head -1)"
PERL='my %h; $h{"key$_"} = "value$_" for 1..200000; open my $f, "<", "/proc/self/smaps_rollup"; my @l = grep /^(Rss|Pss):/, <$f>; open my $s, "<", "/proc/self/status"; push @l, grep /^VmHWM/, <$s>; chomp @l; print join(" ", map { s/\s+/ /gr } @l), "\n";'
echo "perl 200k hash plain: $(perl -e "$PERL")"
for o in compact=0 compact=1; do
  echo "perl 200k hash $o: $(LD_PRELOAD=$L MEMDBG_OPTIONS=backend=nonlinear:detect_leaks=0:$o perl -e "$PERL")"
done
PY='import re
objs = [dict(a=i, b=str(i)) for i in range(50000)]
print(" ".join(l.strip().replace(" ", "") for l in open("/proc/self/smaps_rollup") if l.startswith(("Rss:", "Pss:"))), [l.split()[1] for l in open("/proc/self/status") if l.startswith("VmHWM")][0])'
echo "python3 50k dicts plain: $(PYTHONMALLOC=malloc python3 -c "$PY")"
for o in compact=0 compact=1; do
  echo "python3 50k dicts $o: $(PYTHONMALLOC=malloc LD_PRELOAD=$L MEMDBG_OPTIONS=backend=nonlinear:detect_leaks=0:$o python3 -c "$PY")"
done
