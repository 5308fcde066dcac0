/* numeric.c: element conversions between HLO types and host numbers, range
 * checks for literals, and XLA's text form of one element.
 *
 * Every float format is described by one FloatFmt row (exponent bits,
 * mantissa bits, bias, how it spells inf/NaN); one generic encoder and one
 * decoder serve all of them, so each format's rules live in data, not code.
 * The rules follow ml_dtypes (which XLA uses for its narrow types):
 *   IEEE-like (f16, bf16, f8e5m2, f8e4m3, f8e3m4): inf and NaN as in IEEE 754.
 *   fn (f8e4m3fn): no inf; NaN is S.1111.111; overflow and inf -> NaN.
 *   fnuz: no inf, no -0, the only NaN is 0x80; overflow and inf -> 0x80.
 *   f8e8m0fnu: powers of two 2^-127..2^127, no sign, no zero; NaN 0xFF;
 *     negative values and -0 -> NaN (ml_dtypes negates to NaN).
 *   f4e2m1fn: no inf, no NaN: overflow and inf saturate to +-6, NaN -> 0x8
 *     (ml_dtypes' quiet_NaN()) with the sign flipping it like negation.
 * Rounding is to nearest, ties to even, from the exact double value.
 * Not here: whole-array conversion loops (interp/kernels/convert.c).
 */
#include "common/numeric.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { SPEC_IEEE, SPEC_FN, SPEC_FNUZ, SPEC_E8M0, SPEC_NONE } SpecialKind;

typedef struct FloatFmt {
  int ebits, mbits, bias;
  SpecialKind spec;
  int max_digits10;   /* digits XLA prints: std::numeric_limits<T>::max_digits10 */
} FloatFmt;

static const FloatFmt FMT_F16 = {5, 10, 15, SPEC_IEEE, 5};
static const FloatFmt FMT_BF16 = {8, 7, 127, SPEC_IEEE, 4};
static const FloatFmt FMT_F32 = {8, 23, 127, SPEC_IEEE, 9};
static const FloatFmt FMT_F64 = {11, 52, 1023, SPEC_IEEE, 17};
static const FloatFmt FMT_E5M2 = {5, 2, 15, SPEC_IEEE, 2};
static const FloatFmt FMT_E4M3 = {4, 3, 7, SPEC_IEEE, 3};
static const FloatFmt FMT_E3M4 = {3, 4, 3, SPEC_IEEE, 3};
static const FloatFmt FMT_E4M3FN = {4, 3, 7, SPEC_FN, 3};
static const FloatFmt FMT_E4M3B11 = {4, 3, 11, SPEC_FNUZ, 3};
static const FloatFmt FMT_E5M2FNUZ = {5, 2, 16, SPEC_FNUZ, 2};
static const FloatFmt FMT_E4M3FNUZ = {4, 3, 8, SPEC_FNUZ, 3};
static const FloatFmt FMT_E8M0 = {8, 0, 127, SPEC_E8M0, 2};
static const FloatFmt FMT_E2M1 = {2, 1, 1, SPEC_NONE, 2};

static const FloatFmt *fmt_of(HloDtype t) {
  switch (t) {
  case HLO_F16: return &FMT_F16;
  case HLO_BF16: return &FMT_BF16;
  case HLO_F32: return &FMT_F32;
  case HLO_F64: return &FMT_F64;
  case HLO_F8E5M2: return &FMT_E5M2;
  case HLO_F8E4M3: return &FMT_E4M3;
  case HLO_F8E3M4: return &FMT_E3M4;
  case HLO_F8E4M3FN: return &FMT_E4M3FN;
  case HLO_F8E4M3B11FNUZ: return &FMT_E4M3B11;
  case HLO_F8E5M2FNUZ: return &FMT_E5M2FNUZ;
  case HLO_F8E4M3FNUZ: return &FMT_E4M3FNUZ;
  case HLO_F8E8M0FNU: return &FMT_E8M0;
  case HLO_F4E2M1FN: return &FMT_E2M1;
  default: return NULL;
  }
}

