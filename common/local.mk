# common/: tables and utilities every layer uses (dtypes, arena, diagnostics,
# numeric conversions).
libhlorun_core_la_SOURCES += \
	common/dtype.def common/dtype.h common/dtype.c \
	common/arena.h common/arena.c common/pager.h \
	common/diag.h common/diag.c common/text.h common/text.c \
	common/numeric.h common/version.c \
	common/block.h common/block.c \
	common/numeric.c

check_PROGRAMS += tests/check_text
TESTS += tests/check_text
tests_check_text_SOURCES = tests/check_text.c
tests_check_text_CFLAGS = $(TEST_CFLAGS)
tests_check_text_LDADD = $(TEST_LIBS)
