# tests/: Check suites are added by each area's fragment; shared harness here.
#
# testlib: the helpers every Check suite shares (hand-built IR and values, one
# kernel run without an executor, modules through the public API, main()).
# A convenience library built only by `make check`; TEST_LIBS links it into
# every suite.
check_LTLIBRARIES += tests/libtestlib.la
tests_libtestlib_la_SOURCES = tests/testlib.h tests/testlib.c
tests_libtestlib_la_CFLAGS = $(TEST_CFLAGS)

include tests/golden.mk

# --expect with a NaN on one side only, in either direction, is a mismatch;
# NaN against NaN matches.
TESTS += tests/cli/expect-nan.sh
dist_noinst_SCRIPTS += tests/cli/expect-nan.sh

# Mutation testing (issue 36): `make mutants` plants the one-token bugs of
# tests/mutants/*.txt one at a time in a scratch copy and says which test
# kills each (tools/mutants.sh --help). Slow: not part of check or CI.
# MUTANTS_FLAGS passes options (-j 2, --layer parser, --only ID, --no-full).
EXTRA_DIST += tools/mutants.sh tests/mutants
mutants:
	$(SHELL) $(srcdir)/tools/mutants.sh $(MUTANTS_FLAGS)
.PHONY: mutants
