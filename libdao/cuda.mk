# libdao/cuda.mk - the CUDA backends (cuda-managed, cuda-explicit), built
# when the CUDA toolkit is found; included from libdao/libdao.mk. They are
# plain C against the CUDA runtime API: no nvcc. Without the toolkit
# libdao builds as before and refuses the CUDA backends at dao_open.
#
# With it: every libdao source sees DAO_HAVE_CUDA, libdao/src/backend/cuda/*.c join
# each variant of libdao, and everything that links libdao links the CUDA
# runtime too (through LDFLAGS, which every link line here uses), with an
# rpath so that no LD_LIBRARY_PATH is needed.

CUDA_HOME ?= /usr/local/cuda

ifneq ($(wildcard $(CUDA_HOME)/include/cuda_runtime.h),)
HAVE_CUDA    := 1
# -isystem: the toolkit's headers are not held to our warnings.
CUDA_CFLAGS  := -isystem $(CUDA_HOME)/include
CUDA_LIBDIR  := $(CUDA_HOME)/lib64
CUDA_LDFLAGS := -L$(CUDA_LIBDIR) -Wl,-rpath,$(CUDA_LIBDIR)

LIBDAO_CUDA_SRCS := $(sort $(wildcard libdao/src/backend/cuda/*.c))
libdao_cuda_objs = $(patsubst libdao/src/backend/cuda/%.c,$(BUILD)/$(1)/obj/libdao/backend/cuda/%.o,$(LIBDAO_CUDA_SRCS))

override CFLAGS  += -DDAO_HAVE_CUDA
# --no-as-needed: some links name libdao.a again after LDFLAGS; the runtime
# must stay loaded for the references pulled in then.
override LDFLAGS += $(CUDA_LDFLAGS) -Wl,--push-state,--no-as-needed -lcudart -Wl,--pop-state

# The archive and shared-library rules link $^: added prerequisites join them.
define libdao_cuda_variant
$(BUILD)/$(1)/obj/libdao/backend/cuda/%.o: libdao/src/backend/cuda/%.c
	@mkdir -p $$(@D)
	$$(CC) $$(call cflags,$(1)) $$(LIBDAO_OBJ_CFLAGS) $(CUDA_CFLAGS) -MMD -MP -c $$< -o $$@

$(BUILD)/$(1)/lib/libdao.a: $(call libdao_cuda_objs,$(1))
endef
$(foreach v,rel asan tsan,$(eval $(call libdao_cuda_variant,$(v))))

$(LIBDAO_SO): $(call libdao_cuda_objs,rel)
else
HAVE_CUDA :=
endif
