# kernels/movement: broadcast, reshape, copy, bitcast, transpose, iota
# (movement.c); slice, concatenate, reverse, pad (slicing.c); the strided
# copy engine the movement and gather/scatter kernels share (strided.c).
libhlorun_core_la_SOURCES += \
	interp/kernels/movement.h interp/kernels/stream.h interp/kernels/stream.c interp/kernels/strided.c \
	interp/kernels/movement.c interp/kernels/slicing.c

check_PROGRAMS += tests/check_movement
TESTS += tests/check_movement
tests_check_movement_SOURCES = tests/check_movement.c
tests_check_movement_CFLAGS = $(TEST_CFLAGS)
tests_check_movement_LDADD = $(TEST_LIBS)
