# torch/torch.mk - the dao PyTorch device (Documentation/torch.md): a C++
# extension, dao_torch._C, and the Python package around it, built for the
# rel and asan variants into $(BUILD)/torch/<variant>/dao_torch/ when a
# Python with PyTorch, PyTorch's C++ headers and Python's headers is found
# (Debian: python3-torch, libtorch-dev, python3-dev); otherwise `make`
# says SKIP and why, like the CUDA backends. The rest of dao stays C: C++
# only here, where PyTorch requires it.
#
# torch/config.py asks the first of TORCH_PYTHONS that imports torch where
# its headers and libraries are; the answer is kept in
# $(BUILD)/torch/config.mk (remove it after installing another PyTorch).

TORCH_PYTHONS ?= python3 /usr/bin/python3
TORCH_CONFIG := $(BUILD)/torch/config.mk

$(TORCH_CONFIG): torch/config.py $(wildcard /usr/lib/python3/dist-packages/torch/version.py)
	@mkdir -p $(@D)
	@echo 'TORCH_SKIP := no Python among $(TORCH_PYTHONS)' > $@.tmp
	@for p in $(TORCH_PYTHONS); do \
		command -v $$p >/dev/null 2>&1 || continue; \
		$$p torch/config.py > $@.try 2>/dev/null || continue; \
		mv $@.try $@.tmp; \
		grep -q '^TORCH_SKIP := $$' $@.tmp && break; \
	done; rm -f $@.try; mv $@.tmp $@

-include $(TORCH_CONFIG)

.PHONY: torch check-torch check-torch-asan bench-torch predict-torch
all: torch

ifeq ($(TORCH_SKIP),)

