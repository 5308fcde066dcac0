/* fmha_dense.c: cuDNN fused attention, dense layouts, as standard HLO: the
 * forward targets (__cudnn$fmhaSoftmax, __cudnn$fmhaScaleBiasSoftmax and
 * their Dropout forms with dropout_rate 0) and the backward ones
 * (__cudnn$fmhaSoftmaxBackward, __cudnn$fmhaScaleBiasSoftmaxBackward,
 * Dropout forms at rate 0); the config, masks and scores come from fmha.c.
 * Operand order from cudnn_custom_call_compiler.cc:
 *   forward  (q, k, v, [bias], [q_seqlen, kv_seqlen]) -> (O, [stats], u8)
 *   backward (q, k, v, stats, dO, [bias], O, [q_seqlen, kv_seqlen])
 *            -> (dQ, dK, dV, [dBias], u8)
 * The seqlens are present for mask_type PADDING and PADDING_CAUSAL.
 * Forward:
 *   S = fmha_scale * dot(q, k; bmm1_dot_dimension_numbers) [+ bias]
 *   mask (fmha.c), then P = softmax(S) over the last (key) dimension
 *   O = dot(P, v; bmm2_dot_dimension_numbers)
 *   stats (when the result has it) = log-sum-exp of each masked row of S,
 *     natural log, f32 (cudnn-frontend's reference tests); hlorun writes 0
 *     for padded query rows (O and stats): cudnn-frontend's padding_mask
 *     sets every score of such a row to -inf, so the graph leaves their
 *     softmax undefined and what the kernel writes there is not established
 * Backward: the config holds only the gradient dot dimension numbers (JAX's
 * fused_attention_stablehlo.py names them BMM1Grad1: dP @ Q -> dK,
 * BMM1Grad2: dP @ K -> dQ, BMM2Grad1: P @ dO -> dV, BMM2Grad2: dO @ V -> dP).
 * bmm2_grad_gemm2's dimension numbers pair dO with v, so they also pair q
 * (dO's shape) with k (v's shape): S is recomputed with them. Then
 *   P  = exp(S - stats) (stats: the forward's log-sum-exp), masked
 *   dP = dot(dO, v; bmm2_grad_gemm2)
 *   D  = the sum over head dimension of dO * O (O: the forward output)
 *   dS = P * (dP - D)
 *   dV = dot(P, dO; bmm2_grad_gemm1)
 *   dQ = fmha_scale * dot(dS, k; bmm1_grad_gemm2)
 *   dK = fmha_scale * dot(dS, q; bmm1_grad_gemm1)
 *   dBias (a 5-result call) = dS summed over the bias's size-1 dimensions.
 * Computed in f32 (f64 for f64), each result rounded once. */
#include "targets/gpu/fmha.h"
#include <stdlib.h>
#include <string.h>

static int check_seqlens(GpuCall *c, GpuMod *m, int ql) {
  for (int i = ql; i < ql + 2; i++) {
    const GpuLeaf *l = &c->ops[i];
    if (l->dtype != HLO_S32 || l->rank != 1 || l->dims[0] != m->dims[0])
      return hlt_gpu_fail(c,
                          "operand %d (%s) must be s32[%lld] (one length per batch) for mask_type "
                          "PADDING / PADDING_CAUSAL",
                          i, i == ql ? "q_seqlen" : "kv_seqlen", (long long)m->dims[0]);
  }
  return 0;
}

