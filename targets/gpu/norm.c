/* norm.c: cuDNN layer norm (__cudnn$norm) as standard HLO.
 *
 * XLA's CudnnNormRewriter (xla/service/gpu/transforms/cudnn_norm_rewriter.cc)
 * makes these calls; CudnnNormBackendConfig (under "cudnn_norm_backend_config")
 * has epsilon and kind. The rewriter transposes and reshapes the operand so
 * dimension 0 holds every non-normalized dimension and dimensions 1.. the
 * normalized ones (padded with 1s to rank 4); scale and bias have the
 * operand's shape with dimension 0 of size 1. With n the number of elements
 * of a row (dimensions 1..):
 *   LAYER_FWD_INFER  (x, scale, bias) -> (y, u8 workspace)
 *   LAYER_FWD_TRAIN  (x, scale, bias) -> (y, mean, norm_factor, u8 workspace)
 *     mean = sum(x)/n, var = sum((x-mean)^2)/n over each row,
 *     norm_factor = rsqrt(var + epsilon),
 *     y = (x - mean)·norm_factor·scale + bias;
 *     mean and norm_factor have one element per row ([N,1,1,1]).
 *   LAYER_BWD  (x, scale, dy, mean, norm_factor) -> (dx, dscale, dbias, u8)
 *     with the forward's saved mean and norm factor (nf), xc = x - mean and
 *     g = scale·dy (the rewriter's DX = F1 + F2 - sum(F1 + F2)/n with
 *     F2 = nf·g, F1 = -xc·nf³·sum(xc·g)/n):
 *     dx = F1 + F2 - sum(F1 + F2)/n,
 *     dscale = sum over rows of dy·xc·nf, dbias = sum over rows of dy.
 * A config without kind (proto3 default LAYER_FWD_INFER) whose results are
 * the training form's four is read as LAYER_FWD_TRAIN: the results say
 * which form the call is, and a hand-edited config may omit the field.
 * Computed in f32 (f64
 * for f64 operands), each result rounded once.
 * Not here: batch norm (XLA expands it before the GPU custom calls). */
#include "targets/gpu/gpu.h"
#include <stdlib.h>
#include <string.h>

enum { KIND_INFER, KIND_TRAIN, KIND_BWD, KIND_COUNT };
static const char *const kind_names[KIND_COUNT] = {"LAYER_FWD_INFER", "LAYER_FWD_TRAIN",
                                                   "LAYER_BWD"};

static int64_t elems(const GpuLeaf *l) {
  int64_t n = 1;
  for (int i = 0; i < l->rank; i++) n *= l->dims[i];
  return n;
}

static bool is_float(HloDtype d) {
  return d == HLO_F32 || d == HLO_F16 || d == HLO_BF16 || d == HLO_F64;
}

/* A scale-shaped leaf: x's shape with dimension 0 of size 1. */
static bool scale_shaped(const GpuLeaf *s, const GpuLeaf *x) {
  if (s->rank != x->rank || s->dims[0] != 1 || !is_float(s->dtype)) return false;
  for (int i = 1; i < x->rank; i++)
    if (s->dims[i] != x->dims[i]) return false;
  return true;
}

/* One element per row of x (mean, norm factor). */
static bool row_shaped(const GpuLeaf *s, const GpuLeaf *x) {
  return is_float(s->dtype) && elems(s) == x->dims[0] && (s->rank == 0 || s->dims[0] == x->dims[0]);
}

/* Instruction helpers on the 2-D row view [N, F]. */
typedef struct Norm { GpuMod m; int64_t rf[2], r[1], f[1]; } Norm;

static int param_as(Norm *z, const GpuLeaf *l, int i, const int64_t *dims, int rank) {
  int v = hlt_gpu_operand(&z->m, l, i, GPU_ROUND_NONE);
  int w = hlt_gpu_emit(&z->m, z->m.ct, dims, rank, "reshape(");
  hlc_text_printf(&z->m.t, "v%d)\n", v);
  return w;
}

/* rank-2 [N,F] elementwise */
static int bin(Norm *z, const char *op, int a, int b) {
  int v = hlt_gpu_emit(&z->m, z->m.ct, z->rf, 2, op);
  hlc_text_printf(&z->m.t, "(v%d, v%d)\n", a, b);
  return v;
}

/* vector of length dims[0] (rank 1) elementwise */
static int bin1(Norm *z, const int64_t *dims, const char *op, int a, int b) {
  int v = hlt_gpu_emit(&z->m, z->m.ct, dims, 1, op);
  hlc_text_printf(&z->m.t, "(v%d, v%d)\n", a, b);
  return v;
}

