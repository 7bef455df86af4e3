# tools/gpubench/gpubench.mk - `make bench-gpu` (issue 6), for a session
# with a lent GPU: dao-gpubw measures pinned copy bandwidth, bench-gpu.sh
# runs dao-cholesky at 1x, 2x and 4x its device budget on both CUDA
# backends, a baseline and plain UVM, with daosim's modeled time of each
# libdao run beside it, and prints the table to record in
# Documentation/cuda.md (also written to $(BUILD)/bench-gpu.md).

.PHONY: bench-gpu

ifeq ($(HAVE_CUDA),1)
GPUBW_BIN := $(BUILD)/bin/dao-gpubw
GPUINFO_BIN := $(BUILD)/bin/dao-gpuinfo
# dao-gpurate times dao-cholesky's own GPU tile kernels: it links them.
GPURATE_BIN := $(BUILD)/bin/dao-gpurate
GPURATE_CHOL_OBJS := $(patsubst %,$(BUILD)/rel/obj/tools/cholesky/%.o,tile_kernels_gpu tile_kernels matrix)

$(GPUBW_BIN) $(GPUINFO_BIN): $(BUILD)/bin/dao-gpu%: tools/gpubench/gpu%.c
	@mkdir -p $(@D)
	$(CC) $(call cflags,rel) $(CUDA_CFLAGS) -MMD -MP -o $@ $< $(call ldflags,rel)

$(GPURATE_BIN): tools/gpubench/gpurate.c $(GPURATE_CHOL_OBJS)
	@mkdir -p $(@D)
	$(CC) $(call cflags,rel) $(CHOL_CFLAGS) -Itools/cholesky -MMD -MP -o $@ $< \
		$(GPURATE_CHOL_OBJS) $(call ldflags,rel) $(CHOL_LIBS)

all: $(GPUBW_BIN) $(GPUINFO_BIN) $(GPURATE_BIN)
GPU_BUNDLE_BINS += $(GPUBW_BIN) $(GPUINFO_BIN) $(GPURATE_BIN)

bench-gpu: $(GPUBW_BIN) $(CHOL_BIN) $(DAOSIM_BIN)
	DAO_GPUBW=$(GPUBW_BIN) DAO_CHOLESKY=$(CHOL_BIN) DAO_DAOSIM=$(DAOSIM_BIN) DAO_BENCH_OUT=$(BUILD)/bench-gpu.md \
		bash tools/gpubench/bench-gpu.sh || { rc=$$?; test $$rc = 77 && \
		echo "bench-gpu: SKIP: no usable CUDA device"; test $$rc = 77; }
else
bench-gpu:
	@echo "bench-gpu: SKIP: libdao is built without CUDA (no toolkit found by libdao/cuda.mk)"
endif
