/* verify_data.c: shape rules of the data-movement family: broadcast,
 * reshape, bitcast, transpose, reverse, slice, dynamic-slice,
 * dynamic-update-slice, concatenate, pad, iota, get/set-dimension-size,
 * dynamic-reshape, tuple, get-tuple-element, copy-start/copy-done.
 * Gather and scatter are in verify_index.c.
 */
#include "ir/verify.h"

static HlvResult broadcast(HlvCtx *V, const HloInstr *ins) {
  if (!hlv_need_array(V, ins, 0)) return HLV_ERR;
  const HloShape *a = &ins->ops[0]->shape, *r = &ins->shape;
  if (!hlv_is_array(r)) return hlv_fail(V, ins, "result must be an array");
  if (ins->dimensions.n != a->rank)
    return hlv_fail(V, ins, "dimensions %s has %d entries, the operand %s has rank %d",
                    hlv_list_str(V, &ins->dimensions), (int)ins->dimensions.n, hlv_str(V, a),
                    (int)a->rank);
  if (!hlv_dims_ok(V, ins, "dimensions", &ins->dimensions, r->rank, false)) return HLV_ERR;
  for (int32_t i = 0; i < a->rank; i++) {
    int64_t o = ins->dimensions.v[i];
    if (r->dims[o] != a->dims[i])
      return hlv_fail(V, ins, "operand dimension %d (size %lld) maps to result dimension %lld of "
                      "size %lld", (int)i, (long long)a->dims[i], (long long)o,
                      (long long)r->dims[o]);
  }
  if (r->dtype != a->dtype)
    return hlv_fail(V, ins, "result element type %s differs from the operand's %s",
                    hlc_dtype_name(r->dtype), hlc_dtype_name(a->dtype));
  return HLV_OK;
}

static HlvResult reshape(HlvCtx *V, const HloInstr *ins) {
  if (!hlv_need_array(V, ins, 0)) return HLV_ERR;
  const HloShape *a = &ins->ops[0]->shape, *r = &ins->shape;
  if (!hlv_is_array(r)) return hlv_fail(V, ins, "result must be an array");
  if (r->dtype != a->dtype)
    return hlv_fail(V, ins, "result element type %s differs from the operand's %s",
                    hlc_dtype_name(r->dtype), hlc_dtype_name(a->dtype));
  if (hlp_shape_elements(a) != hlp_shape_elements(r))
    return hlv_fail(V, ins, "result %s has %lld elements, the operand %s has %lld", hlv_str(V, r),
                    (long long)hlp_shape_elements(r), hlv_str(V, a),
                    (long long)hlp_shape_elements(a));
  return HLV_OK;
}

/* bitcast reinterprets the buffer: the byte sizes must agree. */
static HlvResult bitcast(HlvCtx *V, const HloInstr *ins) {
  const HloShape *a = &ins->ops[0]->shape, *r = &ins->shape;
  if (!hlv_is_array(a) || !hlv_is_array(r)) return HLV_OK;   /* tuples, tokens: left alone */
  /* Element counts are below 2^62 (the parser refuses larger shapes), so
   * compare count * bits as 128-bit products. */
  __int128 ba = (__int128)hlp_shape_elements(a) * hlc_dtype_bits(a->dtype);
  __int128 br = (__int128)hlp_shape_elements(r) * hlc_dtype_bits(r->dtype);
  if (ba != br)
    return hlv_fail(V, ins, "result %s has a different size in bits than the operand %s",
                    hlv_str(V, r), hlv_str(V, a));
  return HLV_OK;
}

static HlvResult transpose(HlvCtx *V, const HloInstr *ins) {
  if (!hlv_need_array(V, ins, 0)) return HLV_ERR;
  const HloShape *a = &ins->ops[0]->shape;
  if (ins->dimensions.n != a->rank)
    return hlv_fail(V, ins, "dimensions %s is not a permutation of the operand's %d dimensions",
                    hlv_list_str(V, &ins->dimensions), (int)a->rank);
  if (!hlv_dims_ok(V, ins, "dimensions", &ins->dimensions, a->rank, false)) return HLV_ERR;
  HloShape *r = hlv_array(V, a->dtype, a->rank, NULL);
  for (int32_t i = 0; i < a->rank; i++) r->dims[i] = a->dims[ins->dimensions.v[i]];
  return hlv_expect(V, ins, r, false);
}

