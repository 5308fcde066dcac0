/* gpu.h: the built-in XLA:GPU custom-call family (internal to targets/gpu/).
 *
 * XLA:GPU's after-optimization dumps call GPU libraries (cuBLAS, cuBLASLt,
 * cuDNN) through custom calls whose backend_config is JSON. Each target
 * here is a typed FFI bundle reporting HLORUN_FFI_TRAIT_JSON_CONFIG, so the
 * FFI host passes the instruction's members with the verbatim
 * backend_config. The instantiate stage (run when the module is checked,
 * before anything runs) decodes that JSON with jansson, checks it against
 * the operand and result shapes, and writes a small standard-HLO module
 * equivalent to the call (dot + epilogue, convolution, ...); the execute
 * stage runs that module through the public API on the call's buffers, so
 * the call computes with the interpreter's own kernels at their speed.
 *
 * Not here: the registry (ffi/), the interpreter (interp/). */
#ifndef HLORUN_TARGETS_GPU_GPU_H
#define HLORUN_TARGETS_GPU_GPU_H
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include "common/dtype.h"
#include "common/text.h"
#include "ffi/ffi.h"
#include "hlorun/ffi.h"

enum { GPU_MAX_RANK = 16, GPU_MAX_LEAVES = 32 };

/* One operand or result leaf as the instruction declares it. */
typedef struct GpuLeaf {
  HloDtype dtype;
  int rank;
  int64_t dims[GPU_MAX_RANK];
  int64_t layout[GPU_MAX_RANK];   /* minor to major */
} GpuLeaf;

/* What a handler knows of its instruction at instantiate time. */
typedef struct GpuCall {
  char name[128];                 /* instruction name, for messages */
  const char *target;
  int nops, nres;
  GpuLeaf ops[GPU_MAX_LEAVES], res[GPU_MAX_LEAVES];
  const char *dim_labels;         /* NULL when not written */
  int64_t feature_group_count;
  /* window (when written): */
  int wrank;
  int64_t wsize[GPU_MAX_RANK], wstride[GPU_MAX_RANK], wpad_lo[GPU_MAX_RANK],
      wpad_hi[GPU_MAX_RANK], wlhs_dil[GPU_MAX_RANK], wrhs_dil[GPU_MAX_RANK];
  int8_t wrev[GPU_MAX_RANK];
  json_t *config;                 /* the decoded JSON backend_config (owned), or NULL */
  const XLA_FFI_Attrs *attrs;     /* the frame's attributes (targets whose config is an
                                     attribute dictionary, such as the CUB sorts) */
  char *err;                      /* first error (malloc'd), NULL if none */
} GpuCall;

/* ---- call.c: members, JSON fields, errors -------------------------------- */

/* Read the members attribute of frame f and decode its backend_config.
 * 0, or -1 with c->err set. Free with hlt_gpu_call_free. */
int hlt_gpu_call_init(GpuCall *c, XLA_FFI_CallFrame *f);
void hlt_gpu_call_free(GpuCall *c);
/* Record an error (the first one wins), prefixed with the instruction's
 * name and target. Returns -1. */
