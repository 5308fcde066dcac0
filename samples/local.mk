# samples/: small modules used in the documentation, and example custom-call
# handlers in C (samples/plugins/) built against include/hlorun/*.h. The
# plugins are built by `make check` (as the test suite runs them) but never
# installed; tests/ffi-samples.sh runs every ffi_*.hlo module with its
# handler and compares with the golden output next to it.
SAMPLE_PLUGIN_FLAGS = -module -avoid-version -rpath /nowhere
check_LTLIBRARIES += samples/plugins/libaffine.la samples/plugins/libwindow_sum.la \
	samples/plugins/librepeat_v3.la samples/plugins/libcounter_plugin.la
samples_plugins_libaffine_la_SOURCES = samples/plugins/affine.c
samples_plugins_libaffine_la_LDFLAGS = $(SAMPLE_PLUGIN_FLAGS)
samples_plugins_libwindow_sum_la_SOURCES = samples/plugins/window_sum.c
samples_plugins_libwindow_sum_la_LDFLAGS = $(SAMPLE_PLUGIN_FLAGS)
samples_plugins_librepeat_v3_la_SOURCES = samples/plugins/repeat_v3.c
samples_plugins_librepeat_v3_la_LDFLAGS = $(SAMPLE_PLUGIN_FLAGS)
samples_plugins_libcounter_plugin_la_SOURCES = samples/plugins/counter_plugin.c
samples_plugins_libcounter_plugin_la_LDFLAGS = $(SAMPLE_PLUGIN_FLAGS)

FFI_SAMPLES = samples/ffi_affine samples/ffi_affine_quoted samples/ffi_window_sum \
	samples/ffi_repeat_v3 samples/ffi_counter samples/ffi_builtins
dist_noinst_DATA += $(FFI_SAMPLES:=.hlo) $(FFI_SAMPLES:=.expected) doc/custom-calls.md
TESTS += tests/ffi-samples.sh
dist_noinst_SCRIPTS += tests/ffi-samples.sh