static HlvResult reverse(HlvCtx *V, const HloInstr *ins) {
  if (!hlv_need_array(V, ins, 0)) return HLV_ERR;
  const HloShape *a = &ins->ops[0]->shape;
  if (!hlv_dims_ok(V, ins, "dimensions", &ins->dimensions, a->rank, false)) return HLV_ERR;
  return hlv_expect(V, ins, a, false);
}

static HlvResult slice(HlvCtx *V, const HloInstr *ins) {
  if (!hlv_need_array(V, ins, 0)) return HLV_ERR;
  const HloShape *a = &ins->ops[0]->shape;
  if (!ins->slice) return hlv_fail(V, ins, "missing slice");
  HloShape *r = hlv_array(V, a->dtype, a->rank, NULL);
  for (int32_t i = 0; i < a->rank; i++) {
    const HloSliceDim *s = &ins->slice[i];
    if (s->start < 0 || s->start > s->limit || s->limit > a->dims[i] || s->stride < 1)
      return hlv_fail(V, ins, "slice [%lld:%lld:%lld] of dimension %d is out of bounds for %s",
                      (long long)s->start, (long long)s->limit, (long long)s->stride, (int)i,
                      hlv_str(V, a));
    int64_t n = s->limit - s->start;   /* 0 <= n <= dims[i]: no overflow */
    r->dims[i] = n / s->stride + (n % s->stride != 0);
  }
  return hlv_expect(V, ins, r, false);
}

/* Start indices of dynamic-(update-)slice: one integer scalar per dimension,
 * all of one type (or the old form: one integer vector). */
static bool start_indices(HlvCtx *V, const HloInstr *ins, int first, int32_t rank) {
  int32_t n = ins->nops - first;
  if (n == 1 && rank != 1 && ins->ops[first]->shape.rank == 1) {
    const HloShape *s = &ins->ops[first]->shape;
    if (!hlc_dtype_is_int(s->dtype) || s->dims[0] != rank) {
      hlv_fail(V, ins, "start index vector %s must be an integer vector of %d entries",
               hlv_str(V, s), (int)rank);
      return false;
    }
    return true;
  }
  if (n != rank) {
    hlv_fail(V, ins, "expects %d start indices for the operand's rank, got %d", (int)rank, (int)n);
    return false;
  }
  for (int32_t i = first; i < ins->nops; i++) {
    const HloShape *s = &ins->ops[i]->shape;
    if (!hlv_is_scalar(s) || !hlc_dtype_is_int(s->dtype) ||
        s->dtype != ins->ops[first]->shape.dtype) {
      hlv_fail(V, ins, "start index operand %d must be an integer scalar like the first, got %s",
               (int)i, hlv_str(V, s));
      return false;
    }
  }
  return true;
}

static HlvResult dynamic_slice(HlvCtx *V, const HloInstr *ins) {
  if (!hlv_need_array(V, ins, 0)) return HLV_ERR;
  const HloShape *a = &ins->ops[0]->shape;
  if (!start_indices(V, ins, 1, a->rank)) return HLV_ERR;
  const HloI64s *sz = &ins->dynamic_slice_sizes;
  if (sz->n != a->rank)
    return hlv_fail(V, ins, "dynamic_slice_sizes %s has %d entries, the operand has rank %d",
                    hlv_list_str(V, sz), (int)sz->n, (int)a->rank);
  for (int32_t i = 0; i < a->rank; i++)
    if (sz->v[i] < 0 || sz->v[i] > a->dims[i])
      return hlv_fail(V, ins, "slice size %lld of dimension %d is out of bounds for %s",
                      (long long)sz->v[i], (int)i, hlv_str(V, a));
  return hlv_expect(V, ins, hlv_array(V, a->dtype, a->rank, sz->v), false);
}

static HlvResult dynamic_update_slice(HlvCtx *V, const HloInstr *ins) {
  if (!hlv_need_array(V, ins, 0) || !hlv_need_array(V, ins, 1)) return HLV_ERR;
  const HloShape *a = &ins->ops[0]->shape, *u = &ins->ops[1]->shape;
  if (!start_indices(V, ins, 2, a->rank)) return HLV_ERR;
  if (u->rank != a->rank || u->dtype != a->dtype)
    return hlv_fail(V, ins, "update %s must have the rank and element type of the operand %s",
                    hlv_str(V, u), hlv_str(V, a));
  for (int32_t i = 0; i < a->rank; i++)
    if (u->dims[i] > a->dims[i])
      return hlv_fail(V, ins, "update %s is larger than the operand %s in dimension %d",
                      hlv_str(V, u), hlv_str(V, a), (int)i);
  return hlv_expect(V, ins, a, false);
}

