/* verify_reduce.c: shape rules of the ops that apply a scalar computation:
 * reduce (variadic), reduce-window (window output sizes with padding,
 * strides and dilations), select-and-scatter, sort (comparator over 2k
 * scalars returning pred[]), map, and topk. The reducer's accumulator type
 * decides the result element type; like XLA, the declared result may differ
 * from it in floating-point precision (e.g. a bf16 reduce with an f32 adder).
 */
#include "ir/verify.h"

/* Operands 0..k-1 are arrays with equal dims, k..2k-1 are scalars. Fills the
 * element types. */
static bool inputs_inits(HlvCtx *V, const HloInstr *ins, int32_t k, HloDtype *it, HloDtype *iv) {
  for (int32_t i = 0; i < 2 * k; i++)
    if (!hlv_need_array(V, ins, i)) return false;
  const HloShape *a = &ins->ops[0]->shape;
  for (int32_t i = 0; i < k; i++) {
    const HloShape *x = &ins->ops[i]->shape, *init = &ins->ops[k + i]->shape;
    if (!hlv_same_dims(x, a)) {
      hlv_fail(V, ins, "input %d %s must have the dimensions of input 0 %s", (int)i, hlv_str(V, x),
               hlv_str(V, a));
      return false;
    }
    if (init->rank != 0) {
      hlv_fail(V, ins, "init value %d must be a scalar, got %s", (int)i, hlv_str(V, init));
      return false;
    }
    it[i] = x->dtype;
    iv[i] = init->dtype;
  }
  return true;
}

/* k arrays of the given dims and element types: one array or a k-tuple. */
static HloShape *results(HlvCtx *V, int32_t k, const HloDtype *t, int32_t rank, const int64_t *dims) {
  if (k == 1) return hlv_array(V, t[0], rank, dims);
  HloShape *r = hlv_tuple(V, k);
  for (int32_t i = 0; i < k; i++) r->tuple[i] = *hlv_array(V, t[i], rank, dims);
  return r;
}

static HlvResult reduce(HlvCtx *V, const HloInstr *ins) {
  int32_t k = ins->nops / 2;
  HloDtype *it = hlv_alloc(V, (size_t)k * sizeof *it), *iv = hlv_alloc(V, (size_t)k * sizeof *iv);
  HloDtype *acc = hlv_alloc(V, (size_t)k * sizeof *acc);
  if (k < 1 || ins->nops != 2 * k)
    return hlv_fail(V, ins, "expects inputs and as many init values, got %d operands", (int)ins->nops);
  if (!inputs_inits(V, ins, k, it, iv)) return HLV_ERR;
  const HloShape *a = &ins->ops[0]->shape;
  if (!hlv_dims_ok(V, ins, "dimensions", &ins->dimensions, a->rank, false)) return HLV_ERR;
  if (!hlv_reducer(V, ins, "to_apply", hlv_called(ins, HLO_CALL_TO_APPLY), k, iv, it, acc))
    return HLV_ERR;
  int64_t *dims = hlv_alloc(V, (size_t)(a->rank + 1) * sizeof *dims);
  int32_t n = 0;
  for (int32_t i = 0; i < a->rank; i++) {
    bool reduced = false;
    for (int32_t j = 0; j < ins->dimensions.n; j++) reduced |= ins->dimensions.v[j] == i;
    if (!reduced) dims[n++] = a->dims[i];
  }
  return hlv_expect(V, ins, results(V, k, acc, n, dims), true);
}

/* Window rank must equal the operand rank (a missing window is rank 0). */
static bool window_rank(HlvCtx *V, const HloInstr *ins, const HloShape *a) {
  int32_t wr = ins->window.present ? ins->window.rank : 0;
  if (wr == a->rank) return true;
  hlv_fail(V, ins, "window has %d dimensions, the operand %s has rank %d", (int)wr, hlv_str(V, a),
           (int)a->rank);
  return false;
}

