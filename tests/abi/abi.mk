# tests/abi/abi.mk - libdao.so's exported symbols and ABI (issue 11).
#   make check-abi     exports == dao.h's functions; ABI == libdao/abi/libdao.abi
#   make abi-baseline  regenerate the baseline, deliberately, after a soname
#                      or version-node bump (Documentation/libdao.md, "ABI")

LIBDAO_ABI_BASELINE := libdao/abi/libdao.abi
ABIDW_FLAGS := --no-corpus-path --no-comp-dir-path --no-elf-needed --headers-dir libdao/include

.PHONY: check-abi abi-baseline
check-abi: $(LIBDAO_SO)
	prove -f --exec bash tests/abi/check-exports.sh :: $(BUILD)/lib/libdao.so \
		libdao/include/dao.h libdao/libdao.map
	prove -f --exec bash tests/abi/check-abi.sh :: $(BUILD)/lib/libdao.so \
		$(LIBDAO_ABI_BASELINE) libdao/include

abi-baseline: $(LIBDAO_SO)
	abidw $(ABIDW_FLAGS) --out-file $(LIBDAO_ABI_BASELINE) $(BUILD)/lib/libdao.so

CHECK_EXTRA += check-abi

# The check must be able to fail: against a baseline doctored to name a
# function libdao.so lacks, it has to report a difference.
check-abi: check-abi-selftest
.PHONY: check-abi-selftest
check-abi-selftest: $(LIBDAO_SO)
	@mkdir -p $(BUILD)/abi
	sed "s/name='dao_sync'/name='dao_sync_gone'/" $(LIBDAO_ABI_BASELINE) > $(BUILD)/abi/doctored.abi
	@if bash tests/abi/check-abi.sh $(BUILD)/lib/libdao.so $(BUILD)/abi/doctored.abi \
		libdao/include > $(BUILD)/abi/selftest.tap; then \
		echo "check-abi-selftest: FAIL: a doctored baseline passed"; exit 1; \
	else echo "check-abi-selftest: ok (a doctored baseline is refused)"; fi
