# User-space tests: every tests/unit/test_*.c is one TAP program, built for
# the rel and asan variants; those named in TSAN_TESTS also under tsan.
# They are libdao's own tests: they may include its internal headers, and
# link libdao-sim.a (simulated backend, trace reader) before libdao.a.
# Tests that need extra libraries list them in LIBS_<name>.

UNIT_SRCS  := $(sort $(wildcard tests/unit/test_*.c))
UNIT_NAMES := $(patsubst tests/unit/%.c,%,$(UNIT_SRCS))
TSAN_TESTS ?= test_executor test_threads test_publish test_api_reentrant test_log_level test_inbox \
	test_create \
	test_placement test_plan_policy test_policy_default

define unit_variant
$(BUILD)/$(1)/tests/%: tests/unit/%.c $(BUILD)/$(1)/lib/libdao-sim.a $(BUILD)/$(1)/lib/libdao.a tests/tap.h
	@mkdir -p $$(@D)
	$$(CC) $$(call cflags,$(1)) $$(LIBDAO_INTERNAL_CFLAGS) -Itests -MMD -MP -o $$@ $$< \
		$(BUILD)/$(1)/lib/libdao-sim.a $(BUILD)/$(1)/lib/libdao.a \
		$$(call ldflags,$(1)) $$(LIBS_$$*) -lm
endef
$(foreach v,rel asan tsan,$(eval $(call unit_variant,$(v))))

UNIT_rel  := $(addprefix $(BUILD)/rel/tests/,$(UNIT_NAMES))
UNIT_asan := $(addprefix $(BUILD)/asan/tests/,$(UNIT_NAMES))
UNIT_tsan := $(addprefix $(BUILD)/tsan/tests/,$(filter $(TSAN_TESTS),$(UNIT_NAMES)))

# Extra check steps other fragments add (fuzzing, tool tests) go here.
CHECK_EXTRA ?=
# (Included before the check rule below, which expands CHECK_EXTRA as it is read.)
include tests/abi/abi.mk
include tests/layers/layers.mk
include tests/soak/soak.mk

export ASAN_OPTIONS := detect_leaks=1:abort_on_error=1:halt_on_error=1
export UBSAN_OPTIONS := print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS := halt_on_error=1:second_deadlock_stack=1

check-rel: all $(UNIT_rel)
	prove -f $(UNIT_rel)

check-asan: $(UNIT_asan)
	prove -f $(UNIT_asan)

check-tsan: $(UNIT_tsan)
	$(if $(UNIT_tsan),setarch $$(uname -m) -R prove -f $(UNIT_tsan),@echo "no tsan tests")

check: check-rel check-asan check-tsan $(CHECK_EXTRA)
-include tests/gpu/gpu.mk
-include tests/cudamodel/cudamodel.mk
-include tests/faults/faults.mk