static int fmt_sign_shift(const FloatFmt *f) { return f->ebits + f->mbits; }
static uint64_t fmt_exp_all(const FloatFmt *f) { return ((uint64_t)1 << f->ebits) - 1; }

/* Largest finite magnitude, as a bit pattern without sign. */
static uint64_t fmt_max_bits(const FloatFmt *f) {
  uint64_t mant_all = ((uint64_t)1 << f->mbits) - 1;
  switch (f->spec) {
  case SPEC_IEEE: return ((fmt_exp_all(f) - 1) << f->mbits) | mant_all;
  case SPEC_FN: return (fmt_exp_all(f) << f->mbits) | (mant_all - 1);
  case SPEC_E8M0: return 0xFE;
  default: return (fmt_exp_all(f) << f->mbits) | mant_all;   /* fnuz, f4: all finite */
  }
}

/* The NaN a conversion produces (sign applied where the format has one). */
static uint64_t fmt_nan_bits(const FloatFmt *f, bool neg) {
  uint64_t sign = (uint64_t)neg << fmt_sign_shift(f);
  switch (f->spec) {
  case SPEC_IEEE:
    return sign | (fmt_exp_all(f) << f->mbits) | ((uint64_t)1 << (f->mbits - 1));
  case SPEC_FN: return sign | (fmt_exp_all(f) << f->mbits) | (((uint64_t)1 << f->mbits) - 1);
  case SPEC_FNUZ: return 0x80;
  case SPEC_E8M0: return 0xFF;
  case SPEC_NONE: return neg ? 0x0 : 0x8;   /* quiet_NaN() = 0b1000, negated flips the sign */
  }
  return 0;
}

/* What +-infinity (and overflow) becomes. */
static uint64_t fmt_inf_bits(const FloatFmt *f, bool neg) {
  uint64_t sign = (uint64_t)neg << fmt_sign_shift(f);
  switch (f->spec) {
  case SPEC_IEEE: return sign | (fmt_exp_all(f) << f->mbits);
  case SPEC_NONE: return sign | fmt_max_bits(f);   /* infinity() is max() */
  default: return fmt_nan_bits(f, neg);
  }
}

static bool fmt_is_nan(const FloatFmt *f, uint64_t b) {
  uint64_t mag = b & (((uint64_t)1 << fmt_sign_shift(f)) - 1);
  switch (f->spec) {
  case SPEC_IEEE:
    return (mag >> f->mbits) == fmt_exp_all(f) && (mag & (((uint64_t)1 << f->mbits) - 1)) != 0;
  case SPEC_FN: return mag == ((fmt_exp_all(f) << f->mbits) | (((uint64_t)1 << f->mbits) - 1));
  case SPEC_FNUZ: return b == 0x80;
  case SPEC_E8M0: return b == 0xFF;
  case SPEC_NONE: return false;
  }
  return false;
}

/* Round |v| (finite, > 0) into f. *overflow is set when the rounded value is
 * beyond the largest finite value (the result bits are then meaningless). */
static uint64_t encode_mag(const FloatFmt *f, double a, bool *overflow) {
  int e;
  double m = frexp(a, &e);   /* a = m * 2^e, m in [0.5, 1) */
  m *= 2;
  e -= 1;                    /* a = m * 2^e, m in [1, 2) */
  *overflow = false;
  if (f->spec == SPEC_E8M0) {
    /* Exponent only: field 0 is 2^-127. Ties go to the even field, as
     * ml_dtypes rounds the exponent's last bit. */
    if (e < -127) return 0;
    int field = e + 127;
    if (m > 1.5 || (m == 1.5 && (field & 1))) field++;
    if (field > 0xFE) { *overflow = true; return 0; }
    return (uint64_t)field;
  }
  int emin = 1 - f->bias;
  uint64_t one = (uint64_t)1 << f->mbits;
  uint64_t bits;
  if (e < emin) {
    /* Subnormal: count quanta of 2^(emin - mbits); may round up to min normal. */
    double q = nearbyint(ldexp(a, f->mbits - emin));
    bits = (uint64_t)q;
  } else {
    double q = nearbyint(ldexp(m, f->mbits));   /* in [2^mbits, 2^(mbits+1)] */
    uint64_t qi = (uint64_t)q;
    if (qi == 2 * one) { qi = one; e++; }
    int64_t field = (int64_t)e + f->bias;
    if (field > (int64_t)fmt_exp_all(f)) { *overflow = true; return 0; }
    bits = ((uint64_t)field << f->mbits) | (qi - one);
  }
  if (bits > fmt_max_bits(f)) *overflow = true;
  return bits;
}

