/* check_elementwise.c: elementwise kernels run on hand-built instructions and
 * values (no parser needed). Expected values are worked out by hand from
 * XLA's documented semantics; ULP checks compare every vector ISA with libm. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "common/numeric.h"
#include "interp/interp.h"
#include "interp/kernels/elementwise.h"
#include "tests/testlib.h"

/* ---- harness ------------------------------------------------------------- */

/* Run opcode op on operands of types ts[] (n elements each, or scalars when
 * ns[i] == 0), result type rt with n elements; copy the result to out. */
static int run_op(HloOpcode op, int nops, const HloDtype *ts, const int64_t *ns,
                  const void *const *data, HloDtype rt, int64_t n, void *out,
                  void (*setup)(HloInstr *)) {
  HloInstr *p[3] = {0};
  HliValue *vals[3] = {0};
  for (int i = 0; i < nops; i++) {
    p[i] = tl_param(i, tl_shape(ts[i], ns[i] ? 1 : 0, &ns[i]));
    vals[i] = tl_value(&p[i]->shape, data[i]);
  }
  HloInstr *ins = tl_instr(op, tl_shape(rt, 1, &n), nops, p[0], p[1], p[2]);
  if (setup) setup(ins);
  HliValue *o = tl_try_run(ins, vals);
  if (o) memcpy(out, o->data, o->nbytes);
  hli_value_unref(NULL, o);
  tl_free(nops, vals);
  return o ? 0 : -1;
}

static int run_bin(HloOpcode op, HloDtype t, HloDtype rt, int64_t n, const void *a, const void *b,
                   void *out) {
  HloDtype ts[2] = {t, t};
  int64_t ns[2] = {n, n};
  const void *d[2] = {a, b};
  return run_op(op, 2, ts, ns, d, rt, n, out, NULL);
}
static int run_un(HloOpcode op, HloDtype t, HloDtype rt, int64_t n, const void *a, void *out) {
  const void *d[1] = {a};
  int64_t ns[1] = {n};
  return run_op(op, 1, &t, ns, d, rt, n, out, NULL);
}

static bool same_f32(float a, float b) {
  return (isnan(a) && isnan(b)) || (a == b && signbit(a) == signbit(b));
}
#define CHECK_F32(got, exp, n)                                                  \
  for (int i_ = 0; i_ < (n); i_++)                                              \
    ck_assert_msg(same_f32((got)[i_], (exp)[i_]), "element %d: got %a want %a", i_, \
                  (double)(got)[i_], (double)(exp)[i_]);
#define CHECK_INT(got, exp, n)                                                  \
  for (int i_ = 0; i_ < (n); i_++)                                              \
    ck_assert_msg((got)[i_] == (exp)[i_], "element %d: got %lld want %lld", i_,  \
                  (long long)(got)[i_], (long long)(exp)[i_]);

/* ---- integers ----------------------------------------------------------- */

START_TEST(int_divide_remainder) {
  int32_t a[] = {7, -7, 5, INT32_MIN, 3, INT32_MIN}, b[] = {2, 2, 0, -1, -1, 0}, o[6];
  int32_t qd[] = {3, -3, -1, INT32_MIN, -3, -1}, qr[] = {1, -1, 5, 0, 0, INT32_MIN};
  ck_assert_int_eq(run_bin(HLO_OP_DIVIDE, HLO_S32, HLO_S32, 6, a, b, o), 0);
  CHECK_INT(o, qd, 6);
  ck_assert_int_eq(run_bin(HLO_OP_REMAINDER, HLO_S32, HLO_S32, 6, a, b, o), 0);
  CHECK_INT(o, qr, 6);
  uint8_t ua[] = {200, 7}, ub[] = {0, 0}, uo[2], ud[] = {255, 255}, ur[] = {200, 7};
  ck_assert_int_eq(run_bin(HLO_OP_DIVIDE, HLO_U8, HLO_U8, 2, ua, ub, uo), 0);
  CHECK_INT(uo, ud, 2);
  ck_assert_int_eq(run_bin(HLO_OP_REMAINDER, HLO_U8, HLO_U8, 2, ua, ub, uo), 0);
  CHECK_INT(uo, ur, 2);
  /* s4: -8 / -1 = -8 (wraps), 7 / 0 = -1 */
  int8_t sa[] = {-8, 7, -8}, sb[] = {-1, 0, 3}, so[3], sd[] = {-8, -1, -2};
  ck_assert_int_eq(run_bin(HLO_OP_DIVIDE, HLO_S4, HLO_S4, 3, sa, sb, so), 0);
  CHECK_INT(so, sd, 3);
}
END_TEST

START_TEST(int_wrap_arith) {
  int8_t a[] = {127, -128, 100}, b[] = {1, -1, 3}, o[3];
  int8_t add[] = {-128, 127, 103}, mul[] = {127, -128, 44};   /* 300 - 256 = 44 */
  ck_assert_int_eq(run_bin(HLO_OP_ADD, HLO_S8, HLO_S8, 3, a, b, o), 0);
  CHECK_INT(o, add, 3);
  ck_assert_int_eq(run_bin(HLO_OP_MULTIPLY, HLO_S8, HLO_S8, 3, a, b, o), 0);
  CHECK_INT(o, mul, 3);
  uint16_t ua[] = {65535}, ub[] = {65535}, uo[1], um[] = {1};      /* (2^16-1)^2 mod 2^16 */
  ck_assert_int_eq(run_bin(HLO_OP_MULTIPLY, HLO_U16, HLO_U16, 1, ua, ub, uo), 0);
  CHECK_INT(uo, um, 1);
  int8_t na[] = {-128, 5}, no[2], neg[] = {-128, -5}, abs_[] = {-128, 5};
  ck_assert_int_eq(run_un(HLO_OP_NEGATE, HLO_S8, HLO_S8, 2, na, no), 0);
  CHECK_INT(no, neg, 2);
  ck_assert_int_eq(run_un(HLO_OP_ABS, HLO_S8, HLO_S8, 2, na, no), 0);
  CHECK_INT(no, abs_, 2);
  /* s4 add wraps at 4 bits: 7 + 1 = -8 */
  int8_t s4a[] = {7, -8}, s4b[] = {1, -1}, s4o[2], s4e[] = {-8, 7};
  ck_assert_int_eq(run_bin(HLO_OP_ADD, HLO_S4, HLO_S4, 2, s4a, s4b, s4o), 0);
  CHECK_INT(s4o, s4e, 2);
}
END_TEST

START_TEST(int_shifts) {
  int32_t a[] = {1, 1, 1, 1, -8, -8, 8, -1, -1}, b[] = {0, 31, 32, -1, 1, 40, 40, 28, 32};
  int32_t o[9];
  int32_t shl[] = {1, INT32_MIN, 0, 0, -16, 0, 0, -268435456, 0};
  int32_t sra[] = {1, 0, 0, 0, -4, -1, 0, -1, -1};
  int32_t srl[] = {1, 0, 0, 0, 0x7FFFFFFC, 0, 0, 15, 0};
  ck_assert_int_eq(run_bin(HLO_OP_SHIFT_LEFT, HLO_S32, HLO_S32, 9, a, b, o), 0);
  CHECK_INT(o, shl, 9);
  ck_assert_int_eq(run_bin(HLO_OP_SHIFT_RIGHT_ARITHMETIC, HLO_S32, HLO_S32, 9, a, b, o), 0);
  CHECK_INT(o, sra, 9);
  ck_assert_int_eq(run_bin(HLO_OP_SHIFT_RIGHT_LOGICAL, HLO_S32, HLO_S32, 9, a, b, o), 0);
  CHECK_INT(o, srl, 9);
  /* u32 arithmetic shift uses the sign bit */
  uint32_t ua[] = {0x80000000u}, ub[] = {4}, uo[1], ue[] = {0xF8000000u};
  ck_assert_int_eq(run_bin(HLO_OP_SHIFT_RIGHT_ARITHMETIC, HLO_U32, HLO_U32, 1, ua, ub, uo), 0);
  CHECK_INT(uo, ue, 1);
  /* sub-byte: s4 1 << 3 = -8; u4 8 >>a 1 = 12 (1100); s4 -8 >>l 1 = 4 */
  int8_t s4a[] = {1}, s4b[] = {3}, s4o[1], s4e[] = {-8};
  ck_assert_int_eq(run_bin(HLO_OP_SHIFT_LEFT, HLO_S4, HLO_S4, 1, s4a, s4b, s4o), 0);
  CHECK_INT(s4o, s4e, 1);
  uint8_t u4a[] = {8, 8}, u4b[] = {1, 4}, u4o[2], u4e[] = {12, 15};
  ck_assert_int_eq(run_bin(HLO_OP_SHIFT_RIGHT_ARITHMETIC, HLO_U4, HLO_U4, 2, u4a, u4b, u4o), 0);
  CHECK_INT(u4o, u4e, 2);
  int8_t l4a[] = {-8}, l4b[] = {1}, l4o[1], l4e[] = {4};
  ck_assert_int_eq(run_bin(HLO_OP_SHIFT_RIGHT_LOGICAL, HLO_S4, HLO_S4, 1, l4a, l4b, l4o), 0);
  CHECK_INT(l4o, l4e, 1);
}
END_TEST

