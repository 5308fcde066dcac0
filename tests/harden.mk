# Reliability and hardening (tests/harden/): crash-proof custom calls,
# resource limits, files, fuzz regressions.
check_LTLIBRARIES += tests/libcrashy.la
tests_libcrashy_la_SOURCES = tests/harden/crashy.c
# Never sanitizer-instrumented: UBSan would catch the NULL store and abort,
# and the test checks that a real SIGSEGV is reported as one.
tests_libcrashy_la_CFLAGS = -std=gnu11 $(WARN_CFLAGS) -O0
tests_libcrashy_la_LDFLAGS = -module -avoid-version -rpath /nowhere
TESTS += tests/harden/isolate.sh tests/harden/files.sh
dist_noinst_SCRIPTS += tests/harden/isolate.sh tests/harden/files.sh
dist_noinst_DATA += tests/harden/call.hlo tests/harden/call_v2.hlo tests/harden/x.txt \
	tests/harden/want.txt tests/harden/want_v2.txt tests/harden/endless.hlo

# Fuzz regressions: each fuzz target linked with a replay driver instead of
# libFuzzer, run on the inputs that once failed it.
FUZZ_REPLAY = tests/fuzz_replay_parse tests/fuzz_replay_values tests/fuzz_replay_attrs \
	tests/fuzz_replay_run
check_PROGRAMS += $(FUZZ_REPLAY)
tests_fuzz_replay_parse_SOURCES = tests/harden/fuzz_replay.c fuzz/fuzz_parse.c
tests_fuzz_replay_parse_LDADD = libhlorun_core.la
tests_fuzz_replay_values_SOURCES = tests/harden/fuzz_replay.c fuzz/fuzz_values.c
tests_fuzz_replay_values_LDADD = libhlorun_core.la
tests_fuzz_replay_attrs_SOURCES = tests/harden/fuzz_replay.c fuzz/fuzz_attrs.c
tests_fuzz_replay_attrs_LDADD = libhlorun_core.la
tests_fuzz_replay_run_SOURCES = tests/harden/fuzz_replay.c fuzz/fuzz_run.c
tests_fuzz_replay_run_LDADD = libhlorun_core.la
TESTS += tests/harden/fuzz-regressions.sh
dist_noinst_SCRIPTS += tests/harden/fuzz-regressions.sh
EXTRA_DIST += tests/fuzz-regressions

# Limits (iterations, time, recursion, call depth, memory incl. scratch),
# literal nesting, and saving without partial files, through the public API.
check_PROGRAMS += tests/check_harden
TESTS += tests/check_harden
tests_check_harden_SOURCES = tests/check_harden.c
tests_check_harden_CFLAGS = $(TEST_CFLAGS)
tests_check_harden_LDADD = $(TEST_LIBS)

# `make valgrind`: every test program, every sample module and command-line
# error paths under valgrind memcheck (slow: not part of `make check`).
# VALGRIND_ONLY="check_core ..." / VALGRIND_PARTS="programs samples cli"
# narrow it (see the script).
dist_noinst_SCRIPTS += tests/harden/valgrind.sh
dist_noinst_DATA += tests/harden/valgrind.supp
valgrind: $(check_PROGRAMS) $(check_LTLIBRARIES) hlorun
	srcdir=$(srcdir) $(SHELL) $(srcdir)/tests/harden/valgrind.sh $(check_PROGRAMS)
.PHONY: valgrind
