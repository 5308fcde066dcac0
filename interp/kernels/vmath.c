/* vmath.c: transcendental loops over f32 / f64 arrays, written once against
 * simd.h and compiled once per ISA (see elementwise.mk): each build exports
 * one HlkVmath table named after its ISA. The scalar build (no HLK_BUILD_*)
 * calls libm per element and is the reference the others are tested against.
 * Vector builds run whole vectors through SLEEF and finish the tail with one
 * zero-padded vector, so every element of an array gets the same function.
 * f32 exp, expm1, tanh, log, log1p and logistic are XLA's own algorithms in
 * every build (xla_math.h), with the same bits everywhere.
 * Not here: choosing a table (dispatch.c) or anything that is not a math
 * function of the elements. */
#include <math.h>
#include <string.h>
#include "interp/kernels/elementwise.h"
#include "interp/kernels/simd.h"
#include "interp/kernels/xla_math.h"

/* XLA's f32 functions (xla_math.h) element by element: the scalar table's,
 * and SSE4's, whose lack of FMA would make each fused step several vector
 * instructions. Every table names them vm_NAME_xla_f32 (see the table). */
#define XLA_ELEMENT_LOOP(name)                                                 \
  static void vm_##name##_xla_f32(const float *a, float *o, int64_t n) {     \
    for (int64_t i = 0; i < n; i++) o[i] = xla_##name##f(a[i]);              \
  }
#define XLA_ELEMENT_LOOPS                                                      \
  XLA_ELEMENT_LOOP(exp) XLA_ELEMENT_LOOP(expm1) XLA_ELEMENT_LOOP(tanh)         \
  XLA_ELEMENT_LOOP(log) XLA_ELEMENT_LOOP(log1p) XLA_ELEMENT_LOOP(logistic)

#ifdef HLK_ISA_SCALAR_BUILD

#define UNARY(id, name, acc)                                                  \
  __attribute__((unused))                                                     \
  static void vm_##name##_f32(const float *a, float *o, int64_t n) {          \
    for (int64_t i = 0; i < n; i++) o[i] = name##f(a[i]);                     \
  }                                                                           \
  static void vm_##name##_f64(const double *a, double *o, int64_t n) {        \
    for (int64_t i = 0; i < n; i++) o[i] = name(a[i]);                        \
  }
#define BINARY(id, name, acc)                                                 \
  static void vm_##name##_f32(const float *a, const float *b, float *o, int64_t n) { \
    for (int64_t i = 0; i < n; i++) o[i] = name##f(a[i], b[i]);               \
  }                                                                           \
  static void vm_##name##_f64(const double *a, const double *b, double *o, int64_t n) { \
    for (int64_t i = 0; i < n; i++) o[i] = name(a[i], b[i]);                  \
  }
HLK_VM_UNARY(UNARY)
HLK_VM_BINARY(BINARY)

XLA_ELEMENT_LOOPS
static void vm_logistic_f64(const double *a, double *o, int64_t n) {
  for (int64_t i = 0; i < n; i++) o[i] = 1.0 / (1.0 + exp(-a[i]));
}
static void vm_rsqrt_f32(const float *a, float *o, int64_t n) {
  for (int64_t i = 0; i < n; i++) o[i] = 1.0f / sqrtf(a[i]);
}
static void vm_rsqrt_f64(const double *a, double *o, int64_t n) {
  for (int64_t i = 0; i < n; i++) o[i] = 1.0 / sqrt(a[i]);
}

#else

/* Body of a unary loop: full vectors, then one padded vector for the tail. */
#define VLOOP1(T, VL, ld, st, EXPR)                                           \
  int64_t i = 0;                                                              \
  for (; i + VL <= n; i += VL) { st(o + i, EXPR(ld(a + i))); }                \
  if (i < n) {                                                                \
    T ta[VL], to[VL];                                                         \
    memset(ta, 0, sizeof ta);                                                 \
    memcpy(ta, a + i, (size_t)(n - i) * sizeof(T));                           \
    st(to, EXPR(ld(ta)));                                                     \
    memcpy(o + i, to, (size_t)(n - i) * sizeof(T));                           \
  }
#define VLOOP2(T, VL, ld, st, FN)                                             \
  int64_t i = 0;                                                              \
  for (; i + VL <= n; i += VL) { st(o + i, FN(ld(a + i), ld(b + i))); }       \
  if (i < n) {                                                                \
    T ta[VL], tb[VL], to[VL];                                                 \
    memset(ta, 0, sizeof ta);                                                 \
    memset(tb, 0, sizeof tb);                                                 \
    memcpy(ta, a + i, (size_t)(n - i) * sizeof(T));                           \
    memcpy(tb, b + i, (size_t)(n - i) * sizeof(T));                           \
    st(to, FN(ld(ta), ld(tb)));                                               \
    memcpy(o + i, to, (size_t)(n - i) * sizeof(T));                           \
  }

