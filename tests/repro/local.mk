# The repro tools of the hlorun command (issue 34): --extract with real
# values (cli/extract.c, hlo_module_extract_around in interp/extract.c),
# --save-snapshot (cli/snapshot.c, interp/snapshot_write.c).
TESTS += tests/repro/extract.sh tests/repro/snapshot.sh
dist_noinst_SCRIPTS += tests/repro/extract.sh tests/repro/snapshot.sh
dist_noinst_DATA += tests/repro/loop.hlo tests/repro/twice.hlo tests/repro/branch.hlo \
	tests/repro/layout.hlo
# --reduce (cli/reduce.c, hlo_module_reduce in interp/reduce.c): the
# planted-NaN module (gen_nan_module.py), a handler crashing only for some
# operand values (crash_when.c), command=, mismatch, error=REGEX, bad input.
check_LTLIBRARIES += tests/libcrashwhen.la
tests_libcrashwhen_la_SOURCES = tests/repro/crash_when.c
# Never sanitizer-instrumented: the test needs the real SIGSEGV.
tests_libcrashwhen_la_CFLAGS = -std=gnu11 $(WARN_CFLAGS) -O0
tests_libcrashwhen_la_LDFLAGS = -module -avoid-version -rpath /nowhere
TESTS += tests/repro/reduce.sh
dist_noinst_SCRIPTS += tests/repro/reduce.sh tests/repro/gen_nan_module.py
dist_noinst_DATA += tests/repro/crash.hlo tests/repro/error.hlo tests/repro/attrs.hlo \
	tests/repro/fused.hlo tests/repro/nanfus.hlo \
	tests/repro/tuple4.hlo tests/repro/nestfus.hlo tests/repro/pickfus.hlo
