# emu/emu.mk -- build rules of tincan-link (the link emulator), its unit tests and its
# fuzz replays; included by the top Makefile. Never depends on src/: the emulator is its own program.
EMU_SRC     := $(sort $(wildcard emu/*.c))
EMU_LIB_SRC := $(filter-out emu/main.c,$(EMU_SRC))
EMU_OBJ     := $(patsubst emu/%.c,$(BUILD)/obj-emu/%.o,$(EMU_LIB_SRC))
EMU_LIB     := $(BUILD)/libemu.a
EMU_CFLAGS   = $(ALL_CFLAGS) -Iemu
EMU_LDLIBS  := -lm

$(BUILD)/obj-emu/%.o: emu/%.c
	@mkdir -p $(dir $@)
	$(CC) $(EMU_CFLAGS) -MMD -MP -c -o $@ $<
$(EMU_LIB): $(EMU_OBJ)
	@rm -f $@
	ar rcs $@ $^
$(BUILD)/tincan-link: $(BUILD)/obj-emu/main.o $(EMU_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(EMU_LDLIBS)
ALL_BINS += $(BUILD)/tincan-link

# Unit tests tests/unit/test_emu_*.c link the emulator's archive, not libtincan.a: a static
# pattern rule wins over the top Makefile's generic $(BUILD)/tests/% rule.
EMU_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_emu_*.c))
$(EMU_TESTS): $(BUILD)/tests/test_emu_%: tests/unit/test_emu_%.c $(EMU_LIB) tests/test.h tests/unit/emu_mac_log.h
	@mkdir -p $(dir $@)
	$(CC) $(EMU_CFLAGS) -Itests $(LDFLAGS) -o $@ $< $(EMU_LIB) $(EMU_LDLIBS)

# Fuzz targets tests/fuzz/fuzz_emu_*.c #include the emu sources they test, so they link on
# their own: here (corpus replay) and in the top Makefile's `make fuzz` loop alike.
EMU_FUZZ    := $(wildcard tests/fuzz/fuzz_emu_*.c)
EMU_REPLAYS := $(patsubst tests/fuzz/%.c,$(BUILD)/replay/%,$(EMU_FUZZ))
$(EMU_REPLAYS): $(BUILD)/replay/fuzz_emu_%: tests/fuzz/fuzz_emu_%.c tests/fuzz/replay_main.c $(EMU_LIB_SRC) $(wildcard emu/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(EMU_CFLAGS) $(LDFLAGS) -o $@ $< tests/fuzz/replay_main.c $(EMU_LDLIBS)
REPLAY_BINS += $(filter-out $(REPLAY_BINS),$(EMU_REPLAYS))

# Only the emulator: `make emu` builds the program and its tests even while src/ does not build.
emu: $(BUILD)/tincan-link $(EMU_TESTS) $(EMU_REPLAYS)
.PHONY: emu

-include $(wildcard $(BUILD)/obj-emu/*.d)
