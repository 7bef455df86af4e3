# tests/faults/faults.mk - every failure point of libdao in turn (issue 26):
# faults.t counts the calls to the world that a few representative jobs
# make (libdao's through DAO_FAULT, the CUDA runtime's through the model's
# DAO_CUDAMODEL_FAIL), then runs each job once per point with that point
# failing (Documentation/libdao.md, "Faults injected").
#
# `make check` (check-faults-rel, -asan; -tsan a sample) tries at most
# FAULT_MAX points of each kind per job, spread evenly; `make
# check-faults-full` tries every one, in each variant.

# The torch device's job (torch/tests/fault_torch.py), plain build only,
# where the device is built; FAULT_MAX_TORCH points of each kind, since
# every run starts Python and PyTorch (about 2 s).
ifeq ($(TORCH_SKIP)$(if $(TORCH_PYTHON),,none),)
FAULT_TORCH_rel := env PYTHONPATH=$(BUILD)/torch/rel PYTHONDONTWRITEBYTECODE=1 $(TORCH_PYTHON) \
	torch/tests/fault_torch.py
FAULT_TORCH_DEP_rel := torch-rel
endif
FAULT_MAX_TORCH ?= 3

ifeq ($(HAVE_CUDA),1)
define faults_variant
$(BUILD)/$(1)/tests-faults/fault_job: tests/faults/fault_job.c tests/gpu/program.h tests/gpu/gpu_common.h $(BUILD)/$(1)/lib/libdao.a tests/tap.h
	@mkdir -p $$(@D)
	$$(CC) $$(call cflags,$(1)) $(CUDA_CFLAGS) -Itests -Itests/gpu -MMD -MP \
		-o $$@ $$< $(BUILD)/$(1)/lib/libdao.a $$(call ldflags,$(1)) -lm -ldl

$(BUILD)/$(1)/tests-faults/fault_property: tests/faults/fault_property.c tests/unit/random_program.h $(BUILD)/$(1)/lib/libdao.a tests/tap.h
	@mkdir -p $$(@D)
	$$(CC) $$(call cflags,$(1)) -Itests -Itests/unit -MMD -MP \
		-o $$@ $$< $(BUILD)/$(1)/lib/libdao.a $$(call ldflags,$(1)) -lm -ldl

.PHONY: check-faults-$(1)
check-faults-$(1): $(BUILD)/$(1)/tests-faults/fault_job $(BUILD)/$(1)/tests-faults/fault_property $(call cudamodel_so,$(1)) $(call cudamodel_libs,$(1)) $(CUDAMODEL_CHOL_$(1)) $(if $(filter rel,$(1)),$(EXAMPLE_F90_BINS)) $(FAULT_TORCH_DEP_$(1))
	FAULT_JOB=$(BUILD)/$(1)/tests-faults/fault_job \
		FAULT_PROPERTY=$(BUILD)/$(1)/tests-faults/fault_property FAULT_MODEL=$(BUILD)/$(1)/cudamodel \
		FAULT_CHOL=$(CUDAMODEL_CHOL_$(1)) \
		FAULT_F90=$(if $(filter rel,$(1)),$(filter %/dao-example-matmul,$(EXAMPLE_F90_BINS))) \
		FAULT_TORCH="$(FAULT_TORCH_$(1))" FAULT_MAX_TORCH=$$(FAULT_MAX_TORCH) \
		FAULT_MAX=$$(or $$(FAULT_MAX),$(FAULT_MAX_$(1))) FAULT_MAX_CUDA=$$(FAULT_MAX_CUDA) FAULT_RUN="$(CUDAMODEL_RUN_$(1))" \
		FAULT_JOBS_LIST="$(FAULT_JOBS_$(1))" \
		prove -f --exec bash tests/faults/faults.t
endef
# Points per kind and job in `make check` (on 2 cores about 30 s plain,
# 50 s under ASan, 15 s under TSan): a spread sample of each kind on
# every job, under TSan the host jobs only (a TSan process takes a
# second to start).
FAULT_MAX_rel := 12
FAULT_MAX_asan := 6
FAULT_MAX_tsan := 3
FAULT_JOBS_tsan := host property
$(foreach v,rel asan tsan,$(eval $(call faults_variant,$(v))))

.PHONY: check-faults check-faults-full
check-faults: check-faults-rel check-faults-asan check-faults-tsan
# Every point of libdao's; of the CUDA runtime's, 256 a function at most,
# spread evenly (the 3072 events a context's backend creates at open are
# one loop).
check-faults-full:
	$(MAKE) FAULT_MAX=all FAULT_MAX_CUDA=256 check-faults-rel check-faults-asan
check: check-faults
else
check-faults check-faults-full:
	@echo "check-faults: SKIP: libdao is built without CUDA"
endif
