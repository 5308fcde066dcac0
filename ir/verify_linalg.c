/* verify_linalg.c: shape rules of dot (batch | lhs free | rhs free result
 * order) and scaled-dot (its scales dividing its operands), convolution (dim_labels, window, feature and batch group counts,
 * spatial output sizes with padding and dilations), fft, cholesky,
 * triangular-solve and the batch-norm family. The result element type of
 * dot and convolution is the declared one ("preferred element type"), as
 * long as it does not narrow an integer accumulation.
 */
#include "ir/verify.h"
#include <stdio.h>
#include <string.h>

/* The declared element type of a dot/convolution is acceptable for operands
 * of types a and b (XLA's preferred element type rule). */
static bool preferred_ok(HlvCtx *V, const HloInstr *ins, HloDtype a, HloDtype b) {
  HloDtype from = hlc_dtype_bits(b) > hlc_dtype_bits(a) ? b : a;
  HloDtype to = ins->shape.dtype;
  if (!hlc_dtype_is_array(to)) {
    hlv_fail(V, ins, "result must be an array, got %s", hlv_str(V, &ins->shape));
    return false;
  }
  if (to != from && !hlc_dtype_is_float(from) && !hlc_dtype_is_complex(from) &&
      hlc_dtype_bits(to) < hlc_dtype_bits(from)) {
    hlv_fail(V, ins, "result type %s is narrower than the operands' %s", hlc_dtype_name(to),
             hlc_dtype_name(from));
    return false;
  }
  return true;
}

/* Batch and contracting lists of one side: in range, jointly unrepeated. */
static bool dot_side(HlvCtx *V, const HloInstr *ins, const char *side, const HloI64s *batch,
                     const HloI64s *contr, int32_t rank) {
  char bn[32], cn[32];
  snprintf(bn, sizeof bn, "%s_batch_dims", side);
  snprintf(cn, sizeof cn, "%s_contracting_dims", side);
  if (!hlv_dims_ok(V, ins, bn, batch, rank, false) || !hlv_dims_ok(V, ins, cn, contr, rank, false))
    return false;
  for (int32_t i = 0; i < batch->n; i++)
    for (int32_t j = 0; j < contr->n; j++)
      if (batch->v[i] == contr->v[j]) {
        hlv_fail(V, ins, "dimension %lld is in both %s and %s", (long long)batch->v[i], bn, cn);
        return false;
      }
  return true;
}

static bool listed(const HloI64s *a, const HloI64s *b, int64_t x) {
  for (int32_t i = 0; i < a->n; i++)
    if (a->v[i] == x) return true;
  for (int32_t i = 0; i < b->n; i++)
    if (b->v[i] == x) return true;
  return false;
}

static HlvResult dot(HlvCtx *V, const HloInstr *ins) {
  if (!hlv_need_array(V, ins, 0) || !hlv_need_array(V, ins, 1)) return HLV_ERR;
  const HloShape *l = &ins->ops[0]->shape, *r = &ins->ops[1]->shape;
  const HloDotDims *d = &ins->dot;
  if (d->lhs_batch.n != d->rhs_batch.n)
    return hlv_fail(V, ins, "lhs_batch_dims %s and rhs_batch_dims %s differ in length",
                    hlv_list_str(V, &d->lhs_batch), hlv_list_str(V, &d->rhs_batch));
  if (d->lhs_contracting.n != d->rhs_contracting.n)
    return hlv_fail(V, ins, "lhs_contracting_dims %s and rhs_contracting_dims %s differ in length",
                    hlv_list_str(V, &d->lhs_contracting), hlv_list_str(V, &d->rhs_contracting));
  if (!dot_side(V, ins, "lhs", &d->lhs_batch, &d->lhs_contracting, l->rank) ||
      !dot_side(V, ins, "rhs", &d->rhs_batch, &d->rhs_contracting, r->rank))
    return HLV_ERR;
  for (int32_t i = 0; i < d->lhs_batch.n; i++)
    if (l->dims[d->lhs_batch.v[i]] != r->dims[d->rhs_batch.v[i]])
      return hlv_fail(V, ins, "batch dimension %lld of lhs %s and %lld of rhs %s differ",
                      (long long)d->lhs_batch.v[i], hlv_str(V, l), (long long)d->rhs_batch.v[i],
                      hlv_str(V, r));
  for (int32_t i = 0; i < d->lhs_contracting.n; i++)
    if (l->dims[d->lhs_contracting.v[i]] != r->dims[d->rhs_contracting.v[i]])
      return hlv_fail(V, ins, "contracting dimension %lld of lhs %s and %lld of rhs %s differ",
                      (long long)d->lhs_contracting.v[i], hlv_str(V, l),
                      (long long)d->rhs_contracting.v[i], hlv_str(V, r));
  if (!preferred_ok(V, ins, l->dtype, r->dtype)) return HLV_ERR;
  HloShape *o = hlv_array(V, ins->shape.dtype, l->rank + r->rank, NULL);
  int32_t n = 0;
  for (int32_t i = 0; i < d->lhs_batch.n; i++) o->dims[n++] = l->dims[d->lhs_batch.v[i]];
  for (int32_t i = 0; i < l->rank; i++)
    if (!listed(&d->lhs_batch, &d->lhs_contracting, i)) o->dims[n++] = l->dims[i];
  for (int32_t i = 0; i < r->rank; i++)
    if (!listed(&d->rhs_batch, &d->rhs_contracting, i)) o->dims[n++] = r->dims[i];
  o->rank = n;
  return hlv_expect(V, ins, o, false);
}

