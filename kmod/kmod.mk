# dao.ko and its tests in a VM.
#   make kmod          build the module against the installed kernel headers
#   make kcheck        run tests/kmod in qemu on every installed Debian kernel
#                      image (6.1 and 6.12 on Debian 12), each with a module
#                      built against its own headers
#   make kcheck-debug  the same on a 6.1 kernel with KASAN, lockdep, kmemleak
# `make all` builds the module for every installed kernel with headers.

# Kernels with headers: the running one, and every one under /usr/src.
kmod_kdir = $(patsubst %/Makefile,%,$(firstword $(wildcard /lib/modules/$(1)/build/Makefile \
                                                          /usr/src/linux-headers-$(1)/Makefile)))
KMOD_KVERS := $(sort $(patsubst /usr/src/linux-headers-%/Makefile,%, \
                 $(wildcard /usr/src/linux-headers-*-amd64/Makefile)) \
                 $(if $(call kmod_kdir,$(shell uname -r)),$(shell uname -r)))
# Kernels kcheck boots: every image in /boot whose headers are installed.
KCHECK_KVERS := $(sort $(foreach v,$(patsubst /boot/vmlinuz-%,%,$(wildcard /boot/vmlinuz-*)), \
                   $(if $(call kmod_kdir,$(v)),$(v))))
