# dao top-level build. `make` builds everything into build/, `make check`
# runs every test that needs neither a GPU nor a VM.
#
# Each component keeps its rules in a fragment next to its sources
# (libdao/libdao.mk, tools/*/*.mk, tests/tests.mk, kmod/kmod.mk); this file
# holds what they share.

PREFIX     ?= /usr/local
# Where the library, its archive and dao.pc go: Debian's packages set the
# multiarch directory (/usr/lib/x86_64-linux-gnu).
LIBDIR     ?= $(PREFIX)/lib
DESTDIR    ?=
BUILD      ?= build
CC         ?= cc
AR         ?= ar
PKG_CONFIG ?= pkg-config

SOVERSION  := 0
VERSION    := 0.1.0

WARN       := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
              -Wno-unused-parameter
BASE_CFLAGS := -std=gnu11 -g -pthread -fPIC -D_GNU_SOURCE $(WARN) \
               -Ilibdao/include -Ikmod/include/uapi
# libdao's own sources and its unit tests also see its internal headers;
# every other program includes only the public ones (libdao/include).
LIBDAO_INTERNAL_CFLAGS := -Ilibdao/src
# What libdao's own objects add: only DAO_API (dao.h) is visible outside.
LIBDAO_OBJ_CFLAGS := $(LIBDAO_INTERNAL_CFLAGS) -fvisibility=hidden
OPT_CFLAGS ?= -O2
CFLAGS     ?=
LDFLAGS    ?=

# Build variants: rel (the product), asan (ASan+UBSan), tsan.
SAN_asan   := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
SAN_tsan   := -fsanitize=thread -fno-omit-frame-pointer
SAN_rel    :=
OPT_asan   := -O1
OPT_tsan   := -O1
OPT_rel    := $(OPT_CFLAGS)

# $(call cflags,VARIANT)
cflags = $(BASE_CFLAGS) $(OPT_$(1)) $(SAN_$(1)) $(CFLAGS)
ldflags = $(SAN_$(1)) -pthread $(LDFLAGS)

.PHONY: all check check-asan check-tsan check-rel install clean
all:

include libdao/libdao.mk
-include libdao/fortran/fortran.mk
-include $(wildcard tools/*/*.mk)
-include torch/torch.mk
-include tests/tests.mk
-include kmod/kmod.mk
-include slurm/slurm.mk
-include debian/deb.mk

clean:
	rm -rf $(BUILD)

# Dependency files produced by -MMD.
-include $(shell find $(BUILD)/rel $(BUILD)/asan $(BUILD)/tsan $(BUILD)/nocuda $(BUILD)/bin -name '*.d' -type f 2>/dev/null)