/* (unused: an f32 loop may be replaced by one of ours below, as tanh is) */
#define UNARY(id, name, acc)                                                  \
  __attribute__((unused))                                                     \
  static void vm_##name##_f32(const float *a, float *o, int64_t n) {          \
    VLOOP1(float, HLK_VLF, hlk_ldf, hlk_stf, HLK_SLEEF_F(name, acc))          \
  }                                                                           \
  static void vm_##name##_f64(const double *a, double *o, int64_t n) {        \
    VLOOP1(double, HLK_VLD, hlk_ldd, hlk_std, HLK_SLEEF_D(name, acc))         \
  }
#define BINARY(id, name, acc)                                                 \
  static void vm_##name##_f32(const float *a, const float *b, float *o, int64_t n) { \
    VLOOP2(float, HLK_VLF, hlk_ldf, hlk_stf, HLK_SLEEF_F(name, acc))          \
  }                                                                           \
  static void vm_##name##_f64(const double *a, const double *b, double *o, int64_t n) { \
    VLOOP2(double, HLK_VLD, hlk_ldd, hlk_std, HLK_SLEEF_D(name, acc))         \
  }
HLK_VM_UNARY(UNARY)
HLK_VM_BINARY(BINARY)

/* SLEEF's asinh and acosh are only specified up to |x| ~ 1.8e19 (f32) and
 * 1.3e154 (f64) and return inf beyond; there asinh(x) = sign(x) (log|x| +
 * log 2) and acosh(x) = log x + log 2 hold to the last bit, so those lanes
 * are patched after the vector pass. */
#define LN2 0.69314718055994530942
static void vm_asinh_big_f32(const float *a, float *o, int64_t n) {
  vm_asinh_f32(a, o, n);
  for (int64_t i = 0; i < n; i++)
    if (fabsf(a[i]) > 1e18f && !isinf(a[i])) o[i] = copysignf(logf(fabsf(a[i])) + (float)LN2, a[i]);
}
static void vm_acosh_big_f32(const float *a, float *o, int64_t n) {
  vm_acosh_f32(a, o, n);
  for (int64_t i = 0; i < n; i++)
    if (a[i] > 1e18f && !isinf(a[i])) o[i] = logf(a[i]) + (float)LN2;
}
static void vm_asinh_big_f64(const double *a, double *o, int64_t n) {
  vm_asinh_f64(a, o, n);
  for (int64_t i = 0; i < n; i++)
    if (fabs(a[i]) > 1e150 && !isinf(a[i])) o[i] = copysign(log(fabs(a[i])) + LN2, a[i]);
}
static void vm_acosh_big_f64(const double *a, double *o, int64_t n) {
  vm_acosh_f64(a, o, n);
  for (int64_t i = 0; i < n; i++)
    if (a[i] > 1e150 && !isinf(a[i])) o[i] = log(a[i]) + LN2;
}
#define vm_asinh_f32 vm_asinh_big_f32
#define vm_acosh_f32 vm_acosh_big_f32
#define vm_asinh_f64 vm_asinh_big_f64
#define vm_acosh_f64 vm_acosh_big_f64

#ifndef HLK_NO_FMA
/* XLA:CPU's f32 exp, expm1, tanh, log and log1p (xla_math.h), a vector at
 * a time with the same fused operations in the same order, so every lane
 * gives the scalar reference's bits. The clamps take x as the second operand of min / max,
 * which return it when it is NaN. */
/* xla_hornerf a vector at a time (unrolled, so the coefficients become
 * constants the loop keeps in registers; rolled, AVX2 exp was 12% slower). */
static inline HlkVF horner_vf(const float *c, int n, HlkVF x) {
  HlkVF p = hlk_set1f(c[0]);
#pragma GCC unroll 8
  for (int k = 1; k < n; k++) p = hlk_fmaf(p, x, hlk_set1f(c[k]));
  return p;
}

