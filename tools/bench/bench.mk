# dao-bench: overhead and copy figures of libdao (tools/bench/). Not a test:
# it prints measurements, recorded in Documentation/benchmarks.md.

BENCH_SRCS := $(sort $(wildcard tools/bench/*.c))
BENCH_OBJS := $(patsubst tools/bench/%.c,$(BUILD)/rel/obj/tools/bench/%.o,$(BENCH_SRCS))
BENCH_BIN  := $(BUILD)/bin/dao-bench

$(BUILD)/rel/obj/tools/bench/%.o: tools/bench/%.c
	@mkdir -p $(@D)
	$(CC) $(call cflags,rel) -MMD -MP -c $< -o $@

$(BENCH_BIN): $(BENCH_OBJS) $(LIBDAO_A)
	@mkdir -p $(@D)
	$(CC) -o $@ $(BENCH_OBJS) $(LIBDAO_A) $(call ldflags,rel) -lm

all: $(BENCH_BIN)
GPU_BUNDLE_BINS += $(BENCH_BIN)

.PHONY: install-bench
install: install-bench
install-bench: $(BENCH_BIN)
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BENCH_BIN) $(DESTDIR)$(PREFIX)/bin/dao-bench

# Not a benchmark run: only that both measurements still work (tiny sizes).
.PHONY: check-bench
check-bench: $(BENCH_BIN)
	DAO_BENCH=$(BENCH_BIN) prove -f --exec bash tools/bench/check.t

CHECK_EXTRA += check-bench