static uint64_t encode(const FloatFmt *f, double v, bool *overflow) {
  bool neg = signbit(v) != 0;
  uint64_t sign = (uint64_t)neg << fmt_sign_shift(f);
  *overflow = false;
  if (isnan(v)) return fmt_nan_bits(f, neg);
  if (isinf(v)) return fmt_inf_bits(f, neg);
  if (f->spec == SPEC_E8M0) {
    if (neg) return 0xFF;
    if (v == 0) return 0x00;
  }
  if (v == 0) return f->spec == SPEC_FNUZ ? 0 : sign;
  uint64_t mag = encode_mag(f, fabs(v), overflow);
  if (*overflow) return fmt_inf_bits(f, neg);
  if (mag == 0 && f->spec == SPEC_FNUZ) return 0;   /* underflow to zero: no -0 */
  return sign | mag;
}

static double decode(const FloatFmt *f, uint64_t b) {
  if (fmt_is_nan(f, b)) {
    /* ml_dtypes keeps the sign bit of the pattern (fnuz 0x80 reads as -NaN). */
    bool neg = f->spec == SPEC_E8M0 || f->spec == SPEC_FNUZ ? true : (b >> fmt_sign_shift(f)) & 1;
    return neg ? -NAN : NAN;
  }
  if (f->spec == SPEC_E8M0) return ldexp(1.0, (int)b - 127);
  bool neg = (b >> fmt_sign_shift(f)) & 1;
  uint64_t exp = (b >> f->mbits) & fmt_exp_all(f);
  uint64_t mant = b & (((uint64_t)1 << f->mbits) - 1);
  double v;
  if (f->spec == SPEC_IEEE && exp == fmt_exp_all(f))
    v = INFINITY;
  else if (exp == 0)
    v = ldexp((double)mant, 1 - f->bias - f->mbits);
  else
    v = ldexp((double)(mant | ((uint64_t)1 << f->mbits)), (int)exp - f->bias - f->mbits);
  return neg ? -v : v;
}

/* ---- public conversions ------------------------------------------------ */

uint64_t hlc_float_bits_from_f64(HloDtype t, double v) {
  if (t == HLO_F64) { uint64_t u; memcpy(&u, &v, 8); return u; }
  if (t == HLO_F32) { float f = (float)v; uint32_t u; memcpy(&u, &f, 4); return u; }
  const FloatFmt *f = fmt_of(t);
  if (!f) return 0;
  bool ovf;
  return encode(f, v, &ovf);
}

uint64_t hlc_float_bits_from_f32(HloDtype t, float v) {
  if (t == HLO_F32) { uint32_t u; memcpy(&u, &v, 4); return u; }
  if (t == HLO_F16) return hlc_f32_to_f16(v);
  if (t == HLO_BF16) return hlc_f32_to_bf16(v);
  return hlc_float_bits_from_f64(t, (double)v);
}

double hlc_float_bits_to_f64(HloDtype t, uint64_t bits) {
  if (t == HLO_F64) { double d; memcpy(&d, &bits, 8); return d; }
  if (t == HLO_F32) { uint32_t u = (uint32_t)bits; float f; memcpy(&f, &u, 4); return f; }
  const FloatFmt *f = fmt_of(t);
  return f ? decode(f, bits) : 0.0;
}

float hlc_float_bits_to_f32(HloDtype t, uint64_t bits) {
  if (t == HLO_F16) return hlc_f16_to_f32((uint16_t)bits);
  if (t == HLO_BF16) return hlc_bf16_to_f32((uint16_t)bits);
  return (float)hlc_float_bits_to_f64(t, bits);
}