int hlt_gpu_fail(GpuCall *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The object under key of the GpuBackendConfig wrapper, or the config
 * itself when it has no wrapper (older dumps write the bare message; it is
 * recognised by having bare_key). NULL (error set) if neither. */
json_t *hlt_gpu_config_section(GpuCall *c, const char *key, const char *bare_key);

/* proto3 JSON fields of obj; path names the field in messages
 * ("gemm_backend_config.beta"). A missing field gives the default (or, for
 * the _req forms, an error). 0, or -1 with the error set. */
int hlt_gpu_json_double(GpuCall *c, json_t *obj, const char *key, const char *path, double def,
                        double *out);
int hlt_gpu_json_double_req(GpuCall *c, json_t *obj, const char *key, const char *path,
                            double *out);
int hlt_gpu_json_int(GpuCall *c, json_t *obj, const char *key, const char *path, int64_t def,
                     int64_t *out);
int hlt_gpu_json_bool(GpuCall *c, json_t *obj, const char *key, const char *path, bool def,
                      bool *out);
/* An int64 list (numbers or decimal strings); missing: n = 0. */
int hlt_gpu_json_ints(GpuCall *c, json_t *obj, const char *key, const char *path, int64_t *v,
                      int max, int *n);
/* An enum given by name or number: names[i] has number i (NULL holes are
 * not valid). def when missing. */
int hlt_gpu_json_enum(GpuCall *c, json_t *obj, const char *key, const char *path,
                      const char *const *names, int nnames, int def, int *out);

/* ---- subrun.c: the equivalent standard-HLO module ------------------------ */

typedef struct GpuSub GpuSub;
/* Parse and compile module text for the call (threads: the host's pool
 * size). NULL with c->err set on failure (a bug here, or out of memory). */
GpuSub *hlt_gpu_sub_new(GpuCall *c, const char *text, int threads);
void hlt_gpu_sub_free(void *sub);
/* Run it: inputs are the frame's args (all of them, in order); its result
 * (an array or a tuple of arrays) fills the frame's first rets; every
 * further ret (workspace, scratch) is zero-filled. NULL or an FFI error. */
XLA_FFI_Error *hlt_gpu_sub_run(GpuSub *s, XLA_FFI_CallFrame *f);

/* ---- hlotext.c: writing the module text ----------------------------------- */

/* "f32[2,3]" of a dtype and dims. */
void hlt_gpu_text_shape(HlcText *t, HloDtype dt, const int64_t *dims, int rank);
/* "{1,0,2}" */
void hlt_gpu_text_list(HlcText *t, const int64_t *v, int n);
/* A floating scalar literal in full precision ("1.5", "-inf", "nan"). */
void hlt_gpu_text_double(HlcText *t, double v);

/* The module being written: instructions v0, v1, ... of one ENTRY. */
typedef struct GpuMod {
  HlcText t;
  int next;                       /* next instruction number */
  HloDtype ct;                    /* compute type (f32, f64, s32) */
  int64_t dims[GPU_MAX_RANK];     /* shape of the main result */
  int rank;
  size_t last_off;                /* text offset of the last instruction */
} GpuMod;
/* How an operand is rounded before it is widened to the compute type
 * (precision_config.algorithm). */
typedef enum GpuRound { GPU_ROUND_NONE, GPU_ROUND_BF16, GPU_ROUND_F16, GPU_ROUND_TF32 } GpuRound;
/* "  vN = SHAPE OP" (the caller finishes the line); returns N. */
int hlt_gpu_emit(GpuMod *m, HloDtype dt, const int64_t *dims, int rank, const char *op);
/* A scalar broadcast to the main result's shape, in the compute type. */
int hlt_gpu_splat(GpuMod *m, double x);
/* Elementwise op of the main result's shape and the compute type. */
int hlt_gpu_binary(GpuMod *m, const char *op, int x, int y);
int hlt_gpu_unary(GpuMod *m, const char *op, int x);
/* Parameter i (leaf l), rounded as asked and converted to the compute type. */
int hlt_gpu_operand(GpuMod *m, const GpuLeaf *l, int i, GpuRound round);
/* The ROOT: values vals[0..n) converted once to the result leaves' types
 * (one array, or a tuple). 0, or -1 when out of memory. */
int hlt_gpu_finish(GpuMod *m, const GpuLeaf *res, const int *vals, int n);

/* ---- handler plumbing (handler.c) ----------------------------------------- */

/* Builds the module text for a call (returns malloc'd text, or NULL with
 * c->err set). */
typedef char *(*GpuBuildFn)(GpuCall *c);

/* The two stages every family member shares: instantiate decodes the call
 * and compiles build(c)'s module into the site's state; execute runs it. */
XLA_FFI_Error *hlt_gpu_instantiate(XLA_FFI_CallFrame *f, GpuBuildFn build);
/* traits: what the bundle reports to the host's metadata query (the host
 * asks the execute stage): HLORUN_FFI_TRAIT_JSON_CONFIG for JSON configs,
 * HLORUN_FFI_TRAIT_INSTRUCTION_MEMBERS for attribute-dictionary ones. */
XLA_FFI_Error *hlt_gpu_execute(XLA_FFI_CallFrame *f, uint32_t traits);
/* An instantiate stage that always refuses, with reason. */
XLA_FFI_Error *hlt_gpu_refuse(XLA_FFI_CallFrame *f, const char *reason);

/* ---- the targets ------------------------------------------------------------ */
char *hlt_gpu_build_gemm(GpuCall *c); /* __cublas$gemm, __cublas$lt$matmul */
/* gemm.c: gemm_backend_config.dot_dimension_numbers of g, checked against
 * operands 0 and 1 (0, or -1 with c->err set), and the dot's logical result
 * dims (batch, lhs free, rhs free; returns the rank). */
typedef struct GpuDnums {
  int64_t lb[GPU_MAX_RANK], rb[GPU_MAX_RANK], lc[GPU_MAX_RANK], rc[GPU_MAX_RANK];
  int nlb, nrb, nlc, nrc;
} GpuDnums;
int hlt_gpu_gemm_dnums(GpuCall *c, json_t *g, GpuDnums *d);
int hlt_gpu_gemm_dot_dims(const GpuCall *c, const GpuDnums *d, int64_t *out);
char *hlt_gpu_build_mx_gemm(GpuCall *c); /* __cublas$lt$matmul$mx (mxgemm.c) */
char *hlt_gpu_build_conv(GpuCall *c);    /* __cudnn$conv* */
/* convgraph.c: __cudnn$convForwardGraph's serialized_graph applied to the
 * convolution y (value of m); its results' values into outs[*nouts].
 * 0, or -1 with c->err set. */
int hlt_gpu_conv_graph(GpuCall *c, GpuMod *m, const char *graph, int y, int *outs, int *nouts);
char *hlt_gpu_build_trsm(GpuCall *c);         /* __cublas$triangularSolve */
char *hlt_gpu_build_topk(GpuCall *c);         /* __gpu$TopK */
char *hlt_gpu_build_cub_sort(GpuCall *c);     /* xla.gpu.ext.cub_sort_keys/pairs */
char *hlt_gpu_build_fmha(GpuCall *c);         /* __cudnn$fmha*Softmax* (forward) */
char *hlt_gpu_build_norm(GpuCall *c);         /* __cudnn$norm */
char *hlt_gpu_build_grouped(GpuCall *c);      /* __cublas$lt$groupedMatmul */
char *hlt_gpu_build_block_scaled(GpuCall *c); /* __cudnn$blockScaledDot */

/* Registration of the whole family (register.c). 0, or -1 out of memory. */
int hlt_register_gpu(HlfRegistry *r);
#endif
