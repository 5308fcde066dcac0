# interp/: executor, values, I/O of values, public API implementation.
libhlorun_core_la_SOURCES += \
	interp/interp.h interp/exec.h interp/registry.c interp/custom_call.c \
	interp/value.c interp/services.c

# Executor core: plans, the run loop, the thread pool.
libhlorun_core_la_SOURCES += \
	interp/plan.h interp/plan.c interp/exec.c interp/pool.c \
	interp/fuse.h interp/fuse_prog.h interp/fuse.c interp/fuse_run.c \
	interp/fuse_table.c interp/fuse_chain.h interp/fuse_chain.c
# Resource limits and crash-proof (isolated) custom calls.
libhlorun_core_la_SOURCES += interp/limits.c interp/isolate.h interp/isolate.c
# Values in files: .npy/.npz (zlib inflates deflated .npz members), literal text.
libhlorun_core_la_SOURCES += \
	interp/valio.h interp/npy.c interp/literal_io.c
libhlorun_core_la_LIBADD += $(ZLIB_LIBS)
# Public API (include/hlorun.h).
libhlorun_core_la_SOURCES += \
	interp/api.h interp/context.h interp/context.c interp/bind.c interp/files.c \
	interp/module.c interp/buffers.c interp/inputs.c interp/run.c interp/proto_io.c interp/compare.c \
	interp/mlir_tests.c
# Comparing two runs: counterparts, the first divergence, the module carried
# in f64 (diverge.h).
libhlorun_core_la_SOURCES += interp/diverge.h interp/counterpart.c interp/diverge.c interp/held.c \
	interp/determinism.c interp/widen.c

include interp/kernels/elementwise.mk
include interp/kernels/movement.mk
include interp/kernels/gather_scatter.mk
include interp/kernels/dot.mk
include interp/kernels/reduce.mk
include interp/kernels/control.mk

# Check suites of the core: executor + pool (check_core), value I/O and the
# public API (check_io).
check_PROGRAMS += tests/check_core tests/check_io
TESTS += tests/check_core tests/check_io
tests_check_core_SOURCES = tests/check_core.c
tests_check_core_CFLAGS = $(TEST_CFLAGS)
tests_check_core_LDADD = $(TEST_LIBS)
tests_check_io_SOURCES = tests/check_io.c
tests_check_io_CFLAGS = $(TEST_CFLAGS)
tests_check_io_LDADD = $(TEST_LIBS)

# Fused evaluation of elementwise chains (fuse.c, fuse_run.c, fuse_table.c).
check_PROGRAMS += tests/check_fuse
TESTS += tests/check_fuse
tests_check_fuse_SOURCES = tests/check_fuse.c
tests_check_fuse_CFLAGS = $(TEST_CFLAGS)
tests_check_fuse_LDADD = $(TEST_LIBS)
# Fusion never changes a result: random row-reduction modules, fused vs not.
TESTS += tests/fusion-diff.sh
EXTRA_DIST += tests/fusion-diff.sh tests/fusion_diff.py

# The comparison engine (diverge.h): ulp distances, parts under a memory
# budget (check_diverge); the command's --ulp and --reference (tests/diverge/run.sh).
check_PROGRAMS += tests/check_diverge
TESTS += tests/check_diverge tests/diverge/run.sh tests/diverge/precision.sh tests/diverge/passes.sh \
	tests/diverge/report.sh tests/diverge/md.sh
tests_check_diverge_SOURCES = tests/check_diverge.c
tests_check_diverge_CFLAGS = $(TEST_CFLAGS)
tests_check_diverge_LDADD = $(TEST_LIBS)
dist_noinst_SCRIPTS += tests/diverge/run.sh tests/diverge/precision.sh tests/diverge/passes.sh tests/lib/harness.sh \
	tests/diverge/report.sh tests/diverge/md.sh
