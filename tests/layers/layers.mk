# tests/layers/layers.mk - `make check-layers`: the calls and includes of
# libdao/src and of the CUDA runtime model (tests/cudamodel/runtime) run
# down their layers (libdao/layers, tests/cudamodel/layers), without circles
# (check-layers.pl over universal-ctags), each one's layer map
# (libdao/src/core/core.h, tests/cudamodel/runtime/api/model.h) names every
# file where it lies, and the checker refuses a tree built to break each
# rule (selftest.sh).

.PHONY: check-layers
check-layers:
	prove -f --exec bash tests/layers/selftest.sh
	prove -f --exec perl tests/layers/check-layers.pl :: libdao/src libdao/layers libdao/include \
		libdao/src/core/core.h
	prove -f --exec perl tests/layers/check-layers.pl :: tests/cudamodel/runtime \
		tests/cudamodel/layers tests/cudamodel tests/cudamodel/runtime/api/model.h

CHECK_EXTRA += check-layers
