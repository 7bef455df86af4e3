# daoctl: live residency of every dao job on the node (tools/daoctl/,
# Documentation/daoctl.md, Documentation/daoctl.1). Reads the segments libdao
# publishes in /dev/shm; talks to the module over generic netlink (libnl).

DAOCTL_SRCS := $(sort $(wildcard tools/daoctl/*.c))
DAOCTL_OBJS := $(patsubst tools/daoctl/%.c,$(BUILD)/rel/obj/tools/daoctl/%.o,$(DAOCTL_SRCS))
DAOCTL_BIN  := $(BUILD)/bin/daoctl
DAOCTL_NL_CFLAGS := $(shell $(PKG_CONFIG) --cflags libnl-genl-3.0)
DAOCTL_NL_LIBS   := $(shell $(PKG_CONFIG) --libs libnl-genl-3.0)

$(BUILD)/rel/obj/tools/daoctl/%.o: tools/daoctl/%.c
	@mkdir -p $(@D)
	$(CC) $(call cflags,rel) $(DAOCTL_NL_CFLAGS) $(TOOLS_COMMON_CFLAGS) -MMD -MP -c $< -o $@

$(DAOCTL_BIN): $(DAOCTL_OBJS) $(TOOLS_COMMON_A) $(LIBDAO_A)
	@mkdir -p $(@D)
	$(CC) -o $@ $(DAOCTL_OBJS) $(TOOLS_COMMON_A) $(LIBDAO_A) $(call ldflags,rel) $(DAOCTL_NL_LIBS)

# The small job the end-to-end tests run (not installed).
DAO_PUBJOB := $(BUILD)/rel/tests/daoctl/dao-pubjob
$(DAO_PUBJOB): tests/daoctl/pubjob.c $(LIBDAO_A)
	@mkdir -p $(@D)
	$(CC) $(call cflags,rel) -MMD -MP -o $@ $< $(LIBDAO_A) $(call ldflags,rel) -lm

all: $(DAOCTL_BIN) $(DAO_PUBJOB)

# End-to-end: real jobs under small budgets, daoctl against what they report,
# stale segments, top under tmux, a node_exporter scrape.
.PHONY: check-daoctl install-daoctl
check-daoctl: $(DAOCTL_BIN) $(DAO_PUBJOB) $(if $(CHOL_BIN),$(CHOL_BIN))
	DAOCTL=$(DAOCTL_BIN) DAO_PUBJOB=$(DAO_PUBJOB) DAO_CHOLESKY=$(CHOL_BIN) \
		prove -f --exec bash tests/daoctl/check.t

CHECK_EXTRA += check-daoctl

install: install-daoctl
install-daoctl: $(DAOCTL_BIN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 $(DAOCTL_BIN) $(DESTDIR)$(PREFIX)/bin/daoctl
	install -m 0644 Documentation/daoctl.1 $(DESTDIR)$(PREFIX)/share/man/man1/daoctl.1
