/* fmha_f8.c: cuDNN's F8 fused attention as standard HLO: the forward
 * __cudnn$fmhaSoftmaxF8 (fmha_forward_f8) and its backward
 * __cudnn$fmhaSoftmaxBackwardF8 (fmha_backward_f8, described above it);
 * the config, masks and dot helpers come from fmha.c. Forward:
 * cuda_dnn.cc GetCudnnFlashAttentionF8OperationGraph builds cudnn-frontend's
 * sdpa_fp8 node, whose graph (node/sdpa_fp8.h, node/matmul_fp8.h) is
 *   S  = dot(q, k) * fmha_scale * descale_q * descale_k, causal-masked
 *   P  = softmax(S)                    (stats: its log-sum-exp)
 *   amax_s = max |P|
 *   P8 = P * scale_s, stored in q's f8 type
 *   O' = dot(P8, v) * descale_s * descale_v
 *   amax_o = max |O'|
 *   O  = O' * scale_o, stored in O's type (q's: the graph checks it)
 * Operands (q, k, v, descale_q, descale_k, descale_v, descale_s, scale_s,
 * scale_o) with f32[1,1,1,1] scales; results (O, amax_s, amax_o, [stats],
 * u8 workspace) (cudnn_custom_call_compiler.cc: 5 results carry stats).
 * Only NO_MASK and CAUSAL exist in that graph. An f8 store saturates to the
 * type's finite range: the sources do not say what cuDNN does with a value
 * beyond it (only reachable with scale_s or scale_o pushing past it). */
#include "targets/gpu/fmha.h"
#include <stdlib.h>
#include <string.h>

/* Scalar operand i (one f32 element) as an f32[] value. */
static int scalar_op(GpuMod *m, const GpuLeaf *l, int i) {
  int p = hlt_gpu_emit(m, l->dtype, l->dims, l->rank, "parameter(");
  hlc_text_printf(&m->t, "%d)\n", i);
  int r = hlt_gpu_emit(m, HLO_F32, NULL, 0, "reshape(");
  hlc_text_printf(&m->t, "v%d)\n", p);
  return r;
}

/* x (shape dims) times scalars a [, b]. */
static int scale_by(GpuMod *m, int x, const int64_t *dims, int rank, int a, int b) {
  int sc[2] = {a, b};
  for (int i = 0; i < 2 && sc[i] >= 0; i++) {
    int bb = hlt_gpu_emit(m, HLO_F32, dims, rank, "broadcast(");
    hlc_text_printf(&m->t, "v%d), dimensions={}\n", sc[i]);
    int v = hlt_gpu_emit(m, HLO_F32, dims, rank, "multiply(");
    hlc_text_printf(&m->t, "v%d, v%d)\n", x, bb);
    x = v;
  }
  return x;
}

/* max |x| over every element, reshaped to the result leaf r. */
static int amax_of(GpuMod *m, int x, const int64_t *dims, int rank, const GpuLeaf *r) {
  int ab = hlt_gpu_emit(m, HLO_F32, dims, rank, "abs(");
  hlc_text_printf(&m->t, "v%d)\n", x);
  int z = hlt_gpu_emit(m, HLO_F32, NULL, 0, "constant(0)\n");
  int64_t all[GPU_MAX_RANK];
  for (int i = 0; i < rank; i++) all[i] = i;
  int v = hlt_gpu_emit(m, HLO_F32, NULL, 0, "reduce(");
  hlc_text_printf(&m->t, "v%d, v%d), dimensions=", ab, z);
  hlt_gpu_text_list(&m->t, all, rank);
  hlc_text_printf(&m->t, ", to_apply=max\n");
  int w = hlt_gpu_emit(m, HLO_F32, r->dims, r->rank, "reshape(");
  hlc_text_printf(&m->t, "v%d)\n", v);
  return w;
}