/* scaled-dot(lhs, rhs, lhs_scale, rhs_scale): each scale a scalar or of
 * its operand's rank with every dimension dividing the operand's (XLA's
 * ScaledDotRewriter, CheckOperandAndScaleShapes); the result is the dot's. */
static HlvResult scaled_dot(HlvCtx *V, const HloInstr *ins) {
  if (ins->nops != 4)
    return hlv_fail(V, ins, "takes 4 operands (lhs, rhs, lhs_scale, rhs_scale), got %d", ins->nops);
  for (int32_t i = 0; i < 2; i++) {
    if (!hlv_need_array(V, ins, i) || !hlv_need_array(V, ins, 2 + i)) return HLV_ERR;
    const HloShape *op = &ins->ops[i]->shape, *sc = &ins->ops[2 + i]->shape;
    const char *side = i ? "rhs" : "lhs";
    if (sc->rank == 0) continue;
    if (sc->rank != op->rank)
      return hlv_fail(V, ins, "%s_scale %s must be a scalar or have the rank of %s %s", side,
                      hlv_str(V, sc), side, hlv_str(V, op));
    for (int32_t d = 0; d < op->rank; d++)
      if (sc->dims[d] <= 0 ? op->dims[d] != 0 : op->dims[d] % sc->dims[d] != 0)
        return hlv_fail(V, ins, "%s_scale %s does not fit %s %s: its dimension %d (%lld) does not "
                        "divide the operand's (%lld)", side, hlv_str(V, sc), side, hlv_str(V, op),
                        (int)d, (long long)sc->dims[d], (long long)op->dims[d]);
  }
  return dot(V, ins);
}

/* Length of each part of dim_labels ("b01f_01io->b01f"): 3 numbers. */
static void label_lengths(const char *s, int32_t len[3]) {
  const char *u = strchr(s, '_'), *ar = strstr(s, "->");
  len[0] = u ? (int32_t)(u - s) : 0;
  len[1] = u && ar ? (int32_t)(ar - u - 1) : 0;
  len[2] = ar ? (int32_t)strlen(ar + 2) : 0;
}

