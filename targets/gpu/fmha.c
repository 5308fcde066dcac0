/* fmha.c: cuDNN fused attention as standard HLO: the forward targets
 * (__cudnn$fmhaSoftmax, __cudnn$fmhaScaleBiasSoftmax and their Dropout forms
 * with dropout_rate 0) and the backward ones (__cudnn$fmhaSoftmaxBackward,
 * __cudnn$fmhaScaleBiasSoftmaxBackward, Dropout forms at rate 0).
 * CudnnfMHABackendConfig (xla/service/gpu/backend_configs.proto); operand
 * order from cudnn_custom_call_compiler.cc:
 *   forward  (q, k, v, [bias], [q_seqlen, kv_seqlen]) -> (O, [stats], u8)
 *   backward (q, k, v, stats, dO, [bias], O, [q_seqlen, kv_seqlen])
 *            -> (dQ, dK, dV, [dBias], u8)
 * The seqlens are present for mask_type PADDING and PADDING_CAUSAL.
 * Forward:
 *   S = fmha_scale * dot(q, k; bmm1_dot_dimension_numbers) [+ bias]
 *   mask: CAUSAL (or is_causal_mask) excludes key positions after the
 *     query position (top-left aligned, as JAX's reference); PADDING
 *     excludes key positions >= kv_seqlen[b] and query rows >= q_seqlen[b]
 *     (b the first batch dimension of S), whose output is 0
 *   P = softmax(S) over the last (key) dimension
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
 * Computed in f32 (f64 for f64), each result rounded once.
 * sliding_window_length w > 0 (cuda_dnn.cc passes it to cudnn-frontend's
 *   set_sliding_window_length, a left diagonal bound with the default
 *   top-left alignment: a key position k is kept iff k + w > q, whatever
 *   the sequence lengths; causal adds k <= q: the window (q - w, q]).
 * Refused with the reason: dropout_rate > 0 (cuDNN's Philox stream cannot be
 * reproduced). mask_type ALIBI runs unmasked, as XLA's graph does. Packed
 * (max_seg_per_batch > 1: ragged offsets) and paged layouts (page tables):
 * see forward_ragged; paged runs forward only.
 * __cudnn$fmhaSoftmaxF8 (forward F8 attention): see forward_f8 below.
 * __cudnn$fmhaSoftmaxBackwardF8 (its backward): see backward_f8 below.
 * Not here: the gemm targets. */
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
    return hlt_gpu_fail(c, "backend_config: missing required field cudnn_fmha_backend_config.%s",
                        key);
  static const char *const k[4] = {"lhs_batch_dimensions", "rhs_batch_dimensions",
                                   "lhs_contracting_dimensions", "rhs_contracting_dimensions"};
  int64_t *v[4] = {d->lb, d->rb, d->lc, d->rc};
  int *n[4] = {&d->nlb, &d->nrb, &d->nlc, &d->nrc};
  for (int i = 0; i < 4; i++) {
    snprintf(p[i], sizeof p[i], "cudnn_fmha_backend_config.%s.%s", key, k[i]);
    if (hlt_gpu_json_ints(c, o, k[i], p[i], v[i], 4, n[i])) return -1;
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

static bool same_dims(const int64_t *a, int na, const GpuLeaf *l) {
  if (na != l->rank) return false;
  for (int i = 0; i < na; i++)
    if (a[i] != l->dims[i]) return false;
  return true;
}

static void dot_attrs(GpuText *t, const Dims *d) {
  if (d->nlb) {
    hlt_gpu_text(t, ", lhs_batch_dims=");
    hlt_gpu_text_list(t, d->lb, d->nlb);
  }
  if (d->nlc) {
    hlt_gpu_text(t, ", lhs_contracting_dims=");
    hlt_gpu_text_list(t, d->lc, d->nlc);
  }
  if (d->nrb) {
    hlt_gpu_text(t, ", rhs_batch_dims=");
    hlt_gpu_text_list(t, d->rb, d->nrb);
  }
  if (d->nrc) {
    hlt_gpu_text(t, ", rhs_contracting_dims=");
    hlt_gpu_text_list(t, d->rc, d->nrc);
  }
  hlt_gpu_text(t, "\n");
}

static int dot(GpuMod *m, int a, int b, const int64_t *od, int orank, const Dims *d) {
  int v = hlt_gpu_emit(m, m->ct, od, orank, "dot(");
  hlt_gpu_text(&m->t, "v%d, v%d)", a, b);
  dot_attrs(&m->t, d);
  return v;
}

/* reduce over the last dimension of S (m->dims) with computation comp. */
static int row_reduce(GpuMod *m, int x, double init, const char *comp) {
  int k = hlt_gpu_emit(m, m->ct, NULL, 0, "constant(");
  hlt_gpu_text_double(&m->t, init);
  hlt_gpu_text(&m->t, ")\n");
  int v = hlt_gpu_emit(m, m->ct, m->dims, m->rank - 1, "reduce(");
  hlt_gpu_text(&m->t, "v%d, v%d), dimensions={%d}, to_apply=%s\n", x, k, m->rank - 1, comp);
  return v;
}

static int row_broadcast(GpuMod *m, int x) {
  int64_t keep[GPU_MAX_RANK];
  for (int i = 0; i < m->rank - 1; i++) keep[i] = i;
  int v = hlt_gpu_emit(m, m->ct, m->dims, m->rank, "broadcast(");
  hlt_gpu_text(&m->t, "v%d), dimensions=", x);
  hlt_gpu_text_list(&m->t, keep, m->rank - 1);
  hlt_gpu_text(&m->t, "\n");
  return v;
}

/* The decoded config. */
typedef struct Cfg {
  double scale;
  int mask;
  bool causal, padding;
  int64_t window;               /* sliding_window_length, 0: none */
  int64_t segs;                 /* max_seg_per_batch (packed when > 1) */
  bool paged;                   /* is_paged_attention */
  Dims d1, d2;                  /* forward */
  Dims g11, g12, g21, g22;      /* backward */
} Cfg;

static int read_config(GpuCall *c, bool bwd, Cfg *f) {
  json_t *g = hlt_gpu_config_section(c, "cudnn_fmha_backend_config", "fmha_scale");
  double dropout;
  int64_t window, segs;
  bool causal_old, paged;
  if (!g ||
      hlt_gpu_json_double_req(c, g, "fmha_scale", "cudnn_fmha_backend_config.fmha_scale",
                              &f->scale) ||
      hlt_gpu_json_double(c, g, "dropout_rate", "cudnn_fmha_backend_config.dropout_rate", 0,
                          &dropout) ||
      hlt_gpu_json_enum(c, g, "mask_type", "cudnn_fmha_backend_config.mask_type", mask_names,
                        MASK_COUNT, MASK_NONE, &f->mask) ||
      hlt_gpu_json_bool(c, g, "is_causal_mask", "cudnn_fmha_backend_config.is_causal_mask", false,
                        &causal_old) ||
      hlt_gpu_json_bool(c, g, "is_paged_attention", "cudnn_fmha_backend_config.is_paged_attention",
                        false, &paged) ||
      hlt_gpu_json_int(c, g, "sliding_window_length",
                       "cudnn_fmha_backend_config.sliding_window_length", 0, &window) ||
      hlt_gpu_json_int(c, g, "max_seg_per_batch", "cudnn_fmha_backend_config.max_seg_per_batch", 0,
                       &segs))
    return -1;
  if (!bwd ? read_dims(c, g, "bmm1_dot_dimension_numbers", &f->d1) ||
                 read_dims(c, g, "bmm2_dot_dimension_numbers", &f->d2)
           : read_dims(c, g, "bmm1_grad_gemm1_dot_dimension_numbers", &f->g11) ||
                 read_dims(c, g, "bmm1_grad_gemm2_dot_dimension_numbers", &f->g12) ||
                 read_dims(c, g, "bmm2_grad_gemm1_dot_dimension_numbers", &f->g21) ||
                 read_dims(c, g, "bmm2_grad_gemm2_dot_dimension_numbers", &f->g22))
    return -1;
  if (dropout > 0)
    return hlt_gpu_fail(
        c,
        "backend_config field cudnn_fmha_backend_config.dropout_rate is %g: dropout "
        "draws from cuDNN's Philox stream on the GPU, which a CPU cannot reproduce",
        dropout);
  /* ALIBI adds no mask: XLA's cuda_dnn.cc gives cuDNN a causal mask for
   * CAUSAL/PADDING_CAUSAL and a padding mask for PADDING/PADDING_CAUSAL and
   * never an ALiBi one, so the GPU runs ALIBI as unmasked attention. */
  if (bwd && paged)
    return hlt_gpu_fail(c,
                        "backend_config field cudnn_fmha_backend_config.is_paged_attention: XLA's "
                        "backward attention graph takes no page tables "
                        "(cudnn_custom_call_compiler.cc reads no such operands)");
  f->segs = segs;
  f->paged = paged;
  f->window = window > 0 ? window : 0;
  f->causal = f->mask == MASK_CAUSAL || f->mask == MASK_PADDING_CAUSAL || causal_old;
  f->padding = f->mask == MASK_PADDING || f->mask == MASK_PADDING_CAUSAL;
  return 0;
}

static void prelude(GpuMod *m) {
  const char *t = hlc_dtype_name(m->ct);
  hlt_gpu_text(&m->t, "HloModule gpu_equivalent\n\n");
  for (int i = 0; i < 2; i++)
    hlt_gpu_text(
        &m->t,
        "%s {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n  ROOT r = %s[] %s(a, b)\n}\n\n",
        i ? "sum" : "max", t, t, t, i ? "add" : "maximum");
  hlt_gpu_text(&m->t, "pick {\n  a = %s[] parameter(0)\n  ROOT b = %s[] parameter(1)\n}\n\n", t, t);
  hlt_gpu_text(&m->t, "ENTRY e {\n");
}

/* bias (operand i) added to the scores sc, broadcast over its size-1 dims. */
static int add_bias(GpuCall *c, GpuMod *m, int sc, int i) {
  const GpuLeaf *b = &c->ops[i];
  bool ok = b->rank == m->rank;
  int64_t kept[GPU_MAX_RANK], kdims[GPU_MAX_RANK];
  int nk = 0;
  for (int j = 0; ok && j < m->rank; j++) {
    ok = b->dims[j] == m->dims[j] || b->dims[j] == 1;
    if (b->dims[j] != 1) { kept[nk] = j; kdims[nk++] = b->dims[j]; }
  }
  if (!ok)
    return hlt_gpu_fail(c, "operand %d (bias) must have the scores' shape (size 1 to broadcast)",
                        i);
  int vb = hlt_gpu_operand(m, b, i, GPU_ROUND_NONE);
  int rs = hlt_gpu_emit(m, m->ct, kdims, nk, "reshape(");
  hlt_gpu_text(&m->t, "v%d)\n", vb);
  int bb = hlt_gpu_emit(m, m->ct, m->dims, m->rank, "broadcast(");
  hlt_gpu_text(&m->t, "v%d), dimensions=", rs);
  hlt_gpu_text_list(&m->t, kept, nk);
  hlt_gpu_text(&m->t, "\n");
  return hlt_gpu_binary(m, "add", sc, bb);
}

/* The masks of the scores (m->dims: batch..., query, key).
 * valid: pred of the scores' shape (-1 when every position is valid);
 * qrow: pred of the row shape, the query row is within q_seqlen (-1 when
 * not padding). ql, kl: the seqlen operand numbers. */
typedef struct Mask { int valid, qrow, qvalid; } Mask;

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

static int pred_and(GpuMod *m, int a, int b) {
  if (a < 0) return b;
  if (b < 0) return a;
  int v = hlt_gpu_emit(m, HLO_PRED, m->dims, m->rank, "and(");
  hlt_gpu_text(&m->t, "v%d, v%d)\n", a, b);
  return v;
}

/* ql: the operand number of q_seqlen (kv_seqlen follows); or -1, with the
 * lengths already values lens[0], lens[1] (s32[dims[0]]). */
static Mask build_mask_lens(GpuMod *m, const Cfg *f, int ql, const int *lens) {
  Mask k = {-1, -1, -1};
  int r = m->rank;
  if (!f->causal && !f->padding && !f->window) return k;
  int iq = hlt_gpu_emit(m, HLO_S32, m->dims, r, "iota(), ");
  hlt_gpu_text(&m->t, "iota_dimension=%d\n", r - 2);
  int ik = hlt_gpu_emit(m, HLO_S32, m->dims, r, "iota(), ");
  hlt_gpu_text(&m->t, "iota_dimension=%d\n", r - 1);
  if (f->causal) {
    k.valid = hlt_gpu_emit(m, HLO_PRED, m->dims, r, "compare(");
    hlt_gpu_text(&m->t, "v%d, v%d), direction=LE\n", ik, iq);
  }
  if (f->window) {
    /* k + w > q (cudnn-frontend's left bound, compared with CMP_GT) */
    int w = hlt_gpu_emit(m, HLO_S32, NULL, 0, "constant(");
    hlt_gpu_text(&m->t, "%lld)\n", (long long)f->window);
    int wb = hlt_gpu_emit(m, HLO_S32, m->dims, r, "broadcast(");
    hlt_gpu_text(&m->t, "v%d), dimensions={}\n", w);
    int kw = hlt_gpu_emit(m, HLO_S32, m->dims, r, "add(");
    hlt_gpu_text(&m->t, "v%d, v%d)\n", ik, wb);
    int in = hlt_gpu_emit(m, HLO_PRED, m->dims, r, "compare(");
    hlt_gpu_text(&m->t, "v%d, v%d), direction=GT\n", kw, iq);
    k.valid = pred_and(m, k.valid, in);
  }
  if (f->padding) {
    int64_t len1[1] = {m->dims[0]};
    for (int i = 0; i < 2; i++) {
      int p;
      if (ql >= 0) {
        p = hlt_gpu_emit(m, HLO_S32, len1, 1, "parameter(");
        hlt_gpu_text(&m->t, "%d)\n", ql + i);
      } else {
        p = lens[i];
      }
      int b = hlt_gpu_emit(m, HLO_S32, m->dims, r, "broadcast(");
      hlt_gpu_text(&m->t, "v%d), dimensions={0}\n", p);
      int cmp = hlt_gpu_emit(m, HLO_PRED, m->dims, r, "compare(");
      hlt_gpu_text(&m->t, "v%d, v%d), direction=LT\n", i ? ik : iq, b);
      if (i == 0) {
        k.qvalid = cmp;
        int pr = hlt_gpu_emit(m, HLO_S32, m->dims, r - 1, "iota(), ");
        hlt_gpu_text(&m->t, "iota_dimension=%d\n", r - 2);
        int br = hlt_gpu_emit(m, HLO_S32, m->dims, r - 1, "broadcast(");
        hlt_gpu_text(&m->t, "v%d), dimensions={0}\n", p);
        k.qrow = hlt_gpu_emit(m, HLO_PRED, m->dims, r - 1, "compare(");
        hlt_gpu_text(&m->t, "v%d, v%d), direction=LT\n", pr, br);
      }
      k.valid = pred_and(m, k.valid, cmp);
    }
  }
  return k;
}

static Mask build_mask(GpuMod *m, const Cfg *f, int ql) {
  return build_mask_lens(m, f, ql, NULL);
}

static int select_v(GpuMod *m, int pred, int yes, int no) {
  int v = hlt_gpu_emit(m, m->ct, m->dims, m->rank, "select(");
  hlt_gpu_text(&m->t, "v%d, v%d, v%d)\n", pred, yes, no);
  return v;
}

/* The scores S (scaled, biased, masked: excluded positions -inf; padded
 * query rows all 0 so their softmax stays finite). */
static int scores(GpuCall *c, GpuMod *m, const Cfg *f, int vq, int vk, const Dims *d, int bias_op,
                  const Mask *k) {
  int sc = dot(m, vq, vk, m->dims, m->rank, d);
  if (f->scale != 1) sc = hlt_gpu_binary(m, "multiply", sc, hlt_gpu_splat(m, f->scale));
  if (bias_op >= 0 && (sc = add_bias(c, m, sc, bias_op)) < 0) return -1;
  if (k->valid >= 0) sc = select_v(m, k->valid, sc, hlt_gpu_splat(m, -__builtin_inf()));
  if (k->qvalid >= 0) sc = select_v(m, k->qvalid, sc, hlt_gpu_splat(m, 0));
  return sc;
}

static char *forward(GpuCall *c, const Cfg *f) {
  bool bias = strstr(c->target, "ScaleBias") != NULL;
  int want = 3 + bias + (f->padding ? 2 : 0);
  if (c->nops != want || c->nres < 1 || c->nres > 3) {
    hlt_gpu_fail(c,
                 "has %d operands and %d results; %s with mask_type %s takes (q, k, v%s%s) and "
                 "gives (O[, stats], u8 workspace)",
                 c->nops, c->nres, c->target, mask_names[f->mask], bias ? ", bias" : "",
                 f->padding ? ", q_seqlen, kv_seqlen" : "");
    return NULL;
  }
  const GpuLeaf *q = &c->ops[0], *k = &c->ops[1], *v = &c->ops[2], *O = &c->res[0];
  GpuLeaf s;
  int fa, fb, fp, fv;
  memset(&s, 0, sizeof s);
  s.rank = out_dims(q, k, &f->d1, s.dims, &fa, &fb);
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
  int orank = out_dims(&s, v, &f->d2, od, &fp, &fv);
  if (!same_dims(od, orank, O)) {
    hlt_gpu_fail(c,
                 "backend_config field cudnn_fmha_backend_config.bmm2_dot_dimension_numbers does "
                 "not map the scores and v onto the result's shape");
    return NULL;
  }
  bool stats = c->nres == 3 || (c->nres == 2 && c->res[1].dtype == HLO_F32 &&
                                c->res[1].rank == s.rank - 1);
  if (stats) {
    const GpuLeaf *st = &c->res[1];
    if (st->dtype != HLO_F32 || !same_dims(s.dims, s.rank - 1, st)) {
      hlt_gpu_fail(c, "result 1 (stats) must be f32 with the scores' shape less the key dimension");
      return NULL;
    }
  }
  m.rank = s.rank;
  memcpy(m.dims, s.dims, sizeof m.dims);
  int ql = 3 + bias;
  if (f->padding && check_seqlens(c, &m, ql)) return NULL;
  prelude(&m);
  int vq = hlt_gpu_operand(&m, q, 0, GPU_ROUND_NONE),
      vk = hlt_gpu_operand(&m, k, 1, GPU_ROUND_NONE);
  int vv = hlt_gpu_operand(&m, v, 2, GPU_ROUND_NONE);
  Mask mk = build_mask(&m, f, ql);
  int sc = scores(c, &m, f, vq, vk, &f->d1, bias ? 3 : -1, &mk);
  if (sc < 0) { free(m.t.s); return NULL; }
  int mx = row_reduce(&m, sc, -__builtin_inf(), "max");
  int e =
      hlt_gpu_unary(&m, "exponential", hlt_gpu_binary(&m, "subtract", sc, row_broadcast(&m, mx)));
  int sum = row_reduce(&m, e, 0, "sum");
  int p = hlt_gpu_binary(&m, "divide", e, row_broadcast(&m, sum));
  if (mk.qvalid >= 0) p = select_v(&m, mk.qvalid, p, hlt_gpu_splat(&m, 0));
  int outs[2] = {dot(&m, p, vv, O->dims, O->rank, &f->d2), 0};
  if (stats) {
    int lg = hlt_gpu_emit(&m, m.ct, s.dims, s.rank - 1, "log(");
    hlt_gpu_text(&m.t, "v%d)\n", sum);
    outs[1] = hlt_gpu_emit(&m, m.ct, s.dims, s.rank - 1, "add(");
    hlt_gpu_text(&m.t, "v%d, v%d)\n", mx, lg);
    if (mk.qrow >= 0) {
      int z = hlt_gpu_emit(&m, m.ct, NULL, 0, "constant(0)\n");
      int zb = hlt_gpu_emit(&m, m.ct, s.dims, s.rank - 1, "broadcast(");
      hlt_gpu_text(&m.t, "v%d), dimensions={}\n", z);
      int sel = hlt_gpu_emit(&m, m.ct, s.dims, s.rank - 1, "select(");
      hlt_gpu_text(&m.t, "v%d, v%d, v%d)\n", mk.qrow, outs[1], zb);
      outs[1] = sel;
    }
  }
  if (hlt_gpu_finish(&m, c->res, outs, stats ? 2 : 1)) {
    free(m.t.s);
    hlt_gpu_fail(c, "out of memory");
    return NULL;
  }
  return m.t.s;
}

/* D = the sum over dO's contracting (head) dimensions of dO * O, in the
 * scores' row order (batch dimensions, then the query dimension: m->dims
 * without the last): the row term of the softmax backward. g22 is the
 * dot dimension numbers of dO x V. */
static int row_sum_do_o(GpuMod *m, const Dims *g22, const GpuLeaf *dO, int vdo, int vo) {
  int e = hlt_gpu_emit(m, m->ct, dO->dims, dO->rank, "multiply(");
  hlt_gpu_text(&m->t, "v%d, v%d)\n", vdo, vo);
  int64_t rem[GPU_MAX_RANK], rdims[GPU_MAX_RANK], perm[GPU_MAX_RANK];
  int nrem = 0;
  for (int i = 0; i < dO->rank; i++)
    if (!has(g22->lc, g22->nlc, i)) { rem[nrem] = i; rdims[nrem++] = dO->dims[i]; }
  int z = hlt_gpu_emit(m, m->ct, NULL, 0, "constant(0)\n");
  int dsum = hlt_gpu_emit(m, m->ct, rdims, nrem, "reduce(");
  hlt_gpu_text(&m->t, "v%d, v%d), dimensions=", e, z);
  hlt_gpu_text_list(&m->t, g22->lc, g22->nlc);
  hlt_gpu_text(&m->t, ", to_apply=sum\n");
  int np = 0;
  for (int i = 0; i < g22->nlb; i++)
    for (int j = 0; j < nrem; j++)
      if (rem[j] == g22->lb[i]) perm[np++] = j;
  for (int j = 0; j < nrem; j++)
    if (!has(g22->lb, g22->nlb, rem[j])) perm[np++] = j;
  int dd = hlt_gpu_emit(m, m->ct, m->dims, m->rank - 1, "transpose(");
  hlt_gpu_text(&m->t, "v%d), dimensions=", dsum);
  hlt_gpu_text_list(&m->t, perm, np);
  hlt_gpu_text(&m->t, "\n");
  return dd;
}

static char *backward(GpuCall *c, const Cfg *f) {
  bool bias = strstr(c->target, "ScaleBias") != NULL;
  int want = 6 + bias + (f->padding ? 2 : 0);
  if (c->nops != want || (c->nres != 4 && c->nres != 5) || (c->nres == 5 && !bias)) {
    hlt_gpu_fail(c,
                 "has %d operands and %d results; %s with mask_type %s takes (q, k, v, stats, "
                 "dO%s, O%s) and gives (dQ, dK, dV%s, u8 workspace)",
                 c->nops, c->nres, c->target, mask_names[f->mask], bias ? ", bias" : "",
                 f->padding ? ", q_seqlen, kv_seqlen" : "", bias ? "[, dBias]" : "");
    return NULL;
  }
  const GpuLeaf *q = &c->ops[0], *k = &c->ops[1], *v = &c->ops[2], *st = &c->ops[3],
                *dO = &c->ops[4], *O = &c->ops[5 + bias];
  GpuLeaf s, s2;
  int fa, fb;
  memset(&s, 0, sizeof s);
  memset(&s2, 0, sizeof s2);
  s.rank = out_dims(dO, v, &f->g22, s.dims, &fa, &fb);
  s2.rank = out_dims(q, k, &f->g22, s2.dims, &fa, &fb);
  if (s.rank < 2 || fa != 1 || fb != 1 || !same_dims(s.dims, s.rank, &s2)) {
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
  if (st->dtype != HLO_F32 || !same_dims(s.dims, s.rank - 1, st)) {
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
    int orank = out_dims(&s, g[i].b, g[i].d, od, &fa, &fb);
    if (!same_dims(od, orank, &c->res[g[i].res])) {
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
  prelude(&m);
  int vq = hlt_gpu_operand(&m, q, 0, GPU_ROUND_NONE),
      vk = hlt_gpu_operand(&m, k, 1, GPU_ROUND_NONE);
  int vv = hlt_gpu_operand(&m, v, 2, GPU_ROUND_NONE),
      vs = hlt_gpu_operand(&m, st, 3, GPU_ROUND_NONE);
  int vdo = hlt_gpu_operand(&m, dO, 4, GPU_ROUND_NONE),
      vo = hlt_gpu_operand(&m, O, 5 + bias, GPU_ROUND_NONE);
  Mask mk = build_mask(&m, f, ql);
  int sc = scores(c, &m, f, vq, vk, &f->g22, bias ? 5 : -1, &mk);
  if (sc < 0) { free(m.t.s); return NULL; }
  int p =
      hlt_gpu_unary(&m, "exponential", hlt_gpu_binary(&m, "subtract", sc, row_broadcast(&m, vs)));
  if (mk.valid >= 0) p = select_v(&m, mk.valid, p, hlt_gpu_splat(&m, 0));
  int dp = dot(&m, vdo, vv, m.dims, m.rank, &f->g22);
  int dd = row_sum_do_o(&m, &f->g22, dO, vdo, vo);
  int ds =
      hlt_gpu_binary(&m, "multiply", p, hlt_gpu_binary(&m, "subtract", dp, row_broadcast(&m, dd)));
  int outs[4];
  for (int i = 0; i < 3; i++) {
    const GpuLeaf *r = &c->res[g[i].res];
    int x = dot(&m, i == 2 ? p : ds, i == 0 ? vk : i == 1 ? vq : vdo, r->dims, r->rank, g[i].d);
    if (i < 2 && f->scale != 1) {
      int k0 = hlt_gpu_emit(&m, m.ct, NULL, 0, "constant(");
      hlt_gpu_text_double(&m.t, f->scale);
      hlt_gpu_text(&m.t, ")\n");
      int kb = hlt_gpu_emit(&m, m.ct, r->dims, r->rank, "broadcast(");
      hlt_gpu_text(&m.t, "v%d), dimensions={}\n", k0);
      int y = hlt_gpu_emit(&m, m.ct, r->dims, r->rank, "multiply(");
      hlt_gpu_text(&m.t, "v%d, v%d)\n", x, kb);
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
      free(m.t.s);
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
        if (!has(red, nr, i)) kd[nk++] = s.dims[i];
      int z2 = hlt_gpu_emit(&m, m.ct, NULL, 0, "constant(0)\n");
      x = hlt_gpu_emit(&m, m.ct, kd, nk, "reduce(");
      hlt_gpu_text(&m.t, "v%d, v%d), dimensions=", ds, z2);
      hlt_gpu_text_list(&m.t, red, nr);
      hlt_gpu_text(&m.t, ", to_apply=sum\n");
    }
    outs[3] = hlt_gpu_emit(&m, m.ct, b->dims, b->rank, "reshape(");
    hlt_gpu_text(&m.t, "v%d)\n", x);
  }
  if (hlt_gpu_finish(&m, c->res, outs, c->nres - 1)) {
    free(m.t.s);
    hlt_gpu_fail(c, "out of memory");
    return NULL;
  }
  return m.t.s;
}

/* ---- packed (max_seg_per_batch > 1) and paged attention, forward ----------
 * cuda_dnn.cc GetCudnnFlashAttentionOperationGraph (operands after
 * cudnn_custom_call_compiler.cc: (q, k, v, q_seqlen, kv_seqlen, then
 * q_offsets, kv_offsets when packed, page_table_k, page_table_v when
 * paged)). Either turns cuDNN's padding mask on (set_padding_mask(true),
 * whatever mask_type says; CAUSAL/PADDING_CAUSAL add the causal mask).
 * Packed: the batch dimension (the first batch dimension of q, k, v in the
 *   dot dimension numbers) is multiplied by M = max_seg_per_batch
 *   (FixDimsForRaggedOffset): Bc = B*M segments, seq_q/seq_kv hold Bc
 *   lengths, offset_q/offset_kv Bc+1 element offsets (set_ragged_offset on
 *   q, k, v and O). Segment i's element (head n, position t, dim h) of q
 *   is the element offset_q[i] + t*st_t + n*st_n + h*st_h of q's memory
 *   (st_*: the strides of q's layout; the ragged offset replaces the batch
 *   stride), likewise k and v with offset_kv, and O is written the same
 *   way with offset_q and O's strides. Stats are dense [Bc, N, T].
 * Paged: k and v are page containers [blocks, N, block_size, H] (cuDNN's
 *   dims) and page_table_k/v s32[B, 1, nb, 1] (cudnn-frontend's paged
 *   caches: test/python/sdpa/helpers.py create_container_and_page_table);
 *   the logical key position s of batch b is page page_table[b, 0,
 *   s / block_size, 0], row s % block_size; max_seq_len_kv = nb*block_size.
 * Not written by the GPU (hlorun writes 0 there, its choice as for padded
 * rows above): O's elements no valid segment row covers, stats of padded
 * rows. Offsets are read as given: an index outside the buffer reads the
 * nearest element (gather clamps) and a write there is dropped; rows past a
 * segment's length read as 0 (the GPU does not read them). */

static void phys_strides(const GpuLeaf *l, int64_t *st) {
  int64_t acc = 1;
  for (int i = 0; i < l->rank; i++) {
    st[l->layout[i]] = acc;
    acc *= l->dims[l->layout[i]];
  }
}

static int64_t elements(const GpuLeaf *l) {
  int64_t n = 1;
  for (int i = 0; i < l->rank; i++) n *= l->dims[i];
  return n;
}

/* Operand i in the physical order of its layout, flattened (compute type). */
static int flat_phys(GpuMod *m, const GpuLeaf *l, int i) {
  int v = hlt_gpu_operand(m, l, i, GPU_ROUND_NONE);
  int64_t perm[GPU_MAX_RANK], pd[GPU_MAX_RANK], e[1] = {elements(l)};
  for (int j = 0; j < l->rank; j++) {
    perm[j] = l->layout[l->rank - 1 - j];
    pd[j] = l->dims[perm[j]];
  }
  int t = hlt_gpu_emit(m, m->ct, pd, l->rank, "transpose(");
  hlt_gpu_text(&m->t, "v%d), dimensions=", v);
  hlt_gpu_text_list(&m->t, perm, l->rank);
  hlt_gpu_text(&m->t, "\n");
  int f = hlt_gpu_emit(m, m->ct, e, 1, "reshape(");
  hlt_gpu_text(&m->t, "v%d)\n", t);
  return f;
}

static int s64_bcast_const(GpuMod *m, int64_t x, const int64_t *dims, int rank) {
  int k = hlt_gpu_emit(m, HLO_S64, NULL, 0, "constant(");
  hlt_gpu_text(&m->t, "%lld)\n", (long long)x);
  int b = hlt_gpu_emit(m, HLO_S64, dims, rank, "broadcast(");
  hlt_gpu_text(&m->t, "v%d), dimensions={}\n", k);
  return b;
}

static int s64_op(GpuMod *m, const char *op, int a, int b, const int64_t *dims, int rank) {
  int v = hlt_gpu_emit(m, HLO_S64, dims, rank, op);
  hlt_gpu_text(&m->t, "v%d, v%d)\n", a, b);
  return v;
}

/* iota along dim d times c. */
static int s64_iota_times(GpuMod *m, const int64_t *dims, int rank, int d, int64_t c) {
  int io = hlt_gpu_emit(m, HLO_S64, dims, rank, "iota(), ");
  hlt_gpu_text(&m->t, "iota_dimension=%d\n", d);
  if (c == 1) return io;
  return s64_op(m, "multiply(", io, s64_bcast_const(m, c, dims, rank), dims, rank);
}

/* Operand i (integers, any shape) flattened to s64[n] from its first n
 * elements in row-major order. */
static int s64_lead(GpuMod *m, const GpuLeaf *l, int i, int64_t n) {
  int p = hlt_gpu_emit(m, l->dtype, l->dims, l->rank, "parameter(");
  hlt_gpu_text(&m->t, "%d)\n", i);
  int64_t e[1] = {elements(l)};
  int r = hlt_gpu_emit(m, l->dtype, e, 1, "reshape(");
  hlt_gpu_text(&m->t, "v%d)\n", p);
  if (n != e[0]) {
    int64_t nn[1] = {n};
    int sl = hlt_gpu_emit(m, l->dtype, nn, 1, "slice(");
    hlt_gpu_text(&m->t, "v%d), slice={[0:%lld]}\n", r, (long long)n);
    r = sl;
  }
  int64_t nn[1] = {n};
  int cv = hlt_gpu_emit(m, HLO_S64, nn, 1, "convert(");
  hlt_gpu_text(&m->t, "v%d)\n", r);
  return cv;
}

/* [Bc, N, Sc, H] gathered from the flat operand fl: element (b, n, s, h) is
 * fl[base[b, s] + n*st_n + h*st_h] (base: s64[Bc, Sc]); rows s >= len[b]
 * (len: s32[Bc]) are 0: the GPU never reads them, and a non-finite value
 * there must not reach the result through a zero weight. */
static int gather_canon(GpuMod *m, int fl, int base, int64_t Bc, int64_t N, int64_t Sc,
                        int64_t H, int64_t st_n, int64_t st_h, int len) {
  int64_t d4[4] = {Bc, N, Sc, H}, d5[5] = {Bc, N, Sc, H, 1};
  int b = hlt_gpu_emit(m, HLO_S64, d4, 4, "broadcast(");
  hlt_gpu_text(&m->t, "v%d), dimensions={0,2}\n", base);
  int idx = s64_op(m, "add(", b, s64_iota_times(m, d4, 4, 1, st_n), d4, 4);
  idx = s64_op(m, "add(", idx, s64_iota_times(m, d4, 4, 3, st_h), d4, 4);
  int i5 = hlt_gpu_emit(m, HLO_S64, d5, 5, "reshape(");
  hlt_gpu_text(&m->t, "v%d)\n", idx);
  int g = hlt_gpu_emit(m, m->ct, d4, 4, "gather(");
  hlt_gpu_text(&m->t,
               "v%d, v%d), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, "
               "index_vector_dim=4, slice_sizes={1}\n",
               fl, i5);
  int it = hlt_gpu_emit(m, HLO_S32, d4, 4, "iota(), ");
  hlt_gpu_text(&m->t, "iota_dimension=2\n");
  int lb = hlt_gpu_emit(m, HLO_S32, d4, 4, "broadcast(");
  hlt_gpu_text(&m->t, "v%d), dimensions={0}\n", len);
  int ok = hlt_gpu_emit(m, HLO_PRED, d4, 4, "compare(");
  hlt_gpu_text(&m->t, "v%d, v%d), direction=LT\n", it, lb);
  int z = hlt_gpu_emit(m, m->ct, NULL, 0, "constant(0)\n");
  int zb = hlt_gpu_emit(m, m->ct, d4, 4, "broadcast(");
  hlt_gpu_text(&m->t, "v%d), dimensions={}\n", z);
  int v = hlt_gpu_emit(m, m->ct, d4, 4, "select(");
  hlt_gpu_text(&m->t, "v%d, v%d, v%d)\n", ok, g, zb);
  return v;
}

/* base[b, s] = off[b] + s*st_s (packed). */
static int base_packed(GpuMod *m, int off, int64_t Bc, int64_t Sc, int64_t st_s) {
  int64_t d2[2] = {Bc, Sc};
  int b = hlt_gpu_emit(m, HLO_S64, d2, 2, "broadcast(");
  hlt_gpu_text(&m->t, "v%d), dimensions={0}\n", off);
  return s64_op(m, "add(", b, s64_iota_times(m, d2, 2, 1, st_s), d2, 2);
}

/* base[b, s] = table[b, s / bs]*st_blk + (s % bs)*st_s (paged); the table
 * operand i is s32[B, 1, nb, 1]. */
static int base_paged(GpuMod *m, const GpuLeaf *pt, int i, int64_t B, int64_t nb, int64_t bs,
                      int64_t st_blk, int64_t st_s) {
  int64_t d2[2] = {B, nb}, d3[3] = {B, nb, bs}, ds[2] = {B, nb * bs};
  int p = hlt_gpu_emit(m, pt->dtype, pt->dims, pt->rank, "parameter(");
  hlt_gpu_text(&m->t, "%d)\n", i);
  int r = hlt_gpu_emit(m, pt->dtype, d2, 2, "reshape(");
  hlt_gpu_text(&m->t, "v%d)\n", p);
  int c = hlt_gpu_emit(m, HLO_S64, d2, 2, "convert(");
  hlt_gpu_text(&m->t, "v%d)\n", r);
  int b3 = hlt_gpu_emit(m, HLO_S64, d3, 3, "broadcast(");
  hlt_gpu_text(&m->t, "v%d), dimensions={0,1}\n", c);
  int blk = s64_op(m, "multiply(", b3, s64_bcast_const(m, st_blk, d3, 3), d3, 3);
  int row = s64_op(m, "add(", blk, s64_iota_times(m, d3, 3, 2, st_s), d3, 3);
  int out = hlt_gpu_emit(m, HLO_S64, ds, 2, "reshape(");
  hlt_gpu_text(&m->t, "v%d)\n", row);
  return out;
}

/* The canonical value x [Bc, N, L, D] written to result leaf r (logical dims
 * [B, N, L, D]) the ragged way: row (i, n, t, h) to element off[i] + t*st_t
 * + n*st_n + h*st_h of r's memory (r's layout) for the valid rows t <
 * len[i]; every other element 0; an index past the end drops the write. */
static int scatter_ragged(GpuMod *m, int x, const GpuLeaf *r, int off, int len, int64_t Bc,
                          int64_t N, int64_t L, int64_t D) {
  int64_t so[4], E = elements(r), oc[4] = {Bc, N, L, D}, o5[5] = {Bc, N, L, D, 1}, e1[1] = {E};
  phys_strides(r, so);
  int ob = hlt_gpu_emit(m, HLO_S64, oc, 4, "broadcast(");
  hlt_gpu_text(&m->t, "v%d), dimensions={0}\n", off);
  int idx = s64_op(m, "add(", ob, s64_iota_times(m, oc, 4, 2, so[2]), oc, 4);
  idx = s64_op(m, "add(", idx, s64_iota_times(m, oc, 4, 1, so[1]), oc, 4);
  idx = s64_op(m, "add(", idx, s64_iota_times(m, oc, 4, 3, so[3]), oc, 4);
  int it = hlt_gpu_emit(m, HLO_S32, oc, 4, "iota(), ");
  hlt_gpu_text(&m->t, "iota_dimension=2\n");
  int lb = hlt_gpu_emit(m, HLO_S32, oc, 4, "broadcast(");
  hlt_gpu_text(&m->t, "v%d), dimensions={0}\n", len);
  int ok = hlt_gpu_emit(m, HLO_PRED, oc, 4, "compare(");
  hlt_gpu_text(&m->t, "v%d, v%d), direction=LT\n", it, lb);
  int past = s64_bcast_const(m, E, oc, 4);
  int sel = hlt_gpu_emit(m, HLO_S64, oc, 4, "select(");
  hlt_gpu_text(&m->t, "v%d, v%d, v%d)\n", ok, idx, past);
  int i5 = hlt_gpu_emit(m, HLO_S64, o5, 5, "reshape(");
  hlt_gpu_text(&m->t, "v%d)\n", sel);
  int z = hlt_gpu_emit(m, m->ct, NULL, 0, "constant(0)\n");
  int zf = hlt_gpu_emit(m, m->ct, e1, 1, "broadcast(");
  hlt_gpu_text(&m->t, "v%d), dimensions={}\n", z);
  int fl = hlt_gpu_emit(m, m->ct, e1, 1, "scatter(");
  hlt_gpu_text(&m->t,
               "v%d, v%d, v%d), update_window_dims={}, inserted_window_dims={0}, "
               "scatter_dims_to_operand_dims={0}, index_vector_dim=4, to_apply=pick\n",
               zf, i5, x);
  int64_t perm[4], pd[4], inv[4];
  for (int j = 0; j < 4; j++) {
    perm[j] = r->layout[3 - j];
    pd[j] = r->dims[perm[j]];
    inv[perm[j]] = j;
  }
  int rs = hlt_gpu_emit(m, m->ct, pd, 4, "reshape(");
  hlt_gpu_text(&m->t, "v%d)\n", fl);
  int out = hlt_gpu_emit(m, m->ct, r->dims, 4, "transpose(");
  hlt_gpu_text(&m->t, "v%d), dimensions=", rs);
  hlt_gpu_text_list(&m->t, inv, 4);
  hlt_gpu_text(&m->t, "\n");
  return out;
}

/* dimension of a rank-4 operand that is none of a, b, c. */
static int other_dim(int64_t a, int64_t b, int64_t c) {
  for (int i = 0; i < 4; i++)
    if (i != a && i != b && i != c) return i;
  return -1;
}

/* The q and kv sequence lengths of the Bc segments: operands first and
 * first + 1 (s32, Bc elements), as parameters reshaped to s32[Bc]. */
static void seq_lens(GpuMod *m, const GpuCall *c, int first, int64_t Bc, int lens[2]) {
  for (int i = 0; i < 2; i++) {
    int64_t n1[1] = {Bc};
    int p = hlt_gpu_emit(m, HLO_S32, c->ops[first + i].dims, c->ops[first + i].rank, "parameter(");
    hlt_gpu_text(&m->t, "%d)\n", first + i);
    lens[i] = hlt_gpu_emit(m, HLO_S32, n1, 1, "reshape(");
    hlt_gpu_text(&m->t, "v%d)\n", p);
  }
}

static char *forward_ragged(GpuCall *c, const Cfg *f) {
  bool packed = f->segs > 1;
  const char *kind = packed ? "packed attention (max_seg_per_batch > 1)" : "paged attention";
  if (packed && f->paged)
    return hlt_gpu_fail(c,
                        "backend_config fields cudnn_fmha_backend_config.max_seg_per_batch and "
                        "is_paged_attention: hlorun does not run packed and paged attention "
                        "together"),
           NULL;
  if (strstr(c->target, "ScaleBias"))
    return hlt_gpu_fail(c, "hlorun runs %s without a bias only (%s has a bias operand)", kind,
                        c->target),
           NULL;
  if (c->nops != 7 || c->nres < 1 || c->nres > 3)
    return hlt_gpu_fail(c,
                        "has %d operands and %d results; %s with %s takes (q, k, v, q_seqlen, "
                        "kv_seqlen, %s) and gives (O[, stats], u8 workspace)",
                        c->nops, c->nres, c->target, kind,
                        packed ? "q_offsets, kv_offsets" : "page_table_k, page_table_v"),
           NULL;
  const GpuLeaf *q = &c->ops[0], *k = &c->ops[1], *v = &c->ops[2], *O = &c->res[0];
  const Dims *d1 = &f->d1, *d2 = &f->d2;
  if (q->rank != 4 || k->rank != 4 || v->rank != 4 || d1->nlb != 2 || d1->nrb != 2 ||
      d1->nlc != 1 || d1->nrc != 1 || d2->nlb != 2 || d2->nrb != 2 || d2->nlc != 1 ||
      d2->nrc != 1 || d2->lb[0] != 0 || d2->lb[1] != 1 || d2->lc[0] != 3)
    return hlt_gpu_fail(c,
                        "backend_config fields cudnn_fmha_backend_config.bmm1_/bmm2_dot_dimension_"
                        "numbers: %s takes rank-4 q, k and v with two batch dimensions (batch, "
                        "heads) and one contracting dimension each (cuDNN's [b, h, s, d]), and "
                        "bmm2 reading the scores as [b, h, q, k]",
                        kind),
           NULL;
  int qb = (int)d1->lb[0], qn = (int)d1->lb[1], qh = (int)d1->lc[0];
  int kb = (int)d1->rb[0], kn = (int)d1->rb[1], kh = (int)d1->rc[0];
  int vb = (int)d2->rb[0], vn = (int)d2->rb[1], vs = (int)d2->rc[0];
  int qt = other_dim(qb, qn, qh), ks = other_dim(kb, kn, kh), vh = other_dim(vb, vn, vs);
  if (qt < 0 || ks < 0 || vh < 0)
    return hlt_gpu_fail(c,
                        "backend_config fields cudnn_fmha_backend_config.bmm1_/bmm2_dot_dimension_"
                        "numbers name one dimension twice"),
           NULL;
  int64_t B = q->dims[qb], N = q->dims[qn], T = q->dims[qt], H = q->dims[qh], Hv = v->dims[vh];
  int64_t M = packed ? f->segs : 1, Bc = B * M, Sc, nb = 0, bs = 0;
  if (k->dims[kn] != N || v->dims[vn] != N || k->dims[kh] != H || k->dims[kb] != v->dims[vb] ||
      k->dims[ks] != v->dims[vs])
    return hlt_gpu_fail(c,
                        "q, k and v do not agree on the heads, the head size, or k and v on "
                        "their batch (or blocks) and sequence (or block) sizes"),
           NULL;
  if (packed) {
    if (k->dims[kb] != B)
      return hlt_gpu_fail(c, "k and v must have q's batch size %lld", (long long)B), NULL;
    Sc = k->dims[ks];
  } else {
    const GpuLeaf *pk = &c->ops[5], *pv = &c->ops[6];
    bs = k->dims[ks];
    nb = pk->rank == 4 ? pk->dims[2] : 0;
    for (int i = 5; i < 7; i++) {
      const GpuLeaf *pt = &c->ops[i];
      if (pt->dtype != HLO_S32 || pt->rank != 4 || pt->dims[0] != B || pt->dims[1] != 1 ||
          pt->dims[3] != 1 || pt->dims[2] != nb || nb < 1)
        return hlt_gpu_fail(c,
                            "operand %d (%s) must be s32[%lld,1,nb,1] (one page index per "
                            "logical block of each batch), as page_table_k",
                            i, i == 5 ? "page_table_k" : "page_table_v", (long long)B),
               NULL;
    }
    (void)pv;
    Sc = nb * bs;
  }
  int64_t od[4] = {B, N, T, Hv};
  if (!same_dims(od, 4, O))
    return hlt_gpu_fail(c,
                        "result 0 (O) must be [%lld,%lld,%lld,%lld] (batch, heads, queries, "
                        "head size: bmm2's output)",
                        (long long)B, (long long)N, (long long)T, (long long)Hv),
           NULL;
  bool stats = c->nres == 3 || (c->nres == 2 && c->res[1].dtype == HLO_F32 && c->res[1].rank == 3);
  int64_t sd[3] = {Bc, N, T};
  if (stats && (c->res[1].dtype != HLO_F32 || !same_dims(sd, 3, &c->res[1])))
    return hlt_gpu_fail(c,
                        "result 1 (stats) must be f32[%lld,%lld,%lld] (one row per segment, "
                        "head and query)",
                        (long long)Bc, (long long)N, (long long)T),
           NULL;
  for (int i = 3; i < 5; i++)
    if (c->ops[i].dtype != HLO_S32 || elements(&c->ops[i]) != Bc)
      return hlt_gpu_fail(c, "operand %d (%s) must be s32 with %lld elements (one length per %s)",
                          i, i == 3 ? "q_seqlen" : "kv_seqlen", (long long)Bc,
                          packed ? "segment: batch times max_seg_per_batch" : "batch"),
             NULL;
  if (packed)
    for (int i = 5; i < 7; i++)
      if (c->ops[i].dtype != HLO_S32 || elements(&c->ops[i]) < Bc + 1)
        return hlt_gpu_fail(c,
                            "operand %d (%s) must be s32 with at least %lld elements (the "
                            "element offset of each of the %lld segments, and one more)",
                            i, i == 5 ? "q_offsets" : "kv_offsets", (long long)(Bc + 1),
                            (long long)Bc),
               NULL;
  int64_t sq[4], sk[4], sv[4];
  phys_strides(q, sq);
  phys_strides(k, sk);
  phys_strides(v, sv);
  GpuMod m = {0};
  m.ct = (q->dtype == HLO_F64) ? HLO_F64 : HLO_F32;
  m.rank = 4;
  m.dims[0] = Bc; m.dims[1] = N; m.dims[2] = T; m.dims[3] = Sc;
  prelude(&m);
  int lens[2];
  seq_lens(&m, c, 3, Bc, lens);
  int vq, vk, vv, offq = -1;
  if (packed) {
    offq = s64_lead(&m, &c->ops[5], 5, Bc);
    int offkv = s64_lead(&m, &c->ops[6], 6, Bc);
    vq = gather_canon(&m, flat_phys(&m, q, 0), base_packed(&m, offq, Bc, T, sq[qt]), Bc, N, T, H,
                      sq[qn], sq[qh], lens[0]);
    vk = gather_canon(&m, flat_phys(&m, k, 1), base_packed(&m, offkv, Bc, Sc, sk[ks]), Bc, N, Sc,
                      H, sk[kn], sk[kh], lens[1]);
    vv = gather_canon(&m, flat_phys(&m, v, 2), base_packed(&m, offkv, Bc, Sc, sv[vs]), Bc, N, Sc,
                      Hv, sv[vn], sv[vh], lens[1]);
  } else {
    int x = hlt_gpu_operand(&m, q, 0, GPU_ROUND_NONE);
    int64_t qd[4] = {B, N, T, H}, perm[4] = {qb, qn, qt, qh};
    vq = hlt_gpu_emit(&m, m.ct, qd, 4, "transpose(");
    hlt_gpu_text(&m.t, "v%d), dimensions=", x);
    hlt_gpu_text_list(&m.t, perm, 4);
    hlt_gpu_text(&m.t, "\n");
    vk = gather_canon(&m, flat_phys(&m, k, 1), base_paged(&m, &c->ops[5], 5, B, nb, bs, sk[kb], sk[ks]),
                      B, N, Sc, H, sk[kn], sk[kh], lens[1]);
    vv = gather_canon(&m, flat_phys(&m, v, 2), base_paged(&m, &c->ops[6], 6, B, nb, bs, sv[vb], sv[vs]),
                      B, N, Sc, Hv, sv[vn], sv[vh], lens[1]);
  }
  Cfg fc = *f;
  fc.padding = true;
  Mask mk = build_mask_lens(&m, &fc, -1, lens);
  Dims cd1 = {{0, 1}, {0, 1}, {3}, {3}, 2, 2, 1, 1}, cd2 = {{0, 1}, {0, 1}, {3}, {2}, 2, 2, 1, 1};
  int sc = scores(c, &m, &fc, vq, vk, &cd1, -1, &mk);
  if (sc < 0) { free(m.t.s); return NULL; }
  int mx = row_reduce(&m, sc, -__builtin_inf(), "max");
  int e =
      hlt_gpu_unary(&m, "exponential", hlt_gpu_binary(&m, "subtract", sc, row_broadcast(&m, mx)));
  int sum = row_reduce(&m, e, 0, "sum");
  int p = hlt_gpu_binary(&m, "divide", e, row_broadcast(&m, sum));
  p = select_v(&m, mk.qvalid, p, hlt_gpu_splat(&m, 0));
  int64_t oc[4] = {Bc, N, T, Hv};
  int o = dot(&m, p, vv, oc, 4, &cd2);
  int outs[2] = {o, 0};
  if (packed) outs[0] = scatter_ragged(&m, o, O, offq, lens[0], Bc, N, T, Hv);
  if (stats) {
    int lg = hlt_gpu_emit(&m, m.ct, sd, 3, "log(");
    hlt_gpu_text(&m.t, "v%d)\n", sum);
    int st = hlt_gpu_emit(&m, m.ct, sd, 3, "add(");
    hlt_gpu_text(&m.t, "v%d, v%d)\n", mx, lg);
    int zz = hlt_gpu_emit(&m, m.ct, NULL, 0, "constant(0)\n");
    int zb = hlt_gpu_emit(&m, m.ct, sd, 3, "broadcast(");
    hlt_gpu_text(&m.t, "v%d), dimensions={}\n", zz);
    outs[1] = hlt_gpu_emit(&m, m.ct, sd, 3, "select(");
    hlt_gpu_text(&m.t, "v%d, v%d, v%d)\n", mk.qrow, st, zb);
  }
  if (hlt_gpu_finish(&m, c->res, outs, stats ? 2 : 1)) {
    free(m.t.s);
    hlt_gpu_fail(c, "out of memory");
    return NULL;
  }
  return m.t.s;
}

/* Packed backward: GetCudnnFlashAttentionBackwardOperationGraph applies
 * the same ragged offsets (offset_q on q, O, dO and dQ; offset_kv on k, v,
 * dK and dV), stats dense [B*M, N, T], and the padding mask (operands (q, k,
 * v, stats, dO, O, q_seqlen, kv_seqlen, q_offsets, kv_offsets)); the
 * gradients are backward()'s, per segment. */

/* Operand i (roles: batch b, heads n, sequence sq, head size h) gathered to
 * [Bc, N, L, D] the ragged way with offsets off. */
static int gather_ragged(GpuMod *m, const GpuLeaf *l, int i, int n, int sq, int h, int off,
                         int len, int64_t Bc, int64_t N, int64_t L, int64_t D) {
  int64_t st[4];
  phys_strides(l, st);
  return gather_canon(m, flat_phys(m, l, i), base_packed(m, off, Bc, L, st[sq]), Bc, N, L, D,
                      st[n], st[h], len);
}

static char *backward_ragged(GpuCall *c, const Cfg *f) {
  if (strstr(c->target, "ScaleBias"))
    return hlt_gpu_fail(c,
                        "hlorun runs packed attention (max_seg_per_batch > 1) without a bias only "
                        "(%s has a bias operand)",
                        c->target),
           NULL;
  if (c->nops != 10 || c->nres != 4)
    return hlt_gpu_fail(
               c,
               "has %d operands and %d results; %s with packed attention "
               "(max_seg_per_batch > 1) takes (q, k, v, stats, dO, O, q_seqlen, kv_seqlen, "
               "q_offsets, kv_offsets) and gives (dQ, dK, dV, u8 workspace)",
               c->nops, c->nres, c->target),
           NULL;
  const GpuLeaf *q = &c->ops[0], *k = &c->ops[1], *v = &c->ops[2], *st = &c->ops[3],
                *dO = &c->ops[4], *O = &c->ops[5];
  const Dims *g11 = &f->g11, *g12 = &f->g12, *g21 = &f->g21, *g22 = &f->g22;
  const Dims *all[4] = {g11, g12, g21, g22};
  bool ok = q->rank == 4 && k->rank == 4 && v->rank == 4 && dO->rank == 4;
  for (int i = 0; ok && i < 4; i++)
    ok = all[i]->nlb == 2 && all[i]->nrb == 2 && all[i]->nlc == 1 && all[i]->nrc == 1;
  ok = ok && g11->lb[0] == 0 && g11->lb[1] == 1 && g11->lc[0] == 2 && g12->lb[0] == 0 &&
       g12->lb[1] == 1 && g12->lc[0] == 3 && g21->lb[0] == 0 && g21->lb[1] == 1 &&
       g21->lc[0] == 2 && g22->lb[0] == g21->rb[0] && g22->lb[1] == g21->rb[1];
  if (!ok)
    return hlt_gpu_fail(c,
                        "backend_config fields cudnn_fmha_backend_config.bmm*_grad_gemm*_dot_"
                        "dimension_numbers: packed attention takes rank-4 q, k, v and dO with two "
                        "batch dimensions (batch, heads) and one contracting dimension each "
                        "(cuDNN's [b, h, s, d]), the gradients of the scores read as [b, h, q, k]"),
           NULL;
  int qb = (int)g11->rb[0], qn = (int)g11->rb[1], qt = (int)g11->rc[0];
  int kb = (int)g12->rb[0], kn = (int)g12->rb[1], ks = (int)g12->rc[0];
  int vb = (int)g22->rb[0], vn = (int)g22->rb[1], vh = (int)g22->rc[0];
  int db = (int)g21->rb[0], dn = (int)g21->rb[1], dt = (int)g21->rc[0];
  int qh = other_dim(qb, qn, qt), kh = other_dim(kb, kn, ks), vs = other_dim(vb, vn, vh);
  int dh = other_dim(db, dn, dt);
  if (qh < 0 || kh < 0 || vs < 0 || dh < 0 || g22->lc[0] != dh)
    return hlt_gpu_fail(c,
                        "backend_config fields cudnn_fmha_backend_config.bmm*_grad_gemm*_dot_"
                        "dimension_numbers name one dimension twice or disagree on dO's head "
                        "size dimension"),
           NULL;
  int64_t B = q->dims[qb], N = q->dims[qn], T = q->dims[qt], H = q->dims[qh];
  int64_t S = k->dims[ks], Hv = v->dims[vh], Bc = B * f->segs;
  bool okO = O->rank == 4;
  for (int i = 0; okO && i < 4; i++) okO = O->dims[i] == dO->dims[i];
  if (k->dims[kb] != B || v->dims[vb] != B || dO->dims[db] != B || k->dims[kn] != N ||
      v->dims[vn] != N || dO->dims[dn] != N || k->dims[kh] != H || v->dims[vs] != S ||
      dO->dims[dt] != T || dO->dims[dh] != Hv || !okO)
    return hlt_gpu_fail(c,
                        "q, k, v, dO and O do not agree on the batch, heads, sequence or head "
                        "sizes (O must have dO's shape)"),
           NULL;
  int64_t sd[3] = {Bc, N, T};
  if (st->dtype != HLO_F32 || !same_dims(sd, 3, st))
    return hlt_gpu_fail(c,
                        "operand 3 (stats) must be f32[%lld,%lld,%lld] (one row per segment, head "
                        "and query)",
                        (long long)Bc, (long long)N, (long long)T),
           NULL;
  int64_t rd[3][4] = {{B, N, T, H}, {B, N, S, H}, {B, N, S, Hv}};
  static const char *const rn[3] = {"dQ", "dK", "dV"};
  for (int i = 0; i < 3; i++)
    if (!same_dims(rd[i], 4, &c->res[i]))
      return hlt_gpu_fail(c,
                          "result %d (%s) must be [%lld,%lld,%lld,%lld] (batch, heads, sequence, "
                          "head size)",
                          i, rn[i], (long long)rd[i][0], (long long)rd[i][1], (long long)rd[i][2],
                          (long long)rd[i][3]),
             NULL;
  for (int i = 6; i < 8; i++)
    if (c->ops[i].dtype != HLO_S32 || elements(&c->ops[i]) != Bc)
      return hlt_gpu_fail(c,
                          "operand %d (%s) must be s32 with %lld elements (one length per "
                          "segment: batch times max_seg_per_batch)",
                          i, i == 6 ? "q_seqlen" : "kv_seqlen", (long long)Bc),
             NULL;
  for (int i = 8; i < 10; i++)
    if (c->ops[i].dtype != HLO_S32 || elements(&c->ops[i]) < Bc + 1)
      return hlt_gpu_fail(c,
                          "operand %d (%s) must be s32 with at least %lld elements (the element "
                          "offset of each of the %lld segments, and one more)",
                          i, i == 8 ? "q_offsets" : "kv_offsets", (long long)(Bc + 1),
                          (long long)Bc),
             NULL;
  GpuMod m = {0};
  m.ct = (q->dtype == HLO_F64) ? HLO_F64 : HLO_F32;
  m.rank = 4;
  m.dims[0] = Bc; m.dims[1] = N; m.dims[2] = T; m.dims[3] = S;
  prelude(&m);
  int lens[2];
  seq_lens(&m, c, 6, Bc, lens);
  int offq = s64_lead(&m, &c->ops[8], 8, Bc), offkv = s64_lead(&m, &c->ops[9], 9, Bc);
  int vq = gather_ragged(&m, q, 0, qn, qt, qh, offq, lens[0], Bc, N, T, H);
  int vk = gather_ragged(&m, k, 1, kn, ks, kh, offkv, lens[1], Bc, N, S, H);
  int vv = gather_ragged(&m, v, 2, vn, vs, vh, offkv, lens[1], Bc, N, S, Hv);
  int vdo = gather_ragged(&m, dO, 4, dn, dt, dh, offq, lens[0], Bc, N, T, Hv);
  int vo = gather_ragged(&m, O, 5, dn, dt, dh, offq, lens[0], Bc, N, T, Hv);
  int vs_ = hlt_gpu_operand(&m, st, 3, GPU_ROUND_NONE);
  Cfg fc = *f;
  fc.padding = true;
  Mask mk = build_mask_lens(&m, &fc, -1, lens);
  Dims cqk = {{0, 1}, {0, 1}, {3}, {3}, 2, 2, 1, 1}, cpd = {{0, 1}, {0, 1}, {2}, {2}, 2, 2, 1, 1},
       csk = {{0, 1}, {0, 1}, {3}, {2}, 2, 2, 1, 1};
  int sc = scores(c, &m, &fc, vq, vk, &cqk, -1, &mk);
  if (sc < 0) { free(m.t.s); return NULL; }
  int p =
      hlt_gpu_unary(&m, "exponential", hlt_gpu_binary(&m, "subtract", sc, row_broadcast(&m, vs_)));
  p = select_v(&m, mk.valid, p, hlt_gpu_splat(&m, 0));
  int dp = dot(&m, vdo, vv, m.dims, 4, &cqk);
  int64_t dvd[4] = {Bc, N, T, Hv};
  int e = hlt_gpu_emit(&m, m.ct, dvd, 4, "multiply(");
  hlt_gpu_text(&m.t, "v%d, v%d)\n", vdo, vo);
  int z = hlt_gpu_emit(&m, m.ct, NULL, 0, "constant(0)\n");
  int dd = hlt_gpu_emit(&m, m.ct, sd, 3, "reduce(");
  hlt_gpu_text(&m.t, "v%d, v%d), dimensions={3}, to_apply=sum\n", e, z);
  int ds =
      hlt_gpu_binary(&m, "multiply", p, hlt_gpu_binary(&m, "subtract", dp, row_broadcast(&m, dd)));
  int64_t qd[4] = {Bc, N, T, H}, kd[4] = {Bc, N, S, H}, vd[4] = {Bc, N, S, Hv};
  int gq = dot(&m, ds, vk, qd, 4, &csk), gk = dot(&m, ds, vq, kd, 4, &cpd);
  int gv = dot(&m, p, vdo, vd, 4, &cpd);
  if (f->scale != 1) {
    int gs[2] = {gq, gk};
    for (int i = 0; i < 2; i++) {
      const int64_t *d = i ? kd : qd;
      int k0 = hlt_gpu_emit(&m, m.ct, NULL, 0, "constant(");
      hlt_gpu_text_double(&m.t, f->scale);
      hlt_gpu_text(&m.t, ")\n");
      int kb2 = hlt_gpu_emit(&m, m.ct, d, 4, "broadcast(");
      hlt_gpu_text(&m.t, "v%d), dimensions={}\n", k0);
      int y = hlt_gpu_emit(&m, m.ct, d, 4, "multiply(");
      hlt_gpu_text(&m.t, "v%d, v%d)\n", gs[i], kb2);
      gs[i] = y;
    }
    gq = gs[0];
    gk = gs[1];
  }
  int outs[3];
  outs[0] = scatter_ragged(&m, gq, &c->res[0], offq, lens[0], Bc, N, T, H);
  outs[1] = scatter_ragged(&m, gk, &c->res[1], offkv, lens[1], Bc, N, S, H);
  outs[2] = scatter_ragged(&m, gv, &c->res[2], offkv, lens[1], Bc, N, S, Hv);
  if (hlt_gpu_finish(&m, c->res, outs, 3)) {
    free(m.t.s);
    hlt_gpu_fail(c, "out of memory");
    return NULL;
  }
  return m.t.s;
}

/* ---- __cudnn$fmhaSoftmaxF8 ------------------------------------------------
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

/* Scalar operand i (one f32 element) as an f32[] value. */
static int scalar_op(GpuMod *m, const GpuLeaf *l, int i) {
  int p = hlt_gpu_emit(m, l->dtype, l->dims, l->rank, "parameter(");
  hlt_gpu_text(&m->t, "%d)\n", i);
  int r = hlt_gpu_emit(m, HLO_F32, NULL, 0, "reshape(");
  hlt_gpu_text(&m->t, "v%d)\n", p);
  return r;
}

/* x (shape dims) times scalars a [, b]. */
static int scale_by(GpuMod *m, int x, const int64_t *dims, int rank, int a, int b) {
  int sc[2] = {a, b};
  for (int i = 0; i < 2 && sc[i] >= 0; i++) {
    int bb = hlt_gpu_emit(m, HLO_F32, dims, rank, "broadcast(");
    hlt_gpu_text(&m->t, "v%d), dimensions={}\n", sc[i]);
    int v = hlt_gpu_emit(m, HLO_F32, dims, rank, "multiply(");
    hlt_gpu_text(&m->t, "v%d, v%d)\n", x, bb);
    x = v;
  }
  return x;
}

/* max |x| over every element, reshaped to the result leaf r. */
static int amax_of(GpuMod *m, int x, const int64_t *dims, int rank, const GpuLeaf *r) {
  int ab = hlt_gpu_emit(m, HLO_F32, dims, rank, "abs(");
  hlt_gpu_text(&m->t, "v%d)\n", x);
  int z = hlt_gpu_emit(m, HLO_F32, NULL, 0, "constant(0)\n");
  int64_t all[GPU_MAX_RANK];
  for (int i = 0; i < rank; i++) all[i] = i;
  int v = hlt_gpu_emit(m, HLO_F32, NULL, 0, "reduce(");
  hlt_gpu_text(&m->t, "v%d, v%d), dimensions=", ab, z);
  hlt_gpu_text_list(&m->t, all, rank);
  hlt_gpu_text(&m->t, ", to_apply=max\n");
  int w = hlt_gpu_emit(m, HLO_F32, r->dims, r->rank, "reshape(");
  hlt_gpu_text(&m->t, "v%d)\n", v);
  return w;
}

/* x stored as f8 type t (saturating) and read back as f32. */
static int store_f8(GpuMod *m, int x, const int64_t *dims, int rank, HloDtype t) {
  double mx = t == HLO_F8E4M3FN ? 448 : 57344;
  int lo = hlt_gpu_emit(m, HLO_F32, NULL, 0, "constant(");
  hlt_gpu_text_double(&m->t, -mx);
  hlt_gpu_text(&m->t, ")\n");
  int hi = hlt_gpu_emit(m, HLO_F32, NULL, 0, "constant(");
  hlt_gpu_text_double(&m->t, mx);
  hlt_gpu_text(&m->t, ")\n");
  int c = hlt_gpu_emit(m, HLO_F32, dims, rank, "clamp(");
  hlt_gpu_text(&m->t, "v%d, v%d, v%d)\n", lo, x, hi);
  int n = hlt_gpu_emit(m, t, dims, rank, "convert(");
  hlt_gpu_text(&m->t, "v%d)\n", c);
  int w = hlt_gpu_emit(m, HLO_F32, dims, rank, "convert(");
  hlt_gpu_text(&m->t, "v%d)\n", n);
  return w;
}

static char *forward_f8(GpuCall *c, const Cfg *f) {
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
  s.rank = out_dims(q, k, &f->d1, s.dims, &fa, &fb);
  if (s.rank < 2 || fa != 1 || fb != 1)
    return hlt_gpu_fail(c,
                        "backend_config field cudnn_fmha_backend_config.bmm1_dot_dimension_numbers "
                        "does not fit q and k"),
           NULL;
  GpuMod m = {0};
  m.ct = HLO_F32;
  s.dtype = HLO_F32;
  int64_t od[GPU_MAX_RANK];
  int orank = out_dims(&s, v, &f->d2, od, &fp, &fv);
  if (!same_dims(od, orank, O))
    return hlt_gpu_fail(c,
                        "backend_config field cudnn_fmha_backend_config.bmm2_dot_dimension_numbers "
                        "does not map the scores and v onto the result's shape"),
           NULL;
  bool stats = c->nres == 5;
  if (stats && (c->res[3].dtype != HLO_F32 || !same_dims(s.dims, s.rank - 1, &c->res[3])))
    return hlt_gpu_fail(c,
                        "result 3 (stats) must be f32 with the scores' shape less the key "
                        "dimension"),
           NULL;
  m.rank = s.rank;
  memcpy(m.dims, s.dims, sizeof m.dims);
  prelude(&m);
  int vq = hlt_gpu_operand(&m, q, 0, GPU_ROUND_NONE),
      vk = hlt_gpu_operand(&m, k, 1, GPU_ROUND_NONE);
  int vv = hlt_gpu_operand(&m, v, 2, GPU_ROUND_NONE);
  /* The F8 graph reads mask_type only (is_causal_mask predates it). */
  Cfg fc = *f;
  fc.causal = f->mask == MASK_CAUSAL;
  f = &fc;
  int sc_[6];
  for (int i = 0; i < 6; i++) sc_[i] = scalar_op(&m, &c->ops[3 + i], 3 + i);
  Mask mk = build_mask(&m, f, 0);
  int sc = dot(&m, vq, vk, m.dims, m.rank, &f->d1);
  if (f->scale != 1) sc = hlt_gpu_binary(&m, "multiply", sc, hlt_gpu_splat(&m, f->scale));
  sc = scale_by(&m, sc, m.dims, m.rank, sc_[0], sc_[1]);
  if (mk.valid >= 0) sc = select_v(&m, mk.valid, sc, hlt_gpu_splat(&m, -__builtin_inf()));
  int mx = row_reduce(&m, sc, -__builtin_inf(), "max");
  int e =
      hlt_gpu_unary(&m, "exponential", hlt_gpu_binary(&m, "subtract", sc, row_broadcast(&m, mx)));
  int sum = row_reduce(&m, e, 0, "sum");
  int p = hlt_gpu_binary(&m, "divide", e, row_broadcast(&m, sum));
  int outs[4];
  outs[1] = amax_of(&m, p, m.dims, m.rank, &c->res[1]);
  int p8 = store_f8(&m, scale_by(&m, p, m.dims, m.rank, sc_[4], -1), m.dims, m.rank, q->dtype);
  int o = dot(&m, p8, vv, O->dims, O->rank, &f->d2);
  o = scale_by(&m, o, O->dims, O->rank, sc_[3], sc_[2]);
  outs[2] = amax_of(&m, o, O->dims, O->rank, &c->res[2]);
  outs[0] = store_f8(&m, scale_by(&m, o, O->dims, O->rank, sc_[5], -1), O->dims, O->rank, O->dtype);
  if (stats) {
    int lg = hlt_gpu_emit(&m, m.ct, s.dims, s.rank - 1, "log(");
    hlt_gpu_text(&m.t, "v%d)\n", sum);
    outs[3] = hlt_gpu_emit(&m, m.ct, s.dims, s.rank - 1, "add(");
    hlt_gpu_text(&m.t, "v%d, v%d)\n", mx, lg);
  }
  if (hlt_gpu_finish(&m, c->res, outs, stats ? 4 : 3)) {
    free(m.t.s);
    hlt_gpu_fail(c, "out of memory");
    return NULL;
  }
  return m.t.s;
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
 * all eight f8 tensors must share it. Stores saturate as forward_f8's. */
static char *backward_f8(GpuCall *c, const Cfg *f) {
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
  s.rank = out_dims(dO, v, &f->g22, s.dims, &fa, &fb);
  s2.rank = out_dims(q, k, &f->g22, s2.dims, &fa, &fb);
  if (s.rank < 2 || fa != 1 || fb != 1 || !same_dims(s.dims, s.rank, &s2))
    return hlt_gpu_fail(c,
                        "backend_config field cudnn_fmha_backend_config.bmm2_grad_gemm2_dot_"
                        "dimension_numbers does not fit dO and v, or q and k (it must pair their "
                        "batch and head sizes and leave one query and one key dimension)"),
           NULL;
  bool okO = O->rank == dO->rank;
  for (int i = 0; okO && i < O->rank; i++) okO = O->dims[i] == dO->dims[i];
  if (!okO) return hlt_gpu_fail(c, "operand 3 (the forward output O) must have dO's shape"), NULL;
  if (st->dtype != HLO_F32 || !same_dims(s.dims, s.rank - 1, st))
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
    int orank = out_dims(&s, g[i].b, g[i].d, od, &fa, &fb);
    if (!same_dims(od, orank, &c->res[g[i].res]))
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
  prelude(&m);
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
  Mask mk = build_mask(&m, &fc, 0);
  int sc = dot(&m, vq, vk, m.dims, m.rank, &f->g22);
  if (f->scale != 1) sc = hlt_gpu_binary(&m, "multiply", sc, hlt_gpu_splat(&m, f->scale));
  sc = scale_by(&m, sc, m.dims, m.rank, sc_[DSC_Q], sc_[DSC_K]);
  if (mk.valid >= 0) sc = select_v(&m, mk.valid, sc, hlt_gpu_splat(&m, -__builtin_inf()));
  int p =
      hlt_gpu_unary(&m, "exponential", hlt_gpu_binary(&m, "subtract", sc, row_broadcast(&m, vs)));
  int p8 = store_f8(&m, scale_by(&m, p, m.dims, m.rank, sc_[SC_S], -1), m.dims, m.rank, t);
  int dd = row_sum_do_o(&m, &f->g22, dO, vdo, vo);
  dd = scale_by(&m, dd, s.dims, s.rank - 1, sc_[DSC_DO], sc_[DSC_O]);
  int dp = dot(&m, vdo, vv, m.dims, m.rank, &f->g22);
  dp = scale_by(&m, dp, m.dims, m.rank, sc_[DSC_DO], sc_[DSC_V]);
  int ds =
      hlt_gpu_binary(&m, "multiply", hlt_gpu_binary(&m, "subtract", dp, row_broadcast(&m, dd)), p);
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
    int x = dot(&m, lhs[i], rhs[i], r->dims, r->rank, g[i].d);
    x = scale_by(&m, x, r->dims, r->rank, da[i], db[i]);
    outs[3 + i] = amax_of(&m, x, r->dims, r->rank, &c->res[3 + i]);
    outs[i] = store_f8(&m, scale_by(&m, x, r->dims, r->rank, sc3[i], -1), r->dims, r->rank, t);
  }
  if (hlt_gpu_finish(&m, c->res, outs, 7)) {
    free(m.t.s);
    hlt_gpu_fail(c, "out of memory");
    return NULL;
  }
  return m.t.s;
}

char *hlt_gpu_build_fmha(GpuCall *c) {
  bool bwd = strstr(c->target, "Backward") != NULL;
  bool f8 = strstr(c->target, "F8") != NULL;
  Cfg f;
  memset(&f, 0, sizeof f);
  if (read_config(c, bwd, &f)) return NULL;
  if (f8 && (f.segs > 1 || f.paged))
    return hlt_gpu_fail(c,
                        "backend_config field cudnn_fmha_backend_config.%s: XLA's F8 attention "
                        "graphs have no packed or paged layout",
                        f.segs > 1 ? "max_seg_per_batch" : "is_paged_attention"),
           NULL;
  if (f8) return bwd ? backward_f8(c, &f) : forward_f8(c, &f);
  if (bwd && f.segs > 1) return backward_ragged(c, &f);
  if (!bwd && (f.segs > 1 || f.paged)) return forward_ragged(c, &f);
  return bwd ? backward(c, &f) : forward(c, &f);
}
