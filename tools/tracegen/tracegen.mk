# dao-tracegen: dao-trace v1 files for families of jobs (tools/tracegen/,
# Documentation/daosim.md). Everything but main.c also goes into a
# per-variant libtracegen.a that test_tracegen links.

TRACEGEN_SRCS := $(sort $(wildcard tools/tracegen/*.c))
TRACEGEN_LIB_SRCS := $(filter-out tools/tracegen/main.c,$(TRACEGEN_SRCS))
TRACEGEN_BIN  := $(BUILD)/bin/dao-tracegen

define tracegen_variant
$(BUILD)/$(1)/obj/tools/tracegen/%.o: tools/tracegen/%.c
	@mkdir -p $$(@D)
	$$(CC) $$(call cflags,$(1)) -Itools/tracegen -MMD -MP -c $$< -o $$@

$(BUILD)/$(1)/lib/libtracegen.a: $(patsubst tools/tracegen/%.c,$(BUILD)/$(1)/obj/tools/tracegen/%.o,$(TRACEGEN_LIB_SRCS))
	@mkdir -p $$(@D)
	rm -f $$@
	$$(AR) rcs $$@ $$^
endef
$(foreach v,rel asan,$(eval $(call tracegen_variant,$(v))))

$(TRACEGEN_BIN): $(BUILD)/rel/obj/tools/tracegen/main.o $(BUILD)/rel/lib/libtracegen.a
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(call ldflags,rel)

all: $(TRACEGEN_BIN)

# test_tracegen links the variant's libtracegen.a (found from the test's own
# path, build/VARIANT/tests/NAME) and reads the traces with libdao's reader.
tracegen_variant_dir = $(patsubst %/tests/,%,$(dir $@))
LIBS_test_tracegen = $(tracegen_variant_dir)/lib/libtracegen.a
$(foreach v,rel asan,$(eval $(BUILD)/$(v)/tests/test_tracegen: $(BUILD)/$(v)/lib/libtracegen.a))

.PHONY: check-tracegen install-tracegen
check-tracegen: $(TRACEGEN_BIN) $(DAOSIM_BIN)
	DAO_TRACEGEN=$(TRACEGEN_BIN) DAOSIM=$(DAOSIM_BIN) TRACES=$(abspath tests/traces) \
		prove -f --exec bash tools/tracegen/check.t

CHECK_EXTRA += check-tracegen

install: install-tracegen
install-tracegen: $(TRACEGEN_BIN)
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(TRACEGEN_BIN) $(DESTDIR)$(PREFIX)/bin/dao-tracegen
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0644 Documentation/dao-tracegen.1 $(DESTDIR)$(PREFIX)/share/man/man1/dao-tracegen.1
