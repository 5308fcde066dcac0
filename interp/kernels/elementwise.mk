# kernels/elementwise: this area's sources and tests.
libhlorun_core_la_SOURCES += interp/kernels/elementwise.c

check_PROGRAMS += tests/check_numeric
TESTS += tests/check_numeric
tests_check_numeric_SOURCES = tests/check_numeric.c
tests_check_numeric_CFLAGS = $(TEST_CFLAGS)
tests_check_numeric_LDADD = $(TEST_LIBS)
