# daosim: replay dao-traces through libdao's policy on a modeled device,
# with lower bounds: the byte LPs by a greedy (GLPK as their reference) and
# the time-indexed LP by COIN-OR CLP (tools/daosim/, Documentation/daosim.md).
#
# Everything but main.c also goes into a per-variant libdaosim.a that the
# unit tests link (GLPK and CLP stay out of libdao.so).

DAOSIM_SRCS := $(sort $(wildcard tools/daosim/*.c tools/daosim/bounds/*.c))
DAOSIM_LIB_SRCS := $(filter-out tools/daosim/main.c,$(DAOSIM_SRCS))
DAOSIM_BIN  := $(BUILD)/bin/daosim
DAOSIM_LIBS := -lClp -lCoinUtils -lglpk -lm

define daosim_variant
$(BUILD)/$(1)/obj/tools/daosim/%.o: tools/daosim/%.c
	@mkdir -p $$(@D)
	$$(CC) $$(call cflags,$(1)) -Itools/daosim $$(TOOLS_COMMON_CFLAGS) -MMD -MP -c $$< -o $$@

$(BUILD)/$(1)/lib/libdaosim.a: $(patsubst tools/daosim/%.c,$(BUILD)/$(1)/obj/tools/daosim/%.o,$(DAOSIM_LIB_SRCS))
	@mkdir -p $$(@D)
	rm -f $$@
	$$(AR) rcs $$@ $$^
endef
$(foreach v,rel asan,$(eval $(call daosim_variant,$(v))))

$(DAOSIM_BIN): $(BUILD)/rel/obj/tools/daosim/main.o $(BUILD)/rel/lib/libdaosim.a $(TOOLS_COMMON_A) $(LIBDAO_SIM_A) $(LIBDAO_A)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(call ldflags,rel) $(DAOSIM_LIBS)

all: $(DAOSIM_BIN)

# The bounds' growth benchmark (Documentation/benchmarks.md).
DAOSIM_BENCH_BIN := $(BUILD)/bin/daosim-bench-bounds
$(BUILD)/rel/obj/tools/daosim/bench/%.o: tools/daosim/bench/%.c
	@mkdir -p $(@D)
	$(CC) $(call cflags,rel) -Itools/daosim -MMD -MP -c $< -o $@
$(DAOSIM_BENCH_BIN): $(BUILD)/rel/obj/tools/daosim/bench/bench_bounds.o $(BUILD)/rel/lib/libdaosim.a $(TOOLS_COMMON_A) $(LIBDAO_SIM_A) $(LIBDAO_A)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(call ldflags,rel) $(DAOSIM_LIBS)
all: $(DAOSIM_BENCH_BIN)
# The segment-cut bound's timing (Documentation/daosim.md).
DAOSIM_BENCH_CUT_BIN := $(BUILD)/bin/daosim-bench-cut
$(DAOSIM_BENCH_CUT_BIN): $(BUILD)/rel/obj/tools/daosim/bench/bench_cut.o $(BUILD)/rel/lib/libdaosim.a $(TOOLS_COMMON_A) $(LIBDAO_SIM_A) $(LIBDAO_A)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(call ldflags,rel) $(DAOSIM_LIBS)
all: $(DAOSIM_BENCH_CUT_BIN)
# The segment LP with residency 0 or 1 (Documentation/daosim.md).
DAOSIM_BENCH_MIP_BIN := $(BUILD)/bin/daosim-bench-mip
$(DAOSIM_BENCH_MIP_BIN): $(BUILD)/rel/obj/tools/daosim/bench/bench_mip.o $(BUILD)/rel/lib/libdaosim.a $(TOOLS_COMMON_A) $(LIBDAO_SIM_A) $(LIBDAO_A)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(call ldflags,rel) $(DAOSIM_LIBS)
all: $(DAOSIM_BENCH_MIP_BIN)

# Unit tests that use daosim's pieces: the variant's libdaosim.a, found
# from the test's own path (build/VARIANT/tests/NAME), then libdao.a again
# (the link line names it before these) and GLPK.
daosim_variant_dir = $(patsubst %/tests/,%,$(dir $@))
daosim_test_libs = $(daosim_variant_dir)/lib/libdaosim.a $(daosim_variant_dir)/lib/libdaotools.a \
	$(daosim_variant_dir)/lib/libdao-sim.a \
	$(daosim_variant_dir)/lib/libdao.a \
	$(DAOSIM_LIBS)
DAOSIM_TESTS := test_lp_bound test_sim_replay test_clean_ahead test_sim_backend_match test_segment_cut test_bound_table test_plan_check
$(foreach t,$(DAOSIM_TESTS),$(eval LIBS_$(t) = $$(daosim_test_libs)))
$(foreach v,rel asan,$(foreach t,$(DAOSIM_TESTS),\
	$(eval $(BUILD)/$(v)/tests/$(t): $(BUILD)/$(v)/lib/libdaosim.a $(BUILD)/$(v)/lib/libdaotools.a)))

# End-to-end checks of the command line.
.PHONY: check-daosim install-daosim
# dao-tracegen writes a trace of a family; tracegen.mk is read after this file.
check-daosim: $(DAOSIM_BIN) $(DAOSIM_BENCH_MIP_BIN) $(BUILD)/bin/dao-tracegen
	DAOSIM=$(DAOSIM_BIN) BENCH_MIP=$(DAOSIM_BENCH_MIP_BIN) TRACEGEN=$(TRACEGEN_BIN) TRACES=$(abspath tests/traces) prove -f --exec bash tools/daosim/check.t

CHECK_EXTRA += check-daosim

install: install-daosim
install-daosim: $(DAOSIM_BIN)
	install -d $(DESTDIR)$(PREFIX)/bin
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 $(DAOSIM_BIN) $(DESTDIR)$(PREFIX)/bin/daosim
	install -m 0644 Documentation/daosim.1 $(DESTDIR)$(PREFIX)/share/man/man1/daosim.1

# The trace reader's fuzzer (rules in tests/fuzz/fuzz.mk).
include tests/fuzz/fuzz.mk
