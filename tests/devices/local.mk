# Multi-device runs end to end (tests/devices/run.sh): threaded, and under
# mpirun -np 2 / -np 4 when Open MPI is installed.
TESTS += tests/devices/run.sh
dist_noinst_SCRIPTS += tests/devices/run.sh
EXTRA_DIST += tests/devices/collectives.hlo tests/devices/collectives.expected \
	tests/devices/modes.hlo tests/devices/modes.expected tests/devices/forms.hlo \
	tests/devices/forms.expected tests/devices/sharded.hlo tests/devices/sharded.in0.txt \
	tests/devices/sharded.expected tests/devices/ident.hlo tests/devices/ident.in0.txt \
	tests/devices/skip_in_branch.hlo tests/devices/recv_never_sent.hlo \
	tests/devices/deadlock.hlo tests/devices/inferred.hlo tests/devices/memory.hlo \
	samples/spmd/mlp_global.hlo samples/spmd/mlp_2x4.hlo samples/spmd/mlp_2x4.expected.txt \
	samples/spmd/mlp.in0.txt samples/spmd/mlp.in1.txt samples/spmd/mlp.in2.txt \
	samples/spmd/mlp.in3.txt samples/spmd/make_golden.py

# The pieces: groups of the four modes, shardings and tiles, splitting and
# assembling values, hlo_execute_devices (tests/check_devices.c).
check_PROGRAMS += tests/check_devices
TESTS += tests/check_devices
tests_check_devices_SOURCES = tests/check_devices.c
tests_check_devices_CFLAGS = $(TEST_CFLAGS)
tests_check_devices_LDADD = $(TEST_LIBS)
