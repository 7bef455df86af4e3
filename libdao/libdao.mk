# libdao: libdao.so (with soname), libdao.a, dao.pc, for each variant an
# archive tests link against.
#
# libdao/src/ holds one folder per layer (Documentation/design.md); the
# CUDA backends under backend/cuda/ are added by libdao/cuda.mk.

# The simulated backend and the trace reader are not part of the product:
# they go into libdao-sim.a (dao_sim.h, dao_trace.h) for daosim and the tests.
LIBDAO_SIM_SRCS := libdao/src/backend/sim.c libdao/src/trace/trace_read.c
LIBDAO_SRCS := $(sort $(filter-out libdao/src/backend/cuda/% $(LIBDAO_SIM_SRCS),\
                 $(wildcard libdao/src/*/*.c)))

# $(call libdao_objs,VARIANT)
libdao_objs = $(patsubst libdao/src/%.c,$(BUILD)/$(1)/obj/libdao/%.o,$(LIBDAO_SRCS))
libdao_sim_objs = $(patsubst libdao/src/%.c,$(BUILD)/$(1)/obj/libdao/%.o,$(LIBDAO_SIM_SRCS))

define libdao_variant
$(BUILD)/$(1)/obj/libdao/%.o: libdao/src/%.c
	@mkdir -p $$(@D)
	$$(CC) $$(call cflags,$(1)) $$(LIBDAO_OBJ_CFLAGS) -MMD -MP -c $$< -o $$@

$(BUILD)/$(1)/lib/libdao.a: $(call libdao_objs,$(1))
	@mkdir -p $$(@D)
	rm -f $$@
	$$(AR) rcs $$@ $$^

$(BUILD)/$(1)/lib/libdao-sim.a: $(call libdao_sim_objs,$(1))
	@mkdir -p $$(@D)
	rm -f $$@
	$$(AR) rcs $$@ $$^
endef
$(foreach v,rel asan tsan,$(eval $(call libdao_variant,$(v))))

LIBDAO_A  := $(BUILD)/rel/lib/libdao.a
LIBDAO_SIM_A := $(BUILD)/rel/lib/libdao-sim.a

# libdao without the CUDA backends, for static programs that run where no
# CUDA runtime is (the module's tests in a VM).
LIBDAO_NOCUDA_A := $(BUILD)/nocuda/lib/libdao.a
$(BUILD)/nocuda/obj/libdao/%.o: libdao/src/%.c
	@mkdir -p $(@D)
	$(CC) $(filter-out -DDAO_HAVE_CUDA,$(call cflags,rel)) $(LIBDAO_OBJ_CFLAGS) -MMD -MP -c $< -o $@

$(LIBDAO_NOCUDA_A): $(call libdao_objs,nocuda)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^
LIBDAO_SO := $(BUILD)/lib/libdao.so.$(VERSION)
LIBDAO_LIBS := -pthread -lm

# libdao.map: the exported functions (exactly dao.h's) and their version
# node; `make check-abi` (libdao/abi.mk) holds the result to it.
$(LIBDAO_SO): $(call libdao_objs,rel) libdao/libdao.map
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,libdao.so.$(SOVERSION) -Wl,--no-undefined \
		-Wl,--version-script,libdao/libdao.map -o $@ $(filter %.o,$^) $(LIBDAO_LIBS) $(LDFLAGS)
	ln -sf libdao.so.$(VERSION) $(BUILD)/lib/libdao.so.$(SOVERSION)
	ln -sf libdao.so.$(SOVERSION) $(BUILD)/lib/libdao.so

$(BUILD)/lib/libdao.a: $(LIBDAO_A)
	@mkdir -p $(@D)
	cp $< $@

$(BUILD)/lib/libdao-sim.a: $(LIBDAO_SIM_A)
	@mkdir -p $(@D)
	cp $< $@

# What a static link of libdao.a needs besides it (CUDA's runtime when the
# CUDA backends are built: HAVE_CUDA comes from libdao/cuda.mk).
DAO_PC_LIBS_PRIVATE = -pthread -lm $(if $(HAVE_CUDA),-L$(CUDA_LIBDIR) -Wl$(,)-rpath$(,)$(CUDA_LIBDIR) -lcudart)
, := ,

# libdir relative to the prefix where it lies under it, so that dao.pc moves
# with --define-variable=prefix= (a staged DESTDIR tree).
DAO_PC_LIBDIR = $(patsubst $(PREFIX)/%,$${exec_prefix}/%,$(LIBDIR))

$(BUILD)/lib/pkgconfig/dao.pc: libdao/dao.pc.in Makefile libdao/libdao.mk libdao/cuda.mk
	@mkdir -p $(@D)
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(DAO_PC_LIBDIR)|g' -e 's|@VERSION@|$(VERSION)|g' \
	    -e 's|@LIBS_PRIVATE@|$(DAO_PC_LIBS_PRIVATE)|g' $< > $@

all: $(LIBDAO_SO) $(BUILD)/lib/libdao.a $(BUILD)/lib/libdao-sim.a $(BUILD)/lib/pkgconfig/dao.pc

install: all
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(LIBDIR)/pkgconfig
	install -m 0644 libdao/include/dao.h libdao/include/dao_publish.h libdao/include/dao_trace.h \
		libdao/include/dao_sim.h $(DESTDIR)$(PREFIX)/include/
	install -m 0755 $(LIBDAO_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf libdao.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libdao.so.$(SOVERSION)
	ln -sf libdao.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libdao.so
	install -m 0644 $(BUILD)/lib/libdao.a $(DESTDIR)$(LIBDIR)/libdao.a
	install -m 0644 $(BUILD)/lib/libdao-sim.a $(DESTDIR)$(LIBDIR)/libdao-sim.a
	install -m 0644 $(BUILD)/lib/pkgconfig/dao.pc $(DESTDIR)$(LIBDIR)/pkgconfig/dao.pc
include libdao/cuda.mk
