/* convert.c: convert, bitcast-convert, reduce-precision, stochastic-convert.
 *
 * convert (XLA semantics): integers to narrower integers wrap; integers to
 * f32/f64 round to nearest even (u64 as unsigned); integers to the narrow
 * floats go through f32 first, as XLA does; floats to floats round once
 * from the exact source value; floats to integers truncate toward zero and
 * saturate, NaN -> 0; anything to pred is "!= 0" (NaN -> true); pred is 0/1;
 * complex to real keeps the real part; real to complex has imaginary 0.
 * Conversions run in blocks through an exact intermediate (int64 for
 * integers, double for floats) with one typed loop per side, so there is no
 * per-element switch; common pairs have direct loops. The block loops are
 * vector code (HLK_VECTORIZE: each is one exact conversion or compare per
 * element): f32 -> s32 went from 14 to 5 ms on 16M elements, f32 -> u8
 * from 55 to 6.
 *
 * bitcast-convert: same width copies bits; a wider type to a narrower one
 * adds a last dimension (little-endian: the low bytes come first), the
 * reverse removes it. Sub-byte types only at equal width.
 *
 * reduce-precision: XLA's bit recipe: round the mantissa to nearest even,
 * then exponents beyond the reduced range become inf, at or below its
 * minimum become (signed) zero (denormals flush); NaN stays the same NaN
 * (or becomes +inf when mantissa_bits = 0). Done on the type's own bits for
 * f16/bf16/f32/f64, through f32 for the f8 types.
 */
#include <math.h>
#include <string.h>
#include "common/numeric.h"
#include "interp/kernels/elementwise.h"
#include "interp/kernels/register.h"

enum { BLK = 512 };

/* ---- block decoders ------------------------------------------------------ */

HLK_VECTORIZE static void dec_int(HloDtype t, const void *s, int64_t *d, int64_t n) {
  switch (t) {   /* once per block */
#define C(ID, T)                                                                \
  case HLO_##ID: {                                                              \
    const T *p = s;                                                             \
    for (int64_t i = 0; i < n; i++) d[i] = (int64_t)p[i];                       \
    break;                                                                      \
  }
    C(PRED, uint8_t) C(S1, int8_t) C(S2, int8_t) C(S4, int8_t) C(S8, int8_t)
    C(S16, int16_t) C(S32, int32_t) C(S64, int64_t) C(U1, uint8_t) C(U2, uint8_t)
    C(U4, uint8_t) C(U8, uint8_t) C(U16, uint16_t) C(U32, uint32_t) C(U64, uint64_t)
#undef C
  default: break;
  }
}

/* Floats and complex (real part) to double, exactly. */
HLK_VECTORIZE static void dec_float(HloDtype t, const void *s, double *d, int64_t n) {
  switch (t) {
  case HLO_F32: { const float *p = s; for (int64_t i = 0; i < n; i++) d[i] = p[i]; break; }
  case HLO_F64: memcpy(d, s, (size_t)n * 8); break;
  case HLO_C64: { const float *p = s; for (int64_t i = 0; i < n; i++) d[i] = p[2 * i]; break; }
  case HLO_C128: { const double *p = s; for (int64_t i = 0; i < n; i++) d[i] = p[2 * i]; break; }
  default: {
    float f[BLK];
    hlk_narrow_to_f32(t, s, f, n);
    for (int64_t i = 0; i < n; i++) d[i] = f[i];
  }
  }
}

/* ---- block encoders ------------------------------------------------------ */

/* Integers (int64; `uns`: the source was u64, so read the bits unsigned). */
HLK_VECTORIZE static void enc_from_int(HloDtype t, const int64_t *s, bool uns, void *d,
                                       int64_t n) {
  switch (t) {
#define C(ID, T)                                                                \
  case HLO_##ID: {                                                              \
    T *p = d;                                                                   \
    for (int64_t i = 0; i < n; i++) p[i] = (T)(uint64_t)s[i];                   \
    break;                                                                      \
  }
    C(S8, int8_t) C(S16, int16_t) C(S32, int32_t) C(S64, int64_t) C(U8, uint8_t)
    C(U16, uint16_t) C(U32, uint32_t) C(U64, uint64_t)
#undef C
  case HLO_S1: case HLO_S2: case HLO_S4: case HLO_U1: case HLO_U2: case HLO_U4: {
    uint8_t *p = d;
    for (int64_t i = 0; i < n; i++) p[i] = (uint8_t)(uint64_t)s[i];
    hlk_wrap_subbyte(t, d, n);
    break;
  }
  case HLO_PRED: {
    uint8_t *p = d;
    for (int64_t i = 0; i < n; i++) p[i] = s[i] != 0;
    break;
  }
  case HLO_F64: case HLO_C128: {
    double *p = d;
    int st = t == HLO_C128 ? 2 : 1;
    for (int64_t i = 0; i < n; i++) {
      p[i * st] = uns ? (double)(uint64_t)s[i] : (double)s[i];
      if (st == 2) p[i * st + 1] = 0;
    }
    break;
  }
  default: {
    /* f32, c64 and the narrow floats (through f32, like XLA) */
    float f[BLK];
    for (int64_t i = 0; i < n; i++) f[i] = uns ? (float)(uint64_t)s[i] : (float)s[i];
    if (t == HLO_F32) {
      memcpy(d, f, (size_t)n * 4);
    } else if (t == HLO_C64) {
      float *p = d;
      for (int64_t i = 0; i < n; i++) { p[2 * i] = f[i]; p[2 * i + 1] = 0; }
    } else {
      hlk_f32_to_narrow(t, f, d, n);
    }
  }
  }
}

