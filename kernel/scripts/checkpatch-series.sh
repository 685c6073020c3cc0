#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Run the kernel's scripts/checkpatch.pl --strict over every patch in
# kernel/series; exit 1 if any patch has an error, warning or check.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$repo/build}
case $build in /*) ;; *) build=$repo/$build ;; esac
src=$build/kernel/linux

[ -x "$src/scripts/checkpatch.pl" ] || { echo "kernel-checkpatch: no kernel tree at $src: run 'make kernel' first" >&2; exit 1; }

bad=0 n=0
while read -r p; do
	n=$((n + 1))
	if out=$(cd "$src" && perl scripts/checkpatch.pl --strict -q "$repo/kernel/$p" 2>&1) && [ -z "$out" ]; then
		echo "ok   $p"
	else
		echo "FAIL $p"
		printf '%s\n' "$out" | sed 's/^/     /'
		bad=$((bad + 1))
	fi
done < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$repo/kernel/series" | grep -v '^$' || true)
echo "kernel-checkpatch: $n patches, $bad with findings"
[ "$bad" = 0 ]
