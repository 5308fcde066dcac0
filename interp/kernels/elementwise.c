/* elementwise.c: unary and binary arithmetic, logical, bit and math ops,
 * for every element type each accepts, with XLA's semantics (those of its
 * reference evaluator):
 *   integers wrap; x / 0 = -1 (all bits set, also unsigned), x % 0 = x,
 *   INT_MIN / -1 = INT_MIN, INT_MIN % -1 = 0; shifts by >= the width give 0
 *   (arithmetic right: the sign fill); integer power: x^0 = 1, 1^y = 1,
 *   negative exponents give 0 for every other base (also -1);
 *   maximum/minimum propagate NaN (the first NaN operand wins);
 *   remainder of floats is fmod; sign(NaN) = NaN, sign(+-0) = +-0;
 *   round-nearest-afz is round(), round-nearest-even is nearbyint();
 *   pred: add/or/maximum = OR, multiply/and/minimum = AND, subtract/xor = XOR.
 * Each op is a table [op][dtype] of array loops stamped per C type; narrow
 * floats use the f32 loop (elementwise_run.c rounds once), sub-byte ints the
 * 8-bit loop. Transcendentals go through the dispatched SLEEF table.
 * Not here: compare/select/clamp (elementwise_cmp.c), conversions (convert.c). */
#include <complex.h>
#include <math.h>
#include <string.h>
#include "interp/kernels/elementwise.h"
#include "interp/kernels/register.h"

/* ---- op lists ----------------------------------------------------------- */

/* X(internal id, opcode id) */
#define UNARY_OPS(X)                                                            \
  X(ABS, ABS) X(NEG, NEGATE) X(NOT, NOT) X(SIGN, SIGN) X(CEIL, CEIL)            \
  X(FLOOR, FLOOR) X(RAFZ, ROUND_NEAREST_AFZ) X(RNE, ROUND_NEAREST_EVEN)         \
  X(SQRT, SQRT) X(RSQRT, RSQRT) X(CBRT, CBRT) X(EXP, EXPONENTIAL)               \
  X(EXPM1, EXPONENTIAL_MINUS_ONE) X(LOG, LOG) X(LOG1P, LOG_PLUS_ONE)            \
  X(LOGISTIC, LOGISTIC) X(SIN, SINE) X(COS, COSINE) X(TAN, TAN) X(TANH, TANH)   \
  X(ERF, ERF) X(ACOS, ACOS) X(ACOSH, ACOSH) X(ASIN, ASIN) X(ASINH, ASINH)       \
  X(ATANH, ATANH) X(COSH, COSH) X(SINH, SINH) X(ISFINITE, IS_FINITE)            \
  X(REAL, REAL) X(IMAG, IMAG) X(POPCNT, POPCNT) X(CLZ, COUNT_LEADING_ZEROS)

#define BINARY_OPS(X)                                                           \
  X(ADD, ADD) X(SUB, SUBTRACT) X(MUL, MULTIPLY) X(DIV, DIVIDE)                  \
  X(REM, REMAINDER) X(MAX, MAXIMUM) X(MIN, MINIMUM) X(POW, POWER)               \
  X(ATAN2, ATAN2) X(AND, AND) X(OR, OR) X(XOR, XOR) X(SHL, SHIFT_LEFT)          \
  X(SRA, SHIFT_RIGHT_ARITHMETIC) X(SRL, SHIFT_RIGHT_LOGICAL)

enum {
#define X(id, op) UN_##id,
  UNARY_OPS(X)
#undef X
  NUM_UN
};
enum {
#define X(id, op) BIN_##id,
  BINARY_OPS(X)
#undef X
  NUM_BIN
};

static HlkUnFn un_tab[NUM_UN][HLO_NUM_DTYPES];
static HlkBinFn bin_tab[NUM_BIN][HLO_NUM_DTYPES];

/* ---- loop templates ----------------------------------------------------- */

#define UN_LOOP_A(ATTR, name, T, OT, EXPR)                                      \
  ATTR static void name(const void *a_, void *o_, int64_t n, int bits) {             \
    const T *restrict a = a_;                                                   \
    OT *restrict o = o_;                                                        \
    (void)bits;                                                                 \
    for (int64_t i = 0; i < n; i++) {                                           \
      T x = a[i];                                                               \
      (void)x;                                                                  \
      o[i] = (EXPR);                                                            \
    }                                                                           \
  }
#define BIN_LOOP_A(ATTR, name, T, EXPR)                                         \
  ATTR static void name(const void *a_, const void *b_, void *o_, int64_t n, int bits) { \
    const T *restrict a = a_;                                                   \
    const T *restrict b = b_;                                                   \
    T *restrict o = o_;                                                         \
    (void)bits;                                                                 \
    for (int64_t i = 0; i < n; i++) {                                           \
      T x = a[i], y = b[i];                                                     \
      o[i] = (EXPR);                                                            \
    }                                                                           \
  }