/* Float -> integer: truncate, saturate to [lo, hi], NaN -> 0. */
#define SAT_LOOP(T, LO, HI)                                                     \
  {                                                                             \
    T *p = d;                                                                   \
    for (int64_t i = 0; i < n; i++) {                                           \
      double v = s[i];                                                          \
      p[i] = isnan(v) ? (T)0 : v <= (double)(LO) ? (T)(LO) : v >= (double)(HI) ? (T)(HI) : (T)v; \
    }                                                                           \
  }

HLK_VECTORIZE static void enc_from_float(HloDtype t, const double *s, void *d, int64_t n) {
  switch (t) {
  case HLO_S8: SAT_LOOP(int8_t, INT8_MIN, INT8_MAX) break;
  case HLO_S16: SAT_LOOP(int16_t, INT16_MIN, INT16_MAX) break;
  case HLO_S32: SAT_LOOP(int32_t, INT32_MIN, INT32_MAX) break;
  case HLO_S64: SAT_LOOP(int64_t, INT64_MIN, INT64_MAX) break;
  case HLO_U8: SAT_LOOP(uint8_t, 0, UINT8_MAX) break;
  case HLO_U16: SAT_LOOP(uint16_t, 0, UINT16_MAX) break;
  case HLO_U32: SAT_LOOP(uint32_t, 0, UINT32_MAX) break;
  case HLO_U64: SAT_LOOP(uint64_t, 0, UINT64_MAX) break;
  case HLO_S1: SAT_LOOP(int8_t, -1, 0) break;
  case HLO_S2: SAT_LOOP(int8_t, -2, 1) break;
  case HLO_S4: SAT_LOOP(int8_t, -8, 7) break;
  case HLO_U1: SAT_LOOP(uint8_t, 0, 1) break;
  case HLO_U2: SAT_LOOP(uint8_t, 0, 3) break;
  case HLO_U4: SAT_LOOP(uint8_t, 0, 15) break;
  case HLO_PRED: {
    uint8_t *p = d;
    for (int64_t i = 0; i < n; i++) p[i] = s[i] != 0;   /* NaN != 0 */
    break;
  }
  case HLO_F64: memcpy(d, s, (size_t)n * 8); break;
  case HLO_F32: { float *p = d; for (int64_t i = 0; i < n; i++) p[i] = (float)s[i]; break; }
  case HLO_C64: {
    float *p = d;
    for (int64_t i = 0; i < n; i++) { p[2 * i] = (float)s[i]; p[2 * i + 1] = 0; }
    break;
  }
  case HLO_C128: {
    double *p = d;
    for (int64_t i = 0; i < n; i++) { p[2 * i] = s[i]; p[2 * i + 1] = 0; }
    break;
  }
  case HLO_F16: {
    uint16_t *p = d;
    for (int64_t i = 0; i < n; i++) p[i] = (uint16_t)hlc_float_bits_from_f64(t, s[i]);
    break;
  }
  case HLO_BF16: {
    uint16_t *p = d;
    for (int64_t i = 0; i < n; i++) p[i] = (uint16_t)hlc_float_bits_from_f64(t, s[i]);
    break;
  }
  default: {
    uint8_t *p = d;
    for (int64_t i = 0; i < n; i++) p[i] = (uint8_t)hlc_float_bits_from_f64(t, s[i]);
  }
  }
}

/* ---- convert ------------------------------------------------------------ */

typedef struct ConvJob {
  HloDtype from, to;
  const char *src;
  char *dst;
  size_t ss, ds;
} ConvJob;

