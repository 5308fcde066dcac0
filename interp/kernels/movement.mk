# kernels/movement: broadcast, reshape, copy, bitcast, transpose, iota
# (movement.c); slice, concatenate, reverse, pad (slicing.c); the strided
# copy engine the movement and gather/scatter kernels share (strided.c).
libhlorun_core_la_SOURCES += \
	interp/kernels/movement.h interp/kernels/strided.c \
	interp/kernels/movement.c interp/kernels/slicing.c

check_PROGRAMS += tests/check_movement
TESTS += tests/check_movement
# check_movement_numeric_stub.c: temporary, until common/numeric.c is merged.
tests_check_movement_SOURCES = tests/check_movement.c tests/check_movement_util.h \
	tests/check_movement_numeric_stub.c
tests_check_movement_CFLAGS = $(TEST_CFLAGS)
tests_check_movement_LDADD = $(TEST_LIBS)
