# kernels/control: control flow, collectives, random numbers, FFT, linear
# algebra, batch norm and dynamic sizes (hli_register_control), their Check
# suites, and the sample modules' golden tests.
libhlorun_core_la_SOURCES += \
	interp/kernels/control.h interp/kernels/control.c \
	interp/kernels/collectives.c interp/kernels/rng.c interp/kernels/fft.c \
	interp/kernels/linalg.c interp/kernels/misc.c
