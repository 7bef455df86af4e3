# tools/gpubench/bundle.mk - `make gpu-bundle`: everything a lent GPU machine
# needs for the prepared call (tools/gpubench/gpu-evidence.sh, issue 23) in
# one folder, $(GPU_BUNDLE_DIR), carried there with the working tree:
#
#   bin/             GPU_BUNDLE_BINS, linked with DT_RPATH $ORIGIN/../lib
#   lib/             GPU_BUNDLE_LIBS (shared libraries built here); the
#                    script unpacks the system libraries beside them
#   syslibs.tar.gz   the non-CUDA shared libraries all of them load
#                    (OpenBLAS, LAPACK(E), gfortran ...), gzip'd
#   *.sh             GPU_BUNDLE_SCRIPTS
#   src/             GPU_BUNDLE_SRCS, under their repository paths
#   MANIFEST         what is in it, from which commit
#
# Other fragments append to the four variables (in terms of $(BUILD): the
# bundle's programs are a build of their own, $(GPU_BUNDLE_BUILD), whose
# links differ from the ordinary build's in one respect, the rpath). The
# CUDA libraries are the GPU machine's own and never go in. The folder
# must stay under GPU_BUNDLE_MAX_BYTES (the device tool carries 64 MiB with
# the working tree); the rule fails, naming the largest files, when it is
# not. bundle.sh says why each choice (DT_RPATH, gzip) was made.

.PHONY: gpu-bundle gpu-bundle-assemble

GPU_BUNDLE_DIR ?= gpu-bundle
GPU_BUNDLE_MAX_BYTES ?= 50331648
GPU_BUNDLE_BUILD := $(BUILD)/bundle
GPU_BUNDLE_SCRIPTS += tools/gpubench/gpu-evidence.sh

ifeq ($(HAVE_CUDA),1)
# DT_RPATH, not DT_RUNPATH (--disable-new-dtags): it also serves the
# bundled libraries' own dependencies (liblapacke.so.3 needs libblas.so.3),
# which DT_RUNPATH would not. No CUDA directory in it: the CUDA libraries
# are found through the GPU machine's loader path (the script prepends
# DAO_CUDA_LIBDIR), and an rpath entry would outrank LD_LIBRARY_PATH, which
# the rehearsal uses to put the CUDA runtime model in their place.
gpu-bundle:
	$(MAKE) BUILD=$(GPU_BUNDLE_BUILD) CUDA_LDFLAGS=-L$(CUDA_LIBDIR) \
		'LDFLAGS=-Wl,--disable-new-dtags -Wl,-rpath,\$$$$ORIGIN/../lib' \
		GPU_BUNDLE_DIR=$(GPU_BUNDLE_DIR) gpu-bundle-assemble

.SECONDEXPANSION:
gpu-bundle-assemble: $$(GPU_BUNDLE_BINS) $$(GPU_BUNDLE_LIBS) tools/gpubench/bundle.sh
	GPU_BUNDLE_BINS='$(GPU_BUNDLE_BINS)' GPU_BUNDLE_LIBS='$(GPU_BUNDLE_LIBS)' \
	GPU_BUNDLE_SCRIPTS='$(GPU_BUNDLE_SCRIPTS)' GPU_BUNDLE_SRCS='$(GPU_BUNDLE_SRCS)' \
		bash tools/gpubench/bundle.sh $(GPU_BUNDLE_DIR) $(GPU_BUNDLE_MAX_BYTES) $(CUDA_HOME)
else
gpu-bundle:
	@echo "gpu-bundle: libdao is built without CUDA (no toolkit found by libdao/cuda.mk)" >&2
	@false
endif