char *fmha_forward(GpuCall *c, const Cfg *f) {
  bool bias = strstr(c->target, "ScaleBias") != NULL;
  int want = 3 + bias + (f->padding ? 2 : 0);
  if (c->nops != want || c->nres < 1 || c->nres > 3) {
    hlt_gpu_fail(c,
                 "has %d operands and %d results; %s with mask_type %s takes (q, k, v%s%s) and "
                 "gives (O[, stats], u8 workspace)",
                 c->nops, c->nres, c->target, fmha_mask_names[f->mask], bias ? ", bias" : "",
                 f->padding ? ", q_seqlen, kv_seqlen" : "");
    return NULL;
  }
  const GpuLeaf *q = &c->ops[0], *k = &c->ops[1], *v = &c->ops[2], *O = &c->res[0];
  GpuLeaf s;
  int fa, fb, fp, fv;
  memset(&s, 0, sizeof s);
  s.rank = fmha_out_dims(q, k, &f->d1, s.dims, &fa, &fb);
  if (s.rank < 2 || fa != 1 || fb != 1) {
    hlt_gpu_fail(c,
                 "backend_config field cudnn_fmha_backend_config.bmm1_dot_dimension_numbers does "
                 "not fit q and k (it must pair their batch and head sizes and leave one query and "
                 "one key dimension)");
    return NULL;
  }
  GpuMod m = {0};
  m.ct = (q->dtype == HLO_F64) ? HLO_F64 : HLO_F32;
  s.dtype = m.ct;
  int64_t od[GPU_MAX_RANK];
  int orank = fmha_out_dims(&s, v, &f->d2, od, &fp, &fv);
  if (!fmha_same_dims(od, orank, O)) {
    hlt_gpu_fail(c,
                 "backend_config field cudnn_fmha_backend_config.bmm2_dot_dimension_numbers does "
                 "not map the scores and v onto the result's shape");
    return NULL;
  }
  bool stats = c->nres == 3 || (c->nres == 2 && c->res[1].dtype == HLO_F32 &&
                                c->res[1].rank == s.rank - 1);
  if (stats) {
    const GpuLeaf *st = &c->res[1];
    if (st->dtype != HLO_F32 || !fmha_same_dims(s.dims, s.rank - 1, st)) {
      hlt_gpu_fail(c, "result 1 (stats) must be f32 with the scores' shape less the key dimension");
      return NULL;
    }
  }
  m.rank = s.rank;
  memcpy(m.dims, s.dims, sizeof m.dims);
  int ql = 3 + bias;
  if (f->padding && check_seqlens(c, &m, ql)) return NULL;
  fmha_prelude(&m);
  int vq = hlt_gpu_operand(&m, q, 0, GPU_ROUND_NONE),
      vk = hlt_gpu_operand(&m, k, 1, GPU_ROUND_NONE);
  int vv = hlt_gpu_operand(&m, v, 2, GPU_ROUND_NONE);
  Mask mk = fmha_build_mask(&m, f, ql);
  int sc = fmha_scores(c, &m, f, vq, vk, &f->d1, bias ? 3 : -1, &mk);
  if (sc < 0) { free(m.t.p); return NULL; }
  int mx = fmha_row_reduce(&m, sc, -__builtin_inf(), "max");
  int e = hlt_gpu_unary(&m, "exponential",
                        hlt_gpu_binary(&m, "subtract", sc, fmha_row_broadcast(&m, mx)));
  int sum = fmha_row_reduce(&m, e, 0, "sum");
  int p = hlt_gpu_binary(&m, "divide", e, fmha_row_broadcast(&m, sum));
  if (mk.qvalid >= 0) p = fmha_select_v(&m, mk.qvalid, p, hlt_gpu_splat(&m, 0));
  int outs[2] = {fmha_dot(&m, p, vv, O->dims, O->rank, &f->d2), 0};
  if (stats) {
    int lg = hlt_gpu_emit(&m, m.ct, s.dims, s.rank - 1, "log(");
    hlc_text_printf(&m.t, "v%d)\n", sum);
    outs[1] = hlt_gpu_emit(&m, m.ct, s.dims, s.rank - 1, "add(");
    hlc_text_printf(&m.t, "v%d, v%d)\n", mx, lg);
    if (mk.qrow >= 0) {
      int z = hlt_gpu_emit(&m, m.ct, NULL, 0, "constant(0)\n");
      int zb = hlt_gpu_emit(&m, m.ct, s.dims, s.rank - 1, "broadcast(");
      hlc_text_printf(&m.t, "v%d), dimensions={}\n", z);
      int sel = hlt_gpu_emit(&m, m.ct, s.dims, s.rank - 1, "select(");
      hlc_text_printf(&m.t, "v%d, v%d, v%d)\n", mk.qrow, outs[1], zb);
      outs[1] = sel;
    }
  }
  if (hlt_gpu_finish(&m, c->res, outs, stats ? 2 : 1)) {
    free(m.t.p);
    hlt_gpu_fail(c, "out of memory");
    return NULL;
  }
  return m.t.p;
}