/* x stored as f8 type t (saturating) and read back as f32. */
static int store_f8(GpuMod *m, int x, const int64_t *dims, int rank, HloDtype t) {
  double mx = t == HLO_F8E4M3FN ? 448 : 57344;
  int lo = hlt_gpu_emit(m, HLO_F32, NULL, 0, "constant(");
  hlt_gpu_text_double(&m->t, -mx);
  hlc_text_printf(&m->t, ")\n");
  int hi = hlt_gpu_emit(m, HLO_F32, NULL, 0, "constant(");
  hlt_gpu_text_double(&m->t, mx);
  hlc_text_printf(&m->t, ")\n");
  int c = hlt_gpu_emit(m, HLO_F32, dims, rank, "clamp(");
  hlc_text_printf(&m->t, "v%d, v%d, v%d)\n", lo, x, hi);
  int n = hlt_gpu_emit(m, t, dims, rank, "convert(");
  hlc_text_printf(&m->t, "v%d)\n", c);
  int w = hlt_gpu_emit(m, HLO_F32, dims, rank, "convert(");
  hlc_text_printf(&m->t, "v%d)\n", n);
  return w;
}

char *fmha_forward_f8(GpuCall *c, const Cfg *f) {
  if (f->padding || f->window || (f->mask != MASK_NONE && f->mask != MASK_CAUSAL))
    return hlt_gpu_fail(c,
                        "backend_config field cudnn_fmha_backend_config.%s: XLA's F8 attention "
                        "graph has only NO_MASK and CAUSAL (no padding, sliding window or ALiBi)",
                        f->window ? "sliding_window_length" : "mask_type"),
           NULL;
  if (c->nops != 9 || (c->nres != 4 && c->nres != 5))
    return hlt_gpu_fail(c,
                        "has %d operands and %d results; __cudnn$fmhaSoftmaxF8 takes (q, k, v, "
                        "descale_q, descale_k, descale_v, descale_s, scale_s, scale_o) and gives "
                        "(O, amax_s, amax_o[, stats], u8 workspace)",
                        c->nops, c->nres),
           NULL;
  const GpuLeaf *q = &c->ops[0], *k = &c->ops[1], *v = &c->ops[2], *O = &c->res[0];
  if ((q->dtype != HLO_F8E4M3FN && q->dtype != HLO_F8E5M2) || k->dtype != q->dtype ||
      v->dtype != q->dtype || O->dtype != q->dtype)
    return hlt_gpu_fail(c,
                        "q, k, v and O must share one f8 type (f8e4m3fn or f8e5m2; "
                        "cuda_dnn.cc checks it): they are %s, %s, %s, %s",
                        hlc_dtype_name(q->dtype), hlc_dtype_name(k->dtype),
                        hlc_dtype_name(v->dtype), hlc_dtype_name(O->dtype)),
           NULL;
  static const char *const sn[6] = {"descale_q", "descale_k", "descale_v", "descale_s",
                                    "scale_s", "scale_o"};
  for (int i = 3; i < 9; i++) {
    const GpuLeaf *l = &c->ops[i];
    int64_t n = 1;
    for (int j = 0; j < l->rank; j++) n *= l->dims[j];
    if (l->dtype != HLO_F32 || n != 1)
      return hlt_gpu_fail(c, "operand %d (%s) must be one f32 (f32[1,1,1,1])", i, sn[i - 3]), NULL;
  }
  for (int i = 1; i < 3; i++) {
    const GpuLeaf *r = &c->res[i];
    int64_t n = 1;
    for (int j = 0; j < r->rank; j++) n *= r->dims[j];
    if (r->dtype != HLO_F32 || n != 1)
      return hlt_gpu_fail(c, "result %d (%s) must be one f32 (f32[1,1,1,1])", i,
                          i == 1 ? "amax_s" : "amax_o"),
             NULL;
  }
  GpuLeaf s;
  int fa, fb, fp, fv;
  memset(&s, 0, sizeof s);
  s.rank = fmha_out_dims(q, k, &f->d1, s.dims, &fa, &fb);
  if (s.rank < 2 || fa != 1 || fb != 1)
    return hlt_gpu_fail(c,
                        "backend_config field cudnn_fmha_backend_config.bmm1_dot_dimension_numbers "
                        "does not fit q and k"),
           NULL;
  GpuMod m = {0};
  m.ct = HLO_F32;
  s.dtype = HLO_F32;
  int64_t od[GPU_MAX_RANK];
  int orank = fmha_out_dims(&s, v, &f->d2, od, &fp, &fv);
  if (!fmha_same_dims(od, orank, O))
    return hlt_gpu_fail(c,
                        "backend_config field cudnn_fmha_backend_config.bmm2_dot_dimension_numbers "
                        "does not map the scores and v onto the result's shape"),
           NULL;
  bool stats = c->nres == 5;
  if (stats && (c->res[3].dtype != HLO_F32 || !fmha_same_dims(s.dims, s.rank - 1, &c->res[3])))
    return hlt_gpu_fail(c,
                        "result 3 (stats) must be f32 with the scores' shape less the key "
                        "dimension"),
           NULL;
  m.rank = s.rank;
  memcpy(m.dims, s.dims, sizeof m.dims);
  fmha_prelude(&m);
  int vq = hlt_gpu_operand(&m, q, 0, GPU_ROUND_NONE),
      vk = hlt_gpu_operand(&m, k, 1, GPU_ROUND_NONE);
  int vv = hlt_gpu_operand(&m, v, 2, GPU_ROUND_NONE);
  /* The F8 graph reads mask_type only (is_causal_mask predates it). */
  Cfg fc = *f;
  fc.causal = f->mask == MASK_CAUSAL;
  f = &fc;
  int sc_[6];
  for (int i = 0; i < 6; i++) sc_[i] = scalar_op(&m, &c->ops[3 + i], 3 + i);
  Mask mk = fmha_build_mask(&m, f, 0);
  int sc = fmha_dot(&m, vq, vk, m.dims, m.rank, &f->d1);
  if (f->scale != 1) sc = hlt_gpu_binary(&m, "multiply", sc, hlt_gpu_splat(&m, f->scale));
  sc = scale_by(&m, sc, m.dims, m.rank, sc_[0], sc_[1]);
  if (mk.valid >= 0) sc = fmha_select_v(&m, mk.valid, sc, hlt_gpu_splat(&m, -__builtin_inf()));
  int mx = fmha_row_reduce(&m, sc, -__builtin_inf(), "max");
  int e = hlt_gpu_unary(&m, "exponential",
                        hlt_gpu_binary(&m, "subtract", sc, fmha_row_broadcast(&m, mx)));
  int sum = fmha_row_reduce(&m, e, 0, "sum");
  int p = hlt_gpu_binary(&m, "divide", e, fmha_row_broadcast(&m, sum));
  int outs[4];
  outs[1] = amax_of(&m, p, m.dims, m.rank, &c->res[1]);
  int p8 = store_f8(&m, scale_by(&m, p, m.dims, m.rank, sc_[4], -1), m.dims, m.rank, q->dtype);
  int o = fmha_dot(&m, p8, vv, O->dims, O->rank, &f->d2);
  o = scale_by(&m, o, O->dims, O->rank, sc_[3], sc_[2]);
  outs[2] = amax_of(&m, o, O->dims, O->rank, &c->res[2]);
  outs[0] = store_f8(&m, scale_by(&m, o, O->dims, O->rank, sc_[5], -1), O->dims, O->rank, O->dtype);
  if (stats) {
    int lg = hlt_gpu_emit(&m, m.ct, s.dims, s.rank - 1, "log(");
    hlc_text_printf(&m.t, "v%d)\n", sum);
    outs[3] = hlt_gpu_emit(&m, m.ct, s.dims, s.rank - 1, "add(");
    hlc_text_printf(&m.t, "v%d, v%d)\n", mx, lg);
  }
  if (hlt_gpu_finish(&m, c->res, outs, stats ? 4 : 3)) {
    free(m.t.p);
    hlt_gpu_fail(c, "out of memory");
    return NULL;
  }
  return m.t.p;
}

