# tests/cudamodel/cudamodel.mk - the CUDA runtime model: a libcudart.so.13
# that runs on the CPU, for `make check` without a GPU (Documentation/cuda.md).
# Built for each variant (its sanitizer must match the programs that load it)
# into $(BUILD)/<variant>/cudamodel/; selected by LD_LIBRARY_PATH, never
# installed.

ifeq ($(HAVE_CUDA),1)
# The models of cuBLAS and cuSOLVER (the calls dao-cholesky's tile kernels
# make) are libraries of their own beside it, with the real sonames and
# version nodes; they reach the runtime model through cudamodel_lib.h.
# The runtime model's sources are tests/cudamodel/runtime/, one folder per
# layer (tests/cudamodel/layers; the map is runtime/api/model.h); they
# include each other from there, and the two headers of tests/cudamodel/
# that tests and the library models see too.
CUDAMODEL_SRCS := $(sort $(wildcard tests/cudamodel/runtime/*/*.c))
CUDAMODEL_HDRS := $(wildcard tests/cudamodel/runtime/*/*.h) tests/cudamodel/cudamodel.h \
                  tests/cudamodel/cudamodel_lib.h
CUDAMODEL_CFLAGS := -Itests/cudamodel/runtime -Itests/cudamodel
cudamodel_so = $(BUILD)/$(1)/cudamodel/libcudart.so.13
cudamodel_libs = $(BUILD)/$(1)/cudamodel/libcublas.so.13 $(BUILD)/$(1)/cudamodel/libcusolver.so.12

define cudamodel_variant
$(call cudamodel_so,$(1)): $(CUDAMODEL_SRCS) $(CUDAMODEL_HDRS) tests/cudamodel/libcudart.map
	@mkdir -p $$(@D)
	$$(CC) $$(call cflags,$(1)) $(CUDA_CFLAGS) $(CUDAMODEL_CFLAGS) -shared -Wl,-soname,libcudart.so.13 \
		-Wl,--version-script=tests/cudamodel/libcudart.map -o $$@ $(CUDAMODEL_SRCS) \
		$(SAN_$(1)) -pthread -ldl

endef
$(foreach v,rel asan tsan,$(eval $(call cudamodel_variant,$(v))))

# $(call cudamodel_lib,VARIANT,NAME,SONAME,LIBS): the model of CUDA library
# NAME (tests/cudamodel/NAME.c, its version node in libNAME.map).
define cudamodel_lib
$(BUILD)/$(1)/cudamodel/$(3): tests/cudamodel/$(2).c tests/cudamodel/cudamodel_lib.h tests/cudamodel/lib$(2).map $(call cudamodel_so,$(1))
	$$(CC) $$(call cflags,$(1)) $(CUDA_CFLAGS) -shared -Wl,-soname,$(3) \
		-Wl,--version-script=tests/cudamodel/lib$(2).map -o $$@ $$< \
		-L$(BUILD)/$(1)/cudamodel -l:libcudart.so.13 -Wl,-rpath,'$$$$ORIGIN' $(4) \
		$(SAN_$(1)) -pthread
endef
$(foreach v,rel asan tsan,$(eval $(call cudamodel_lib,$(v),cublas,libcublas.so.13,-lopenblas)))
$(foreach v,rel asan tsan,$(eval $(call cudamodel_lib,$(v),cusolver,libcusolver.so.12,-llapacke)))
endif

# The model's own tests, linked against the real runtime's name and run
# against the model.
ifeq ($(HAVE_CUDA),1)
$(BUILD)/%/tests-cudamodel/test_cudamodel: tests/cudamodel/test_cudamodel.c tests/cudamodel/cudamodel.h tests/cudamodel/scenario.h tests/tap.h $(BUILD)/%/cudamodel/libcudart.so.13
	@mkdir -p $(@D)
	$(CC) $(call cflags,$*) $(CUDA_CFLAGS) -Itests -MMD -MP -o $@ $< \
		-L$(BUILD)/$*/cudamodel -l:libcudart.so.13 $(SAN_$*) -pthread

# The cuBLAS and cuSOLVER models' own tests, against all three.
$(BUILD)/%/tests-cudamodel/test_cudamodel_libs: tests/cudamodel/test_cudamodel_libs.c tests/cudamodel/cudamodel.h tests/cudamodel/scenario.h tests/tap.h $(BUILD)/%/cudamodel/libcudart.so.13 $(BUILD)/%/cudamodel/libcublas.so.13 $(BUILD)/%/cudamodel/libcusolver.so.12
	@mkdir -p $(@D)
	$(CC) $(call cflags,$*) $(CUDA_CFLAGS) -Itests -MMD -MP -o $@ $< \
		-L$(BUILD)/$*/cudamodel -l:libcudart.so.13 -l:libcublas.so.13 -l:libcusolver.so.12 \
		-llapacke -lopenblas $(SAN_$*) -pthread
endif

# For the experiments' tests (um_experiments.t), in each variant: a small
# cuda-managed job that makes every kind of residency request, and
# dao-umprobe (rel's is the product's, tools/gpubench/gpubench.mk).
ifeq ($(HAVE_CUDA),1)
$(BUILD)/%/tests-cudamodel/um_job: tests/cudamodel/um_job.c $(BUILD)/%/lib/libdao.a
	@mkdir -p $(@D)
	$(CC) $(call cflags,$*) $(CUDA_CFLAGS) -MMD -MP -o $@ $< $(BUILD)/$*/lib/libdao.a \
		$(call ldflags,$*) -lm

$(BUILD)/%/bin/dao-umprobe: tools/gpubench/umprobe.c tools/gpubench/cupti_um.h
	@mkdir -p $(@D)
	$(CC) $(call cflags,$*) $(CUDA_CFLAGS) -MMD -MP -o $@ $< $(call ldflags,$*) -ldl
CUDAMODEL_UMPROBE_rel := $(UMPROBE_BIN)
CUDAMODEL_UMPROBE_asan := $(BUILD)/asan/bin/dao-umprobe
CUDAMODEL_UMPROBE_tsan := $(BUILD)/tsan/bin/dao-umprobe
# The collector is preloaded in rel only: a sanitizer's runtime must come
# first among a program's libraries.
CUDAMODEL_UMTRACE_rel := $(UMTRACE_SO)
endif

# The tools run against the model in each variant (rel is the product's
# build): dao-cholesky, whose GPU tile kernels run on both CUDA backends
# against the model and its cuBLAS and cuSOLVER (cholesky.t), and dao-bench,
# whose copy figures do (bench_copy.t).
# $(call cudamodel_tool,VARIANT,DIR,NAME,SRCS,CFLAGS,LIBS): tools/DIR's NAME.
ifeq ($(HAVE_CUDA),1)
CUDAMODEL_CHOL_rel := $(CHOL_BIN)
CUDAMODEL_BENCH_rel := $(BENCH_BIN)
define cudamodel_tool
$(BUILD)/$(1)/obj/tools/$(2)/%.o: tools/$(2)/%.c
	@mkdir -p $$(@D)
	$$(CC) $$(call cflags,$(1)) $(5) -MMD -MP -c $$< -o $$@

$(BUILD)/$(1)/bin/$(3): $(patsubst tools/$(2)/%.c,$(BUILD)/$(1)/obj/tools/$(2)/%.o,$(4)) $(BUILD)/$(1)/lib/libdao.a
	@mkdir -p $$(@D)
	$$(CC) -o $$@ $$(filter %.o,$$^) $(BUILD)/$(1)/lib/libdao.a $$(call ldflags,$(1)) $(6)
endef
$(foreach v,asan tsan,$(eval $(call cudamodel_tool,$(v),cholesky,dao-cholesky,$(CHOL_SRCS),$(CHOL_CFLAGS),$(CHOL_LIBS))) \
	$(eval CUDAMODEL_CHOL_$(v) := $(BUILD)/$(v)/bin/dao-cholesky))
$(foreach v,asan tsan,$(eval $(call cudamodel_tool,$(v),bench,dao-bench,$(BENCH_SRCS),,-lm)) \
	$(eval CUDAMODEL_BENCH_$(v) := $(BUILD)/$(v)/bin/dao-bench))
endif

# `make check-cudamodel` (part of `make check`): the model's own tests, then
# the GPU tests (tests/gpu/) on both CUDA backends against the model, and
# the fallback test against a model without a device and without a driver;
# the property test again where pinning is refused (pageable staging), the
# driver cannot discard (dead data migrates) and no query says done (only
# waits order the host); dao-bench copy on both
# CUDA backends (tests/cudamodel/bench_copy.t); each plain, under
# ASan+UBSan and under TSan. The GPU tests run scaled
# down: the model moves every byte with the CPU.
.PHONY: check-cudamodel
ifeq ($(HAVE_CUDA),1)
CUDAMODEL_GPU_ENV := DAO_TEST_GPU_MIN_FREE=268435456 DAO_TEST_GPU_BUF_MIB=4 DAO_TEST_PROGRAMS=2
# OpenBLAS's worker threads hand work to each other by spinning on flags
# ThreadSanitizer does not see (the library is not instrumented), so it
# reports races inside OpenBLAS between them wherever a call runs on more
# than one thread (dao-cholesky's residual check on Intel's Cooper Lake
# kernels). Under TSan OpenBLAS starts with one thread (through env, for
# the scripts that run their programs with this prefix); the tile kernels
# run with one (--threads) in every build.
CUDAMODEL_RUN_tsan := env OPENBLAS_NUM_THREADS=1 setarch $(shell uname -m) -R

define cudamodel_check
.PHONY: check-cudamodel-$(1)
check-cudamodel-$(1): $(call cudamodel_so,$(1)) $(call cudamodel_libs,$(1)) $(BUILD)/$(1)/tests-cudamodel/test_cudamodel $(BUILD)/$(1)/tests-cudamodel/test_cudamodel_libs $(GPU_TESTS_$(1)) $(BUILD)/$(1)/tests/test_cuda_fallback $(CUDAMODEL_BENCH_$(1)) $(CUDAMODEL_CHOL_$(1)) \
		$(BUILD)/$(1)/tests-cudamodel/um_job $(CUDAMODEL_UMPROBE_$(1)) $(CUDAMODEL_UMTRACE_$(1))
	LD_LIBRARY_PATH=$(BUILD)/$(1)/cudamodel $(CUDAMODEL_GPU_ENV) $(CUDAMODEL_RUN_$(1)) \
		prove -f $(BUILD)/$(1)/tests-cudamodel/test_cudamodel \
		$(BUILD)/$(1)/tests-cudamodel/test_cudamodel_libs $(GPU_TESTS_$(1))
	LD_LIBRARY_PATH=$(BUILD)/$(1)/cudamodel $(CUDAMODEL_GPU_ENV) DAO_TEST_PROGRAMS=1 \
		DAO_CUDAMODEL_PIN=0 DAO_CUDAMODEL_DISCARD=0 DAO_CUDAMODEL_QUERY=0 $(CUDAMODEL_RUN_$(1)) \
		prove -f $(BUILD)/$(1)/tests-gpu/test_gpu_property
	LD_LIBRARY_PATH=$(BUILD)/$(1)/cudamodel DAO_CUDAMODEL_DEVICES=0 $(CUDAMODEL_RUN_$(1)) \
		prove -f $(BUILD)/$(1)/tests/test_cuda_fallback
	LD_LIBRARY_PATH=$(BUILD)/$(1)/cudamodel DAO_CUDAMODEL_DRIVER=0 $(CUDAMODEL_RUN_$(1)) \
		prove -f $(BUILD)/$(1)/tests/test_cuda_fallback
	LD_LIBRARY_PATH=$(BUILD)/$(1)/cudamodel DAO_BENCH=$(CUDAMODEL_BENCH_$(1)) $(CUDAMODEL_RUN_$(1)) \
		prove -f --exec bash tests/cudamodel/bench_copy.t
	LD_LIBRARY_PATH=$(BUILD)/$(1)/cudamodel DAO_CHOLESKY=$(CUDAMODEL_CHOL_$(1)) $(CUDAMODEL_RUN_$(1)) \
		prove -f --exec bash tests/cudamodel/cholesky.t
	LD_LIBRARY_PATH=$(BUILD)/$(1)/cudamodel DAO_BENCH=$(CUDAMODEL_BENCH_$(1)) \
		UM_JOB=$(BUILD)/$(1)/tests-cudamodel/um_job UM_PROBE=$(CUDAMODEL_UMPROBE_$(1)) \
		UM_TRACE_SO=$(abspath $(CUDAMODEL_UMTRACE_$(1))) $(CUDAMODEL_RUN_$(1)) \
		prove -f --exec bash tests/cudamodel/um_experiments.t
check-cudamodel: check-cudamodel-$(1)
endef
$(foreach v,rel asan tsan,$(eval $(call cudamodel_check,$(v))))

check: check-cudamodel
else
check-cudamodel:
	@echo "check-cudamodel: SKIP: libdao is built without CUDA"
endif

# Line coverage of libdao's CUDA backend under the model (gcovr): a build
# of its own in $(BUILD)/cov with --coverage, check-cudamodel-rel there.
.PHONY: coverage-cuda
coverage-cuda:
	rm -rf $(BUILD)/cov
	$(MAKE) BUILD=$(BUILD)/cov CFLAGS=--coverage LDFLAGS=--coverage check-cudamodel-rel
	gcovr -r . --filter 'libdao/src/backend/cuda/' --filter 'libdao/src/mem/chunk_heap' \
		$(BUILD)/cov/rel/obj/libdao/backend/cuda $(BUILD)/cov/rel/obj/libdao/mem

# The same, plus the cuda-explicit job of the VM suite (tests/kmod/
# libdao_cuda_job.c), whose staging is pinned through dao.ko: the one path
# (stage_module) that needs the module. Needs what kcheck needs.
.PHONY: coverage-cuda-vm
coverage-cuda-vm:
	rm -rf $(BUILD)/cov
	$(MAKE) BUILD=$(BUILD)/cov CFLAGS=--coverage LDFLAGS=--coverage check-cudamodel-rel
	$(MAKE) BUILD=$(BUILD)/cov CFLAGS=--coverage LDFLAGS=--coverage kcheck-cuda-gcov
	gcovr -r . --filter 'libdao/src/backend/cuda/' --filter 'libdao/src/mem/chunk_heap' \
		$(BUILD)/cov/rel/obj/libdao/backend/cuda $(BUILD)/cov/rel/obj/libdao/mem
