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
