# tests/gpu/gpu.mk - `make check-gpu`: the tests that need a CUDA device
# (tests/gpu/test_*.c), for a session with a lent GPU. They are built by
# `make` whenever libdao is built with CUDA (libdao/cuda.mk), so CI keeps
# them compiling; without a usable device each one prints a TAP skip.

.PHONY: check-gpu

ifeq ($(HAVE_CUDA),1)
GPU_TEST_SRCS := $(sort $(wildcard tests/gpu/test_*.c))
GPU_TESTS     := $(patsubst tests/gpu/%.c,$(BUILD)/rel/tests-gpu/%,$(GPU_TEST_SRCS))

# Each variant: rel for check-gpu; asan and tsan run against the CUDA
# runtime model (tests/cudamodel/cudamodel.mk).
define gpu_variant
$(BUILD)/$(1)/tests-gpu/%: tests/gpu/%.c $(BUILD)/$(1)/lib/libdao.a tests/tap.h
	@mkdir -p $$(@D)
	$$(CC) $$(call cflags,$(1)) $(CUDA_CFLAGS) -Itests -Itests/gpu -Itools/gpubench -MMD -MP \
		-o $$@ $$< $(BUILD)/$(1)/lib/libdao.a $$(call ldflags,$(1)) -lm -ldl
GPU_TESTS_$(1) := $$(patsubst tests/gpu/%.c,$(BUILD)/$(1)/tests-gpu/%,$$(GPU_TEST_SRCS))
endef
$(foreach v,rel asan tsan,$(eval $(call gpu_variant,$(v))))

all: $(GPU_TESTS)
GPU_BUNDLE_BINS += $(GPU_TESTS)

check-gpu: $(GPU_TESTS)
	prove -f $(GPU_TESTS)
else
check-gpu:
	@echo "check-gpu: SKIP: libdao is built without CUDA (no toolkit found by libdao/cuda.mk)"
endif
