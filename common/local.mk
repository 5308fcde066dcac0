# common/: tables and utilities every layer uses (dtypes, arena, diagnostics,
# numeric conversions).
libhlorun_core_la_SOURCES += \
	common/dtype.def common/dtype.h common/dtype.c \
	common/arena.h common/arena.c common/pager.h \
	common/diag.h common/diag.c \
	common/numeric.h common/version.c \
	common/numeric.c
