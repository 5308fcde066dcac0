/* scatter_combine.c: typed row loops dst[i] = op(dst[i], src[i]) for the
 * scatter reducers hli_match_binop recognises (add, multiply, maximum,
 * minimum, and, or, xor), stamped per element type. The operand value is the
 * first argument of the reducer, the update the second, as in XLA.
 *
 * Semantics follow XLA's elementwise ops: integers wrap (computed unsigned),
 * pred add/max are OR and multiply/min are AND, float maximum/minimum
 * propagate NaN, f16/bf16 compute in f32 and round to nearest even once,
 * complex numbers add and multiply as C does. Types without a loop here
 * (sub-byte integers, f8 types, complex max/min, ...) return NULL: the
 * caller runs the reducer computation per element instead. */
#include "interp/kernels/movement.h"
#include "common/numeric.h"
#include <complex.h>

/* The contiguous case gets its own loop so the compiler can vectorise it. */
#define ROW_LOOP(NAME, T, EXPR)                                                       \
  static void NAME(char *d, const char *s, int64_t n, int64_t ds, int64_t ss) {      \
    if (ds == (int64_t)sizeof(T) && ss == (int64_t)sizeof(T)) {                       \
      T *dp = (T *)(void *)d;                                                         \
      const T *sp = (const T *)(const void *)s;                                       \
      for (int64_t i = 0; i < n; i++) {                                               \
        T a = dp[i], b = sp[i];                                                       \
        dp[i] = (EXPR);                                                               \
      }                                                                               \
      return;                                                                         \
    }                                                                                 \
    for (int64_t i = 0; i < n; i++) {                                                 \
      T *dp = (T *)(void *)(d + i * ds);                                              \
      T a = *dp, b = *(const T *)(const void *)(s + i * ss);                          \
      *dp = (EXPR);                                                                   \
    }                                                                                 \
  }

/* Integers: T the storage type, U its unsigned twin, W an unsigned type at
 * least as wide as int, so the arithmetic wraps instead of overflowing. */
