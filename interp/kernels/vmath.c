/* vmath.c: transcendental loops over f32 / f64 arrays, written once against
 * simd.h and compiled once per ISA (see elementwise.mk): each build exports
 * one HlkVmath table named after its ISA. The scalar build (no HLK_BUILD_*)
 * calls libm per element and is the reference the others are tested against.
 * Vector builds run whole vectors through SLEEF and finish the tail with one
 * zero-padded vector, so every element of an array gets the same function.
 * Not here: choosing a table (dispatch.c) or anything that is not a math
 * function of the elements. */
#include <math.h>
#include <string.h>
#include "interp/kernels/elementwise.h"
#include "interp/kernels/simd.h"

#ifdef HLK_ISA_SCALAR_BUILD

#define UNARY(id, name, acc)                                                  \
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

static void vm_logistic_f32(const float *a, float *o, int64_t n) {
  for (int64_t i = 0; i < n; i++) o[i] = 1.0f / (1.0f + expf(-a[i]));
}
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
/* f32 exp, inline (a call to SLEEF costs the spills around it, and SLEEF's
 * takes 0.16 ns per element in L1 on AVX-512): x = n ln2 + r, |r| <=
 * ln2/2 (ln2 in two parts, so r is exact for |n| <= 150), exp(r) by its
 * Taylor polynomial of degree 7 (truncation 5e-9, 0.09 ULP), times 2^n
 * rounded once, subnormal results included. x is first clamped to
 * [-104, 89], beyond which exp is 0 or inf anyway (NaN passes the clamps:
 * min and max return their second operand for it). Measured over every f32
 * (tools/vmath_ulp.c): at most 0.94 ULP from the exact value, like SLEEF's
 * u10, at 0.11 ns per element in L1 on AVX-512. logistic uses it too. */
static inline HlkVF exp_vf(HlkVF x) {
  HlkVF y = hlk_minf(hlk_set1f(89.0f), hlk_maxf(hlk_set1f(-104.0f), x));
  HlkVF n = hlk_roundf(hlk_mulf(y, hlk_set1f(0x1.715476p+0f)));   /* log2(e) */
  HlkVF r = hlk_fnmaf(n, hlk_set1f(0x1.62e4p-1f), y);                /* ln2, high bits */
  r = hlk_fnmaf(n, hlk_set1f(0x1.7f7d1cp-20f), r);                   /* ln2 - high */
  HlkVF p = hlk_set1f(1.0f / 5040);
  p = hlk_fmaf(p, r, hlk_set1f(1.0f / 720));
  p = hlk_fmaf(p, r, hlk_set1f(1.0f / 120));
  p = hlk_fmaf(p, r, hlk_set1f(1.0f / 24));
  p = hlk_fmaf(p, r, hlk_set1f(1.0f / 6));
  p = hlk_fmaf(p, r, hlk_set1f(0.5f));
  p = hlk_fmaf(p, r, hlk_set1f(1.0f));
  p = hlk_fmaf(p, r, hlk_set1f(1.0f));
  return hlk_ldexpf(p, n);
}
static void vm_exp_fast_f32(const float *a, float *o, int64_t n) {
  VLOOP1(float, HLK_VLF, hlk_ldf, hlk_stf, exp_vf)
}
#define vm_exp_f32 vm_exp_fast_f32

/* exp(-2a) for tanh (a >= 0; above 9.1, 1 - 2 exp(-2a) rounds to 1). */
static inline HlkVF exp_m2a_vf(HlkVF a) {
  return exp_vf(hlk_mulf(hlk_minf(hlk_set1f(9.1f), a), hlk_set1f(-2.0f)));
}

/* f32 tanh without SLEEF's double-float arithmetic, which made it five
 * times slower than exp (17.6 ms against 3.4 ms per 16M elements on one
 * AVX-512 core; 0.38 ns per element in L1 now).
 * With a = |x|:
 *   a < 1: a + a t P(t), t = a^2, P of degree 7 (weighted least squares
 *          on Chebyshev nodes, tools/fit_tanh.py; 0.008 ULP of fit error);
 *          the correction is at most 0.24 of the result, so its rounding
 *          errors shrink by that much;
 *   a >= 1: 1 - r, r = 2q/(1+q) < 0.25, q = exp(-2a) (exp_vf); r's own error is
 *          under a quarter of an ULP of the result.
 * The sign comes back from x: tanh(-0) = -0, tanh(+-inf) = +-1, NaN stays.
 * Measured over every f32 (tools/vmath_ulp.c): at most 0.89 ULP from the
 * exact value (SLEEF's u10 promised 1; glibc's tanhf reaches 2.19). */