/* Output dims of the window over a, or NULL (reported) on overflow. */
static int64_t *window_dims(HlvCtx *V, const HloInstr *ins, const HloShape *a) {
  int64_t *d = hlv_alloc(V, (size_t)(a->rank + 1) * sizeof *d);
  for (int32_t i = 0; i < a->rank; i++) {
    d[i] = hlv_window_out(a->dims[i], &ins->window.dims[i]);
    if (d[i] < 0) {
      hlv_fail(V, ins, "window of dimension %d overflows", (int)i);
      return NULL;
    }
  }
  return d;
}

static HlvResult reduce_window(HlvCtx *V, const HloInstr *ins) {
  int32_t k = ins->nops / 2;
  if (k < 1 || ins->nops != 2 * k)
    return hlv_fail(V, ins, "expects inputs and as many init values, got %d operands", (int)ins->nops);
  HloDtype *it = hlv_alloc(V, (size_t)k * sizeof *it), *iv = hlv_alloc(V, (size_t)k * sizeof *iv);
  HloDtype *acc = hlv_alloc(V, (size_t)k * sizeof *acc);
  if (!inputs_inits(V, ins, k, it, iv)) return HLV_ERR;
  const HloShape *a = &ins->ops[0]->shape;
  if (!window_rank(V, ins, a)) return HLV_ERR;
  if (!hlv_reducer(V, ins, "to_apply", hlv_called(ins, HLO_CALL_TO_APPLY), k, iv, it, acc))
    return HLV_ERR;
  int64_t *wd = window_dims(V, ins, a);
  if (!wd) return HLV_ERR;
  return hlv_expect(V, ins, results(V, k, acc, a->rank, wd), true);
}

static HlvResult select_and_scatter(HlvCtx *V, const HloInstr *ins) {
  for (int k = 0; k < 3; k++)
    if (!hlv_need_array(V, ins, k)) return HLV_ERR;
  const HloShape *a = &ins->ops[0]->shape, *src = &ins->ops[1]->shape, *init = &ins->ops[2]->shape;
  if (init->rank != 0)
    return hlv_fail(V, ins, "init value must be a scalar, got %s", hlv_str(V, init));
  if (!window_rank(V, ins, a)) return HLV_ERR;
  int64_t *wd = window_dims(V, ins, a);
  if (!wd) return HLV_ERR;
  HloShape *ws = hlv_array(V, src->dtype, a->rank, wd);
  if (!hlv_same_dims(src, ws))
    return hlv_fail(V, ins, "source %s must have the window output dimensions %s", hlv_str(V, src),
                    hlv_str(V, ws));
  const HloShape *elem = hlv_scalar(V, a->dtype);
  const HloShape *sp[2] = {elem, elem};
  if (!hlv_signature(V, ins, "select", hlv_called(ins, HLO_CALL_SELECT), 2, sp,
                     hlv_scalar(V, HLO_PRED), true))
    return HLV_ERR;
  if (!hlv_reducer(V, ins, "scatter", hlv_called(ins, HLO_CALL_SCATTER), 1, &init->dtype,
                   &src->dtype, NULL))
    return HLV_ERR;
  return hlv_expect(V, ins, a, false);
}

static HlvResult sort(HlvCtx *V, const HloInstr *ins) {
  if (ins->nops < 1) return hlv_fail(V, ins, "expects at least one operand");
  for (int32_t i = 0; i < ins->nops; i++)
    if (!hlv_need_array(V, ins, i)) return HLV_ERR;
  const HloShape *a = &ins->ops[0]->shape;
  for (int32_t i = 1; i < ins->nops; i++)
    if (!hlv_same_dims(&ins->ops[i]->shape, a))
      return hlv_fail(V, ins, "operand %d %s must have the dimensions of operand 0 %s", (int)i,
                      hlv_str(V, &ins->ops[i]->shape), hlv_str(V, a));
  if (ins->dimensions.n != 1) return hlv_fail(V, ins, "takes exactly one dimension");
  if (!hlv_dims_ok(V, ins, "dimensions", &ins->dimensions, a->rank, false)) return HLV_ERR;
  const HloShape **ps = hlv_alloc(V, (size_t)(2 * ins->nops) * sizeof *ps);
  for (int32_t i = 0; i < ins->nops; i++)
    ps[2 * i] = ps[2 * i + 1] = hlv_scalar(V, ins->ops[i]->shape.dtype);
  if (!hlv_signature(V, ins, "comparator", hlv_called(ins, HLO_CALL_TO_APPLY), 2 * ins->nops, ps,
                     hlv_scalar(V, HLO_PRED), true))
    return HLV_ERR;
  if (ins->nops == 1) return hlv_expect(V, ins, a, false);
  HloShape *t = hlv_tuple(V, ins->nops);
  for (int32_t i = 0; i < ins->nops; i++) t->tuple[i] = ins->ops[i]->shape;
  return hlv_expect(V, ins, t, false);
}

