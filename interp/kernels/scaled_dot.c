/* scaled_dot.c: the scaled-dot kernel (XLA's block-scaled dot: MX and NVFP4
 * operands with per-block scales).
 *
 * scaled-dot(lhs, rhs, lhs_scale, rhs_scale) with dot dimension numbers is
 * defined by XLA's ScaledDotRewriter (xla/backends/gpu/transforms/
 * scaled_dot_rewriter.cc), the decomposition every backend without a native
 * kernel runs, and by JAX's reference lowering (jax/_src/lax/scaled_dot.py):
 *   - each operand is dequantized by its scale: both are converted to one
 *     type T (GetTargetType: bf16 when both are narrower than 16 bits; the
 *     type itself when they agree; f32 when they are as wide but differ;
 *     else the wider one) and multiplied in T, the scale repeated over
 *     blocks: a scale dimension of size s on an operand dimension of size n
 *     (s divides n) gives element j the scale entry j / (n / s);
 *   - a scalar scale leaves its operand as it is (the rewriter skips it);
 *   - then dot(lhs', rhs') with the instruction's dimension numbers and
 *     result type, as the dot kernel runs a dot of those operand types.
 * The multiply and the dot are hlorun's own multiply and dot kernels, so
 * the bits are those of the decomposed module. A scalar scale other than 1
 * is refused: XLA ignores it and JAX multiplies by it, so its meaning is
 * not settled. __cublas$lt$matmul$mx (targets/gpu/mxgemm.c) runs through
 * this kernel.
 * Not here: the shape rules (parser/verify_linalg.c). */
#include "interp/kernels/elementwise.h"
#include "interp/kernels/register.h"
#include "interp/kernels/gemm.h"
#include <stdlib.h>
#include <string.h>

/* GetTargetType of scaled_dot_rewriter.cc. */
static HloDtype target_type(HloDtype a, HloDtype b) {
  int wa = hlc_dtype_bits(a), wb = hlc_dtype_bits(b);
  if (wa < 16 && wb < 16) return HLO_BF16;
  if (a == b) return a;
  if (wa == wb) return HLO_F32;
  return wa > wb ? a : b;
}

/* Operand i's value after dequantization: its type and whether it is the
 * operand itself (scalar scale). */
static HloDtype side_type(const HloShape *op, const HloShape *scale, bool *as_is) {
  *as_is = scale->rank == 0;
  return *as_is ? op->dtype : target_type(op->dtype, scale->dtype);
}

/* Scale shape of side i fits its operand: the same rank (or a scalar), each
 * dimension dividing the operand's. */
static int check_side(HliExec *x, const HloInstr *ins, int i) {
  const HloShape *op = &ins->ops[i]->shape, *sc = &ins->ops[2 + i]->shape;
  const char *side = i ? "rhs" : "lhs";
  if (!hlc_dtype_is_array(op->dtype) || !hlc_dtype_is_array(sc->dtype))
    return hli_fail(x, ins, "scaled-dot operands must be arrays");
  if (sc->rank == 0) return 0;
  if (sc->rank != op->rank)
    return hli_fail(x, ins, "%s_scale has rank %d but %s has rank %d (a scale has its operand's "
                    "rank, or is a scalar)", side, (int)sc->rank, side, (int)op->rank);
  for (int32_t d = 0; d < op->rank; d++)
    if (sc->dims[d] <= 0 ? op->dims[d] != 0 : op->dims[d] % sc->dims[d] != 0)
      return hli_fail(x, ins, "%s_scale dimension %d has size %lld, which does not divide %s's "
                      "%lld", side, (int)d, (long long)sc->dims[d], side, (long long)op->dims[d]);
  HloDtype t = target_type(op->dtype, sc->dtype);
  if (!hlk_binary_loop(HLO_OP_MULTIPLY, t) || !hlk_operand_convertible(op->dtype, t) ||
      !hlk_operand_convertible(sc->dtype, t))
    return hli_unsupported(x, ins, "scaled-dot of %s %s with a %s scale (dequantized in %s)", side,
                           hlc_dtype_name(op->dtype), hlc_dtype_name(sc->dtype),
                           hlc_dtype_name(t));
  return 0;
}