static bool is_intlike(HloDtype t) { return t == HLO_PRED || hlc_dtype_is_int(t); }

/* Narrow integers (and pred) to f32 directly: the same C conversion the
 * general path makes through int64 (exact for these), vectorized. False if
 * f is not one of them. */
HLK_VECTORIZE static bool small_int_to_f32(HloDtype f, const void *src, float *d, int64_t n) {
  switch (f) {
#define C(ID, T)                                                                \
  case HLO_##ID: {                                                              \
    const T *p = src;                                                           \
    for (int64_t i = 0; i < n; i++) d[i] = (float)p[i];                         \
    return true;                                                                \
  }
    C(PRED, uint8_t) C(S8, int8_t) C(U8, uint8_t) C(S16, int16_t) C(U16, uint16_t)
    C(S32, int32_t)
#undef C
  default: return false;
  }
}

void hlk_convert_loop(HloDtype f, HloDtype t, const void *src, void *dst, int64_t n) {
  if (t == HLO_F32 && small_int_to_f32(f, src, dst, n)) return;
  size_t ss = hlc_dtype_size(f), ds = hlc_dtype_size(t);
  for (int64_t i = 0; i < n; i += BLK) {
    int64_t m = n - i < BLK ? n - i : BLK;
    const char *s = (const char *)src + i * ss;
    char *d = (char *)dst + i * ds;
    if (f == t) {
      memcpy(d, s, (size_t)m * ss);
    } else if (f == HLO_F32 && hlk_is_narrow_float(t)) {
      hlk_f32_to_narrow(t, (const float *)s, d, m);
    } else if (hlk_is_narrow_float(f) && t == HLO_F32) {
      hlk_narrow_to_f32(f, s, (float *)d, m);
    } else if (hlc_dtype_is_complex(f) && hlc_dtype_is_complex(t)) {
      if (f == HLO_C64) {
        const float *p = (const float *)s;
        double *q = (double *)d;
        for (int64_t k = 0; k < 2 * m; k++) q[k] = p[k];
      } else {
        const double *p = (const double *)s;
        float *q = (float *)d;
        for (int64_t k = 0; k < 2 * m; k++) q[k] = (float)p[k];
      }
    } else if (is_intlike(f)) {
      int64_t buf[BLK];
      dec_int(f, s, buf, m);
      enc_from_int(t, buf, f == HLO_U64, d, m);
    } else {
      double buf[BLK];
      dec_float(f, s, buf, m);
      enc_from_float(t, buf, d, m);
    }
  }
}

static void conv_chunk(void *arg, int64_t lo, int64_t hi) {
  const ConvJob *j = arg;
  hlk_convert_loop(j->from, j->to, j->src + lo * j->ss, j->dst + lo * j->ds, hi - lo);
}

static bool convertible(HloDtype t) { return t >= 0 && hlc_dtype_is_array(t); }

int hlk_convert_check(HliExec *x, const HloInstr *ins) {
  HloDtype f = ins->nops == 1 ? ins->ops[0]->shape.dtype : HLO_DTYPE_INVALID;
  if (!convertible(f) || !convertible(ins->shape.dtype))
    return hli_unsupported(x, ins, "convert from %s to %s", hlc_dtype_name(f),
                           hlc_dtype_name(ins->shape.dtype));
  return 0;
}

int hlk_convert_run(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (hlk_convert_check(x, ins)) return -1;
  if (in[0]->nelem != out->nelem) return hli_fail(x, ins, "operand and result sizes differ");
  ConvJob j = {in[0]->dtype, out->dtype, in[0]->data, out->data, hlc_dtype_size(in[0]->dtype),
               hlc_dtype_size(out->dtype)};
  hli_parallel_for(x, out->nelem, HLK_CHUNK, conv_chunk, &j);
  return 0;
}

/* ---- bitcast-convert ---------------------------------------------------- */