START_TEST(int_bits_and_power) {
  int32_t a[] = {0, 1, -1, 0x00F0F000}, o[4], clz[] = {32, 31, 0, 8}, pop[] = {0, 1, 32, 8};
  ck_assert_int_eq(run_un(HLO_OP_COUNT_LEADING_ZEROS, HLO_S32, HLO_S32, 4, a, o), 0);
  CHECK_INT(o, clz, 4);
  ck_assert_int_eq(run_un(HLO_OP_POPCNT, HLO_S32, HLO_S32, 4, a, o), 0);
  CHECK_INT(o, pop, 4);
  int8_t s4[] = {-1, 1}, s4o[2], s4pop[] = {4, 1}, s4clz[] = {0, 3};
  ck_assert_int_eq(run_un(HLO_OP_POPCNT, HLO_S4, HLO_S4, 2, s4, s4o), 0);
  CHECK_INT(s4o, s4pop, 2);
  ck_assert_int_eq(run_un(HLO_OP_COUNT_LEADING_ZEROS, HLO_S4, HLO_S4, 2, s4, s4o), 0);
  CHECK_INT(s4o, s4clz, 2);
  int32_t pa[] = {2, 2, 1, -1, -1, 0, 5, -2, 3}, pb[] = {10, -1, -5, -3, -2, 0, 0, 3, 21};
  /* 3^21 = 10460353203 = 2 * 2^32 + 1870418611; a negative exponent gives 0
   * for every base but 1, -1 included (XLA's evaluator and CPU emitter) */
  int32_t pe[] = {1024, 0, 1, 0, 0, 1, 1, -8, 1870418611};
  int32_t po[9];
  ck_assert_int_eq(run_bin(HLO_OP_POWER, HLO_S32, HLO_S32, 9, pa, pb, po), 0);
  CHECK_INT(po, pe, 9);
  uint8_t na[] = {0, 1, 0xF0}, no[3], ne[] = {1, 0, 0x0F};
  ck_assert_int_eq(run_un(HLO_OP_NOT, HLO_PRED, HLO_PRED, 2, na, no), 0);
  CHECK_INT(no, ne, 2);
  ck_assert_int_eq(run_un(HLO_OP_NOT, HLO_U8, HLO_U8, 3, na, no), 0);
  uint8_t nu[] = {0xFF, 0xFE, 0x0F};
  CHECK_INT(no, nu, 3);
  int32_t sa[] = {INT32_MIN, 0, 5}, so[3], se[] = {-1, 0, 1};
  ck_assert_int_eq(run_un(HLO_OP_SIGN, HLO_S32, HLO_S32, 3, sa, so), 0);
  CHECK_INT(so, se, 3);
}
END_TEST

START_TEST(pred_arith) {
  uint8_t a[] = {0, 0, 1, 1}, b[] = {0, 1, 0, 1}, o[4];
  uint8_t or_[] = {0, 1, 1, 1}, and_[] = {0, 0, 0, 1}, xor_[] = {0, 1, 1, 0};
  ck_assert_int_eq(run_bin(HLO_OP_ADD, HLO_PRED, HLO_PRED, 4, a, b, o), 0);
  CHECK_INT(o, or_, 4);
  ck_assert_int_eq(run_bin(HLO_OP_MULTIPLY, HLO_PRED, HLO_PRED, 4, a, b, o), 0);
  CHECK_INT(o, and_, 4);
  ck_assert_int_eq(run_bin(HLO_OP_XOR, HLO_PRED, HLO_PRED, 4, a, b, o), 0);
  CHECK_INT(o, xor_, 4);
  ck_assert_int_eq(run_bin(HLO_OP_MAXIMUM, HLO_PRED, HLO_PRED, 4, a, b, o), 0);
  CHECK_INT(o, or_, 4);
  /* unsupported combinations fail cleanly */
  ck_assert_int_ne(run_bin(HLO_OP_DIVIDE, HLO_PRED, HLO_PRED, 4, a, b, o), 0);
  ck_assert_int_ne(run_un(HLO_OP_SINE, HLO_S32, HLO_S32, 1, a, o), 0);
  ck_assert_ptr_nonnull(strstr(hli_last_error(), "not supported: sine of element type s32"));
}
END_TEST

/* ---- floats ------------------------------------------------------------- */

START_TEST(float_basic) {
  float a[] = {NAN, 1, -0.0f, 5.5f, -5.5f, INFINITY}, b[] = {1, NAN, 0.0f, 2, 2, 1}, o[6];
  float mx[] = {NAN, NAN, 0.0f, 5.5f, 2, INFINITY}, mn[] = {NAN, NAN, -0.0f, 2, -5.5f, 1};
  float rem[] = {NAN, NAN, NAN, 1.5f, -1.5f, NAN};
  ck_assert_int_eq(run_bin(HLO_OP_MAXIMUM, HLO_F32, HLO_F32, 6, a, b, o), 0);
  for (int i = 0; i < 6; i++) ck_assert(isnan(mx[i]) ? isnan(o[i]) : o[i] == mx[i]);
  ck_assert_int_eq(run_bin(HLO_OP_MINIMUM, HLO_F32, HLO_F32, 6, a, b, o), 0);
  for (int i = 0; i < 6; i++) ck_assert(isnan(mn[i]) ? isnan(o[i]) : o[i] == mn[i]);
  ck_assert_int_eq(run_bin(HLO_OP_REMAINDER, HLO_F32, HLO_F32, 6, a, b, o), 0);
  CHECK_F32(o, rem, 6);
  float s[] = {-2, -0.0f, 0.0f, NAN, 3, -INFINITY}, se[] = {-1, -0.0f, 0.0f, NAN, 1, -1};
  ck_assert_int_eq(run_un(HLO_OP_SIGN, HLO_F32, HLO_F32, 6, s, o), 0);
  CHECK_F32(o, se, 6);
  float r[] = {0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 2.4f};
  float afz[] = {1, 2, 3, -1, -3, 2}, rne[] = {0, 2, 2, -0.0f, -2, 2};
  ck_assert_int_eq(run_un(HLO_OP_ROUND_NEAREST_AFZ, HLO_F32, HLO_F32, 6, r, o), 0);
  CHECK_F32(o, afz, 6);
  ck_assert_int_eq(run_un(HLO_OP_ROUND_NEAREST_EVEN, HLO_F32, HLO_F32, 6, r, o), 0);
  CHECK_F32(o, rne, 6);
  float f[] = {1, INFINITY, -INFINITY, NAN, 0x1p-149f};
  uint8_t fo[5], fe[] = {1, 0, 0, 0, 1};
  ck_assert_int_eq(run_un(HLO_OP_IS_FINITE, HLO_F32, HLO_PRED, 5, f, fo), 0);
  CHECK_INT(fo, fe, 5);
  double d[] = {4, -1, 0.25}, dout[3], de[] = {0.5, NAN, 2};
  ck_assert_int_eq(run_un(HLO_OP_RSQRT, HLO_F64, HLO_F64, 3, d, dout), 0);
  ck_assert(dout[0] == de[0] && isnan(dout[1]) && dout[2] == de[2]);
  double pa[] = {0, 2, -8}, pb[] = {0, 10, 1.0 / 3}, po[3];
  ck_assert_int_eq(run_bin(HLO_OP_POWER, HLO_F64, HLO_F64, 3, pa, pb, po), 0);
  ck_assert(po[0] == 1 && po[1] == 1024 && isnan(po[2]));
}
END_TEST

