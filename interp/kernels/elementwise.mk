# kernels/elementwise: this area's sources and tests.
libhlorun_core_la_SOURCES += \
	interp/kernels/elementwise.h interp/kernels/elementwise.c \
	interp/kernels/elementwise_run.c interp/kernels/elementwise_cmp.c \
	interp/kernels/complex_pow.c \
	interp/kernels/convert.c interp/kernels/dispatch.c \
	interp/kernels/simd.h interp/kernels/xla_math.h interp/kernels/vmath.c \
	interp/kernels/vectorize.h

# vmath.c is compiled once more per vector ISA, each copy with its own
# target flags and table name (simd.h); the copy above, without flags, is
# the scalar reference. dispatch.c picks one at run time, so the library
# still runs on CPUs without AVX2.
# Only x86-64 compilers take these flags (configure: HLO_X86_64); elsewhere
# dispatch.c has the scalar table only.
if HLO_X86_64
noinst_LTLIBRARIES += libhlk_vmath_sse4.la libhlk_vmath_avx2.la libhlk_vmath_avx512.la
libhlk_vmath_sse4_la_SOURCES = interp/kernels/vmath.c
libhlk_vmath_sse4_la_CFLAGS = $(AM_CFLAGS) -msse4.1 -DHLK_BUILD_SSE4
libhlk_vmath_avx2_la_SOURCES = interp/kernels/vmath.c
libhlk_vmath_avx2_la_CFLAGS = $(AM_CFLAGS) -mavx2 -mfma -DHLK_BUILD_AVX2
libhlk_vmath_avx512_la_SOURCES = interp/kernels/vmath.c
libhlk_vmath_avx512_la_CFLAGS = $(AM_CFLAGS) -mavx512f -mavx512dq -mfma -DHLK_BUILD_AVX512
libhlorun_core_la_LIBADD += libhlk_vmath_sse4.la libhlk_vmath_avx2.la libhlk_vmath_avx512.la
endif

check_PROGRAMS += tests/check_numeric
TESTS += tests/check_numeric
tests_check_numeric_SOURCES = tests/check_numeric.c
tests_check_numeric_CFLAGS = $(TEST_CFLAGS)
tests_check_numeric_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/check_elementwise
TESTS += tests/check_elementwise
tests_check_elementwise_SOURCES = tests/check_elementwise.c
tests_check_elementwise_CFLAGS = $(TEST_CFLAGS)
tests_check_elementwise_LDADD = $(TEST_LIBS)