/* Real and integer loops are vectorized; complex ones call libm per element
 * and stay plain. */
#define UN_LOOP(name, T, OT, EXPR) UN_LOOP_A(HLK_VECTORIZE, name, T, OT, EXPR)
#define BIN_LOOP(name, T, EXPR) BIN_LOOP_A(HLK_VECTORIZE, name, T, EXPR)
#define UN_LOOP_PLAIN(name, T, OT, EXPR) UN_LOOP_A(, name, T, OT, EXPR)
#define BIN_LOOP_PLAIN(name, T, EXPR) BIN_LOOP_A(, name, T, EXPR)

/* Integer types: X(ID, T, unsigned T, wide unsigned for * and -) */
#define SINT_TYPES(X)                                                           \
  X(S8, int8_t, uint8_t, uint32_t) X(S16, int16_t, uint16_t, uint32_t)          \
  X(S32, int32_t, uint32_t, uint32_t) X(S64, int64_t, uint64_t, uint64_t)
#define UINT_TYPES(X)                                                           \
  X(U8, uint8_t, uint8_t, uint32_t) X(U16, uint16_t, uint16_t, uint32_t)        \
  X(U32, uint32_t, uint32_t, uint32_t) X(U64, uint64_t, uint64_t, uint64_t)
#define INT_TYPES(X) SINT_TYPES(X) UINT_TYPES(X)

static inline uint64_t width_mask(int bits) {
  return bits >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1);
}

/* Integer power by squaring, wrapping like the type (XLA's rules, in both
 * its evaluator and its CPU emitter: x^0 = 1, 1^y = 1, any other base with a
 * negative y gives 0, even -1). NEG is the "y < 0" test (constant 0 for
 * unsigned types). */
#define IPOW(ID, T, U, W, NEG)                                                  \
  static inline T ipow_##ID(T x, T y) {                                         \
    if (x == 1 || y == 0) return 1;                                             \
    if (NEG) return 0;                                                          \
    W r = 1, b = (W)(U)x;                                                       \
    U e = (U)y;                                                                 \
    while (e) {                                                                 \
      if (e & 1) r *= b;                                                        \
      b *= b;                                                                   \
      e >>= 1;                                                                  \
    }                                                                           \
    return (T)(U)r;                                                             \
  }
#define IPOW_S(ID, T, U, W) IPOW(ID, T, U, W, y < 0)
#define IPOW_U(ID, T, U, W) IPOW(ID, T, U, W, 0)
SINT_TYPES(IPOW_S)
UINT_TYPES(IPOW_U)

