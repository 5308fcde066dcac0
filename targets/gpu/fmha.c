/* fmha.c: cuDNN fused attention, forward (__cudnn$fmhaSoftmax,
 * __cudnn$fmhaScaleBiasSoftmax and their Dropout forms with dropout_rate 0)
 * as standard HLO. CudnnfMHABackendConfig:
 *   S = fmha_scale * dot(q, k; bmm1_dot_dimension_numbers) [+ bias]
 *   mask_type CAUSAL (or is_causal_mask): key positions after the query
 *     position are excluded (top-left aligned, as JAX's reference)
 *   P = softmax(S) over the last (key) dimension
 *   O = dot(P, v; bmm2_dot_dimension_numbers)
 *   stats (when the result has it) = log-sum-exp of each masked row of S,
 *     natural log, f32 (cudnn-frontend's reference tests)
 * Operands (q, k, v, [bias]); results (O, [stats], u8 workspace). Computed
 * in f32 (f64 for f64), O rounded once.
 * Refused with the reason: dropout_rate > 0 (cuDNN's Philox stream cannot be
 * reproduced), PADDING / PADDING_CAUSAL / ALIBI masks, sliding windows,
 * packed and paged layouts. The backward targets are not built in.
 * Not here: the gemm targets (gemm.c). */
#include "targets/gpu/gpu.h"
#include <stdlib.h>
#include <string.h>

enum { MASK_NONE, MASK_PADDING, MASK_CAUSAL, MASK_PADDING_CAUSAL, MASK_ALIBI, MASK_COUNT };
static const char *const mask_names[MASK_COUNT] = {"NO_MASK", "PADDING", "CAUSAL",
                                                   "PADDING_CAUSAL", "ALIBI"};

typedef struct Dims { int64_t lb[4], rb[4], lc[4], rc[4]; int nlb, nrb, nlc, nrc; } Dims;

static int read_dims(GpuCall *c, json_t *cfg, const char *key, Dims *d) {
  json_t *o = json_object_get(cfg, key);
  char p[4][160];
  if (!json_is_object(o))
    return gpu_fail(c, "backend_config: missing required field cudnn_fmha_backend_config.%s", key);
  static const char *const k[4] = {"lhs_batch_dimensions", "rhs_batch_dimensions",
                                   "lhs_contracting_dimensions", "rhs_contracting_dimensions"};
  int64_t *v[4] = {d->lb, d->rb, d->lc, d->rc};
  int *n[4] = {&d->nlb, &d->nrb, &d->nlc, &d->nrc};
  for (int i = 0; i < 4; i++) {
    snprintf(p[i], sizeof p[i], "cudnn_fmha_backend_config.%s.%s", key, k[i]);
    if (gpu_json_ints(c, o, k[i], p[i], v[i], 4, n[i])) return -1;
  }
  return 0;
}

static bool has(const int64_t *v, int n, int64_t x) {
  for (int i = 0; i < n; i++)
    if (v[i] == x) return true;
  return false;
}

/* dot output dims of operands a (rank ra) and b under d; -1 if the
 * dimension numbers do not fit the ranks or sizes. */
static int out_dims(const GpuLeaf *a, const GpuLeaf *b, const Dims *d, int64_t *out, int *nfree_a,
                    int *nfree_b) {
  if (d->nlb != d->nrb || d->nlc != d->nrc) return -1;
  for (int i = 0; i < d->nlb; i++)
    if (d->lb[i] >= a->rank || d->rb[i] >= b->rank || d->lb[i] < 0 || d->rb[i] < 0 ||
        a->dims[d->lb[i]] != b->dims[d->rb[i]])
      return -1;
  for (int i = 0; i < d->nlc; i++)
    if (d->lc[i] >= a->rank || d->rc[i] >= b->rank || d->lc[i] < 0 || d->rc[i] < 0 ||
        a->dims[d->lc[i]] != b->dims[d->rc[i]])
      return -1;
  int n = 0;
  for (int i = 0; i < d->nlb; i++) out[n++] = a->dims[d->lb[i]];
  *nfree_a = *nfree_b = 0;
  for (int i = 0; i < a->rank; i++)
    if (!has(d->lb, d->nlb, i) && !has(d->lc, d->nlc, i)) { out[n++] = a->dims[i]; (*nfree_a)++; }
  for (int i = 0; i < b->rank; i++)
    if (!has(d->rb, d->nrb, i) && !has(d->rc, d->nrc, i)) { out[n++] = b->dims[i]; (*nfree_b)++; }
  return n;
}

