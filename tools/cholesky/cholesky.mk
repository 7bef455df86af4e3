# dao-cholesky: the out-of-core tiled Cholesky job (tools/cholesky/).
# Tile kernels come from Debian's LAPACKE and OpenBLAS, and on the CUDA
# backends from cuSOLVER and cuBLAS.

CHOL_SRCS := $(sort $(filter-out tools/cholesky/test_%.c,$(wildcard tools/cholesky/*.c)))
CHOL_OBJS := $(patsubst tools/cholesky/%.c,$(BUILD)/rel/obj/tools/cholesky/%.o,$(CHOL_SRCS))
CHOL_BIN  := $(BUILD)/bin/dao-cholesky
CHOL_LIBS := -llapacke -lopenblas -lm
# With CUDA (libdao/cuda.mk) the tile kernels can also run on the GPU.
ifeq ($(HAVE_CUDA),1)
CHOL_CFLAGS := $(CUDA_CFLAGS)
CHOL_LIBS   += -lcusolver -lcublas
endif

$(BUILD)/rel/obj/tools/cholesky/%.o: tools/cholesky/%.c
	@mkdir -p $(@D)
	$(CC) $(call cflags,rel) $(CHOL_CFLAGS) -MMD -MP -c $< -o $@

$(CHOL_BIN): $(CHOL_OBJS) $(LIBDAO_A)
	@mkdir -p $(@D)
	$(CC) -o $@ $(CHOL_OBJS) $(LIBDAO_A) $(call ldflags,rel) $(CHOL_LIBS)

all: $(CHOL_BIN)
GPU_BUNDLE_BINS += $(CHOL_BIN)

# The checks of a factor (matrix.c) on their own: the sampled residual
# against the full one, the factor hash.
CHOL_TEST_MATRIX := $(BUILD)/rel/tests-cholesky/test_matrix
$(CHOL_TEST_MATRIX): tools/cholesky/test_matrix.c $(BUILD)/rel/obj/tools/cholesky/matrix.o tests/tap.h
	@mkdir -p $(@D)
	$(CC) $(call cflags,rel) -Itests -Itools/cholesky -MMD -MP -o $@ $< \
		$(BUILD)/rel/obj/tools/cholesky/matrix.o $(call ldflags,rel) -llapacke -lopenblas -lm

# End-to-end checks of the tool: results at tight budgets, refusals.
.PHONY: check-cholesky install-cholesky
check-cholesky: $(CHOL_BIN) $(CHOL_TEST_MATRIX)
	prove -f $(CHOL_TEST_MATRIX)
	DAO_CHOLESKY=$(CHOL_BIN) prove -f --exec bash tools/cholesky/check.t

CHECK_EXTRA += check-cholesky

install: install-cholesky
install-cholesky: $(CHOL_BIN)
	install -d $(DESTDIR)$(PREFIX)/bin
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 $(CHOL_BIN) $(DESTDIR)$(PREFIX)/bin/dao-cholesky
	install -m 0644 Documentation/dao-cholesky.1 $(DESTDIR)$(PREFIX)/share/man/man1/dao-cholesky.1
