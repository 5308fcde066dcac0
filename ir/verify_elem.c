/* verify_elem.c: shape rules of the elementwise family: unary and binary
 * arithmetic, compare (-> pred), select (scalar or full pred), clamp (scalar
 * or full bounds), complex(), real/imag/abs of complex (-> the real type),
 * is-finite, convert, bitcast-convert (width changes add or drop a minor
 * dimension), stochastic-convert, reduce-precision, and the identity-shaped
 * ops (copy, opt-barrier, domain, add-dependency, after-all, ids).
 * Operand element-type classes follow XLA's shape inference. Element types
 * must agree exactly, as in XLA's default verifier (mixed precision is off):
 * the kernels compute in the operands' type and would otherwise write a
 * wrong answer. Only copy may change the float type (XLA's evaluator test
 * CopyDifferentTypes).
 */
#include "ir/verify.h"

/* Element-type classes an operand may have. */
enum { K_PRED = 1, K_INT = 2, K_FLOAT = 4, K_COMPLEX = 8,
       K_NUM = K_INT | K_FLOAT | K_COMPLEX, K_ANY = K_PRED | K_NUM };

static int kind_bit(HloDtype t) {
  switch (hlc_dtype_kind(t)) {
  case HLO_KIND_PRED: return K_PRED;
  case HLO_KIND_SINT: case HLO_KIND_UINT: return K_INT;
  case HLO_KIND_FLOAT: return K_FLOAT;
  case HLO_KIND_COMPLEX: return K_COMPLEX;
  default: return 0;
  }
}

static const char *kinds_text(int k) {
  switch (k) {
  case K_FLOAT: return "a floating-point";
  case K_FLOAT | K_COMPLEX: return "a floating-point or complex";
  case K_INT: return "an integer";
  case K_PRED | K_INT: return "a pred or integer";
  case K_INT | K_FLOAT | K_COMPLEX: return "a numeric (not pred)";
  default: return "an array";
  }
}

static HloDtype real_of(HloDtype t) {
  return t == HLO_C64 ? HLO_F32 : t == HLO_C128 ? HLO_F64 : t;
}

/* Element-type class rules of the unary ops (0 = not a unary op here). */
static int unary_kinds(HloOpcode op) {
  switch (op) {
  case HLO_OP_CEIL: case HLO_OP_FLOOR: case HLO_OP_ROUND_NEAREST_AFZ:
  case HLO_OP_ROUND_NEAREST_EVEN: case HLO_OP_IS_FINITE:
    return K_FLOAT;
  case HLO_OP_COSINE: case HLO_OP_SINE: case HLO_OP_TAN: case HLO_OP_EXPONENTIAL:
  case HLO_OP_EXPONENTIAL_MINUS_ONE: case HLO_OP_LOG: case HLO_OP_LOG_PLUS_ONE:
  case HLO_OP_LOGISTIC: case HLO_OP_SQRT: case HLO_OP_RSQRT: case HLO_OP_CBRT: case HLO_OP_TANH:
  case HLO_OP_ERF: case HLO_OP_ACOS: case HLO_OP_ACOSH: case HLO_OP_ASIN: case HLO_OP_ASINH:
  case HLO_OP_ATANH: case HLO_OP_COSH: case HLO_OP_SINH: case HLO_OP_REAL: case HLO_OP_IMAG:
    return K_FLOAT | K_COMPLEX;
  case HLO_OP_NOT:
    return K_PRED | K_INT;
  case HLO_OP_POPCNT: case HLO_OP_COUNT_LEADING_ZEROS:
    return K_INT;
  case HLO_OP_ABS: case HLO_OP_NEGATE: case HLO_OP_SIGN:
    return K_NUM;
  default:
    return 0;
  }
}

static int binary_kinds(HloOpcode op) {
  switch (op) {
  case HLO_OP_ADD: case HLO_OP_MULTIPLY: case HLO_OP_MAXIMUM: case HLO_OP_MINIMUM:
  case HLO_OP_COMPARE:
    return K_ANY;
  case HLO_OP_SUBTRACT: case HLO_OP_DIVIDE: case HLO_OP_POWER: case HLO_OP_REMAINDER:
    return K_NUM;   /* XLA: "arithmetic type", not pred */
  case HLO_OP_ATAN2:
    return K_FLOAT | K_COMPLEX;
  case HLO_OP_AND: case HLO_OP_OR: case HLO_OP_XOR:
    return K_PRED | K_INT;
  case HLO_OP_SHIFT_LEFT: case HLO_OP_SHIFT_RIGHT_ARITHMETIC: case HLO_OP_SHIFT_RIGHT_LOGICAL:
    return K_INT;
  case HLO_OP_COMPLEX:
    return K_FLOAT;
  default:
    return 0;
  }
}

