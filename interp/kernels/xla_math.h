/* xla_math.h: f32 exp, expm1, tanh, log, log1p and logistic as XLA:CPU
 * computes them, bit for bit.
 *
 * XLA's CPU backend does not call libm for these: it inlines Cephes
 * polynomials for exp and log (llvm_ir_runtime.cc, GenerateVF32Exp and
 * GenerateVF32Log) and Eigen's rational approximation for tanh (the 13/6
 * "fast tanh", clamped to +-7.99881172180175781), contracted to fused
 * multiply-adds; logistic is 1 / (1 + exp(-x)) through that exp
 * (LogisticExpander) and expm1 is built from its exp and tanh
 * (ElementalIrEmitter::EmitExpm1), log1p a Cephes rational near 0 and
 * log(x + 1) elsewhere (EmitLog1p). Run this way, every f32 result of the
 * public conformance cases for them comes out identical to XLA's: 400 each
 * for exp, expm1, tanh, log1p and logistic, and the 209 positive inputs of
 * log's, where a correctly rounded tanh matched 162, SLEEF's expm1 317 and
 * SLEEF's log1p 346.
 *
 * The price is XLA's own error, measured over every f32 (tools/vmath_ulp.c
 * and the unit tests): at most 4.9 ULP for tanh (near |x| = 5.13), 4.0 for
 * exp where its result is normal (near x = 88.7; below x = -87.68 it is 0,
 * as XLA flushes there), 1.2 for log of normal numbers (subnormal inputs
 * count as 2^-126), 2.52 for log1p, 2.5 for logistic (x above -85) and 6.2
 * for expm1.
 *
 * The coefficients are shared by the vector versions (vmath.c) and the
 * scalar ones below, which the scalar table and SSE4 (no FMA) use; their
 * fused multiply-adds are exact (xla_fmaf), so every table gives the same
 * bits. NaN in, NaN out (its sign and payload are not kept). Not here: the
 * vector loops. */
#ifndef HLORUN_INTERP_KERNELS_XLA_MATH_H
#define HLORUN_INTERP_KERNELS_XLA_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* exp: x clamped to [LO, HI]; n = floor(x log2(e) + 1/2) clamped to
 * [-127, 127]; r = x - n C1 - n C2 (ln 2 in two parts); e^r ~ 1 + r +
 * r^2 P(r), P of degree 5 (xla_exp_p, highest coefficient first); times
 * 2^n built from its bits (0 for n = -127). */
#define XLA_EXP_LO (-87.8f)
#define XLA_EXP_HI 88.8f
#define XLA_EXP_LOG2E 1.44269504088896341f
#define XLA_EXP_C1 0.693359375f
#define XLA_EXP_C2 (-2.12194440e-4f)
static const float xla_exp_p[6] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                   4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};

/* tanh: |x| < TINY gives x; else c = x clamped to +-CLAMP, s = c^2,
 * tanh ~ c N(s) / D(s), N of degree 6, D of degree 3 (highest first). */
#define XLA_TANH_TINY 0.0004f
#define XLA_TANH_CLAMP 7.99881172180175781f
static const float xla_tanh_num[7] = {
  -2.76076847742355e-16f, 2.00018790482477e-13f, -8.60467152213735e-11f, 5.12229709037114e-08f,
  1.48572235717979e-05f,  6.37261928875436e-04f, 4.89352455891786e-03f};
static const float xla_tanh_den[4] = {1.19825839466702e-06f, 1.18534705686654e-04f,
                                      2.26843463243900e-03f, 4.89352518554385e-03f};

/* log (Cephes, as GenerateVF32Log): x = m 2^e with m in [sqrt(1/2), sqrt(2))
 * (subnormal x count as the smallest normal: XLA flushes them), t = m - 1,
 * log ~ t - t^2/2 + t^3 P(t) + e ln2 (ln2 in two parts, Q1 + Q2), P of
 * degree 8 in three pieces. */
#define XLA_LOG_SQRTHF 0.707106781186547524f
#define XLA_LOG_P0 7.0376836292e-2f
#define XLA_LOG_P1 (-1.1514610310e-1f)
#define XLA_LOG_P2 1.1676998740e-1f
#define XLA_LOG_P3 (-1.2420140846e-1f)
#define XLA_LOG_P4 1.4249322787e-1f
#define XLA_LOG_P5 (-1.6668057665e-1f)
#define XLA_LOG_P6 2.0000714765e-1f
#define XLA_LOG_P7 (-2.4999993993e-1f)
#define XLA_LOG_P8 3.3333331174e-1f
#define XLA_LOG_Q1 (-2.12194440e-4f)
#define XLA_LOG_Q2 0.693359375f

/* a*b + c rounded once. Where the compiler has no FMA instruction to use
 * (FP_FAST_FMAF unset: x86-64 without -mfma), libm's fmaf is a call, and on
 * CPUs without FMA a slow software one; instead: the product is exact in
 * double, the sum's rounding error is recovered exactly (TwoSum) and folded
 * into the last bit (round to odd: an inexact sum gets an odd last bit), so
 * the one rounding to float that follows is the correct one. */
static inline float xla_fmaf(float a, float b, float c) {
#ifdef FP_FAST_FMAF
  return fmaf(a, b, c);
#else
  double p = (double)a * (double)b, s = p + (double)c;
  if (!isfinite(s)) return (float)s;
  double bb = s - p, err = (p - (s - bb)) + ((double)c - bb);
  uint64_t u;
  memcpy(&u, &s, sizeof u);
  /* (a branch: it lets the next step start early; without one, each fused
   * step waited for the last and exp took three times as long) */
  if (err != 0 && (u & 1) == 0) {
    u += (err > 0) == (s > 0) ? 1 : (uint64_t)-1;   /* one step toward the exact sum */
    memcpy(&s, &u, sizeof s);
  }
  return (float)s;
#endif
}