static HlvResult map(HlvCtx *V, const HloInstr *ins) {
  for (int32_t i = 0; i < ins->nops; i++)
    if (!hlv_need_array(V, ins, i)) return HLV_ERR;
  if (ins->nops < 1) return hlv_fail(V, ins, "expects at least one operand");
  const HloShape *a = &ins->ops[0]->shape;
  for (int32_t i = 1; i < ins->nops; i++)
    if (!hlv_same_dims(&ins->ops[i]->shape, a))
      return hlv_fail(V, ins, "operand %d %s must have the dimensions of operand 0 %s", (int)i,
                      hlv_str(V, &ins->ops[i]->shape), hlv_str(V, a));
  if (ins->has_dimensions) {
    bool ident = ins->dimensions.n == a->rank;
    for (int32_t i = 0; ident && i < a->rank; i++) ident = ins->dimensions.v[i] == i;
    if (!ident)
      return hlv_fail(V, ins, "dimensions %s must list every operand dimension in order",
                      hlv_list_str(V, &ins->dimensions));
  }
  const HloShape **ps = hlv_alloc(V, (size_t)ins->nops * sizeof *ps);
  for (int32_t i = 0; i < ins->nops; i++) ps[i] = hlv_scalar(V, ins->ops[i]->shape.dtype);
  const HloComputation *c = hlv_called(ins, HLO_CALL_TO_APPLY);
  if (!hlv_signature(V, ins, "to_apply", c, ins->nops, ps, NULL, true)) return HLV_ERR;
  if (!hlv_is_scalar(&c->root->shape))
    return hlv_fail(V, ins, "to_apply computation '%s' must return a scalar, returns %s", c->name,
                    hlv_str(V, &c->root->shape));
  return hlv_expect(V, ins, hlv_array(V, c->root->shape.dtype, a->rank, a->dims), false);
}

static HlvResult topk(HlvCtx *V, const HloInstr *ins) {
  if (!hlv_need_array(V, ins, 0)) return HLV_ERR;
  const HloShape *a = &ins->ops[0]->shape;
  if (a->rank < 1) return hlv_fail(V, ins, "operand must have rank >= 1, got %s", hlv_str(V, a));
  if (ins->k < 0 || ins->k > a->dims[a->rank - 1])
    return hlv_fail(V, ins, "k=%lld is out of range for the last dimension of %s", (long long)ins->k,
                    hlv_str(V, a));
  HloShape *t = hlv_tuple(V, 2);
  t->tuple[0] = *hlv_array(V, a->dtype, a->rank, a->dims);
  t->tuple[0].dims[a->rank - 1] = ins->k;
  t->tuple[1] = *hlv_array(V, HLO_S32, a->rank, t->tuple[0].dims);
  return hlv_expect(V, ins, t, false);
}

HlvResult hlv_reduce(HlvCtx *V, const HloInstr *ins) {
  switch (ins->op) {
  case HLO_OP_REDUCE: return reduce(V, ins);
  case HLO_OP_REDUCE_WINDOW: return reduce_window(V, ins);
  case HLO_OP_SELECT_AND_SCATTER: return select_and_scatter(V, ins);
  case HLO_OP_SORT: return sort(V, ins);
  case HLO_OP_MAP: return map(V, ins);
  case HLO_OP_TOPK: return topk(V, ins);
  default: return HLV_NOT_MINE;
  }
}