float hlc_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1F, mant = h & 0x3FF, u;
  if (exp == 0x1F) {
    u = sign | 0x7F800000u | (mant << 13);   /* inf, NaN keeps its payload */
  } else if (exp != 0) {
    u = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    u = sign;
  } else {
    /* Subnormal: exact as a float (mant * 2^-24). */
    float f = (float)mant * 0x1p-24f;
    memcpy(&u, &f, 4);
    u |= sign;
  }
  float r;
  memcpy(&r, &u, 4);
  return r;
}

uint16_t hlc_f32_to_f16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
  uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return sign | 0x7E00;            /* NaN -> quiet NaN */
  if (a >= 0x477FF000u) return sign | 0x7C00;           /* >= 65520 rounds to inf */
  if (a >= 0x38800000u) {                              /* normal in f16 (>= 2^-14) */
    uint32_t r = a + 0xFFF + ((a >> 13) & 1);           /* round to nearest even */
    return sign | (uint16_t)((r >> 13) - (112u << 10));
  }
  if (a < 0x33000000u) return sign;                     /* < 2^-25: rounds to 0 */
  /* Subnormal result: value / 2^-24, rounded to nearest even. */
  uint32_t e = a >> 23, m = (a & 0x7FFFFF) | 0x800000;
  int shift = 126 - (int)e;                              /* 14..24 + ... */
  /* value = m * 2^(e-150); quanta of 2^-24 -> m >> (126 - e) */
  uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1))) q++;
  return sign | (uint16_t)q;
}

uint16_t hlc_f32_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)(((u >> 16) & 0x8000) | 0x7FC0);
  u += 0x7FFF + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}

/* ---- range checks -------------------------------------------------------- */

static bool int_range(HloDtype t, int64_t *lo, uint64_t *hi) {
  int bits = hlc_dtype_bits(t);
  switch (hlc_dtype_kind(t)) {
  case HLO_KIND_PRED: *lo = 0; *hi = 1; return true;
  case HLO_KIND_SINT:
    *lo = bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
    *hi = bits == 64 ? (uint64_t)INT64_MAX : ((uint64_t)1 << (bits - 1)) - 1;
    return true;
  case HLO_KIND_UINT:
    *lo = 0;
    *hi = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
    return true;
  default: return false;
  }
}

bool hlc_int_fits(HloDtype t, int64_t v, bool is_signed) {
  int64_t lo;
  uint64_t hi;
  if (!int_range(t, &lo, &hi)) return false;
  if (!is_signed || v >= 0) return (uint64_t)v <= hi;
  return v >= lo;
}

bool hlc_value_fits(HloDtype t, double v) {
  if (hlc_dtype_is_int(t) || t == HLO_PRED) {
    if (!isfinite(v) || v != trunc(v)) return false;
    int64_t lo;
    uint64_t hi;
    int_range(t, &lo, &hi);
    return v >= (double)lo && v <= (double)hi && !(hi == UINT64_MAX && v >= 0x1p64) &&
           !(hi == (uint64_t)INT64_MAX && v >= 0x1p63);
  }
  if (t == HLO_C128 || t == HLO_F64) return true;
  if (t == HLO_C64 || t == HLO_F32) return isnan(v) || isinf(v) || isfinite((float)v);
  const FloatFmt *f = fmt_of(t);
  if (!f) return false;
  if (isnan(v)) return f->spec != SPEC_NONE;
  if (isinf(v)) return f->spec == SPEC_IEEE;
  if (v == 0 || (f->spec == SPEC_E8M0 && v < 0)) return f->spec != SPEC_E8M0 || v == 0;
  bool ovf;
  encode_mag(f, fabs(v), &ovf);
  return !ovf;
}

/* ---- element load / store ------------------------------------------------ */

static uint64_t load_bits(HloDtype t, const void *p) {
  switch (hlc_dtype_size(t)) {
  case 1: return *(const uint8_t *)p;
  case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
  case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
  default: { uint64_t v; memcpy(&v, p, 8); return v; }
  }
}

