/* slicing.c: static windows into and out of arrays: slice (start, limit,
 * stride), concatenate (one dimension), reverse (any dims) and pad (edge
 * padding that may be negative, and interior padding). Each is one strided
 * copy plan per operand (strided.c); pad first fills with the pad value.
 * Runtime-positioned windows are in dynamic_slice.c. */
#include "interp/kernels/movement.h"
#include <string.h>

/* ---- slice ------------------------------------------------------------------ */

int hlk_slice_check(HliExec *x, const HloInstr *ins) {
  if (hlk_check_operands(x, ins, 1) != 0) return -1;
  const HloShape *o = &ins->ops[0]->shape;
  if (!ins->slice && o->rank > 0) return hli_fail(x, ins, "missing slice={...}");
  int64_t dims[HLK_MAX_RANK];
  for (int i = 0; i < o->rank; i++) {
    HloSliceDim s = ins->slice[i];
    if (s.stride < 1 || s.start < 0 || s.start > s.limit || s.limit > o->dims[i])
      return hli_fail(x, ins, "slice [%lld:%lld:%lld] invalid for dimension %d of size %lld",
                      (long long)s.start, (long long)s.limit, (long long)s.stride, i,
                      (long long)o->dims[i]);
    dims[i] = s.limit == s.start ? 0 : (s.limit - s.start - 1) / s.stride + 1;
  }
  return hlk_check_result(x, ins, o->dtype, o->rank, dims);
}

int hlk_slice(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  const HliValue *a = in[0];
  size_t es = hlc_dtype_size(a->dtype);
  int64_t astr[HLK_MAX_RANK], ss[HLK_MAX_RANK], ds[HLK_MAX_RANK], off = 0;
  hlk_byte_strides(a->dims, a->rank, es, astr);
  hlk_byte_strides(out->dims, out->rank, es, ds);
  for (int i = 0; i < a->rank; i++) {
    off += ins->slice[i].start * astr[i];
    /* A stride matters only when it is taken (it may be huge otherwise). */
    ss[i] = out->dims[i] > 1 ? ins->slice[i].stride * astr[i] : 0;
  }
  HlkPlan p;
  hlk_plan_init(&p, out->rank, out->dims, ds, ss, es);
  if (!p.empty) hlk_plan_run_par(x, &p, out->data, (const char *)a->data + off);
  return 0;
}

/* ---- concatenate -------------------------------------------------------------- */

int hlk_concatenate_check(HliExec *x, const HloInstr *ins) {
  if (ins->nops < 1) return hli_fail(x, ins, "expects at least one operand");
  if (hlk_check_operands(x, ins, ins->nops) != 0) return -1;
  if (ins->dimensions.n != 1)
    return hli_fail(x, ins, "dimensions must name exactly one dimension");
  const HloShape *o = &ins->ops[0]->shape;
  int64_t d = ins->dimensions.v[0];
  if (d < 0 || d >= o->rank)
    return hli_fail(x, ins, "dimension %lld out of range for rank %d", (long long)d,
                    (int)o->rank);
  int64_t dims[HLK_MAX_RANK];
  memcpy(dims, o->dims, sizeof dims[0] * (size_t)o->rank);
  for (int k = 1; k < ins->nops; k++) {
    const HloShape *s = &ins->ops[k]->shape;
    if (s->dtype != o->dtype || s->rank != o->rank)
      return hli_fail(x, ins, "operand %d has a different type or rank", k);
    for (int i = 0; i < o->rank; i++)
      if (i != d && s->dims[i] != o->dims[i])
        return hli_fail(x, ins, "operand %d differs in dimension %d", k, i);
    dims[d] += s->dims[d];
  }
  return hlk_check_result(x, ins, o->dtype, o->rank, dims);
}

int hlk_concatenate(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  int d = (int)ins->dimensions.v[0];
  size_t es = hlc_dtype_size(out->dtype);
  int64_t ds[HLK_MAX_RANK], ss[HLK_MAX_RANK];
  hlk_byte_strides(out->dims, out->rank, es, ds);
  int64_t at = 0;
  for (int k = 0; k < ins->nops; k++) {
    const HliValue *a = in[k];
    hlk_byte_strides(a->dims, a->rank, es, ss);
    HlkPlan p;
    hlk_plan_init(&p, a->rank, a->dims, ds, ss, es);
    if (!p.empty) hlk_plan_run_par(x, &p, (char *)out->data + at * ds[d], a->data);
    at += a->dims[d];
  }
  return 0;
}

/* ---- reverse ---------------------------------------------------------------------- */

int hlk_reverse_check(HliExec *x, const HloInstr *ins) {
  if (hlk_check_operands(x, ins, 1) != 0) return -1;
  const HloShape *o = &ins->ops[0]->shape;
  if (hlk_check_dim_list(x, ins, &ins->dimensions, o->rank, false, "dimensions") != 0) return -1;
  return hlk_check_result(x, ins, o->dtype, o->rank, o->dims);
}

