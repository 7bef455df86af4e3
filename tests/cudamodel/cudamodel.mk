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
