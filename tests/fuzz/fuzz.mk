# libFuzzer harness for the dao-trace reader (tests/fuzz/fuzz_trace.c).
# `make check` runs it for FUZZ_SECONDS from the seed corpus in
# tests/fuzz/corpus/; new inputs it finds go to build/fuzz/corpus/, crashes
# to build/fuzz/ (crash-*), and fail the step.

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 30
FUZZ_CFLAGS  := -std=gnu11 -g -O1 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
                -fno-sanitize-recover=all -Ilibdao/include $(WARN)
FUZZ_BIN     := $(BUILD)/fuzz/fuzz_trace

$(FUZZ_BIN): tests/fuzz/fuzz_trace.c libdao/src/trace/trace_read.c libdao/include/dao_trace.h
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ tests/fuzz/fuzz_trace.c libdao/src/trace/trace_read.c

.PHONY: check-fuzz
check-fuzz: $(FUZZ_BIN)
	@mkdir -p $(BUILD)/fuzz/corpus
	cd $(BUILD)/fuzz && ./fuzz_trace -max_total_time=$(FUZZ_SECONDS) -max_len=8192 \
		-timeout=10 -rss_limit_mb=1024 -print_final_stats=1 \
		corpus $(abspath tests/fuzz/corpus) 2>fuzz.log || { tail -40 fuzz.log; exit 1; }
	@grep -E 'stat::number_of_executed_units|Done' $(BUILD)/fuzz/fuzz.log || true

CHECK_EXTRA += check-fuzz
