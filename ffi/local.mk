# ffi/: the custom-call layer: XLA FFI host (API tables, call frames),
# legacy conventions, backend_config attributes, the target registry,
# loading libraries and plugins. The built-in targets live in targets/.
libhlorun_core_la_SOURCES += \
	ffi/ffi.h ffi/internal.h ffi/error.c ffi/types.c ffi/host.c ffi/api.c ffi/pool.c \
	ffi/callframe.c ffi/registry.c ffi/call.c ffi/load.c ffi/legacy.c ffi/attrs.c \
	ffi/members.c ffi/text.c ffi/explain.c
# The backend_config lexer (re2c) is generated into the build tree only (the
# source tree may be read-only, as in distcheck) and never committed; it
# also ships in the tarball, so a tarball builds without re2c.
nodist_libhlorun_core_la_SOURCES += ffi/attrs_lex.c
BUILT_SOURCES += ffi/attrs_lex.c
CLEANFILES += ffi/attrs_lex.c
EXTRA_DIST += ffi/attrs.re ffi/attrs_lex.c
ffi/attrs_lex.c: $(srcdir)/ffi/attrs.re
	$(AM_V_GEN)$(MKDIR_P) ffi && $(RE2C) -W --no-generation-date --no-version -o $@ $(srcdir)/ffi/attrs.re

# Headers for plugin authors.
hloruninclude_HEADERS += include/hlorun/ffi.h include/hlorun/custom_call_status.h

# Tests. The test plugin is a real shared object (dlopen'd by check_ffi);
# check_ffi exports its symbols so the plugin's legacy handlers find
# XlaCustomCallStatusSetFailure in the executable, as in the hlorun command.
check_LTLIBRARIES += tests/libffitest.la
tests_libffitest_la_SOURCES = tests/ffi_test_plugin.c
tests_libffitest_la_LDFLAGS = -module -avoid-version -rpath /nowhere

check_PROGRAMS += tests/check_ffi tests/check_ffi_attrs tests/check_ffi_mem
TESTS += tests/check_ffi tests/check_ffi_attrs tests/check_ffi_mem
tests_check_ffi_SOURCES = tests/check_ffi.c
tests_check_ffi_CFLAGS = $(TEST_CFLAGS) \
	-DFFI_TEST_PLUGIN='"$(abs_builddir)/tests/.libs/libffitest.so"'
tests_check_ffi_LDFLAGS = -export-dynamic
tests_check_ffi_LDADD = $(TEST_LIBS)
tests_check_ffi_attrs_SOURCES = tests/check_ffi_attrs.c
tests_check_ffi_attrs_CFLAGS = $(TEST_CFLAGS)
tests_check_ffi_attrs_LDADD = $(TEST_LIBS)
# Handlers' device memory against the run's memory limit.
tests_check_ffi_mem_SOURCES = tests/check_ffi_mem.c
tests_check_ffi_mem_CFLAGS = $(TEST_CFLAGS)
tests_check_ffi_mem_LDADD = $(TEST_LIBS)

# Handlers written with XLA's own FFI headers and the modules that run them
# (samples/xla-ffi/run.sh XLA_INCLUDE; not part of make check: XLA's headers
# are not shipped).
EXTRA_DIST += \
	samples/xla-ffi/affine.expected samples/xla-ffi/affine.hlo \
	samples/xla-ffi/affine_badattr.hlo samples/xla-ffi/affine_missing.hlo \
	samples/xla-ffi/affine_s32.hlo samples/xla-ffi/async.expected samples/xla-ffi/async.hlo \
	samples/xla-ffi/async_fail.hlo samples/xla-ffi/attrs.expected samples/xla-ffi/attrs.hlo \
	samples/xla-ffi/attrs_quoted.hlo samples/xla-ffi/counter.expected \
	samples/xla-ffi/counter.hlo samples/xla-ffi/dict.expected samples/xla-ffi/dict.hlo \
	samples/xla-ffi/fail.expected samples/xla-ffi/fail.hlo samples/xla-ffi/handlers.cc \
	samples/xla-ffi/legacy.cc samples/xla-ffi/lg1.expected samples/xla-ffi/lg1.hlo \
	samples/xla-ffi/lg2.expected samples/xla-ffi/lg2.hlo samples/xla-ffi/lg3.expected \
	samples/xla-ffi/lg3.hlo samples/xla-ffi/lg3_empty.hlo samples/xla-ffi/minmax.expected \
	samples/xla-ffi/minmax.hlo samples/xla-ffi/pool.expected samples/xla-ffi/pool.hlo \
	samples/xla-ffi/pos4.txt samples/xla-ffi/remaining.expected samples/xla-ffi/remaining.hlo \
	samples/xla-ffi/run.sh samples/xla-ffi/runinfo.expected samples/xla-ffi/runinfo.hlo \
	samples/xla-ffi/s4.expected samples/xla-ffi/s4.hlo samples/xla-ffi/s4i.txt \
	samples/xla-ffi/scratch.expected samples/xla-ffi/scratch.hlo \
	samples/xla-ffi/static_reg.cc samples/xla-ffi/token.expected samples/xla-ffi/token.hlo \
	samples/xla-ffi/types.expected samples/xla-ffi/types.hlo samples/xla-ffi/x4.txt \
	samples/xla-ffi/xs.expected samples/xla-ffi/xs.hlo
