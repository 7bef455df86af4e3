# The Fortran interface of libdao (libdao/fortran/): module dao, built with
# gfortran into libdao_fortran.a (the module's own procedures; link it before
# -ldao) and dao.mod. Skipped when gfortran is not installed.
#
# dao.mod is gfortran's format, tied to its module version: it is installed
# under $(FMODDIR), by default $(PREFIX)/include/dao/gfortran
# (Documentation/fortran.md).

DAO_FC      ?= gfortran
FMODDIR     ?= $(PREFIX)/include/dao/gfortran
DAO_FFLAGS  := -std=f2008 -Wall -Wextra -Werror -fPIC -g -O2
HAVE_FC     := $(shell command -v $(DAO_FC) 2>/dev/null)
FORTRAN_DIR := $(BUILD)/fortran
LIBDAO_FORTRAN_A := $(BUILD)/lib/libdao_fortran.a

ifneq ($(HAVE_FC),)
# -J: the .mod lands next to the object, nowhere in the source tree.
$(FORTRAN_DIR)/dao.o: libdao/fortran/dao.f90
	@mkdir -p $(@D)
	$(DAO_FC) $(DAO_FFLAGS) -J$(FORTRAN_DIR) -c $< -o $@
$(FORTRAN_DIR)/dao.mod: $(FORTRAN_DIR)/dao.o

$(LIBDAO_FORTRAN_A): $(FORTRAN_DIR)/dao.o
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

all: $(LIBDAO_FORTRAN_A)

install: install-fortran
.PHONY: install-fortran
install-fortran: $(LIBDAO_FORTRAN_A)
	install -d $(DESTDIR)$(FMODDIR) $(DESTDIR)$(LIBDIR)
	install -m 0644 $(FORTRAN_DIR)/dao.mod $(DESTDIR)$(FMODDIR)/dao.mod
	install -m 0644 $(LIBDAO_FORTRAN_A) $(DESTDIR)$(LIBDIR)/libdao_fortran.a
endif