static int check_bitcast(HliExec *x, const HloInstr *ins) {
  HloDtype f = ins->nops == 1 ? ins->ops[0]->shape.dtype : HLO_DTYPE_INVALID;
  HloDtype t = ins->shape.dtype;
  if (!convertible(f) || !convertible(t))
    return hli_unsupported(x, ins, "bitcast-convert from %s to %s", hlc_dtype_name(f),
                           hlc_dtype_name(t));
  int fb = hlc_dtype_bits(f), tb = hlc_dtype_bits(t);
  if (f == HLO_PRED) fb = 8;
  if (t == HLO_PRED) tb = 8;
  if (fb != tb && (fb < 8 || tb < 8))
    return hli_unsupported(x, ins, "bitcast-convert between %s and %s (sub-byte width change)",
                           hlc_dtype_name(f), hlc_dtype_name(t));
  const HloShape *is = &ins->ops[0]->shape, *os = &ins->shape;
  bool ok;
  if (fb == tb) {
    ok = hlp_shape_elements(is) == hlp_shape_elements(os);
  } else if (fb > tb) {
    ok = os->rank == is->rank + 1 && os->dims[os->rank - 1] == fb / tb;
    for (int32_t i = 0; ok && i < is->rank; i++) ok = is->dims[i] == os->dims[i];
  } else {
    ok = is->rank == os->rank + 1 && is->dims[is->rank - 1] == tb / fb;
    for (int32_t i = 0; ok && i < os->rank; i++) ok = is->dims[i] == os->dims[i];
  }
  if (!ok) return hli_fail(x, ins, "bitcast-convert shapes do not match the element widths");
  return 0;
}

static int k_bitcast(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (check_bitcast(x, ins)) return -1;
  if (in[0]->nbytes != out->nbytes) return hli_fail(x, ins, "operand and result byte sizes differ");
  memcpy(out->data, in[0]->data, out->nbytes);
  HloDtype t = out->dtype;
  if (hlc_dtype_is_int(t) && hlc_dtype_bits(t) < 8) hlk_wrap_subbyte(t, out->data, out->nelem);
  if (t == HLO_F4E2M1FN)
    for (int64_t i = 0; i < out->nelem; i++) ((uint8_t *)out->data)[i] &= 0xF;
  return 0;
}

/* ---- reduce-precision ---------------------------------------------------- */

typedef struct RP {
  int sm, se, dm, de;       /* source / destination mantissa and exponent bits */
} RP;

static inline uint64_t rp_bits(uint64_t x, const RP *r) {
  uint64_t mant_mask = ((uint64_t)1 << r->sm) - 1;
  uint64_t exp_mask = (((uint64_t)1 << r->se) - 1) << r->sm;
  uint64_t sign_mask = (uint64_t)1 << (r->sm + r->se);
  bool nan = (x & exp_mask) == exp_mask && (x & mant_mask) != 0;
  uint64_t orig = x;
  if (r->dm < r->sm) {
    uint64_t last = (uint64_t)1 << (r->sm - r->dm);
    uint64_t bias = (last >> 1) - 1 + ((x & last) >> (r->sm - r->dm));
    x = (x + bias) & ~(last - 1);
  }
  if (r->de < r->se) {
    uint64_t ebias = ((uint64_t)1 << (r->se - 1)) - 1;
    uint64_t rbias = ((uint64_t)1 << (r->de - 1)) - 1;
    uint64_t xe = x & exp_mask;
    if (xe > (ebias + rbias) << r->sm)
      x = (x & sign_mask) | exp_mask;
    else if (xe <= (ebias - rbias) << r->sm)
      x &= sign_mask;
  }
  if (nan) x = r->dm > 0 ? orig : exp_mask;
  return x;
}

#define RP_LOOP(name, UT)                                                       \
  static void name(const UT *s, UT *d, int64_t n, const RP *r) {                \
    for (int64_t i = 0; i < n; i++) d[i] = (UT)rp_bits(s[i], r);                \
  }
RP_LOOP(rp16, uint16_t)
RP_LOOP(rp32, uint32_t)
RP_LOOP(rp64, uint64_t)

typedef struct RPJob {
  HloDtype t;
  const char *src;
  char *dst;
  RP r;
} RPJob;

static void rp_chunk(void *arg, int64_t lo, int64_t hi) {
  const RPJob *j = arg;
  size_t sz = hlc_dtype_size(j->t);
  const char *s = j->src + lo * sz;
  char *d = j->dst + lo * sz;
  int64_t n = hi - lo;
  switch (j->t) {   /* once per chunk */
  case HLO_F16: case HLO_BF16: rp16((const uint16_t *)s, (uint16_t *)d, n, &j->r); break;
  case HLO_F32: rp32((const uint32_t *)s, (uint32_t *)d, n, &j->r); break;
  case HLO_F64: rp64((const uint64_t *)s, (uint64_t *)d, n, &j->r); break;
  default: {
    float f[BLK];
    for (int64_t i = 0; i < n; i += BLK) {
      int64_t m = n - i < BLK ? n - i : BLK;
      hlk_narrow_to_f32(j->t, s + i * sz, f, m);
      rp32((const uint32_t *)(const void *)f, (uint32_t *)(void *)f, m, &j->r);
      hlk_f32_to_narrow(j->t, f, d + i * sz, m);
    }
  }
  }
}