static int scalar1(Norm *z, const int64_t *dims, double x) {
  int k = hlt_gpu_emit(&z->m, z->m.ct, NULL, 0, "constant(");
  hlt_gpu_text_double(&z->m.t, x);
  hlc_text_printf(&z->m.t, ")\n");
  int v = hlt_gpu_emit(&z->m, z->m.ct, dims, 1, "broadcast(");
  hlc_text_printf(&z->m.t, "v%d), dimensions={}\n", k);
  return v;
}

/* sum over dimension dim of an [N,F] value: rank-1 result. */
static int sum_over(Norm *z, int x, int dim) {
  int k = hlt_gpu_emit(&z->m, z->m.ct, NULL, 0, "constant(0)\n");
  int v = hlt_gpu_emit(&z->m, z->m.ct, dim ? z->r : z->f, 1, "reduce(");
  hlc_text_printf(&z->m.t, "v%d, v%d), dimensions={%d}, to_apply=sum\n", x, k, dim);
  return v;
}

/* a rank-1 value along dimension keep of [N,F] */
static int spread(Norm *z, int x, int keep) {
  int v = hlt_gpu_emit(&z->m, z->m.ct, z->rf, 2, "broadcast(");
  hlc_text_printf(&z->m.t, "v%d), dimensions={%d}\n", x, keep);
  return v;
}

/* value (rank 2 or 1) reshaped to result leaf r's dims (in the compute type) */
static int as_result(Norm *z, int x, const GpuLeaf *r) {
  int v = hlt_gpu_emit(&z->m, z->m.ct, r->dims, r->rank, "reshape(");
  hlc_text_printf(&z->m.t, "v%d)\n", x);
  return v;
}

