# interp/: executor, values, I/O of values, public API implementation.
libhlorun_core_la_SOURCES += \
	interp/interp.h interp/exec.h interp/registry.c interp/custom_call.c \
	interp/value.c interp/services.c

include interp/kernels/elementwise.mk
include interp/kernels/movement.mk
include interp/kernels/gather_scatter.mk
include interp/kernels/dot.mk
include interp/kernels/reduce.mk
include interp/kernels/control.mk
