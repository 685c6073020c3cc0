#!/bin/sh
# memdbg: run a program under libmemdbg.so.
#   memdbg run [--backend X] [--options 'k=v:...'] -- prog args...
set -u

prog=memdbg
here=$(cd "$(dirname "$0")" && pwd)
lib=${MEMDBG_LIB:-$here/libmemdbg.so}

usage() {
    cat <<USAGE
usage: $prog run [--backend auto|nonlinear|guard|mprotect] [--options 'key=value:...'] -- program [args...]
       $prog --help

Runs program with LD_PRELOAD=$lib and MEMDBG_OPTIONS set.
Options given with --options and --backend are appended to any MEMDBG_OPTIONS
already in the environment (later keys win). See docs/libmemdbg.md.
USAGE
}

die() { echo "$prog: $*" >&2; exit 2; }

[ $# -ge 1 ] || { usage >&2; exit 2; }
case "$1" in
    -h|--help|help) usage; exit 0 ;;
    run) shift ;;
    *) die "unknown command '$1' (try '$prog --help')" ;;
esac

opts=${MEMDBG_OPTIONS:-}
add() { if [ -n "$opts" ]; then opts="$opts:$1"; else opts=$1; fi; }
while [ $# -gt 0 ]; do
    case "$1" in
        --backend) [ $# -ge 2 ] || die "--backend needs a value"; add "backend=$2"; shift 2 ;;
        --backend=*) add "backend=${1#--backend=}"; shift ;;
        --options) [ $# -ge 2 ] || die "--options needs a value"; add "$2"; shift 2 ;;
        --options=*) add "${1#--options=}"; shift ;;
        --) shift; break ;;
        -*) die "unknown option '$1' for run (try '$prog --help')" ;;
        *) break ;;
    esac
done
[ $# -ge 1 ] || die "run: missing program (usage: $prog run [options] -- program [args...])"
[ -f "$lib" ] || die "cannot find $lib (set MEMDBG_LIB)"
command -v "$1" >/dev/null 2>&1 || die "run: program not found: $1"

if [ -n "${LD_PRELOAD:-}" ]; then LD_PRELOAD="$lib:$LD_PRELOAD"; else LD_PRELOAD=$lib; fi
export LD_PRELOAD
MEMDBG_OPTIONS=$opts
export MEMDBG_OPTIONS
exec "$@"
