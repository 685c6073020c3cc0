# SPDX-License-Identifier: MIT
# Unit tests of libmemdbg's pure parts (tests/unit/), included from
# tests/tests.mk.  They link the library's own objects (built by
# memdbg/lib.mk with the library's flags) into one test program, with
# tests/unit/stubs.c standing in for the parts left out.
#
#   make unit        build and run them (TAP, a few seconds)
#   make lib-check   unit tests, then the library tests on the host
#                    (tests/lib/run.sh, both host backends; no kernel tree)

# The library sources the unit tests link: the only list to change when
# files move.  Left out on purpose: heap.c and leaks.c (their constructor
# and destructor would start the allocator and a leak check in the test
# program), signals.c and unwind_fds.c (they interpose sigaction, close and
# read for every caller in the process), and what only they need.
UNIT_LIB_SRCS := memdbg/base/options.c memdbg/base/options_table.c memdbg/base/out.c memdbg/base/log.c memdbg/base/as_limit.c \
                 memdbg/base/internal_alloc.c memdbg/stack/stackdepot.c memdbg/stack/modules.c \
                 memdbg/leak/suppressions.c memdbg/core/arena.c memdbg/core/direct.c memdbg/core/core_dump.c memdbg/core/blame.c memdbg/backend/nonlinear_pool.c \
                 memdbg/sys/x86_access.c memdbg/sys/fd.c memdbg/report/fault.c memdbg/report/frozen_fault.c memdbg/report/report.c memdbg/report/altstack.c \
                 memdbg/report/json.c memdbg/core/frozen.c memdbg/core/heap_lock.c \
                 memdbg/stack/symbolize.c memdbg/stack/symformat.c memdbg/alloc/sample_gap.c
UNIT_INCLUDES := -Imemdbg -Itests/unit

UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_TEST_SRCS := $(filter-out tests/unit/mod_%.c,$(UNIT_SRCS))
UNIT_LIB_OBJS := $(patsubst %.c,$(BUILD)/lib/obj/%.o,$(UNIT_LIB_SRCS))
UNIT_OBJS := $(patsubst %.c,$(BUILD)/tests/unit/obj/%.o,$(UNIT_TEST_SRCS))
UNIT_BIN := $(BUILD)/tests/unit/unit
# -O0 and frame pointers: the report tests name these files' functions
UNIT_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -O0 -g -fno-omit-frame-pointer -fno-inline \
               -D_GNU_SOURCE $(UNIT_INCLUDES)

.PHONY: unit unit-build lib-check

# the report tests symbolize through the library's symbolizer
unit-build: $(UNIT_BIN) $(BUILD)/tests/unit/mod_unit.so $(BUILD)/libmemdbg-sym.so

unit: unit-build
	@$(UNIT_BIN) $(UNIT_ARGS)

$(BUILD)/tests/unit/obj/%.o: %.c tests/unit/unit.h $(MD_HEADERS) memdbg/base/options.inc tests/unit/unit.mk
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) -c $< -o $@

$(UNIT_BIN): $(UNIT_OBJS) $(UNIT_LIB_OBJS)
	$(CC) -o $@ $(UNIT_OBJS) $(UNIT_LIB_OBJS) $(MD_LDLIBS) -lm

# a module the module-table tests dlopen and dlclose
$(BUILD)/tests/unit/mod_unit.so: tests/unit/mod_unit.c
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) -fPIC -shared $< -o $@

# Unit tests first (seconds), then the library tests with both backends a
# host without memdbg's kernel series has; each ends in its TAP summary.
lib-check: unit-build lib-tests
	@tests/check.sh unit lib-host lib-host-mprotect
