# targets/: built-in custom-call target families above interp/ (targets.h).
# ctx.c holds the public hlo_ctx_new, which registers them.
libhlorun_core_la_SOURCES += targets/targets.h targets/ctx.c targets/register.c targets/callback.c
# jaxlib's kernels beyond LAPACK (targets/cpu/tridiagonal.c, sparse.c) and
# JAX's host callbacks (callback.c): tests/jaxlib/run.sh.
TESTS += tests/jaxlib/run.sh
dist_noinst_SCRIPTS += tests/jaxlib/run.sh tools/gen_jaxlib_cases.py
EXTRA_DIST += tests/jaxlib/cases tests/jaxlib/README
# XLA's own targets (annotations, TopK): one file, no folder fragment.
libhlorun_core_la_SOURCES += targets/xla/xla.c
include targets/cpu/local.mk
include targets/gpu/local.mk