static inline HlkVF exp_vf(HlkVF x) {
  HlkVF y = hlk_minf(hlk_set1f(XLA_EXP_HI), hlk_maxf(hlk_set1f(XLA_EXP_LO), x));
  /* n >= floor(-87.8 log2(e) + 1/2) = -127 already: only the top clamps */
  HlkVF n = hlk_floorf(hlk_fmaf(y, hlk_set1f(XLA_EXP_LOG2E), hlk_set1f(0.5f)));
  n = hlk_minf(hlk_set1f(127.0f), n);
  HlkVF r = hlk_fnmaf(n, hlk_set1f(XLA_EXP_C1), y);
  r = hlk_fnmaf(n, hlk_set1f(XLA_EXP_C2), r);
  HlkVF z = hlk_fmaf(horner_vf(xla_exp_p, 6, r), hlk_mulf(r, r), r);
  z = hlk_addf(hlk_set1f(1.0f), z);
  return hlk_mulf(z, hlk_pow2f(n));   /* NaN lanes: z is NaN already */
}
static void vm_exp_xla_f32(const float *a, float *o, int64_t n) {
  VLOOP1(float, HLK_VLF, hlk_ldf, hlk_stf, exp_vf)
}

static inline HlkVF tanh_vf(HlkVF x) {
  HlkVF k = hlk_set1f(XLA_TANH_CLAMP);
  HlkVF c = hlk_minf(k, hlk_maxf(hlk_subf(hlk_set1f(0.0f), k), x));
  HlkVF s = hlk_mulf(c, c);
  HlkVF p = horner_vf(xla_tanh_num, 7, s), q = horner_vf(xla_tanh_den, 4, s);
  HlkVF t = hlk_divf(hlk_mulf(c, p), q);
  /* |x| < TINY (or NaN): x itself */
  return hlk_selltf(hlk_absf(x), hlk_set1f(XLA_TANH_TINY), x, t);
}
static void vm_tanh_xla_f32(const float *a, float *o, int64_t n) {
  VLOOP1(float, HLK_VLF, hlk_ldf, hlk_stf, tanh_vf)
}

static inline HlkVF expm1_vf(HlkVF x) {
  HlkVF one = hlk_set1f(1.0f), half = hlk_set1f(0.5f);
  HlkVF h = hlk_mulf(x, half), e = exp_vf(x);
  HlkVF r = hlk_mulf(tanh_vf(h), hlk_addf(e, one));
  r = hlk_selltf(half, hlk_absf(x), hlk_subf(e, one), r);      /* |x| > 1/2 */
  return hlk_selltf(hlk_absf(h), hlk_set1f(0x1p-149f), x, r);   /* x/2 == 0 */
}
static void vm_expm1_xla_f32(const float *a, float *o, int64_t n) {
  VLOOP1(float, HLK_VLF, hlk_ldf, hlk_stf, expm1_vf)
}

static inline HlkVF log_vf(HlkVF x) {
  HlkVF one = hlk_set1f(1.0f), zero = hlk_set1f(0.0f);
  HlkVF t = hlk_maxf(hlk_set1f(0x1p-126f), x);   /* subnormals as the smallest normal */
  HlkVF e = hlk_addf(one, hlk_expof(t));
  t = hlk_mantf(t);
  HlkVF lo = hlk_set1f(XLA_LOG_SQRTHF);
  HlkVF t1 = hlk_selltf(t, lo, t, zero);
  e = hlk_subf(e, hlk_selltf(t, lo, one, zero));
  t = hlk_addf(hlk_subf(t, one), t1);
  HlkVF x2 = hlk_mulf(t, t), x3 = hlk_mulf(x2, t);
  HlkVF y = hlk_fmaf(t, hlk_set1f(XLA_LOG_P0), hlk_set1f(XLA_LOG_P1));
  HlkVF y1 = hlk_fmaf(t, hlk_set1f(XLA_LOG_P3), hlk_set1f(XLA_LOG_P4));
  HlkVF y2 = hlk_fmaf(t, hlk_set1f(XLA_LOG_P6), hlk_set1f(XLA_LOG_P7));
  y = hlk_fmaf(y, t, hlk_set1f(XLA_LOG_P2));
  y1 = hlk_fmaf(y1, t, hlk_set1f(XLA_LOG_P5));
  y2 = hlk_fmaf(y2, t, hlk_set1f(XLA_LOG_P8));
  y = hlk_fmaf(y, x3, y1);
  y = hlk_fmaf(y, x3, y2);
  y = hlk_fmaf(y, x3, hlk_mulf(hlk_set1f(XLA_LOG_Q1), e));
  t = hlk_subf(t, hlk_mulf(hlk_set1f(0.5f), x2));
  t = hlk_addf(t, y);
  HlkVF r = hlk_addf(t, hlk_mulf(hlk_set1f(XLA_LOG_Q2), e));
  /* x <= 0: -inf, then x < 0 or NaN: NaN, then +inf: +inf */
  HlkVF inf = hlk_set1f(INFINITY);
  r = hlk_selltf(x, hlk_set1f(0x1p-149f), hlk_subf(zero, inf), r);
  r = hlk_selltf(x, zero, hlk_set1f(NAN), r);
  return hlk_selltf(x, inf, r, inf);
}
static void vm_log_xla_f32(const float *a, float *o, int64_t n) {
  VLOOP1(float, HLK_VLF, hlk_ldf, hlk_stf, log_vf)
}

