# Reliability and hardening (tests/harden/): crash-proof custom calls,
# resource limits, files, fuzz regressions.
check_LTLIBRARIES += tests/libcrashy.la
tests_libcrashy_la_SOURCES = tests/harden/crashy.c
tests_libcrashy_la_CFLAGS = $(AM_CFLAGS) -O0
tests_libcrashy_la_LDFLAGS = -module -avoid-version -rpath /nowhere
TESTS += tests/harden/isolate.sh
dist_noinst_SCRIPTS += tests/harden/isolate.sh
dist_noinst_DATA += tests/harden/call.hlo tests/harden/call_v2.hlo tests/harden/x.txt \
	tests/harden/want.txt tests/harden/want_v2.txt

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
