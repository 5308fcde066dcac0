/* gemm_cvt.c: element conversions around dot and convolution.
 *
 * XLA's evaluator converts each operand to the result type, multiplies and
 * accumulates in a "compute type" (f32 for f16/bf16, the type itself
 * otherwise; integers wrap), then converts once to the result type. These
 * functions do the two conversions in bulk: operand -> (result type) ->
 * compute type, and compute type -> result type. Loops are specialised per
 * type pair outside the element loop; only mixed-kind pairs (e.g. an integer
 * operand of a float dot), which are rare, go element by element through a
 * generic number. The plan-time check that the operand types convert
 * (hlk_check_operand_types) is here too, shared by dot and convolution.
 *
 * f16 and bf16 are converted here directly (round to nearest even) because
 * these loops are on the fast path of every bf16 matmul; the one-byte float
 * families (f8*, f4e2m1fn) decode through a 256-entry table and encode
 * through common/numeric.
 */
#include "interp/kernels/gemm.h"
#include "common/numeric.h"
#include "interp/kernels/vectorize.h"
#include <complex.h>
#include <math.h>
#include <string.h>

/* ---- Narrow floats ------------------------------------------------------ */

static inline float f32_from_bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t bits_from_f32(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

#define bf16_to_f32 hlk_bf16_to_f32
#define f16_to_f32 hlk_f16_to_f32

static inline uint16_t f32_to_bf16(float f) {
  uint32_t u = bits_from_f32(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);   /* quiet NaN */
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static inline uint16_t f32_to_f16(float f) {
  uint32_t u = bits_from_f32(f);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00u | (uint16_t)((a >> 13) & 0x3ffu);   /* NaN */
  if (a >= 0x477ff000u) return sign | 0x7c00u;   /* >= 65520 rounds to infinity */
  if (a < 0x38800000u)                            /* below 2^-14: subnormal or zero */
    return sign | (uint16_t)nearbyintf(f32_from_bits(a) * 16777216.0f);
  uint32_t r = a - 0x38000000u;                   /* rebias exponent 127 -> 15 */
  return sign | (uint16_t)((r + 0x0fffu + ((r >> 13) & 1u)) >> 13);
}

/* Floats narrower than f32, all accumulated in f32. */
static bool is_narrow(HloDtype t) {
  return hlc_dtype_is_float(t) && t != HLO_F32 && t != HLO_F64;
}

/* Bits of a narrow float at p (one or two bytes). */
static inline uint32_t narrow_bits(HloDtype t, const void *p) {
  return hlc_dtype_size(t) == 1 ? *(const uint8_t *)p : *(const uint16_t *)p;
}

static float narrow_to_f32(HloDtype t, uint32_t bits) {
  if (t == HLO_BF16) return bf16_to_f32((uint16_t)bits);
  if (t == HLO_F16) return f16_to_f32((uint16_t)bits);
  return hlc_float_bits_to_f32(t, bits);
}

static uint32_t f32_to_narrow(HloDtype t, float f) {
  if (t == HLO_BF16) return f32_to_bf16(f);
  if (t == HLO_F16) return f32_to_f16(f);
  return (uint32_t)hlc_float_bits_from_f32(t, f);
}

/* ---- Compute types ------------------------------------------------------ */

HlkCType hlk_ctype_for(HloDtype r) {
  switch (r) {
  case HLO_F32: return HLK_CT_F32;
  case HLO_F64: return HLK_CT_F64;
  case HLO_C64: return HLK_CT_C64;
  case HLO_C128: return HLK_CT_C128;
  case HLO_PRED: return HLK_CT_I64;      /* 0/1 products summed: > 0 is OR of ANDs */
  default: break;
  }
  if (hlc_dtype_is_int(r)) return HLK_CT_I64;
  if (is_narrow(r)) return HLK_CT_F32;
  return HLK_CT_NONE;
}

size_t hlk_ctype_size(HlkCType c) {
  switch (c) {
  case HLK_CT_F32: return 4;
  case HLK_CT_F64: case HLK_CT_I64: return 8;
  case HLK_CT_C64: return 8;
  case HLK_CT_C128: return 16;
  default: return 1;
  }
}

static bool numeric_ok(HloDtype t) {
  return t == HLO_PRED || hlc_dtype_is_int(t) || hlc_dtype_is_float(t) || t == HLO_C64 ||
         t == HLO_C128;
}

bool hlk_operand_convertible(HloDtype from, HloDtype to) {
  if (!numeric_ok(from) || !numeric_ok(to) || hlk_ctype_for(to) == HLK_CT_NONE) return false;
  return !(hlc_dtype_is_complex(from) && !hlc_dtype_is_complex(to));
}

int hlk_check_operand_types(HliExec *x, const HloInstr *ins, const char *what) {
  const HloShape *ls = &ins->ops[0]->shape, *rs = &ins->ops[1]->shape, *os = &ins->shape;
  if (!hlc_dtype_is_array(ls->dtype) || !hlc_dtype_is_array(rs->dtype) ||
      !hlc_dtype_is_array(os->dtype))
    return hli_fail(x, ins, "%s operands and result must be arrays", what);
  if (!hlk_operand_convertible(ls->dtype, os->dtype) ||
      !hlk_operand_convertible(rs->dtype, os->dtype))
    return hli_unsupported(x, ins, "%s of %s and %s to %s", what, hlc_dtype_name(ls->dtype),
                           hlc_dtype_name(rs->dtype), hlc_dtype_name(os->dtype));
  return 0;
}

/* ---- Integers ----------------------------------------------------------- */

/* Keep the low `bits` bits of v, sign-extended if the type is signed: the
 * wrap-around of XLA integer arithmetic and conversion. */
static inline int64_t wrap_bits(uint64_t v, int bits, bool is_signed) {
  if (bits >= 64) return (int64_t)v;
  uint64_t mask = (1ull << bits) - 1;
  v &= mask;
  if (is_signed && ((v >> (bits - 1)) & 1u)) v |= ~mask;
  return (int64_t)v;
}

/* Read n integers of type t (any width, stored in 1/2/4/8 bytes) as int64
 * (unsigned values zero-extended, so u64 keeps its bit pattern). */
static void load_ints(HloDtype t, const void *src, int64_t n, int64_t *dst) {
  int bits = hlc_dtype_bits(t);
  bool sgn = hlc_dtype_kind(t) == HLO_KIND_SINT;
  switch (hlc_dtype_size(t)) {
#define LOAD_INTS(ST, UT)                                                               \
  if (sgn) { const ST *s = src; for (int64_t i = 0; i < n; i++) dst[i] = wrap_bits((uint64_t)(int64_t)s[i], bits, true); } \
  else { const UT *s = src; for (int64_t i = 0; i < n; i++) dst[i] = wrap_bits(s[i], bits, false); } \
  break;
  case 1: LOAD_INTS(int8_t, uint8_t)
  case 2: LOAD_INTS(int16_t, uint16_t)
  case 4: LOAD_INTS(int32_t, uint32_t)
  default: LOAD_INTS(int64_t, uint64_t)
#undef LOAD_INTS
  }
}

static void store_ints(HloDtype t, const int64_t *src, int64_t n, void *dst) {
  int bits = hlc_dtype_bits(t);
  bool sgn = hlc_dtype_kind(t) == HLO_KIND_SINT;
  if (t == HLO_PRED) {
    uint8_t *d = dst;
    for (int64_t i = 0; i < n; i++) d[i] = src[i] != 0;
    return;
  }
  switch (hlc_dtype_size(t)) {
#define STORE_INTS(UT)                                                                  \
  { UT *d = dst; for (int64_t i = 0; i < n; i++) d[i] = (UT)wrap_bits((uint64_t)src[i], bits, sgn); } \
  break;
  case 1: STORE_INTS(uint8_t)
  case 2: STORE_INTS(uint16_t)
  case 4: STORE_INTS(uint32_t)
  default: STORE_INTS(uint64_t)
#undef STORE_INTS
  }
}

/* ---- Generic element path (mixed kinds only) ---------------------------- */

/* One element as a wide number. */
typedef struct Num { bool is_int, is_unsigned; int64_t i; double re, im; } Num;

static Num num_load(HloDtype t, const void *p) {
  Num v = {0};
  if (is_narrow(t)) { v.re = narrow_to_f32(t, narrow_bits(t, p)); return v; }
  switch (t) {
  case HLO_F32: v.re = *(const float *)p; return v;
  case HLO_F64: v.re = *(const double *)p; return v;
  case HLO_C64: v.re = crealf(*(const float complex *)p); v.im = cimagf(*(const float complex *)p); return v;
  case HLO_C128: v.re = creal(*(const double complex *)p); v.im = cimag(*(const double complex *)p); return v;
  default: break;
  }
  v.is_int = true;
  v.is_unsigned = hlc_dtype_kind(t) == HLO_KIND_UINT;
  load_ints(t, p, 1, &v.i);
  return v;
}

/* Saturating float -> integer conversion (NaN -> 0), as XLA's convert. */
static int64_t float_to_int(double d, HloDtype t) {
  if (isnan(d)) return 0;
  int bits = hlc_dtype_bits(t);
  if (t == HLO_PRED) return d != 0;
  if (hlc_dtype_kind(t) == HLO_KIND_UINT) {
    if (d <= 0) return 0;
    double hi = bits >= 64 ? 18446744073709551615.0 : (double)((1ull << bits) - 1);
    if (d >= hi) return bits >= 64 ? (int64_t)UINT64_MAX : (int64_t)((1ull << bits) - 1);
    return (int64_t)(uint64_t)d;
  }
  double hi = ldexp(1.0, bits - 1);
  if (d >= hi) return (int64_t)((1ull << (bits - 1)) - 1);
  if (d < -hi) return bits >= 64 ? INT64_MIN : -(int64_t)(1ull << (bits - 1));
  return (int64_t)d;
}

/* Convert v to type `to` and widen to its compute type at dst. */
static void num_to_ctype(Num v, HloDtype to, void *dst) {
  switch (hlk_ctype_for(to)) {
  case HLK_CT_F32: {
    float f = v.is_int ? (v.is_unsigned ? (float)(uint64_t)v.i : (float)v.i) : (float)v.re;
    if (to != HLO_F32) f = narrow_to_f32(to, f32_to_narrow(to, f));
    *(float *)dst = f;
    return;
  }
  case HLK_CT_F64:
    *(double *)dst = v.is_int ? (v.is_unsigned ? (double)(uint64_t)v.i : (double)v.i) : v.re;
    return;
  case HLK_CT_C64: {
    float re = v.is_int ? (v.is_unsigned ? (float)(uint64_t)v.i : (float)v.i) : (float)v.re;
    *(float complex *)dst = CMPLXF(re, (float)v.im);
    return;
  }
  case HLK_CT_C128: {
    double re = v.is_int ? (v.is_unsigned ? (double)(uint64_t)v.i : (double)v.i) : v.re;
    *(double complex *)dst = CMPLX(re, v.im);
    return;
  }
  case HLK_CT_I64: {
    int64_t i;
    if (to == HLO_PRED) i = v.is_int ? v.i != 0 : v.re != 0;
    else if (v.is_int) i = wrap_bits((uint64_t)v.i, hlc_dtype_bits(to), hlc_dtype_kind(to) == HLO_KIND_SINT);
    else i = float_to_int(v.re, to);
    *(int64_t *)dst = i;
    return;
  }
  default: return;
  }
}

/* ---- Bulk conversions --------------------------------------------------- */

/* The hot bf16 loops of every bf16 matmul, vectorized (exact bit recipes). */
HLK_VECTORIZE static void bf16_to_f32_loop(const uint16_t *restrict s, float *restrict d, int64_t n) {
  for (int64_t i = 0; i < n; i++) d[i] = bf16_to_f32(s[i]);
}
HLK_VECTORIZE static void f32_to_bf16_loop(const float *restrict s, uint16_t *restrict d, int64_t n) {
  for (int64_t i = 0; i < n; i++) d[i] = f32_to_bf16(s[i]);
}

void hlk_load_ctype(HloDtype from, HloDtype to, const void *src, int64_t n, void *dst) {
  HlkCType ct = hlk_ctype_for(to);
  /* Fast pairs: the operand is already the result type, or widening to the
   * result type is exact so the result-type step changes nothing. */
  if (ct == HLK_CT_F32 && from == HLO_F32 && to == HLO_F32) { memcpy(dst, src, (size_t)n * 4); return; }
  if ((ct == HLK_CT_F32 && is_narrow(from) && (to == from || to == HLO_F32)) ||
      (ct == HLK_CT_F64 && is_narrow(from))) {
    /* Exact widening of a narrow float. */
    float *d = dst;
    double *dd = dst;
    bool wide = ct == HLK_CT_F64;
    if (from == HLO_BF16) {
      const uint16_t *s = src;
      if (wide) for (int64_t i = 0; i < n; i++) dd[i] = bf16_to_f32(s[i]);
      else bf16_to_f32_loop(s, d, n);
    } else if (from == HLO_F16) {
      const uint16_t *s = src;
      if (wide) for (int64_t i = 0; i < n; i++) dd[i] = f16_to_f32(s[i]);
      else for (int64_t i = 0; i < n; i++) d[i] = f16_to_f32(s[i]);
    } else {
      float table[256];
      for (int b = 0; b < 256; b++) table[b] = hlc_float_bits_to_f32(from, (uint64_t)b);
      const uint8_t *s = src;
      if (wide) for (int64_t i = 0; i < n; i++) dd[i] = table[s[i]];
      else for (int64_t i = 0; i < n; i++) d[i] = table[s[i]];
    }
    return;
  }
  if (ct == HLK_CT_F32 && from == HLO_F32) {
    /* f32 operand of a narrow-float result: round to the result type first. */
    const float *s = src;
    float *d = dst;
    if (to == HLO_BF16) for (int64_t i = 0; i < n; i++) d[i] = bf16_to_f32(f32_to_bf16(s[i]));
    else if (to == HLO_F16) for (int64_t i = 0; i < n; i++) d[i] = f16_to_f32(f32_to_f16(s[i]));
    else for (int64_t i = 0; i < n; i++) d[i] = narrow_to_f32(to, f32_to_narrow(to, s[i]));
    return;
  }
  if (ct == HLK_CT_F64 && (from == HLO_F64 || from == HLO_F32)) {
    double *d = dst;
    if (from == HLO_F64) { memcpy(d, src, (size_t)n * 8); return; }
    const float *s = src;
    for (int64_t i = 0; i < n; i++) d[i] = s[i];
    return;
  }
  if (ct == HLK_CT_C64 && from == HLO_C64) { memcpy(dst, src, (size_t)n * 8); return; }
  if (ct == HLK_CT_C128 && from == HLO_C128) { memcpy(dst, src, (size_t)n * 16); return; }
  if (ct == HLK_CT_C128 && from == HLO_C64) {
    const float complex *s = src;
    double complex *d = dst;
    for (int64_t i = 0; i < n; i++) d[i] = s[i];
    return;
  }
  if (ct == HLK_CT_I64 && (hlc_dtype_is_int(from) || from == HLO_PRED)) {
    int64_t *d = dst;
    load_ints(from, src, n, d);
    if (to == HLO_PRED) { for (int64_t i = 0; i < n; i++) d[i] = d[i] != 0; return; }
    int bits = hlc_dtype_bits(to);
    bool sgn = hlc_dtype_kind(to) == HLO_KIND_SINT;
    if (bits < 64) for (int64_t i = 0; i < n; i++) d[i] = wrap_bits((uint64_t)d[i], bits, sgn);
    return;
  }
  /* Mixed kinds (integer operand of a float result, float operand of an
   * integer result, real operand of a complex result, ...): rare. */
  size_t fs = hlc_dtype_size(from), cs = hlk_ctype_size(ct);
  for (int64_t i = 0; i < n; i++)
    num_to_ctype(num_load(from, (const char *)src + (size_t)i * fs), to, (char *)dst + (size_t)i * cs);
}

void hlk_store_ctype(HloDtype to, const void *src, int64_t n, void *dst) {
  switch (to) {
  case HLO_F32: memcpy(dst, src, (size_t)n * 4); return;
  case HLO_F64: memcpy(dst, src, (size_t)n * 8); return;
  case HLO_C64: memcpy(dst, src, (size_t)n * 8); return;
  case HLO_C128: memcpy(dst, src, (size_t)n * 16); return;
  case HLO_BF16:
    f32_to_bf16_loop(src, dst, n);
    return;
  case HLO_F16: {
    const float *s = src;
    uint16_t *d = dst;
    for (int64_t i = 0; i < n; i++) d[i] = f32_to_f16(s[i]);
    return;
  }
  default: break;
  }
  if (is_narrow(to)) {   /* one-byte floats */
    const float *s = src;
    uint8_t *d = dst;
    for (int64_t i = 0; i < n; i++) d[i] = (uint8_t)f32_to_narrow(to, s[i]);
    return;
  }
  store_ints(to, src, n, dst);
}

/* ---- 32-bit integer lanes ----------------------------------------------- */

int hlk_int_lanes(HloDtype to, int64_t k) {
  if (to == HLO_PRED) return k < ((int64_t)1 << 32) ? 32 : 64;
  return hlc_dtype_bits(to) <= 32 ? 32 : 64;
}

/* Sign- or zero-extension to 32 bits, vectorized per source width. */
#define DEFINE_EXTEND(NAME, ST)                                                          \
  HLK_VECTORIZE static void NAME(const ST *restrict s, uint32_t *restrict d, int64_t n) { \
    for (int64_t i = 0; i < n; i++) d[i] = (uint32_t)s[i];                               \
  }
DEFINE_EXTEND(extend_s8, int8_t)
DEFINE_EXTEND(extend_u8, uint8_t)
DEFINE_EXTEND(extend_s16, int16_t)
DEFINE_EXTEND(extend_u16, uint16_t)
DEFINE_EXTEND(extend_64, uint64_t)   /* truncation */

void hlk_load_u32(HloDtype from, HloDtype to, const void *src, int64_t n, uint32_t *dst) {
  /* Whole-byte integer operands of a non-pred result: the operand's own
   * value modulo 2^32. XLA converts it to the result type first, but that
   * conversion keeps the value modulo 2^bits(to), and so do the products
   * and sums the final store truncates to bits(to). */
  if (to != HLO_PRED && hlc_dtype_is_int(from) && hlc_dtype_bits(from) == 8 * (int)hlc_dtype_size(from)) {
    bool sgn = hlc_dtype_kind(from) == HLO_KIND_SINT;
    switch (hlc_dtype_size(from)) {
    case 1: if (sgn) extend_s8(src, dst, n); else extend_u8(src, dst, n); return;
    case 2: if (sgn) extend_s16(src, dst, n); else extend_u16(src, dst, n); return;
    case 4: memcpy(dst, src, (size_t)n * 4); return;
    default: extend_64(src, dst, n); return;
    }
  }
  /* Sub-byte integers, pred results and other kinds: the exact int64
   * conversion, a chunk at a time, keeping the low 32 bits. */
  int64_t buf[512];
  size_t fs = hlc_dtype_size(from);
  for (int64_t i = 0; i < n; i += 512) {
    int64_t m = n - i < 512 ? n - i : 512;
    hlk_load_ctype(from, to, (const char *)src + (size_t)i * fs, m, buf);
    for (int64_t j = 0; j < m; j++) dst[i + j] = (uint32_t)buf[j];
  }
}

bool hlk_fits_i16(HloDtype from, HloDtype to) {
  if (hlk_int_lanes(to, 0) != 32 || hlk_ctype_for(to) != HLK_CT_I64) return false;
  if (to == HLO_PRED) return true;   /* 0/1 */
  if (from == HLO_PRED || from == HLO_S16) return true;
  return hlc_dtype_is_int(from) && hlc_dtype_bits(from) <= 8;
}

HLK_VECTORIZE static void s8_to_i16(const int8_t *restrict s, int16_t *restrict d, int64_t n) {
  for (int64_t i = 0; i < n; i++) d[i] = s[i];
}
HLK_VECTORIZE static void u8_to_i16(const uint8_t *restrict s, int16_t *restrict d, int64_t n) {
  for (int64_t i = 0; i < n; i++) d[i] = s[i];
}

void hlk_load_i16(HloDtype from, HloDtype to, const void *src, int64_t n, int16_t *dst) {
  if (to != HLO_PRED && from == HLO_S8) { s8_to_i16(src, dst, n); return; }
  if (to != HLO_PRED && from == HLO_U8) { u8_to_i16(src, dst, n); return; }
  if (to != HLO_PRED && from == HLO_S16) { memcpy(dst, src, (size_t)n * 2); return; }
  /* Sub-byte operands and pred results: the 32-bit lanes' value, which is
   * the operand's (at most 8 bits) or 0/1. */
  uint32_t buf[512];
  for (int64_t i = 0; i < n; i += 512) {
    int64_t m = n - i < 512 ? n - i : 512;
    hlk_load_u32(from, to, (const char *)src + (size_t)i * hlc_dtype_size(from), m, buf);
    for (int64_t j = 0; j < m; j++) dst[i + j] = (int16_t)buf[j];
  }
}

#define DEFINE_NARROW(NAME, UT)                                                           \
  HLK_VECTORIZE static void NAME(const uint32_t *restrict s, UT *restrict d, int64_t n, \
                                 int bits, bool sgn) {                                    \
    uint32_t mask = bits >= 32 ? 0xffffffffu : (1u << bits) - 1u;                         \
    int up = 32 - bits;                                                                   \
    for (int64_t i = 0; i < n; i++)                                                       \
      d[i] = (UT)(sgn ? (uint32_t)((int32_t)(s[i] << up) >> up) : s[i] & mask);           \
  }
DEFINE_NARROW(narrow_u8, uint8_t)
DEFINE_NARROW(narrow_u16, uint16_t)

void hlk_store_u32(HloDtype to, const uint32_t *src, int64_t n, void *dst) {
  if (to == HLO_PRED) {
    uint8_t *d = dst;
    for (int64_t i = 0; i < n; i++) d[i] = src[i] != 0;
    return;
  }
  int bits = hlc_dtype_bits(to);
  bool sgn = hlc_dtype_kind(to) == HLO_KIND_SINT;
  switch (hlc_dtype_size(to)) {
  case 1: narrow_u8(src, dst, n, bits, sgn); return;
  case 2: narrow_u16(src, dst, n, bits, sgn); return;
  default: memcpy(dst, src, (size_t)n * 4); return;
  }
}

/* ---- Layout helpers ----------------------------------------------------- */

void hlk_permute_copy(const void *src, const int64_t *dims, int rank, const int *perm,
                      size_t esize, void *dst) {
  int64_t sstr[HLK_MAX_RANK], odims[HLK_MAX_RANK], ostr[HLK_MAX_RANK], idx[HLK_MAX_RANK];
  int64_t total = 1;
  hli_strides(dims, rank, sstr);
  for (int i = 0; i < rank; i++) {
    odims[i] = dims[perm[i]];
    ostr[i] = sstr[perm[i]];     /* source stride of destination dim i */
    total *= odims[i];
    idx[i] = 0;
  }
  if (total == 0) return;
  if (rank == 0) { memcpy(dst, src, esize); return; }
  int64_t inner = odims[rank - 1], istride = ostr[rank - 1];
  int64_t rows = total / inner, off = 0;
  char *d = dst;
  for (int64_t r = 0; r < rows; r++) {
    switch (esize) {
#define COPY_ROW(T)                                                              \
  { const T *s = (const T *)src + off; T *o = (T *)d;                            \
    for (int64_t j = 0; j < inner; j++) o[j] = s[j * istride]; } break;
    case 1: COPY_ROW(uint8_t)
    case 2: COPY_ROW(uint16_t)
    case 4: COPY_ROW(uint32_t)
    case 8: COPY_ROW(uint64_t)
    default: COPY_ROW(double complex)
#undef COPY_ROW
    }
    d += (size_t)inner * esize;
    /* Advance the odometer over the outer destination dims. */
    for (int i = rank - 2; i >= 0; i--) {
      off += ostr[i];
      if (++idx[i] < odims[i]) break;
      off -= ostr[i] * odims[i];
      idx[i] = 0;
    }
  }
}

bool hlk_collapse_dims(const int64_t *dims, const int64_t *strides, const int64_t *d, int n,
                       int64_t *stride) {
  /* Walk from the innermost listed dim outwards; size-1 dims never matter. */
  int64_t expect = -1, extent = 1;
  *stride = 0;
  for (int i = n - 1; i >= 0; i--) {
    int64_t sz = dims[d[i]];
    if (sz == 1) continue;
    if (expect < 0) *stride = strides[d[i]];
    else if (strides[d[i]] != expect) return false;
    extent *= sz;
    expect = strides[d[i]] * sz;
  }
  (void)extent;
  return true;
}