static inline HlkVF tanh_vf(HlkVF x) {
  HlkVF one = hlk_set1f(1.0f);
  HlkVF a = hlk_absf(x);
  HlkVF t = hlk_mulf(a, a);
  HlkVF p = hlk_set1f(0x1.e76a14p-14f);
  p = hlk_fmaf(p, t, hlk_set1f(-0x1.ae8c22p-11f));
  p = hlk_fmaf(p, t, hlk_set1f(0x1.8f860ep-9f));
  p = hlk_fmaf(p, t, hlk_set1f(-0x1.18db62p-7f));
  p = hlk_fmaf(p, t, hlk_set1f(0x1.64c044p-6f));
  p = hlk_fmaf(p, t, hlk_set1f(-0x1.b9f6dap-5f));
  p = hlk_fmaf(p, t, hlk_set1f(0x1.11103cp-3f));
  p = hlk_fmaf(p, t, hlk_set1f(-0x1.555552p-2f));
  HlkVF small = hlk_fmaf(a, hlk_mulf(t, p), a);
  HlkVF q = exp_m2a_vf(a);
  /* r = 2q/(1+q) without a division: d + dl = 1+q exactly (|q| <= 1),
   * y ~ 1/d (estimate and one Newton step), r0 = 2q y, and the exact
   * residual 2q - r0 d - r0 dl corrects r0 through y. */
  HlkVF d = hlk_addf(one, q), dl = hlk_addf(hlk_subf(one, d), q);
  HlkVF y = hlk_rcpf(d);
  y = hlk_fmaf(y, hlk_fnmaf(d, y, one), y);
  HlkVF q2 = hlk_addf(q, q), r0 = hlk_mulf(q2, y);
  HlkVF res = hlk_fnmaf(r0, dl, hlk_fnmaf(r0, d, q2));
  HlkVF big = hlk_subf(one, hlk_fmaf(res, y, r0));
  return hlk_orf(hlk_selltf(a, one, small, big), hlk_signf(x));
}
static void vm_tanh_fast_f32(const float *a, float *o, int64_t n) {
  VLOOP1(float, HLK_VLF, hlk_ldf, hlk_stf, tanh_vf)
}
#define vm_tanh_f32 vm_tanh_fast_f32

#else
/* Without FMA: SLEEF's exp (u10) and tanh (the UNARY loops above). Its SSE4
 * tanh is a hair over 1 ULP off below 2^-12, where tanh(x) rounds to x
 * itself (x - tanh(x) < x^3/3 < x 2^-25): those lanes are set to x. */
#define exp_vf HLK_SLEEF_F(exp, u10)
static void vm_tanh_small_f32(const float *a, float *o, int64_t n) {
  vm_tanh_f32(a, o, n);
  for (int64_t i = 0; i < n; i++)
    if (fabsf(a[i]) < 0x1p-12f) o[i] = a[i];
}
#define vm_tanh_f32 vm_tanh_small_f32
#endif
static inline HlkVF logistic_vf(HlkVF x) {
  HlkVF one = hlk_set1f(1.0f);
  HlkVF e = exp_vf(hlk_subf(hlk_set1f(0.0f), x));
  return hlk_divf(one, hlk_addf(one, e));
}
static inline HlkVD logistic_vd(HlkVD x) {
  HlkVD one = hlk_set1d(1.0);
  HlkVD e = HLK_SLEEF_D(exp, u10)(hlk_subd(hlk_set1d(0.0), x));
  return hlk_divd(one, hlk_addd(one, e));
}
static inline HlkVF rsqrt_vf(HlkVF x) { return hlk_divf(hlk_set1f(1.0f), HLK_SLEEF_F(sqrt, u05)(x)); }
static inline HlkVD rsqrt_vd(HlkVD x) { return hlk_divd(hlk_set1d(1.0), HLK_SLEEF_D(sqrt, u05)(x)); }

static void vm_logistic_f32(const float *a, float *o, int64_t n) {
  VLOOP1(float, HLK_VLF, hlk_ldf, hlk_stf, logistic_vf)
}
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
