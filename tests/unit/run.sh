#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs the prebuilt unit tests (make unit builds and runs them; this is the
# form tests/check.sh uses after make tests).  Prints TAP.
#   tests/unit/run.sh [--build DIR] [--only PATTERN] [--list]
set -u
BUILD=build
args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --build) BUILD=$2; shift 2 ;;
        --build=*) BUILD=${1#--build=}; shift ;;
        *) args+=("$1"); shift ;;
    esac
done
bin=$BUILD/tests/unit/unit
if [ ! -x "$bin" ]; then
    echo "# $bin is missing: run make unit (or make tests) first"
    echo "1..0"
    exit 1
fi
exec "$bin" "${args[@]}"
