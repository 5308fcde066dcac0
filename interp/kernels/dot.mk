# kernels/dot: dot and convolution on a blocked GEMM.
#
# gemm_ukr.c holds the micro-kernels written once with vector extensions; it
# is compiled once per instruction set, each build in its own convenience
# library because automake gives per-object flags only per target. The
# driver (gemm.c) picks one at run time, so the baseline build still runs on
# any x86-64, and on other CPUs only the scalar build exists. The AVX-512
# build also uses AVX512DQ (vpmullq, the 64-bit integer multiply) and
# AVX512BW (vpmaddwd); gemm.c requires all three before choosing it.
libhlorun_core_la_SOURCES += \
	interp/kernels/dot.c interp/kernels/scaled_dot.c interp/kernels/conv.c interp/kernels/conv_geometry.c interp/kernels/conv_rows.c interp/kernels/conv_dw.c \
	interp/kernels/conv.h \
	interp/kernels/gemm.h interp/kernels/narrow.h interp/kernels/gemm.c interp/kernels/gemm_cvt.c \
	interp/kernels/gemv.c

noinst_LTLIBRARIES += libhlk_gemm_scalar.la
libhlk_gemm_scalar_la_SOURCES = interp/kernels/gemm_ukr.c
libhlk_gemm_scalar_la_CFLAGS = $(AM_CFLAGS) -DHLK_UKR_ISA=0
libhlorun_core_la_LIBADD += libhlk_gemm_scalar.la
# The vector builds need x86-64 compiler flags (configure: HLO_X86_64);
# elsewhere gemm.c knows of the scalar micro-kernels only.
if HLO_X86_64
noinst_LTLIBRARIES += libhlk_gemm_avx2.la libhlk_gemm_avx512.la
libhlk_gemm_avx2_la_SOURCES = interp/kernels/gemm_ukr.c
libhlk_gemm_avx2_la_CFLAGS = $(AM_CFLAGS) -DHLK_UKR_ISA=1 -mavx2 -mfma
libhlk_gemm_avx512_la_SOURCES = interp/kernels/gemm_ukr.c
libhlk_gemm_avx512_la_CFLAGS = $(AM_CFLAGS) -DHLK_UKR_ISA=2 -mavx512f -mavx512dq -mavx512bw -mavx2 -mfma
libhlorun_core_la_LIBADD += libhlk_gemm_avx2.la libhlk_gemm_avx512.la
endif

check_PROGRAMS += tests/check_dot tests/check_conv
TESTS += tests/check_dot tests/check_conv
tests_check_dot_SOURCES = tests/check_dot.c
tests_check_dot_CFLAGS = $(TEST_CFLAGS)
tests_check_dot_LDADD = $(TEST_LIBS)
tests_check_conv_SOURCES = tests/check_conv.c
tests_check_conv_CFLAGS = $(TEST_CFLAGS)
tests_check_conv_LDADD = $(TEST_LIBS)
# scaled-dot against numpy's values after XLA's definition, and its errors.
TESTS += tests/scaled_dot/run.sh
dist_noinst_SCRIPTS += tests/scaled_dot/run.sh tools/gen_scaled_dot_cases.py
EXTRA_DIST += tests/scaled_dot/cases
