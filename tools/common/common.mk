# What the tools share (tools/common/): a per-variant libdaotools.a that
# daoctl, daosim and their unit tests link. It includes no tool's header:
# the tools depend on it, never the other way.

TOOLS_COMMON_SRCS := $(sort $(wildcard tools/common/*.c))

define tools_common_variant
$(BUILD)/$(1)/obj/tools/common/%.o: tools/common/%.c
	@mkdir -p $$(@D)
	$$(CC) $$(call cflags,$(1)) -MMD -MP -c $$< -o $$@

$(BUILD)/$(1)/lib/libdaotools.a: $(patsubst tools/common/%.c,$(BUILD)/$(1)/obj/tools/common/%.o,$(TOOLS_COMMON_SRCS))
	@mkdir -p $$(@D)
	rm -f $$@
	$$(AR) rcs $$@ $$^
endef
$(foreach v,rel asan,$(eval $(call tools_common_variant,$(v))))

TOOLS_COMMON_A := $(BUILD)/rel/lib/libdaotools.a
TOOLS_COMMON_CFLAGS := -Itools/common

# test_json_string links the variant's archive (found from the test's own
# path, build/VARIANT/tests/NAME).
tools_common_variant_dir = $(patsubst %/tests/,%,$(dir $@))
LIBS_test_json_string = $(tools_common_variant_dir)/lib/libdaotools.a
$(foreach v,rel asan,$(eval $(BUILD)/$(v)/tests/test_json_string: $(BUILD)/$(v)/lib/libdaotools.a))