char *fmha_backward(GpuCall *c, const Cfg *f) {
  bool bias = strstr(c->target, "ScaleBias") != NULL;
  int want = 6 + bias + (f->padding ? 2 : 0);
  if (c->nops != want || (c->nres != 4 && c->nres != 5) || (c->nres == 5 && !bias)) {
    hlt_gpu_fail(c,
                 "has %d operands and %d results; %s with mask_type %s takes (q, k, v, stats, "
                 "dO%s, O%s) and gives (dQ, dK, dV%s, u8 workspace)",
                 c->nops, c->nres, c->target, fmha_mask_names[f->mask], bias ? ", bias" : "",
                 f->padding ? ", q_seqlen, kv_seqlen" : "", bias ? "[, dBias]" : "");
    return NULL;
  }
  const GpuLeaf *q = &c->ops[0], *k = &c->ops[1], *v = &c->ops[2], *st = &c->ops[3],
                *dO = &c->ops[4], *O = &c->ops[5 + bias];
  GpuLeaf s, s2;
  int fa, fb;
  memset(&s, 0, sizeof s);
  memset(&s2, 0, sizeof s2);
  s.rank = fmha_out_dims(dO, v, &f->g22, s.dims, &fa, &fb);
  s2.rank = fmha_out_dims(q, k, &f->g22, s2.dims, &fa, &fb);
  if (s.rank < 2 || fa != 1 || fb != 1 || !fmha_same_dims(s.dims, s.rank, &s2)) {
    hlt_gpu_fail(c,
                 "backend_config field cudnn_fmha_backend_config.bmm2_grad_gemm2_dot_dimension_"
                 "numbers does not fit dO and v, or q and k (it must pair their batch and head "
                 "sizes and leave one query and one key dimension)");
    return NULL;
  }
  bool okO = O->rank == dO->rank;
  for (int i = 0; okO && i < O->rank; i++) okO = O->dims[i] == dO->dims[i];
  if (!okO) {
    hlt_gpu_fail(c, "operand %d (the forward output O) must have dO's shape", 5 + bias);
    return NULL;
  }
  if (st->dtype != HLO_F32 || !fmha_same_dims(s.dims, s.rank - 1, st)) {
    hlt_gpu_fail(c, "operand 3 (stats) must be f32 with the scores' shape less the key dimension");
    return NULL;
  }
  GpuMod m = {0};
  m.ct = (q->dtype == HLO_F64) ? HLO_F64 : HLO_F32;
  s.dtype = m.ct;
  /* the three gradients' shapes */
  struct { const Dims *d; const GpuLeaf *b; int res; const char *key; } g[3] = {
      {&f->g12, k, 0, "bmm1_grad_gemm2"}, {&f->g11, q, 1, "bmm1_grad_gemm1"},
      {&f->g21, dO, 2, "bmm2_grad_gemm1"}};
  for (int i = 0; i < 3; i++) {
    int64_t od[GPU_MAX_RANK];
    int orank = fmha_out_dims(&s, g[i].b, g[i].d, od, &fa, &fb);
    if (!fmha_same_dims(od, orank, &c->res[g[i].res])) {
      hlt_gpu_fail(c,
                   "backend_config field cudnn_fmha_backend_config.%s_dot_dimension_numbers does "
                   "not map the scores' gradient and %s onto result %d (%s)",
                   g[i].key,
                   i == 0   ? "k"
                   : i == 1 ? "q"
                            : "dO",
                   g[i].res,
                   i == 0   ? "dQ"
                   : i == 1 ? "dK"
                            : "dV");
      return NULL;
    }
  }
  m.rank = s.rank;
  memcpy(m.dims, s.dims, sizeof m.dims);
  int ql = 6 + bias;
  if (f->padding && check_seqlens(c, &m, ql)) return NULL;
  fmha_prelude(&m);
  int vq = hlt_gpu_operand(&m, q, 0, GPU_ROUND_NONE),
      vk = hlt_gpu_operand(&m, k, 1, GPU_ROUND_NONE);
  int vv = hlt_gpu_operand(&m, v, 2, GPU_ROUND_NONE),
      vs = hlt_gpu_operand(&m, st, 3, GPU_ROUND_NONE);
  int vdo = hlt_gpu_operand(&m, dO, 4, GPU_ROUND_NONE),
      vo = hlt_gpu_operand(&m, O, 5 + bias, GPU_ROUND_NONE);
  Mask mk = fmha_build_mask(&m, f, ql);
  int sc = fmha_scores(c, &m, f, vq, vk, &f->g22, bias ? 5 : -1, &mk);
  if (sc < 0) { free(m.t.p); return NULL; }
  int p = hlt_gpu_unary(&m, "exponential",
                        hlt_gpu_binary(&m, "subtract", sc, fmha_row_broadcast(&m, vs)));
  if (mk.valid >= 0) p = fmha_select_v(&m, mk.valid, p, hlt_gpu_splat(&m, 0));
  int dp = fmha_dot(&m, vdo, vv, m.dims, m.rank, &f->g22);
  int dd = fmha_row_sum_do_o(&m, &f->g22, dO, vdo, vo);
  int ds = hlt_gpu_binary(&m, "multiply", p,
                          hlt_gpu_binary(&m, "subtract", dp, fmha_row_broadcast(&m, dd)));
  int outs[4];
  for (int i = 0; i < 3; i++) {
    const GpuLeaf *r = &c->res[g[i].res];
    int x = fmha_dot(&m, i == 2 ? p : ds, i == 0 ? vk : i == 1 ? vq : vdo, r->dims, r->rank,
                     g[i].d);
    if (i < 2 && f->scale != 1) {
      int k0 = hlt_gpu_emit(&m, m.ct, NULL, 0, "constant(");
      hlt_gpu_text_double(&m.t, f->scale);
      hlc_text_printf(&m.t, ")\n");
      int kb = hlt_gpu_emit(&m, m.ct, r->dims, r->rank, "broadcast(");
      hlc_text_printf(&m.t, "v%d), dimensions={}\n", k0);
      int y = hlt_gpu_emit(&m, m.ct, r->dims, r->rank, "multiply(");
      hlc_text_printf(&m.t, "v%d, v%d)\n", x, kb);
      x = y;
    }
    outs[g[i].res] = x;
  }
  if (c->nres == 5) {
    const GpuLeaf *b = &c->ops[5], *db = &c->res[3];
    bool ok = db->rank == b->rank;
    for (int i = 0; ok && i < b->rank; i++) ok = db->dims[i] == b->dims[i];
    if (!ok) {
      hlt_gpu_fail(c, "result 3 (dBias) must have the bias's shape");
      free(m.t.p);
      return NULL;
    }
    int64_t red[GPU_MAX_RANK];
    int nr = 0;
    for (int i = 0; i < s.rank; i++)
      if (b->dims[i] == 1 && s.dims[i] != 1) red[nr++] = i;
    int x = ds;
    if (nr) {
      int64_t kd[GPU_MAX_RANK];
      int nk = 0;
      for (int i = 0; i < s.rank; i++)
        if (!fmha_has(red, nr, i)) kd[nk++] = s.dims[i];
      int z2 = hlt_gpu_emit(&m, m.ct, NULL, 0, "constant(0)\n");
      x = hlt_gpu_emit(&m, m.ct, kd, nk, "reduce(");
      hlc_text_printf(&m.t, "v%d, v%d), dimensions=", ds, z2);
      hlt_gpu_text_list(&m.t, red, nr);
      hlc_text_printf(&m.t, ", to_apply=sum\n");
    }
    outs[3] = hlt_gpu_emit(&m, m.ct, b->dims, b->rank, "reshape(");
    hlc_text_printf(&m.t, "v%d)\n", x);
  }
  if (hlt_gpu_finish(&m, c->res, outs, c->nres - 1)) {
    free(m.t.p);
    hlt_gpu_fail(c, "out of memory");
    return NULL;
  }
  return m.t.p;
}
