/* fmha.c: cuDNN fused attention as standard HLO, the part every form
 * shares: reading CudnnfMHABackendConfig (xla/service/gpu/
 * backend_configs.proto), the dot dimension numbers, the masks and the
 * scores, and hlt_gpu_build_fmha, which hands the call to its builder:
 *   fmha_dense.c   __cudnn$fmhaSoftmax, __cudnn$fmhaScaleBiasSoftmax and
 *                  their Dropout forms at dropout_rate 0, and their Backward
 *                  forms;
 *   fmha_ragged.c  packed (max_seg_per_batch > 1: ragged offsets) and paged
 *                  (page tables) layouts; paged runs forward only;
 *   fmha_f8.c      __cudnn$fmhaSoftmaxF8 and __cudnn$fmhaSoftmaxBackwardF8.
 * Masks: CAUSAL (or is_causal_mask) excludes key positions after the query
 *   position (top-left aligned, as JAX's reference); PADDING excludes key
 *   positions >= kv_seqlen[b] and query rows >= q_seqlen[b] (b the first
 *   batch dimension of S), whose output is 0.
 * sliding_window_length w > 0 (cuda_dnn.cc passes it to cudnn-frontend's
 *   set_sliding_window_length, a left diagonal bound with the default
 *   top-left alignment: a key position k is kept iff k + w > q, whatever
 *   the sequence lengths; causal adds k <= q: the window (q - w, q]).
 * Refused with the reason: dropout_rate > 0 (cuDNN's Philox stream cannot be
 * reproduced). mask_type ALIBI runs unmasked, as XLA's graph does.
 * Not here: the gemm targets. */
#include "targets/gpu/fmha.h"
#include <stdlib.h>
#include <string.h>

const char *const fmha_mask_names[MASK_COUNT] = {"NO_MASK", "PADDING", "CAUSAL",
                                                 "PADDING_CAUSAL", "ALIBI"};

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

bool fmha_has(const int64_t *v, int n, int64_t x) {
  for (int i = 0; i < n; i++)
    if (v[i] == x) return true;
  return false;
}

/* dot output dims of operands a (rank ra) and b under d; -1 if the
 * dimension numbers do not fit the ranks or sizes. */
int fmha_out_dims(const GpuLeaf *a, const GpuLeaf *b, const Dims *d, int64_t *out, int *nfree_a,
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
    if (!fmha_has(d->lb, d->nlb, i) && !fmha_has(d->lc, d->nlc, i)) {
      out[n++] = a->dims[i];
      (*nfree_a)++;
    }
  for (int i = 0; i < b->rank; i++)
    if (!fmha_has(d->rb, d->nrb, i) && !fmha_has(d->rc, d->nrc, i)) {
      out[n++] = b->dims[i];
      (*nfree_b)++;
    }
  return n;
}

bool fmha_same_dims(const int64_t *a, int na, const GpuLeaf *l) {
  if (na != l->rank) return false;
  for (int i = 0; i < na; i++)
    if (a[i] != l->dims[i]) return false;
  return true;
}

static void dot_attrs(HlcText *t, const Dims *d) {
  if (d->nlb) {
    hlc_text_printf(t, ", lhs_batch_dims=");
    hlt_gpu_text_list(t, d->lb, d->nlb);
  }
  if (d->nlc) {
    hlc_text_printf(t, ", lhs_contracting_dims=");
    hlt_gpu_text_list(t, d->lc, d->nlc);
  }
  if (d->nrb) {
    hlc_text_printf(t, ", rhs_batch_dims=");
    hlt_gpu_text_list(t, d->rb, d->nrb);
  }
  if (d->nrc) {
    hlc_text_printf(t, ", rhs_contracting_dims=");
    hlt_gpu_text_list(t, d->rc, d->nrc);
  }
  hlc_text_printf(t, "\n");
}

int fmha_dot(GpuMod *m, int a, int b, const int64_t *od, int orank, const Dims *d) {
  int v = hlt_gpu_emit(m, m->ct, od, orank, "dot(");
  hlc_text_printf(&m->t, "v%d, v%d)", a, b);
  dot_attrs(&m->t, d);
  return v;
}

/* reduce over the last dimension of S (m->dims) with computation comp. */
int fmha_row_reduce(GpuMod *m, int x, double init, const char *comp) {
  int k = hlt_gpu_emit(m, m->ct, NULL, 0, "constant(");
  hlt_gpu_text_double(&m->t, init);
  hlc_text_printf(&m->t, ")\n");
  int v = hlt_gpu_emit(m, m->ct, m->dims, m->rank - 1, "reduce(");
  hlc_text_printf(&m->t, "v%d, v%d), dimensions={%d}, to_apply=%s\n", x, k, m->rank - 1, comp);
  return v;
}