/* Reversed dims read the operand backwards from their last element. */
int hlk_reverse(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  const HliValue *a = in[0];
  size_t es = hlc_dtype_size(a->dtype);
  int64_t ss[HLK_MAX_RANK], ds[HLK_MAX_RANK], off = 0;
  hlk_byte_strides(a->dims, a->rank, es, ss);
  hlk_byte_strides(out->dims, out->rank, es, ds);
  if (out->nelem == 0) return 0;
  for (int k = 0; k < ins->dimensions.n; k++) {
    int i = (int)ins->dimensions.v[k];
    off += (a->dims[i] - 1) * ss[i];
    ss[i] = -ss[i];
  }
  HlkPlan p;
  hlk_plan_init(&p, out->rank, out->dims, ds, ss, es);
  hlk_plan_run_par(x, &p, out->data, (const char *)a->data + off);
  return 0;
}

/* ---- pad ---------------------------------------------------------------------------- */

int hlk_pad_check(HliExec *x, const HloInstr *ins) {
  if (hlk_check_operands(x, ins, 2) != 0) return -1;
  const HloShape *o = &ins->ops[0]->shape, *v = &ins->ops[1]->shape;
  if (v->rank != 0 || v->dtype != o->dtype)
    return hli_fail(x, ins, "the padding value must be a %s scalar", hlc_dtype_name(o->dtype));
  if (!ins->padding && o->rank > 0) return hli_fail(x, ins, "missing padding=");
  int64_t dims[HLK_MAX_RANK];
  for (int i = 0; i < o->rank; i++) {
    HloPadDim p = ins->padding[i];
    if (p.interior < 0) return hli_fail(x, ins, "negative interior padding in dimension %d", i);
    /* Keep every intermediate of the run far from int64 overflow. */
    const int64_t big = INT64_C(1) << 62;
    if (p.lo < -big || p.lo > big || p.hi < -big || p.hi > big || p.interior > big)
      return hli_unsupported(x, ins, "padding of dimension %d beyond 2^62", i);
    int64_t n = o->dims[i], in = 0;
    /* Attributes come from the text: any int64, so check for overflow. */
    if ((n > 0 && __builtin_mul_overflow(n - 1, p.interior, &in)) ||
        __builtin_add_overflow(in, n, &dims[i]) || __builtin_add_overflow(dims[i], p.lo, &dims[i]) ||
        __builtin_add_overflow(dims[i], p.hi, &dims[i]))
      return hli_fail(x, ins, "padding of dimension %d overflows", i);
    if (dims[i] < 0)
      return hli_fail(x, ins, "padding makes dimension %d negative (%lld)", i,
                      (long long)dims[i]);
  }
  return hlk_check_result(x, ins, o->dtype, o->rank, dims);
}

/* Fill the result with the pad value, then copy the operand elements that
 * land inside it: operand index k of a dim goes to lo + k*(interior+1);
 * negative lo/hi cut elements off. */
int hlk_pad(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  const HliValue *a = in[0];
  size_t es = hlc_dtype_size(a->dtype);
  if (out->nelem == 0) return 0;
  int64_t zero[HLK_MAX_RANK] = { 0 }, ds[HLK_MAX_RANK];
  hlk_byte_strides(out->dims, out->rank, es, ds);
  HlkPlan p;
  hlk_plan_init(&p, out->rank, out->dims, ds, zero, es);
  hlk_plan_run_par(x, &p, out->data, in[1]->data);
  int64_t ss[HLK_MAX_RANK], cnt[HLK_MAX_RANK], step[HLK_MAX_RANK];
  int64_t soff = 0, doff = 0;
  hlk_byte_strides(a->dims, a->rank, es, ss);
  for (int i = 0; i < a->rank; i++) {
    HloPadDim pd = ins->padding[i];
    int64_t g = pd.interior + 1, n = a->dims[i], first = 0;
    if (pd.lo < 0) first = (-pd.lo + g - 1) / g;           /* first k with lo + k*g >= 0 */
    int64_t last = n - 1;
    int64_t limit = out->dims[i];                            /* need lo + k*g < limit */
    if (n > 0 && pd.lo + last * g >= limit) last = (limit - 1 - pd.lo) < 0 ? -1
                                                     : (limit - 1 - pd.lo) / g;
    cnt[i] = last >= first ? last - first + 1 : 0;
    if (cnt[i] == 0) return 0;
    soff += first * ss[i];
    doff += (pd.lo + first * g) * ds[i];
    step[i] = g * ds[i];
  }
  hlk_plan_init(&p, a->rank, cnt, step, ss, es);
  hlk_plan_run_par(x, &p, (char *)out->data + doff, (const char *)a->data + soff);
  return 0;
}