#define INT_COMMON(ID, T, U, W)                                                 \
  BIN_LOOP(add_##ID, T, (T)(U)((W)(U)x + (W)(U)y))                              \
  BIN_LOOP(sub_##ID, T, (T)(U)((W)(U)x - (W)(U)y))                              \
  BIN_LOOP(mul_##ID, T, (T)(U)((W)(U)x * (W)(U)y))                              \
  BIN_LOOP(max_##ID, T, x < y ? y : x)                                          \
  BIN_LOOP(min_##ID, T, y < x ? y : x)                                          \
  BIN_LOOP(and_##ID, T, (T)(x & y))                                             \
  BIN_LOOP(or_##ID, T, (T)(x | y))                                              \
  BIN_LOOP(xor_##ID, T, (T)(x ^ y))                                             \
  BIN_LOOP(pow_##ID, T, ipow_##ID(x, y))                                        \
  UN_LOOP(neg_##ID, T, T, (T)(U)((W)0 - (W)(U)x))                               \
  UN_LOOP(not_##ID, T, T, (T)~x)                                                \
  static void shl_##ID(const void *a_, const void *b_, void *o_, int64_t n, int bits) { \
    const T *a = a_, *b = b_;                                                   \
    T *o = o_;                                                                  \
    for (int64_t i = 0; i < n; i++) {                                           \
      uint64_t s = (uint64_t)(U)b[i];                                           \
      o[i] = s >= (uint64_t)bits ? (T)0 : (T)(U)((uint64_t)(U)a[i] << s);        \
    }                                                                           \
  }                                                                             \
  static void srl_##ID(const void *a_, const void *b_, void *o_, int64_t n, int bits) { \
    const T *a = a_, *b = b_;                                                   \
    T *o = o_;                                                                  \
    uint64_t mask = width_mask(bits);                                           \
    for (int64_t i = 0; i < n; i++) {                                           \
      uint64_t s = (uint64_t)(U)b[i];                                           \
      o[i] = s >= (uint64_t)bits ? (T)0 : (T)(U)(((uint64_t)(U)a[i] & mask) >> s); \
    }                                                                           \
  }                                                                             \
  static void sra_##ID(const void *a_, const void *b_, void *o_, int64_t n, int bits) { \
    const T *a = a_, *b = b_;                                                   \
    T *o = o_;                                                                  \
    uint64_t mask = width_mask(bits), m = (uint64_t)1 << (bits - 1);            \
    for (int64_t i = 0; i < n; i++) {                                           \
      uint64_t s = (uint64_t)(U)b[i];                                           \
      /* the value as a signed number of `bits` bits */                         \
      int64_t v = (int64_t)((((uint64_t)(U)a[i] & mask) ^ m) - m);              \
      int64_t r = s >= (uint64_t)bits ? (v < 0 ? -1 : 0) : v >> s;              \
      o[i] = (T)(U)(uint64_t)r;                                                 \
    }                                                                           \
  }                                                                             \
  static void popcnt_##ID(const void *a_, void *o_, int64_t n, int bits) {      \
    const T *a = a_;                                                            \
    T *o = o_;                                                                  \
    uint64_t mask = width_mask(bits);                                           \
    for (int64_t i = 0; i < n; i++)                                             \
      o[i] = (T)__builtin_popcountll((uint64_t)(U)a[i] & mask);                 \
  }                                                                             \
  static void clz_##ID(const void *a_, void *o_, int64_t n, int bits) {         \
    const T *a = a_;                                                            \
    T *o = o_;                                                                  \
    uint64_t mask = width_mask(bits);                                           \
    for (int64_t i = 0; i < n; i++) {                                           \
      uint64_t v = (uint64_t)(U)a[i] & mask;                                    \
      o[i] = (T)(v ? __builtin_clzll(v) - (64 - bits) : bits);                  \
    }                                                                           \
  }
INT_TYPES(INT_COMMON)

#define SINT_ONLY(ID, T, U, W)                                                  \
  BIN_LOOP(div_##ID, T,                                                         \
           y == 0 ? (T)-1                                                       \
                  : (y == -1 ? (T)(U)((W)0 - (W)(U)x) : (T)(x / y)))            \
  BIN_LOOP(rem_##ID, T, y == 0 ? x : (y == -1 ? (T)0 : (T)(x % y)))             \
  UN_LOOP(abs_##ID, T, T, x < 0 ? (T)(U)((W)0 - (W)(U)x) : x)                   \
  UN_LOOP(sign_##ID, T, T, (T)((x > 0) - (x < 0)))
SINT_TYPES(SINT_ONLY)

#define UINT_ONLY(ID, T, U, W)                                                  \
  BIN_LOOP(div_##ID, T, y == 0 ? (T)~(T)0 : (T)(x / y))                         \
  BIN_LOOP(rem_##ID, T, y == 0 ? x : (T)(x % y))                                \
  UN_LOOP(abs_##ID, T, T, x)                                                    \
  UN_LOOP(sign_##ID, T, T, (T)(x != 0))
UINT_TYPES(UINT_ONLY)

/* pred: 0/1 bytes. */
BIN_LOOP(or_PRED, uint8_t, (uint8_t)((x | y) != 0))
BIN_LOOP(and_PRED, uint8_t, (uint8_t)((x & y) != 0))
BIN_LOOP(xor_PRED, uint8_t, (uint8_t)((x != 0) ^ (y != 0)))
UN_LOOP(not_PRED, uint8_t, uint8_t, (uint8_t)(x == 0))

/* ---- floats ------------------------------------------------------------- */

#define FLOAT_TYPES(X) X(F32, float, f, uf, bf) X(F64, double, , ud, bd)

#define FLOAT_OPS(ID, T, SFX, UT, BT)                                           \
  BIN_LOOP(add_##ID, T, x + y)                                                  \
  BIN_LOOP(sub_##ID, T, x - y)                                                  \
  BIN_LOOP(mul_##ID, T, x * y)                                                  \
  BIN_LOOP(div_##ID, T, x / y)                                                  \
  BIN_LOOP(rem_##ID, T, fmod##SFX(x, y))                                        \
  BIN_LOOP(max_##ID, T, isnan(x) ? x : (isnan(y) ? y : (x < y ? y : x)))        \
  BIN_LOOP(min_##ID, T, isnan(x) ? x : (isnan(y) ? y : (y < x ? y : x)))        \
  UN_LOOP(abs_##ID, T, T, fabs##SFX(x))                                         \
  UN_LOOP(neg_##ID, T, T, -x)                                                   \
  UN_LOOP(sign_##ID, T, T, isnan(x) ? x : copysign##SFX((T)(x != 0), x))        \
  UN_LOOP(ceil_##ID, T, T, ceil##SFX(x))                                        \
  UN_LOOP(floor_##ID, T, T, floor##SFX(x))                                      \
  UN_LOOP(rafz_##ID, T, T, round##SFX(x))                                       \
  UN_LOOP(rne_##ID, T, T, nearbyint##SFX(x))                                    \
  UN_LOOP(isfinite_##ID, T, uint8_t, (uint8_t)(isfinite(x) != 0))               \
  UN_LOOP(real_##ID, T, T, x)                                                   \
  UN_LOOP(imag_##ID, T, T, (T)0)                                                \
  static void pow_##ID(const void *a, const void *b, void *o, int64_t n, int bits) { \
    (void)bits;                                                                 \
    hlk_vmath()->BT[HLK_VM_POW](a, b, o, n);                                    \
  }                                                                             \
  static void atan2_##ID(const void *a, const void *b, void *o, int64_t n, int bits) { \
    (void)bits;                                                                 \
    hlk_vmath()->BT[HLK_VM_ATAN2](a, b, o, n);                                  \
  }
FLOAT_TYPES(FLOAT_OPS)

/* The float arithmetic with one operand a scalar (s: the element at b),
 * for fused groups whose operand is a scalar broadcast or a row value: the
 * same expression per element as the two-array loop, reading one stream. */
#define BIN_LOOP_SCALAR(name, T, EXPR)                                          \
  HLK_VECTORIZE static void name##_sr(const void *a_, const void *b_, void *o_, int64_t n, \
                                      int bits) {                               \
    const T *restrict a = a_;                                                   \
    T y = *(const T *)b_, *restrict o = o_;                                     \
    (void)bits;                                                                 \
    for (int64_t i = 0; i < n; i++) {                                           \
      T x = a[i];                                                               \
      o[i] = (EXPR);                                                            \
    }                                                                           \
  }                                                                             \
  HLK_VECTORIZE static void name##_sl(const void *a_, const void *b_, void *o_, int64_t n, \
                                      int bits) {                               \
    const T *restrict b = b_;                                                   \
    T x = *(const T *)a_, *restrict o = o_;                                     \
    (void)bits;                                                                 \
    for (int64_t i = 0; i < n; i++) {                                           \
      T y = b[i];                                                               \
      o[i] = (EXPR);                                                            \
    }                                                                           \
  }
#define FLOAT_SCALAR_OPS(ID, T, SFX, UT, BT)                                    \
  BIN_LOOP_SCALAR(add_##ID, T, x + y)                                           \
  BIN_LOOP_SCALAR(sub_##ID, T, x - y)                                           \
  BIN_LOOP_SCALAR(mul_##ID, T, x * y)                                           \
  BIN_LOOP_SCALAR(div_##ID, T, x / y)                                           \
  BIN_LOOP_SCALAR(max_##ID, T, isnan(x) ? x : (isnan(y) ? y : (x < y ? y : x))) \
  BIN_LOOP_SCALAR(min_##ID, T, isnan(x) ? x : (isnan(y) ? y : (y < x ? y : x)))
FLOAT_TYPES(FLOAT_SCALAR_OPS)

/* [op][type][side]: side 0 = the right operand is the scalar, 1 = the left. */
static HlkBinFn bins_tab[NUM_BIN][HLO_NUM_DTYPES][2];

/* Transcendentals: thunks into the dispatched vector table. */
#define VM_THUNK(UID, VMID)                                                     \
  static void vm_##UID##_F32(const void *a, void *o, int64_t n, int bits) {     \
    (void)bits;                                                                 \
    hlk_vmath()->uf[HLK_VM_##VMID](a, o, n);                                    \
  }                                                                             \
  static void vm_##UID##_F64(const void *a, void *o, int64_t n, int bits) {     \
    (void)bits;                                                                 \
    hlk_vmath()->ud[HLK_VM_##VMID](a, o, n);                                    \
  }
/* X(unary op id, vmath id) */
#define VM_UNARY_OPS(X)                                                         \
  X(SQRT, SQRT) X(RSQRT, RSQRT) X(CBRT, CBRT) X(EXP, EXP) X(EXPM1, EXPM1)       \
  X(LOG, LOG) X(LOG1P, LOG1P) X(LOGISTIC, LOGISTIC) X(SIN, SIN) X(COS, COS)     \
  X(TAN, TAN) X(TANH, TANH) X(ERF, ERF) X(ACOS, ACOS) X(ACOSH, ACOSH)           \
  X(ASIN, ASIN) X(ASINH, ASINH) X(ATANH, ATANH) X(COSH, COSH) X(SINH, SINH)
VM_UNARY_OPS(VM_THUNK)

/* ---- complex ------------------------------------------------------------ */

/* X(ID, complex T, real T, libm suffix) */
#define COMPLEX_TYPES(X) X(C64, float complex, float, f) X(C128, double complex, double, )

#define COMPLEX_OPS(ID, T, R, SFX)                                              \
  BIN_LOOP_PLAIN(add_##ID, T, x + y)                                                  \
  BIN_LOOP_PLAIN(sub_##ID, T, x - y)                                                  \
  BIN_LOOP_PLAIN(mul_##ID, T, x * y)                                                  \
  BIN_LOOP_PLAIN(div_##ID, T, x / y)                                                  \
  BIN_LOOP_PLAIN(pow_##ID, T, hlk_cpow##SFX(x, y))                                    \
  /* atan2(x, y) = -i log((y + i x) / sqrt(y^2 + x^2)), XLA's complex form */        \
  BIN_LOOP_PLAIN(atan2_##ID, T, -I * clog##SFX((y + I * x) / csqrt##SFX(y * y + x * x))) \
  UN_LOOP_PLAIN(neg_##ID, T, T, -x)                                                   \
  UN_LOOP_PLAIN(abs_##ID, T, R, cabs##SFX(x))                                         \
  UN_LOOP_PLAIN(real_##ID, T, R, creal##SFX(x))                                       \
  UN_LOOP_PLAIN(imag_##ID, T, R, cimag##SFX(x))                                       \
  UN_LOOP_PLAIN(sign_##ID, T, T, cabs##SFX(x) == 0 ? (T)0 : x / cabs##SFX(x))         \
  UN_LOOP_PLAIN(sqrt_##ID, T, T, csqrt##SFX(x))                                       \
  UN_LOOP_PLAIN(rsqrt_##ID, T, T, (R)1 / csqrt##SFX(x))                               \
  UN_LOOP_PLAIN(cbrt_##ID, T, T, hlk_cpow##SFX(x, (T)((R)1 / (R)3)))                  \
  UN_LOOP_PLAIN(exp_##ID, T, T, cexp##SFX(x))                                         \
  UN_LOOP_PLAIN(expm1_##ID, T, T, cexp##SFX(x) - (R)1)                                \
  UN_LOOP_PLAIN(log_##ID, T, T, clog##SFX(x))                                         \
  UN_LOOP_PLAIN(log1p_##ID, T, T, clog##SFX(x + (R)1))                                \
  UN_LOOP_PLAIN(logistic_##ID, T, T, (R)1 / ((R)1 + cexp##SFX(-x)))                   \
  UN_LOOP_PLAIN(sin_##ID, T, T, csin##SFX(x))                                         \
  UN_LOOP_PLAIN(cos_##ID, T, T, ccos##SFX(x))                                         \
  UN_LOOP_PLAIN(tan_##ID, T, T, ctan##SFX(x))                                         \
  UN_LOOP_PLAIN(tanh_##ID, T, T, ctanh##SFX(x))                                       \
  UN_LOOP_PLAIN(acos_##ID, T, T, cacos##SFX(x))                                       \
  UN_LOOP_PLAIN(acosh_##ID, T, T, cacosh##SFX(x))                                     \
  UN_LOOP_PLAIN(asin_##ID, T, T, casin##SFX(x))                                       \
  UN_LOOP_PLAIN(asinh_##ID, T, T, casinh##SFX(x))                                     \
  UN_LOOP_PLAIN(atanh_##ID, T, T, catanh##SFX(x))                                     \
  UN_LOOP_PLAIN(cosh_##ID, T, T, ccosh##SFX(x))                                       \
  UN_LOOP_PLAIN(sinh_##ID, T, T, csinh##SFX(x))
COMPLEX_TYPES(COMPLEX_OPS)

/* complex(re, im): f32 -> c64, f64 -> c128. */
#define MAKE_COMPLEX(ID, T, R, SFX)                                             \
  static void complex_##ID(const void *a_, const void *b_, void *o_, int64_t n, int bits) { \
    const R *a = a_, *b = b_;                                                   \
    R *o = o_;                                                                  \
    (void)bits;                                                                 \
    for (int64_t i = 0; i < n; i++) {                                           \
      o[2 * i] = a[i];                                                          \
      o[2 * i + 1] = b[i];                                                      \
    }                                                                           \
  }
COMPLEX_TYPES(MAKE_COMPLEX)

/* ---- tables ------------------------------------------------------------- */

static void fill_tables(void) {
/* The arithmetic every integer and float type has. */
#define SET_ARITH(ID)                                                           \
  bin_tab[BIN_ADD][HLO_##ID] = add_##ID;                                        \
  bin_tab[BIN_SUB][HLO_##ID] = sub_##ID;                                        \
  bin_tab[BIN_MUL][HLO_##ID] = mul_##ID;                                        \
  bin_tab[BIN_DIV][HLO_##ID] = div_##ID;                                        \
  bin_tab[BIN_REM][HLO_##ID] = rem_##ID;                                        \
  bin_tab[BIN_MAX][HLO_##ID] = max_##ID;                                        \
  bin_tab[BIN_MIN][HLO_##ID] = min_##ID;                                        \
  bin_tab[BIN_POW][HLO_##ID] = pow_##ID;
#define SET_INT(ID, T, U, W)                                                    \
  SET_ARITH(ID)                                                                 \
  bin_tab[BIN_AND][HLO_##ID] = and_##ID;                                        \
  bin_tab[BIN_OR][HLO_##ID] = or_##ID;                                          \
  bin_tab[BIN_XOR][HLO_##ID] = xor_##ID;                                        \
  bin_tab[BIN_SHL][HLO_##ID] = shl_##ID;                                        \
  bin_tab[BIN_SRA][HLO_##ID] = sra_##ID;                                        \
  bin_tab[BIN_SRL][HLO_##ID] = srl_##ID;                                        \
  un_tab[UN_ABS][HLO_##ID] = abs_##ID;                                          \
  un_tab[UN_NEG][HLO_##ID] = neg_##ID;                                          \
  un_tab[UN_NOT][HLO_##ID] = not_##ID;                                          \
  un_tab[UN_SIGN][HLO_##ID] = sign_##ID;                                        \
  un_tab[UN_POPCNT][HLO_##ID] = popcnt_##ID;                                    \
  un_tab[UN_CLZ][HLO_##ID] = clz_##ID;
  INT_TYPES(SET_INT)
#undef SET_INT

#define SET_FLOAT(ID, T, SFX, UT, BT)                                           \
  SET_ARITH(ID)                                                                 \
  bin_tab[BIN_ATAN2][HLO_##ID] = atan2_##ID;                                    \
  un_tab[UN_ABS][HLO_##ID] = abs_##ID;                                          \
  un_tab[UN_NEG][HLO_##ID] = neg_##ID;                                          \
  un_tab[UN_SIGN][HLO_##ID] = sign_##ID;                                        \
  un_tab[UN_CEIL][HLO_##ID] = ceil_##ID;                                        \
  un_tab[UN_FLOOR][HLO_##ID] = floor_##ID;                                      \
  un_tab[UN_RAFZ][HLO_##ID] = rafz_##ID;                                        \
  un_tab[UN_RNE][HLO_##ID] = rne_##ID;                                          \
  un_tab[UN_ISFINITE][HLO_##ID] = isfinite_##ID;                                \
  un_tab[UN_REAL][HLO_##ID] = real_##ID;                                        \
  un_tab[UN_IMAG][HLO_##ID] = imag_##ID;
  FLOAT_TYPES(SET_FLOAT)
#undef SET_FLOAT
#define SET_SCALAR(ID, T, SFX, UT, BT)                                          \
  bins_tab[BIN_ADD][HLO_##ID][0] = add_##ID##_sr, bins_tab[BIN_ADD][HLO_##ID][1] = add_##ID##_sl; \
  bins_tab[BIN_SUB][HLO_##ID][0] = sub_##ID##_sr, bins_tab[BIN_SUB][HLO_##ID][1] = sub_##ID##_sl; \
  bins_tab[BIN_MUL][HLO_##ID][0] = mul_##ID##_sr, bins_tab[BIN_MUL][HLO_##ID][1] = mul_##ID##_sl; \
  bins_tab[BIN_DIV][HLO_##ID][0] = div_##ID##_sr, bins_tab[BIN_DIV][HLO_##ID][1] = div_##ID##_sl; \
  bins_tab[BIN_MAX][HLO_##ID][0] = max_##ID##_sr, bins_tab[BIN_MAX][HLO_##ID][1] = max_##ID##_sl; \
  bins_tab[BIN_MIN][HLO_##ID][0] = min_##ID##_sr, bins_tab[BIN_MIN][HLO_##ID][1] = min_##ID##_sl;
  FLOAT_TYPES(SET_SCALAR)
#undef SET_SCALAR
#undef SET_ARITH
#define SET_VM(UID, VMID)                                                       \
  un_tab[UN_##UID][HLO_F32] = vm_##UID##_F32;                                   \
  un_tab[UN_##UID][HLO_F64] = vm_##UID##_F64;
  VM_UNARY_OPS(SET_VM)
#undef SET_VM

#define SET_COMPLEX(ID, T, R, SFX)                                              \
  bin_tab[BIN_ADD][HLO_##ID] = add_##ID;                                        \
  bin_tab[BIN_SUB][HLO_##ID] = sub_##ID;                                        \
  bin_tab[BIN_MUL][HLO_##ID] = mul_##ID;                                        \
  bin_tab[BIN_DIV][HLO_##ID] = div_##ID;                                        \
  bin_tab[BIN_POW][HLO_##ID] = pow_##ID;                                        \
  bin_tab[BIN_ATAN2][HLO_##ID] = atan2_##ID;                                    \
  un_tab[UN_NEG][HLO_##ID] = neg_##ID;                                          \
  un_tab[UN_ABS][HLO_##ID] = abs_##ID;                                          \
  un_tab[UN_REAL][HLO_##ID] = real_##ID;                                        \
  un_tab[UN_IMAG][HLO_##ID] = imag_##ID;                                        \
  un_tab[UN_SIGN][HLO_##ID] = sign_##ID;                                        \
  un_tab[UN_SQRT][HLO_##ID] = sqrt_##ID;                                        \
  un_tab[UN_RSQRT][HLO_##ID] = rsqrt_##ID;                                      \
  un_tab[UN_CBRT][HLO_##ID] = cbrt_##ID;                                        \
  un_tab[UN_EXP][HLO_##ID] = exp_##ID;                                          \
  un_tab[UN_EXPM1][HLO_##ID] = expm1_##ID;                                      \
  un_tab[UN_LOG][HLO_##ID] = log_##ID;                                          \
  un_tab[UN_LOG1P][HLO_##ID] = log1p_##ID;                                      \
  un_tab[UN_LOGISTIC][HLO_##ID] = logistic_##ID;                                \
  un_tab[UN_SIN][HLO_##ID] = sin_##ID;                                          \
  un_tab[UN_COS][HLO_##ID] = cos_##ID;                                          \
  un_tab[UN_TAN][HLO_##ID] = tan_##ID;                                          \
  un_tab[UN_TANH][HLO_##ID] = tanh_##ID;                                        \
  un_tab[UN_ACOS][HLO_##ID] = acos_##ID;                                        \
  un_tab[UN_ACOSH][HLO_##ID] = acosh_##ID;                                      \
  un_tab[UN_ASIN][HLO_##ID] = asin_##ID;                                        \
  un_tab[UN_ASINH][HLO_##ID] = asinh_##ID;                                      \
  un_tab[UN_ATANH][HLO_##ID] = atanh_##ID;                                      \
  un_tab[UN_COSH][HLO_##ID] = cosh_##ID;                                        \
  un_tab[UN_SINH][HLO_##ID] = sinh_##ID;
  COMPLEX_TYPES(SET_COMPLEX)
#undef SET_COMPLEX

  /* pred */
  bin_tab[BIN_ADD][HLO_PRED] = or_PRED;
  bin_tab[BIN_OR][HLO_PRED] = or_PRED;
  bin_tab[BIN_MAX][HLO_PRED] = or_PRED;
  bin_tab[BIN_MUL][HLO_PRED] = and_PRED;
  bin_tab[BIN_AND][HLO_PRED] = and_PRED;
  bin_tab[BIN_MIN][HLO_PRED] = and_PRED;
  bin_tab[BIN_SUB][HLO_PRED] = xor_PRED;
  bin_tab[BIN_XOR][HLO_PRED] = xor_PRED;
  un_tab[UN_NOT][HLO_PRED] = not_PRED;

  /* Sub-byte integers run the 8-bit loops; narrow floats the f32 ones. */
  for (int t = 0; t < HLO_NUM_DTYPES; t++) {
    HloDtype d = (HloDtype)t, from;
    if (hlc_dtype_is_int(d) && hlc_dtype_bits(d) < 8)
      from = hlc_dtype_kind(d) == HLO_KIND_SINT ? HLO_S8 : HLO_U8;
    else if (hlk_is_narrow_float(d))
      from = HLO_F32;
    else
      continue;
    for (int op = 0; op < NUM_UN; op++) un_tab[op][t] = un_tab[op][from];
    for (int op = 0; op < NUM_BIN; op++) {
      bin_tab[op][t] = bin_tab[op][from];
      bins_tab[op][t][0] = bins_tab[op][from][0];
      bins_tab[op][t][1] = bins_tab[op][from][1];
    }
  }
}

/* ---- kernels ------------------------------------------------------------ */

/* The result type XLA gives op on operand type t: the operand's, except
 * is-finite (pred) and abs/real/imag of complex (the part's type). The
 * kernels write that type, so a module declaring another one (a hand-edited
 * f32 sqrt "returning" f16) must be refused, not overflow the result. */
static HloDtype un_result(int op, HloDtype t) {
  if (op == UN_ISFINITE) return HLO_PRED;
  if ((op == UN_ABS || op == UN_REAL || op == UN_IMAG) && (t == HLO_C64 || t == HLO_C128))
    return t == HLO_C64 ? HLO_F32 : HLO_F64;
  return t;
}

static int result_type(HliExec *x, const HloInstr *ins, HloDtype want) {
  if (ins->shape.dtype == want) return 0;
  return hli_fail(x, ins, "the result type %s does not match the operand: %s gives %s",
                  hlc_dtype_name(ins->shape.dtype), hlp_opcode_name(ins->op),
                  hlc_dtype_name(want));
}

static int check_un(HliExec *x, const HloInstr *ins, int op) {
  HloDtype t = ins->nops == 1 ? ins->ops[0]->shape.dtype : HLO_DTYPE_INVALID;
  if (t < 0 || t >= HLO_NUM_DTYPES || !un_tab[op][t])
    return hli_unsupported(x, ins, "%s of element type %s", hlp_opcode_name(ins->op),
                           hlc_dtype_name(t));
  return result_type(x, ins, un_result(op, t));
}

static int check_bin(HliExec *x, const HloInstr *ins, int op) {
  HloDtype t = ins->nops == 2 ? ins->ops[0]->shape.dtype : HLO_DTYPE_INVALID;
  if (t < 0 || t >= HLO_NUM_DTYPES || !bin_tab[op][t] || ins->ops[1]->shape.dtype != t)
    return hli_unsupported(x, ins, "%s of element type %s", hlp_opcode_name(ins->op),
                           hlc_dtype_name(t));
  return result_type(x, ins, t);
}

static int same_count(HliExec *x, const HloInstr *ins, const HliValue *v, const HliValue *out) {
  if (v->nelem != out->nelem)
    return hli_fail(x, ins, "operand has %lld elements, result %lld", (long long)v->nelem,
                    (long long)out->nelem);
  return 0;
}

static int run_un(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out, int op) {
  if (check_un(x, ins, op) || same_count(x, ins, in[0], out)) return -1;
  hlk_run_unary(x, un_tab[op][in[0]->dtype], in[0]->dtype, in[0], out);
  return 0;
}

static int run_bin(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out, int op) {
  if (check_bin(x, ins, op) || same_count(x, ins, in[0], out) || same_count(x, ins, in[1], out))
    return -1;
  hlk_run_binary(x, bin_tab[op][in[0]->dtype], in[0]->dtype, in[0], in[1], out);
  return 0;
}

#define UN_KERNEL(id, opc)                                                      \
  static int k_##id(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) { \
    return run_un(x, ins, in, out, UN_##id);                                    \
  }                                                                             \
  static int c_##id(HliExec *x, const HloInstr *ins) { return check_un(x, ins, UN_##id); }
UNARY_OPS(UN_KERNEL)
#define BIN_KERNEL(id, opc)                                                     \
  static int kb_##id(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) { \
    return run_bin(x, ins, in, out, BIN_##id);                                  \
  }                                                                             \
  static int cb_##id(HliExec *x, const HloInstr *ins) { return check_bin(x, ins, BIN_##id); }
BINARY_OPS(BIN_KERNEL)

static int check_complex(HliExec *x, const HloInstr *ins) {
  HloDtype t = ins->nops == 2 ? ins->ops[0]->shape.dtype : HLO_DTYPE_INVALID;
  if ((t != HLO_F32 && t != HLO_F64) || ins->ops[1]->shape.dtype != t)
    return hli_unsupported(x, ins, "complex of element type %s", hlc_dtype_name(t));
  return 0;
}

static int k_complex(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (check_complex(x, ins) || same_count(x, ins, in[0], out) || same_count(x, ins, in[1], out))
    return -1;
  /* The loop writes (re, im) pairs: give the runner the real type as the
   * result type by running it with the complex output's buffer directly. */
  HlkBinFn fn = in[0]->dtype == HLO_F32 ? complex_C64 : complex_C128;
  fn(in[0]->data, in[1]->data, out->data, out->nelem, 0);
  return 0;
}

/* Opcode -> table row, for fused evaluation. */
static int unary_row(HloOpcode op) {
  switch (op) {
#define X(id, opc) case HLO_OP_##opc: return UN_##id;
    UNARY_OPS(X)
#undef X
  default: return -1;
  }
}
static int binary_row(HloOpcode op) {
  switch (op) {
#define X(id, opc) case HLO_OP_##opc: return BIN_##id;
    BINARY_OPS(X)
#undef X
  default: return -1;
  }
}

HlkUnFn hlk_unary_loop(HloOpcode op, HloDtype t) {
  int r = unary_row(op);
  return r < 0 || t < 0 || t >= HLO_NUM_DTYPES ? NULL : un_tab[r][t];
}

HlkBinFn hlk_binary_loop(HloOpcode op, HloDtype t) {
  int r = binary_row(op);
  return r < 0 || t < 0 || t >= HLO_NUM_DTYPES ? NULL : bin_tab[r][t];
}

HlkBinFn hlk_binary_scalar_loop(HloOpcode op, HloDtype t, int side) {
  int r = binary_row(op);
  return r < 0 || t < 0 || t >= HLO_NUM_DTYPES || side < 0 || side > 1 ? NULL
                                                                        : bins_tab[r][t][side];
}

void hlk_register_elementwise(HliOpTable t) {
  fill_tables();
#define REG_UN(id, opc) t[HLO_OP_##opc] = (HliOpEntry){k_##id, c_##id};
  UNARY_OPS(REG_UN)
#undef REG_UN
#define REG_BIN(id, opc) t[HLO_OP_##opc] = (HliOpEntry){kb_##id, cb_##id};
  BINARY_OPS(REG_BIN)
#undef REG_BIN
  t[HLO_OP_COMPLEX] = (HliOpEntry){k_complex, check_complex};
}