static int scaled_dot_check(HliExec *x, const HloInstr *ins) {
  if (ins->nops != 4)
    return hli_fail(x, ins, "scaled-dot takes 4 operands (lhs, rhs, lhs_scale, rhs_scale), got %d",
                    ins->nops);
  if (check_side(x, ins, 0) || check_side(x, ins, 1)) return -1;
  /* The dot of the dequantized operands must check out. */
  HloInstr dot = *ins, l = *ins->ops[0], r = *ins->ops[1];
  HloInstr *ops[2] = {&l, &r};
  bool as_is;
  l.shape.dtype = side_type(&ins->ops[0]->shape, &ins->ops[2]->shape, &as_is);
  r.shape.dtype = side_type(&ins->ops[1]->shape, &ins->ops[3]->shape, &as_is);
  dot.op = HLO_OP_DOT;
  dot.nops = 2;
  dot.ops = ops;
  return hlk_dot_check(x, &dot);
}

/* The operand dequantized by a non-scalar scale, as a new value of type t. */
static HliValue *dequantize(HliExec *x, const HloInstr *ins, const HliValue *op,
                            const HliValue *sc, HloDtype t, HloShape *shape) {
  memset(shape, 0, sizeof *shape);
  shape->dtype = t;
  shape->rank = op->rank;
  shape->dims = (int64_t *)op->dims;
  HliValue *v = hli_value_new(x, shape), *s = hli_value_new(x, shape);
  size_t es = hlc_dtype_size(t);
  void *sct = malloc((size_t)(sc->nelem ? sc->nelem : 1) * es);
  if (!v || !s || !sct) {
    if (v) hli_value_unref(x, v);
    if (s) hli_value_unref(x, s);
    free(sct);
    if (!v || !s) return NULL;   /* hli_value_new said why */
    hli_fail(x, ins, "out of memory for the scales");
    return NULL;
  }
  hlk_convert_loop(op->dtype, t, op->data, v->data, op->nelem);
  hlk_convert_loop(sc->dtype, t, sc->data, sct, sc->nelem);
  /* Repeat each scale entry over its block: element idx reads scale entry
   * idx[d] / (n_d / s_d) in every dimension d. */
  int64_t sstr[HLK_MAX_RANK], idx[HLK_MAX_RANK] = {0}, block[HLK_MAX_RANK];
  hli_strides(sc->dims, sc->rank, sstr);
  for (int d = 0; d < op->rank; d++) block[d] = sc->dims[d] ? op->dims[d] / sc->dims[d] : 1;
  for (int64_t e = 0; e < op->nelem; e++) {
    int64_t k = 0;
    for (int d = 0; d < op->rank; d++) k += idx[d] / block[d] * sstr[d];
    memcpy((char *)s->data + (size_t)e * es, (const char *)sct + (size_t)k * es, es);
    for (int d = op->rank - 1; d >= 0; d--) {
      if (++idx[d] < op->dims[d]) break;
      idx[d] = 0;
    }
  }
  free(sct);
  /* multiply's kernel loop (narrow floats through f32, rounded once) */
  hlk_run_binary(x, hlk_binary_loop(HLO_OP_MULTIPLY, t), t, v, s, v);
  hli_value_unref(x, s);
  return v;
}

static int scaled_dot_run(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  HliValue *deq[2] = {NULL, NULL};
  HloShape shapes[2];
  HliValue *ops[2];
  int rc = 0;
  for (int i = 0; i < 2 && rc == 0; i++) {
    const HliValue *sc = in[2 + i];
    if (sc->rank == 0) {
      double one;
      hlk_convert_loop(sc->dtype, HLO_F64, sc->data, &one, 1);
      if (one != 1)
        rc = hli_fail(x, ins, "%s_scale is the scalar %g: XLA's ScaledDotRewriter ignores a scalar "
                      "scale and JAX's lowering multiplies by it, so only 1 has one meaning",
                      i ? "rhs" : "lhs", one);
      ops[i] = in[i];
      continue;
    }
    bool as_is;
    HloDtype t = side_type(in[i]->shape, sc->shape, &as_is);
    deq[i] = dequantize(x, ins, in[i], sc, t, &shapes[i]);
    if (!deq[i]) rc = -1;
    ops[i] = deq[i];
  }
  if (rc == 0) {
    HloInstr dot = *ins;
    dot.op = HLO_OP_DOT;
    dot.nops = 2;
    rc = hlk_dot_run(x, &dot, ops, out, false);
  }
  for (int i = 0; i < 2; i++)
    if (deq[i]) hli_value_unref(x, deq[i]);
  return rc;
}

void hlk_register_scaled_dot(HliOpTable t) {
  t[HLO_OP_SCALED_DOT] = (HliOpEntry){.run = scaled_dot_run, .check = scaled_dot_check};
}