int fmha_row_broadcast(GpuMod *m, int x) {
  int64_t keep[GPU_MAX_RANK];
  for (int i = 0; i < m->rank - 1; i++) keep[i] = i;
  int v = hlt_gpu_emit(m, m->ct, m->dims, m->rank, "broadcast(");
  hlc_text_printf(&m->t, "v%d), dimensions=", x);
  hlt_gpu_text_list(&m->t, keep, m->rank - 1);
  hlc_text_printf(&m->t, "\n");
  return v;
}

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
      hlt_gpu_json_enum(c, g, "mask_type", "cudnn_fmha_backend_config.mask_type", fmha_mask_names,
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

void fmha_prelude(GpuMod *m) {
  const char *t = hlc_dtype_name(m->ct);
  hlc_text_printf(&m->t, "HloModule gpu_equivalent\n\n");
  for (int i = 0; i < 2; i++)
    hlc_text_printf(
        &m->t,
        "%s {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n  ROOT r = %s[] %s(a, b)\n}\n\n",
        i ? "sum" : "max", t, t, t, i ? "add" : "maximum");
  hlc_text_printf(&m->t, "pick {\n  a = %s[] parameter(0)\n  ROOT b = %s[] parameter(1)\n}\n\n", t, t);
  hlc_text_printf(&m->t, "ENTRY e {\n");
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
  hlc_text_printf(&m->t, "v%d)\n", vb);
  int bb = hlt_gpu_emit(m, m->ct, m->dims, m->rank, "broadcast(");
  hlc_text_printf(&m->t, "v%d), dimensions=", rs);
  hlt_gpu_text_list(&m->t, kept, nk);
  hlc_text_printf(&m->t, "\n");
  return hlt_gpu_binary(m, "add", sc, bb);
}

static int pred_and(GpuMod *m, int a, int b) {
  if (a < 0) return b;
  if (b < 0) return a;
  int v = hlt_gpu_emit(m, HLO_PRED, m->dims, m->rank, "and(");
  hlc_text_printf(&m->t, "v%d, v%d)\n", a, b);
  return v;
}

/* ql: the operand number of q_seqlen (kv_seqlen follows); or -1, with the
 * lengths already values lens[0], lens[1] (s32[dims[0]]). */
Mask fmha_build_mask_lens(GpuMod *m, const Cfg *f, int ql, const int *lens) {
  Mask k = {-1, -1, -1};
  int r = m->rank;
  if (!f->causal && !f->padding && !f->window) return k;
  int iq = hlt_gpu_emit(m, HLO_S32, m->dims, r, "iota(), ");
  hlc_text_printf(&m->t, "iota_dimension=%d\n", r - 2);
  int ik = hlt_gpu_emit(m, HLO_S32, m->dims, r, "iota(), ");
  hlc_text_printf(&m->t, "iota_dimension=%d\n", r - 1);
  if (f->causal) {
    k.valid = hlt_gpu_emit(m, HLO_PRED, m->dims, r, "compare(");
    hlc_text_printf(&m->t, "v%d, v%d), direction=LE\n", ik, iq);
  }
  if (f->window) {
    /* k + w > q (cudnn-frontend's left bound, compared with CMP_GT) */
    int w = hlt_gpu_emit(m, HLO_S32, NULL, 0, "constant(");
    hlc_text_printf(&m->t, "%lld)\n", (long long)f->window);
    int wb = hlt_gpu_emit(m, HLO_S32, m->dims, r, "broadcast(");
    hlc_text_printf(&m->t, "v%d), dimensions={}\n", w);
    int kw = hlt_gpu_emit(m, HLO_S32, m->dims, r, "add(");
    hlc_text_printf(&m->t, "v%d, v%d)\n", ik, wb);
    int in = hlt_gpu_emit(m, HLO_PRED, m->dims, r, "compare(");
    hlc_text_printf(&m->t, "v%d, v%d), direction=GT\n", kw, iq);
    k.valid = pred_and(m, k.valid, in);
  }
  if (f->padding) {
    int64_t len1[1] = {m->dims[0]};
    for (int i = 0; i < 2; i++) {
      int p;
      if (ql >= 0) {
        p = hlt_gpu_emit(m, HLO_S32, len1, 1, "parameter(");
        hlc_text_printf(&m->t, "%d)\n", ql + i);
      } else {
        p = lens[i];
      }
      int b = hlt_gpu_emit(m, HLO_S32, m->dims, r, "broadcast(");
      hlc_text_printf(&m->t, "v%d), dimensions={0}\n", p);
      int cmp = hlt_gpu_emit(m, HLO_PRED, m->dims, r, "compare(");
      hlc_text_printf(&m->t, "v%d, v%d), direction=LT\n", i ? ik : iq, b);
      if (i == 0) {
        k.qvalid = cmp;
        int pr = hlt_gpu_emit(m, HLO_S32, m->dims, r - 1, "iota(), ");
        hlc_text_printf(&m->t, "iota_dimension=%d\n", r - 2);
        int br = hlt_gpu_emit(m, HLO_S32, m->dims, r - 1, "broadcast(");
        hlc_text_printf(&m->t, "v%d), dimensions={0}\n", p);
        k.qrow = hlt_gpu_emit(m, HLO_PRED, m->dims, r - 1, "compare(");
        hlc_text_printf(&m->t, "v%d, v%d), direction=LT\n", pr, br);
      }
      k.valid = pred_and(m, k.valid, cmp);
    }
  }
  return k;
}

Mask fmha_build_mask(GpuMod *m, const Cfg *f, int ql) {
  return fmha_build_mask_lens(m, f, ql, NULL);
}

int fmha_select_v(GpuMod *m, int pred, int yes, int no) {
  int v = hlt_gpu_emit(m, m->ct, m->dims, m->rank, "select(");
  hlc_text_printf(&m->t, "v%d, v%d, v%d)\n", pred, yes, no);
  return v;
}

/* The scores S (scaled, biased, masked: excluded positions -inf; padded
 * query rows all 0 so their softmax stays finite). */
int fmha_scores(GpuCall *c, GpuMod *m, const Cfg *f, int vq, int vk, const Dims *d, int bias_op,
                const Mask *k) {
  int sc = fmha_dot(m, vq, vk, m->dims, m->rank, d);
  if (f->scale != 1) sc = hlt_gpu_binary(m, "multiply", sc, hlt_gpu_splat(m, f->scale));
  if (bias_op >= 0 && (sc = add_bias(c, m, sc, bias_op)) < 0) return -1;
  if (k->valid >= 0) sc = fmha_select_v(m, k->valid, sc, hlt_gpu_splat(m, -__builtin_inf()));
  if (k->qvalid >= 0) sc = fmha_select_v(m, k->qvalid, sc, hlt_gpu_splat(m, 0));
  return sc;
}

/* D = the sum over dO's contracting (head) dimensions of dO * O, in the
 * scores' row order (batch dimensions, then the query dimension: m->dims
 * without the last): the row term of the softmax backward. g22 is the
 * dot dimension numbers of dO x V. */
int fmha_row_sum_do_o(GpuMod *m, const Dims *g22, const GpuLeaf *dO, int vdo, int vo) {
  int e = hlt_gpu_emit(m, m->ct, dO->dims, dO->rank, "multiply(");
  hlc_text_printf(&m->t, "v%d, v%d)\n", vdo, vo);
  int64_t rem[GPU_MAX_RANK], rdims[GPU_MAX_RANK], perm[GPU_MAX_RANK];
  int nrem = 0;
  for (int i = 0; i < dO->rank; i++)
    if (!fmha_has(g22->lc, g22->nlc, i)) { rem[nrem] = i; rdims[nrem++] = dO->dims[i]; }
  int z = hlt_gpu_emit(m, m->ct, NULL, 0, "constant(0)\n");
  int dsum = hlt_gpu_emit(m, m->ct, rdims, nrem, "reduce(");
  hlc_text_printf(&m->t, "v%d, v%d), dimensions=", e, z);
  hlt_gpu_text_list(&m->t, g22->lc, g22->nlc);
  hlc_text_printf(&m->t, ", to_apply=sum\n");
  int np = 0;
  for (int i = 0; i < g22->nlb; i++)
    for (int j = 0; j < nrem; j++)
      if (rem[j] == g22->lb[i]) perm[np++] = j;
  for (int j = 0; j < nrem; j++)
    if (!fmha_has(g22->lb, g22->nlb, rem[j])) perm[np++] = j;
  int dd = hlt_gpu_emit(m, m->ct, m->dims, m->rank - 1, "transpose(");
  hlc_text_printf(&m->t, "v%d), dimensions=", dsum);
  hlt_gpu_text_list(&m->t, perm, np);
  hlc_text_printf(&m->t, "\n");
  return dd;
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
  if (f8) return bwd ? fmha_backward_f8(c, &f) : fmha_forward_f8(c, &f);
  if (bwd && f.segs > 1) return fmha_backward_ragged(c, &f);
  if (!bwd && (f.segs > 1 || f.paged)) return fmha_forward_ragged(c, &f);
  return bwd ? fmha_backward(c, &f) : fmha_forward(c, &f);
}