static void dot_attrs(GpuText *t, const Dims *d) {
  if (d->nlb) { gpu_text(t, ", lhs_batch_dims="); gpu_text_list(t, d->lb, d->nlb); }
  if (d->nlc) { gpu_text(t, ", lhs_contracting_dims="); gpu_text_list(t, d->lc, d->nlc); }
  if (d->nrb) { gpu_text(t, ", rhs_batch_dims="); gpu_text_list(t, d->rb, d->nrb); }
  if (d->nrc) { gpu_text(t, ", rhs_contracting_dims="); gpu_text_list(t, d->rc, d->nrc); }
  gpu_text(t, "\n");
}

/* reduce over the last dimension of S (m->dims) with computation comp. */
static int row_reduce(GpuMod *m, int x, double init, const char *comp) {
  int k = gpu_emit(m, m->ct, NULL, 0, "constant(");
  gpu_text_double(&m->t, init);
  gpu_text(&m->t, ")\n");
  int v = gpu_emit(m, m->ct, m->dims, m->rank - 1, "reduce(");
  gpu_text(&m->t, "v%d, v%d), dimensions={%d}, to_apply=%s\n", x, k, m->rank - 1, comp);
  return v;
}

static int row_broadcast(GpuMod *m, int x) {
  int64_t keep[GPU_MAX_RANK];
  for (int i = 0; i < m->rank - 1; i++) keep[i] = i;
  int v = gpu_emit(m, m->ct, m->dims, m->rank, "broadcast(");
  gpu_text(&m->t, "v%d), dimensions=", x);
  gpu_text_list(&m->t, keep, m->rank - 1);
  gpu_text(&m->t, "\n");
  return v;
}

