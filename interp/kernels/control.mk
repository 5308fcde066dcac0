# kernels/control: control flow, collectives, random numbers, FFT, linear
# algebra, batch norm and dynamic sizes, their Check suites, and the sample
# modules' golden tests. register.h lists every kernel file's registrar
# (called by interp/registry.c).
libhlorun_core_la_SOURCES += \
	interp/kernels/register.h interp/kernels/control.h interp/kernels/control.c \
	interp/kernels/collectives.c interp/kernels/manual.h interp/kernels/manual.c interp/kernels/permute_inplace.c interp/kernels/rng.c interp/kernels/fft.c \
	interp/kernels/linalg.c interp/kernels/batch_norm.c \
	interp/kernels/dynamic_dims.c interp/kernels/no_kernel.c

check_PROGRAMS += tests/check_control tests/check_rng tests/check_fft tests/check_linalg
TESTS += tests/check_control tests/check_rng tests/check_fft tests/check_linalg
tests_check_control_SOURCES = tests/check_control.c
tests_check_control_CFLAGS = $(TEST_CFLAGS)
tests_check_control_LDADD = $(TEST_LIBS)
tests_check_rng_SOURCES = tests/check_rng.c
tests_check_rng_CFLAGS = $(TEST_CFLAGS)
tests_check_rng_LDADD = $(TEST_LIBS)
tests_check_fft_SOURCES = tests/check_fft.c
tests_check_fft_CFLAGS = $(TEST_CFLAGS)
tests_check_fft_LDADD = $(TEST_LIBS)
tests_check_linalg_SOURCES = tests/check_linalg.c
tests_check_linalg_CFLAGS = $(TEST_CFLAGS)
tests_check_linalg_LDADD = $(TEST_LIBS)

# The sample modules (samples/*.hlo, realistic XLA-style dumps) with their
# inputs and numpy-computed goldens, run end to end by tests/control_samples.sh.
TESTS += tests/control_samples.sh
EXTRA_DIST += tests/control_samples.sh samples/goldens.py \
	samples/quickstart.hlo samples/quickstart.in0.txt samples/quickstart.expected.txt \
	samples/mlp_train_step.hlo samples/mlp_train_step.in0.txt samples/mlp_train_step.in1.txt \
	samples/mlp_train_step.in2.txt samples/mlp_train_step.in3.txt \
	samples/mlp_train_step.expected.txt \
	samples/scan.hlo samples/scan.in0.txt samples/scan.expected.txt \
	samples/conditional_model.hlo samples/conditional_model.in0.txt \
	samples/conditional_model.in1.txt samples/conditional_model.expected.txt \
	samples/cpu_after_opt.hlo samples/cpu_after_opt.in0.txt samples/cpu_after_opt.in1.txt \
	samples/cpu_after_opt.expected.txt