START_TEST(narrow_float_rounding) {
  /* f16: 1 + 2^-11 is a tie -> 1; (1 + 2^-10) + 2^-11 is a tie -> 1 + 2^-9 */
  uint16_t a[] = {0x3C00, 0x3C01, 0x7BFF, 0x0001}, b[] = {0x1000, 0x1000, 0x5000, 0x8001}, o[4];
  uint16_t e[] = {0x3C00, 0x3C02, 0x7C00, 0x0000};   /* 65504 + 32 -> inf; x - x = +0 */
  ck_assert_int_eq(run_bin(HLO_OP_ADD, HLO_F16, HLO_F16, 4, a, b, o), 0);
  CHECK_INT(o, e, 4);
  /* bf16: 1 * (1 + 2^-7) exact; 3 * (1 + 2^-7) = 3 + 3*2^-7 -> rounds to 3 + 2^-5 */
  uint16_t ba[] = {0x3F80, 0x4040}, bb[] = {0x3F81, 0x3F81}, bo[2], be[] = {0x3F81, 0x4042};
  ck_assert_int_eq(run_bin(HLO_OP_MULTIPLY, HLO_BF16, HLO_BF16, 2, ba, bb, bo), 0);
  CHECK_INT(bo, be, 2);
  /* f8e4m3fn: 448 + 32 = 480 -> overflow -> NaN 0x7F; sign keeps -0 */
  uint8_t fa[] = {0x7E, 0x80}, fb[] = {0x5C, 0x80}, fo[2], fe[] = {0x7F, 0x80};
  ck_assert_int_eq(run_bin(HLO_OP_ADD, HLO_F8E4M3FN, HLO_F8E4M3FN, 2, fa, fb, fo), 0);
  CHECK_INT(fo, fe, 2);
  /* exp on f16 through f32: exp(0) = 1, exp(-inf) = 0 */
  uint16_t ea[] = {0x0000, 0xFC00}, eo[2], ee[] = {0x3C00, 0x0000};
  ck_assert_int_eq(run_un(HLO_OP_EXPONENTIAL, HLO_F16, HLO_F16, 2, ea, eo), 0);
  CHECK_INT(eo, ee, 2);
}
END_TEST

/* The vector f16 conversions give hlc_f16_to_f32 / hlc_f32_to_f16's bits
 * (the scalar definitions): every f16 widened; and narrowed, every f32
 * whose low 12 bits are a rounding edge (0, 1, half - 1, half, half + 1,
 * all ones) under each of the 2^20 high patterns, plus 1M random f32s
 * below 2^-14 (subnormal results, where the rounding bit moves). Also
 * hlk_round_narrow against the round trip. */
START_TEST(f16_vector_conversions) {
  enum { B = 4096 };
  static uint16_t h[65536], h2[B];
  static float f[65536], g[B], r[B];
  for (int i = 0; i < 65536; i++) h[i] = (uint16_t)i;
  hlk_narrow_to_f32(HLO_F16, h, f, 65536);
  for (int i = 0; i < 65536; i++) {
    float w = hlc_f16_to_f32((uint16_t)i);
    ck_assert_msg(memcmp(&f[i], &w, 4) == 0, "f16 %04x widened to %a, want %a", i, (double)f[i],
                  (double)w);
  }
  static const uint32_t low[] = {0x000, 0x001, 0x7FF, 0x800, 0x801, 0xFFF};
  uint64_t seed = 11;
  int64_t bad = -1;
  uint32_t bad_bits = 0;
  for (uint32_t hi = 0; hi < (1u << 20) && bad < 0; hi += B / 6) {
    int m = 0;
    for (uint32_t k = 0; k < B / 6 && hi + k < (1u << 20); k++)
      for (int l = 0; l < 6; l++) {
        uint32_t u = (hi + k) << 12 | low[l];
        memcpy(&g[m++], &u, 4);
      }
    hlk_f32_to_narrow(HLO_F16, g, h2, m);
    memcpy(r, g, sizeof(float) * (size_t)m);
    hlk_round_narrow(HLO_F16, r, m);
    for (int i = 0; i < m && bad < 0; i++) {
      uint16_t w = hlc_f32_to_f16(g[i]);
      float wr = hlc_f16_to_f32(w);
      if (h2[i] != w || memcmp(&r[i], &wr, 4) != 0) {
        bad = i;
        memcpy(&bad_bits, &g[i], 4);
        ck_assert_msg(0, "f32 %08x: narrowed %04x, want %04x; rounded %a, want %a", bad_bits,
                      h2[i], w, (double)r[i], (double)wr);
      }
    }
  }
  /* 1M more below 2^-14, any sign. */
  for (int rep = 0; rep < (1 << 20) / B; rep++) {
    for (int i = 0; i < B; i++) {
      uint32_t u = (uint32_t)(tl_lcg(&seed) >> 16) & 0x807FFFFFu;
      u |= (uint32_t)(96 + tl_lcg(&seed) % 17) << 23;   /* 2^-31 .. 2^-15 */
      memcpy(&g[i], &u, 4);
    }
    hlk_f32_to_narrow(HLO_F16, g, h2, B);
    for (int i = 0; i < B; i++)
      if (h2[i] != hlc_f32_to_f16(g[i])) {
        uint32_t u;
        memcpy(&u, &g[i], 4);
        ck_assert_msg(0, "f32 %08x: narrowed %04x, want %04x", u, h2[i], hlc_f32_to_f16(g[i]));
      }
  }
}
END_TEST

/* f32 -> every 8-bit float format (f8 family, f4e2m1fn) in bulk goes
 * through tables over the top 16 bits once a format has converted enough
 * elements: every top-16-bit pattern with low halves 0, 1, 0x8000, 0xFFFF
 * and a random one (327680 elements, past the threshold in one call) gives
 * hlc_float_bits_from_f32's bits, NaNs and saturation included. */
START_TEST(f8_bulk_conversions) {
  enum { LOWS = 5, N = 65536 * LOWS };
  float *src = malloc(sizeof(float) * N);
  uint8_t *got = malloc(N);
  uint64_t seed = 13;
  for (uint32_t h = 0; h < 65536; h++) {
    uint32_t lows[LOWS] = {0, 1, 0x8000, 0xFFFF, 1 + (uint32_t)(tl_lcg(&seed) % 0xFFFF)};
    for (int l = 0; l < LOWS; l++) {
      uint32_t u = h << 16 | lows[l];
      memcpy(&src[h * LOWS + (uint32_t)l], &u, 4);
    }
  }
  int formats = 0;
  for (int t = 0; t < HLO_NUM_DTYPES; t++) {
    HloDtype d = (HloDtype)t;
    if (!hlk_is_narrow_float(d) || hlc_dtype_size(d) != 1) continue;
    formats++;
    hlk_f32_to_narrow(d, src, got, N);
    for (int64_t i = 0; i < N; i++) {
      uint8_t want = (uint8_t)hlc_float_bits_from_f32(d, src[i]);
      if (got[i] != want) {
        uint32_t u;
        memcpy(&u, &src[i], 4);
        ck_abort_msg("%s: f32 %08x gave %02x, want %02x", hlc_dtype_name(d), u, got[i], want);
      }
    }
  }
  ck_assert_int_ge(formats, 5);
  free(src);
  free(got);
}
END_TEST

START_TEST(complex_ops) {
  float a[] = {3, 4, 1, 1}, b[] = {1, 0, 0, 1}, o[4], r[2];
  float mul[] = {3, 4, -1, 1};   /* (3+4i)*1, (1+i)*i = -1+i */
  ck_assert_int_eq(run_bin(HLO_OP_MULTIPLY, HLO_C64, HLO_C64, 2, a, b, o), 0);
  CHECK_F32(o, mul, 4);
  ck_assert_int_eq(run_un(HLO_OP_ABS, HLO_C64, HLO_F32, 2, a, r), 0);
  ck_assert(r[0] == 5 && fabsf(r[1] - sqrtf(2)) < 1e-7f);
  ck_assert_int_eq(run_un(HLO_OP_IMAG, HLO_C64, HLO_F32, 2, a, r), 0);
  ck_assert(r[0] == 4 && r[1] == 1);
  float re[] = {1, 2}, im[] = {3, 4}, c[4], ce[] = {1, 3, 2, 4};
  ck_assert_int_eq(run_bin(HLO_OP_COMPLEX, HLO_F32, HLO_C64, 2, re, im, c), 0);
  CHECK_F32(c, ce, 4);
}
END_TEST

