# tests/layers/layers.mk - `make check-layers`: libdao/src's calls and
# includes run down the layers of libdao/layers, without circles
# (check-layers.pl over universal-ctags), the layer map libdao/src/core/core.h
# names every file where it lies, and the checker refuses a tree built to
# break each rule (selftest.sh).

.PHONY: check-layers
check-layers:
	prove -f --exec bash tests/layers/selftest.sh
	prove -f --exec perl tests/layers/check-layers.pl :: libdao/src libdao/layers libdao/include \
		libdao/src/core/core.h

CHECK_EXTRA += check-layers
