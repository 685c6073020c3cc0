# SPDX-License-Identifier: MIT
# memdbg library fragment, included from the top-level Makefile (paths are
# relative to the repository root).  Targets: lib, lib-tests, lib-bench.
BUILD ?= build
CC ?= gcc
CXX ?= g++

MD_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -O2 -g -fPIC -fvisibility=hidden \
             -fno-omit-frame-pointer -fno-optimize-sibling-calls -D_GNU_SOURCE -Imemdbg
# make MD_DEBUG=1 BUILD=build-debug: MD_DCHECK invariants compiled in.
MD_CFLAGS += $(if $(MD_DEBUG),-DMD_DEBUG)
MD_CXXFLAGS := -std=gnu++17 -Wall -Wextra -Werror -O2 -g -fPIC -fvisibility=hidden -fno-omit-frame-pointer -fno-optimize-sibling-calls
MD_LDLIBS := -lunwind -lpthread -ldl

# Sources per layer, lowest first: a file calls only into its own folder
# and the folders listed before it (tests/infra/layer_check.sh checks this
# on the built objects; docs/architecture.md says what each file holds).
MD_BASE_SRCS := memdbg/base/out.c memdbg/base/log.c memdbg/base/options.c memdbg/base/options_table.c memdbg/base/internal_alloc.c \
                memdbg/base/runtime.c memdbg/base/as_limit.c
MD_SYS_SRCS := memdbg/sys/fd.c memdbg/sys/proc_maps.c memdbg/sys/madvise_vec.c memdbg/sys/x86_access.c memdbg/sys/pagemap.c memdbg/sys/map_at.c
MD_CORE_SRCS := memdbg/core/arena.c memdbg/core/direct.c memdbg/core/quarantine.c memdbg/core/heap_lock.c memdbg/core/padding.c memdbg/core/core_dump.c \
                memdbg/core/frozen.c memdbg/core/blame.c
MD_BACKEND_SRCS := memdbg/backend/select.c memdbg/backend/guard.c memdbg/backend/mprotect.c \
                   memdbg/backend/nonlinear.c memdbg/backend/nonlinear_calls.c memdbg/backend/compact.c memdbg/backend/nonlinear_pool.c \
                   memdbg/backend/readonly.c
MD_STACK_SRCS := memdbg/stack/stacktrace.c memdbg/stack/stackmemo.c memdbg/stack/stackdepot.c \
                 memdbg/stack/modules.c memdbg/stack/symbolize.c memdbg/stack/symformat.c \
                 memdbg/stack/unwind_fds.c
MD_REPORT_SRCS := memdbg/report/report.c memdbg/report/fault.c memdbg/report/frozen_fault.c memdbg/report/signals.c \
                  memdbg/report/altstack.c memdbg/report/stats.c memdbg/report/stats_export.c \
                  memdbg/report/json.c memdbg/report/access.c
MD_LIFECYCLE_SRCS := memdbg/lifecycle/init.c memdbg/lifecycle/fork.c memdbg/lifecycle/children.c
MD_ALLOC_SRCS := memdbg/alloc/heap.c memdbg/alloc/sample.c memdbg/alloc/sample_gap.c memdbg/alloc/slot_cache.c memdbg/alloc/deferred_free.c \
                 memdbg/alloc/freeze.c memdbg/alloc/leak_ignore.c memdbg/alloc/delete_check.c
MD_LEAK_SRCS := memdbg/leak/leaks.c memdbg/leak/leak_roots.c memdbg/leak/suppressions.c \
                memdbg/leak/lsan_api.c
MD_PRELOAD_SRCS := preload/malloc.c preload/strings.c preload/strdup.c preload/dlopen.c preload/exec.c
MD_LIB_SRCS := $(MD_BASE_SRCS) $(MD_SYS_SRCS) $(MD_CORE_SRCS) $(MD_BACKEND_SRCS) $(MD_STACK_SRCS) \
               $(MD_REPORT_SRCS) $(MD_LIFECYCLE_SRCS) $(MD_ALLOC_SRCS) $(MD_LEAK_SRCS) $(MD_PRELOAD_SRCS)
MD_OBJS := $(patsubst %.c,$(BUILD)/lib/obj/%.o,$(MD_LIB_SRCS)) $(BUILD)/lib/obj/preload/cxx.o
MD_HEADERS := $(wildcard memdbg/*.h memdbg/*/*.h)

.PHONY: lib lib-tests lib-bench

lib: $(BUILD)/libmemdbg.so $(BUILD)/libmemdbg-sym.so $(BUILD)/memdbg

$(BUILD)/lib/obj/%.o: %.c $(MD_HEADERS) memdbg/base/options.inc memdbg/lib.mk
	@mkdir -p $(dir $@)
	$(CC) $(MD_CFLAGS) -c $< -o $@

