# Makefile -- builds tincan (the proxy pair) and tincan-link (the link emulator);
# `make check` builds everything, plain and under ASan+UBSan, and runs every test.
#
#   make                 build/tincan, build/tincan-link
#   make check           unit tests (sanitized), fuzz-corpus replay, integration tests
#   make fuzz            libFuzzer targets (clang) in build/fuzz/
#   make SAN=1 BUILD=d   a sanitized build in directory d
#   make install         the programs, man pages and bash completion under PREFIX (/usr/local);
#                        DESTDIR, BINDIR, MANDIR and BASHCOMPDIR as the GNU conventions have them
#   make uninstall       removes exactly what install put there

CC       ?= cc
BUILD    ?= build
CFLAGS   ?= -O2 -g
WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-unused-parameter -Wno-missing-field-initializers
CPPFLAGS += -std=c11 -D_GNU_SOURCE -Isrc -I$(BUILD)/gen
PKGS     := libsodium xau libzstd libwebp
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS))
PKG_LIBS   := $(shell pkg-config --libs $(PKGS))
LDLIBS   += $(PKG_LIBS) -lm
ifeq ($(SAN),1)
CFLAGS   += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS  += -fsanitize=address,undefined
endif
ALL_CFLAGS = $(CPPFLAGS) $(PKG_CFLAGS) $(WARN) $(CFLAGS)

XCBPROTO_DIR ?= $(shell pkg-config --variable=xcbincludedir xcb-proto 2>/dev/null || echo /usr/share/xcb)

# --- generated protocol tables (from the xcb-proto XML, never edited by hand) ---
GEN_C := $(BUILD)/gen/xproto_tables.c
GEN_H := $(BUILD)/gen/xproto_tables.h
GEN_W := $(BUILD)/gen/xproto_wire.h
$(GEN_C) $(GEN_H) $(GEN_W) &: tools/gen_xproto.py tools/xproto_wire.spec $(wildcard $(XCBPROTO_DIR)/*.xml)
	@mkdir -p $(BUILD)/gen
	python3 tools/gen_xproto.py --xml-dir $(XCBPROTO_DIR) --out-c $(GEN_C) --out-h $(GEN_H) \
	    --spec tools/xproto_wire.spec --out-wire $(GEN_W)

# --- the tincan library, shared by the program, the tests and the fuzzers ---
LIB_SRC := $(sort $(shell find src -name '*.c' ! -name main.c))
LIB_OBJ := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(LIB_SRC)) $(BUILD)/obj/gen/xproto_tables.o
LIB     := $(BUILD)/libtincan.a

$(BUILD)/obj/%.o: src/%.c $(GEN_H) $(GEN_W)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<
$(BUILD)/obj/gen/xproto_tables.o: $(GEN_C) $(GEN_H) $(GEN_W)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<
$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/tincan: $(BUILD)/obj/main.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

ALL_BINS   := $(BUILD)/tincan
UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_*.c))

$(BUILD)/tests/%: tests/unit/%.c $(LIB) tests/test.h $(wildcard tests/unit/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# --- fuzz targets: each tests/fuzz/fuzz_X.c has a corpus in tests/fuzz/corpus/X/ ---
FUZZ_SRC := $(filter-out tests/fuzz/fuzz_emu_%,$(wildcard tests/fuzz/fuzz_*.c))
# Replay drivers (built with any compiler, part of `make check`): feed each corpus file once.
REPLAY_BINS := $(patsubst tests/fuzz/%.c,$(BUILD)/replay/%,$(FUZZ_SRC))
$(BUILD)/replay/%: tests/fuzz/%.c tests/fuzz/replay_main.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< tests/fuzz/replay_main.c $(LIB) $(LDLIBS)

# The link emulator keeps its own build rules beside its code.
-include emu/emu.mk

all: $(ALL_BINS)
.DEFAULT_GOAL := all

# --- make fuzz: real libFuzzer binaries (clang only) ---
FUZZ_BUILD := build/fuzzbuild
fuzz:
	$(MAKE) BUILD=$(FUZZ_BUILD) CC=clang SAN=1 CFLAGS="-O1 -g -fsanitize=fuzzer-no-link" $(FUZZ_BUILD)/libtincan.a
	@mkdir -p build/fuzz
	for f in $(FUZZ_SRC); do n=$$(basename $$f .c); \
	  clang $(CPPFLAGS) -I$(FUZZ_BUILD)/gen $(PKG_CFLAGS) -O1 -g -fsanitize=fuzzer,address,undefined \
	    -o build/fuzz/$$n $$f $(FUZZ_BUILD)/libtincan.a $(LDLIBS) || exit 1; done

# --- make check: sanitized unit tests and replays, then integration tests on the sanitized binaries ---
SAN_BUILD := build/san
check:
	$(MAKE) all
	$(MAKE) SAN=1 BUILD=$(SAN_BUILD) all unit-tests replays
	tests/run.sh $(SAN_BUILD) $(BUILD)

unit-tests: $(UNIT_TESTS)
replays: $(REPLAY_BINS)

clean:
	rm -rf build

# --- make install / uninstall (GNU conventions; the Debian package installs with PREFIX=/usr) ---
PREFIX      ?= /usr/local
BINDIR      ?= $(PREFIX)/bin
DATADIR     ?= $(PREFIX)/share
MANDIR      ?= $(DATADIR)/man
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
INSTALL     ?= install
# Every file install writes, and nothing else: uninstall removes these (the tests compare).
INSTALLED   := $(BINDIR)/tincan $(BINDIR)/tincan-link $(MANDIR)/man1/tincan.1 $(MANDIR)/man1/tincan-link.1 \
               $(BASHCOMPDIR)/tincan $(BASHCOMPDIR)/tincan-link
install: $(BUILD)/tincan $(BUILD)/tincan-link
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR)
	$(INSTALL) -m 0755 $(BUILD)/tincan $(BUILD)/tincan-link $(DESTDIR)$(BINDIR)/
	$(INSTALL) -m 0644 man/tincan.1 man/tincan-link.1 $(DESTDIR)$(MANDIR)/man1/
	$(INSTALL) -m 0644 completion/tincan.bash $(DESTDIR)$(BASHCOMPDIR)/tincan
	$(INSTALL) -m 0644 completion/tincan.bash $(DESTDIR)$(BASHCOMPDIR)/tincan-link
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
# The installed list, for the tests: `make -s print-installed PREFIX=...`.
print-installed:
	@printf '%s\n' $(INSTALLED)

.PHONY: all check fuzz clean unit-tests replays install uninstall print-installed
-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
