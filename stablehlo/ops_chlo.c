/* ops_chlo.c: CHLO's math ops, decomposed into HLO instructions exactly as
 * XLA does it before translating (StableHLO's chlo-legalize-to-stablehlo:
 * ChloLegalizeToStablehlo.cpp, ChloDecompositionPatterns*.td), so the
 * results are XLA's bit for bit: the same ops, constants and order. The
 * special functions (erf, gamma, Bessel) are in ops_chlo_special.c.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "stablehlo/lower.h"
#include "stablehlo/ops.h"

/* ---- The expression builder ---------------------------------------------------- */

ShType *shx_like(Lower *C, const ShType *t, HloDtype dt) {
  ShType *r = hlc_arena_memdup(C->arena, t, sizeof *t);
  r->dt = dt;
  return r;
}

static const char *scalar_constant(ShEx *e, const char *text) {
  Lower *C = e->C;
  ShType *st = sh_scalar_type(C, e->t->dt);
  const char *k = sh_emit(C, st, "constant", text, NULL, NULL);
  if (e->t->rank == 0) return k;
  return sh_emit(C, e->t, "broadcast", k, ", dimensions={}", NULL);
}

/* %.17g keeps every double exactly; the HLO parser rounds it to the element
 * type as getConstantLike's APFloat conversion does (to nearest even). */
static const char *float_text(Lower *C, double v) {
  if (isnan(v)) return "nan";
  if (isinf(v)) return v < 0 ? "-inf" : "inf";
  return sh_fmt(C, "%.17g", v);
}

const char *shx_k(ShEx *e, double v) {
  const char *s = float_text(e->C, v);
  if (hlc_dtype_is_complex(e->t->dt)) s = sh_fmt(e->C, "(%s, 0)", s);
  return scalar_constant(e, s);
}

const char *shx_ki(ShEx *e, long long v) { return scalar_constant(e, sh_fmt(e->C, "%lld", v)); }

const char *shx_1(ShEx *e, const char *opcode, const char *a) { return sh_emit(e->C, e->t, opcode, a, NULL, NULL); }

const char *shx_2(ShEx *e, const char *opcode, const char *a, const char *b) {
  return sh_emit(e->C, e->t, opcode, sh_fmt(e->C, "%s, %s", a, b), NULL, NULL);
}

const char *shx_cmp(ShEx *e, const char *dir, const char *a, const char *b) {
  return sh_emit(e->C, shx_like(e->C, e->t, HLO_PRED), "compare", sh_fmt(e->C, "%s, %s", a, b),
                 sh_fmt(e->C, ", direction=%s", dir), NULL);
}

const char *shx_sel(ShEx *e, const char *p, const char *a, const char *b) {
  return sh_emit(e->C, e->t, "select", sh_fmt(e->C, "%s, %s, %s", p, a, b), NULL, NULL);
}

const char *shx_to(ShEx *e, const char *opcode, const char *a, HloDtype dt) {
  return sh_emit(e->C, shx_like(e->C, e->t, dt), opcode, a, NULL, NULL);
}

const char *shx_poly(ShEx *e, const char *x, const double *c, int n) {
  if (n == 0) return shx_k(e, 0);
  const char *p = shx_k(e, c[0]);
  for (int i = 1; i < n; i++) p = shx_2(e, "add", shx_2(e, "multiply", p, x), shx_k(e, c[i]));
  return p;
}

double shx_max_finite(HloDtype dt) {
  switch (dt) {
  case HLO_F16: return 65504.0;
  case HLO_BF16: return 0x1.fep127;
  case HLO_F32: return FLT_MAX;
  default: return DBL_MAX;
  }
}

/* ---- Inverse trigonometric and hyperbolic functions (real) ----------------------- */

/* atanh(x) = |x| > 1 ? nan : (log1p(x) - log1p(-x)) * 0.5 */
static const char *atanh_real(ShEx *e, const char *x) {
  const char *big = shx_cmp(e, "GT", shx_1(e, "abs", x), shx_k(e, 1));
  const char *v = shx_2(e, "multiply",
                        shx_2(e, "subtract", shx_1(e, "log-plus-one", x), shx_1(e, "log-plus-one", shx_1(e, "negate", x))),
                        shx_k(e, 0.5));
  return shx_sel(e, big, shx_k(e, NAN), v);
}

