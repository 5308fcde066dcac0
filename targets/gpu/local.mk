# targets/gpu/: XLA:GPU's GPU-only custom calls (cuBLAS, cuBLASLt, cuDNN, ...)
# run on the CPU through equivalent standard-HLO modules (gpu.h). Their
# backend_configs are JSON, read with jansson.
libhlorun_core_la_SOURCES += targets/gpu/gpu.h targets/gpu/call.c targets/gpu/hlotext.c \
	targets/gpu/subrun.c targets/gpu/handler.c targets/gpu/gemm.c targets/gpu/register.c
libhlorun_core_la_LIBADD += $(JANSSON_LIBS)
AM_CFLAGS += $(JANSSON_CFLAGS)