/* ---- __cudnn$fmhaSoftmaxBackwardF8 -----------------------------------------
 * cuda_dnn.cc GetCudnnFlashAttentionBackwardF8OperationGraph builds
 * cudnn-frontend's sdpa_fp8_backward node (node/sdpa_fp8_bwd.h, the
 * per-tensor (non-MXFP8) path, and node/matmul_fp8.h; cudnn-frontend
 * v1.22.1, the version XLA pins), whose graph is
 *   S   = dot(q, k) * fmha_scale * descale_q * descale_k, causal-masked
 *   P   = exp(S - stats)
 *   P8  = P * scale_s, stored in q's f8 type
 *   dV' = dot(P8, dO) * descale_s * descale_dO;   amax_dV = max |dV'|
 *   dV  = dV' * scale_dV, stored in f8
 *   D   = (sum over the head dimension of dO * O) * descale_dO * descale_o
 *   dP' = dot(dO, v) * descale_dO * descale_v
 *   dS  = (dP' - D) * P * fmha_scale;              amax_dP = max |dS|
 *   dS8 = dS * scale_dP, stored in dO's f8 type
 *   dQ' = dot(dS8, k) * descale_dP * descale_k;   amax_dQ = max |dQ'|
 *   dK' = dot(dS8, q) * descale_dP * descale_q;   amax_dK = max |dK'|
 *   dQ  = dQ' * scale_dQ, dK = dK' * scale_dK, stored in f8.
 * Operand order: XLA binds the call's buffers to the graph's tensors by
 * position (CudnnGraph::PackOperands: operand i is UID i, then the
 * results), and the graph numbers its tensors
 *   (q, k, v, O, dO, stats, descale_q, descale_k, descale_v, descale_s,
 *    descale_o, descale_dO, descale_dP, scale_s, scale_dP, scale_dQ,
 *    scale_dK, scale_dV) -> (dQ, dK, dV, amax_dQ, amax_dK, amax_dV,
 *    amax_dP, u8 workspace)
 * (cudnn_custom_call_compiler.cc: operand 3 is the forward output, 4 dO;
 * "3 gradients, 4 amaxs and one workspace"). JAX's lowering lists the
 * twelve scalars in another order (descale_o, descale_dO before descale_s;
 * scale_dP last); the GPU reads them by XLA's numbering, and so does this.
 * The graph reads every tensor in q's type (set_data_type(ioDataType)), so
 * all eight f8 tensors must share it. Stores saturate as fmha_forward_f8's. */