/* asin(x) = 2 * atan2(x, 1 + sqrt((1 - x) * (1 + x))), written ta + ta */
static const char *asin_real(ShEx *e, const char *x) {
  const char *one = shx_k(e, 1);
  const char *s = shx_1(e, "sqrt", shx_2(e, "multiply", shx_2(e, "subtract", one, x), shx_2(e, "add", one, x)));
  const char *ta = shx_2(e, "atan2", x, shx_2(e, "add", one, s));
  return shx_2(e, "add", ta, ta);
}

/* acos(x) = atan2(sqrt((1 - x) * (1 + x)), x) */
static const char *acos_real(ShEx *e, const char *x) {
  const char *one = shx_k(e, 1);
  const char *s = shx_1(e, "sqrt", shx_2(e, "multiply", shx_2(e, "subtract", one, x), shx_2(e, "add", one, x)));
  return shx_2(e, "atan2", s, x);
}

/* acosh(x) = x >= max/2 ? log(2) + log(x)
 *                       : log1p(sqrt(x - 1) * (sqrt(x + 1) + sqrt(x - 1))) */
static const char *acosh_real(ShEx *e, const char *x) {
  const char *two = shx_k(e, 2), *one = shx_k(e, 1);
  const char *big = shx_cmp(e, "GE", x, shx_2(e, "divide", shx_k(e, shx_max_finite(e->t->dt)), two));
  const char *lg = shx_2(e, "add", shx_1(e, "log", two), shx_1(e, "log", x));
  const char *sm = shx_1(e, "sqrt", shx_2(e, "subtract", x, one));
  const char *v = shx_1(e, "log-plus-one",
                        shx_2(e, "multiply", sm, shx_2(e, "add", shx_1(e, "sqrt", shx_2(e, "add", x, one)), sm)));
  return shx_sel(e, big, lg, v);
}

/* asinh(x) = sign(x) * (|x| >= sqrt(max) ? log(2) + log|x|
 *                                        : log1p(|x| + x^2 / (1 + sqrt(1 + x^2)))) */
static const char *asinh_real(ShEx *e, const char *x) {
  const char *ax = shx_1(e, "abs", x);
  const char *big = shx_cmp(e, "GE", ax, shx_1(e, "sqrt", shx_k(e, shx_max_finite(e->t->dt))));
  const char *lg = shx_2(e, "add", shx_1(e, "log", shx_k(e, 2)), shx_1(e, "log", ax));
  const char *ax2 = shx_2(e, "multiply", ax, ax);
  const char *one = shx_k(e, 1);
  const char *v = shx_1(e, "log-plus-one",
                        shx_2(e, "add", ax, shx_2(e, "divide", ax2, shx_2(e, "add", one, shx_1(e, "sqrt", shx_2(e, "add", one, ax2))))));
  return shx_2(e, "multiply", shx_1(e, "sign", x), shx_sel(e, big, lg, v));
}

/* ---- Hyperbolic functions ------------------------------------------------------------ */

/* exp(x + log(0.5)) +/- exp(log(0.5) - x): no overflow before the result does */
static const char *cosh_sinh_large(ShEx *e, const char *x, const char *combine) {
  const char *lh = shx_1(e, "log", shx_k(e, 0.5));
  const char *a = shx_1(e, "exponential", shx_2(e, "add", x, lh));
  const char *b = shx_1(e, "exponential", shx_2(e, "subtract", lh, x));
  return shx_2(e, combine, a, b);
}

/* |x| < 1: (expm1(x) + expm1(x) / (expm1(x) + 1)) / 2, which keeps small x exact */
static const char *sinh_real(ShEx *e, const char *x) {
  const char *large = cosh_sinh_large(e, x, "subtract");
  const char *em1 = shx_1(e, "exponential-minus-one", x);
  const char *one = shx_k(e, 1), *half = shx_k(e, 0.5);
  const char *ratio = shx_2(e, "divide", em1, shx_2(e, "add", em1, one));
  const char *small = shx_2(e, "multiply", half, shx_2(e, "add", em1, ratio));
  return shx_sel(e, shx_cmp(e, "LT", shx_1(e, "abs", x), one), small, large);
}

/* ---- nextafter on the bit patterns ------------------------------------------------------ */

