# tools/gpubench/evidence.mk - the prepared call's report and its rehearsal.
#
# `make gpu-evidence-report DIR=<folder>`: the files a run of
# gpu-evidence.sh wrote become a dated section of $(CUDA_MD) and raw JSON in
# $(EVIDENCE_JSON_DIR) (evidence-report.pl), with daosim's predictions from
# the rates that run measured.
#
# `make check-gpu-evidence` (part of `make check`): the whole path, small,
# against the CUDA runtime model: the bundle (the same rule, into
# $(BUILD)/evidence-check), the call (DAO_EVIDENCE_SIZE=tiny), the report
# (into a copy of cuda.md), checked by tools/gpubench/evidence.t.

.PHONY: gpu-evidence-report check-gpu-evidence

CUDA_MD ?= Documentation/cuda.md
EVIDENCE_JSON_DIR ?= Documentation/gpu-evidence

gpu-evidence-report: $(DAOSIM_BIN)
	@test -n "$(DIR)" || { echo "gpu-evidence-report: DIR=<the folder the call's files came back in>" >&2; exit 2; }
	perl tools/gpubench/evidence-report.pl --dir '$(DIR)' --cuda-md '$(CUDA_MD)' \
		--json-dir '$(EVIDENCE_JSON_DIR)' --daosim '$(DAOSIM_BIN)'

ifeq ($(HAVE_CUDA),1)
EVIDENCE_CHECK := $(BUILD)/evidence-check
check-gpu-evidence: $(BUILD)/rel/cudamodel/libcudart.so.13 $(BUILD)/rel/cudamodel/libcublas.so.13 \
		$(BUILD)/rel/cudamodel/libcusolver.so.12 $(DAOSIM_BIN)
	rm -rf $(EVIDENCE_CHECK)
	$(MAKE) gpu-bundle GPU_BUNDLE_DIR=$(EVIDENCE_CHECK)/bundle
	DAO_EVIDENCE_CHECK=$(EVIDENCE_CHECK) DAO_CUDAMODEL_DIR=$(BUILD)/rel/cudamodel \
		DAO_DAOSIM=$(DAOSIM_BIN) prove -f --exec bash tools/gpubench/evidence.t

CHECK_EXTRA += check-gpu-evidence
else
check-gpu-evidence:
	@echo "check-gpu-evidence: SKIP: libdao is built without CUDA"
endif