# JSON reports carry the version that cli/cli.mk writes to its stamp file;
# only json.o is rebuilt when it changes.
$(BUILD)/lib/obj/memdbg/report/json.o: MD_CFLAGS += -DMEMDBG_VERSION="\"$$(cat $(BUILD)/.memdbg-version)\""
$(BUILD)/lib/obj/memdbg/report/json.o: $(BUILD)/.memdbg-version

# The mem and str interceptors: the compiler must not turn their loops into
# calls to themselves, nor treat them as the C library's; without debug
# information a report's frame 0 is the function (memcpy), not the helper
# inlined into it (preload/strings.c).
# Sibling calls on: the fast path jumps to glibc's function (the file
# keeps its calls into memdbg calls, KEEP_FRAME).
$(BUILD)/lib/obj/preload/strings.o: MD_CFLAGS += -fno-builtin -fno-tree-loop-distribute-patterns -g0 -foptimize-sibling-calls

# libmemdbg.so does not link libstdc++: every reference to it is weak
# (preload/cxx.cc), the personality routine the exception tables name
# too, which only the object can be told.
$(BUILD)/lib/obj/preload/cxx.o: preload/cxx.cc memdbg/lib.mk
	@mkdir -p $(dir $@)
	$(CXX) $(MD_CXXFLAGS) -c $< -o $@
	objcopy --weaken-symbol=__gxx_personality_v0 $@

$(BUILD)/libmemdbg.so: $(MD_OBJS)
	$(CC) -shared -o $@ $(MD_OBJS) -Wl,-z,nodelete -Wl,--no-undefined $(MD_LDLIBS)

# The symbolizer: elfutils and what it needs, loaded by libmemdbg.so at
# its first report only (memdbg/stack/symcore.h).  libstdc++ for its
# demangler, which symcore.c references weakly.
MD_SYM_OBJS := $(BUILD)/lib/obj/memdbg/stack/symlib.o $(BUILD)/lib/obj/memdbg/stack/symcore.o \
               $(BUILD)/lib/obj/memdbg/stack/symformat.o
$(BUILD)/libmemdbg-sym.so: $(MD_SYM_OBJS)
	$(CC) -shared -o $@ $(MD_SYM_OBJS) -Wl,--no-undefined -ldw -lelf \
	    -Wl,--push-state,--no-as-needed -lstdc++ -Wl,--pop-state

# $(BUILD)/memdbg (the command) is built by cli/cli.mk.

# ---- tests: built with symbols and frames so backtraces name functions ----
MD_TEST_CFLAGS := -std=gnu11 -g -O0 -fno-omit-frame-pointer -fno-inline -Iinclude -Wall -Wno-unused-result \
                  -Wno-free-nonheap-object -Wno-use-after-free -Wno-array-bounds -Wno-stringop-overflow -Wno-stringop-overread \
                  -Wno-alloc-size-larger-than -Wno-mismatched-dealloc \
                  -Wno-unused-but-set-variable -Wno-unused-variable
MD_TEST_CXXFLAGS := -std=gnu++17 -g -O0 -fno-omit-frame-pointer -fno-inline -Wall \
                    -Wno-mismatched-new-delete -Wno-unused-variable
MD_TEST_C := $(wildcard tests/lib/t_*.c)
MD_TEST_CXX := $(wildcard tests/lib/t_*.cc)
MD_TEST_BINS := $(patsubst tests/lib/%.c,$(BUILD)/tests/lib/%,$(MD_TEST_C)) \
                $(patsubst tests/lib/%.cc,$(BUILD)/tests/lib/%,$(MD_TEST_CXX))
MD_EXAMPLE_BINS := $(patsubst examples/%.c,$(BUILD)/tests/lib/example_%,$(wildcard examples/demo_*.c))
# modules the tests dlopen (tests/lib/mod_*.c -> mod_*.so)
MD_TEST_MODS := $(patsubst tests/lib/%.c,$(BUILD)/tests/lib/%.so,$(wildcard tests/lib/mod_*.c))

lib-tests: lib $(MD_TEST_BINS) $(MD_EXAMPLE_BINS) $(MD_TEST_MODS)

$(BUILD)/tests/lib/mod_%.so: tests/lib/mod_%.c
	@mkdir -p $(dir $@)
	$(CC) $(MD_TEST_CFLAGS) -shared -fPIC $< -o $@

$(BUILD)/tests/lib/%: tests/lib/%.c
	@mkdir -p $(dir $@)
	$(CC) $(MD_TEST_CFLAGS) $< -o $@ -lpthread

$(BUILD)/tests/lib/%: tests/lib/%.cc
	@mkdir -p $(dir $@)
	$(CXX) $(MD_TEST_CXXFLAGS) $< -o $@

