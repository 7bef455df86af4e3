# The dao SPANK plugin (slurm/): built when Slurm's headers are installed
# (Debian: libslurm-dev), installed where plugstack.conf names it
# (Documentation/slurm.md).

SLURM_INCLUDE   ?= /usr/include
SLURM_PLUGINDIR ?= $(PREFIX)/lib/dao/slurm
DAO_SPANK_SO    := $(BUILD)/lib/slurm/dao_spank.so

ifneq ($(wildcard $(SLURM_INCLUDE)/slurm/spank.h),)
DAO_SPANK_SRCS := slurm/dao_spank.c slurm/options.c

# Slurm resolves its own symbols (slurm_error, spank_*) when it loads the
# plugin: they are left undefined here, hence no --no-undefined. The names
# of libdao's policies and backends come from its tables through a header
# written at build time (tools/kinds/kinds.mk): the plugin does not load libdao.
$(DAO_SPANK_SO): $(DAO_SPANK_SRCS) slurm/options.h libdao/include/dao_publish.h $(KIND_NAMES_H)
	@mkdir -p $(@D)
	$(CC) $(call cflags,rel) -I$(SLURM_INCLUDE) -I$(dir $(KIND_NAMES_H)) -shared -o $@ \
		$(DAO_SPANK_SRCS)

all: $(DAO_SPANK_SO)

install: install-slurm
.PHONY: install-slurm
install-slurm: $(DAO_SPANK_SO)
	install -d $(DESTDIR)$(SLURM_PLUGINDIR)
	install -m 0644 $(DAO_SPANK_SO) $(DESTDIR)$(SLURM_PLUGINDIR)/dao_spank.so
endif

# A real Slurm on this machine (slurmctld, slurmd, munged, started and
# stopped by the test); needs root. Not part of `make check`: .ci/run calls it.
.PHONY: check-slurm
# Only what it runs: not `all`, which also builds the kernel module.
check-slurm: $(if $(wildcard $(SLURM_INCLUDE)/slurm/spank.h),$(DAO_SPANK_SO)) \
	     $(BUILD)/bin/dao-cholesky $(BUILD)/bin/daoctl $(BUILD)/rel/tests/daoctl/dao-pubjob
	BUILD=$(BUILD) prove -v -f --exec bash slurm/check.t
