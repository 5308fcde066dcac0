# kernels/gather_scatter: gather and scatter (gather_scatter.c), the typed
# scatter reducer loops (scatter_combine.c), dynamic-slice and
# dynamic-update-slice (dynamic_slice.c).
libhlorun_core_la_SOURCES += \
	interp/kernels/gather_scatter.c interp/kernels/scatter_combine.c \
	interp/kernels/dynamic_slice.c

check_PROGRAMS += tests/check_gather_scatter
TESTS += tests/check_gather_scatter
tests_check_gather_scatter_SOURCES = tests/check_gather_scatter.c
tests_check_gather_scatter_CFLAGS = $(TEST_CFLAGS)
tests_check_gather_scatter_LDADD = $(TEST_LIBS)

# Whole modules through the public API (parser, executor, thread pool).
check_PROGRAMS += tests/check_gather_scatter_hlo
TESTS += tests/check_gather_scatter_hlo
tests_check_gather_scatter_hlo_SOURCES = tests/check_gather_scatter_hlo.c
tests_check_gather_scatter_hlo_CFLAGS = $(TEST_CFLAGS)
tests_check_gather_scatter_hlo_LDADD = $(TEST_LIBS)
