# SPDX-License-Identifier: MIT
# The memdbg command and its helpers, man pages, make install/uninstall.
# Included from the top-level Makefile (paths relative to the repository).
#
#   build/memdbg            the command (cli/memdbg.sh, with the version and
#                           the checkout's path filled in)
#   build/memdbg-probe      ptrace/proc helper for memdbg maps and compare
#   build/maps-kinds.awk    VMA classification for memdbg maps
#   make install PREFIX=/usr/local DESTDIR=   make uninstall (same variables)

PREFIX     ?= /usr/local
DESTDIR    ?=
BINDIR     := $(DESTDIR)$(PREFIX)/bin
MEMDBG_LIBEXEC := $(DESTDIR)$(PREFIX)/lib/memdbg
MANDIR     := $(DESTDIR)$(PREFIX)/share/man
DOCDIR     := $(DESTDIR)$(PREFIX)/share/doc/memdbg
INCLUDEDIR := $(DESTDIR)$(PREFIX)/include
PKGCONFIGDIR := $(DESTDIR)$(PREFIX)/lib/pkgconfig

# VERSION, plus the commit when built from a git checkout; fixed at build
# time (the stamp changes only when the string does).
MEMDBG_VERSION := $(shell cat VERSION)$(shell git rev-parse --short HEAD 2>/dev/null | sed 's/^/+g/')$(shell git rev-parse --git-dir >/dev/null 2>&1 && ! git diff --quiet HEAD 2>/dev/null && echo .dirty)
MEMDBG_VERSION_STAMP := $(BUILD)/.memdbg-version
$(shell mkdir -p $(BUILD) && { echo '$(MEMDBG_VERSION)' | cmp -s - $(MEMDBG_VERSION_STAMP) || echo '$(MEMDBG_VERSION)' >$(MEMDBG_VERSION_STAMP); })

CLI_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -O2 -g
MAN_PAGES := docs/man/memdbg.1 docs/man/libmemdbg.7 docs/man/remap_file_pages.2 docs/man/memdbg_freeze.3

.PHONY: cli install uninstall man

# The remap_file_pages(2) and memdbg_freeze(3) pages follow their markdown;
# run after editing docs/remap_file_pages.2.md or docs/memdbg_freeze.3.md
# (tests/cli checks them).
man:
	python3 docs/man/md2man.py docs/remap_file_pages.2.md >docs/man/remap_file_pages.2
	python3 docs/man/md2man.py docs/memdbg_freeze.3.md >docs/man/memdbg_freeze.3

cli: $(BUILD)/memdbg $(BUILD)/memdbg-probe $(BUILD)/maps-kinds.awk

# sed script shared by the build and install copies of the command.
memdbg_subst = sed -e "s|@VERSION@|$(MEMDBG_VERSION)|" -e "s|@LAYOUT@|$(1)|" -e "s|@REPO@|$(CURDIR)|"

$(BUILD)/memdbg: cli/memdbg.sh $(MEMDBG_VERSION_STAMP)
	@mkdir -p $(dir $@)
	$(call memdbg_subst,build) $< >$@.tmp
	chmod +x $@.tmp
	mv $@.tmp $@

$(BUILD)/memdbg-probe: cli/probe.c cli/snapshot.c cli/snapshot.h memdbg/report/stats_export.h
	@mkdir -p $(dir $@)
	$(CC) $(CLI_CFLAGS) -o $@ cli/probe.c cli/snapshot.c

$(BUILD)/maps-kinds.awk: cli/maps-kinds.awk
	@mkdir -p $(dir $@)
	cp $< $@

# Relocatable: bin/memdbg finds lib/memdbg/ next to its own directory.
install: lib cli
	install -d $(BINDIR) $(MEMDBG_LIBEXEC) $(MANDIR)/man1 $(MANDIR)/man2 $(MANDIR)/man3 $(MANDIR)/man7 \
	    $(DOCDIR)/docs/img $(INCLUDEDIR) $(PKGCONFIGDIR)
	$(call memdbg_subst,installed) cli/memdbg.sh >$(BUILD)/memdbg.installed
	install -m 755 $(BUILD)/memdbg.installed $(BINDIR)/memdbg
	install -m 644 $(BUILD)/libmemdbg.so $(MEMDBG_LIBEXEC)/libmemdbg.so
	install -m 644 $(BUILD)/libmemdbg-sym.so $(MEMDBG_LIBEXEC)/libmemdbg-sym.so
	install -m 755 $(BUILD)/memdbg-probe $(MEMDBG_LIBEXEC)/memdbg-probe
	install -m 644 cli/maps-kinds.awk $(MEMDBG_LIBEXEC)/maps-kinds.awk
	if [ -x $(BUILD)/memdbg-symbolize ]; then install -m 755 $(BUILD)/memdbg-symbolize $(MEMDBG_LIBEXEC)/memdbg-symbolize; fi
	install -m 644 docs/man/memdbg.1 $(MANDIR)/man1/memdbg.1
	install -m 644 docs/man/libmemdbg.7 $(MANDIR)/man7/libmemdbg.7
	install -m 644 docs/man/remap_file_pages.2 $(MANDIR)/man2/remap_file_pages.2memdbg
	install -m 644 docs/man/memdbg_freeze.3 $(MANDIR)/man3/memdbg_freeze.3
	for f in memdbg_thaw memdbg_freeze_many memdbg_thaw_many memdbg_is_frozen memdbg_running; do \
	    echo '.so man3/memdbg_freeze.3' >$(MANDIR)/man3/$$f.3; done
	install -m 644 include/memdbg.h $(INCLUDEDIR)/memdbg.h
	sed -e "s|@PREFIX@|$(PREFIX)|" -e "s|@VERSION@|$(MEMDBG_VERSION)|" cli/memdbg.pc.in >$(PKGCONFIGDIR)/memdbg.pc
	install -m 644 README.md $(DOCDIR)/README.md
	install -m 644 $(wildcard docs/*.md) $(DOCDIR)/docs/
	if ls docs/img/*.png >/dev/null 2>&1; then install -m 644 docs/img/*.png $(DOCDIR)/docs/img/; fi

uninstall:
	rm -f $(BINDIR)/memdbg
	rm -f $(MEMDBG_LIBEXEC)/libmemdbg.so $(MEMDBG_LIBEXEC)/libmemdbg-sym.so $(MEMDBG_LIBEXEC)/memdbg-probe $(MEMDBG_LIBEXEC)/maps-kinds.awk \
	      $(MEMDBG_LIBEXEC)/memdbg-symbolize
	-rmdir $(MEMDBG_LIBEXEC) 2>/dev/null
	rm -f $(MANDIR)/man1/memdbg.1 $(MANDIR)/man7/libmemdbg.7 $(MANDIR)/man2/remap_file_pages.2memdbg
	rm -f $(addprefix $(MANDIR)/man3/,$(addsuffix .3,memdbg_freeze memdbg_thaw memdbg_freeze_many \
	      memdbg_thaw_many memdbg_is_frozen memdbg_running))
	rm -f $(INCLUDEDIR)/memdbg.h $(PKGCONFIGDIR)/memdbg.pc
	rm -rf $(DOCDIR)
