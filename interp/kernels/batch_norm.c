/* batch_norm.c: batch-norm-inference, batch-norm-training and
 * batch-norm-grad (registered by hlk_register_batch_norm).
 *
 * The formulas of XLA's operation semantics, computed in double and rounded
 * once (XLA:CPU expands them into HLO in the element type; results agree to
 * rounding): mean and biased variance over every dimension but
 * feature_index, y = (x - mean) / sqrt(var + eps) * scale + offset, and for
 * the gradient
 *   grad_offset = sum(dy), grad_scale = sum(dy * (x - mean)) / sqrt(var + eps),
 *   grad_x = scale / sqrt(var + eps) * (dy - mean(dy) - (x - mean) * c),
 *   c = mean(dy * (x - mean)) / (var + eps).
 * Not here: dynamic shapes (refused), integer operands (refused). */
#include "interp/kernels/control.h"
#include "interp/kernels/register.h"
#include "common/numeric.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int load_doubles(const HliValue *v, double *dst) {
  switch (v->dtype) {
  case HLO_F32: for (int64_t i = 0; i < v->nelem; i++) dst[i] = ((const float *)v->data)[i]; return 0;
  case HLO_F64: memcpy(dst, v->data, (size_t)v->nelem * sizeof *dst); return 0;
  default: {
    size_t es = hlc_dtype_size(v->dtype);
    for (int64_t i = 0; i < v->nelem; i++) dst[i] = hlc_load_f64(v->dtype, (const char *)v->data + (size_t)i * es);
    return 0;
  }
  }
}

static void store_doubles(HliValue *v, const double *src) {
  switch (v->dtype) {
  case HLO_F32: for (int64_t i = 0; i < v->nelem; i++) ((float *)v->data)[i] = (float)src[i]; return;
  case HLO_F64: memcpy(v->data, src, (size_t)v->nelem * sizeof *src); return;
  default: {
    size_t es = hlc_dtype_size(v->dtype);
    for (int64_t i = 0; i < v->nelem; i++) hlc_store_f64(v->dtype, (char *)v->data + (size_t)i * es, src[i]);
  }
  }
}

static int check_bn(HliExec *x, const HloInstr *ins) {
  const HloShape *s = &ins->ops[0]->shape;
  if (!hlc_dtype_is_float(s->dtype))
    return hli_fail(x, ins, "batch norm needs a floating-point operand, got %s", hlc_dtype_name(s->dtype));
  if (ins->feature_index < 0 || ins->feature_index >= s->rank)
    return hli_fail(x, ins, "feature_index %lld out of range for rank %d", (long long)ins->feature_index, s->rank);
  if (s->dynamic) return hli_unsupported(x, ins, "batch norm with dynamic dimensions");
  int64_t c = s->dims[ins->feature_index];
  /* Which operands are per-feature vectors and which are operand-shaped. */
  for (int32_t i = 1; i < ins->nops; i++) {
    const HloShape *o = &ins->ops[i]->shape;
    bool full = ins->op == HLO_OP_BATCH_NORM_GRAD && i == 4;
    if (o->dtype != s->dtype) return hli_fail(x, ins, "operand %d type differs from the operand's", i);
    if (full ? !hlp_shape_compatible(o, s) : (o->rank != 1 || o->dims[0] != c))
      return hli_fail(x, ins, "operand %d must be %s", i, full ? "shaped like the operand" : "a vector over the feature dimension");
  }
  return 0;
}

typedef struct Bn {
  int64_t n, c, inner, per;   /* elements, features, stride of the feature dim, elements per feature */
  double *xv, *tmp;           /* n each */
  double *dy;                 /* n (with_dy), else NULL */
  double *p;                  /* nper arrays of c (per-feature values) */
  HliExec *x;
} Bn;

/* All work arrays in one scratch block, counted against --max-memory
 * (hli_scratch_alloc reports when it does not fit). */
static int bn_begin(HliExec *x, const HloInstr *ins, const HliValue *v, int64_t nper,
                    bool with_dy, Bn *b) {
  int32_t f = (int32_t)ins->feature_index;
  b->x = x;
  b->n = v->nelem;
  b->c = v->dims[f];
  b->inner = 1;
  for (int32_t i = f + 1; i < v->rank; i++) b->inner *= v->dims[i];
  b->per = b->c ? b->n / b->c : 0;
  size_t n = (size_t)b->n, narr = with_dy ? 3 : 2;
  double *blk = hli_scratch_alloc(x, ins, (narr * n + (size_t)nper * (size_t)b->c) * sizeof *blk);
  if (!blk) return -1;
  b->xv = blk;
  b->tmp = blk + n;
  b->dy = with_dy ? blk + 2 * n : NULL;
  b->p = blk + narr * n;
  load_doubles(v, b->xv);
  return 0;
}

static void bn_end(Bn *b) { hli_scratch_free(b->x, b->xv); }

static inline int64_t feat(const Bn *b, int64_t i) { return (i / b->inner) % b->c; }