EXTRA_DIST += tests/diverge/jsonfields.py
# Many devices (tests/diverge/md.sh): modules on 2 replicas, pass dumps on 2 partitions.
dist_noinst_DATA += tests/diverge/md/ok.hlo tests/diverge/md/dev1.hlo tests/diverge/md/both.hlo \
	tests/diverge/md/pre.hlo tests/diverge/md/p2.txt tests/diverge/md/cc.hlo \
	tests/diverge/md/passes/module_0001.jit_g.before_optimizations.txt \
	tests/diverge/md/passes/module_0001.jit_g.0000.spmd.after_spmd-partitioning.before_algsimp.txt \
	tests/diverge/md/passes/module_0001.jit_g.0001.simplification.after_algsimp.before_cse.txt \
	tests/diverge/md/passes/module_0001.jit_g.cpu_after_optimizations.txt \
	tests/diverge/md/passes_spmd/module_0001.jit_g.before_optimizations.txt \
	tests/diverge/md/passes_spmd/module_0001.jit_g.0000.spmd.after_spmd-partitioning.before_algsimp.txt \
	tests/diverge/md/passes_shmap/module_0001.jit_g.before_optimizations.txt \
	tests/diverge/md/passes_shmap/module_0001.jit_g.0000.spmd.after_spmd-partitioning.before_algsimp.txt
dist_noinst_DATA += tests/diverge/v1.hlo tests/diverge/v2.hlo tests/diverge/x3.txt \
	tests/diverge/x4.txt tests/diverge/loop_ok.hlo tests/diverge/loop_bad.hlo \
	tests/diverge/after_opt_bug.hlo tests/diverge/ref_s32.hlo tests/diverge/ref_fails.hlo \
	tests/diverge/copy_f32.hlo tests/diverge/copy_f16.hlo tests/diverge/copy_bf16.hlo \
	samples/cpu_before_opt.hlo doc/divergence.md tests/diverge/loop_cc.hlo \
	tests/diverge/f16_overflow.hlo tests/diverge/bf16_cancel.hlo tests/diverge/f16_convert.hlo \
	tests/diverge/keep_types.hlo
# Hand-made XLA pass dumps of one module (--passes, tests/diverge/passes.sh).
dist_noinst_DATA += \
	tests/diverge/passes_bad/module_0003.jit_f.0000.pipeline-start.after_pipeline-start.before_algsimp.txt \
	tests/diverge/passes_bad/module_0003.jit_f.0001.simplification.after_algsimp.before_cse.txt \
	tests/diverge/passes_bad/module_0003.jit_f.0002.simplification.after_cse.before_fusion.txt \
	tests/diverge/passes_bad/module_0003.jit_f.0003.fusion.after_fusion.before_pipeline-end.txt \
	tests/diverge/passes_bad/module_0003.jit_f.before_optimizations.txt \
	tests/diverge/passes_bad/module_0003.jit_f.cpu_after_optimizations-buffer-assignment.txt \
	tests/diverge/passes_bad/module_0003.jit_f.cpu_after_optimizations.txt \
	tests/diverge/passes_ok/module_0003.jit_f.0000.pipeline-start.after_pipeline-start.before_algsimp.txt \
	tests/diverge/passes_ok/module_0003.jit_f.0001.simplification.after_algsimp.before_cse.txt \
	tests/diverge/passes_ok/module_0003.jit_f.0002.simplification.after_cse.before_layout.txt \
	tests/diverge/passes_ok/module_0003.jit_f.0003.layout.after_layout.before_fusion.txt \
	tests/diverge/passes_ok/module_0003.jit_f.0004.fusion.after_fusion.before_pipeline-end.txt \
	tests/diverge/passes_ok/module_0003.jit_f.before_optimizations.txt \
	tests/diverge/passes_ok/module_0003.jit_f.cpu_after_optimizations.txt
# Handlers --reference-custom-call sets against each other (built, not installed).
check_LTLIBRARIES += tests/diverge/libdiverge_handlers.la
tests_diverge_libdiverge_handlers_la_SOURCES = tests/diverge/handlers.c
tests_diverge_libdiverge_handlers_la_LDFLAGS = -module -avoid-version -rpath /nowhere
# The public API's statuses come from what failed, not from message text.
check_PROGRAMS += tests/check_status
TESTS += tests/check_status
tests_check_status_SOURCES = tests/check_status.c
tests_check_status_CFLAGS = $(TEST_CFLAGS)
tests_check_status_LDADD = $(TEST_LIBS)

# Embedding: libhlorun leaves the program's SIGBUS and SIGSEGV handlers
# alone, also when it reads a file cut short (public API only).
check_PROGRAMS += tests/check_embed
TESTS += tests/check_embed
tests_check_embed_SOURCES = tests/check_embed.c
tests_check_embed_LDADD = libhlorun.la