static HlvResult concatenate(HlvCtx *V, const HloInstr *ins) {
  if (ins->dimensions.n != 1) return hlv_fail(V, ins, "takes exactly one dimension");
  for (int32_t k = 0; k < ins->nops; k++)
    if (!hlv_need_array(V, ins, k)) return HLV_ERR;
  const HloShape *a = &ins->ops[0]->shape;
  if (!hlv_dims_ok(V, ins, "dimensions", &ins->dimensions, a->rank, false)) return HLV_ERR;
  int64_t d = ins->dimensions.v[0];
  HloShape *r = hlv_copy(V, a);
  for (int32_t k = 1; k < ins->nops; k++) {
    const HloShape *b = &ins->ops[k]->shape;
    bool ok = b->rank == a->rank && a->dtype == b->dtype;
    for (int32_t i = 0; ok && i < a->rank; i++) ok = i == d || a->dims[i] == b->dims[i];
    if (!ok)
      return hlv_fail(V, ins, "operand %d %s does not match operand 0 %s outside dimension %lld",
                      (int)k, hlv_str(V, b), hlv_str(V, a), (long long)d);
    if (!hlv_add(r->dims[d], b->dims[d], &r->dims[d]))
      return hlv_fail(V, ins, "the concatenated dimension %lld overflows", (long long)d);
    if (hlc_dtype_bits(b->dtype) > hlc_dtype_bits(r->dtype)) r->dtype = b->dtype;
  }
  return hlv_expect(V, ins, r, false);
}

static HlvResult pad(HlvCtx *V, const HloInstr *ins) {
  if (!hlv_need_array(V, ins, 0) || !hlv_need_array(V, ins, 1)) return HLV_ERR;
  const HloShape *a = &ins->ops[0]->shape, *v = &ins->ops[1]->shape;
  if (v->rank != 0 || a->dtype != v->dtype)
    return hlv_fail(V, ins, "padding value %s must be a scalar of the operand's element type %s",
                    hlv_str(V, v), hlc_dtype_name(a->dtype));
  if (!ins->padding) return hlv_fail(V, ins, "missing padding");
  HloShape *r = hlv_array(V, a->dtype, a->rank, NULL);
  for (int32_t i = 0; i < a->rank; i++) {
    const HloPadDim *p = &ins->padding[i];
    if (p->interior < 0) return hlv_fail(V, ins, "interior padding of dimension %d is negative", (int)i);
    int64_t n = a->dims[i], in = 0, t;
    bool fits = (n == 0 || hlv_mul(n - 1, p->interior, &in)) && hlv_add(n, in, &t) &&
                hlv_add(t, p->lo, &t) && hlv_add(t, p->hi, &t);
    if (!fits)
      return hlv_fail(V, ins, "padding of dimension %d overflows", (int)i);
    r->dims[i] = t;
    if (r->dims[i] < 0)
      return hlv_fail(V, ins, "padding %lld_%lld_%lld makes dimension %d of %s negative",
                      (long long)p->lo, (long long)p->hi, (long long)p->interior, (int)i,
                      hlv_str(V, a));
  }
  return hlv_expect(V, ins, r, false);
}

static HlvResult iota(HlvCtx *V, const HloInstr *ins) {
  const HloShape *r = &ins->shape;
  if (!hlv_is_array(r) || r->rank == 0)
    return hlv_fail(V, ins, "result %s must be an array of rank >= 1", hlv_str(V, r));
  if (ins->iota_dimension < 0 || ins->iota_dimension >= r->rank)
    return hlv_fail(V, ins, "iota_dimension %lld is out of range for rank %d",
                    (long long)ins->iota_dimension, (int)r->rank);
  return HLV_OK;
}

static HlvResult dimension_size(HlvCtx *V, const HloInstr *ins) {
  if (!hlv_need_array(V, ins, 0)) return HLV_ERR;
  const HloShape *a = &ins->ops[0]->shape;
  if (ins->dimensions.n != 1) return hlv_fail(V, ins, "takes exactly one dimension");
  if (!hlv_dims_ok(V, ins, "dimensions", &ins->dimensions, a->rank, false)) return HLV_ERR;
  if (ins->op == HLO_OP_GET_DIMENSION_SIZE) return hlv_expect(V, ins, hlv_scalar(V, HLO_S32), false);
  const HloShape *n = &ins->ops[1]->shape;
  if (!hlv_is_scalar(n) || n->dtype != HLO_S32)
    return hlv_fail(V, ins, "the size operand must be s32[], got %s", hlv_str(V, n));
  return hlv_expect(V, ins, a, false);
}

