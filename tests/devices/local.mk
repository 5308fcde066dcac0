# Multi-device runs end to end (tests/devices/run.sh): threaded, and under
# mpirun -np 2 / -np 4 when Open MPI is installed.
TESTS += tests/devices/run.sh
dist_noinst_SCRIPTS += tests/devices/run.sh
EXTRA_DIST += tests/devices/collectives.hlo tests/devices/collectives.expected \
	tests/devices/modes.hlo tests/devices/modes.expected tests/devices/forms.hlo \
	tests/devices/forms.expected tests/devices/sharded.hlo tests/devices/sharded.in0.txt \
	tests/devices/sharded.expected tests/devices/ident.hlo tests/devices/ident.in0.txt \
	tests/devices/manual.hlo tests/devices/manual.in0.txt tests/devices/manual.expected \
	tests/devices/manual_partial.mlir tests/devices/manual_partial.expected \
	tests/devices/manual_gspmd.mlir tests/devices/manual_gspmd.expected \
	tests/devices/manual_nested.mlir tests/devices/manual_nested.hlo tests/devices/manual_nested.expected \
	tests/devices/manual_sdy.hlo tests/devices/manual_sdy.in0.txt tests/devices/manual_sdy.in1.txt \
	tests/devices/manual_sdy.expected tests/devices/manual_sdy_nested.hlo \
	tests/devices/skip_in_branch.hlo tests/devices/recv_never_sent.hlo \
	tests/devices/deadlock.hlo tests/devices/inferred.hlo tests/devices/memory.hlo \
	tests/devices/validation.hlo tests/devices/validation.expected \
	tests/devices/mesh.hlo tests/devices/mesh_explicit.hlo tests/devices/mesh.expected \
	tests/devices/chain.hlo tests/devices/scatter_dims.hlo tests/devices/scatter_dims.expected \
	tests/devices/inplace.hlo tests/devices/inplace.expected tests/devices/inplace_oob_out.hlo \
	tests/devices/inplace_oob_in.hlo tests/devices/inplace_too_big.hlo tests/devices/inplace_sets.hlo \
	tests/devices/mesh64.hlo \
	samples/spmd/mlp_global.hlo samples/spmd/mlp_2x4.hlo samples/spmd/mlp_2x4.expected.txt \
	samples/spmd/mlp_shmap.mlir samples/spmd/mlp_sdy.mlir \
	samples/spmd/mlp.in0.txt samples/spmd/mlp.in1.txt samples/spmd/mlp.in2.txt \
	samples/spmd/mlp.in3.txt samples/spmd/make_golden.py

# The pieces: groups of the four modes, shardings and tiles, splitting and
# assembling values, hlo_execute_devices (tests/check_devices.c).
check_PROGRAMS += tests/check_devices
TESTS += tests/check_devices
tests_check_devices_SOURCES = tests/check_devices.c
tests_check_devices_CFLAGS = $(TEST_CFLAGS)
tests_check_devices_LDADD = $(TEST_LIBS)

# tests/devices/: multi-device golden cases taken from XLA's collective tests
# (xla/, made by tools/golden/gen_devices.py) and error cases (errors/), run
# by tests/devices/xla/run.sh: threaded, then under mpirun when Open MPI is
# installed. Included from Makefile.am (include tests/devices/local.mk).
TESTS += tests/devices/xla/run.sh
EXTRA_DIST += tests/devices/xla tests/devices/errors tools/golden/gen_devices.py
# The harness writes run.sh.log and run.sh.trs beside run.sh, inside the case
# directory that EXTRA_DIST copies whole: keep them out of the tarball.
dist-hook:
	rm -f $(distdir)/tests/devices/xla/run.sh.log $(distdir)/tests/devices/xla/run.sh.trs
