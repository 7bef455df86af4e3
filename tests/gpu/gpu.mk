# tests/gpu/gpu.mk - `make check-gpu`: the tests that need a CUDA device
# (tests/gpu/test_*.c), for a session with a lent GPU. They are built by
# `make` whenever libdao is built with CUDA (libdao/cuda.mk), so CI keeps
# them compiling; without a usable device each one prints a TAP skip.

.PHONY: check-gpu

ifeq ($(HAVE_CUDA),1)
GPU_TEST_SRCS := $(sort $(wildcard tests/gpu/test_*.c))
GPU_TESTS     := $(patsubst tests/gpu/%.c,$(BUILD)/rel/tests-gpu/%,$(GPU_TEST_SRCS))

$(BUILD)/rel/tests-gpu/%: tests/gpu/%.c $(BUILD)/rel/lib/libdao.a tests/tap.h
	@mkdir -p $(@D)
	$(CC) $(call cflags,rel) $(CUDA_CFLAGS) -Itests -Itests/gpu -MMD -MP -o $@ $< \
		$(BUILD)/rel/lib/libdao.a $(call ldflags,rel) -lm

all: $(GPU_TESTS)

check-gpu: $(GPU_TESTS)
	prove -f $(GPU_TESTS)
else
check-gpu:
	@echo "check-gpu: SKIP: libdao is built without CUDA (no toolkit found by libdao/cuda.mk)"
endif
