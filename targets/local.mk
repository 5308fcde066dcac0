# targets/: built-in custom-call target families above interp/ (targets.h).
# ctx.c holds the public hlo_ctx_new, which registers them.
libhlorun_core_la_SOURCES += targets/targets.h targets/ctx.c targets/register.c
# XLA's own targets (annotations, TopK): one file, no folder fragment.
libhlorun_core_la_SOURCES += targets/xla/xla.c
include targets/cpu/local.mk
include targets/gpu/local.mk