static HlvResult convolution(HlvCtx *V, const HloInstr *ins) {
  if (!hlv_need_array(V, ins, 0) || !hlv_need_array(V, ins, 1)) return HLV_ERR;
  const HloShape *l = &ins->ops[0]->shape, *r = &ins->ops[1]->shape, *o = &ins->shape;
  const HloConvDims *c = &ins->conv;
  if (!ins->dim_labels_text) return hlv_fail(V, ins, "missing dim_labels");
  int32_t len[3];
  label_lengths(ins->dim_labels_text, len);
  if (len[0] != l->rank || len[1] != r->rank || (hlv_is_array(o) && len[2] != o->rank))
    return hlv_fail(V, ins, "dim_labels %s do not match the ranks of lhs %s, rhs %s and result %s",
                    ins->dim_labels_text, hlv_str(V, l), hlv_str(V, r), hlv_str(V, o));
  if (!preferred_ok(V, ins, l->dtype, r->dtype)) return HLV_ERR;
  /* '?' marks dimensions the convolution does not use: no sizes to infer. */
  if (strchr(ins->dim_labels_text, '?')) return HLV_OK;
  int32_t nsp = c->in_spatial.n;
  int32_t wr = ins->window.present ? ins->window.rank : 0;
  if (wr != nsp)
    return hlv_fail(V, ins, "window has %d dimensions, dim_labels have %d spatial dimensions",
                    (int)wr, (int)nsp);
  int64_t fgc = ins->feature_group_count, bgc = ins->batch_group_count;
  int64_t in_f = l->dims[c->in_feature], batch = l->dims[c->in_batch];
  int64_t k_in = r->dims[c->k_in_feature], k_out = r->dims[c->k_out_feature];
  if (fgc > 1 && bgc > 1)
    return hlv_fail(V, ins, "feature_group_count and batch_group_count cannot both exceed 1");
  if (fgc < 1 || in_f % fgc != 0)
    return hlv_fail(V, ins, "input feature size %lld is not a multiple of feature_group_count %lld",
                    (long long)in_f, (long long)fgc);
  if (in_f / fgc != k_in)
    return hlv_fail(V, ins, "input feature size %lld must be the kernel input feature size %lld "
                    "times feature_group_count %lld", (long long)in_f, (long long)k_in,
                    (long long)fgc);
  if (k_out % fgc != 0)
    return hlv_fail(V, ins, "kernel output feature size %lld is not a multiple of "
                    "feature_group_count %lld", (long long)k_out, (long long)fgc);
  if (bgc < 1 || batch % bgc != 0 || k_out % bgc != 0)
    return hlv_fail(V, ins, "batch size %lld and kernel output feature size %lld must be multiples "
                    "of batch_group_count %lld", (long long)batch, (long long)k_out, (long long)bgc);
  HloShape *res = hlv_array(V, o->dtype, l->rank, NULL);
  res->dims[c->out_batch] = batch / bgc;
  res->dims[c->out_feature] = k_out;
  for (int32_t i = 0; i < nsp; i++) {
    const HloWindowDim *w = &ins->window.dims[i];
    int64_t ks = r->dims[c->k_spatial.v[i]];
    if (w->size != ks)
      return hlv_fail(V, ins, "window size %lld of spatial dimension %d does not match the kernel "
                      "size %lld", (long long)w->size, (int)i, (long long)ks);
    res->dims[c->out_spatial.v[i]] = hlv_window_out(l->dims[c->in_spatial.v[i]], w);
    if (res->dims[c->out_spatial.v[i]] < 0)
      return hlv_fail(V, ins, "window of spatial dimension %d overflows", (int)i);
  }
  return hlv_expect(V, ins, res, false);
}

static HlvResult fft(HlvCtx *V, const HloInstr *ins) {
  if (!hlv_need_array(V, ins, 0)) return HLV_ERR;
  const HloShape *a = &ins->ops[0]->shape;
  const HloI64s *fl = &ins->fft_length;
  int32_t n = fl->n;
  if (n < 1 || n > 3 || n > a->rank)
    return hlv_fail(V, ins, "fft_length %s must have 1 to 3 entries, at most the operand rank %d",
                    hlv_list_str(V, fl), (int)a->rank);
  bool real_in = ins->fft_type == HLO_FFT_RFFT;
  bool ok = real_in ? (a->dtype == HLO_F32 || a->dtype == HLO_F64) : hlc_dtype_is_complex(a->dtype);
  if (!ok)
    return hlv_fail(V, ins, "operand %s has the wrong element type for this fft_type", hlv_str(V, a));
  HloShape *r = hlv_copy(V, a);
  /* FFT/IFFT keep the operand shape whatever fft_length says; RFFT needs
   * the innermost dims to be fft_length, IRFFT the last one n/2+1 (a zero
   * size stays zero). */
  bool sized = ins->fft_type == HLO_FFT_RFFT || ins->fft_type == HLO_FFT_IRFFT;
  for (int32_t i = 0; sized && i < n; i++) {
    int32_t d = a->rank - n + i;
    int64_t want = fl->v[i];
    bool last = i == n - 1;
    if (ins->fft_type == HLO_FFT_IRFFT && last) want = a->dims[d] == 0 && want == 0 ? 0 : want / 2 + 1;
    if (a->dims[d] != want)
      return hlv_fail(V, ins, "operand dimension %d is %lld, fft_length %s needs %lld", (int)d,
                      (long long)a->dims[d], hlv_list_str(V, fl), (long long)want);
    if (ins->fft_type == HLO_FFT_RFFT && i == n - 1) r->dims[d] = fl->v[i] / 2 + 1;
    if (ins->fft_type == HLO_FFT_IRFFT) r->dims[d] = fl->v[i];
  }
  if (ins->fft_type == HLO_FFT_RFFT) r->dtype = a->dtype == HLO_F64 ? HLO_C128 : HLO_C64;
  if (ins->fft_type == HLO_FFT_IRFFT) r->dtype = a->dtype == HLO_C128 ? HLO_F64 : HLO_F32;
  return hlv_expect(V, ins, r, false);
}

