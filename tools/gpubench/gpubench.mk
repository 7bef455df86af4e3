# tools/gpubench/gpubench.mk - `make bench-gpu` (issue 6), for a session
# with a lent GPU: dao-gpubw measures pinned copy bandwidth, bench-gpu.sh
# runs dao-cholesky at 1x, 2x and 4x its device budget on both CUDA
# backends, a baseline and plain UVM, with daosim's modeled time of each
# libdao run beside it, and prints the table to record in
# Documentation/cuda.md (also written to $(BUILD)/bench-gpu.md).

.PHONY: bench-gpu

ifeq ($(HAVE_CUDA),1)
GPUBW_BIN := $(BUILD)/bin/dao-gpubw

$(GPUBW_BIN): tools/gpubench/gpubw.c
	@mkdir -p $(@D)
	$(CC) $(call cflags,rel) $(CUDA_CFLAGS) -MMD -MP -o $@ $< $(call ldflags,rel)

all: $(GPUBW_BIN)

bench-gpu: $(GPUBW_BIN) $(CHOL_BIN) $(DAOSIM_BIN)
	DAO_GPUBW=$(GPUBW_BIN) DAO_CHOLESKY=$(CHOL_BIN) DAO_DAOSIM=$(DAOSIM_BIN) DAO_BENCH_OUT=$(BUILD)/bench-gpu.md \
		bash tools/gpubench/bench-gpu.sh || { rc=$$?; test $$rc = 77 && \
		echo "bench-gpu: SKIP: no usable CUDA device"; test $$rc = 77; }
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