char *hlt_gpu_build_norm(GpuCall *c) {
  json_t *g = hlt_gpu_config_section(c, "cudnn_norm_backend_config", "epsilon");
  double eps;
  int kind;
  if (!g || hlt_gpu_json_double_req(c, g, "epsilon", "cudnn_norm_backend_config.epsilon", &eps) ||
      hlt_gpu_json_enum(c, g, "kind", "cudnn_norm_backend_config.kind", kind_names, KIND_COUNT,
                        KIND_INFER, &kind))
    return NULL;
  if (!json_object_get(g, "kind") && c->nres == 4 && c->nops == 3) kind = KIND_TRAIN;
  static const int want_ops[KIND_COUNT] = {3, 3, 5}, want_res[KIND_COUNT] = {2, 4, 4};
  static const char *const forms[KIND_COUNT] = {
      "(x, scale, bias) and gives (y, u8 workspace)",
      "(x, scale, bias) and gives (y, mean, norm_factor, u8 workspace)",
      "(x, scale, dy, mean, norm_factor) and gives (dx, dscale, dbias, u8 workspace)"};
  if (c->nops != want_ops[kind] || c->nres != want_res[kind]) {
    hlt_gpu_fail(c, "has %d operands and %d results; kind %s takes %s", c->nops, c->nres,
                 kind_names[kind], forms[kind]);
    return NULL;
  }
  const GpuLeaf *x = &c->ops[0];
  if (x->rank < 2 || !is_float(x->dtype)) {
    hlt_gpu_fail(c,
                 "operand 0 (x) is %s of rank %d; it must be floating point of rank >= 2 "
                 "(rows in dimension 0, the normalized elements in the others)",
                 hlc_dtype_name(x->dtype), x->rank);
    return NULL;
  }
  const char *const opnames[5] = {"x", "scale", kind == KIND_BWD ? "dy" : "bias", "mean",
                                  "norm_factor"};
  for (int i = 1; i < c->nops; i++) {
    bool ok = i == 2 && kind == KIND_BWD ? (x->rank == c->ops[i].rank &&
                                            elems(&c->ops[i]) == elems(x) &&
                                            is_float(c->ops[i].dtype))
              : i >= 3 ? row_shaped(&c->ops[i], x)
                       : scale_shaped(&c->ops[i], x);
    if (!ok) {
      hlt_gpu_fail(
          c, "operand %d (%s) does not fit x (%s): %s", i, opnames[i], hlc_dtype_name(x->dtype),
          i >= 3 ? "it must be floating point with one element per row ([N,1,1,1])"
          : i == 2 && kind == KIND_BWD ? "it must have x's shape"
                                       : "it must have x's shape with dimension 0 of size 1");
      return NULL;
    }
  }
  bool res_ok = c->res[0].rank == x->rank && is_float(c->res[0].dtype);
  for (int i = 0; res_ok && i < x->rank; i++) res_ok = c->res[0].dims[i] == x->dims[i];
  if (!res_ok) {
    hlt_gpu_fail(c, "result 0 (%s) must be floating point with x's shape",
                 kind == KIND_BWD ? "dx" : "y");
    return NULL;
  }
  for (int i = 1; i < c->nres - 1; i++) {
    bool ok = kind == KIND_BWD ? scale_shaped(&c->res[i], x) : row_shaped(&c->res[i], x);
    if (!ok) {
      static const char *const rn[2][2] = {{"mean", "norm_factor"}, {"dscale", "dbias"}};
      hlt_gpu_fail(c, "result %d (%s) %s", i, rn[kind == KIND_BWD][i - 1],
                   kind == KIND_BWD
                       ? "must have scale's shape"
                       : "must be floating point with one element per row ([N,1,1,1])");
      return NULL;
    }
  }

  Norm z;
  memset(&z, 0, sizeof z);
  GpuMod *m = &z.m;
  m->ct = x->dtype == HLO_F64 ? HLO_F64 : HLO_F32;
  int64_t N = x->dims[0], F = elems(x) / (N ? N : 1);
  if (N == 0) F = 1;
  z.rf[0] = N; z.rf[1] = F; z.r[0] = N; z.f[0] = F;
  m->rank = 2; m->dims[0] = N; m->dims[1] = F;
  const char *ct = hlc_dtype_name(m->ct);
  hlc_text_printf(&m->t,
               "HloModule gpu_equivalent\n\nsum {\n  a = %s[] parameter(0)\n  b = %s[] "
               "parameter(1)\n  ROOT r = %s[] add(a, b)\n}\n\nENTRY e {\n",
               ct, ct, ct);
  int vx = param_as(&z, x, 0, z.rf, 2);
  int vs = param_as(&z, &c->ops[1], 1, z.f, 1);
  int rn = scalar1(&z, z.r, 1.0 / (double)F);
  int outs[3];
  if (kind != KIND_BWD) {
    int vb = param_as(&z, &c->ops[2], 2, z.f, 1);
    int mean = bin1(&z, z.r, "multiply", sum_over(&z, vx, 1), rn);
    int xc = bin(&z, "subtract", vx, spread(&z, mean, 0));
    int var = bin1(&z, z.r, "multiply", sum_over(&z, bin(&z, "multiply", xc, xc), 1), rn);
    int ve = bin1(&z, z.r, "add", var, scalar1(&z, z.r, eps));
    int nf = hlt_gpu_emit(m, m->ct, z.r, 1, "rsqrt(");
    hlc_text_printf(&m->t, "v%d)\n", ve);
    int y = bin(&z, "multiply", xc, spread(&z, nf, 0));
    y = bin(&z, "add", bin(&z, "multiply", y, spread(&z, vs, 1)), spread(&z, vb, 1));
    outs[0] = as_result(&z, y, &c->res[0]);
    if (kind == KIND_TRAIN) {
      outs[1] = as_result(&z, mean, &c->res[1]);
      outs[2] = as_result(&z, nf, &c->res[2]);
    }
  } else {
    int dy = param_as(&z, &c->ops[2], 2, z.rf, 2);
    int mean = param_as(&z, &c->ops[3], 3, z.r, 1);
    int nf = param_as(&z, &c->ops[4], 4, z.r, 1);
    int xc = bin(&z, "subtract", vx, spread(&z, mean, 0));
    int nfb = spread(&z, nf, 0);
    int gg = bin(&z, "multiply", spread(&z, vs, 1), dy);
    int f2 = bin(&z, "multiply", nfb, gg);
    int f0 = sum_over(&z, bin(&z, "multiply", xc, gg), 1);
    int nf3 = bin1(&z, z.r, "multiply", bin1(&z, z.r, "multiply", nf, nf), nf);
    int coef = bin1(&z, z.r, "multiply", bin1(&z, z.r, "multiply", f0, nf3), rn);
    /* F1 + F2 = F2 - xc·coef */
    int f12 = bin(&z, "subtract", f2, bin(&z, "multiply", xc, spread(&z, coef, 0)));
    int mf = bin1(&z, z.r, "multiply", sum_over(&z, f12, 1), rn);
    int dx = bin(&z, "subtract", f12, spread(&z, mf, 0));
    int ds = sum_over(&z, bin(&z, "multiply", bin(&z, "multiply", dy, xc), nfb), 0);
    int db = sum_over(&z, dy, 0);
    outs[0] = as_result(&z, dx, &c->res[0]);
    outs[1] = as_result(&z, ds, &c->res[1]);
    outs[2] = as_result(&z, db, &c->res[2]);
  }
  if (hlt_gpu_finish(m, c->res, outs, kind == KIND_INFER ? 1 : 3)) {
    free(m->t.p);
    hlt_gpu_fail(c, "out of memory");
    return NULL;
  }
  return m->t.p;
}