static bool operand_kind(HlvCtx *V, const HloInstr *ins, int k, int kinds) {
  if (!hlv_need_array(V, ins, k)) return false;
  HloDtype t = ins->ops[k]->shape.dtype;
  if (kind_bit(t) & kinds) return true;
  hlv_fail(V, ins, "expects %s operand, got %s", kinds_text(kinds), hlc_dtype_name(t));
  return false;
}

static HlvResult unary(HlvCtx *V, const HloInstr *ins, int kinds) {
  if (!operand_kind(V, ins, 0, kinds)) return HLV_ERR;
  const HloShape *a = &ins->ops[0]->shape;
  HloShape *r = hlv_copy(V, a);
  if (ins->op == HLO_OP_ABS || ins->op == HLO_OP_REAL || ins->op == HLO_OP_IMAG)
    r->dtype = real_of(a->dtype);
  if (ins->op == HLO_OP_IS_FINITE) r->dtype = HLO_PRED;
  return hlv_expect(V, ins, r, false);
}

static HlvResult binary(HlvCtx *V, const HloInstr *ins, int kinds) {
  if (!operand_kind(V, ins, 0, kinds) || !operand_kind(V, ins, 1, kinds)) return HLV_ERR;
  const HloShape *a = &ins->ops[0]->shape, *b = &ins->ops[1]->shape;
  if (!hlv_same_dims(a, b))
    return hlv_fail(V, ins, "operands must have the same dimensions, got %s and %s", hlv_str(V, a),
                    hlv_str(V, b));
  if (a->dtype != b->dtype)
    return hlv_fail(V, ins, "operands must have the same element type, got %s and %s",
                    hlc_dtype_name(a->dtype), hlc_dtype_name(b->dtype));
  HloShape *r = hlv_copy(V, a);
  if (ins->op == HLO_OP_COMPARE) r->dtype = HLO_PRED;
  if (ins->op == HLO_OP_COMPLEX) {
    if (a->dtype != HLO_F32 && a->dtype != HLO_F64)
      return hlv_fail(V, ins, "expects f32 or f64 operands, got %s", hlc_dtype_name(a->dtype));
    r->dtype = a->dtype == HLO_F64 ? HLO_C128 : HLO_C64;
  }
  return hlv_expect(V, ins, r, false);
}

/* select(pred, on_true, on_false): pred is pred[] or has on_true's dims. */
static HlvResult select_op(HlvCtx *V, const HloInstr *ins) {
  for (int k = 0; k < 3; k++)
    if (!hlv_need_array(V, ins, k)) return HLV_ERR;
  const HloShape *p = &ins->ops[0]->shape, *t = &ins->ops[1]->shape, *f = &ins->ops[2]->shape;
  if (p->dtype != HLO_PRED)
    return hlv_fail(V, ins, "the selector must be pred, got %s", hlv_str(V, p));
  if (!hlv_compatible(t, f, false))
    return hlv_fail(V, ins, "on_true %s and on_false %s must have the same shape", hlv_str(V, t),
                    hlv_str(V, f));
  if (p->rank != 0 && !hlv_same_dims(p, t))
    return hlv_fail(V, ins, "the selector %s must be a scalar or have the dimensions of %s",
                    hlv_str(V, p), hlv_str(V, t));
  return hlv_expect(V, ins, t, false);
}

/* clamp(min, x, max): bounds are scalars or have x's shape. */
static HlvResult clamp_op(HlvCtx *V, const HloInstr *ins) {
  for (int k = 0; k < 3; k++)
    if (!hlv_need_array(V, ins, k)) return HLV_ERR;
  const HloShape *x = &ins->ops[1]->shape;
  for (int k = 0; k < 3; k += 2) {
    const HloShape *b = &ins->ops[k]->shape;
    if (!hlv_same_type_fp(b->dtype, x->dtype) || (b->rank != 0 && !hlv_same_dims(b, x)))
      return hlv_fail(V, ins, "%s bound %s must be a scalar or have the shape of the operand %s",
                      k ? "upper" : "lower", hlv_str(V, b), hlv_str(V, x));
  }
  return hlv_expect(V, ins, x, false);
}

/* Bit width as XLA counts it for bitcast-convert (pred occupies a byte). */
static int bcast_bits(HloDtype t) { return t == HLO_PRED ? 8 : hlc_dtype_bits(t); }