static const char *next_after(ShEx *e, const char *x, const char *y) {
  HloDtype ft = e->t->dt;
  int bits = hlc_dtype_bits(ft);
  HloDtype it = bits == 16 ? HLO_S16 : bits == 32 ? HLO_S32 : HLO_S64;
  ShEx ie = {e->C, shx_like(e->C, e->t, it)};
  const char *xi = shx_to(e, "bitcast-convert", x, it), *yi = shx_to(e, "bitcast-convert", y, it);
  const char *nan_in = sh_emit(e->C, shx_like(e->C, e->t, HLO_PRED), "or", sh_fmt(e->C, "%s, %s", shx_cmp(e, "NE", x, x), shx_cmp(e, "NE", y, y)),
                   NULL, NULL);
  const char *nan_i = shx_to(e, "bitcast-convert", shx_k(e, NAN), it);
  long long sign = (long long)(~0ULL << (bits - 1));   /* the sign bit, as a signed value */
  const char *sign_mask = shx_ki(&ie, sign), *abs_mask = shx_ki(&ie, ~sign);
  const char *xa = shx_2(&ie, "and", xi, abs_mask), *ya = shx_2(&ie, "and", yi, abs_mask);
  const char *equal = shx_cmp(e, "EQ", x, y);
  const char *zero = shx_ki(&ie, 0);
  const char *x0 = shx_cmp(&ie, "EQ", xa, zero), *y0 = shx_cmp(&ie, "EQ", ya, zero);
  const char *xs = shx_2(&ie, "and", xi, sign_mask), *ys = shx_2(&ie, "and", yi, sign_mask);
  const char *one = shx_ki(&ie, 1);
  const char *tiny = shx_2(&ie, "or", ys, one);   /* x == 0, y != 0: the smallest subnormal toward y */
  ShType *pt = shx_like(e->C, e->t, HLO_PRED);
  const char *smaller = sh_emit(e->C, pt, "or", sh_fmt(e->C, "%s, %s", shx_cmp(&ie, "GT", xa, ya), shx_cmp(&ie, "NE", xs, ys)),
                                NULL, NULL);
  const char *r = shx_2(&ie, "add", xi, shx_sel(&ie, smaller, shx_ki(&ie, -1), one));
  r = shx_sel(&ie, x0, shx_sel(&ie, y0, yi, tiny), r);
  r = shx_sel(&ie, equal, yi, r);
  r = shx_sel(&ie, nan_in, nan_i, r);
  return shx_to(&ie, "bitcast-convert", r, ft);
}

/* ---- mulhi: the high half of the double-width product --------------------------------- */

/* (ChloDecompositionPatterns.td) N < 64 bits: the product in 2N bits shifted
 * right by N (arithmetic if signed); u64 from 32-bit halves; s64 as u64 less
 * the two's complement corrections (a < 0: b, b < 0: a). */
static const char *mulhi(ShEx *e, const char *a, const char *b) {
  HloDtype dt = e->t->dt;
  int n = hlc_dtype_bits(dt);
  bool sgn = hlc_dtype_kind(dt) == HLO_KIND_SINT;
  if (n < 64) {
    const char *wn = sh_fmt(e->C, "%c%d", sgn ? 's' : 'u', 2 * n);
    HloDtype wt = hlc_dtype_from_name(wn, strlen(wn));
    if (wt == HLO_DTYPE_INVALID) return NULL;
    ShEx w = {e->C, shx_like(e->C, e->t, wt)};
    const char *p = shx_2(&w, "multiply", shx_to(e, "convert", a, w.t->dt), shx_to(e, "convert", b, w.t->dt));
    p = shx_2(&w, sgn ? "shift-right-arithmetic" : "shift-right-logical", p, shx_ki(&w, n));
    return shx_to(&w, "convert", p, dt);
  }
  if (sgn) {
    ShEx u = {e->C, shx_like(e->C, e->t, HLO_U64)};
    const char *ua = shx_to(e, "convert", a, HLO_U64), *ub = shx_to(e, "convert", b, HLO_U64);
    const char *zero = shx_ki(e, 0), *uzero = shx_ki(&u, 0);
    const char *hi = mulhi(&u, ua, ub);
    hi = shx_2(&u, "subtract", hi, shx_sel(&u, shx_cmp(e, "LT", a, zero), ub, uzero));
    hi = shx_2(&u, "subtract", hi, shx_sel(&u, shx_cmp(e, "LT", b, zero), ua, uzero));
    return shx_to(&u, "convert", hi, dt);
  }
  const char *k32 = shx_ki(e, 32), *lo_mask = shx_ki(e, 0xFFFFFFFFLL);
  const char *a_hi = shx_2(e, "shift-right-logical", a, k32), *b_hi = shx_2(e, "shift-right-logical", b, k32);
  const char *a_lo = shx_2(e, "and", a, lo_mask), *b_lo = shx_2(e, "and", b, lo_mask);
  const char *p3 = shx_2(e, "multiply", a_hi, b_hi);
  const char *mid1 = shx_2(e, "add", shx_2(e, "multiply", a_lo, b_hi),
                           shx_2(e, "shift-right-logical", shx_2(e, "multiply", a_lo, b_lo), k32));
  const char *mid2 = shx_2(e, "add", shx_2(e, "multiply", a_hi, b_lo), shx_2(e, "and", mid1, lo_mask));
  return shx_2(e, "add", shx_2(e, "add", p3, shx_2(e, "shift-right-logical", mid1, k32)),
               shx_2(e, "shift-right-logical", mid2, k32));
}

