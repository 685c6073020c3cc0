#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# plain vs memdbg before/after the mem/str interceptors, CPU seconds (user+sys), interleaved rounds
set -u
BEFORE=$1 AFTER=$2 ROUNDS=${3:-3}
SQL=/tmp/strs/ins.sql
(for i in $(seq 1 3000); do echo "insert into t values($i, 'row $i text value');"; done) > $SQL
run() { # label, preload, options, cmd...
    local label=$1 pre=$2 opts=$3; shift 3
    local out=/tmp/strs/bench.out
    if [ -n "$pre" ]; then
        /usr/bin/time -f "%U %S %e" -o /tmp/strs/time.txt env LD_PRELOAD=$pre MEMDBG_OPTIONS=$opts "$@" >$out 2>&1
    else
        /usr/bin/time -f "%U %S %e" -o /tmp/strs/time.txt "$@" >$out 2>&1
    fi
    local rc=$?
    read u s e < /tmp/strs/time.txt
    printf '%s %s rc=%d cpu=%.2f wall=%s\n' "$W" "$label" $rc "$(echo "$u + $s" | bc)" "$e"
}
for r in $(seq 1 $ROUNDS); do
  for W in python3 perl git sqlite3; do
    case $W in
      python3) cmd=(python3 -c 'import re,json
s=[str(i)*7 for i in range(20000)]
t=",".join(s)
print(len(re.findall("1+",t)),len(json.dumps(s)))') ;;
      perl) cmd=(perl -e 'my %h; for (1..20000) { $h{"k$_"} = "v" x ($_ % 50); } my $s = join(",", sort keys %h); $s =~ s/k1/K1/g; print length($s), "\n";') ;;
      git) cmd=(git -C /work/main log --stat -30) ;;
      sqlite3) cmd=(sqlite3 :memory: "create table t(a,b)" ".read $SQL" "select count(*), max(b) from t where b like '%29%'") ;;
    esac
    run plain "" "" "${cmd[@]}"
    run before "$BEFORE" detect_leaks=0 "${cmd[@]}"
    run after "$AFTER" detect_leaks=0 "${cmd[@]}"
    run after-off "$AFTER" detect_leaks=0:check_string_functions=0 "${cmd[@]}"
  done
done