TORCH_SRCS := $(sort $(wildcard torch/csrc/*.cpp))
ifeq ($(TORCH_CUDA),)
TORCH_SRCS := $(filter-out torch/csrc/cuda.cpp,$(TORCH_SRCS))
TORCH_CUDA_FLAGS :=
TORCH_CUDA_LIBS :=
else
# A CUDA PyTorch: kernels can run on the CUDA backends' streams.
TORCH_CUDA_FLAGS := -DDAO_TORCH_CUDA -isystem $(CUDA_HOME)/include
TORCH_CUDA_LIBS := -lc10_cuda -ltorch_cuda
endif

# -Werror as in the rest of dao; TORCH_WERROR= builds against a PyTorch
# whose headers this was never compiled with (the GPU machine's).
TORCH_WERROR ?= -Werror
TORCH_CXXFLAGS := -std=c++17 -g -fPIC -fvisibility=hidden -Wall -Wextra $(TORCH_WERROR) \
	-Wno-unused-parameter -D_GLIBCXX_USE_CXX11_ABI=$(TORCH_CXX11_ABI) -Ilibdao/include \
	-isystem $(TORCH_INCLUDE) -isystem $(TORCH_INCLUDE)/torch/csrc/api/include \
	-isystem $(TORCH_PY_INCLUDE) $(TORCH_CUDA_FLAGS)
TORCH_OPT_rel := -O2
TORCH_OPT_asan := -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
TORCH_LIBS := -L$(TORCH_LIBDIR) -Wl,-rpath,$(TORCH_LIBDIR) $(TORCH_CUDA_LIBS) -ltorch -ltorch_cpu -lc10

# libdao: the shared library for the product (found next to the build's
# lib/ at run time), the instrumented archive for ASan.
TORCH_LIBDAO_rel ?= $(LIBDAO_SO)
TORCH_LIBDAO_LINK_rel ?= $(LIBDAO_SO) -Wl,-rpath,'$$$$ORIGIN/../../../lib'
TORCH_LIBDAO_asan := $(BUILD)/asan/lib/libdao.a
TORCH_LIBDAO_LINK_asan := $(BUILD)/asan/lib/libdao.a $(LDFLAGS) -lm

TORCH_PY_SRCS := $(wildcard torch/dao_torch/*.py)
torch_objs = $(patsubst torch/csrc/%.cpp,$(BUILD)/torch/$(1)/obj/%.o,$(TORCH_SRCS))
torch_module = $(BUILD)/torch/$(1)/dao_torch/_C$(TORCH_EXT_SUFFIX)
torch_py = $(patsubst torch/dao_torch/%,$(BUILD)/torch/$(1)/dao_torch/%,$(TORCH_PY_SRCS))

define torch_variant
$(BUILD)/torch/$(1)/obj/%.o: torch/csrc/%.cpp $(TORCH_CONFIG)
	@mkdir -p $$(@D)
	$(CXX) $(TORCH_CXXFLAGS) $(TORCH_OPT_$(1)) -MMD -MP -c $$< -o $$@

$(call torch_module,$(1)): $(call torch_objs,$(1)) $(TORCH_LIBDAO_$(1))
	@mkdir -p $$(@D)
	$(CXX) -shared $(TORCH_OPT_$(1)) -o $$@ $(call torch_objs,$(1)) $(TORCH_LIBDAO_LINK_$(1)) $(TORCH_LIBS)

$(BUILD)/torch/$(1)/dao_torch/%.py: torch/dao_torch/%.py
	@mkdir -p $$(@D)
	cp $$< $$@

torch-$(1): $(call torch_module,$(1)) $(call torch_py,$(1))
endef
$(foreach v,rel asan,$(eval $(call torch_variant,$(v))))

.PHONY: torch-rel torch-asan
torch: torch-rel

-include $(wildcard $(BUILD)/torch/*/obj/*.d)

# The tests: TAP programs in Python, run by prove. Under ASan the Python
# process preloads the sanitizer runtime (it must come first), and
# libstdc++ after it: Python does not link it, and ASan's interceptor of
# __cxa_throw, set up before libtorch loads it, would find no real one
# (a CHECK failure at the first C++ exception); leak
# detection is off there, since CPython and libtorch keep allocations until
# exit by design: the tests count leaks themselves (dao handles at close,
# storages alive).
TORCH_TESTS := $(sort $(wildcard torch/tests/test_*.py))
TORCH_ASAN_TESTS ?= torch/tests/test_device.py torch/tests/test_models.py torch/tests/test_daoctl.py \
	torch/tests/test_predict.py
TORCH_TEST_ENV = PYTHONPATH=$(BUILD)/torch/$(1) DAOCTL=$(DAOCTL_BIN) DAOSIM=$(DAOSIM_BIN) \
	PYTHONDONTWRITEBYTECODE=1

check-torch: torch-rel $(DAOCTL_BIN) $(DAOSIM_BIN)
	$(call TORCH_TEST_ENV,rel) prove -f --exec $(TORCH_PYTHON) $(TORCH_TESTS)

check-torch-asan: torch-asan
	$(call TORCH_TEST_ENV,asan) ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:halt_on_error=1 \
		LD_PRELOAD="$$($(CXX) -print-file-name=libasan.so) $$($(CXX) -print-file-name=libstdc++.so.6)" \
		prove -f --exec $(TORCH_PYTHON) $(TORCH_ASAN_TESTS)

# Submission cost per operator on the job's thread beside eager PyTorch
# (Documentation/torch.md, Overhead).
bench-torch: torch-rel
	$(call TORCH_TEST_ENV,rel) $(TORCH_PYTHON) torch/bench/overhead.py

# daosim's prediction of a traced run on this machine's measured rates
# against the host backend's time; status 1 beyond the margin
# (Documentation/torch.md, Predict before the run). A timed check: not in
# `make check`, whose test_predict compares the decisions only.
predict-torch: torch-rel $(DAOSIM_BIN)
	$(call TORCH_TEST_ENV,rel) $(TORCH_PYTHON) torch/bench/predict.py

else

torch:
	@echo "torch: SKIP: $(TORCH_SKIP) (the dao PyTorch device is not built)"

check-torch check-torch-asan bench-torch predict-torch:
	@echo "$@: SKIP: $(TORCH_SKIP)"

endif

CHECK_EXTRA += check-torch check-torch-asan

# The GPU machine builds the extension itself against its PyTorch
# (tools/gpubench/torch-evidence.sh, a step of the prepared call): the
# sources travel in the bundle, with libdao.so and its CUDA backends.
GPU_BUNDLE_SCRIPTS += tools/gpubench/torch-evidence.sh
GPU_BUNDLE_SRCS += torch/csrc torch/dao_torch torch/bench torch/config.py libdao/include
GPU_BUNDLE_LIBS += $(LIBDAO_SO)
