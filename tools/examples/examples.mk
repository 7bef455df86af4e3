# Example programs from Documentation/ (tools/examples/): built against the
# shared library as a user would link them, and run by `make check`, so the
# documentation's code cannot rot.

EXAMPLE_SRCS := $(sort $(wildcard tools/examples/*.c))
EXAMPLE_BINS := $(patsubst tools/examples/%.c,$(BUILD)/bin/dao-example-%,$(EXAMPLE_SRCS))

# $ORIGIN: the binaries find build/lib/libdao.so wherever the tree is.
$(BUILD)/bin/dao-example-%: tools/examples/%.c $(LIBDAO_SO)
	@mkdir -p $(@D)
	$(CC) $(call cflags,rel) -o $@ $< -L$(BUILD)/lib -ldao -Wl,-rpath,'$$ORIGIN/../lib' \
		$(call ldflags,rel)

all: $(EXAMPLE_BINS)

# Runs the examples, compares the documented copy with the source, and
# installs into a scratch DESTDIR to build an example with pkg-config.
.PHONY: check-examples
check-examples: all
	BUILD=$(BUILD) MAKE="$(MAKE)" prove -f --exec bash tools/examples/check.t

CHECK_EXTRA += check-examples
