# SPDX-License-Identifier: MIT
# Test programs, built on the host (the guest runs the host's binaries).
# Kernel tests are C files tests/kernel/*_test.c in the kselftest harness
# style; they include kselftest_harness.h from the extracted 6.12 tree.

KSFT_DIR     := $(BUILD)/kernel/linux/tools/testing/selftests
TEST_CFLAGS  := -std=gnu11 -Wall -Wextra -Werror -O2 -g -D_GNU_SOURCE
KERNEL_TESTS := $(patsubst tests/kernel/%.c,$(BUILD)/tests/kernel/%,$(wildcard tests/kernel/*_test.c))

.PHONY: kernel-tests
tests: examples kernel-tests $(if $(wildcard memdbg/lib.mk),lib-tests)

kernel-tests: $(KERNEL_TESTS)

$(BUILD)/tests/kernel/%: tests/kernel/%.c $(wildcard tests/kernel/*.h)
	@test -f $(KSFT_DIR)/kselftest_harness.h || { echo "tests: $(KSFT_DIR)/kselftest_harness.h is missing: run 'make kernel' first" >&2; exit 1; }
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I$(KSFT_DIR) -Itests/kernel -o $@ $< -lpthread

# Benchmark programs (make bench), from the suites that have them.
-include tests/kernel/bench.mk
.PHONY: benchmarks
benchmarks: $(if $(wildcard tests/kernel/bench.mk),kernel-bench) $(if $(wildcard memdbg/lib.mk),lib-bench) real-bench

# tests/bench-real.sh (real programs under each debugger): its measuring
# wrapper and the C++ std::map workload.  Also built by `make tests`, for
# the script's sanity test in make check (tests/infra/bench_real.sh).
.PHONY: real-bench
tests: real-bench
real-bench: $(BUILD)/tests/bench/bench-run $(BUILD)/tests/bench/cxx_map

$(BUILD)/tests/bench/bench-run: tests/bench/bench_run.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $< -o $@

$(BUILD)/tests/bench/cxx_map: tests/bench/cxx_map.cc
	@mkdir -p $(dir $@)
	$(CXX) -std=gnu++17 -Wall -Wextra -Werror -O2 -g $< -o $@ -lpthread

# Unit tests of the library's pure parts (make unit, make lib-check).
-include tests/unit/unit.mk
tests: $(if $(wildcard tests/unit/unit.mk),unit-build)
