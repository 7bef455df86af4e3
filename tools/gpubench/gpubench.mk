# tools/gpubench/gpubench.mk - the GPU measuring programs (dao-gpubw,
# dao-gpuinfo, dao-gpurate) and `make bench-gpu`, for a machine with a GPU
# and this tree: the prepared call (gpu-evidence.sh, issue 23) run in place,
# its files in $(BUILD)/bench-gpu for `make gpu-evidence-report`. Where a
# GPU is lent to a session without the tree, the call travels in the
# bundle instead (bundle.mk; Documentation/cuda.md, "The prepared call").

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

bench-gpu: gpu-bundle $(GPUINFO_BIN)
	@$(GPUINFO_BIN) >/dev/null 2>&1; test $$? != 77 || \
		{ echo "bench-gpu: SKIP: no usable CUDA device"; exit 0; } && \
	OUT=$(BUILD)/bench-gpu bash $(GPU_BUNDLE_DIR)/gpu-evidence.sh && \
	echo "bench-gpu: the call's files are in $(BUILD)/bench-gpu;" \
		"make gpu-evidence-report DIR=$(BUILD)/bench-gpu adds them to $(CUDA_MD)"
else
bench-gpu:
	@echo "bench-gpu: SKIP: libdao is built without CUDA (no toolkit found by libdao/cuda.mk)"
endif

# Issue 23's experiments on cuda-managed (Documentation/cuda.md,
# "Experiments"): libdao-umtrace.so, an LD_PRELOAD collector of CUPTI's
# unified-memory records (CUPTI is opened at run time: nothing links it);
# dao-umprobe, one managed-memory primitive at a time; um-analyze.pl, the
# records against libdao's request log; um-experiments.sh, all of it in one
# unattended run on a GPU machine.
ifeq ($(HAVE_CUDA),1)
UMTRACE_SO  := $(BUILD)/lib/libdao-umtrace.so
UMPROBE_BIN := $(BUILD)/bin/dao-umprobe

$(UMTRACE_SO): tools/gpubench/umtrace.c tools/gpubench/cupti_um.h
	@mkdir -p $(@D)
	$(CC) $(call cflags,rel) $(CUDA_CFLAGS) -fvisibility=hidden -shared -MMD -MP -o $@ $< \
		-ldl -pthread

$(UMPROBE_BIN): tools/gpubench/umprobe.c tools/gpubench/cupti_um.h
	@mkdir -p $(@D)
	$(CC) $(call cflags,rel) $(CUDA_CFLAGS) -MMD -MP -o $@ $< $(call ldflags,rel) -ldl

all: $(UMTRACE_SO) $(UMPROBE_BIN)
endif

# What the GPU machine needs of these, for `make gpu-bundle` (defined with
# tools/gpubench/gpu-evidence.sh; appended to here).
ifeq ($(HAVE_CUDA),1)
GPU_BUNDLE_BINS    += $(UMPROBE_BIN)
GPU_BUNDLE_LIBS    += $(UMTRACE_SO)
endif
GPU_BUNDLE_SCRIPTS += tools/gpubench/um-experiments.sh tools/gpubench/um-analyze.pl