/* ---- compare / select / clamp -------------------------------------------- */

static HloCmpDir g_dir;
static HloCmpType g_type;
static void cmp_setup(HloInstr *i) {
  i->cmp_dir = g_dir;
  i->cmp_type = g_type;
}
static int run_cmp(HloCmpDir d, HloCmpType ty, HloDtype t, int64_t n, const void *a,
                   const void *b, uint8_t *o) {
  g_dir = d;
  g_type = ty;
  HloDtype ts[2] = {t, t};
  int64_t ns[2] = {n, n};
  const void *dd[2] = {a, b};
  return run_op(HLO_OP_COMPARE, 2, ts, ns, dd, HLO_PRED, n, o, cmp_setup);
}

START_TEST(compare_dirs) {
  float a[] = {NAN, 1, -0.0f, -NAN, -INFINITY, NAN}, b[] = {1, NAN, 0.0f, -INFINITY, -NAN, INFINITY};
  uint8_t o[6];
  uint8_t lt[] = {0, 0, 0, 0, 0, 0}, ne[] = {1, 1, 0, 1, 1, 1}, eq[] = {0, 0, 1, 0, 0, 0};
  ck_assert_int_eq(run_cmp(HLO_CMP_LT, HLO_CMPT_DEFAULT, HLO_F32, 6, a, b, o), 0);
  CHECK_INT(o, lt, 6);
  ck_assert_int_eq(run_cmp(HLO_CMP_NE, HLO_CMPT_FLOAT, HLO_F32, 6, a, b, o), 0);
  CHECK_INT(o, ne, 6);
  ck_assert_int_eq(run_cmp(HLO_CMP_EQ, HLO_CMPT_DEFAULT, HLO_F32, 6, a, b, o), 0);
  CHECK_INT(o, eq, 6);
  /* total order: -NaN < -inf < -0 < +0 < inf < NaN */
  uint8_t tlt[] = {0, 1, 1, 1, 0, 0}, teq[] = {0, 0, 0, 0, 0, 0};
  ck_assert_int_eq(run_cmp(HLO_CMP_LT, HLO_CMPT_TOTALORDER, HLO_F32, 6, a, b, o), 0);
  CHECK_INT(o, tlt, 6);
  ck_assert_int_eq(run_cmp(HLO_CMP_EQ, HLO_CMPT_TOTALORDER, HLO_F32, 6, a, b, o), 0);
  CHECK_INT(o, teq, 6);
  uint32_t ua[] = {0xFFFFFFFFu, 1}, ub[] = {1, 1};
  uint8_t ugt[] = {1, 0}, uge[] = {1, 1};
  ck_assert_int_eq(run_cmp(HLO_CMP_GT, HLO_CMPT_DEFAULT, HLO_U32, 2, ua, ub, o), 0);
  CHECK_INT(o, ugt, 2);
  ck_assert_int_eq(run_cmp(HLO_CMP_GE, HLO_CMPT_DEFAULT, HLO_U32, 2, ua, ub, o), 0);
  CHECK_INT(o, uge, 2);
  ck_assert_int_eq(run_cmp(HLO_CMP_GT, HLO_CMPT_DEFAULT, HLO_S32, 2, ua, ub, o), 0);
  uint8_t sgt[] = {0, 0};
  CHECK_INT(o, sgt, 2);
  /* bf16 compare through f32; complex EQ */
  uint16_t ha[] = {0x3F80, 0x7FC0}, hb[] = {0x3F80, 0x7FC0};
  uint8_t heq[] = {1, 0};
  ck_assert_int_eq(run_cmp(HLO_CMP_EQ, HLO_CMPT_DEFAULT, HLO_BF16, 2, ha, hb, o), 0);
  CHECK_INT(o, heq, 2);
  float ca[] = {1, 2}, cb[] = {1, 3};
  ck_assert_int_eq(run_cmp(HLO_CMP_EQ, HLO_CMPT_DEFAULT, HLO_C64, 1, ca, cb, o), 0);
  ck_assert_int_eq(o[0], 0);
  ck_assert_int_ne(run_cmp(HLO_CMP_LT, HLO_CMPT_DEFAULT, HLO_C64, 1, ca, cb, o), 0);
}
END_TEST

START_TEST(select_clamp) {
  uint8_t p[] = {1, 0, 1}, ps[] = {0};
  int64_t ta[] = {1, 2, 3}, tb[] = {-1, -2, -3}, o[3], e[] = {1, -2, 3};
  HloDtype ts[3] = {HLO_PRED, HLO_S64, HLO_S64};
  int64_t ns[3] = {3, 3, 3};
  const void *d[3] = {p, ta, tb};
  ck_assert_int_eq(run_op(HLO_OP_SELECT, 3, ts, ns, d, HLO_S64, 3, o, NULL), 0);
  CHECK_INT(o, e, 3);
  int64_t ns0[3] = {0, 3, 3};
  const void *d0[3] = {ps, ta, tb};
  ck_assert_int_eq(run_op(HLO_OP_SELECT, 3, ts, ns0, d0, HLO_S64, 3, o, NULL), 0);
  CHECK_INT(o, tb, 3);
  /* clamp with scalar bounds [0, 10]; NaN value stays NaN; NaN bound wins */
  float lo[] = {0}, hi[] = {10}, x[] = {-5, 5, 15, NAN}, fo[4], fe[] = {0, 5, 10, NAN};
  HloDtype ct[3] = {HLO_F32, HLO_F32, HLO_F32};
  int64_t cn[3] = {0, 4, 0};
  const void *cd[3] = {lo, x, hi};
  ck_assert_int_eq(run_op(HLO_OP_CLAMP, 3, ct, cn, cd, HLO_F32, 4, fo, NULL), 0);
  CHECK_F32(fo, fe, 4);
  float nlo[] = {NAN};
  const void *cd2[3] = {nlo, x, hi};
  ck_assert_int_eq(run_op(HLO_OP_CLAMP, 3, ct, cn, cd2, HLO_F32, 4, fo, NULL), 0);
  for (int i = 0; i < 4; i++) ck_assert(isnan(fo[i]));
  int32_t ilo[] = {-1, 0, 1}, ix[] = {-5, 5, 0}, ihi[] = {1, 3, 2}, io[3], ie[] = {-1, 3, 1};
  HloDtype it[3] = {HLO_S32, HLO_S32, HLO_S32};
  int64_t in3[3] = {3, 3, 3};
  const void *id[3] = {ilo, ix, ihi};
  ck_assert_int_eq(run_op(HLO_OP_CLAMP, 3, it, in3, id, HLO_S32, 3, io, NULL), 0);
  CHECK_INT(io, ie, 3);
}
END_TEST

/* clamp's precedence of NaNs, told apart by payload: a NaN lo wins, then a
 * NaN x, then a NaN hi; otherwise min(hi, max(x, lo)). 37 elements (vector
 * bodies and a tail), with array bounds, scalar bounds and one of each. */
