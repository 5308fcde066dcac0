# targets/cpu/: jaxlib's CPU linear-algebra custom calls (lapack_*_ffi) on
# Debian's LAPACK (configure: --with-lapack / --without-lapack). Without
# LAPACK the same sources build and the targets fail at the call.
libhlorun_core_la_SOURCES += targets/cpu/cpu.h targets/cpu/register.c targets/cpu/call.c \
	targets/cpu/routines.c targets/cpu/factor.c targets/cpu/spectral.c targets/cpu/solve.c \
	targets/cpu/legacy.c targets/cpu/tridiagonal.c targets/cpu/sparse.c
noinst_HEADERS += targets/cpu/targets.def
# (no LAPACK_LIBS: routines.c loads LAPACK on the first call)
AM_CPPFLAGS += $(LAPACK_CFLAGS)
include tests/lapack/local.mk
