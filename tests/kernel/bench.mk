# SPDX-License-Identifier: GPL-2.0
# The kernel benchmarks, run in the guests by tests/kernel/bench.sh:
# bench_remap (remap_file_pages() against mmap/mprotect per page),
# bench_guard (a guard page by MAP_CHGPROT, mprotect or
# munmap+mmap), bench_fault_remap (faults of one thread while another
# remaps guard pages of the same VMA), bench_cycle_threads (every thread
# cycling guard remaps against MADV_DONTNEED), bench_rmap (reclaim, migration and truncation
# of nonlinear against linear mappings) and bench_memcg_heap (the
# memcg row: a heap of live blocks under memdbg, run by bench_memcg.sh).  Not *_test programs:
# tests/kernel/run.sh does not run them.  Included from tests/tests.mk.
BENCH_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -O2 -g -D_GNU_SOURCE

.PHONY: kernel-bench
kernel-bench: $(BUILD)/tests/kernel/bench_remap $(BUILD)/tests/kernel/bench_guard \
	      $(BUILD)/tests/kernel/bench_fault_remap $(BUILD)/tests/kernel/bench_cycle_threads \
	      $(BUILD)/tests/kernel/bench_rmap $(BUILD)/tests/kernel/bench_memcg_heap

$(BUILD)/tests/kernel/bench_%: tests/kernel/bench_%.c tests/kernel/bench_clock.h tests/kernel/bench_nonlinear.h tests/kernel/read_number.h
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -o $@ $< -lpthread