char *gpu_build_fmha(GpuCall *c) {
  bool bias = strstr(c->target, "ScaleBias") != NULL;
  json_t *g = gpu_config_section(c, "cudnn_fmha_backend_config", "fmha_scale");
  double scale, dropout;
  int mask;
  int64_t window, segs;
  bool causal_old, paged;
  Dims d1, d2;
  if (!g ||
      gpu_json_double_req(c, g, "fmha_scale", "cudnn_fmha_backend_config.fmha_scale", &scale) ||
      gpu_json_double(c, g, "dropout_rate", "cudnn_fmha_backend_config.dropout_rate", 0, &dropout) ||
      gpu_json_enum(c, g, "mask_type", "cudnn_fmha_backend_config.mask_type", mask_names,
                    MASK_COUNT, MASK_NONE, &mask) ||
      gpu_json_bool(c, g, "is_causal_mask", "cudnn_fmha_backend_config.is_causal_mask", false,
                    &causal_old) ||
      gpu_json_bool(c, g, "is_paged_attention", "cudnn_fmha_backend_config.is_paged_attention",
                    false, &paged) ||
      gpu_json_int(c, g, "sliding_window_length",
                   "cudnn_fmha_backend_config.sliding_window_length", 0, &window) ||
      gpu_json_int(c, g, "max_seg_per_batch", "cudnn_fmha_backend_config.max_seg_per_batch", 0,
                   &segs) ||
      read_dims(c, g, "bmm1_dot_dimension_numbers", &d1) ||
      read_dims(c, g, "bmm2_dot_dimension_numbers", &d2))
    return NULL;
  if (dropout > 0) {
    gpu_fail(c, "backend_config field cudnn_fmha_backend_config.dropout_rate is %g: dropout "
                "draws from cuDNN's Philox stream on the GPU, which a CPU cannot reproduce",
             dropout);
    return NULL;
  }
  if (mask != MASK_NONE && mask != MASK_CAUSAL) {
    gpu_fail(c, "backend_config field cudnn_fmha_backend_config.mask_type: %s is not supported "
                "(NO_MASK and CAUSAL are)", mask_names[mask]);
    return NULL;
  }
  if (window > 0 || segs > 1 || paged) {
    gpu_fail(c, "backend_config field cudnn_fmha_backend_config.%s: sliding windows, packed and "
                "paged attention are not supported",
             window > 0 ? "sliding_window_length" : segs > 1 ? "max_seg_per_batch"
                                                             : "is_paged_attention");
    return NULL;
  }
  bool causal = mask == MASK_CAUSAL || causal_old;
  int want = 3 + bias;
  if (c->nops != want || c->nres < 1 || c->nres > 3) {
    gpu_fail(c, "has %d operands and %d results; %s takes (q, k, v%s) and gives (O[, stats], "
                "u8 workspace)", c->nops, c->nres, c->target, bias ? ", bias" : "");
    return NULL;
  }
  const GpuLeaf *q = &c->ops[0], *k = &c->ops[1], *v = &c->ops[2], *O = &c->res[0];
  GpuLeaf s;
  int fa, fb, fp, fv;
  memset(&s, 0, sizeof s);
  s.rank = out_dims(q, k, &d1, s.dims, &fa, &fb);
  if (s.rank < 2 || fa != 1 || fb != 1) {
    gpu_fail(c, "backend_config field cudnn_fmha_backend_config.bmm1_dot_dimension_numbers does "
                "not fit q and k (it must pair their batch and head sizes and leave one query and "
                "one key dimension)");
    return NULL;
  }
  GpuMod m = {0};
  m.ct = (q->dtype == HLO_F64) ? HLO_F64 : HLO_F32;
  s.dtype = m.ct;
  GpuLeaf pl = s;
  int64_t od[GPU_MAX_RANK];
  int orank = out_dims(&pl, v, &d2, od, &fp, &fv);
  bool same = orank == O->rank;
  for (int i = 0; same && i < orank; i++) same = od[i] == O->dims[i];
  if (!same) {
    gpu_fail(c, "backend_config field cudnn_fmha_backend_config.bmm2_dot_dimension_numbers does "
                "not map the scores and v onto the result's shape");
    return NULL;
  }
  bool stats = c->nres == 3 || (c->nres == 2 && c->res[1].dtype == HLO_F32 &&
                                c->res[1].rank == s.rank - 1);
  if (stats) {
    const GpuLeaf *st = &c->res[1];
    bool ok = st->rank == s.rank - 1 && st->dtype == HLO_F32;
    for (int i = 0; ok && i < st->rank; i++) ok = st->dims[i] == s.dims[i];
    if (!ok) {
      gpu_fail(c, "result 1 (stats) must be f32 with the scores' shape less the key dimension");
      return NULL;
    }
  }
  m.rank = s.rank;
  memcpy(m.dims, s.dims, sizeof m.dims);
  gpu_text(&m.t, "HloModule gpu_equivalent\n\n");
  for (int i = 0; i < 2; i++)
    gpu_text(&m.t, "%s {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n  ROOT r = %s[] %s(a, b)\n}\n\n",
             i ? "sum" : "max", hlc_dtype_name(m.ct), hlc_dtype_name(m.ct), hlc_dtype_name(m.ct),
             i ? "add" : "maximum");
  gpu_text(&m.t, "ENTRY e {\n");
  int vq = gpu_operand(&m, q, 0, GPU_ROUND_NONE), vk = gpu_operand(&m, k, 1, GPU_ROUND_NONE);
  int vv = gpu_operand(&m, v, 2, GPU_ROUND_NONE);
  int sc = gpu_emit(&m, m.ct, s.dims, s.rank, "dot(");
  gpu_text(&m.t, "v%d, v%d)", vq, vk);
  dot_attrs(&m.t, &d1);
  if (scale != 1) sc = gpu_binary(&m, "multiply", sc, gpu_splat(&m, scale));
  if (bias) {
    /* The bias broadcasts over its size-1 dimensions. */
    const GpuLeaf *b = &c->ops[3];
    bool ok = b->rank == s.rank;
    int64_t kept[GPU_MAX_RANK], kdims[GPU_MAX_RANK];
    int nk = 0;
    for (int i = 0; ok && i < s.rank; i++) {
      ok = b->dims[i] == s.dims[i] || b->dims[i] == 1;
      if (b->dims[i] != 1) { kept[nk] = i; kdims[nk++] = b->dims[i]; }
    }
    if (!ok) {
      gpu_fail(c, "operand 3 (bias) must have the scores' shape (size 1 to broadcast)");
      free(m.t.s);
      return NULL;
    }
    GpuLeaf bl = *b;
    int vb = gpu_operand(&m, &bl, 3, GPU_ROUND_NONE);
    int rs = gpu_emit(&m, m.ct, kdims, nk, "reshape(");
    gpu_text(&m.t, "v%d)\n", vb);
    int bb = gpu_emit(&m, m.ct, s.dims, s.rank, "broadcast(");
    gpu_text(&m.t, "v%d), dimensions=", rs);
    gpu_text_list(&m.t, kept, nk);
    gpu_text(&m.t, "\n");
    sc = gpu_binary(&m, "add", sc, bb);
  }
  if (causal) {
    int iq = gpu_emit(&m, HLO_S32, s.dims, s.rank, "iota(), ");
    gpu_text(&m.t, "iota_dimension=%d\n", s.rank - 2);
    int ik = gpu_emit(&m, HLO_S32, s.dims, s.rank, "iota(), ");
    gpu_text(&m.t, "iota_dimension=%d\n", s.rank - 1);
    int after = gpu_emit(&m, HLO_PRED, s.dims, s.rank, "compare(");
    gpu_text(&m.t, "v%d, v%d), direction=GT\n", ik, iq);
    int ninf = gpu_splat(&m, -__builtin_inf());
    int sel = gpu_emit(&m, m.ct, s.dims, s.rank, "select(");
    gpu_text(&m.t, "v%d, v%d, v%d)\n", after, ninf, sc);
    sc = sel;
  }
  int mx = row_reduce(&m, sc, -__builtin_inf(), "max");
  int e = gpu_unary(&m, "exponential", gpu_binary(&m, "subtract", sc, row_broadcast(&m, mx)));
  int sum = row_reduce(&m, e, 0, "sum");
  int p = gpu_binary(&m, "divide", e, row_broadcast(&m, sum));
  int o = gpu_emit(&m, m.ct, O->dims, O->rank, "dot(");
  gpu_text(&m.t, "v%d, v%d)", p, vv);
  dot_attrs(&m.t, &d2);
  int outs[2] = {o, 0};
  if (stats) {
    int lg = gpu_emit(&m, m.ct, s.dims, s.rank - 1, "log(");
    gpu_text(&m.t, "v%d)\n", sum);
    outs[1] = gpu_emit(&m, m.ct, s.dims, s.rank - 1, "add(");
    gpu_text(&m.t, "v%d, v%d)\n", mx, lg);
  }
  if (gpu_finish(&m, c->res, outs, stats ? 2 : 1)) {
    free(m.t.s);
    gpu_fail(c, "out of memory");
    return NULL;
  }
  return m.t.s;
}
