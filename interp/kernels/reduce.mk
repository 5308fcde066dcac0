# kernels/reduce: reduce, reduce-window, select-and-scatter, sort, topk, and
# the shared reducer helpers (typed folds, computation fallback, matchers).
libhlorun_core_la_SOURCES += \
	interp/kernels/reducer.h \
	interp/kernels/reduce.c interp/kernels/reduce_window.c \
	interp/kernels/select_scatter.c interp/kernels/sort.c

check_PROGRAMS += tests/check_reduce tests/check_sort tests/check_reduce_hlo
TESTS += tests/check_reduce tests/check_sort tests/check_reduce_hlo
tests_check_reduce_SOURCES = tests/check_reduce.c
tests_check_reduce_CFLAGS = $(TEST_CFLAGS)
tests_check_reduce_LDADD = $(TEST_LIBS)
tests_check_sort_SOURCES = tests/check_sort.c
tests_check_sort_CFLAGS = $(TEST_CFLAGS)
tests_check_sort_LDADD = $(TEST_LIBS)
tests_check_reduce_hlo_SOURCES = tests/check_reduce_hlo.c
tests_check_reduce_hlo_CFLAGS = $(TEST_CFLAGS)
tests_check_reduce_hlo_LDADD = $(TEST_LIBS)
