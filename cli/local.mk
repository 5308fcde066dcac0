# cli/: the hlorun command. It uses only the public API (include/hlorun.h),
# but links the library's code in statically: a program linked with the
# uninstalled libhlorun.la is a libtool wrapper script, which costs ~70 ms of
# CPU on every start (the test suites start hlorun thousands of times). The
# executable exports what libhlorun.so exports (cli/hlorun.dynlist) for the
# handler libraries it loads.
bin_PROGRAMS += hlorun
hlorun_SOURCES = cli/cli.h cli/hlorun.c cli/debug.c cli/casedir.c cli/suite.c cli/crash.c \
	cli/devices.c cli/util.h cli/util.c cli/run.c cli/result.c \
	cli/reference.c cli/determinism.c cli/extract.c cli/snapshot.c cli/reduce.c \
	cli/reduce_golden.h cli/reduce_golden.c \
	cli/mlir_tests.c cli/passes.c cli/report.c
# jansson reads case.json (casedir.c) and writes --report (report.c).
hlorun_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
hlorun_LDADD = libhlorun_core.la $(JANSSON_LIBS)
hlorun_LDFLAGS = -Wl,--dynamic-list=$(srcdir)/cli/hlorun.dynlist $(SAN_EXE_LDFLAGS)
EXTRA_hlorun_DEPENDENCIES = cli/hlorun.dynlist
EXTRA_DIST += cli/hlorun.dynlist
dist_man_MANS += doc/hlorun.1

# Library side of the debugging tools (public API in include/hlorun.h):
# observing runs (trace, check-nan, stats, dumps) and running one
# instruction alone.
libhlorun_core_la_SOURCES += interp/observe.c interp/extract.c interp/snapshot_write.c \
	interp/reduce.c interp/inline.c

# End-to-end tests of the command (tests/cli/run.sh runs ./hlorun on the
# small modules and literal files beside it).
TESTS += tests/cli/run.sh
dist_noinst_SCRIPTS += tests/cli/run.sh
dist_noinst_DATA += tests/cli/add.hlo tests/cli/pair.hlo tests/cli/bad.hlo \
	tests/cli/a.txt tests/cli/b.txt tests/cli/b_s32.txt tests/cli/sum.txt tests/cli/sum_off.txt

# The golden-suite and debugging tools (tests/cli/tools.sh): the sample
# suite samples/suite must pass, the deliberately broken cases of
# tests/suite-broken must fail with the expected report.
TESTS += tests/cli/tools.sh
dist_noinst_SCRIPTS += tests/cli/tools.sh
SUITE_CASES = samples/suite/predict samples/suite/softplus_npy samples/suite/clamp_s32 \
	samples/suite/while_tuple samples/suite/topk_custom_call \
	tests/suite-broken/off_by_one tests/suite-broken/unbound_target
EXTRA_DIST += $(SUITE_CASES) samples/suite/README.md

# Check suite of the library side: value summaries, the run observer,
# extracting one instruction.
check_PROGRAMS += tests/check_tools
TESTS += tests/check_tools
tests_check_tools_SOURCES = tests/check_tools.c
tests_check_tools_CFLAGS = $(TEST_CFLAGS)
tests_check_tools_LDADD = $(TEST_LIBS)

# --graph FILE: the module as a Graphviz picture (cli/graph.c) over the
# public walking API (interp/walk.c).
hlorun_SOURCES += cli/graph.c
libhlorun_core_la_SOURCES += interp/walk.c
TESTS += tests/graph/graph.sh
dist_noinst_SCRIPTS += tests/graph/graph.sh
dist_noinst_DATA += doc/graph-example.svg
