# tools/kinds: the names of libdao's backends and policies, as libdao's
# tables give them (Documentation/design.md, "Where to change what"). The
# tools ask libdao at run time (kinds.h); dao-kind-names writes them into a
# header at build time for the Slurm plugin, which must not load libdao;
# `make check-kinds` holds every list that can be neither (the Fortran
# module, the documentation) to them. Nothing here is installed.

KIND_NAMES_BIN := $(BUILD)/rel/tools/dao-kind-names
KIND_NAMES_H   := $(BUILD)/gen/dao_kind_names.h

$(KIND_NAMES_BIN): tools/kinds/kind_names.c $(LIBDAO_A)
	@mkdir -p $(@D)
	$(CC) $(call cflags,rel) -MMD -MP -o $@ $< $(LIBDAO_A) $(call ldflags,rel) -lm

$(KIND_NAMES_H): $(KIND_NAMES_BIN)
	@mkdir -p $(@D)
	$< header > $@.tmp
	mv $@.tmp $@

.PHONY: check-kinds
check-kinds: $(KIND_NAMES_BIN)
	KIND_NAMES=$(KIND_NAMES_BIN) prove -f --exec perl tools/kinds/check.t

CHECK_EXTRA += check-kinds