KMOD_TREE_SRCS := kmod/Kbuild kmod/conftest.sh $(wildcard kmod/probes/*.c) \
                  $(filter-out kmod/dao_compat.h,$(wildcard kmod/*.c kmod/*.h)) \
                  kmod/include/uapi/linux/dao.h
LINUX_SOURCE_TARBALL ?= /usr/src/linux-source-6.1.tar.xz

# $(call kmod_build_in,OUTDIR,KDIR): a private copy of the sources per
# kernel, since Kbuild writes its objects next to them. Warnings are errors
# (DAO_WERROR, and any "warning" Kbuild or modpost prints; make's own note
# about its job server is not about the module). `+`: Kbuild shares our job
# server even though the line reaches $(MAKE) through $(call).
define kmod_build_in
	rm -rf $(1) && mkdir -p $(1)/probes $(1)/include/uapi/linux
	cp kmod/Kbuild kmod/conftest.sh $(filter-out kmod/dao_compat.h,$(wildcard kmod/*.c kmod/*.h)) $(1)/
	cp kmod/probes/*.c $(1)/probes/
	cp kmod/include/uapi/linux/dao.h $(1)/include/uapi/linux/
	+$(MAKE) --no-print-directory -C $(2) M=$(abspath $(1)) DAO_WERROR=1 modules > $(1)/build.log 2>&1; \
		rc=$$?; cat $(1)/build.log; test $$rc -eq 0 || exit $$rc; \
		if grep -i 'warning' $(1)/build.log | grep -v '^make.*: warning: jobserver unavailable'; then echo "kmod: warnings building against $(2)"; rm -f $(1)/dao.ko; exit 1; fi
endef

$(BUILD)/kmod/%/dao.ko: $(KMOD_TREE_SRCS)
	@test -n "$(call kmod_kdir,$*)" || { echo "kmod: no headers for $*"; exit 1; }
	$(call kmod_build_in,$(@D),$(call kmod_kdir,$*))

KMOD_KOS := $(foreach v,$(KMOD_KVERS),$(BUILD)/kmod/$(v)/dao.ko)
.PHONY: kmod kcheck kcheck-debug
kmod: $(KMOD_KOS)
all: $(KMOD_KOS)

# ------------------------------------------------------------ VM tests

KSELFTEST_DIR := $(BUILD)/kselftest
$(KSELFTEST_DIR)/kselftest_harness.h: $(LINUX_SOURCE_TARBALL)
	@mkdir -p $(@D)
	tar -xJf $< -C $(@D) --strip-components=4 \
		linux-source-6.1/tools/testing/selftests/kselftest_harness.h \
		linux-source-6.1/tools/testing/selftests/kselftest.h
	touch $@

KTEST_SRCS := $(sort $(wildcard tests/kmod/test_*.c))
KTEST_BIN := $(BUILD)/kcheck/bin
KTESTS := $(patsubst tests/kmod/%.c,$(KTEST_BIN)/%,$(KTEST_SRCS))
KTEST_CFLAGS := -std=gnu11 -O2 -g -D_GNU_SOURCE -pthread -Wall -Wextra -Werror \
                -Wno-sign-compare -Wno-unused-parameter \
                -Ikmod/include/uapi -I$(KSELFTEST_DIR) -Itests/kmod -Ilibdao/include \
                $(shell $(PKG_CONFIG) --cflags libnl-genl-3.0 2>/dev/null)
KTEST_LIBS := $(shell $(PKG_CONFIG) --static --libs libnl-genl-3.0 2>/dev/null) -lpthread -lm
# libnl links getaddrinfo, which static glibc warns about; the tests never call it.
KTEST_LDFLAGS := -Wl,--no-warnings

$(KTEST_BIN)/util.o: tests/kmod/util.c tests/kmod/util.h kmod/include/uapi/linux/dao.h
	@mkdir -p $(@D)
	$(CC) $(KTEST_CFLAGS) -c -o $@ $<

$(KTEST_BIN)/test_%: tests/kmod/test_%.c $(KTEST_BIN)/util.o $(KSELFTEST_DIR)/kselftest_harness.h \
		tests/kmod/util.h tests/kmod/child.h kmod/include/uapi/linux/dao.h
	$(CC) $(KTEST_CFLAGS) -static -o $@ $< $(KTEST_BIN)/util.o $(KTEST_LIBS) $(KTEST_LDFLAGS)

# The libdao programs of the VM suite (libdao_job: a job whose staging
# does not fit under the node limit it runs with; libdao_host_budget: jobs
# that ask for more host memory than the VM has; libdao_ioctl_faults: each
# of a job's /dev/dao ioctls refused in turn), linked with libdao without
# CUDA. libdao_cuda_job has a rule of its own below.
$(KTEST_BIN)/libdao_%: tests/kmod/libdao_%.c $(LIBDAO_NOCUDA_A) $(KTEST_BIN)/util.o \
		$(KSELFTEST_DIR)/kselftest_harness.h tests/kmod/util.h
	@mkdir -p $(@D)
	$(CC) $(KTEST_CFLAGS) -static -o $@ $< $(KTEST_BIN)/util.o $(LIBDAO_NOCUDA_A) $(KTEST_LIBS) \
		$(KTEST_LDFLAGS)
KTEST_LIBDAO := $(patsubst tests/kmod/%.c,$(KTEST_BIN)/%,\
                  $(filter-out tests/kmod/libdao_cuda_job.c,$(wildcard tests/kmod/libdao_*.c)))

# The soak test (tests/soak/) with the module loaded: DAO_SOAK_SECONDS
# from the kernel command line, else its default. In the VM it is the only
# user of /dev/dao (DAO_SOAK_SOLE_USER), so it checks the module's counts.
$(KTEST_BIN)/libdao_soak: $(SOAK_DEPS) $(LIBDAO_NOCUDA_A) $(KTEST_BIN)/json.o
	@mkdir -p $(@D)
	$(CC) $(KTEST_CFLAGS) -DDAO_SOAK_SOLE_USER -Itests -Itests/unit -static -o $@ tests/soak/soak.c $(KTEST_BIN)/json.o \
		$(LIBDAO_NOCUDA_A) -lutil $(KTEST_LIBS) $(KTEST_LDFLAGS)
KTEST_LIBDAO += $(if $(SOAK_DEPS),$(KTEST_BIN)/libdao_soak)

# The cuda-explicit job of the VM suite: libdao with its CUDA backends and
# the CUDA runtime model (tests/cudamodel/) linked in statically, since the
# VM has no dynamic loader; the model stays inside this test binary.
ifeq ($(HAVE_CUDA),1)
KTEST_CUDAMODEL_OBJS := $(patsubst tests/cudamodel/%.c,$(KTEST_BIN)/cudamodel/%.o,$(CUDAMODEL_SRCS))
$(KTEST_BIN)/cudamodel/%.o: tests/cudamodel/%.c $(CUDAMODEL_HDRS)
	@mkdir -p $(@D)
	$(CC) $(call cflags,rel) $(CUDA_CFLAGS) $(CUDAMODEL_CFLAGS) -c -o $@ $<

KTEST_CUDA_JOB := $(KTEST_BIN)/libdao_cuda_job
$(KTEST_CUDA_JOB): tests/kmod/libdao_cuda_job.c $(LIBDAO_A) $(KTEST_CUDAMODEL_OBJS) \
		$(KTEST_BIN)/util.o $(KSELFTEST_DIR)/kselftest_harness.h tests/cudamodel/cudamodel.h
	@mkdir -p $(@D)
	$(CC) $(KTEST_CFLAGS) $(CUDA_CFLAGS) $(KTEST_GCOV) -Itests -static -o $@ $< $(KTEST_BIN)/util.o \
		$(LIBDAO_A) $(KTEST_CUDAMODEL_OBJS) $(KTEST_LIBS) $(KTEST_LDFLAGS)
endif
# In a build with CFLAGS=--coverage (coverage-cuda-vm) the job writes
# libdao's .gcda files in the VM, from every test child (which leaves by
# _exit, so the job dumps them itself).
KTEST_GCOV := $(if $(filter --coverage,$(CFLAGS)),--coverage -DDAO_KTEST_GCOV)

# daoctl with the module loaded (test_daoctl): static daoctl and dao-pubjob,
# packed beside the tests, where PATH finds them.
KTEST_DAOCTL := $(if $(DAOCTL_OBJS),$(KTEST_BIN)/daoctl)
KTEST_PUBJOB := $(if $(wildcard tests/daoctl/pubjob.c),$(KTEST_BIN)/dao-pubjob)

$(KTEST_BIN)/daoctl: $(DAOCTL_OBJS) $(TOOLS_COMMON_A) $(LIBDAO_NOCUDA_A)
	@mkdir -p $(@D)
	$(CC) -static -pthread -o $@ $(DAOCTL_OBJS) $(TOOLS_COMMON_A) $(LIBDAO_NOCUDA_A) $(KTEST_LIBS) $(KTEST_LDFLAGS)

$(KTEST_BIN)/dao-pubjob: tests/daoctl/pubjob.c $(LIBDAO_NOCUDA_A)
	@mkdir -p $(@D)
	$(CC) $(filter-out -DDAO_HAVE_CUDA,$(call cflags,rel)) -static -o $@ $< $(LIBDAO_NOCUDA_A) -pthread -lm

$(KTEST_BIN)/json.o: tests/kmod/json.c tests/kmod/json.h
	@mkdir -p $(@D)
	$(CC) $(KTEST_CFLAGS) -c -o $@ $<

# An explicit rule wins over the pattern above: this test also reads JSON.
$(KTEST_BIN)/test_daoctl: tests/kmod/test_daoctl.c $(KTEST_BIN)/util.o $(KTEST_BIN)/json.o \
		$(KSELFTEST_DIR)/kselftest_harness.h tests/kmod/util.h tests/kmod/json.h \
		kmod/include/uapi/linux/dao.h
	$(CC) $(KTEST_CFLAGS) -static -o $@ $< $(KTEST_BIN)/util.o $(KTEST_BIN)/json.o \
		$(KTEST_LIBS) $(KTEST_LDFLAGS)

$(KTEST_BIN)/vmexit: tests/vm/vmexit.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -static -o $@ $<

KCHECK_PROGS := $(KTESTS) $(KTEST_BIN)/vmexit $(KTEST_LIBDAO) \
                $(KTEST_CUDA_JOB) \
                $(KTEST_DAOCTL) $(KTEST_PUBJOB)
KCHECK_TIMEOUT ?= 900
# Distribution kernels have no KASAN: poisoning freed slab objects turns a
# use after free (of a file, a region) into a crash or a report there too.
KCHECK_VM_ARGS_kcheck := --append slub_debug=P

# $(call kcheck_run,NAME,KERNEL_IMAGE,DAO_KO)
define kcheck_run
	tests/vm/mkinitramfs.sh $(BUILD)/$(1)/initramfs.cpio $(3) $(KCHECK_PROGS)
	tests/vm/run-vm.sh --kernel $(2) --initrd $(BUILD)/$(1)/initramfs.cpio \
		--log $(BUILD)/$(1)/console.log --timeout $(KCHECK_TIMEOUT) $(KCHECK_VM_ARGS_$(1))
endef

# Every kernel runs the whole suite, even after one failed; the target
# fails when any did. KCHECK_KVERS="..." picks some. KCHECK_DAO_KO=FILE
# loads that module instead of one built here (`make check-install` gives
# the one DKMS built from the dao-dkms package, with one kernel).
KCHECK_DAO_KO ?=
kcheck: $(KCHECK_PROGS)
	@test -n "$(KCHECK_KVERS)" || { echo "kcheck: no kernel image with headers (apt-get install linux-image-amd64 linux-headers-amd64)"; exit 1; }
	@fail=; for v in $(KCHECK_KVERS); do \
		echo "kcheck: kernel $$v"; \
		ko=$(or $(KCHECK_DAO_KO),$(BUILD)/kmod/$$v/dao.ko); \
		if { test -n "$(KCHECK_DAO_KO)" || $(MAKE) --no-print-directory $$ko; } && \
		   tests/vm/mkinitramfs.sh $(BUILD)/kcheck/$$v/initramfs.cpio $$ko $(KCHECK_PROGS) && \
		   tests/vm/run-vm.sh --kernel /boot/vmlinuz-$$v --initrd $(BUILD)/kcheck/$$v/initramfs.cpio \
			--log $(BUILD)/kcheck/$$v/console.log --timeout $(KCHECK_TIMEOUT) $(KCHECK_VM_ARGS_kcheck); \
		then :; else fail="$$fail $$v"; fi; \
	done; \
	if [ -n "$$fail" ]; then echo "kcheck: FAIL on:$$fail"; exit 1; fi; echo "kcheck: PASS on $(KCHECK_KVERS)"

# The cuda job alone in the VM on the first kernel, its .gcda files copied
# out over the console (hex: nothing the console checks for can appear in
# it) and merged into this build's (gcov-tool), for coverage-cuda-vm.
KGCOV_DIR := $(BUILD)/kcheck-gcov
.PHONY: kcheck-cuda-gcov
kcheck-cuda-gcov: $(KTEST_CUDA_JOB) $(KTEST_BIN)/vmexit
	@test -n "$(KTEST_CUDA_JOB)" || { echo "kcheck-cuda-gcov: libdao is built without CUDA"; exit 1; }
	@test -n "$(KTEST_GCOV)" || { echo "kcheck-cuda-gcov: needs a build with CFLAGS=--coverage"; exit 1; }
	v=$(firstword $(KCHECK_KVERS)); ko=$(BUILD)/kmod/$$v/dao.ko; \
	$(MAKE) --no-print-directory $$ko && \
	tests/vm/mkinitramfs.sh $(KGCOV_DIR)/initramfs.cpio $$ko $(KTEST_BIN)/vmexit $(KTEST_CUDA_JOB) && \
	tests/vm/run-vm.sh --kernel /boot/vmlinuz-$$v --initrd $(KGCOV_DIR)/initramfs.cpio \
		--log $(KGCOV_DIR)/console.log --timeout $(KCHECK_TIMEOUT) --append DAO_GCOV=/tmp/gcov
	rm -rf $(KGCOV_DIR)/gcda && mkdir -p $(KGCOV_DIR)/gcda
	sed -n '/^DAO-GCOV-BEGIN$$/,/^DAO-GCOV-END$$/p' $(KGCOV_DIR)/console.log | grep -v '^DAO-GCOV' | \
		perl -ne 's/\s//g; print pack("H*", $$_)' | tar -xz -C $(KGCOV_DIR)/gcda
	test -d $(KGCOV_DIR)/gcda$(abspath $(BUILD)/rel/obj)
	gcov-tool merge -o $(BUILD)/rel/obj $(KGCOV_DIR)/gcda$(abspath $(BUILD)/rel/obj) $(BUILD)/rel/obj

KDEBUG_TREE := $(BUILD)/kdebug/linux
KDEBUG_KO := $(BUILD)/kmod/debug/dao.ko
# The randomized ioctl test runs 60 s on the debug kernel, 10 s elsewhere.
KCHECK_VM_ARGS_kcheck-debug := --memory 1536 --append DAO_FUZZ_SECONDS=60

.PHONY: kdebug-kernel
kdebug-kernel:
	tests/vm/build-kernel.sh $(BUILD)/kdebug

$(KDEBUG_KO): $(KMOD_TREE_SRCS) $(BUILD)/kdebug/stamp
	$(call kmod_build_in,$(@D),$(KDEBUG_TREE))

$(BUILD)/kdebug/stamp: kdebug-kernel ;

# Its watchdog: the debug kernel under TCG takes 10-14 minutes on 2 cores.
kcheck-debug: KCHECK_TIMEOUT := 1500
kcheck-debug: kdebug-kernel
	$(MAKE) --no-print-directory $(KDEBUG_KO) $(KCHECK_PROGS)
	$(call kcheck_run,kcheck-debug,$(KDEBUG_TREE)/arch/x86/boot/bzImage,$(KDEBUG_KO))
