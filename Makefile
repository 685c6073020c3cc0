# SPDX-License-Identifier: MIT
# memdbg: page-guard memory debugger and the nonlinear remap_file_pages()
# kernel feature behind it.  See README.md.
#
#   make              libmemdbg.so, the memdbg command and the example programs
#   make deps         install the Debian packages the project needs
#   make kernel       patched and stock guest kernels (build/kernel/obj-*)
#   make kernel-bisect every commit of the series: build, boot, its tests (~1 h)
#   make vm-run CMD='shell command' [KERNEL=stock|patched|debug]
#   make check        everything, host and guest tests; ends "N passed, N failed"
#   make demo         stock vs patched VMA counts, a caught bug, memdbg compare
#   make bench        benchmarks: tables and plots (build/bench/, not pass/fail)
#   make install      PREFIX=/usr/local DESTDIR= (make uninstall: the same)

BUILD      := build
CC         ?= gcc
# The guest runs the host's binaries, so everything is built on the host.
KERNEL     ?= patched
VM_TIMEOUT ?= 300
export KERNEL VM_TIMEOUT BUILD

HOST_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -O2 -g

.PHONY: all deps kernel kernel-patched kernel-stock kernel-debug kernel-export \
	kernel-checkpatch kernel-crosscheck kernel-bisect vm-run tests check demo bench examples clean distclean help

all: $(if $(wildcard memdbg/lib.mk),lib) cli examples

help:
	@sed -n '4,12s/^# \{0,1\}//p' Makefile

deps:
	@tests/deps.sh

# --- kernel ----------------------------------------------------------------
kernel:
	@kernel/scripts/build-kernel.sh stock patched

kernel-patched:
	@kernel/scripts/build-kernel.sh patched

kernel-stock:
	@kernel/scripts/build-kernel.sh stock

kernel-debug:
	@kernel/scripts/build-kernel.sh debug

# Save the commits on the patched branch of build/kernel/linux as the series.
kernel-export:
	@kernel/scripts/export-series.sh

kernel-checkpatch:
	@kernel/scripts/checkpatch-series.sh

# Cross-build mm/ and fs/proc/ of the patched tree for arm64 and alpha
# (optional cross compilers: gcc-aarch64-linux-gnu, gcc-alpha-linux-gnu).
kernel-crosscheck:
	@kernel/scripts/crosscheck.sh

# Build, boot and test each commit of the series in turn (not part of make
# check: about an hour under TCG).  BISECT_ARGS: --from N, --to N, --info.
kernel-bisect:
	@kernel/scripts/bisect-check.sh $(BISECT_ARGS)

# --- guest runner --------------------------------------------------------------
# make cannot exit with an arbitrary status: when CMD fails, make vm-run
# fails too ("Error N" names CMD's status); vm-run.sh returns it exactly.
vm-run:
	$(if $(value CMD),,@echo "make vm-run: set CMD='shell command' (KERNEL=patched|stock|debug, VM_TIMEOUT=seconds)" >&2; exit 2)
	@case "$(KERNEL)" in stock|debug|patched) MEMDBG_KERNEL_QUIET=1 kernel/scripts/build-kernel.sh $(KERNEL) ;; esac
	@kernel/scripts/vm-run.sh -- '$(subst ','\'',$(value CMD))'

# --- userspace -------------------------------------------------------------------
EXAMPLES := $(BUILD)/examples/remap_reverse $(BUILD)/examples/live_blocks $(BUILD)/examples/freeze_scale
# Programs with heap bugs on purpose: built without optimisation and with
# frame pointers, so that memdbg's reports name their functions and lines,
# and without the warnings that point at those very bugs.
BUG_EXAMPLES := $(BUILD)/examples/demo_bugs $(BUILD)/examples/uaf $(BUILD)/examples/frozen_table
BUG_CFLAGS := -std=gnu11 -g -O0 -fno-omit-frame-pointer -fno-inline -Iinclude -Wall \
	-Wno-use-after-free -Wno-unused-result

examples: $(EXAMPLES) $(BUG_EXAMPLES)

$(BUG_EXAMPLES): $(BUILD)/examples/%: examples/%.c
	@mkdir -p $(dir $@)
	$(CC) $(BUG_CFLAGS) -o $@ $<

$(BUILD)/examples/%: examples/%.c include/memdbg.h
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -Iinclude -o $@ $<

-include memdbg/lib.mk
include cli/cli.mk
-include tests/tests.mk

# --- top-level flows -------------------------------------------------------------
check: deps
	@$(MAKE) -s kernel kernel-debug
	@$(MAKE) -s all tests
	@tests/check.sh

demo: deps
	@$(MAKE) -s kernel
	@$(MAKE) -s all
	@examples/demo.sh

bench: deps
	@tests/deps.sh --bench
	@$(MAKE) -s kernel
	@$(MAKE) -s all tests benchmarks
	@tests/bench.sh

clean:
	rm -rf $(BUILD)/examples $(BUILD)/tests $(BUILD)/lib $(BUILD)/libmemdbg.so $(BUILD)/libmemdbg-sym.so $(BUILD)/memdbg $(BUILD)/vm/runs \
		$(BUILD)/memdbg-probe $(BUILD)/maps-kinds.awk $(BUILD)/memdbg.installed $(BUILD)/.memdbg-version

# Also drops the kernel trees and objects (the next make kernel re-extracts).
distclean:
	rm -rf $(BUILD)