static inline HlkVF log1p_vf(HlkVF x) {
  HlkVF x2 = hlk_mulf(x, x);
  HlkVF p = horner_vf(xla_log1p_num, 7, x), q = horner_vf(xla_log1p_den, 7, x);
  HlkVF small = hlk_fmaf(hlk_mulf(x, x2), hlk_divf(p, q), hlk_mulf(hlk_set1f(-0.5f), x2));
  small = hlk_addf(x, small);
  HlkVF big = log_vf(hlk_addf(x, hlk_set1f(1.0f)));
  return hlk_selltf(hlk_absf(x), hlk_set1f(XLA_LOG1P_SMALL), small, big);
}
static void vm_log1p_xla_f32(const float *a, float *o, int64_t n) {
  VLOOP1(float, HLK_VLF, hlk_ldf, hlk_stf, log1p_vf)
}

static inline HlkVF logistic_vf(HlkVF x) {
  HlkVF one = hlk_set1f(1.0f);
  HlkVF e = exp_vf(hlk_subf(hlk_set1f(0.0f), x));
  return hlk_divf(one, hlk_addf(one, e));
}
static void vm_logistic_xla_f32(const float *a, float *o, int64_t n) {
  VLOOP1(float, HLK_VLF, hlk_ldf, hlk_stf, logistic_vf)
}

#else
XLA_ELEMENT_LOOPS
#endif
static inline HlkVD logistic_vd(HlkVD x) {
  HlkVD one = hlk_set1d(1.0);
  HlkVD e = HLK_SLEEF_D(exp, u10)(hlk_subd(hlk_set1d(0.0), x));
  return hlk_divd(one, hlk_addd(one, e));
}
static inline HlkVF rsqrt_vf(HlkVF x) { return hlk_divf(hlk_set1f(1.0f), HLK_SLEEF_F(sqrt, u05)(x)); }
static inline HlkVD rsqrt_vd(HlkVD x) { return hlk_divd(hlk_set1d(1.0), HLK_SLEEF_D(sqrt, u05)(x)); }

static void vm_logistic_f64(const double *a, double *o, int64_t n) {
  VLOOP1(double, HLK_VLD, hlk_ldd, hlk_std, logistic_vd)
}
static void vm_rsqrt_f32(const float *a, float *o, int64_t n) {
  VLOOP1(float, HLK_VLF, hlk_ldf, hlk_stf, rsqrt_vf)
}
static void vm_rsqrt_f64(const double *a, double *o, int64_t n) {
  VLOOP1(double, HLK_VLD, hlk_ldd, hlk_std, rsqrt_vd)
}
#endif

/* f32 exp, expm1, tanh, log, log1p, logistic: XLA's, in every table */
#define vm_exp_f32 vm_exp_xla_f32
#define vm_expm1_f32 vm_expm1_xla_f32
#define vm_tanh_f32 vm_tanh_xla_f32
#define vm_log_f32 vm_log_xla_f32
#define vm_log1p_f32 vm_log1p_xla_f32
#define vm_logistic_f32 vm_logistic_xla_f32

extern const HlkVmath HLK_VMATH_TABLE;
const HlkVmath HLK_VMATH_TABLE = {
  .name = HLK_VMATH_NAME,
  .uf = {
#define X(id, name, acc) [HLK_VM_##id] = vm_##name##_f32,
    HLK_VM_UNARY(X)
#undef X
    [HLK_VM_LOGISTIC] = vm_logistic_f32, [HLK_VM_RSQRT] = vm_rsqrt_f32,
  },
  .ud = {
#define X(id, name, acc) [HLK_VM_##id] = vm_##name##_f64,
    HLK_VM_UNARY(X)
#undef X
    [HLK_VM_LOGISTIC] = vm_logistic_f64, [HLK_VM_RSQRT] = vm_rsqrt_f64,
  },
  .bf = {
#define X(id, name, acc) [HLK_VM_##id] = vm_##name##_f32,
    HLK_VM_BINARY(X)
#undef X
  },
  .bd = {
#define X(id, name, acc) [HLK_VM_##id] = vm_##name##_f64,
    HLK_VM_BINARY(X)
#undef X
  },
};
