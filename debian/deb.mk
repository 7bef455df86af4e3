# Debian packages (debian/, Documentation/admin.md).
#   make deb            libdao0, libdao-dev, dao-tools, dao-dkms into build/deb/,
#                       then lintian (fails on an error)
#   make check-install  installs them on this machine, checks, purges
#                       (tests/install/check.t; needs root)
#
# dpkg-buildpackage writes its results beside the source tree, so it runs
# in a copy under build/deb/src/: the packages land in build/deb/ and the
# checkout stays clean (no debian/tmp, no build/ of another configuration).

DEB_DIR := $(BUILD)/deb

.PHONY: deb check-install
deb:
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/src/dao
	tar --exclude=./$(BUILD) --exclude=./.git -cf - . | tar -C $(DEB_DIR)/src/dao -xf -
	cd $(DEB_DIR)/src/dao && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		dpkg-buildpackage -b -us -uc -J2 >../build.log 2>&1 || \
		{ tail -40 ../build.log; echo "deb: dpkg-buildpackage failed, log in $(DEB_DIR)/src/build.log"; exit 1; }
	mv $(DEB_DIR)/src/*.deb $(DEB_DIR)/src/*.changes $(DEB_DIR)/src/*.buildinfo $(DEB_DIR)/
	rm -rf $(DEB_DIR)/src
	lintian --fail-on error --info $(DEB_DIR)/*.changes
	@ls -1 $(DEB_DIR)/*.deb

check-install:
	DEB_DIR=$(abspath $(DEB_DIR)) BUILD=$(BUILD) MAKE="$(MAKE)" \
		prove -f --exec bash tests/install/check.t