static HlvResult dynamic_reshape(HlvCtx *V, const HloInstr *ins) {
  if (!hlv_need_array(V, ins, 0)) return HLV_ERR;
  const HloShape *r = &ins->shape;
  if (!hlv_is_array(r) || ins->nops - 1 != r->rank)
    return hlv_fail(V, ins, "expects one size operand per result dimension (%d), got %d",
                    hlv_is_array(r) ? (int)r->rank : 0, (int)ins->nops - 1);
  for (int32_t i = 1; i < ins->nops; i++) {
    const HloShape *s = &ins->ops[i]->shape;
    if (!hlv_is_scalar(s) || s->dtype != HLO_S32)
      return hlv_fail(V, ins, "size operand %d must be s32[], got %s", (int)i, hlv_str(V, s));
  }
  if (r->dtype != ins->ops[0]->shape.dtype)
    return hlv_fail(V, ins, "result element type %s differs from the operand's %s",
                    hlc_dtype_name(r->dtype), hlc_dtype_name(ins->ops[0]->shape.dtype));
  return HLV_OK;
}

static HlvResult tuple(HlvCtx *V, const HloInstr *ins) {
  HloShape *t = hlv_tuple(V, ins->nops);
  for (int32_t i = 0; i < ins->nops; i++) t->tuple[i] = ins->ops[i]->shape;
  return hlv_expect(V, ins, t, false);
}

static HlvResult get_tuple_element(HlvCtx *V, const HloInstr *ins) {
  const HloShape *t = &ins->ops[0]->shape;
  if (t->dtype != HLO_TUPLE)
    return hlv_fail(V, ins, "operand must be a tuple, got %s", hlv_str(V, t));
  if (ins->tuple_index < 0 || ins->tuple_index >= t->ntuple)
    return hlv_fail(V, ins, "index %lld is out of range for a tuple of %d elements %s",
                    (long long)ins->tuple_index, (int)t->ntuple, hlv_str(V, t));
  return hlv_expect(V, ins, &t->tuple[ins->tuple_index], false);
}

/* copy-start: (destination, source, u32[] context); copy-done: element 0. */
static HlvResult copy_async(HlvCtx *V, const HloInstr *ins) {
  const HloShape *a = &ins->ops[0]->shape;
  if (ins->op == HLO_OP_COPY_START) {
    HloShape *t = hlv_tuple(V, 3);
    t->tuple[0] = *a;
    t->tuple[1] = *a;
    t->tuple[2] = *hlv_scalar(V, HLO_U32);
    return hlv_expect(V, ins, t, false);
  }
  if (a->dtype != HLO_TUPLE || a->ntuple < 2)
    return hlv_fail(V, ins, "operand must be a copy-start tuple, got %s", hlv_str(V, a));
  return hlv_expect(V, ins, &a->tuple[0], false);
}

HlvResult hlv_data(HlvCtx *V, const HloInstr *ins) {
  switch (ins->op) {
  case HLO_OP_BROADCAST: return broadcast(V, ins);
  case HLO_OP_RESHAPE: return reshape(V, ins);
  case HLO_OP_BITCAST: return bitcast(V, ins);
  case HLO_OP_TRANSPOSE: return transpose(V, ins);
  case HLO_OP_REVERSE: return reverse(V, ins);
  case HLO_OP_SLICE: return slice(V, ins);
  case HLO_OP_DYNAMIC_SLICE: return dynamic_slice(V, ins);
  case HLO_OP_DYNAMIC_UPDATE_SLICE: return dynamic_update_slice(V, ins);
  case HLO_OP_CONCATENATE: return concatenate(V, ins);
  case HLO_OP_PAD: return pad(V, ins);
  case HLO_OP_IOTA: return iota(V, ins);
  case HLO_OP_GET_DIMENSION_SIZE: case HLO_OP_SET_DIMENSION_SIZE: return dimension_size(V, ins);
  case HLO_OP_DYNAMIC_RESHAPE: return dynamic_reshape(V, ins);
  case HLO_OP_TUPLE: return tuple(V, ins);
  case HLO_OP_GET_TUPLE_ELEMENT: return get_tuple_element(V, ins);
  case HLO_OP_COPY_START: case HLO_OP_COPY_DONE: return copy_async(V, ins);
  default: return HLV_NOT_MINE;
  }
}