static void store_bits(HloDtype t, void *p, uint64_t b) {
  switch (hlc_dtype_size(t)) {
  case 1: *(uint8_t *)p = (uint8_t)b; break;
  case 2: { uint16_t v = (uint16_t)b; memcpy(p, &v, 2); break; }
  case 4: { uint32_t v = (uint32_t)b; memcpy(p, &v, 4); break; }
  default: memcpy(p, &b, 8); break;
  }
}

/* Integer element as int64 (u64 above INT64_MAX keeps its bit pattern). */
static int64_t load_int(HloDtype t, const void *p) {
  uint64_t b = load_bits(t, p);
  int bits = hlc_dtype_bits(t);
  if (t == HLO_PRED) return b != 0;
  if (hlc_dtype_kind(t) == HLO_KIND_SINT && bits < 64) {
    /* Sub-byte signed types are stored sign-extended, but be tolerant. */
    uint64_t m = (uint64_t)1 << (bits - 1);
    b &= ((uint64_t)1 << bits) - 1;
    return (int64_t)((b ^ m) - m);
  }
  if (bits < 64) b &= ((uint64_t)1 << bits) - 1;
  return (int64_t)b;
}

double hlc_load_f64(HloDtype t, const void *p) {
  if (t == HLO_C64) { float f; memcpy(&f, p, 4); return f; }
  if (t == HLO_C128) { double d; memcpy(&d, p, 8); return d; }
  if (hlc_dtype_is_float(t)) return hlc_float_bits_to_f64(t, load_bits(t, p));
  if (t == HLO_U64) return (double)(uint64_t)load_int(t, p);
  return (double)load_int(t, p);
}

/* XLA's float -> integer conversion: truncate toward zero, saturate at the
 * type's range, NaN -> 0. */
static int64_t f64_to_int_sat(double v, int64_t lo, uint64_t hi, bool *big) {
  *big = false;
  if (isnan(v)) return 0;
  double t = trunc(v);
  if (t <= (double)lo) return lo;
  if (hi == UINT64_MAX) {
    if (t >= 0x1p64) { *big = true; return (int64_t)UINT64_MAX; }
    if (t >= 0x1p63) { *big = true; return (int64_t)(uint64_t)t; }
    return (int64_t)t;
  }
  if (t >= (double)hi) return (int64_t)hi;   /* also covers INT64_MAX rounding up */
  return (int64_t)t;
}

int64_t hlc_load_i64(HloDtype t, const void *p) {
  if (hlc_dtype_is_int(t) || t == HLO_PRED) return load_int(t, p);
  bool big;
  return f64_to_int_sat(hlc_load_f64(t, p), INT64_MIN, (uint64_t)INT64_MAX, &big);
}

static void store_int_wrapped(HloDtype t, void *p, uint64_t b) {
  int bits = hlc_dtype_bits(t);
  if (bits < 8 && hlc_dtype_kind(t) == HLO_KIND_SINT) {
    uint64_t m = (uint64_t)1 << (bits - 1);
    b &= ((uint64_t)1 << bits) - 1;
    b = (b ^ m) - m;   /* sign-extend into the byte */
  } else if (bits < 8) {
    b &= ((uint64_t)1 << bits) - 1;
  }
  store_bits(t, p, b);
}

void hlc_store_f64(HloDtype t, void *p, double v) {
  if (t == HLO_C64) { float f[2] = {(float)v, 0}; memcpy(p, f, 8); return; }
  if (t == HLO_C128) { double d[2] = {v, 0}; memcpy(p, d, 16); return; }
  if (hlc_dtype_is_float(t)) { store_bits(t, p, hlc_float_bits_from_f64(t, v)); return; }
  if (t == HLO_PRED) { *(uint8_t *)p = v != 0; return; }
  int64_t lo;
  uint64_t hi;
  if (!int_range(t, &lo, &hi)) return;
  bool big;
  store_int_wrapped(t, p, (uint64_t)f64_to_int_sat(v, lo, hi, &big));
}

