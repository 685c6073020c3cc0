# The remap_file_pages() benchmark (tests/kernel/bench_remap.c), run in
# the guests by tests/kernel/bench.sh.  Not a *_test: tests/kernel/run.sh
# does not run it.  Included from tests/tests.mk.
BENCH_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -O2 -g -D_GNU_SOURCE

.PHONY: kernel-bench
kernel-bench: $(BUILD)/tests/kernel/bench_remap

$(BUILD)/tests/kernel/bench_remap: tests/kernel/bench_remap.c
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -o $@ $<