static HlvResult convert_op(HlvCtx *V, const HloInstr *ins) {
  if (!hlv_need_array(V, ins, 0)) return HLV_ERR;
  const HloShape *a = &ins->ops[0]->shape;
  HloDtype to = ins->shape.dtype;
  if (!hlc_dtype_is_array(to))
    return hlv_fail(V, ins, "result must be an array, got %s", hlv_str(V, &ins->shape));
  HloShape *r = hlv_copy(V, a);
  r->dtype = to;
  if (ins->op == HLO_OP_CONVERT) {
    /* As XLA's shape inference: complex -> real is not defined (use real()). */
    if (hlc_dtype_is_complex(a->dtype) && !hlc_dtype_is_complex(to))
      return hlv_fail(V, ins, "conversion from complex %s to real %s is not defined (use real)",
                      hlc_dtype_name(a->dtype), hlc_dtype_name(to));
    return hlv_expect(V, ins, r, false);
  }
  /* bitcast-convert: XLA refuses conversions between complex and real types. */
  if (hlc_dtype_is_complex(a->dtype) != hlc_dtype_is_complex(to))
    return hlv_fail(V, ins, "bitcast-convert between complex and real types (%s to %s) is not "
                    "allowed", hlc_dtype_name(a->dtype), hlc_dtype_name(to));
  /* bitcast-convert */
  int from = bcast_bits(a->dtype), tob = bcast_bits(to);
  if (from > tob) {
    if (tob == 0 || from % tob) return hlv_fail(V, ins, "cannot bitcast %s to %s",
                                                hlc_dtype_name(a->dtype), hlc_dtype_name(to));
    r = hlv_array(V, to, a->rank + 1, a->dims);
    r->dims[a->rank] = from / tob;
  } else if (from < tob) {
    if (from == 0 || tob % from)
      return hlv_fail(V, ins, "cannot bitcast %s to %s", hlc_dtype_name(a->dtype), hlc_dtype_name(to));
    if (a->rank == 0 || a->dims[a->rank - 1] != tob / from)
      return hlv_fail(V, ins, "bitcast from %s to %s needs a last dimension of %d, got %s",
                      hlc_dtype_name(a->dtype), hlc_dtype_name(to), tob / from, hlv_str(V, a));
    r = hlv_array(V, to, a->rank - 1, a->dims);
  }
  return hlv_expect(V, ins, r, false);
}

static HlvResult stochastic_convert(HlvCtx *V, const HloInstr *ins) {
  if (!operand_kind(V, ins, 0, K_FLOAT) || !operand_kind(V, ins, 1, K_INT)) return HLV_ERR;
  const HloShape *a = &ins->ops[0]->shape, *rnd = &ins->ops[1]->shape;
  if (hlc_dtype_kind(rnd->dtype) != HLO_KIND_UINT || !hlv_same_dims(a, rnd) ||
      hlc_dtype_bits(rnd->dtype) != hlc_dtype_bits(a->dtype))
    return hlv_fail(V, ins, "random operand %s must be unsigned with the dimensions and width of %s",
                    hlv_str(V, rnd), hlv_str(V, a));
  HloShape *r = hlv_copy(V, a);
  r->dtype = ins->shape.dtype;
  return hlv_expect(V, ins, r, false);
}

HlvResult hlv_elementwise(HlvCtx *V, const HloInstr *ins) {
  HloOpcode op = ins->op;
  int k = unary_kinds(op);
  if (k) return unary(V, ins, k);
  k = binary_kinds(op);
  if (k) return binary(V, ins, k);
  switch (op) {
  case HLO_OP_SELECT: return select_op(V, ins);
  case HLO_OP_CLAMP: return clamp_op(V, ins);
  case HLO_OP_CONVERT: case HLO_OP_BITCAST_CONVERT: return convert_op(V, ins);
  case HLO_OP_STOCHASTIC_CONVERT: return stochastic_convert(V, ins);
  case HLO_OP_REDUCE_PRECISION:
    if (!operand_kind(V, ins, 0, K_FLOAT)) return HLV_ERR;
    if (ins->exponent_bits < 1 || ins->mantissa_bits < 0)
      return hlv_fail(V, ins, "needs exponent_bits >= 1 and mantissa_bits >= 0");
    return hlv_expect(V, ins, &ins->ops[0]->shape, false);
  case HLO_OP_COPY:   /* any shape (a tuple copy is shallow); XLA's evaluator
                          also copies between float types (CopyDifferentTypes) */
    return hlv_expect(V, ins, &ins->ops[0]->shape, true);
  case HLO_OP_OPT_BARRIER:
    return hlv_expect(V, ins, &ins->ops[0]->shape, false);
  case HLO_OP_DOMAIN:
    return hlv_expect(V, ins, &ins->ops[0]->shape, false);
  case HLO_OP_ADD_DEPENDENCY:
    if (ins->ops[1]->shape.dtype != HLO_TOKEN)
      return hlv_fail(V, ins, "operand 1 must be a token, got %s", hlv_str(V, &ins->ops[1]->shape));
    return hlv_expect(V, ins, &ins->ops[0]->shape, false);
  case HLO_OP_AFTER_ALL:
    /* Operands are normally tokens, but XLA's evaluator tests join arrays
     * too (tests_AddDependencyOf*): only the result is checked. */
    return hlv_expect(V, ins, hlv_scalar(V, HLO_TOKEN), false);
  case HLO_OP_PARTITION_ID: case HLO_OP_REPLICA_ID:
    return hlv_expect(V, ins, hlv_scalar(V, HLO_U32), false);
  default:
    return HLV_NOT_MINE;
  }
}