char *fmha_backward_f8(GpuCall *c, const Cfg *f) {
  if (f->padding || f->window || (f->mask != MASK_NONE && f->mask != MASK_CAUSAL))
    return hlt_gpu_fail(c,
                        "backend_config field cudnn_fmha_backend_config.%s: XLA's F8 attention "
                        "graph has only NO_MASK and CAUSAL (no padding, sliding window or ALiBi)",
                        f->window ? "sliding_window_length" : "mask_type"),
           NULL;
  if (c->nops != 18 || c->nres != 8)
    return hlt_gpu_fail(
               c,
               "has %d operands and %d results; __cudnn$fmhaSoftmaxBackwardF8 takes (q, k, "
               "v, O, dO, stats, descale_q, descale_k, descale_v, descale_s, descale_o, "
               "descale_dO, descale_dP, scale_s, scale_dP, scale_dQ, scale_dK, scale_dV) "
               "and gives (dQ, dK, dV, amax_dQ, amax_dK, amax_dV, amax_dP, u8 workspace)",
               c->nops, c->nres),
           NULL;
  const GpuLeaf *q = &c->ops[0], *k = &c->ops[1], *v = &c->ops[2], *O = &c->ops[3],
                *dO = &c->ops[4], *st = &c->ops[5];
  static const char *const tn[8] = {"q", "k", "v", "O", "dO", "dQ", "dK", "dV"};
  HloDtype t = q->dtype;
  for (int i = 0; i < 8; i++) {
    HloDtype d = i < 5 ? c->ops[i].dtype : c->res[i - 5].dtype;
    if ((t != HLO_F8E4M3FN && t != HLO_F8E5M2) || d != t)
      return hlt_gpu_fail(c,
                          "%s %d (%s) is %s: q, k, v, O, dO, dQ, dK and dV must share one f8 "
                          "type (f8e4m3fn or f8e5m2; the graph reads every one of them in q's "
                          "type, %s)",
                          i < 5 ? "operand" : "result", i < 5 ? i : i - 5, tn[i], hlc_dtype_name(d),
                          hlc_dtype_name(t)),
             NULL;
  }
  static const char *const sn[12] = {"descale_q", "descale_k", "descale_v", "descale_s",
                                     "descale_o", "descale_dO", "descale_dP", "scale_s",
                                     "scale_dP", "scale_dQ", "scale_dK", "scale_dV"};
  for (int i = 6; i < 18; i++) {
    const GpuLeaf *l = &c->ops[i];
    int64_t n = 1;
    for (int j = 0; j < l->rank; j++) n *= l->dims[j];
    if (l->dtype != HLO_F32 || n != 1)
      return hlt_gpu_fail(c, "operand %d (%s) must be one f32 (f32[1,1,1,1])", i, sn[i - 6]), NULL;
  }
  static const char *const an[4] = {"amax_dQ", "amax_dK", "amax_dV", "amax_dP"};
  for (int i = 3; i < 7; i++) {
    const GpuLeaf *r = &c->res[i];
    int64_t n = 1;
    for (int j = 0; j < r->rank; j++) n *= r->dims[j];
    if (r->dtype != HLO_F32 || n != 1)
      return hlt_gpu_fail(c, "result %d (%s) must be one f32 (f32[1,1,1,1])", i, an[i - 3]), NULL;
  }
  GpuLeaf s, s2;
  int fa, fb;
  memset(&s, 0, sizeof s);
  memset(&s2, 0, sizeof s2);
  s.rank = fmha_out_dims(dO, v, &f->g22, s.dims, &fa, &fb);
  s2.rank = fmha_out_dims(q, k, &f->g22, s2.dims, &fa, &fb);
  if (s.rank < 2 || fa != 1 || fb != 1 || !fmha_same_dims(s.dims, s.rank, &s2))
    return hlt_gpu_fail(c,
                        "backend_config field cudnn_fmha_backend_config.bmm2_grad_gemm2_dot_"
                        "dimension_numbers does not fit dO and v, or q and k (it must pair their "
                        "batch and head sizes and leave one query and one key dimension)"),
           NULL;
  bool okO = O->rank == dO->rank;
  for (int i = 0; okO && i < O->rank; i++) okO = O->dims[i] == dO->dims[i];
  if (!okO) return hlt_gpu_fail(c, "operand 3 (the forward output O) must have dO's shape"), NULL;
  if (st->dtype != HLO_F32 || !fmha_same_dims(s.dims, s.rank - 1, st))
    return hlt_gpu_fail(c,
                        "operand 5 (stats) must be f32 with the scores' shape less the key "
                        "dimension"),
           NULL;
  s.dtype = HLO_F32;
  struct { const Dims *d; const GpuLeaf *b; int res; const char *key; } g[3] = {
      {&f->g12, k, 0, "bmm1_grad_gemm2"}, {&f->g11, q, 1, "bmm1_grad_gemm1"},
      {&f->g21, dO, 2, "bmm2_grad_gemm1"}};
  for (int i = 0; i < 3; i++) {
    int64_t od[GPU_MAX_RANK];
    int orank = fmha_out_dims(&s, g[i].b, g[i].d, od, &fa, &fb);
    if (!fmha_same_dims(od, orank, &c->res[g[i].res]))
      return hlt_gpu_fail(c,
                          "backend_config field cudnn_fmha_backend_config.%s_dot_dimension_numbers "
                          "does not map the scores' gradient and %s onto result %d (%s)",
                          g[i].key,
                          i == 0   ? "k"
                          : i == 1 ? "q"
                                   : "dO",
                          g[i].res,
                          i == 0   ? "dQ"
                          : i == 1 ? "dK"
                                   : "dV"),
             NULL;
  }
  GpuMod m = {0};
  m.ct = HLO_F32;
  m.rank = s.rank;
  memcpy(m.dims, s.dims, sizeof m.dims);
  fmha_prelude(&m);
  int vq = hlt_gpu_operand(&m, q, 0, GPU_ROUND_NONE),
      vk = hlt_gpu_operand(&m, k, 1, GPU_ROUND_NONE);
  int vv = hlt_gpu_operand(&m, v, 2, GPU_ROUND_NONE),
      vo = hlt_gpu_operand(&m, O, 3, GPU_ROUND_NONE);
  int vdo = hlt_gpu_operand(&m, dO, 4, GPU_ROUND_NONE),
      vs = hlt_gpu_operand(&m, st, 5, GPU_ROUND_NONE);
  /* the twelve scalars, in operand order */
  enum { DSC_Q, DSC_K, DSC_V, DSC_S, DSC_O, DSC_DO, DSC_DP, SC_S, SC_DP, SC_DQ, SC_DK, SC_DV };
  int sc_[12];
  for (int i = 0; i < 12; i++) sc_[i] = scalar_op(&m, &c->ops[6 + i], 6 + i);
  Cfg fc = *f;
  fc.causal = f->mask == MASK_CAUSAL;
  Mask mk = fmha_build_mask(&m, &fc, 0);
  int sc = fmha_dot(&m, vq, vk, m.dims, m.rank, &f->g22);
  if (f->scale != 1) sc = hlt_gpu_binary(&m, "multiply", sc, hlt_gpu_splat(&m, f->scale));
  sc = scale_by(&m, sc, m.dims, m.rank, sc_[DSC_Q], sc_[DSC_K]);
  if (mk.valid >= 0) sc = fmha_select_v(&m, mk.valid, sc, hlt_gpu_splat(&m, -__builtin_inf()));
  int p = hlt_gpu_unary(&m, "exponential",
                        hlt_gpu_binary(&m, "subtract", sc, fmha_row_broadcast(&m, vs)));
  int p8 = store_f8(&m, scale_by(&m, p, m.dims, m.rank, sc_[SC_S], -1), m.dims, m.rank, t);
  int dd = fmha_row_sum_do_o(&m, &f->g22, dO, vdo, vo);
  dd = scale_by(&m, dd, s.dims, s.rank - 1, sc_[DSC_DO], sc_[DSC_O]);
  int dp = fmha_dot(&m, vdo, vv, m.dims, m.rank, &f->g22);
  dp = scale_by(&m, dp, m.dims, m.rank, sc_[DSC_DO], sc_[DSC_V]);
  int ds = hlt_gpu_binary(
      &m, "multiply", hlt_gpu_binary(&m, "subtract", dp, fmha_row_broadcast(&m, dd)), p);
  if (f->scale != 1) ds = hlt_gpu_binary(&m, "multiply", ds, hlt_gpu_splat(&m, f->scale));
  int outs[7];
  outs[6] = amax_of(&m, ds, m.dims, m.rank, &c->res[6]);
  int ds8 = store_f8(&m, scale_by(&m, ds, m.dims, m.rank, sc_[SC_DP], -1), m.dims, m.rank, t);
  /* dQ (dS8, k; descale_dP, descale_k), dK (dS8, q; descale_dP, descale_q),
   * dV (P8, dO; descale_s, descale_dO) */
  const int lhs[3] = {ds8, ds8, p8}, rhs[3] = {vk, vq, vdo};
  const int da[3] = {sc_[DSC_DP], sc_[DSC_DP], sc_[DSC_S]};
  const int db[3] = {sc_[DSC_K], sc_[DSC_Q], sc_[DSC_DO]};
  const int sc3[3] = {sc_[SC_DQ], sc_[SC_DK], sc_[SC_DV]};
  for (int i = 0; i < 3; i++) {
    const GpuLeaf *r = &c->res[g[i].res];
    int x = fmha_dot(&m, lhs[i], rhs[i], r->dims, r->rank, g[i].d);
    x = scale_by(&m, x, r->dims, r->rank, da[i], db[i]);
    outs[3 + i] = amax_of(&m, x, r->dims, r->rank, &c->res[3 + i]);
    outs[i] = store_f8(&m, scale_by(&m, x, r->dims, r->rank, sc3[i], -1), r->dims, r->rank, t);
  }
  if (hlt_gpu_finish(&m, c->res, outs, 7)) {
    free(m.t.p);
    hlt_gpu_fail(c, "out of memory");
    return NULL;
  }
  return m.t.p;
}