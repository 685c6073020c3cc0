#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs the library tests written in the test programs' own sources, and
# prints TAP.  A program (tests/lib/t_*.c, *.cc) carries its tests as
# comment lines, in order:
#
#   // TEST: heap-use-after-free (read)        starts a test (its TAP name)
#   // REQUIRES: backend=guard                 skipped unless the backend in
#                                              use is one of guard,...
#   // REQUIRES: backend!=nonlinear            ...or is none of them
#   // RUN: [VAR=VALUE...] %memdbg [-o OPTIONS] %t ARGS...
#                                              runs the program (%t) under
#                                              libmemdbg.so, MEMDBG_OPTIONS
#                                              backend=B:OPTIONS; without
#                                              %memdbg it runs plain
#   // EXIT: N                                 the exit status is N
#   // CHECK: ERE                              a line of stderr matches
#   // CHECK-NOT: ERE                          no line of stderr matches
#   // CHECK-OUT: ERE / CHECK-OUT-NOT: ERE     the same for stdout
#   // CHECK-COUNT: N ERE                      exactly N lines of stderr match
#   // CHECK-OUT-COUNT: N ERE                  ...of stdout
#   // CHECK-ORDER: ERE1 | ERE2                ERE1's first line comes
#                                              before ERE2's
#   // CHECK-ERROR: KIND                       the first report is
#                                              "==PID==ERROR: memdbg: KIND on
#                                              address 0x..." (KIND an ERE)
#   // CHECK-STACK: HEADER | F1 | F2...        the stack printed after the
#                                              line matching HEADER names
#                                              functions F1, F2... (EREs)
#   // CHECK-STACK-NOT: HEADER | F1 | ...      ...names none of them
#
# A directive's argument is the rest of its line after the colon and one
# blank, trailing blanks dropped (write [ ] for a space that matters).
# The program runs under timeout(1), which %memdbg preloads too: a line
# every process prints (a start-up warning) comes twice.
#
# Checks apply to the RUN above them; a test may run several times.  In
# RUN lines %t is the program, %T the directory of the built tests, %S
# this directory, %w a scratch directory, %lib the library and %cli the
# memdbg command (also inside VAR=VALUE words, for a run that preloads
# the library itself); in RUN lines and checks %backend is the backend
# in use.  Every RUN needs a check after
# it, and an unknown directive fails its test: a misspelt CHECK must not
# pass unnoticed.
#
#   tests/lib/lit.sh [--build DIR] [--backend B] [--only PATTERN] [FILE...]
#
# FILE: default every tests/lib/t_* source with a TEST line.  --only runs
# the tests whose names match PATTERN (an ERE).  tests/lib/run.sh calls
# this with --actual (the backend it probed) and --start N (the first
# test number), and without the plan line (--no-plan).
set -u

SRC_DIR=$(cd "$(dirname "$0")" && pwd)
BUILD=build
BACKEND=auto
ONLY=
ACTUAL=
START=1
PLAN=1
files=()
usage() {
    echo "usage: $0 [--build DIR] [--backend auto|nonlinear|guard|mprotect] [--only PATTERN] [FILE...]" >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case "$1" in
        --build) BUILD=$2; shift 2 ;;
        --build=*) BUILD=${1#--build=}; shift ;;
        --backend) BACKEND=$2; shift 2 ;;
        --backend=*) BACKEND=${1#--backend=}; shift ;;
        --only) ONLY=$2; shift 2 ;;
        --only=*) ONLY=${1#--only=}; shift ;;
        --actual) ACTUAL=$2; shift 2 ;;
        --start) START=$2; shift 2 ;;
        --no-plan) PLAN=0; shift ;;
        -*) usage ;;
        *) files+=("$1"); shift ;;
    esac
