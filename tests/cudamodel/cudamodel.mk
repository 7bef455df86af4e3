# tests/cudamodel/cudamodel.mk - the CUDA runtime model: a libcudart.so.13
# that runs on the CPU, for `make check` without a GPU (Documentation/cuda.md).
# Built for each variant (its sanitizer must match the programs that load it)
# into $(BUILD)/<variant>/cudamodel/; selected by LD_LIBRARY_PATH, never
# installed.

ifeq ($(HAVE_CUDA),1)
CUDAMODEL_SRCS := $(sort $(filter-out tests/cudamodel/test_%.c,$(wildcard tests/cudamodel/*.c)))
cudamodel_so = $(BUILD)/$(1)/cudamodel/libcudart.so.13

define cudamodel_variant
$(call cudamodel_so,$(1)): $(CUDAMODEL_SRCS) tests/cudamodel/model.h tests/cudamodel/cudamodel.h tests/cudamodel/libcudart.map
	@mkdir -p $$(@D)
	$$(CC) $$(call cflags,$(1)) $(CUDA_CFLAGS) -shared -Wl,-soname,libcudart.so.13 \
		-Wl,--version-script=tests/cudamodel/libcudart.map -o $$@ $(CUDAMODEL_SRCS) \
		$(SAN_$(1)) -pthread -ldl
endef
$(foreach v,rel asan tsan,$(eval $(call cudamodel_variant,$(v))))
endif

# The model's own tests, linked against the real runtime's name and run
# against the model.
ifeq ($(HAVE_CUDA),1)
$(BUILD)/%/tests-cudamodel/test_cudamodel: tests/cudamodel/test_cudamodel.c tests/cudamodel/cudamodel.h tests/tap.h $(BUILD)/%/cudamodel/libcudart.so.13
	@mkdir -p $(@D)
	$(CC) $(call cflags,$*) $(CUDA_CFLAGS) -Itests -MMD -MP -o $@ $< \
		-L$(BUILD)/$*/cudamodel -l:libcudart.so.13 $(SAN_$*) -pthread
endif

# dao-bench for each variant (rel is the product's, tools/bench/bench.mk):
# its copy figures run on both CUDA backends against the model.
ifeq ($(HAVE_CUDA),1)
CUDAMODEL_BENCH_rel := $(BENCH_BIN)
define cudamodel_bench_variant
$(BUILD)/$(1)/obj/tools/bench/%.o: tools/bench/%.c
	@mkdir -p $$(@D)
	$$(CC) $$(call cflags,$(1)) -MMD -MP -c $$< -o $$@

$(BUILD)/$(1)/bin/dao-bench: $(patsubst tools/bench/%.c,$(BUILD)/$(1)/obj/tools/bench/%.o,$(BENCH_SRCS)) $(BUILD)/$(1)/lib/libdao.a
	@mkdir -p $$(@D)
	$$(CC) -o $$@ $$(filter %.o,$$^) $(BUILD)/$(1)/lib/libdao.a $$(call ldflags,$(1)) -lm
CUDAMODEL_BENCH_$(1) := $(BUILD)/$(1)/bin/dao-bench
endef
$(foreach v,asan tsan,$(eval $(call cudamodel_bench_variant,$(v))))
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
CUDAMODEL_RUN_tsan := setarch $(shell uname -m) -R

define cudamodel_check
.PHONY: check-cudamodel-$(1)
check-cudamodel-$(1): $(call cudamodel_so,$(1)) $(BUILD)/$(1)/tests-cudamodel/test_cudamodel $(GPU_TESTS_$(1)) $(BUILD)/$(1)/tests/test_cuda_fallback $(CUDAMODEL_BENCH_$(1))
	LD_LIBRARY_PATH=$(BUILD)/$(1)/cudamodel $(CUDAMODEL_GPU_ENV) $(CUDAMODEL_RUN_$(1)) \
		prove -f $(BUILD)/$(1)/tests-cudamodel/test_cudamodel $(GPU_TESTS_$(1))
	LD_LIBRARY_PATH=$(BUILD)/$(1)/cudamodel $(CUDAMODEL_GPU_ENV) DAO_TEST_PROGRAMS=1 \
		DAO_CUDAMODEL_PIN=0 DAO_CUDAMODEL_DISCARD=0 DAO_CUDAMODEL_QUERY=0 $(CUDAMODEL_RUN_$(1)) \
		prove -f $(BUILD)/$(1)/tests-gpu/test_gpu_property
	LD_LIBRARY_PATH=$(BUILD)/$(1)/cudamodel DAO_CUDAMODEL_DEVICES=0 $(CUDAMODEL_RUN_$(1)) \
		prove -f $(BUILD)/$(1)/tests/test_cuda_fallback
	LD_LIBRARY_PATH=$(BUILD)/$(1)/cudamodel DAO_CUDAMODEL_DRIVER=0 $(CUDAMODEL_RUN_$(1)) \
		prove -f $(BUILD)/$(1)/tests/test_cuda_fallback
	LD_LIBRARY_PATH=$(BUILD)/$(1)/cudamodel DAO_BENCH=$(CUDAMODEL_BENCH_$(1)) $(CUDAMODEL_RUN_$(1)) \
		prove -f --exec bash tests/cudamodel/bench_copy.t
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
	gcovr -r . --filter 'libdao/src/backend/cuda/' $(BUILD)/cov/rel/obj/libdao/backend/cuda

# The same, plus the cuda-explicit job of the VM suite (tests/kmod/
# libdao_cuda_job.c), whose staging is pinned through dao.ko: the one path
# (stage_module) that needs the module. Needs what kcheck needs.
.PHONY: coverage-cuda-vm
coverage-cuda-vm:
	rm -rf $(BUILD)/cov
	$(MAKE) BUILD=$(BUILD)/cov CFLAGS=--coverage LDFLAGS=--coverage check-cudamodel-rel
	$(MAKE) BUILD=$(BUILD)/cov CFLAGS=--coverage LDFLAGS=--coverage kcheck-cuda-gcov
	gcovr -r . --filter 'libdao/src/backend/cuda/' $(BUILD)/cov/rel/obj/libdao/backend/cuda
