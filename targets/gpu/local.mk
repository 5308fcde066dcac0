# targets/gpu/: XLA:GPU's GPU-only custom calls (cuBLAS, cuBLASLt, cuDNN, ...)
# run on the CPU through equivalent standard-HLO modules (gpu.h). Their
# backend_configs are JSON, read with jansson.
libhlorun_core_la_SOURCES += targets/gpu/gpu.h targets/gpu/call.c targets/gpu/hlotext.c \
	targets/gpu/subrun.c targets/gpu/handler.c targets/gpu/gemm.c targets/gpu/conv.c targets/gpu/convgraph.c targets/gpu/sort_solve.c \
	targets/gpu/fmha.h targets/gpu/fmha.c targets/gpu/fmha_dense.c targets/gpu/fmha_ragged.c targets/gpu/fmha_f8.c \
	targets/gpu/norm.c targets/gpu/grouped.c \
	targets/gpu/blockscaled.c targets/gpu/mxgemm.c targets/gpu/register.c
libhlorun_core_la_LIBADD += $(JANSSON_LIBS)
AM_CFLAGS += $(JANSSON_CFLAGS)

# Tests: tests/gpu/calls (the GPU custom calls) and tests/gpu/twins (the
# same computations in standard HLO) against numpy-derived goldens written
# by tools/gpu_cases.py; bad configs; --explain-custom-calls.
TESTS += tests/gpu/run.sh
dist_noinst_SCRIPTS += tests/gpu/run.sh tools/gpu_cases.py
EXTRA_DIST += tests/gpu/calls tests/gpu/twins
# A hand-written XLA:GPU after-optimization dump with its inputs and golden.
dist_noinst_DATA += samples/gpu/transformer_block.hlo samples/gpu/transformer_block.inputs.npz \
	samples/gpu/transformer_block.expected.txt
dist_noinst_SCRIPTS += samples/gpu/goldens.py

# make bench: two targets against their standard-HLO twins (bench/run.py).
EXTRA_DIST += bench/ops/gpu_gemm_bias_gelu.hlo bench/ops/gpu_gemm_bias_gelu_twin.hlo \
	bench/ops/gpu_conv_bias_relu.hlo bench/ops/gpu_conv_bias_relu_twin.hlo
