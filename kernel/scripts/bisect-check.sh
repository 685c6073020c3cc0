#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Check that every commit of the kernel series builds, boots and passes
# the tests that exist at that point.
#
#   bisect-check.sh [--from N] [--to N] [--info] [--timeout SECONDS] | --list
#
# For each commit N of build/kernel/linux (pristine + kernel/series, as
# build-kernel.sh applies it), oldest first:
#   build  the patched flavour (base config) of the tree checked out at N,
#          through build-kernel.sh with KERNEL_LOCAL=1; a compiler warning in
#          mm/ or in a file the commit touches fails the commit (-Werror
#          for those files), other warnings are counted;
#   boot   the image with vm-run.sh (TCG unless KVM works);
#   test   what exists at N: before the first patch that makes a VMA
#          nonlinear (NONLINEAR_FROM below), what the stock kernel runs
#          (remap_vma_count.sh, nonlinear_errors_test) plus a memdbg smoke;
#          from there on, the kselftest cases whose feature is in the tree
#          (the table in case_table).  Cases of a later patch are counted
#          as "n/a" (or run and reported as info with --info, never
#          counted as failures); the stress, fuzz and random-mix cases
#          ("long") run at the last commit only.
# One summary line per commit, a table at the end; exit status 1 if any
# commit fails to build, boot or pass its tests.
#
# Options:
#   --from N, --to N    check only commits N..M of the series (1-based)
#   --info              also run the cases of later patches, as information
#   --timeout SECONDS   guest time limit per commit (default 2400)
#   --list              print the patch each case needs and exit (needs
#                       the test programs: make kernel-tests)
#   --in-guest PLAN     internal: run PLAN's tests inside the guest
#
# Environment: BUILD (default <repo>/build), JOBS (default 2: the build
# shares the machine), KERNEL_TARBALL as for build-kernel.sh.  Results go
# to $BUILD/bisect/: NN.bzImage, NN.build.log, NN.plan, NN.log, summary.txt.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$repo/build}
case $build in /*) ;; *) build=$repo/$build ;; esac
export BUILD=$build
kdir=$build/kernel
src=$kdir/linux
obj=$kdir/obj-patched
out=$build/bisect
tests_dir=$build/tests/kernel

# The first patch that makes a VMA nonlinear: before it, the tree must
# behave like the stock kernel.
NONLINEAR_FROM=7

say() { printf 'memdbg bisect: %s\n' "$*" >&2; }
die() { printf 'memdbg bisect: error: %s\n' "$*" >&2; exit 2; }
usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }

# Which patch each kselftest case needs, from reading the tests and the
# patches.  program, case glob (FIXTURE[.VARIANT].TEST), patch, class.
# The first matching line wins.  Patch 0: the stock kernel passes it, so
# every commit must.  Class "long": stress, fuzz and random-mix cases, run
# at the last commit only.  A case that matches no line stops the check:
# a new test needs its line here.
case_table() {
	cat <<'EOF'
nonlinear_errors_test   *                                               0  -
nonlinear_test          *                                               7  -
nonlinear_swap_test     *                                               7  -
nonlinear_migrate_test  *                                               7  -
nonlinear_threads_test  *                                               7  -
nl_impl_abi_test        *                                               7  -
nl_impl_rmap_test       *                                               7  -
nl_faultaround_test     *                                               7  -
nl_review_test          review.chgprot_query_and_unknown_flags          8  -
nl_review_test          review.pgoff_beyond_entry_limit_emulated        8  -
nl_review_test          review.linear_remap_stays_linear                8  -
nl_review_test          review.linear_piece_stays_apart_from_nonlinear_part 8 -
nl_review_test          *                                               7  -
nl_walkers_test         walk.guards_*                                   8  -
nl_walkers_test         *                                               7  -
nl_hwpoison_test        *readonly*                                     10  -
nl_hwpoison_test        *                                               7  -
guard_regions_test      global.madv_remove_nonlinear_offsets            7  -
guard_regions_test      global.signal_codes_read_write_exec            11  -
guard_regions_test      *                                               9  -
chgprot_test            mix.readonly_random_mix                        10  long
chgprot_test            mix.noexec_random_mix                          11  long
chgprot_test            *readonly*                                     10  -
chgprot_test            chg.neighbours_paged_out_or_dropped            10  -
chgprot_test            *exec*                                         11  -
chgprot_test            chg.einval_and_eacces                          11  -
chgprot_test            *                                               9  -
chgprot_stress_test     *                                              11  long
nl_index_test           idx.*_vector                                   14  -
nl_index_test           *                                              13  -
nl_index_latency_test   global.remap_of_huge_range_beside_faults_*     15  -
nl_link_race_test       *                                              15  -
nl_index_latency_test   *                                              13  -
nl_index_copy_test      *                                              12  -
nl_index_leak_test      *                                              12  -
nl_index_size_test      *                                              12  -
nl_index_nomem_test     *                                              12  -
nonlinear_vector_test   *                                              14  -
rfp_fuzz_test           *                                              14  long
nl_race_stress_test     *                                              14  long
EOF
}
# Why these numbers: patch 7 makes shmem remaps nonlinear (mincore,
# PAGEMAP_SCAN, MADV_REMOVE and the walkers with it); patch 8 adds
# MAP_CHGPROT guards and its query, but a guard still faults as
# SEGV_MAPERR: every guard test that checks si_code needs patch 9
# (SEGV_ACCERR); patch 10 adds read-only pages, patch 11 non-executable
# ones (einval_and_eacces checks PROT_READ|PROT_EXEC); patches 12-13 the
# file-offset index (its rmap users in 13); patch 14 MAP_VECTOR, which the
# fuzzer also calls with.

# --- guest side -------------------------------------------------------------------
# PLAN: "program case..." lines, "stock-baseline" / "patched-baseline"
# and "smoke".  Prints TAP; every result line is preceded by a
# "# bisect program NAME" line that names what it belongs to.
in_guest() {
	local plan=$1 prog cases c args rc lib t
	echo "# bisect-guest: booted $(uname -r)"
	lib=$build/libmemdbg.so t=$build/tests/lib
	while read -r prog cases; do
		case $prog in
		stock-baseline | patched-baseline)
			echo "# bisect program remap_vma_count.sh"
			tests/kernel/remap_vma_count.sh "$build" "${prog%-baseline}" || true
			;;
		smoke)
			echo "# bisect program memdbg-smoke"
			guest_smoke "$lib" "$t"
			;;
		*)
			args=()
			for c in $cases; do args+=(-r "$c"); done
			echo "# bisect program $prog"
			rc=0
			timeout 1500 "$tests_dir/$prog" "${args[@]}" || rc=$?
			[ "$rc" = 124 ] && echo "not ok 999 $prog.timed_out_after_1500s"
			;;
		esac
	done <"$plan"
	echo "# bisect-guest: done"
}

# A short memdbg check instead of tests/lib/run.sh (132 tests, too
# long under TCG for every commit): the preloaded library starts, names its
# backend, catches an overflow and a use after free with the report's
# SUMMARY, and a clean program runs clean (sort(1): leak reports off, as
# sort frees not all it allocates).  On mprotect (what patches 1-6
# leave) always, on nonlinear when the library can use it.
guest_smoke() {
	local lib=$1 t=$2 n=0 b err probe
	err=$(mktemp)
	smoke_ok() { n=$((n + 1)); echo "ok $n smoke.$1"; }
	smoke_bad() { n=$((n + 1)); echo "not ok $n smoke.$1"; sed 's/^/#   /' "$err" | head -20; }
	probe=$(LD_PRELOAD=$lib MEMDBG_OPTIONS=verbosity=1:detect_leaks=0 /bin/true 2>&1 | head -n 1)
	echo "# auto backend: $probe"
	for b in mprotect nonlinear; do
		if [ "$b" = nonlinear ] &&
			! LD_PRELOAD=$lib MEMDBG_OPTIONS=verbosity=1:detect_leaks=0:backend=nonlinear /bin/true 2>&1 |
			grep -q 'backend nonlinear'; then
			echo "# nonlinear backend not usable on this kernel: nonlinear smoke not run"
			continue
		fi
		if ! LD_PRELOAD=$lib MEMDBG_OPTIONS=backend=$b timeout 120 "$t/t_overflow" guard >/dev/null 2>"$err" </dev/null &&
			grep -q '^SUMMARY: memdbg: heap-buffer-overflow' "$err"; then
			smoke_ok "$b.overflow_caught"
		else smoke_bad "$b.overflow_caught"; fi
		if ! LD_PRELOAD=$lib MEMDBG_OPTIONS=backend=$b timeout 120 "$t/t_uaf" read >/dev/null 2>"$err" </dev/null &&
			grep -q '^SUMMARY: memdbg: heap-use-after-free' "$err"; then
			smoke_ok "$b.use_after_free_caught"
		else smoke_bad "$b.use_after_free_caught"; fi
		if LD_PRELOAD=$lib MEMDBG_OPTIONS=backend=$b:detect_leaks=0 timeout 120 sort "$repo/README.md" >/dev/null 2>"$err" </dev/null &&
			! grep -q SUMMARY "$err"; then
			smoke_ok "$b.clean_program_clean"
		else smoke_bad "$b.clean_program_clean"; fi
	done
	rm -f "$err"
}

# Everything runs from main(), which bash has read whole before it starts:
# editing this file during an hour-long run cannot change the run.
main() {
	from=1 to=0 info=0 timeout=2400 list=0
	while [ $# -gt 0 ]; do
		case $1 in
		--from) [ $# -ge 2 ] || die "--from needs a number"; from=$2; shift 2 ;;
		--to) [ $# -ge 2 ] || die "--to needs a number"; to=$2; shift 2 ;;
		--info) info=1; shift ;;
		--list) list=1; shift ;;
		--timeout) [ $# -ge 2 ] || die "--timeout needs seconds"; timeout=$2; shift 2 ;;
		--in-guest) [ $# -ge 2 ] || die "--in-guest needs a plan"; cd "$repo"; in_guest "$2"; exit 0 ;;
		-h | --help) usage; exit 0 ;;
		*) die "unknown argument '$1' (see --help)" ;;
		esac
	done
	for n in from to timeout; do
		[[ ${!n} =~ ^[0-9]+$ ]] || die "--$n must be a number, got '${!n}'"
	done

	# --- host side --------------------------------------------------------------------
	git_src() { git -C "$src" -c gc.auto=0 "$@"; }
	# The series applied and built as build-kernel.sh does it (a no-op when
	# it is up to date); the test programs built against that tree.
	if [ "$list" = 0 ]; then
		say "bringing $src up to pristine + kernel/series"
		JOBS=${JOBS:-2} nice -n 10 "$repo/kernel/scripts/build-kernel.sh" patched
		[ -z "$(git_src status --porcelain -uno)" ] || die "$src has uncommitted changes"
		mapfile -t commits < <(git_src rev-list --reverse pristine..patched)
		total=${#commits[@]}
		[ "$total" -ge 1 ] || die "no commits between pristine and patched in $src"
		[ "$to" = 0 ] && to=$total
		if [ "$from" -lt 1 ] || [ "$to" -gt "$total" ] || [ "$from" -gt "$to" ]; then
			die "--from/--to must lie in 1..$total"
		fi
		say "building the test programs and libmemdbg in $build"
		nice -n 10 make -s -C "$repo" -j2 BUILD="$build" lib lib-tests examples kernel-tests >&2 ||
			die "make lib lib-tests examples kernel-tests failed"
		mkdir -p "$out"
	fi

	# All cases of every program, FIXTURE[.VARIANT].TEST, from the harness's
	# -l table (fixed columns: 20 + 1, 25 + 1, the rest).
	list_cases() {
		"$1" -l 2>&1 | awk '
		function trim(s) { sub(/^ +/, "", s); sub(/ +$/, "", s); return s }
		function flush(  i, j) {
			for (i = 0; i < nt; i++) {
				if (nv == 0) print fx "." ts[i]
				else for (j = 0; j < nv; j++) print fx "." vs[j] "." ts[i]
			}
			nv = nt = 0
		}
		/^#|^---/ { next }
		{
			f = trim(substr($0, 1, 20)); v = trim(substr($0, 22, 25)); t = trim(substr($0, 48))
			if (f != "") { flush(); fx = f }
			if (v != "") vs[nv++] = v
			if (t != "") ts[nt++] = t
		}
		END { flush() }'
	}

	# "patch class" of a case of a program, from case_table.
	classify() {
		local prog=$1 name=$2 p g n c
		while read -r p g n c; do
			[ "$p" = "$prog" ] || continue
			# shellcheck disable=SC2053
			if [[ $name == $g ]]; then
				echo "$n $c"
				return 0
			fi
		done < <(case_table)
		echo "none none"
	}

	declare -A case_patch case_class
	programs=()
	for t in "$tests_dir"/*_test; do
		[ -x "$t" ] || continue
		prog=$(basename "$t")
		programs+=("$prog")
		while read -r name; do
			read -r n c < <(classify "$prog" "$name")
			[ "$n" != none ] || die "$prog: case $name has no line in case_table: add the patch it needs"
			case_patch[$prog:$name]=$n
			case_class[$prog:$name]=$c
		done < <(list_cases "$t")
	done
	if [ "$list" = 1 ]; then
		for k in "${!case_patch[@]}"; do
			printf '%-2s %-5s %s\n' "${case_patch[$k]}" "${case_class[$k]}" "$k"
		done | sort -n -k1,1 -k3
		exit 0
	fi
	say "${#case_patch[@]} kselftest cases in ${#programs[@]} programs; the table:"
	for prog in "${programs[@]}"; do
		line=""
		for k in "${!case_patch[@]}"; do
			[ "${k%%:*}" = "$prog" ] || continue
			line+=" ${case_patch[$k]}${case_class[$k]/#-/}"
		done
		say "  $prog:$(echo "${line# }" | tr ' ' '\n' | sort -n | uniq -c | awk '{ l = sub(/long$/, "", $2) ? " (long)" : ""; printf " %s case(s) need patch %s%s;", $1, $2, l }')"
	done

	# Which cases were planned as required, information or n/a at a commit.
	declare -A planned
	plan_commit() { # N plan-file
		local k=$1 plan=$2 prog key n list
		: >"$plan"
		planned=()
		if [ "$k" -lt "$NONLINEAR_FROM" ]; then
			echo stock-baseline >>"$plan"
		else
			echo patched-baseline >>"$plan"
		fi
		echo smoke >>"$plan"
		for prog in "${programs[@]}"; do
			list=""
			for key in "${!case_patch[@]}"; do
				[ "${key%%:*}" = "$prog" ] || continue
				n=${case_patch[$key]}
				if [ "${case_class[$key]}" = long ] && [ "$k" != "$total" ]; then
					planned[$key]=long
				elif [ "$n" -le "$k" ]; then
					planned[$key]=required
					list+=" ${key#*:}"
				elif [ "$info" = 1 ]; then
					planned[$key]=info
					list+=" ${key#*:}"
				else
					planned[$key]=na
				fi
			done
			[ -z "$list" ] || echo "$prog$list" >>"$plan"
		done
	}

	summary=$out/summary.txt
	failed_commits=0
	printf '%-3s %-12s %-50s %-6s %5s %6s %-5s %-34s %5s\n' \
		N commit subject build bld_s warn boot "tests: pass/fail/skip info n/a long" secs >"$summary.new"

	for k in $(seq "$from" "$to"); do
		sha=${commits[$((k - 1))]}
		nn=$(printf '%02d' "$k")
		subject=$(git_src log -1 --format=%s "$sha")
		start=$(date +%s)
		say "[$nn/$total] ${sha:0:12} $subject"

		# build
		git_src checkout -q --detach "$sha"
		bstart=$(date +%s)
		build_res=ok
		if ! KERNEL_LOCAL=1 JOBS=${JOBS:-2} nice -n 10 "$repo/kernel/scripts/build-kernel.sh" patched \
			2> >(tee "$out/$nn.build.err" >&2); then
			build_res=FAIL
		fi
		bsecs=$(($(date +%s) - bstart))
		cp "$obj/build.log" "$out/$nn.build.log" 2>/dev/null || true
		# Warnings of the files this step compiled (ccache replays a cached
		# file's warnings); those in mm/ or in a touched file fail the commit.
		touched=$(git_src diff-tree --no-commit-id --name-only -r "$sha" | grep '\.[ch]$' || true)
		warn_all=$(grep -c 'warning: ' "$out/$nn.build.log" || true)
		grep 'warning: ' "$out/$nn.build.log" | sed 's|^\(\.\./linux/\)*||' >"$out/$nn.warnings" || true
		strict=$(grep -E '^mm/' "$out/$nn.warnings" || true)
		for f in $touched; do
			strict+=$(grep -F "$f:" "$out/$nn.warnings" || true)
		done
		nstrict=$(printf '%s' "$strict" | grep -c . || true)
		if [ "$nstrict" != 0 ]; then
			say "  warnings in mm/ or in files the commit touches (treated as errors):"
			printf '%s\n' "$strict" | sort -u | sed 's/^/    /' >&2
			build_res=WERR
		fi
		if [ "$build_res" = FAIL ]; then
			tail -30 "$out/$nn.build.err" >&2
		else
			cp "$obj/arch/x86/boot/bzImage" "$out/$nn.bzImage"
		fi
		say "  build $build_res in $bsecs s, $warn_all warning(s) ($nstrict in mm/ or touched files)"

		# boot and test
		boot=-
		pass=0 fail=0 skip=0 inf=0 na=0 long=0
		if [ "$build_res" != FAIL ]; then
			plan_commit "$k" "$out/$nn.plan"
			say "  booting; $(wc -l <"$out/$nn.plan") plan lines (log: $out/$nn.log)"
			vrc=0
			"$repo/kernel/scripts/vm-run.sh" --kernel "$out/$nn.bzImage" --timeout "$timeout" -- \
				"BUILD='$build' '$repo/kernel/scripts/bisect-check.sh' --in-guest '$out/$nn.plan'" >"$out/$nn.log" 2>"$out/$nn.vm.err" || vrc=$?
			if grep -q '^# bisect-guest: booted' "$out/$nn.log"; then
				boot=ok
			else
				boot=FAIL
			fi
			# vm-run's 125: an oops/WARNING in the kernel log, or a dead guest.
			if [ "$vrc" = 124 ] || [ "$vrc" = 125 ] || ! grep -q '^# bisect-guest: done' "$out/$nn.log"; then
				[ "$boot" = ok ] && boot=DIED
				tail -5 "$out/$nn.vm.err" >&2
			fi
			prog=""
			while IFS= read -r line; do
				case $line in
				"# bisect program "*) prog=${line#\# bisect program }; continue ;;
				"ok "* | "not ok "*) ;;
				*) continue ;;
				esac
				name=$(printf '%s\n' "$line" | sed -E 's/^(not )?ok [0-9]+ (- )?//; s/ # .*//')
				key=$prog:$name
				kind=${planned[$key]:-required}
				if [ "$kind" = info ]; then
					inf=$((inf + 1))
					printf '%s\n' "$line" | sed "s|^|  info (needs patch ${case_patch[$key]}): $prog: |" >&2
				elif [[ $line == "not ok "* ]]; then
					fail=$((fail + 1))
					say "  FAIL: $prog: $name"
				elif [[ $line == *"# SKIP"* ]]; then
					skip=$((skip + 1))
				else
					pass=$((pass + 1))
				fi
			done <"$out/$nn.log"
			# A program that died or hung leaves cases without a result line.
			for key in "${!planned[@]}"; do
				case ${planned[$key]} in
				na) na=$((na + 1)) ;;
				long) long=$((long + 1)) ;;
				required)
					if ! grep -qE "^(not )?ok [0-9]+ ${key#*:}( |\$)" "$out/$nn.log"; then
						fail=$((fail + 1))
						say "  FAIL (no result): $key"
					fi
					;;
				esac
			done
		fi
		secs=$(($(date +%s) - start))
		verdict=ok
		if [ "$build_res" != ok ] || [ "$boot" != ok ] || [ "$fail" != 0 ]; then
			verdict=FAILED
			failed_commits=$((failed_commits + 1))
		fi
		line=$(printf '%-3s %-12s %-50.50s %-6s %5s %6s %-5s %4s/%s/%s %4s %4s %4s %5s %s' \
			"$nn" "${sha:0:12}" "$subject" "$build_res" "$bsecs" "$warn_all/$nstrict" "$boot" \
			"$pass" "$fail" "$skip" "$inf" "$na" "$long" "$secs" "$verdict")
		echo "$line" >>"$summary.new"
		say "$line"
	done
	git_src checkout -q patched

	mv "$summary.new" "$summary"
	{
		echo "# bisect check of $total commits, $(date -u '+%Y-%m-%d %H:%M UTC'); warn = all/in mm/ or touched files;"
		echo "# n/a = cases of a later patch not run; long = stress/fuzz/mix cases (last commit only)"
		cat "$summary"
	} >&2
	if [ "$failed_commits" != 0 ]; then
		say "$failed_commits commit(s) failed"
		exit 1
	fi
	say "every checked commit builds, boots and passes its tests"
}

main "$@"
exit $?