#define INT_LOOPS(N, T, U, W)                                     \
  ROW_LOOP(add_##N, T, (T)(U)((W)(U)a + (W)(U)b))                 \
  ROW_LOOP(mul_##N, T, (T)(U)((W)(U)a * (W)(U)b))                 \
  ROW_LOOP(max_##N, T, a > b ? a : b)                             \
  ROW_LOOP(min_##N, T, a < b ? a : b)                             \
  ROW_LOOP(and_##N, T, (T)(a & b))                                \
  ROW_LOOP(or_##N, T, (T)(a | b))                                 \
  ROW_LOOP(xor_##N, T, (T)(a ^ b))
INT_LOOPS(s8, int8_t, uint8_t, unsigned)
INT_LOOPS(s16, int16_t, uint16_t, unsigned)
INT_LOOPS(s32, int32_t, uint32_t, unsigned)
INT_LOOPS(s64, int64_t, uint64_t, uint64_t)
INT_LOOPS(u8, uint8_t, uint8_t, unsigned)
INT_LOOPS(u16, uint16_t, uint16_t, unsigned)
INT_LOOPS(u32, uint32_t, uint32_t, unsigned)
INT_LOOPS(u64, uint64_t, uint64_t, uint64_t)

ROW_LOOP(or_pred, uint8_t, (uint8_t)((a | b) != 0))
ROW_LOOP(and_pred, uint8_t, (uint8_t)((a & b) != 0))
ROW_LOOP(xor_pred, uint8_t, (uint8_t)((a ^ b) != 0))

/* Floats: a NaN on either side wins (XLA's maximum/minimum). */
#define FLOAT_LOOPS(N, T)                                         \
  ROW_LOOP(add_##N, T, a + b)                                     \
  ROW_LOOP(mul_##N, T, a * b)                                     \
  ROW_LOOP(max_##N, T, (a != a || a > b) ? a : b)                 \
  ROW_LOOP(min_##N, T, (a != a || a < b) ? a : b)
FLOAT_LOOPS(f32, float)
FLOAT_LOOPS(f64, double)

/* Narrow floats: stored as bits; TOF widens, FROMF rounds back. */
#define NARROW_LOOPS(N, TOF, FROMF)                                                   \
  ROW_LOOP(add_##N, uint16_t, FROMF(TOF(a) + TOF(b)))                                 \
  ROW_LOOP(mul_##N, uint16_t, FROMF(TOF(a) * TOF(b)))                                 \
  ROW_LOOP(max_##N, uint16_t, (TOF(a) != TOF(a) || TOF(a) > TOF(b)) ? a : b)          \
  ROW_LOOP(min_##N, uint16_t, (TOF(a) != TOF(a) || TOF(a) < TOF(b)) ? a : b)
NARROW_LOOPS(f16, hlc_f16_to_f32, hlc_f32_to_f16)
NARROW_LOOPS(bf16, hlc_bf16_to_f32, hlc_f32_to_bf16)

ROW_LOOP(add_c64, float complex, a + b)
ROW_LOOP(mul_c64, float complex, a * b)
ROW_LOOP(add_c128, double complex, a + b)
ROW_LOOP(mul_c128, double complex, a * b)

/* One row of the table: the loops of one element type, by HliBinop. */
typedef struct CombineRow {
  HlkRowFn add, mul, max, min, and_, or_, xor_;
} CombineRow;

#define INT_ROW(N) { add_##N, mul_##N, max_##N, min_##N, and_##N, or_##N, xor_##N }
#define FLOAT_ROW(N) { add_##N, mul_##N, max_##N, min_##N, NULL, NULL, NULL }

HlkRowFn hlk_combine_fn(HliBinop op, HloDtype t) {
  static const CombineRow pred = { or_pred, and_pred, or_pred, and_pred, and_pred, or_pred,
                                   xor_pred };
  static const CombineRow s8 = INT_ROW(s8), s16 = INT_ROW(s16), s32 = INT_ROW(s32),
                          s64 = INT_ROW(s64), u8 = INT_ROW(u8), u16 = INT_ROW(u16),
                          u32 = INT_ROW(u32), u64 = INT_ROW(u64);
  static const CombineRow f16 = FLOAT_ROW(f16), bf16 = FLOAT_ROW(bf16), f32 = FLOAT_ROW(f32),
                          f64 = FLOAT_ROW(f64);
  static const CombineRow c64 = { add_c64, mul_c64, NULL, NULL, NULL, NULL, NULL },
                          c128 = { add_c128, mul_c128, NULL, NULL, NULL, NULL, NULL };
  const CombineRow *r;
  switch (t) {
  case HLO_PRED: r = &pred; break;
  case HLO_S8: r = &s8; break;
  case HLO_S16: r = &s16; break;
  case HLO_S32: r = &s32; break;
  case HLO_S64: r = &s64; break;
  case HLO_U8: r = &u8; break;
  case HLO_U16: r = &u16; break;
  case HLO_U32: r = &u32; break;
  case HLO_U64: r = &u64; break;
  case HLO_F16: r = &f16; break;
  case HLO_BF16: r = &bf16; break;
  case HLO_F32: r = &f32; break;
  case HLO_F64: r = &f64; break;
  case HLO_C64: r = &c64; break;
  case HLO_C128: r = &c128; break;
  default: return NULL;
  }
  switch (op) {
  case HLI_BINOP_ADD: return r->add;
  case HLI_BINOP_MUL: return r->mul;
  case HLI_BINOP_MAX: return r->max;
  case HLI_BINOP_MIN: return r->min;
  case HLI_BINOP_AND: return r->and_;
  case HLI_BINOP_OR: return r->or_;
  case HLI_BINOP_XOR: return r->xor_;
  default: return NULL;
  }
}