static int chlo_mulhi(Lower *C, ShOp *op) {
  sh_need_operands(C, op, 2);
  if (op->nresults != 1) sh_fail(C, op->node, "%.*s: expected one result", (int)op->nlen, op->name);
  const ShType *t = op->operands[0]->type;
  if (t->kind != SHT_TENSOR || !hlc_dtype_is_int(t->dt) || !sh_type_eq(op->operands[1]->type, t))
    sh_fail(C, op->node, "%.*s: operands must be integer arrays of one type", (int)op->nlen, op->name);
  ShEx e = {C, t};
  const char *r = mulhi(&e, op->operands[0]->hlo, op->operands[1]->hlo);
  if (!r) sh_fail(C, op->node, "%.*s: element type %s is not supported", (int)op->nlen, op->name, hlc_dtype_name(t->dt));
  sh_bind_result(C, op, 0, r, op->results[0]);
  return 0;
}

/* ---- The table ----------------------------------------------------------------------- */

static bool named(const ShOp *op, const char *w) { return strlen(w) == op->nlen - 5 && memcmp(op->name + 5, w, op->nlen - 5) == 0; }

/* XLA computes these in f32 at least (materializeWithUpcast). */
static bool upcast_op(const char *w) {
  static const char *const up[] = {"erf", "erfc", "erf_inv", "lgamma", "digamma", "bessel_i1e", "cosh", "sinh", NULL};
  for (int i = 0; up[i]; i++)
    if (strcmp(w, up[i]) == 0) return true;
  return false;
}

static const char *unary(ShEx *e, ShOp *op, const char *w, const char *x) {
  bool cx = hlc_dtype_is_complex(e->t->dt);
  if (strcmp(w, "tan") == 0) return shx_1(e, "tan", x);
  if (cx && strcmp(w, "cosh") == 0) return cosh_sinh_large(e, x, "add");
  if (cx && strcmp(w, "sinh") == 0) return cosh_sinh_large(e, x, "subtract");
  const char *inv = cx ? sh_chlo_complex(e, w, x) : NULL;
  if (inv) return inv;
  if (cx) sh_fail(e->C, op->node, "%.*s of complex element type %s is not supported", (int)op->nlen, op->name,
                  hlc_dtype_name(e->t->dt));
  if (strcmp(w, "atan") == 0) return shx_2(e, "atan2", x, shx_k(e, 1));
  if (strcmp(w, "atanh") == 0) return atanh_real(e, x);
  if (strcmp(w, "asin") == 0) return asin_real(e, x);
  if (strcmp(w, "acos") == 0) return acos_real(e, x);
  if (strcmp(w, "acosh") == 0) return acosh_real(e, x);
  if (strcmp(w, "asinh") == 0) return asinh_real(e, x);
  if (strcmp(w, "cosh") == 0) return cosh_sinh_large(e, x, "add");
  if (strcmp(w, "sinh") == 0) return sinh_real(e, x);
  if (strcmp(w, "is_inf") == 0) return shx_cmp(e, "EQ", shx_1(e, "abs", x), shx_k(e, INFINITY));
  if (strcmp(w, "is_pos_inf") == 0) return shx_cmp(e, "EQ", x, shx_k(e, INFINITY));
  if (strcmp(w, "is_neg_inf") == 0) return shx_cmp(e, "EQ", x, shx_k(e, -INFINITY));
  return sh_chlo_special(e, w, x);
}

