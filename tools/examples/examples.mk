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

# Fortran examples, when gfortran is there (libdao/fortran/fortran.mk).
ifneq ($(HAVE_FC),)
EXAMPLE_F90_SRCS := $(sort $(wildcard tools/examples/*.f90))
EXAMPLE_F90_BINS := $(patsubst tools/examples/%.f90,$(BUILD)/bin/dao-example-%,$(EXAMPLE_F90_SRCS))

$(BUILD)/bin/dao-example-%: tools/examples/%.f90 $(LIBDAO_FORTRAN_A) $(LIBDAO_SO)
	@mkdir -p $(@D) $(FORTRAN_DIR)/examples
	$(DAO_FC) $(DAO_FFLAGS) -I$(FORTRAN_DIR) -J$(FORTRAN_DIR)/examples -o $@ $< \
		$(LIBDAO_FORTRAN_A) -L$(BUILD)/lib -ldao -Wl,-rpath,'$$ORIGIN/../lib'

all: $(EXAMPLE_F90_BINS)
endif

# Runs the examples, compares the documented copy with the source, and
# installs into a scratch DESTDIR to build an example with pkg-config.
.PHONY: check-examples
check-examples: all
	BUILD=$(BUILD) MAKE="$(MAKE)" DAO_FC="$(HAVE_FC)" prove -f --exec bash tools/examples/check.t

CHECK_EXTRA += check-examples