/* b->tmp = (x - mean) / sqrt(var + eps) * scale + offset, per feature. */
static void normalize(Bn *b, const double *scale, const double *offset, const double *mean,
                      const double *var, double eps) {
  for (int64_t i = 0; i < b->n; i++) {
    int64_t k = feat(b, i);
    b->tmp[i] = (b->xv[i] - mean[k]) / sqrt(var[k] + eps) * scale[k] + offset[k];
  }
}

static int run_bn_inference(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (check_bn(x, ins)) return -1;
  Bn b;
  if (bn_begin(x, ins, in[0], 4, false, &b)) return -1;
  int64_t c = b.c;
  double *p = b.p;
  double *scale = p, *offset = p + c, *mean = p + 2 * c, *var = p + 3 * c;
  load_doubles(in[1], scale); load_doubles(in[2], offset);
  load_doubles(in[3], mean); load_doubles(in[4], var);
  normalize(&b, scale, offset, mean, var, ins->epsilon);
  store_doubles(out, b.tmp);
  bn_end(&b);
  return 0;
}

/* Per-feature mean and biased variance of b->xv. */
static void moments(const Bn *b, double *mean, double *var) {
  for (int64_t k = 0; k < b->c; k++) mean[k] = var[k] = 0;
  for (int64_t i = 0; i < b->n; i++) mean[feat(b, i)] += b->xv[i];
  for (int64_t k = 0; k < b->c; k++) mean[k] = b->per ? mean[k] / (double)b->per : NAN;
  for (int64_t i = 0; i < b->n; i++) {
    double d = b->xv[i] - mean[feat(b, i)];
    var[feat(b, i)] += d * d;
  }
  for (int64_t k = 0; k < b->c; k++) var[k] = b->per ? var[k] / (double)b->per : NAN;
}

static int check_bn_training(HliExec *x, const HloInstr *ins) {
  if (check_bn(x, ins)) return -1;
  const HloShape *s = &ins->shape;
  if (s->dtype != HLO_TUPLE || s->ntuple != 3) return hli_fail(x, ins, "result must be (output, mean, variance)");
  return 0;
}

static int run_bn_training(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (check_bn_training(x, ins)) return -1;
  Bn b;
  if (bn_begin(x, ins, in[0], 4, false, &b)) return -1;
  int64_t c = b.c;
  double *p = b.p;
  double *scale = p, *offset = p + c, *mean = p + 2 * c, *var = p + 3 * c;
  load_doubles(in[1], scale); load_doubles(in[2], offset);
  moments(&b, mean, var);
  normalize(&b, scale, offset, mean, var, ins->epsilon);
  store_doubles(out->tuple[0], b.tmp);
  store_doubles(out->tuple[1], mean);
  store_doubles(out->tuple[2], var);
  bn_end(&b);
  return 0;
}

static int check_bn_grad(HliExec *x, const HloInstr *ins) {
  if (check_bn(x, ins)) return -1;
  const HloShape *s = &ins->shape;
  if (s->dtype != HLO_TUPLE || s->ntuple != 3)
    return hli_fail(x, ins, "result must be (grad_operand, grad_scale, grad_offset)");
  return 0;
}

static int run_bn_grad(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (check_bn_grad(x, ins)) return -1;
  Bn b;
  if (bn_begin(x, ins, in[0], 5, true, &b)) return -1;
  int64_t c = b.c;
  double *p = b.p, *dy = b.dy;
  double *scale = p, *mean = p + c, *var = p + 2 * c, *sdy = p + 3 * c, *sdyx = p + 4 * c;
  load_doubles(in[1], scale); load_doubles(in[2], mean); load_doubles(in[3], var);
  load_doubles(in[4], dy);
  for (int64_t k = 0; k < c; k++) sdy[k] = sdyx[k] = 0;
  for (int64_t i = 0; i < b.n; i++) {
    int64_t k = feat(&b, i);
    sdy[k] += dy[i];
    sdyx[k] += dy[i] * (b.xv[i] - mean[k]);
  }
  double per = (double)b.per;
  for (int64_t i = 0; i < b.n; i++) {
    int64_t k = feat(&b, i);
    double ve = var[k] + ins->epsilon;
    double cl = sdyx[k] / per / ve;
    b.tmp[i] = scale[k] / sqrt(ve) * (dy[i] - sdy[k] / per - cl * (b.xv[i] - mean[k]));
  }
  store_doubles(out->tuple[0], b.tmp);
  for (int64_t k = 0; k < c; k++) sdyx[k] /= sqrt(var[k] + ins->epsilon);
  store_doubles(out->tuple[1], sdyx);
  store_doubles(out->tuple[2], sdy);
  bn_end(&b);
  return 0;
}

void hlk_register_batch_norm(HliOpTable t) {
  t[HLO_OP_BATCH_NORM_INFERENCE] = (HliOpEntry){run_bn_inference, check_bn};
  t[HLO_OP_BATCH_NORM_TRAINING] = (HliOpEntry){run_bn_training, check_bn_training};
  t[HLO_OP_BATCH_NORM_GRAD] = (HliOpEntry){run_bn_grad, check_bn_grad};
}