void hlc_store_i64(HloDtype t, void *p, int64_t v) {
  if (t == HLO_PRED) { *(uint8_t *)p = v != 0; return; }
  if (hlc_dtype_is_int(t)) { store_int_wrapped(t, p, (uint64_t)v); return; }
  if (t == HLO_F64 || t == HLO_C128) { hlc_store_f64(t, p, (double)v); return; }
  /* XLA converts integers to narrow floats through f32 (Eigen and ml_dtypes
   * construct from static_cast<float>), so round to f32 first. */
  float f = (float)v;
  if (t == HLO_C64) { float c[2] = {f, 0}; memcpy(p, c, 8); return; }
  if (hlc_dtype_is_float(t)) store_bits(t, p, hlc_float_bits_from_f32(t, f));
}

void hlc_store_iota(HloDtype t, void *dst, int64_t n) {
  size_t es = hlc_dtype_size(t);
  for (int64_t i = 0; i < n; i++) hlc_store_i64(t, (char *)dst + (size_t)i * es, i);
}

/* ---- text ---------------------------------------------------------------- */

static int put(char *buf, size_t n, const char *s) {
  return snprintf(buf, n, "%s", s);
}

/* A float of format t with bits b, as XLA's RoundTripFpToString writes it. */
static int format_float(HloDtype t, uint64_t b, char *buf, size_t n) {
  char tmp[64];
  const FloatFmt *f = fmt_of(t);
  double v = hlc_float_bits_to_f64(t, b);
  if (t == HLO_F32) {
    /* Try 6 significant digits (digits10); if that does not read back as the
     * same float, use 9 (max_digits10). */
    float fv = (float)v;
    snprintf(tmp, sizeof tmp, "%.6g", v);
    if (!isnan(v) && strtof(tmp, NULL) != fv) snprintf(tmp, sizeof tmp, "%.9g", v);
  } else if (t == HLO_F64) {
    snprintf(tmp, sizeof tmp, "%.15g", v);
    if (!isnan(v) && strtod(tmp, NULL) != v) snprintf(tmp, sizeof tmp, "%.17g", v);
  } else {
    snprintf(tmp, sizeof tmp, "%.*g", f->max_digits10, v);
  }
  /* NaN payloads, for formats that have them (the IEEE-like ones): the
   * mantissa bits unless they are exactly the default quiet NaN. */
  if (isnan(v) && f->spec == SPEC_IEEE) {
    uint64_t payload = b & (((uint64_t)1 << f->mbits) - 1);
    if (payload != (uint64_t)1 << (f->mbits - 1)) {
      size_t l = strlen(tmp);
      snprintf(tmp + l, sizeof tmp - l, "(0x%llx)", (unsigned long long)payload);
    }
  }
  return put(buf, n, tmp);
}

int hlc_format_element(HloDtype t, const void *p, char *buf, size_t n) {
  char tmp[160];
  if (n > 0) buf[0] = 0;
  if (t == HLO_PRED) return put(buf, n, *(const uint8_t *)p ? "true" : "false");
  if (hlc_dtype_is_int(t)) {
    int64_t v = load_int(t, p);
    if (hlc_dtype_kind(t) == HLO_KIND_UINT)
      snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)(uint64_t)v);
    else
      snprintf(tmp, sizeof tmp, "%lld", (long long)v);
    return put(buf, n, tmp);
  }
  if (hlc_dtype_is_float(t)) return format_float(t, load_bits(t, p), buf, n);
  if (t == HLO_C64 || t == HLO_C128) {
    HloDtype part = t == HLO_C64 ? HLO_F32 : HLO_F64;
    size_t w = t == HLO_C64 ? 4 : 8;
    char re[64], im[64];
    format_float(part, load_bits(part, p), re, sizeof re);
    format_float(part, load_bits(part, (const char *)p + w), im, sizeof im);
    snprintf(tmp, sizeof tmp, "(%s, %s)", re, im);
    return put(buf, n, tmp);
  }
  return put(buf, n, "?");
}