static float nan_payload(uint32_t p) {
  uint32_t u = 0x7fc00000u | p;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static float clamp_spec(float l, float v, float h) {
  if (isnan(l)) return l;
  if (isnan(v)) return v;
  if (isnan(h)) return h;
  float m = v < l ? l : v;
  return m < h ? m : h;
}

START_TEST(clamp_nan_precedence) {
  enum { N = 37 };
  float lo[N], x[N], hi[N], o[N];
  for (int i = 0; i < N; i++) {
    lo[i] = (float)(i % 5) - 2;
    x[i] = (float)(i % 7) - 3;
    hi[i] = lo[i] + (float)(i % 3);
  }
  lo[3] = nan_payload(1); x[3] = nan_payload(2); hi[3] = nan_payload(3);
  x[8] = nan_payload(2); hi[8] = nan_payload(3);
  hi[13] = nan_payload(3);
  x[20] = nan_payload(2);
  lo[33] = nan_payload(1); hi[33] = nan_payload(3);
  HloDtype ct[3] = {HLO_F32, HLO_F32, HLO_F32};
  for (int shape = 0; shape < 4; shape++) {   /* lo, hi: array/array, scalar/scalar, mixes */
    int64_t cn[3] = {shape & 1 ? 0 : N, N, shape & 2 ? 0 : N};
    const float *l = shape & 1 ? &lo[13] : lo, *h = shape & 2 ? &hi[8] : hi;
    const void *cd[3] = {l, x, h};
    ck_assert_int_eq(run_op(HLO_OP_CLAMP, 3, ct, cn, cd, HLO_F32, N, o, NULL), 0);
    for (int i = 0; i < N; i++) {
      float want = clamp_spec(l[cn[0] ? i : 0], x[i], h[cn[2] ? i : 0]);
      ck_assert_msg(memcmp(&o[i], &want, 4) == 0, "shape %d, element %d: %a, want %a", shape,
                    i, (double)o[i], (double)want);
    }
  }
}
END_TEST

/* ---- convert / bitcast / reduce-precision ------------------------------- */

START_TEST(convert_semantics) {
  float f[] = {1.9f, -1.9f, 3e9f, -3e9f, NAN}, o8[5];
  int32_t i[5], ie[] = {1, -1, INT32_MAX, INT32_MIN, 0};
  ck_assert_int_eq(run_un(HLO_OP_CONVERT, HLO_F32, HLO_S32, 5, f, i), 0);
  CHECK_INT(i, ie, 5);
  float fu[] = {-5, 300, 254.9f};
  uint8_t u[3], ue[] = {0, 255, 254};
  ck_assert_int_eq(run_un(HLO_OP_CONVERT, HLO_F32, HLO_U8, 3, fu, u), 0);
  CHECK_INT(u, ue, 3);
  int32_t si[] = {300, -129, 16777217};
  int8_t s8[3], s8e[] = {44, 127, 1};   /* 16777217 = 0x1000001 -> low byte 1 */
  ck_assert_int_eq(run_un(HLO_OP_CONVERT, HLO_S32, HLO_S8, 3, si, s8), 0);
  CHECK_INT(s8, s8e, 3);
  float sf[3], sfe[] = {300, -129, 16777216};
  ck_assert_int_eq(run_un(HLO_OP_CONVERT, HLO_S32, HLO_F32, 3, si, sf), 0);
  CHECK_F32(sf, sfe, 3);
  uint64_t big[] = {UINT64_MAX};
  float bf[1], bfe[] = {0x1p64f};
  ck_assert_int_eq(run_un(HLO_OP_CONVERT, HLO_U64, HLO_F32, 1, big, bf), 0);
  CHECK_F32(bf, bfe, 1);
  float pf[] = {0, -0.0f, NAN, 2};
  uint8_t pr[4], pre[] = {0, 0, 1, 1};
  ck_assert_int_eq(run_un(HLO_OP_CONVERT, HLO_F32, HLO_PRED, 4, pf, pr), 0);
  CHECK_INT(pr, pre, 4);
  float tb[] = {0.1f, 500};
  uint16_t b16[2], b16e[] = {0x3DCD, 0x43FA};   /* 500 = 1.953125 * 2^8 exactly */
  ck_assert_int_eq(run_un(HLO_OP_CONVERT, HLO_F32, HLO_BF16, 2, tb, b16), 0);
  CHECK_INT(b16, b16e, 2);
  uint8_t e4[2], e4e[] = {0x1D, 0x7F};   /* 0.1 -> 0.1015625 = 1.625*2^-4; 500 -> NaN */
  ck_assert_int_eq(run_un(HLO_OP_CONVERT, HLO_F32, HLO_F8E4M3FN, 2, tb, e4), 0);
  CHECK_INT(e4, e4e, 2);
  int32_t i257[] = {257};
  uint16_t b257[1], b257e[] = {0x4380};
  ck_assert_int_eq(run_un(HLO_OP_CONVERT, HLO_S32, HLO_BF16, 1, i257, b257), 0);
  CHECK_INT(b257, b257e, 1);
  float c[] = {1.5f, 2.5f}, cr[1], cre[] = {1.5f};
  ck_assert_int_eq(run_un(HLO_OP_CONVERT, HLO_C64, HLO_F32, 1, c, cr), 0);
  CHECK_F32(cr, cre, 1);
  double cd[2], cde[] = {1.5, 0};
  ck_assert_int_eq(run_un(HLO_OP_CONVERT, HLO_F32, HLO_C128, 1, c, cd), 0);
  ck_assert(cd[0] == cde[0] && cd[1] == cde[1]);
  (void)o8;
}
END_TEST

/* Floats to integers in arrays long enough for the vector loops (and a
 * tail): truncation toward zero, saturation at both ends and NaN -> 0 at
 * every position. Expected values by the rule, per special value. */
START_TEST(convert_float_to_int_saturates_in_vectors) {
  enum { N = 53, K = 10 };
  static const double v[K] = {1.9, -1.9, 254.9, -5, 300, 3e9, -3e9, INFINITY, -INFINITY, NAN};
  static const int32_t want_s32[K] = {1, -1, 254, -5, 300, INT32_MAX, INT32_MIN, INT32_MAX,
                                      INT32_MIN, 0};
  static const uint8_t want_u8[K] = {1, 0, 254, 0, 255, 255, 0, 255, 0, 0};
  static const int8_t want_s8[K] = {1, -1, 127, -5, 127, 127, -128, 127, -128, 0};
  static const int64_t want_s64[K] = {1, -1, 254, -5, 300, 3000000000LL, -3000000000LL,
                                      INT64_MAX, INT64_MIN, 0};
  static const uint8_t want_pred[K] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  float f[N];
  double d[N];
  int32_t s32[N], e32[N];
  uint8_t u8[N], eu8[N], pr[N], epr[N];
  int8_t s8[N], es8[N];
  int64_t s64[N], e64[N];
  for (int i = 0; i < N; i++) {
    int k = (i * 7) % K;   /* every value at several positions */
    f[i] = (float)v[k], d[i] = v[k];
    e32[i] = want_s32[k], eu8[i] = want_u8[k], es8[i] = want_s8[k], e64[i] = want_s64[k];
    epr[i] = want_pred[k];
  }
  ck_assert_int_eq(run_un(HLO_OP_CONVERT, HLO_F32, HLO_S32, N, f, s32), 0);
  CHECK_INT(s32, e32, N);
  ck_assert_int_eq(run_un(HLO_OP_CONVERT, HLO_F64, HLO_S32, N, d, s32), 0);
  CHECK_INT(s32, e32, N);
  ck_assert_int_eq(run_un(HLO_OP_CONVERT, HLO_F32, HLO_U8, N, f, u8), 0);
  CHECK_INT(u8, eu8, N);
  ck_assert_int_eq(run_un(HLO_OP_CONVERT, HLO_F64, HLO_S8, N, d, s8), 0);
  CHECK_INT(s8, es8, N);
  ck_assert_int_eq(run_un(HLO_OP_CONVERT, HLO_F64, HLO_S64, N, d, s64), 0);
  CHECK_INT(s64, e64, N);
  ck_assert_int_eq(run_un(HLO_OP_CONVERT, HLO_F32, HLO_PRED, N, f, pr), 0);
  CHECK_INT(pr, epr, N);
}
END_TEST

START_TEST(convert_small_ints_to_f32) {
  /* pred, s8, u8, s16, u16 and s32 to f32 (a direct loop per type): every
   * value exact but s32 beyond 2^24, rounded to nearest even: 16777217 ->
   * 16777216, 16777219 -> 16777220, INT32_MAX -> 2^31; 37 elements, so the
   * vector loops have a tail. */
  enum { N = 37 };
  uint8_t pr[N], u8[N];
  int8_t s8[N];
  int16_t s16[N];
  uint16_t u16[N];
  int32_t s32[N];
  float o[N], e[N];
  for (int i = 0; i < N; i++) {
    pr[i] = (uint8_t)(i % 3 == 0);
    s8[i] = (int8_t)(i * 7 - 128);
    u8[i] = (uint8_t)(255 - i * 5);
    s16[i] = (int16_t)(i * 1771 - 32768);
    u16[i] = (uint16_t)(65535 - i * 1234);
    s32[i] = i == 0 ? 16777217 : i == 1 ? 16777219 : i == 2 ? INT32_MAX : i == 3 ? INT32_MIN : -i * 1000;
  }
  ck_assert_int_eq(run_un(HLO_OP_CONVERT, HLO_PRED, HLO_F32, N, pr, o), 0);
  for (int i = 0; i < N; i++) e[i] = i % 3 == 0 ? 1.0f : 0.0f;
  CHECK_F32(o, e, N);
  ck_assert_int_eq(run_un(HLO_OP_CONVERT, HLO_S8, HLO_F32, N, s8, o), 0);
  for (int i = 0; i < N; i++) e[i] = (float)(i * 7 - 128);
  CHECK_F32(o, e, N);
  ck_assert_int_eq(run_un(HLO_OP_CONVERT, HLO_U8, HLO_F32, N, u8, o), 0);
  for (int i = 0; i < N; i++) e[i] = (float)(255 - i * 5);
  CHECK_F32(o, e, N);
  ck_assert_int_eq(run_un(HLO_OP_CONVERT, HLO_S16, HLO_F32, N, s16, o), 0);
  for (int i = 0; i < N; i++) e[i] = (float)(i * 1771 - 32768);
  CHECK_F32(o, e, N);
  ck_assert_int_eq(run_un(HLO_OP_CONVERT, HLO_U16, HLO_F32, N, u16, o), 0);
  for (int i = 0; i < N; i++) e[i] = (float)(65535 - i * 1234);
  CHECK_F32(o, e, N);
  ck_assert_int_eq(run_un(HLO_OP_CONVERT, HLO_S32, HLO_F32, N, s32, o), 0);
  for (int i = 4; i < N; i++) e[i] = (float)(-i * 1000);
  e[0] = 16777216.0f, e[1] = 16777220.0f, e[2] = 0x1p31f, e[3] = -0x1p31f;
  CHECK_F32(o, e, N);
}
END_TEST

START_TEST(bitcast_convert) {
  float f[] = {1.0f};
  uint32_t u[1];
  ck_assert_int_eq(run_un(HLO_OP_BITCAST_CONVERT, HLO_F32, HLO_U32, 1, f, u), 0);
  ck_assert_uint_eq(u[0], 0x3F800000u);
  /* u32[1] -> u8[1,4]: little-endian, low byte first */
  HloInstr *bc = tl_instr(HLO_OP_BITCAST_CONVERT, SH(HLO_U8, 1, 4), 1, tl_param(0, SH(HLO_U32, 1)));
  HliValue *in = tl_value(&bc->ops[0]->shape, NULL), *out = tl_value(&bc->shape, NULL);
  *(uint32_t *)in->data = 0x04030201u;
  const HliOpEntry *e = &hli_op_table()[HLO_OP_BITCAST_CONVERT];
  ck_assert_int_eq(e->check(NULL, bc), 0);
  ck_assert_int_eq(e->run(NULL, bc, &in, out), 0);
  uint8_t exp[] = {1, 2, 3, 4};
  ck_assert_mem_eq(out->data, exp, 4);
  hli_value_unref(NULL, in);
  hli_value_unref(NULL, out);
  /* wrong trailing dimension is an error */
  bc->shape.dims[1] = 2;
  ck_assert_int_ne(e->check(NULL, bc), 0);
}
END_TEST

static void rp_f16like(HloInstr *i) { i->exponent_bits = 5; i->mantissa_bits = 10; }
static void rp_m0(HloInstr *i) { i->exponent_bits = 8; i->mantissa_bits = 0; }

START_TEST(reduce_precision) {
  float a[] = {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 65520, 65519, 1e-5f, -0x1p-14f, NAN, -INFINITY};
  float e[] = {1, 1.0f + 0x1p-9f, INFINITY, 65504, 0, -0x1p-14f, NAN, -INFINITY};
  float o[8];
  HloDtype t = HLO_F32;
  int64_t n = 8;
  const void *d[1] = {a};
  ck_assert_int_eq(run_op(HLO_OP_REDUCE_PRECISION, 1, &t, &n, d, HLO_F32, 8, o, rp_f16like), 0);
  CHECK_F32(o, e, 8);
  /* mantissa_bits = 0: 1.5 ties to even exponent -> 2, 1.25 -> 1; NaN -> +inf */
  float b[] = {1.5f, 1.25f, NAN}, be[] = {2, 1, INFINITY};
  const void *db[1] = {b};
  n = 3;
  ck_assert_int_eq(run_op(HLO_OP_REDUCE_PRECISION, 1, &t, &n, db, HLO_F32, 3, o, rp_m0), 0);
  CHECK_F32(o, be, 3);
}
END_TEST

/* ---- vector math: every ISA against libm --------------------------------- */

static double ulp_f32(float got, double want) {
  if (isnan(want)) return isnan(got) ? 0 : 1e9;
  if (isinf(want)) return (double)got == want ? 0 : 1e9;
  float w = (float)want;
  if (isinf(w)) return isinf(got) && signbit(got) == signbit(w) ? 0 : 1e9;
  double u = fabs(w) < 0x1p-126 ? 0x1p-149 : ldexp(1.0, ilogb(w) - 23);
  return fabs((double)got - want) / u;
}
static double ulp_f64(double got, double want) {
  if (isnan(want)) return isnan(got) ? 0 : 1e9;
  if (isinf(want)) return got == want ? 0 : 1e9;
  double u = fabs(want) < 0x1p-1022 ? 0x1p-1074 : ldexp(1.0, ilogb(want) - 52);
  return fabs(got - want) / u;
}

enum { NV = 2003 };   /* not a multiple of any vector width: exercises tails */

START_TEST(vmath_ulp) {
  static float in[NV], in2[NV], out[NV];
  static double din[NV], din2[NV], dout[NV];
  for (int i = 0; i < NV; i++) {
    double t = (i - NV / 2) / (double)(NV / 2);  /* [-1, 1] */
    in[i] = (float)(t * 20);
    in2[i] = (float)(0.5 + fabs(t) * 3);
    din[i] = t * 20;
    din2[i] = 0.5 + fabs(t) * 3;
  }
  in[0] = NAN; in[1] = INFINITY; in[2] = -INFINITY; in[3] = 0; in[4] = -0.0f;
  din[0] = NAN; din[1] = INFINITY; din[2] = -INFINITY;
  /* f32 bound: 2 ULP, but XLA's exp, expm1 and log1p (xla_math.h) */
  struct { int id; double (*ref)(double); double lo, hi, f32_bound; } un[] = {
    {HLK_VM_EXP, exp, -80, 80, 4.0}, {HLK_VM_EXPM1, expm1, -20, 20, 6.2},
    {HLK_VM_LOG, log, 0, 1e30, 0}, {HLK_VM_LOG1P, log1p, -0.99, 1e30, 2.52},
    {HLK_VM_SIN, sin, -1e4, 1e4, 0}, {HLK_VM_COS, cos, -1e4, 1e4, 0},
    {HLK_VM_TAN, tan, -1e4, 1e4, 0}, {HLK_VM_TANH, tanh, -1e30, 1e30, 0},
    {HLK_VM_ERF, erf, -1e30, 1e30, 0}, {HLK_VM_CBRT, cbrt, -1e30, 1e30, 0},
    {HLK_VM_ASIN, asin, -1, 1, 0}, {HLK_VM_ACOS, acos, -1, 1, 0},
    {HLK_VM_ATANH, atanh, -0.99, 0.99, 0}, {HLK_VM_ASINH, asinh, -1e30, 1e30, 0},
    {HLK_VM_ACOSH, acosh, 1, 1e30, 0}, {HLK_VM_SINH, sinh, -80, 80, 0},
    {HLK_VM_COSH, cosh, -80, 80, 0}, {HLK_VM_SQRT, sqrt, 0, 1e30, 0},
  };
  int checked = 0;
  for (int isa = 0; isa < HLK_NUM_ISAS; isa++) {
    const HlkVmath *vm = hlk_vmath_for_isa(isa);
    if (!vm) continue;
    checked++;
    for (size_t k = 0; k < sizeof un / sizeof un[0]; k++) {
      float x[NV];
      double dx[NV];
      for (int i = 0; i < NV; i++) {
        double t = (i - NV / 2) / (double)(NV / 2);
        double span = un[k].hi - un[k].lo;
        double v = un[k].lo + (t + 1) / 2 * (span > 1e6 ? 1e3 : span);   /* keep moderate */
        x[i] = i < 5 ? in[i] : (float)v;
        dx[i] = i < 3 ? din[i] : v;
      }
      vm->uf[un[k].id](x, out, NV);
      vm->ud[un[k].id](dx, dout, NV);
      for (int i = 0; i < NV; i++) {
        double u = ulp_f32(out[i], un[k].ref((double)x[i]));
        double bound = un[k].f32_bound > 0 ? un[k].f32_bound : 2.0;
        ck_assert_msg(u <= bound, "%s f32 op %d x=%a: %g ulp", vm->name, un[k].id, (double)x[i], u);
        double ud = ulp_f64(dout[i], un[k].ref(dx[i]));
        ck_assert_msg(ud <= 2.0, "%s f64 op %d x=%a: %g ulp", vm->name, un[k].id, dx[i], ud);
      }
    }
    vm->bf[HLK_VM_POW](in2, in, out, NV);
    vm->bd[HLK_VM_POW](din2, din, dout, NV);
    for (int i = 0; i < NV; i++) {
      ck_assert(ulp_f32(out[i], pow(in2[i], in[i])) <= 2.0);
      ck_assert(ulp_f64(dout[i], pow(din2[i], din[i])) <= 2.0);
    }
    vm->bf[HLK_VM_ATAN2](in, in2, out, NV);
    vm->bd[HLK_VM_ATAN2](din, din2, dout, NV);
    for (int i = 0; i < NV; i++) {
      ck_assert(ulp_f32(out[i], atan2(in[i], in2[i])) <= 2.0);
      ck_assert(ulp_f64(dout[i], atan2(din[i], din2[i])) <= 2.0);
    }
    vm->uf[HLK_VM_LOGISTIC](in, out, NV);
    for (int i = 5; i < NV; i++)
      ck_assert(ulp_f32(out[i], 1 / (1 + exp(-(double)in[i]))) <= 3.0);
  }
  ck_assert_int_ge(checked, 1);
}
END_TEST

/* f32 exp, expm1, tanh, log, log1p and logistic are XLA:CPU's algorithms
 * (xla_math.h).
 * Checked three ways, for every table built for this CPU:
 * - XLA's own results: inputs and outputs (as bits) of the public
 *   conformance cases exp/expm1/tanh/log/log1p/logistic_float32_20_20,
 *   chosen where XLA's result is not the correctly rounded one (for exp,
 *   tanh and logistic, two where it is);
 * - the same bits from every table (the scalar one is plain C with fmaf)
 *   on every 65521st bit pattern, and within XLA's error bounds of libm's
 *   double functions there (tools/vmath_ulp over all 2^32: 4.9 ULP for
 *   tanh, 4.0 for exp where its result is normal, 1.2 for log of normal
 *   numbers, 2.52 for log1p, 2.5 for logistic, 6.2 for expm1);
 * - special values, exactly. */
typedef struct { uint32_t x, want; } Golden;
static const Golden xla_exp_golden[] = {
  {0x40d37185u, 0x44392d5au}, {0xc0cf094au, 0x3acb156cu}, {0xc0bacafau, 0x3b3f2754u},
  {0xc0a653adu, 0x3bb52e30u}, {0xbe237da5u, 0x3f5a3924u}, {0xbe26777au, 0x3f599706u},
  {0xc04ac7b2u, 0x3d2c50ccu}, {0x4081bc2au, 0x42668f82u}};
static const Golden xla_tanh_golden[] = {
  {0x410cd7e1u, 0x3f800000u}, {0x4109db86u, 0x3f800000u}, {0xc102080cu, 0xbf800000u},
  {0x40ec3646u, 0x3f7ffff4u}, {0x3a5e7f0eu, 0x3a5e7f08u}, {0x3c3bbeaau, 0x3c3bbc8eu},
  {0xc0a4aadcu, 0xbf7ffb8eu}, {0x402369cau, 0x3f7ceaf9u}};
static const Golden xla_logistic_golden[] = {
  {0x411ee03au, 0x3f7ffcceu}, {0x410691feu, 0x3f7ff16du}, {0x40e2a445u, 0x3f7fc906u},
  {0xc0e1ef38u, 0x3a60d433u}, {0xbaa0925fu, 0x3effd7dau}, {0xbb0be3d5u, 0x3effba0fu},
  {0x3f05642cu, 0x3f209cfeu}, {0x3c85e20bu, 0x3f010bc3u}};

static const Golden xla_log_golden[] = {
  {0x3ed048bfu, 0xbf66407au}, {0x3f20a59eu, 0xbeee9368u}, {0x3f283950u, 0xbed6fabdu},
  {0x3fc0e5a7u, 0x3ed1fc1bu}, {0x3f925dc6u, 0x3e094cd3u}, {0x3f5d149du, 0xbe162b89u},
  {0x40abeeccu, 0x3fd73710u}, {0x405ad8d8u, 0x3f9d5feeu}};

static const Golden xla_expm1_golden[] = {
  {0x3f533e49u, 0x3fa42152u}, {0xbfc9d23du, 0xbf4b18fcu}, {0xbd2d8c30u, 0xbd29ec20u},
  {0x401e218cu, 0x412d4f60u}, {0xbe985c35u, 0xbe83c80du}, {0xbd8c2808u, 0xbd8777d3u},
  {0xbea07208u, 0xbe89bd10u}, {0x401c67c9u, 0x4128461eu}};

static const Golden xla_log1p_golden[] = {
  {0xbed2d584u, 0xbf07d98au}, {0xbe9aff83u, 0xbeb89e66u}, {0xbeb65e10u, 0xbee17508u},
  {0xbe907c3cu, 0xbea9c267u}, {0x3e8611cau, 0x3e6e2a17u}, {0x40000de9u, 0x3f8ca89au},
  {0x3ee6c7f8u, 0x3ebe80d9u}, {0x3f317c97u, 0x3f06d4beu}};

static double logistic_ref(double x) { return 1 / (1 + exp(-x)); }

/* Exact results (NaN: any NaN). */
static void expect_specials(const HlkVmath *vm, int id, const float *x, const float *want, int n,
                            const char *name) {
  float out[16];
  vm->uf[id](x, out, n);
  for (int i = 0; i < n; i++) {
    bool ok = isnan(want[i]) ? isnan(out[i]) : memcmp(&out[i], &want[i], 4) == 0;
    ck_assert_msg(ok, "%s %s(%a) = %a, want %a", vm->name, name, (double)x[i], (double)out[i],
                  (double)want[i]);
  }
}

/* XLA's results for the golden inputs, bit for bit. */
static void expect_golden(const HlkVmath *vm, int id, const Golden *g, int n, const char *name) {
  float x[8], want[8];
  for (int i = 0; i < n; i++) {
    memcpy(&x[i], &g[i].x, 4);
    memcpy(&want[i], &g[i].want, 4);
  }
  expect_specials(vm, id, x, want, n, name);
}

enum { SWEEP_STRIDE = 65521, SWEEP_N = (int)((1ull << 32) / SWEEP_STRIDE + 1) };

START_TEST(xla_f32_transcendentals) {
  static float x[SWEEP_N], ref[SWEEP_N], out[SWEEP_N];
  int64_t n = 0;
  for (uint64_t b = 0; b < (1ull << 32); b += SWEEP_STRIDE, n++) {
    uint32_t bits = (uint32_t)b;
    memcpy(&x[n], &bits, 4);
  }
  const struct {
    int id;
    const char *name;
    const Golden *golden;
    double (*libm)(double);
    double bound, lo, hi;   /* ULPs from libm over inputs in [lo, hi] */
  } fn[6] = {
    {HLK_VM_EXP, "exp", xla_exp_golden, exp, 4.0, -87.3, 88.7},
    {HLK_VM_TANH, "tanh", xla_tanh_golden, tanh, 4.9, -INFINITY, INFINITY},
    {HLK_VM_LOGISTIC, "logistic", xla_logistic_golden, logistic_ref, 2.5, -85, INFINITY},
    {HLK_VM_LOG, "log", xla_log_golden, log, 1.2, 0x1p-126, INFINITY},
    {HLK_VM_EXPM1, "expm1", xla_expm1_golden, expm1, 6.2, -100, 88.7},
    {HLK_VM_LOG1P, "log1p", xla_log1p_golden, log1p, 2.52, -0.9999, INFINITY},
  };
  const HlkVmath *scalar = hlk_vmath_for_isa(HLK_ISA_SCALAR);
  ck_assert_ptr_nonnull(scalar);
  for (int f = 0; f < 6; f++) {
    /* the bound on the scalar table's results, which every table must equal
     * (one assertion per sweep: a million of them made the test slow under
     * valgrind) */
    scalar->uf[fn[f].id](x, ref, n);
    int64_t far = -1;
    for (int64_t i = 0; i < n && far < 0; i++)
      if (x[i] >= fn[f].lo && x[i] <= fn[f].hi &&
          ulp_f32(ref[i], fn[f].libm((double)x[i])) > fn[f].bound)
        far = i;
    ck_assert_msg(far < 0, "%s(%a) = %a: over %g ulp", fn[f].name, (double)x[far < 0 ? 0 : far],
                  (double)ref[far < 0 ? 0 : far], fn[f].bound);
    for (int isa = 0; isa < HLK_NUM_ISAS; isa++) {
      const HlkVmath *vm = hlk_vmath_for_isa(isa);
      if (!vm) continue;
      expect_golden(vm, fn[f].id, fn[f].golden, 8, fn[f].name);
      if (isa == HLK_ISA_SCALAR) continue;
      vm->uf[fn[f].id](x, out, n);
      int64_t bad = -1;
      for (int64_t i = 0; i < n && bad < 0; i++)
        if (isnan(ref[i]) ? !isnan(out[i]) : memcmp(&out[i], &ref[i], 4) != 0) bad = i;
      ck_assert_msg(bad < 0, "%s %s(%a) = %a, scalar gives %a", vm->name, fn[f].name,
                    (double)x[bad < 0 ? 0 : bad], (double)out[bad < 0 ? 0 : bad],
                    (double)ref[bad < 0 ? 0 : bad]);
    }
  }
  for (int isa = 0; isa < HLK_NUM_ISAS; isa++) {
    const HlkVmath *vm = hlk_vmath_for_isa(isa);
    if (vm) {
      /* exp: 2^n is 0 for n = -127 (x below about -87.7); exp(88.8) is past the largest f32 */
      expect_specials(vm, HLK_VM_EXP,
                      (const float[]){0.0f, -0.0f, INFINITY, -INFINITY, NAN, -200.0f, 200.0f,
                                      -87.8f, 88.8f},
                      (const float[]){1.0f, 1.0f, INFINITY, 0.0f, NAN, 0.0f, INFINITY, 0.0f,
                                      INFINITY},
                      9, "exp");
      /* tanh: x itself below 0.0004 (sign of zero kept); +-1 from the clamp on */
      expect_specials(vm, HLK_VM_TANH,
                      (const float[]){0.0f, -0.0f, INFINITY, -INFINITY, NAN, 0x1p-149f, 0.0003f,
                                      -0.0003f, 20.0f, -20.0f, 1e30f},
                      (const float[]){0.0f, -0.0f, 1.0f, -1.0f, NAN, 0x1p-149f, 0.0003f, -0.0003f,
                                      1.0f, -1.0f, 1.0f},
                      11, "tanh");
      expect_specials(vm, HLK_VM_LOGISTIC,
                      (const float[]){0.0f, -0.0f, INFINITY, -INFINITY, NAN, 100.0f},
                      (const float[]){0.5f, 0.5f, 1.0f, 0.0f, NAN, 1.0f}, 6, "logistic");
      /* log: subnormals count as 2^-126 (log 2^-126 = -87.3365447); 0 and -0
       * give -inf, negatives NaN */
      expect_specials(vm, HLK_VM_LOG,
                      (const float[]){0.0f, -0.0f, -1.0f, INFINITY, -INFINITY, NAN, 1.0f,
                                      0x1p-140f, 0x1p-126f, 2.0f},
                      (const float[]){-INFINITY, -INFINITY, NAN, INFINITY, NAN, NAN, 0.0f,
                                      -0x1.5d58a0p+6f, -0x1.5d58a0p+6f, 0x1.62e430p-1f},
                      10, "log");
      /* expm1: x itself where x/2 underflows (sign of zero kept) */
      expect_specials(vm, HLK_VM_EXPM1,
                      (const float[]){0.0f, -0.0f, INFINITY, -INFINITY, NAN, 0x1p-149f,
                                      -0x1p-149f, -200.0f},
                      (const float[]){0.0f, -0.0f, INFINITY, -1.0f, NAN, 0x1p-149f, -0x1p-149f,
                                      -1.0f},
                      8, "expm1");
      /* log1p: -1 gives -inf, below it NaN; signed zeros kept */
      expect_specials(vm, HLK_VM_LOG1P,
                      (const float[]){0.0f, -0.0f, -1.0f, -2.0f, INFINITY, -INFINITY, NAN},
                      (const float[]){0.0f, -0.0f, -INFINITY, NAN, INFINITY, NAN, NAN}, 7,
                      "log1p");
    }
  }
}
END_TEST

/* HLORUN_ISA forces a path (each Check test runs in its own process). */
START_TEST(isa_env) {
  setenv("HLORUN_ISA", "scalar", 1);
  ck_assert_int_eq(hlk_vmath_force(-1), 0);
  ck_assert_str_eq(hlk_vmath()->name, "scalar");
  if (hlk_vmath_for_isa(HLK_ISA_SSE4)) {
    setenv("HLORUN_ISA", "sse4", 1);
    hlk_vmath_force(-1);
    ck_assert_str_eq(hlk_vmath()->name, "sse4");
  }
  if (hlk_vmath_for_isa(HLK_ISA_AVX2)) {
    setenv("HLORUN_ISA", "avx2", 1);
    hlk_vmath_force(-1);
    ck_assert_str_eq(hlk_vmath()->name, "avx2");
  }
  if (hlk_vmath_for_isa(HLK_ISA_AVX512)) {
    setenv("HLORUN_ISA", "avx512", 1);
    hlk_vmath_force(-1);
    ck_assert_str_eq(hlk_vmath()->name, "avx512");
  }
  /* the same kernel gives the same f32 exp through every table */
  float x[37], ref[37], got[37];
  for (int i = 0; i < 37; i++) x[i] = (float)(i - 18) * 0.7f;
  hlk_vmath_force(HLK_ISA_SCALAR);
  ck_assert_int_eq(run_un(HLO_OP_EXPONENTIAL, HLO_F32, HLO_F32, 37, x, ref), 0);
  for (int isa = 1; isa < HLK_NUM_ISAS; isa++) {
    if (hlk_vmath_force(isa) != 0) continue;
    ck_assert_int_eq(run_un(HLO_OP_EXPONENTIAL, HLO_F32, HLO_F32, 37, x, got), 0);
    for (int i = 0; i < 37; i++) ck_assert(ulp_f32(got[i], ref[i]) <= 2.0);
  }
  unsetenv("HLORUN_ISA");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("elementwise");
  TCase *ti = tcase_create("integers");
  tcase_add_checked_fixture(ti, tl_begin, tl_end);
  tcase_add_test(ti, int_divide_remainder);
  tcase_add_test(ti, int_wrap_arith);
  tcase_add_test(ti, int_shifts);
  tcase_add_test(ti, int_bits_and_power);
  tcase_add_test(ti, pred_arith);
  suite_add_tcase(s, ti);
  TCase *tf = tcase_create("floats");
  tcase_add_checked_fixture(tf, tl_begin, tl_end);
  tcase_add_test(tf, float_basic);
  tcase_add_test(tf, narrow_float_rounding);
  tcase_add_test(tf, complex_ops);
  suite_add_tcase(s, tf);
  TCase *tc = tcase_create("compare");
  tcase_add_checked_fixture(tc, tl_begin, tl_end);
  tcase_add_test(tc, compare_dirs);
  tcase_add_test(tc, f16_vector_conversions);
  tcase_add_test(tc, f8_bulk_conversions);
  tcase_add_test(tc, select_clamp);
  tcase_add_test(tc, clamp_nan_precedence);
  suite_add_tcase(s, tc);
  TCase *tv = tcase_create("convert");
  tcase_add_checked_fixture(tv, tl_begin, tl_end);
  tcase_add_test(tv, convert_semantics);
  tcase_add_test(tv, convert_float_to_int_saturates_in_vectors);
  tcase_add_test(tv, convert_small_ints_to_f32);
  tcase_add_test(tv, bitcast_convert);
  tcase_add_test(tv, reduce_precision);
  suite_add_tcase(s, tv);
  TCase *tm = tcase_create("vmath");
  tcase_add_checked_fixture(tm, tl_begin, tl_end);
  tcase_set_timeout(tm, 60);
  tcase_add_test(tm, vmath_ulp);
  tcase_add_test(tm, xla_f32_transcendentals);
  tcase_add_test(tm, isa_env);
  suite_add_tcase(s, tm);
  return s;
}

int main(void) { return tl_main(suite()); }