/* chlo.ragged_dot: XLA's ragged-dot, its dimension numbers as written
 * (#chlo.ragged_dot<lhs_batching_dimensions = [...], ...>). */
static int chlo_ragged_dot(Lower *C, ShOp *op) {
  sh_need_operands(C, op, 3);
  ShAttr *dn = sh_attr(op, "ragged_dot_dimension_numbers");
  if (!dn) sh_fail(C, op->node, "chlo.ragged_dot: missing ragged_dot_dimension_numbers");
  static const char *const fields[][2] = {
    {"lhs_batching_dimensions", "lhs_batch_dims"}, {"lhs_contracting_dimensions", "lhs_contracting_dims"},
    {"rhs_batching_dimensions", "rhs_batch_dims"}, {"rhs_contracting_dimensions", "rhs_contracting_dims"},
    {"lhs_ragged_dimensions", "lhs_ragged_dims"}, {"rhs_group_dimensions", "rhs_group_dims"}};
  HlcText b = {0};
  for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
    int64_t v[SH_MAX_RANK];
    int n = sh_struct_ints(C, dn, fields[i][0], v, SH_MAX_RANK);
    if (n < 0) n = 0;
    if (n || strstr(fields[i][1], "contracting") || strstr(fields[i][1], "ragged"))
      hlc_text_printf(&b, ", %s=%s", fields[i][1], sh_ints_text(C, v, n));
  }
  if (b.oom) sh_fail_off(C, 0, "out of memory");
  sh_simple(C, op, "ragged-dot", b.p ? sh_strdup(C, b.p, b.n) : "");
  hlc_text_free(&b);
  return 0;
}

int sh_lower_chlo_op(Lower *C, ShOp *op) {
  static const char *const ops[] = {"tan", "atan", "atanh", "asin", "acos", "acosh", "asinh", "cosh", "sinh",
                                    "is_inf", "is_pos_inf", "is_neg_inf", "erf", "erfc", "erf_inv", "lgamma",
                                    "digamma", "bessel_i1e", "next_after", NULL};
  const char *w = NULL;
  for (int i = 0; ops[i] && !w; i++)
    if (named(op, ops[i])) w = ops[i];
  if (!w) return named(op, "mulhi") ? chlo_mulhi(C, op) : named(op, "ragged_dot") ? chlo_ragged_dot(C, op) : -1;
  bool binary = strcmp(w, "next_after") == 0;
  sh_need_operands(C, op, binary ? 2 : 1);
  if (op->nresults != 1) sh_fail(C, op->node, "%.*s: expected one result", (int)op->nlen, op->name);
  const ShType *t = op->operands[0]->type;
  HloDtype dt = t->kind == SHT_TENSOR ? t->dt : HLO_DTYPE_INVALID;
  bool cx_ok = strcmp(w, "tan") == 0 || strcmp(w, "cosh") == 0 || strcmp(w, "sinh") == 0 || !upcast_op(w);
  if (dt == HLO_DTYPE_INVALID || !(hlc_dtype_is_float(dt) || (cx_ok && hlc_dtype_is_complex(dt) && !binary)))
    sh_fail(C, op->node, "%.*s: element type %s is not supported (a float type is needed)", (int)op->nlen, op->name,
            dt == HLO_DTYPE_INVALID ? "of a non-array" : hlc_dtype_name(dt));
  if (binary && (!sh_type_eq(op->operands[1]->type, t) || (dt != HLO_F16 && dt != HLO_BF16 && dt != HLO_F32 && dt != HLO_F64)))
    sh_fail(C, op->node, "%.*s: operands must be f16, bf16, f32 or f64 arrays of one type", (int)op->nlen, op->name);
  ShEx e = {C, t};
  const char *x = op->operands[0]->hlo, *r;
  if (binary) {
    r = next_after(&e, x, op->operands[1]->hlo);
  } else if (upcast_op(w) && hlc_dtype_is_float(dt) && hlc_dtype_bits(dt) < 32) {
    ShEx e32 = {C, shx_like(C, t, HLO_F32)};
    r = unary(&e32, op, w, shx_to(&e, "convert", x, HLO_F32));
    r = shx_to(&e32, "convert", r, dt);
  } else {
    r = unary(&e, op, w, x);
  }
  if (!r) sh_fail(C, op->node, "%.*s: element type %s is not supported", (int)op->nlen, op->name, hlc_dtype_name(dt));
  sh_bind_result(C, op, 0, r, op->results[0]);
  return 0;
}