done
if [ ${#files[@]} = 0 ]; then
    for f in "$SRC_DIR"/t_*.c "$SRC_DIR"/t_*.cc; do
        grep -q '^[[:space:]]*// TEST:' "$f" && files+=("$f")
    done
fi

LIB=$(cd "$BUILD" && pwd)/libmemdbg.so
CLI=$(cd "$BUILD" && pwd)/memdbg
T=$(cd "$BUILD" && pwd)/tests/lib
TEST_TIMEOUT=${MEMDBG_TEST_TIMEOUT:-120}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/memdbg-lit.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
OUT=$WORK/out
ERR=$WORK/err
RC=0

if [ -z "$ACTUAL" ]; then   # the backend the library really picks (as run.sh)
    probe=$(LD_PRELOAD=$LIB MEMDBG_OPTIONS="verbosity=1:detect_leaks=0:backend=$BACKEND" /bin/true 2>&1 | head -n 1)
    ACTUAL=$(echo "$probe" | sed -n 's/.*memdbg: backend \([a-z]*\):.*/\1/p')
    echo "# $probe"
    if [ -z "$ACTUAL" ]; then
        echo "ok $START - backend $BACKEND usable # SKIP backend $BACKEND unusable here"
        [ "$PLAN" = 1 ] && echo "1..$START"
        exit 0
    fi
fi

N=$((START - 1))
FAILED=0
SKIPPED=0
FAIL_NOTES=()
fail() { FAIL_NOTES+=("$*"); }

# run_line LINE: runs one RUN line's command; sets RC, OUT, ERR.
run_line() {
    local prog=$1 line=$2 words w envs=() cmd=() opts="" preload=0
    line=${line//%w/$WORK}
    line=${line//%lib/$LIB}
    line=${line//%cli/$CLI}
    line=${line//%backend/$ACTUAL}
    line=${line//%T\//$T/}
    read -r -a words <<<"$line"
    local i=0
    while [ $i -lt ${#words[@]} ] && [[ ${words[$i]} =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; do
        envs+=("${words[$i]}"); i=$((i + 1))
    done
    if [ "${words[$i]:-}" = %memdbg ]; then
        preload=1; i=$((i + 1))
        if [ "${words[$i]:-}" = -o ]; then opts=${words[$((i + 1))]:-}; i=$((i + 2)); fi
    fi
    for w in "${words[@]:$i}"; do
        case $w in
            %t) w=$T/$prog ;;
            %S/*) w=$SRC_DIR/${w#%S/} ;;
        esac
        cmd+=("$w")
    done
    if [ ${#cmd[@]} = 0 ]; then fail "RUN without a command"; RC=255; return; fi
    if [ "$preload" = 1 ]; then
        local o="backend=$BACKEND${MEMDBG_TEST_OPTIONS:+:$MEMDBG_TEST_OPTIONS}"
        [ -n "$opts" ] && o="$o:$opts"
        envs+=("LD_PRELOAD=$LIB" "MEMDBG_OPTIONS=$o")
    fi
    # (the subshell keeps bash's "Aborted" job notice out of the TAP stream)
    ( ulimit -c 0; env "${envs[@]}" timeout "$TEST_TIMEOUT" "${cmd[@]}" >"$OUT" 2>"$ERR" </dev/null; exit $? ) 2>/dev/null
    RC=$?
}

# The stack after the line matching HEADER, up to the next blank line.
section() { awk -v h="$1" 'found && /^$/ {exit} found {print} $0 ~ h {found=1}' "$ERR"; }

# check DIRECTIVE ARG: one assertion on the last run; false if it fails.
check() {
    local d=$1 a=${2//%backend/$ACTUAL} n re h fns f sec l1 l2 file=$ERR
    case $d in
        EXIT) [ "$RC" -eq "$a" ] || { fail "exit status $RC, expected $a"; return 1; } ;;
        CHECK) grep -Eq -- "$a" "$ERR" || { fail "stderr lacks /$a/"; return 1; } ;;
        CHECK-NOT) ! grep -Eq -- "$a" "$ERR" || { fail "stderr has /$a/"; return 1; } ;;
        CHECK-OUT) grep -Eq -- "$a" "$OUT" || { fail "stdout lacks /$a/"; return 1; } ;;
        CHECK-OUT-NOT) ! grep -Eq -- "$a" "$OUT" || { fail "stdout has /$a/"; return 1; } ;;
        CHECK-COUNT|CHECK-OUT-COUNT)
            n=${a%% *}; re=${a#* }
            [[ $n =~ ^[0-9]+$ ]] || { fail "$d needs a count: '$a'"; return 1; }
            [ "$d" = CHECK-COUNT ] || file=$OUT
            f=$(grep -Ec -- "$re" "$file")
            [ "$f" -eq "$n" ] || { fail "$f lines of ${file##*/} match /$re/, expected $n"; return 1; } ;;
        CHECK-ORDER)
            re=${a%% | *}; h=${a#* | }
            [ "$re" != "$a" ] || { fail "CHECK-ORDER needs 'ERE1 | ERE2': '$a'"; return 1; }
            l1=$(grep -nE -m1 -- "$re" "$ERR" | cut -d: -f1); l2=$(grep -nE -m1 -- "$h" "$ERR" | cut -d: -f1)
            [ -n "$l1" ] && [ -n "$l2" ] && [ "$l1" -lt "$l2" ] ||
                { fail "/$re/ (line ${l1:-none}) not before /$h/ (line ${l2:-none})"; return 1; } ;;
        CHECK-ERROR)
            grep -m1 'ERROR: memdbg' "$ERR" | grep -Eq -- "^==[0-9]+==ERROR: memdbg: ($a) on address 0x[0-9a-f]+" ||
                { fail "first report line is not '$a on address 0x...'"; return 1; } ;;
        CHECK-STACK|CHECK-STACK-NOT)
            h=${a%% | *}; fns=${a#* | }
            [ "$h" != "$a" ] || { fail "$d needs 'HEADER | FUNCTION...': '$a'"; return 1; }
            sec=$(section "$h")
            if [ "$d" = CHECK-STACK ] && [ -z "$sec" ]; then fail "no section /$h/"; return 1; fi
            while [ -n "$fns" ]; do   # the functions, split at " | "
                f=${fns%% | *}
                [ "$f" = "$fns" ] && fns="" || fns=${fns#* | }
                if echo "$sec" | grep -Eq -- "#[0-9]+ 0x[0-9a-f]+ in $f[ (]"; then
                    [ "$d" = CHECK-STACK ] || { fail "stack after /$h/ names $f"; return 1; }
                else
                    [ "$d" = CHECK-STACK-NOT ] || { fail "stack after /$h/ lacks $f"; return 1; }
                fi
            done ;;
        *) fail "unknown directive '$d'"; return 1 ;;
    esac
}

# requires ARG: true if this backend meets "backend=a,b" or "backend!=a,b".
requires() {
    local want
    case $1 in
        backend!=*) want=,${1#backend!=},; [[ $want != *",$ACTUAL,"* ]] ;;
        backend=*) want=,${1#backend=},; [[ $want == *",$ACTUAL,"* ]] ;;
        *) return 2 ;;
    esac
}

# run_test PROG NAME DIRECTIVES...: each directive "LINENO<tab>NAME<tab>ARG".
run_test() {
    local prog=$1 name=$2; shift 2
    local entry lineno d a ran=0 checked=1 ok=1 skip="" r note
    FAIL_NOTES=()
    for entry in "$@"; do   # REQUIRES first: a skipped test runs nothing
        IFS=$'\t' read -r lineno d a <<<"$entry"
        [ "$d" = REQUIRES ] || continue
        requires "$a"; r=$?
        if [ $r = 2 ]; then fail "line $lineno: REQUIRES takes backend=... or backend!=...: '$a'"; ok=0
        elif [ $r != 0 ]; then skip="needs $a (backend $ACTUAL)"; fi
    done
    N=$((N + 1))
    if [ -n "$skip" ] && [ $ok = 1 ]; then
        echo "ok $N - $name # SKIP $skip"
        SKIPPED=$((SKIPPED + 1))
        return
    fi
    for entry in "$@"; do
        [ $ok = 1 ] || break
        IFS=$'\t' read -r lineno d a <<<"$entry"
        case $d in
            REQUIRES) ;;
            RUN)
                [ $checked = 1 ] || { fail "line $lineno: the RUN before it has no check"; ok=0; break; }
                run_line "$prog" "$a"; ran=1; checked=0 ;;
            *)
                [ $ran = 1 ] || { fail "line $lineno: $d before any RUN"; ok=0; break; }
                checked=1
                check "$d" "$a" || { FAIL_NOTES[-1]="line $lineno: ${FAIL_NOTES[-1]}"; ok=0; } ;;
        esac
    done
    [ $ok = 0 ] || [ $ran = 1 ] || { fail "no RUN line"; ok=0; }
    [ $ok = 0 ] || [ $checked = 1 ] || { fail "the last RUN has no check"; ok=0; }
    if [ $ok = 1 ]; then
        echo "ok $N - $name"
    else
        echo "not ok $N - $name"
        for note in "${FAIL_NOTES[@]}"; do echo "#   $prog: $note"; done
        [ -s "$ERR" ] && sed -e 's/^/#     /' "$ERR" | head -n 60
        FAILED=$((FAILED + 1))
    fi
}

# run_file FILE: every test in it, in order.
run_file() {
    local file=$1 prog lineno=0 line d a name="" directives=()
    prog=$(basename "$file"); prog=${prog%.*}
    local re='^[[:space:]]*//[[:space:]]*([A-Z][A-Z-]*):[[:space:]]?(.*)$'
    flush() {
        if [ -n "$name" ] && { [ -z "$ONLY" ] || [[ $name =~ $ONLY ]] || [[ $prog =~ $ONLY ]]; }; then
            run_test "$prog" "$name" "${directives[@]}"
        fi
        directives=()
    }
    while IFS= read -r line || [ -n "$line" ]; do
        lineno=$((lineno + 1))
        [[ $line =~ $re ]] || continue
        d=${BASH_REMATCH[1]}; a=${BASH_REMATCH[2]}
        a=${a%"${a##*[![:space:]]}"}   # trailing blanks
        if [ "$d" = TEST ]; then
            flush
            name=$a
        elif [ -n "$name" ]; then
            directives+=("$lineno"$'\t'"$d"$'\t'"$a")
        fi
    done <"$file"
    flush
}

for f in "${files[@]}"; do
    run_file "$f"
done

[ "$PLAN" = 1 ] && echo "1..$N"
echo "# lit ($ACTUAL): $((N - START + 1 - FAILED - SKIPPED)) passed, $FAILED failed, $SKIPPED skipped"
[ "$FAILED" -eq 0 ]