/* lo <= x <= hi, NaN passing through (as the vector min/max order does). */
static inline float xla_clampf(float x, float lo, float hi) {
  return x < lo ? lo : x > hi ? hi : x;
}

/* c[0] x^(n-1) + ... + c[n-1] by Horner's rule with fused steps, as XLA
 * evaluates each polynomial here (its first step, from 0, is exact). */
static inline float xla_hornerf(const float *c, int n, float x) {
  float p = c[0];
#pragma GCC unroll 8
  for (int k = 1; k < n; k++) p = xla_fmaf(p, x, c[k]);
  return p;
}

static inline float xla_expf(float x) {
  float y = xla_clampf(x, XLA_EXP_LO, XLA_EXP_HI);
  if (y != y) return y;
  float n = xla_clampf(floorf(xla_fmaf(y, XLA_EXP_LOG2E, 0.5f)), -127.0f, 127.0f);
  float r = xla_fmaf(-n, XLA_EXP_C1, y);
  r = xla_fmaf(-n, XLA_EXP_C2, r);
  float z = xla_fmaf(xla_hornerf(xla_exp_p, 6, r), r * r, r);
  z = 1.0f + z;
  uint32_t bits = (uint32_t)((int32_t)n + 127) << 23;
  float pow2;
  memcpy(&pow2, &bits, sizeof pow2);
  return z * pow2;
}

static inline float xla_tanhf(float x) {
  if (!(fabsf(x) >= XLA_TANH_TINY)) return x;   /* tiny, or NaN */
  float c = xla_clampf(x, -XLA_TANH_CLAMP, XLA_TANH_CLAMP), s = c * c;
  float p = xla_hornerf(xla_tanh_num, 7, s), q = xla_hornerf(xla_tanh_den, 4, s);
  return c * p / q;
}

static inline float xla_logf(float x) {
  if (!(x > 0)) return x == 0 ? -INFINITY : NAN;
  if (x == INFINITY) return x;
  uint32_t bits;
  float t = x < 0x1p-126f ? 0x1p-126f : x;
  memcpy(&bits, &t, sizeof bits);
  float e = 1.0f + (float)((int32_t)(bits >> 23) - 127);
  bits = (bits & ~0x7f800000u) | 0x3f000000u;   /* the mantissa in [0.5, 1) */
  memcpy(&t, &bits, sizeof t);
  float t1 = 0.0f;
  if (t < XLA_LOG_SQRTHF) {
    t1 = t;
    e -= 1.0f;
  }
  t = (t - 1.0f) + t1;
  float x2 = t * t, x3 = x2 * t;
  float y = xla_fmaf(t, XLA_LOG_P0, XLA_LOG_P1);
  float y1 = xla_fmaf(t, XLA_LOG_P3, XLA_LOG_P4);
  float y2 = xla_fmaf(t, XLA_LOG_P6, XLA_LOG_P7);
  y = xla_fmaf(y, t, XLA_LOG_P2);
  y1 = xla_fmaf(y1, t, XLA_LOG_P5);
  y2 = xla_fmaf(y2, t, XLA_LOG_P8);
  y = xla_fmaf(y, x3, y1);
  y = xla_fmaf(y, x3, y2);
  y = xla_fmaf(y, x3, XLA_LOG_Q1 * e);   /* t^3 P(t) + e Q1, fused as XLA's is */
  t = t - 0.5f * x2;
  t = t + y;
  return t + XLA_LOG_Q2 * e;
}

/* log1p (ElementalIrEmitter::EmitLog1p): log(x + 1) through log above, but
 * for |x| < sqrt(2) - 1 a Cephes rational, x + (x^3 N(x)/D(x) - x^2/2)
 * with N and D of degree 6 (highest coefficient first) and
 * x^3 (N/D) fused with the exact -x^2/2, as LLVM contracts it. */
#define XLA_LOG1P_SMALL 0.41421356237309504880f
static const float xla_log1p_num[7] = {
  4.5270000862445199635215e-5f, 4.9854102823193375972212e-1f, 6.5787325942061044846969e0f,
  2.9911919328553073277375e1f,  6.0949667980987787057556e1f,  5.7112963590585538103336e1f,
  2.0039553499201281259648e1f};
static const float xla_log1p_den[7] = {
  1.0f, 1.5062909083469192043167e1f, 8.3047565967967209469434e1f, 2.2176239823732856465394e2f,
  3.0909872225312059774938e2f, 2.1642788614495947685003e2f, 6.0118660497603843919306e1f};

static inline float xla_log1pf(float x) {
  if (!(fabsf(x) < XLA_LOG1P_SMALL)) return xla_logf(x + 1.0f);
  float x2 = x * x, p = xla_hornerf(xla_log1p_num, 7, x), q = xla_hornerf(xla_log1p_den, 7, x);
  return x + xla_fmaf(x * x2, p / q, -0.5f * x2);
}

/* expm1 (ElementalIrEmitter::EmitExpm1): tanh(x/2) (exp(x) + 1), exp(x) - 1
 * where |x| > 1/2, and x itself where x/2 underflows to 0. */
static inline float xla_expm1f(float x) {
  float h = x * 0.5f;
  if (h == 0.0f) return x;
  float e = xla_expf(x);
  if (fabsf(x) > 0.5f) return e - 1.0f;
  return xla_tanhf(h) * (e + 1.0f);
}

static inline float xla_logisticf(float x) { return 1.0f / (1.0f + xla_expf(-x)); }

#endif
