# The soak test (tests/soak/soak.c): eight processes of four contexts run
# random programs while daoctl watches and one process is killed every
# few seconds. `make check` runs it for SOAK_SECONDS without the module;
# the VM suite (kmod/kmod.mk) runs it with the module loaded. By hand:
#   make check-soak SOAK_SECONDS=600
SOAK_SECONDS ?= 8
SOAK_BIN := $(BUILD)/rel/tests/soak/dao-soak
SOAK_DEPS := tests/soak/soak.c tests/kmod/json.c tests/kmod/json.h tests/unit/random_program.h \
             tests/unit/common.h tests/tap.h

$(SOAK_BIN): $(SOAK_DEPS) $(LIBDAO_A)
	@mkdir -p $(@D)
	$(CC) $(call cflags,rel) -Wno-sign-compare -Itests -Itests/unit -Itests/kmod -o $@ \
		tests/soak/soak.c tests/kmod/json.c $(LIBDAO_A) $(call ldflags,rel) -lutil -lm

.PHONY: check-soak
check-soak: $(SOAK_BIN) $(DAOCTL_BIN)
	DAOCTL=$(DAOCTL_BIN) DAO_SOAK_SECONDS=$(SOAK_SECONDS) prove -f $(SOAK_BIN)

CHECK_EXTRA += check-soak