static bool fc(HloDtype t) { return hlc_dtype_is_float(t) || hlc_dtype_is_complex(t); }

static HlvResult cholesky(HlvCtx *V, const HloInstr *ins) {
  if (!hlv_need_array(V, ins, 0)) return HLV_ERR;
  const HloShape *a = &ins->ops[0]->shape;
  if (!fc(a->dtype) || a->rank < 2 || a->dims[a->rank - 1] != a->dims[a->rank - 2])
    return hlv_fail(V, ins, "operand %s must be a (batch of) square floating-point matrices",
                    hlv_str(V, a));
  return hlv_expect(V, ins, a, false);
}

static HlvResult triangular_solve(HlvCtx *V, const HloInstr *ins) {
  if (!hlv_need_array(V, ins, 0) || !hlv_need_array(V, ins, 1)) return HLV_ERR;
  const HloShape *a = &ins->ops[0]->shape, *b = &ins->ops[1]->shape;
  int32_t n = a->rank;
  if (!fc(a->dtype) || a->dtype != b->dtype || n < 2 || b->rank != n ||
      a->dims[n - 1] != a->dims[n - 2])
    return hlv_fail(V, ins, "a %s must be square matrices and b %s of the same rank and type",
                    hlv_str(V, a), hlv_str(V, b));
  for (int32_t i = 0; i < n - 2; i++)
    if (a->dims[i] != b->dims[i])
      return hlv_fail(V, ins, "batch dimensions of a %s and b %s differ", hlv_str(V, a), hlv_str(V, b));
  int64_t m = ins->left_side ? b->dims[n - 2] : b->dims[n - 1];
  if (m != a->dims[n - 1])
    return hlv_fail(V, ins, "a %s does not fit b %s on the %s side", hlv_str(V, a), hlv_str(V, b),
                    ins->left_side ? "left" : "right");
  return hlv_expect(V, ins, b, false);
}

/* Batch norm: operand rank > feature_index; per-feature operands are
 * vectors of the feature size. */
static HlvResult batch_norm(HlvCtx *V, const HloInstr *ins) {
  for (int32_t i = 0; i < ins->nops; i++)
    if (!hlv_need_array(V, ins, i)) return HLV_ERR;
  const HloShape *a = &ins->ops[0]->shape;
  if (!hlc_dtype_is_float(a->dtype))
    return hlv_fail(V, ins, "operand %s must be floating point", hlv_str(V, a));
  if (ins->feature_index < 0 || ins->feature_index >= a->rank)
    return hlv_fail(V, ins, "feature_index %lld is out of range for rank %d",
                    (long long)ins->feature_index, (int)a->rank);
  int64_t f = a->dims[ins->feature_index];
  HloShape *vec = hlv_array(V, a->dtype, 1, &f);
  int32_t last_vec = ins->op == HLO_OP_BATCH_NORM_GRAD ? 3 : ins->nops - 1;
  for (int32_t i = 1; i <= last_vec; i++)
    if (!hlv_compatible(&ins->ops[i]->shape, vec, false))
      return hlv_fail(V, ins, "operand %d %s must be %s", (int)i, hlv_str(V, &ins->ops[i]->shape),
                      hlv_str(V, vec));
  if (ins->op == HLO_OP_BATCH_NORM_GRAD && !hlv_compatible(&ins->ops[4]->shape, a, false))
    return hlv_fail(V, ins, "grad_output %s must have the operand's shape %s",
                    hlv_str(V, &ins->ops[4]->shape), hlv_str(V, a));
  if (ins->op == HLO_OP_BATCH_NORM_INFERENCE) return hlv_expect(V, ins, a, false);
  HloShape *t = hlv_tuple(V, 3);
  t->tuple[0] = *a;
  t->tuple[1] = *vec;
  t->tuple[2] = *vec;
  return hlv_expect(V, ins, t, false);
}

HlvResult hlv_linalg(HlvCtx *V, const HloInstr *ins) {
  switch (ins->op) {
  case HLO_OP_DOT: return dot(V, ins);
  case HLO_OP_SCALED_DOT: return scaled_dot(V, ins);
  case HLO_OP_CONVOLUTION: return convolution(V, ins);
  case HLO_OP_FFT: return fft(V, ins);
  case HLO_OP_CHOLESKY: return cholesky(V, ins);
  case HLO_OP_TRIANGULAR_SOLVE: return triangular_solve(V, ins);
  case HLO_OP_BATCH_NORM_TRAINING: case HLO_OP_BATCH_NORM_INFERENCE: case HLO_OP_BATCH_NORM_GRAD:
    return batch_norm(V, ins);
  default: return HLV_NOT_MINE;
  }
}