$(BUILD)/tests/lib/example_%: examples/%.c
	@mkdir -p $(dir $@)
	$(CC) $(MD_TEST_CFLAGS) $< -o $@ -lpthread

lib-bench: lib $(BUILD)/tests/lib/bench $(BUILD)/tests/lib/bench_fork $(BUILD)/tests/lib/fork_pages \
           $(BUILD)/tests/lib/page_cycle $(BUILD)/tests/lib/uaf_window $(BUILD)/tests/lib/sample_pool \
           $(BUILD)/tests/lib/bug_corpus

# the fork latency test compares the two
lib-tests: $(BUILD)/tests/lib/bench_fork $(BUILD)/tests/lib/fork_pages

$(BUILD)/tests/lib/bench: tests/lib/bench/bench.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Wall $< -o $@

$(BUILD)/tests/lib/uaf_window: tests/lib/bench/uaf_window.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror $< -o $@

$(BUILD)/tests/lib/bug_corpus: tests/lib/bench/bug_corpus.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror $< -o $@

$(BUILD)/tests/lib/sample_pool: tests/lib/bench/sample_pool.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror $< -o $@

$(BUILD)/tests/lib/page_cycle: tests/lib/bench/page_cycle.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror $< -o $@ -lpthread

# ---- symbolization: the offline symbolizer and the tests that need a
# shared library or an optimized build ----
lib: $(BUILD)/memdbg-symbolize

$(BUILD)/memdbg-symbolize: cli/symbolize_main.c $(BUILD)/lib/obj/memdbg/stack/symcore.o \
                           $(BUILD)/lib/obj/memdbg/stack/symformat.o memdbg/stack/symcore.h
	@mkdir -p $(dir $@)
	$(CC) $(MD_CFLAGS) -Imemdbg/stack cli/symbolize_main.c $(BUILD)/lib/obj/memdbg/stack/symcore.o \
	    $(BUILD)/lib/obj/memdbg/stack/symformat.o \
	    -o $@ -ldw -lelf -Wl,--push-state,--no-as-needed -lstdc++ -Wl,--pop-state

lib-tests: $(BUILD)/tests/lib/libmdsym.so $(BUILD)/tests/lib/libmdsym2.so

$(BUILD)/tests/lib/libmdsym.so: tests/lib/libmdsym.c
	@mkdir -p $(dir $@)
	$(CC) $(MD_TEST_CFLAGS) -fPIC -shared $< -o $@

$(BUILD)/tests/lib/libmdsym2.so: tests/lib/libmdsym.c
	@mkdir -p $(dir $@)
	$(CC) $(MD_TEST_CFLAGS) -DMDSYM_SECOND -fPIC -shared $< -o $@

$(BUILD)/tests/lib/t_prof_unwind: tests/lib/t_prof_unwind.c
	@mkdir -p $(dir $@)
	$(CC) $(MD_TEST_CFLAGS) $< -o $@ -lunwind

# dlopen by a bare name must still search the caller's RUNPATH under memdbg
$(BUILD)/tests/lib/t_deepbind: tests/lib/t_deepbind.c
	@mkdir -p $(dir $@)
	$(CC) $(MD_TEST_CFLAGS) $< -o $@ -Wl,-rpath,'$$ORIGIN'

$(BUILD)/tests/lib/t_inline: tests/lib/t_inline.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -g -O2 -fno-omit-frame-pointer -Wall -Wno-use-after-free $< -o $@

$(BUILD)/tests/lib/bench_fork: tests/lib/bench/bench_fork.c tests/lib/bench/fork_clock.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Wall $< -o $@

$(BUILD)/tests/lib/fork_pages: tests/lib/bench/fork_pages.c tests/lib/bench/fork_clock.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror $< -o $@

# ---- options docs: docs/options.md and the OPTIONS section of libmemdbg(7)
# come from options.inc through this generator (make docs; tests/cli checks
# the checked-in copies) ----
lib: $(BUILD)/memdbg-options-doc

$(BUILD)/memdbg-options-doc: cli/options_doc.c $(BUILD)/lib/obj/memdbg/base/options_table.o $(MD_HEADERS) memdbg/base/options.inc
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -Wall -Wextra -Werror -O2 -g -Imemdbg cli/options_doc.c \
	    $(BUILD)/lib/obj/memdbg/base/options_table.o -o $@

.PHONY: docs
docs: $(BUILD)/memdbg-options-doc
	$(BUILD)/memdbg-options-doc markdown >docs/options.md.tmp && mv docs/options.md.tmp docs/options.md
	$(BUILD)/memdbg-options-doc man docs/man/libmemdbg.7 >docs/man/libmemdbg.7.tmp && \
	    mv docs/man/libmemdbg.7.tmp docs/man/libmemdbg.7