static int check_rp(HliExec *x, const HloInstr *ins) {
  HloDtype t = ins->nops == 1 ? ins->ops[0]->shape.dtype : HLO_DTYPE_INVALID;
  if (t < 0 || !hlc_dtype_is_float(t))
    return hli_unsupported(x, ins, "reduce-precision of element type %s", hlc_dtype_name(t));
  if (ins->exponent_bits < 1 || ins->mantissa_bits < 0)
    return hli_fail(x, ins, "reduce-precision needs exponent_bits >= 1 and mantissa_bits >= 0");
  return 0;
}

static int k_rp(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (check_rp(x, ins)) return -1;
  RPJob j = {in[0]->dtype, in[0]->data, out->data, {0, 0, 0, 0}};
  switch (j.t) {
  case HLO_F16: j.r.sm = 10; j.r.se = 5; break;
  case HLO_BF16: j.r.sm = 7; j.r.se = 8; break;
  case HLO_F64: j.r.sm = 52; j.r.se = 11; break;
  default: j.r.sm = 23; j.r.se = 8; break;
  }
  j.r.dm = ins->mantissa_bits > 64 ? 64 : (int)ins->mantissa_bits;
  j.r.de = ins->exponent_bits > 64 ? 64 : (int)ins->exponent_bits;
  hli_parallel_for(x, out->nelem, HLK_CHUNK, rp_chunk, &j);
  return 0;
}

/* ---- stochastic-convert ------------------------------------------------- */

/* Float -> signed integer with stochastic rounding, as XLA's evaluator:
 * inf/out-of-range saturate, NaN -> 0; |x| is truncated and rounded up when
 * the random bits are below the fraction scaled to the random type's width. */
static int check_sc(HliExec *x, const HloInstr *ins) {
  HloDtype f = ins->nops == 2 ? ins->ops[0]->shape.dtype : HLO_DTYPE_INVALID;
  HloDtype r = ins->nops == 2 ? ins->ops[1]->shape.dtype : HLO_DTYPE_INVALID;
  HloDtype t = ins->shape.dtype;
  if (f < 0 || !hlc_dtype_is_float(f) || r < 0 || hlc_dtype_kind(r) != HLO_KIND_UINT ||
      hlc_dtype_bits(r) != hlc_dtype_bits(f) || hlc_dtype_kind(t) != HLO_KIND_SINT ||
      hlc_dtype_bits(t) < 8)
    return hli_unsupported(x, ins, "stochastic-convert from %s with %s random bits to %s",
                           hlc_dtype_name(f), hlc_dtype_name(r), hlc_dtype_name(t));
  return 0;
}

static int k_sc(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (check_sc(x, ins)) return -1;
  int rbits = hlc_dtype_bits(in[1]->dtype), obits = hlc_dtype_bits(out->dtype);
  int64_t hi = obits == 64 ? INT64_MAX : ((int64_t)1 << (obits - 1)) - 1, lo = -hi - 1;
  size_t fs = hlc_dtype_size(in[0]->dtype), rs = hlc_dtype_size(in[1]->dtype);
  for (int64_t i = 0; i < out->nelem; i++) {
    double v;
    dec_float(in[0]->dtype, (const char *)in[0]->data + i * fs, &v, 1);
    int64_t rnd;
    dec_int(in[1]->dtype, (const char *)in[1]->data + i * rs, &rnd, 1);
    uint64_t random = (uint64_t)rnd;
    int64_t res;
    bool neg = signbit(v) != 0;
    if (isnan(v)) res = 0;
    else if (isinf(v)) res = neg ? lo : hi;
    else if (v >= (double)hi) res = hi;
    else if (v <= (double)lo) res = lo;
    else {
      double a = fabs(v), t = trunc(a), frac = a - t;
      int64_t r = (int64_t)t;
      uint64_t fixed = (uint64_t)ldexp(frac, rbits);
      if (frac != 0 && random < fixed) r++;
      res = neg ? -r : r;
    }
    hlc_store_i64(out->dtype, (char *)out->data + i * hlc_dtype_size(out->dtype), res);
  }
  return 0;
}

void hlk_register_convert(HliOpTable t) {
  t[HLO_OP_CONVERT] = (HliOpEntry){hlk_convert_run, hlk_convert_check};
  t[HLO_OP_BITCAST_CONVERT] = (HliOpEntry){k_bitcast, check_bitcast};
  t[HLO_OP_REDUCE_PRECISION] = (HliOpEntry){k_rp, check_rp};
  t[HLO_OP_STOCHASTIC_CONVERT] = (HliOpEntry){k_sc, check_sc};
}
