/* check_dot.c: the dot kernel and the GEMM under it.
 *
 * Expected values are worked out by hand (noted beside each case) or, for the
 * multi-dimension case, with numpy's einsum; the blocked GEMM is also
 * cross-checked against the reference loop on random odd sizes, for every
 * instruction set the CPU has. */
#include "tests/testlib.h"
#include <stdio.h>
#include "interp/kernels/gemm.h"
#include "common/numeric.h"
#include <stdlib.h>
#include <math.h>
#include <string.h>

typedef struct Arr { HloDtype t; int rank; int64_t dims[8]; const void *data; } Arr;
typedef struct Dl { int n; int64_t v[8]; } Dl;

/* Build and check dot(l, r) -> o with the given dimension numbers; run it
 * (reference loop if ref). Returns the result, or NULL if check/run failed. */
static HliValue *run_dot(Arr l, Arr r, Arr o, Dl lb, Dl lc, Dl rb, Dl rc, bool ref) {
  HloShape ls = tl_shape(l.t, l.rank, l.dims), rs = tl_shape(r.t, r.rank, r.dims);
  HloShape os = tl_shape(o.t, o.rank, o.dims);
  HloInstr *ins = tl_instr(HLO_OP_DOT, os, 2, tl_param(0, ls), tl_param(1, rs));
  ins->dot.lhs_batch = tl_ints(lb.n, lb.v);
  ins->dot.lhs_contracting = tl_ints(lc.n, lc.v);
  ins->dot.rhs_batch = tl_ints(rb.n, rb.v);
  ins->dot.rhs_contracting = tl_ints(rc.n, rc.v);
  if (hlk_dot_check(NULL, ins) != 0) return NULL;
  HliValue *in[2] = { tl_kept(&ins->ops[0]->shape, l.data), tl_kept(&ins->ops[1]->shape, r.data) };
  HliValue *out = tl_kept(&ins->shape, NULL);
  if (out->nbytes) memset(out->data, 0x5a, out->nbytes);   /* garbage: must be overwritten */
  if (hlk_dot_run(NULL, ins, in, out, ref) != 0) return NULL;
  return out;
}

#define NONE ((Dl){0, {0}})
#define D1(a) ((Dl){1, {a}})
#define D2(a, b) ((Dl){2, {a, b}})

START_TEST(t_matmul_f32) {
  tl_begin();
  /* [[1,2,3],[4,5,6]] x [[7,8],[9,10],[11,12]] = [[58,64],[139,154]] */
  float a[] = {1, 2, 3, 4, 5, 6}, b[] = {7, 8, 9, 10, 11, 12}, want[] = {58, 64, 139, 154};
  for (int ref = 0; ref < 2; ref++) {
    HliValue *o = run_dot((Arr){HLO_F32, 2, {2, 3}, a}, (Arr){HLO_F32, 2, {3, 2}, b},
                          (Arr){HLO_F32, 2, {2, 2}, 0}, NONE, D1(1), NONE, D1(0), ref);
    ck_assert_ptr_nonnull(o);
    tl_expect_f32_near(o, want, 4, 0);
  }
  tl_end();
}
END_TEST

START_TEST(t_matvec_vecvec_outer) {
  tl_begin();
  float m[] = {1, 2, 3, 4}, v[] = {5, 6};
  /* [[1,2],[3,4]] . [5,6] = [17, 39] */
  HliValue *o = run_dot((Arr){HLO_F32, 2, {2, 2}, m}, (Arr){HLO_F32, 1, {2}, v},
                        (Arr){HLO_F32, 1, {2}, 0}, NONE, D1(1), NONE, D1(0), false);
  ck_assert_ptr_nonnull(o);
  tl_expect_f32_near(o, (float[]){17, 39}, 2, 0);
  /* [5,6] . [[1,2],[3,4]] = [23, 34] */
  o = run_dot((Arr){HLO_F32, 1, {2}, v}, (Arr){HLO_F32, 2, {2, 2}, m},
              (Arr){HLO_F32, 1, {2}, 0}, NONE, D1(0), NONE, D1(0), false);
  ck_assert_ptr_nonnull(o);
  tl_expect_f32_near(o, (float[]){23, 34}, 2, 0);
  /* [1,2,3] . [4,5,6] = 32, rank-0 result */
  float x[] = {1, 2, 3}, y[] = {4, 5, 6};
  o = run_dot((Arr){HLO_F32, 1, {3}, x}, (Arr){HLO_F32, 1, {3}, y}, (Arr){HLO_F32, 0, {0}, 0},
              NONE, D1(0), NONE, D1(0), false);
  ck_assert_ptr_nonnull(o);
  tl_expect_f32_near(o, (float[]){32}, 1, 0);
  /* outer product, no contracting dims: [1,2] x [3,4,5] */
  o = run_dot((Arr){HLO_F32, 1, {2}, v /* 5,6 */}, (Arr){HLO_F32, 1, {3}, x},
              (Arr){HLO_F32, 2, {2, 3}, 0}, NONE, NONE, NONE, NONE, false);
  ck_assert_ptr_nonnull(o);
  tl_expect_f32_near(o, (float[]){5, 10, 15, 6, 12, 18}, 6, 0);
  tl_end();
}
END_TEST

START_TEST(t_batch_first) {
  tl_begin();
  /* batch 0: [[1,2],[3,4]] x I = same; batch 1: ones x [[2,3],[4,5]] = [[6,8],[6,8]] */
  float a[] = {1, 2, 3, 4, 1, 1, 1, 1}, b[] = {1, 0, 0, 1, 2, 3, 4, 5};
  float want[] = {1, 2, 3, 4, 6, 8, 6, 8};
  for (int ref = 0; ref < 2; ref++) {
    HliValue *o = run_dot((Arr){HLO_F32, 3, {2, 2, 2}, a}, (Arr){HLO_F32, 3, {2, 2, 2}, b},
                          (Arr){HLO_F32, 3, {2, 2, 2}, 0}, D1(0), D1(2), D1(0), D1(1), ref);
    ck_assert_ptr_nonnull(o);
    tl_expect_f32_near(o, want, 8, 0);
  }
  tl_end();
}
END_TEST

START_TEST(t_batch_last) {
  tl_begin();
  /* lhs[k][b] = [[1,2],[3,4]], rhs[b][k] = [[5,6],[7,8]]:
   * b=0: 1*5 + 3*6 = 23; b=1: 2*7 + 4*8 = 46 */
  float a[] = {1, 2, 3, 4}, b[] = {5, 6, 7, 8};
  HliValue *o = run_dot((Arr){HLO_F32, 2, {2, 2}, a}, (Arr){HLO_F32, 2, {2, 2}, b},
                        (Arr){HLO_F32, 1, {2}, 0}, D1(1), D1(0), D1(0), D1(1), false);
  ck_assert_ptr_nonnull(o);
  tl_expect_f32_near(o, (float[]){23, 46}, 2, 0);
  tl_end();
}
END_TEST

START_TEST(t_batch_middle_two_contracting) {
  tl_begin();
  /* lhs [m=2][b=3][i=2][j=2] = arange(24)-7; rhs [j=2][n=2][b=3][i=2] =
   * arange(24)%5-2; lhs_contracting {3,2} pairs with rhs {0,3};
   * numpy: einsum('mbij,jnbi->bmn'). */
  float a[24], b[24];
  int32_t ai[24], bi[24];
  for (int i = 0; i < 24; i++) { a[i] = (float)(ai[i] = i - 7); b[i] = (float)(bi[i] = i % 5 - 2); }
  float want[] = {15, -7, -9, 17, -5, -1, 7, -1, -6, -1, -18, -25};
  for (int ref = 0; ref < 2; ref++) {
    HliValue *o = run_dot((Arr){HLO_F32, 4, {2, 3, 2, 2}, a}, (Arr){HLO_F32, 4, {2, 2, 3, 2}, b},
                          (Arr){HLO_F32, 3, {3, 2, 2}, 0}, D1(1), D2(3, 2), D1(2), D2(0, 3), ref);
    ck_assert_ptr_nonnull(o);
    tl_expect_f32_near(o, want, 12, 0);
  }
  HliValue *o = run_dot((Arr){HLO_S32, 4, {2, 3, 2, 2}, ai}, (Arr){HLO_S32, 4, {2, 2, 3, 2}, bi},
                        (Arr){HLO_S32, 3, {3, 2, 2}, 0}, D1(1), D2(3, 2), D1(2), D2(0, 3), false);
  ck_assert_ptr_nonnull(o);
  for (int i = 0; i < 12; i++) ck_assert_int_eq(((int32_t *)o->data)[i], (int32_t)want[i]);
  tl_end();
}
END_TEST

START_TEST(t_int_wrap) {
  tl_begin();
  /* s8: 100*3 = 300 = 44 mod 256 */
  int8_t a8[] = {100}, b8[] = {3};
  HliValue *o = run_dot((Arr){HLO_S8, 1, {1}, a8}, (Arr){HLO_S8, 1, {1}, b8},
                        (Arr){HLO_S8, 0, {0}, 0}, NONE, D1(0), NONE, D1(0), false);
  ck_assert_ptr_nonnull(o);
  ck_assert_int_eq(*(int8_t *)o->data, 44);
  /* s8 x s8 -> s32: (-128)^2 + 127^2 = 32513, no wrap in the wide result */
  int8_t c8[] = {-128, 127};
  o = run_dot((Arr){HLO_S8, 1, {2}, c8}, (Arr){HLO_S8, 1, {2}, c8}, (Arr){HLO_S32, 0, {0}, 0},
              NONE, D1(0), NONE, D1(0), false);
  ck_assert_ptr_nonnull(o);
  ck_assert_int_eq(*(int32_t *)o->data, 32513);
  /* s32: 2^30 * 4 = 2^32 = 0 mod 2^32; plus -1 * 1 -> -1 */
  int32_t a32[] = {1 << 30, -1}, b32[] = {4, 1};
  o = run_dot((Arr){HLO_S32, 1, {2}, a32}, (Arr){HLO_S32, 1, {2}, b32}, (Arr){HLO_S32, 0, {0}, 0},
              NONE, D1(0), NONE, D1(0), false);
  ck_assert_ptr_nonnull(o);
  ck_assert_int_eq(*(int32_t *)o->data, -1);
  /* u8: 200*2 + 100*1 = 500 = 244 mod 256 */
  uint8_t au[] = {200, 100}, bu[] = {2, 1};
  o = run_dot((Arr){HLO_U8, 1, {2}, au}, (Arr){HLO_U8, 1, {2}, bu}, (Arr){HLO_U8, 0, {0}, 0},
              NONE, D1(0), NONE, D1(0), false);
  ck_assert_ptr_nonnull(o);
  ck_assert_int_eq(*(uint8_t *)o->data, 244);
  /* s64: INT64_MAX * 2 = -2 mod 2^64 */
  int64_t a64[] = {INT64_MAX}, b64[] = {2};
  o = run_dot((Arr){HLO_S64, 1, {1}, a64}, (Arr){HLO_S64, 1, {1}, b64}, (Arr){HLO_S64, 0, {0}, 0},
              NONE, D1(0), NONE, D1(0), false);
  ck_assert_ptr_nonnull(o);
  ck_assert_int_eq(*(int64_t *)o->data, -2);
  /* u32 x u32 -> u32: 0xffffffff * 0xffffffff = 1 mod 2^32 */
  uint32_t m32[] = {0xffffffffu};
  o = run_dot((Arr){HLO_U32, 1, {1}, m32}, (Arr){HLO_U32, 1, {1}, m32}, (Arr){HLO_U32, 0, {0}, 0},
              NONE, D1(0), NONE, D1(0), false);
  ck_assert_ptr_nonnull(o);
  ck_assert_uint_eq(*(uint32_t *)o->data, 1);
  tl_end();
}
END_TEST

START_TEST(t_bf16_f16_accumulate_f32) {
  tl_begin();
  /* [1, 2^-8, 2^-8] . [1, 1, 1]: in f32 the sum is 1 + 2^-7, which bf16
   * holds exactly (0x3f81); summing in bf16 would lose each 2^-8 (ties to
   * even) and give 1.0 (0x3f80). */
  uint16_t a[] = {0x3f80, 0x3b80, 0x3b80}, ones[] = {0x3f80, 0x3f80, 0x3f80};
  for (int ref = 0; ref < 2; ref++) {
    HliValue *o = run_dot((Arr){HLO_BF16, 1, {3}, a}, (Arr){HLO_BF16, 1, {3}, ones},
                          (Arr){HLO_BF16, 0, {0}, 0}, NONE, D1(0), NONE, D1(0), ref);
    ck_assert_ptr_nonnull(o);
    ck_assert_uint_eq(*(uint16_t *)o->data, 0x3f81);
  }
  /* bf16 x bf16 -> f32: [1, 2^-9] . [1, 1] = 1.001953125 exactly */
  uint16_t c[] = {0x3f80, 0x3b00};
  HliValue *o = run_dot((Arr){HLO_BF16, 1, {2}, c}, (Arr){HLO_BF16, 1, {2}, ones},
                        (Arr){HLO_F32, 0, {0}, 0}, NONE, D1(0), NONE, D1(0), false);
  ck_assert_ptr_nonnull(o);
  ck_assert(*(float *)o->data == 1.001953125f);
  /* f16: [1, 2^-11, 2^-11] . ones: f16 spacing at 1 is 2^-10; the f32 sum
   * 1 + 2^-10 is exact in f16 (0x3c01); f16 steps would give 1.0. */
  uint16_t h[] = {0x3c00, 0x1000, 0x1000}, hones[] = {0x3c00, 0x3c00, 0x3c00};
  o = run_dot((Arr){HLO_F16, 1, {3}, h}, (Arr){HLO_F16, 1, {3}, hones}, (Arr){HLO_F16, 0, {0}, 0},
              NONE, D1(0), NONE, D1(0), false);
  ck_assert_ptr_nonnull(o);
  ck_assert_uint_eq(*(uint16_t *)o->data, 0x3c01);
  tl_end();
}
END_TEST

START_TEST(t_f8_accumulate_f32) {
  tl_begin();
  /* f8e4m3fn: 1.0 = 0x38, 2^-4 = 0x18; spacing at 1 is 2^-3. The f32 sum
   * 1 + 2^-3 is exact in the type (0x39); stepwise f8 sums would stay 1. */
  uint8_t a[] = {0x38, 0x18, 0x18}, ones[] = {0x38, 0x38, 0x38};
  HliValue *o = run_dot((Arr){HLO_F8E4M3FN, 1, {3}, a}, (Arr){HLO_F8E4M3FN, 1, {3}, ones},
                        (Arr){HLO_F8E4M3FN, 0, {0}, 0}, NONE, D1(0), NONE, D1(0), false);
  ck_assert_ptr_nonnull(o);
  ck_assert_uint_eq(*(uint8_t *)o->data, 0x39);
  /* f8e5m2: 1.0 = 0x3c, 2^-3 = 0x30, spacing 2^-2: 1.25 = 0x3d */
  uint8_t b[] = {0x3c, 0x30, 0x30}, bones[] = {0x3c, 0x3c, 0x3c};
  o = run_dot((Arr){HLO_F8E5M2, 1, {3}, b}, (Arr){HLO_F8E5M2, 1, {3}, bones},
              (Arr){HLO_F8E5M2, 0, {0}, 0}, NONE, D1(0), NONE, D1(0), false);
  ck_assert_ptr_nonnull(o);
  ck_assert_uint_eq(*(uint8_t *)o->data, 0x3d);
  /* f8e4m3fn x f8e4m3fn -> f32: 1 * 2^-4 + 2^-4 * 1 + 1 = 1.125 */
  o = run_dot((Arr){HLO_F8E4M3FN, 1, {3}, a}, (Arr){HLO_F8E4M3FN, 1, {3}, ones},
              (Arr){HLO_F32, 0, {0}, 0}, NONE, D1(0), NONE, D1(0), false);
  ck_assert_ptr_nonnull(o);
  ck_assert(*(float *)o->data == 1.125f);
  tl_end();
}
END_TEST

START_TEST(t_operands_rounded_to_result_type) {
  tl_begin();
  /* f32 operands, bf16 result: XLA converts the operands to bf16 first.
   * [1 + 2^-9, -1] . [256, 256]: 1 + 2^-9 rounds to 1 in bf16, so the result
   * is 256 - 256 = 0 (computing in f32 first would give 0.5). */
  float a[] = {1.001953125f, -1}, b[] = {256, 256};
  HliValue *o = run_dot((Arr){HLO_F32, 1, {2}, a}, (Arr){HLO_F32, 1, {2}, b},
                        (Arr){HLO_BF16, 0, {0}, 0}, NONE, D1(0), NONE, D1(0), false);
  ck_assert_ptr_nonnull(o);
  ck_assert_uint_eq(*(uint16_t *)o->data, 0x0000);
  /* f64 operands, f32 result: 1 + 1e-10 rounds to 1 in f32 first, so
   * [1 + 1e-10, -1] . [1, 1] = 0 exactly (not 1e-10). */
  double e[] = {1 + 1e-10, -1}, f[] = {1, 1};
  o = run_dot((Arr){HLO_F64, 1, {2}, e}, (Arr){HLO_F64, 1, {2}, f}, (Arr){HLO_F32, 0, {0}, 0},
              NONE, D1(0), NONE, D1(0), false);
  ck_assert_ptr_nonnull(o);
  ck_assert(*(float *)o->data == 0.0f);
  /* s8 x s8 -> f32: 2*4 + (-3)*5 = -7 */
  int8_t c[] = {2, -3}, d[] = {4, 5};
  o = run_dot((Arr){HLO_S8, 1, {2}, c}, (Arr){HLO_S8, 1, {2}, d}, (Arr){HLO_F32, 0, {0}, 0},
              NONE, D1(0), NONE, D1(0), false);
  ck_assert_ptr_nonnull(o);
  ck_assert(*(float *)o->data == -7.0f);
  tl_end();
}
END_TEST

START_TEST(t_complex) {
  tl_begin();
  /* (1+2i)(2-i) + (3-i)(i) = (4+3i) + (1+3i) = 5+6i */
  float a[] = {1, 2, 3, -1}, b[] = {2, -1, 0, 1};
  HliValue *o = run_dot((Arr){HLO_C64, 1, {2}, a}, (Arr){HLO_C64, 1, {2}, b},
                        (Arr){HLO_C64, 0, {0}, 0}, NONE, D1(0), NONE, D1(0), false);
  ck_assert_ptr_nonnull(o);
  tl_expect_f32_near(o, (float[]){5, 6}, 1, 0);
  ck_assert(((float *)o->data)[1] == 6.0f);
  double a2[] = {1, 2, 3, -1}, b2[] = {2, -1, 0, 1};
  o = run_dot((Arr){HLO_C128, 1, {2}, a2}, (Arr){HLO_C128, 1, {2}, b2},
              (Arr){HLO_C128, 0, {0}, 0}, NONE, D1(0), NONE, D1(0), false);
  ck_assert_ptr_nonnull(o);
  ck_assert(((double *)o->data)[0] == 5.0 && ((double *)o->data)[1] == 6.0);
  tl_end();
}
END_TEST

START_TEST(t_f64_transposed) {
  tl_begin();
  /* lhs[k][m] = [[1,2],[3,4],[5,6]], rhs[n][k] = [[1,0,2],[0,1,1]]:
   * C[m][n] = sum_k lhs[k][m] rhs[n][k] = [[11,8],[14,10]] */
  double a[] = {1, 2, 3, 4, 5, 6}, b[] = {1, 0, 2, 0, 1, 1};
  for (int ref = 0; ref < 2; ref++) {
    HliValue *o = run_dot((Arr){HLO_F64, 2, {3, 2}, a}, (Arr){HLO_F64, 2, {2, 3}, b},
                          (Arr){HLO_F64, 2, {2, 2}, 0}, NONE, D1(0), NONE, D1(1), ref);
    ck_assert_ptr_nonnull(o);
    double *d = o->data;
    ck_assert(d[0] == 11 && d[1] == 8 && d[2] == 14 && d[3] == 10);
  }
  tl_end();
}
END_TEST

START_TEST(t_pred) {
  tl_begin();
  /* OR of ANDs: [1,0,1].[0,0,1] = true; [1,0].[0,1] = false */
  uint8_t a[] = {1, 0, 1}, b[] = {0, 0, 1}, c[] = {1, 0}, d[] = {0, 1};
  HliValue *o = run_dot((Arr){HLO_PRED, 1, {3}, a}, (Arr){HLO_PRED, 1, {3}, b},
                        (Arr){HLO_PRED, 0, {0}, 0}, NONE, D1(0), NONE, D1(0), false);
  ck_assert_ptr_nonnull(o);
  ck_assert_int_eq(*(uint8_t *)o->data, 1);
  o = run_dot((Arr){HLO_PRED, 1, {2}, c}, (Arr){HLO_PRED, 1, {2}, d}, (Arr){HLO_PRED, 0, {0}, 0},
              NONE, D1(0), NONE, D1(0), false);
  ck_assert_ptr_nonnull(o);
  ck_assert_int_eq(*(uint8_t *)o->data, 0);
  tl_end();
}
END_TEST

START_TEST(t_zero_sizes) {
  tl_begin();
  /* K = 0: [2,0] x [0,3] is a [2,3] of zeros */
  float none[1] = {0};
  for (int ref = 0; ref < 2; ref++) {
    HliValue *o = run_dot((Arr){HLO_F32, 2, {2, 0}, none}, (Arr){HLO_F32, 2, {0, 3}, none},
                          (Arr){HLO_F32, 2, {2, 3}, 0}, NONE, D1(1), NONE, D1(0), ref);
    ck_assert_ptr_nonnull(o);
    tl_expect_f32_near(o, (float[]){0, 0, 0, 0, 0, 0}, 6, 0);
  }
  int32_t zi[1] = {0};
  HliValue *o = run_dot((Arr){HLO_S32, 2, {2, 0}, zi}, (Arr){HLO_S32, 2, {0, 3}, zi},
                        (Arr){HLO_S32, 2, {2, 3}, 0}, NONE, D1(1), NONE, D1(0), false);
  ck_assert_ptr_nonnull(o);
  for (int i = 0; i < 6; i++) ck_assert_int_eq(((int32_t *)o->data)[i], 0);
  /* M = 0: empty result */
  float b[6] = {1, 2, 3, 4, 5, 6};
  o = run_dot((Arr){HLO_F32, 2, {0, 3}, none}, (Arr){HLO_F32, 2, {3, 2}, b},
              (Arr){HLO_F32, 2, {0, 2}, 0}, NONE, D1(1), NONE, D1(0), false);
  ck_assert_ptr_nonnull(o);
  ck_assert_int_eq(o->nelem, 0);
  tl_end();
}
END_TEST

START_TEST(t_check_errors) {
  tl_begin();
  float a[6] = {0}, b[6] = {0};
  /* contracting sizes 3 vs 2 */
  ck_assert_ptr_null(run_dot((Arr){HLO_F32, 2, {2, 3}, a}, (Arr){HLO_F32, 2, {2, 3}, b},
                             (Arr){HLO_F32, 2, {2, 2}, 0}, NONE, D1(1), NONE, D1(0), false));
  ck_assert_ptr_nonnull(strstr(hli_last_error(), "contracting dimension sizes differ"));
  /* wrong result shape */
  ck_assert_ptr_null(run_dot((Arr){HLO_F32, 2, {2, 3}, a}, (Arr){HLO_F32, 2, {3, 2}, b},
                             (Arr){HLO_F32, 2, {2, 3}, 0}, NONE, D1(1), NONE, D1(0), false));
  ck_assert_ptr_nonnull(strstr(hli_last_error(), "result shape"));
  /* dimension out of range */
  ck_assert_ptr_null(run_dot((Arr){HLO_F32, 2, {2, 3}, a}, (Arr){HLO_F32, 2, {3, 2}, b},
                             (Arr){HLO_F32, 2, {2, 2}, 0}, NONE, D1(2), NONE, D1(0), false));
  ck_assert_ptr_nonnull(strstr(hli_last_error(), "out of range"));
  /* complex operands to a real result: unsupported, named */
  ck_assert_ptr_null(run_dot((Arr){HLO_C64, 1, {1}, a}, (Arr){HLO_C64, 1, {1}, b},
                             (Arr){HLO_F32, 0, {0}, 0}, NONE, D1(0), NONE, D1(0), false));
  ck_assert_ptr_nonnull(strstr(hli_last_error(), "not supported: dot of c64 and c64 to f32"));
  tl_end();
}
END_TEST

/* ---- ragged-dot ---------------------------------------------------------- */

static HliValue *run_ragged(Arr l, Arr r, Arr g, Arr o, Dl lb, Dl lc, Dl rb, Dl rc, Dl lrag,
                            Dl rgrp) {
  HloInstr *gp = tl_param(2, tl_shape(g.t, g.rank, g.dims));
  HloInstr *ins = tl_instr(HLO_OP_RAGGED_DOT, tl_shape(o.t, o.rank, o.dims), 3,
                           tl_param(0, tl_shape(l.t, l.rank, l.dims)),
                           tl_param(1, tl_shape(r.t, r.rank, r.dims)), gp);
  HloInstr **ops = ins->ops;
  ins->dot.lhs_batch = tl_ints(lb.n, lb.v);
  ins->dot.lhs_contracting = tl_ints(lc.n, lc.v);
  ins->dot.rhs_batch = tl_ints(rb.n, rb.v);
  ins->dot.rhs_contracting = tl_ints(rc.n, rc.v);
  ins->dot.lhs_ragged = tl_ints(lrag.n, lrag.v);
  ins->dot.rhs_group = tl_ints(rgrp.n, rgrp.v);
  const HliOpEntry *e = &hli_op_table()[HLO_OP_RAGGED_DOT];
  if (e->check(NULL, ins) != 0) return NULL;
  HliValue *in[3] = { tl_kept(&ops[0]->shape, l.data), tl_kept(&ops[1]->shape, r.data),
                      tl_kept(&gp->shape, g.data) };
  HliValue *out = tl_kept(&ins->shape, NULL);
  memset(out->data, 0x5a, out->nbytes);
  if (e->run(NULL, ins, in, out) != 0) return NULL;
  return out;
}

START_TEST(t_ragged_dot) {
  tl_begin();
  /* Ragged rows: lhs [4,2], rhs [g=2][2][3], group sizes {1,2}: row 0 uses
   * group 0, rows 1-2 group 1, row 3 is in no group (zeros).
   * [1,2].g0 = [1,2,3]; [3,4].g1 = [11,3,4]; [5,6].g1 = [17,5,6]. */
  float l[] = {1, 2, 3, 4, 5, 6, 7, 8};
  float r[] = {1, 0, 1, 0, 1, 1, /* g1 */ 1, 1, 0, 2, 0, 1};
  int32_t gs[] = {1, 2};
  HliValue *o = run_ragged((Arr){HLO_F32, 2, {4, 2}, l}, (Arr){HLO_F32, 3, {2, 2, 3}, r},
                           (Arr){HLO_S32, 1, {2}, gs}, (Arr){HLO_F32, 2, {4, 3}, 0},
                           NONE, D1(1), NONE, D1(1), D1(0), D1(0));
  ck_assert_msg(o != NULL, "%s", hli_last_error());
  tl_expect_f32_near(o, (float[]){1, 2, 3, 11, 3, 4, 17, 5, 6, 0, 0, 0}, 12, 0);
  /* Ragged contracting: lhs [2,3], rhs [3,2], sizes {2,1} -> [g=2][2][2]:
   * g0 sums k in {0,1}: [[7,10],[19,28]]; g1 k = 2: [[15,18],[30,36]]. */
  float a[] = {1, 2, 3, 4, 5, 6}, b[] = {1, 2, 3, 4, 5, 6};
  int64_t gs2[] = {2, 1};
  o = run_ragged((Arr){HLO_F32, 2, {2, 3}, a}, (Arr){HLO_F32, 2, {3, 2}, b},
                 (Arr){HLO_S64, 1, {2}, gs2}, (Arr){HLO_F32, 3, {2, 2, 2}, 0},
                 NONE, D1(1), NONE, D1(0), D1(1), NONE);
  ck_assert_msg(o != NULL, "%s", hli_last_error());
  tl_expect_f32_near(o, (float[]){7, 10, 19, 28, 15, 18, 30, 36}, 8, 0);
  /* Per-batch group sizes [b=2][g=2] = {{1,2},{3,0}}: lhs [2][3][1] = rows
   * {1,2,3},{4,5,6}; rhs [g][b][1][1] = g0: 10, 20; g1: 100, 200.
   * b0: [1*10, 2*100, 3*100]; b1: [4*20, 5*20, 6*20]. */
  float lb[] = {1, 2, 3, 4, 5, 6}, rb[] = {10, 20, 100, 200};
  int32_t gs3[] = {1, 2, 3, 0};
  o = run_ragged((Arr){HLO_F32, 3, {2, 3, 1}, lb}, (Arr){HLO_F32, 4, {2, 2, 1, 1}, rb},
                 (Arr){HLO_S32, 2, {2, 2}, gs3}, (Arr){HLO_F32, 3, {2, 3, 1}, 0},
                 D1(0), D1(2), D1(1), D1(2), D1(1), D1(0));
  ck_assert_msg(o != NULL, "%s", hli_last_error());
  tl_expect_f32_near(o, (float[]){10, 200, 300, 80, 100, 120}, 6, 0);
  /* Two ragged dims: not supported, named. */
  ck_assert_ptr_null(run_ragged((Arr){HLO_F32, 2, {4, 2}, l}, (Arr){HLO_F32, 3, {2, 2, 3}, r},
                                (Arr){HLO_S32, 1, {2}, gs}, (Arr){HLO_F32, 2, {4, 3}, 0},
                                NONE, D1(1), NONE, D1(1), D2(0, 1), D1(0)));
  ck_assert_ptr_nonnull(strstr(hli_last_error(), "not supported: ragged-dot with 2 lhs ragged"));
  tl_end();
}
END_TEST

/* ---- Blocked GEMM vs reference loop ------------------------------------- */

static double bf16(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static float frand(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* Random odd sizes through several operand layouts: plain, transposed lhs
 * (contracting dim first), batch in the middle, for f32 and f64. */
static void cross_check(const char *isa) {
  tl_begin();
  enum { M = 67, K = 129, N = 33, B = 3 };
  static float a[2 * B * M * K], b[2 * B * K * N];
  static double ad[2 * B * M * K], bd[2 * B * K * N];
  unsigned s = 7;
  for (int i = 0; i < 2 * B * M * K; i++) ad[i] = a[i] = frand(&s);
  for (int i = 0; i < 2 * B * K * N; i++) bd[i] = b[i] = frand(&s);
  static uint16_t ah[B * M * K], bh[B * K * N];   /* bf16 / f16 bit patterns */
  for (int i = 0; i < B * M * K; i++) ah[i] = (uint16_t)hlc_float_bits_from_f32(HLO_BF16, a[i]);
  for (int i = 0; i < B * K * N; i++) bh[i] = (uint16_t)hlc_float_bits_from_f32(HLO_F16, b[i]);
  struct { Arr l, r, o; Dl lb, lc, rb, rc; } cases[] = {
    { {HLO_F32, 2, {M, K}, a}, {HLO_F32, 2, {K, N}, b}, {HLO_F32, 2, {M, N}, 0},
      NONE, D1(1), NONE, D1(0) },
    { {HLO_F32, 2, {K, M}, a}, {HLO_F32, 2, {N, K}, b}, {HLO_F32, 2, {M, N}, 0},
      NONE, D1(0), NONE, D1(1) },
    { {HLO_F32, 3, {M, B, K}, a}, {HLO_F32, 3, {K, N, B}, b}, {HLO_F32, 3, {B, M, N}, 0},
      D1(1), D1(2), D1(2), D1(0) },
    { {HLO_F64, 3, {B, M, K}, ad}, {HLO_F64, 3, {B, K, N}, bd}, {HLO_F64, 3, {B, M, N}, 0},
      D1(0), D1(2), D1(0), D1(1) },
    { {HLO_F64, 2, {K, M}, ad}, {HLO_F64, 2, {K, N}, bd}, {HLO_F64, 2, {M, N}, 0},
      NONE, D1(0), NONE, D1(0) },
    /* batch dims {0,2} that do not flatten (attention's layout) */
    { {HLO_F32, 4, {2, M, B, K}, a}, {HLO_F32, 4, {2, N, B, K}, b}, {HLO_F32, 4, {2, B, M, N}, 0},
      D2(0, 2), D1(3), D2(0, 2), D1(3) },
    /* same with bf16 -> f32 (converted copy, offsets kept) */
    { {HLO_F32, 4, {2, K, B, M}, a}, {HLO_F32, 4, {B, 2, K, N}, b}, {HLO_BF16, 4, {2, B, M, N}, 0},
      D2(0, 2), D1(1), D2(1, 0), D1(2) },
    /* bf16 / f16 operands widened while packing (transposed lhs) */
    { {HLO_BF16, 3, {B, K, M}, ah}, {HLO_BF16, 3, {B, K, N}, ah}, {HLO_BF16, 3, {B, M, N}, 0},
      D1(0), D1(1), D1(0), D1(1) },
    { {HLO_F16, 2, {M, K}, bh}, {HLO_F16, 2, {N, K}, bh}, {HLO_F32, 2, {M, N}, 0},
      NONE, D1(1), NONE, D1(1) },
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    HliValue *fast = run_dot(cases[c].l, cases[c].r, cases[c].o, cases[c].lb, cases[c].lc,
                             cases[c].rb, cases[c].rc, false);
    HliValue *ref = run_dot(cases[c].l, cases[c].r, cases[c].o, cases[c].lb, cases[c].lc,
                            cases[c].rb, cases[c].rc, true);
    ck_assert_ptr_nonnull(fast);
    ck_assert_ptr_nonnull(ref);
    for (int64_t i = 0; i < fast->nelem; i++) {
      HloDtype t = cases[c].o.t;
      double f = t == HLO_F32 ? ((float *)fast->data)[i]
               : t == HLO_F64 ? ((double *)fast->data)[i] : bf16(((uint16_t *)fast->data)[i]);
      double r = t == HLO_F32 ? ((float *)ref->data)[i]
               : t == HLO_F64 ? ((double *)ref->data)[i] : bf16(((uint16_t *)ref->data)[i]);
      /* bf16: the two sums may round to neighbouring bf16 values */
      double tol = t == HLO_F32 ? 1e-4 : t == HLO_F64 ? 1e-12 : 0.0625 * (1 + fabs(r)) / 8;
      ck_assert_msg(fabs(f - r) <= tol, "%s case %zu element %lld: %.9g vs %.9g", isa, c,
                    (long long)i, f, r);
    }
  }
  tl_end();
}

START_TEST(t_gemm_vs_reference) {
  for (TlGemmIsas g = {0}; tl_gemm_isa_next(&g);) cross_check(g.isa);
  ck_assert(hlk_gemm_force_isa("scalar"));
  ck_assert(!hlk_gemm_force_isa("nonsense"));
}
END_TEST

/* ---- Integer dots on the integer GEMM ----------------------------------- */

/* An independent triple loop: C[bi][i][j] = sum_p A * B over int64 values
 * (already those of the result type), where A(bi, i, p) is
 * a[bi*as[0] + i*as[1] + p*as[2]] and B(bi, p, j) is b[bi*bs[0] + p*bs[1] +
 * j*bs[2]]; the sum wraps modulo 2^64 (unsigned arithmetic). */
static void expect_loop(const int64_t *a, const int64_t as[3], const int64_t *b,
                        const int64_t bs[3], int64_t nb, int64_t m, int64_t n, int64_t k,
                        uint64_t *want) {
  for (int64_t bi = 0; bi < nb; bi++)
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        uint64_t acc = 0;
        for (int64_t p = 0; p < k; p++)
          acc += (uint64_t)a[bi * as[0] + i * as[1] + p * as[2]] *
                 (uint64_t)b[bi * bs[0] + p * bs[1] + j * bs[2]];
        want[(bi * m + i) * n + j] = acc;
      }
}

/* n values in [lo, lo + span) stored as dtype t in buf, their values in v. */
static void fill_ints(HloDtype t, int64_t n, int64_t lo, uint64_t span, uint64_t *seed, void *buf,
                      int64_t *v) {
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = tl_lcg(seed);
    int64_t x = span ? lo + (int64_t)(r % span) : (int64_t)(r ^ (tl_lcg(seed) << 53));
    switch (hlc_dtype_size(t)) {
    case 1: ((uint8_t *)buf)[i] = (uint8_t)x; x = t == HLO_S8 ? (int64_t)(int8_t)x : t == HLO_U8 ? (int64_t)(uint8_t)x : x; break;
    case 2: ((uint16_t *)buf)[i] = (uint16_t)x; x = t == HLO_S16 ? (int64_t)(int16_t)x : (int64_t)(uint16_t)x; break;
    case 4: ((uint32_t *)buf)[i] = (uint32_t)x; x = t == HLO_S32 ? (int64_t)(int32_t)x : (int64_t)(uint32_t)x; break;
    default: ((uint64_t *)buf)[i] = (uint64_t)x; break;
    }
    v[i] = x;
  }
}

/* The integer cases under the instruction set in use. */
static void int_cases(void) {
  tl_begin();
  /* No multiple of any tile or block; K odd and above one shared-dim block
   * (the pair kernel pads the last pair of the last block). */
  enum { M = 37, K = 301, N = 45, B = 3 };
  static int64_t av[B * M * K], bv[B * K * N];
  static uint64_t want[B * M * N];
  static uint64_t abuf[B * M * K], bbuf[B * K * N];   /* storage, big enough for s64 */
  uint64_t seed = 11;

  /* s8 x s8 -> s32, plain layout (the 16-bit pair kernel). */
  fill_ints(HLO_S8, M * K, -128, 256, &seed, abuf, av);
  fill_ints(HLO_S8, K * N, -128, 256, &seed, bbuf, bv);
  expect_loop(av, (int64_t[]){0, K, 1}, bv, (int64_t[]){0, N, 1}, 1, M, N, K, want);
  tl_expect_wrapped(run_dot((Arr){HLO_S8, 2, {M, K}, abuf}, (Arr){HLO_S8, 2, {K, N}, bbuf},
                            (Arr){HLO_S32, 2, {M, N}, 0}, NONE, D1(1), NONE, D1(0), false),
                    want, "s8 x s8 -> s32");
  /* The same operands into s16 and s8 results wrap modulo 2^16 / 2^8. */
  tl_expect_wrapped(run_dot((Arr){HLO_S8, 2, {M, K}, abuf}, (Arr){HLO_S8, 2, {K, N}, bbuf},
                            (Arr){HLO_S16, 2, {M, N}, 0}, NONE, D1(1), NONE, D1(0), false),
                    want, "s8 x s8 -> s16");
  tl_expect_wrapped(run_dot((Arr){HLO_S8, 2, {M, K}, abuf}, (Arr){HLO_S8, 2, {K, N}, bbuf},
                            (Arr){HLO_S8, 2, {M, N}, 0}, NONE, D1(1), NONE, D1(0), false),
                    want, "s8 x s8 -> s8");

  /* s32 with full-range values: every sum wraps past 2^31 many times.
   * Transposed lhs (contracting dim 0) and rhs (contracting dim 1). */
  fill_ints(HLO_S32, K * M, 0, 0, &seed, abuf, av);
  fill_ints(HLO_S32, N * K, 0, 0, &seed, bbuf, bv);
  expect_loop(av, (int64_t[]){0, 1, M}, bv, (int64_t[]){0, 1, K}, 1, M, N, K, want);
  tl_expect_wrapped(run_dot((Arr){HLO_S32, 2, {K, M}, abuf}, (Arr){HLO_S32, 2, {N, K}, bbuf},
                            (Arr){HLO_S32, 2, {M, N}, 0}, NONE, D1(0), NONE, D1(1), false),
                    want, "s32 transposed, wrapping");
  /* s32 operands of an s8 result: XLA converts them to s8 first. */
  for (int i = 0; i < K * M; i++) av[i] = (int8_t)(uint8_t)av[i];
  for (int i = 0; i < N * K; i++) bv[i] = (int8_t)(uint8_t)bv[i];
  expect_loop(av, (int64_t[]){0, 1, M}, bv, (int64_t[]){0, 1, K}, 1, M, N, K, want);
  tl_expect_wrapped(run_dot((Arr){HLO_S32, 2, {K, M}, abuf}, (Arr){HLO_S32, 2, {N, K}, bbuf},
                            (Arr){HLO_S8, 2, {M, N}, 0}, NONE, D1(0), NONE, D1(1), false),
                    want, "s32 operands, s8 result");

  /* u8 x u8 -> u8 and -> u32, with batch dims first on lhs and in the
   * middle of rhs (B, M, K) x (K, B, N). */
  fill_ints(HLO_U8, B * M * K, 0, 256, &seed, abuf, av);
  fill_ints(HLO_U8, K * B * N, 0, 256, &seed, bbuf, bv);
  expect_loop(av, (int64_t[]){M * K, K, 1}, bv, (int64_t[]){N, B * N, 1}, B, M, N, K, want);
  tl_expect_wrapped(run_dot((Arr){HLO_U8, 3, {B, M, K}, abuf}, (Arr){HLO_U8, 3, {K, B, N}, bbuf},
                            (Arr){HLO_U8, 3, {B, M, N}, 0}, D1(0), D1(2), D1(1), D1(0), false),
                    want, "u8 batched -> u8");
  tl_expect_wrapped(run_dot((Arr){HLO_U8, 3, {B, M, K}, abuf}, (Arr){HLO_U8, 3, {K, B, N}, bbuf},
                            (Arr){HLO_U32, 3, {B, M, N}, 0}, D1(0), D1(2), D1(1), D1(0), false),
                    want, "u8 batched -> u32");

  /* s64 with full 64-bit values, batch last on both: (M, K, B) x (K, N, B). */
  fill_ints(HLO_S64, M * K * B, 0, 0, &seed, abuf, av);
  fill_ints(HLO_S64, K * N * B, 0, 0, &seed, bbuf, bv);
  expect_loop(av, (int64_t[]){1, K * B, B}, bv, (int64_t[]){1, N * B, B}, B, M, N, K, want);
  tl_expect_wrapped(run_dot((Arr){HLO_S64, 3, {M, K, B}, abuf}, (Arr){HLO_S64, 3, {K, N, B}, bbuf},
                            (Arr){HLO_S64, 3, {B, M, N}, 0}, D1(2), D1(1), D1(2), D1(0), false),
                    want, "s64 wrapping, batch last");
  /* s16 operands of a u64 result (sign-extended, then wrapping). */
  fill_ints(HLO_S16, M * K, -32768, 65536, &seed, abuf, av);
  fill_ints(HLO_S16, K * N, -32768, 65536, &seed, bbuf, bv);
  expect_loop(av, (int64_t[]){0, K, 1}, bv, (int64_t[]){0, N, 1}, 1, M, N, K, want);
  tl_expect_wrapped(run_dot((Arr){HLO_S16, 2, {M, K}, abuf}, (Arr){HLO_S16, 2, {K, N}, bbuf},
                            (Arr){HLO_U64, 2, {M, N}, 0}, NONE, D1(1), NONE, D1(0), false),
                    want, "s16 -> u64");
  /* s16 -> s32 (pair kernel; products up to 2^30 wrap when summed) and
   * u16 -> u32 (32-bit lanes: u16 values do not fit int16), rhs transposed. */
  tl_expect_wrapped(run_dot((Arr){HLO_S16, 2, {M, K}, abuf}, (Arr){HLO_S16, 2, {K, N}, bbuf},
                            (Arr){HLO_S32, 2, {M, N}, 0}, NONE, D1(1), NONE, D1(0), false),
                    want, "s16 -> s32");
  fill_ints(HLO_U16, M * K, 0, 65536, &seed, abuf, av);
  fill_ints(HLO_U16, N * K, 0, 65536, &seed, bbuf, bv);
  expect_loop(av, (int64_t[]){0, K, 1}, bv, (int64_t[]){0, 1, K}, 1, M, N, K, want);
  tl_expect_wrapped(run_dot((Arr){HLO_U16, 2, {M, K}, abuf}, (Arr){HLO_U16, 2, {N, K}, bbuf},
                            (Arr){HLO_U32, 2, {M, N}, 0}, NONE, D1(1), NONE, D1(1), false),
                    want, "u16 -> u32");

  /* s4 (one per byte) -> s4 and pred x pred -> pred (sparse trues, so some
   * results are false). */
  fill_ints(HLO_S8, M * K, -8, 16, &seed, abuf, av);
  fill_ints(HLO_S8, K * N, -8, 16, &seed, bbuf, bv);
  expect_loop(av, (int64_t[]){0, K, 1}, bv, (int64_t[]){0, N, 1}, 1, M, N, K, want);
  tl_expect_wrapped(run_dot((Arr){HLO_S4, 2, {M, K}, abuf}, (Arr){HLO_S4, 2, {K, N}, bbuf},
                            (Arr){HLO_S4, 2, {M, N}, 0}, NONE, D1(1), NONE, D1(0), false),
                    want, "s4");
  for (int i = 0; i < M * K; i++) ((uint8_t *)abuf)[i] = (uint8_t)(av[i] = tl_lcg(&seed) % 97 == 0);
  for (int i = 0; i < K * N; i++) ((uint8_t *)bbuf)[i] = (uint8_t)(bv[i] = tl_lcg(&seed) % 89 == 0);
  expect_loop(av, (int64_t[]){0, K, 1}, bv, (int64_t[]){0, N, 1}, 1, M, N, K, want);
  int trues = 0;
  for (int i = 0; i < M * N; i++) trues += want[i] != 0;
  ck_assert(trues > 0 && trues < M * N);   /* both outcomes occur */
  tl_expect_wrapped(run_dot((Arr){HLO_PRED, 2, {M, K}, abuf}, (Arr){HLO_PRED, 2, {K, N}, bbuf},
                            (Arr){HLO_PRED, 2, {M, N}, 0}, NONE, D1(1), NONE, D1(0), false),
                    want, "pred");
  tl_end();
}

START_TEST(t_int_gemm) {
  for (TlGemmIsas g = {0}; tl_gemm_isa_next(&g);) int_cases();
}
END_TEST

START_TEST(t_int_hand) {
  tl_begin();
  /* s32: 2^30*1 three times = 3*2^30, past 2^31: 3*2^30 - 2^32 = -2^30;
   * second row 2^31-1 twice times 2 = 2^33 - 4 = -4 mod 2^32. */
  int32_t a[] = {1 << 30, 1 << 30, 1 << 30, INT32_MAX, INT32_MAX, 0};
  int32_t b[] = {1, 1, 1, 2, 2, 7};   /* [3, 2]: column 0 = 1, 1, 2; column 1 = 1, 2, 7 */
  HliValue *o = run_dot((Arr){HLO_S32, 2, {2, 3}, a}, (Arr){HLO_S32, 2, {3, 2}, b},
                        (Arr){HLO_S32, 2, {2, 2}, 0}, NONE, D1(1), NONE, D1(0), false);
  ck_assert_ptr_nonnull(o);
  /* row 0: 2^30*(1+1+2) = 2^32 = 0; 2^30*(1+2+7) = 10*2^30 = 2^33+2^31 -> -2^31
   * row 1: (2^31-1)*(1+1) = 2^32-2 -> -2; (2^31-1)*(1+2) = 3*2^31-3 -> 2^31-3 */
  int32_t want[] = {0, INT32_MIN, -2, INT32_MAX - 2};
  for (int i = 0; i < 4; i++) ck_assert_int_eq(((int32_t *)o->data)[i], want[i]);
  /* f32 operands of an s32 result convert (truncating) first: 2.7 -> 2,
   * -1.5 -> -1: 2*3 + (-1)*4 = 2 */
  float fa[] = {2.7f, -1.5f}, fb[] = {3.2f, 4.9f};
  o = run_dot((Arr){HLO_F32, 1, {2}, fa}, (Arr){HLO_F32, 1, {2}, fb}, (Arr){HLO_S32, 0, {0}, 0},
              NONE, D1(0), NONE, D1(0), false);
  ck_assert_ptr_nonnull(o);
  ck_assert_int_eq(*(int32_t *)o->data, 2);
  /* u16 result of s8 operands: (-1)*1 + (-1)*1 = -2 = 65534 */
  int8_t c[] = {-1, -1}, d[] = {1, 1};
  o = run_dot((Arr){HLO_S8, 1, {2}, c}, (Arr){HLO_S8, 1, {2}, d}, (Arr){HLO_U16, 0, {0}, 0},
              NONE, D1(0), NONE, D1(0), false);
  ck_assert_ptr_nonnull(o);
  ck_assert_int_eq(*(uint16_t *)o->data, 65534);
  /* s16 extremes: 4 * (-32768)^2 = 4 * 2^30 = 2^32 = 0 mod 2^32 (each pair
   * sum 2^31 is pmaddwd's own overflow case) */
  int16_t e[] = {-32768, -32768, -32768, -32768};
  int16_t f[] = {-32768, -32768, -32768, -32768};
  o = run_dot((Arr){HLO_S16, 1, {4}, e}, (Arr){HLO_S16, 1, {4}, f}, (Arr){HLO_S32, 0, {0}, 0},
              NONE, D1(0), NONE, D1(0), false);
  ck_assert_ptr_nonnull(o);
  ck_assert_int_eq(*(int32_t *)o->data, 0);
  int16_t g[] = {-32768, -32768, 32767};
  o = run_dot((Arr){HLO_S16, 1, {3}, e}, (Arr){HLO_S16, 1, {3}, g}, (Arr){HLO_S32, 0, {0}, 0},
              NONE, D1(0), NONE, D1(0), false);
  ck_assert_ptr_nonnull(o);
  /* 2^30 + 2^30 - 32768*32767 = 2^31 - (2^30 - 2^15) = 2^30 + 2^15, though
   * the first pair's sum 2^31 overflows int32 on the way */
  ck_assert_int_eq(*(int32_t *)o->data, 1073774592);
  /* pred operands of an s32 result count the true pairs: [1,1,0,1].[1,1,1,1] = 3 */
  uint8_t p[] = {1, 1, 0, 1}, q[] = {1, 1, 1, 1};
  o = run_dot((Arr){HLO_PRED, 1, {4}, p}, (Arr){HLO_PRED, 1, {4}, q}, (Arr){HLO_S32, 0, {0}, 0},
              NONE, D1(0), NONE, D1(0), false);
  ck_assert_ptr_nonnull(o);
  ck_assert_int_eq(*(int32_t *)o->data, 3);
  tl_end();
}
END_TEST

/* The same s32 and s8 dots on 1, 2 and 3 threads give the same bits, and
 * the bits of the independent loop. */
START_TEST(t_int_threads) {
  tl_begin();
  enum { M = 301, K = 77, N = 259 };
  static int32_t a[M * K], b[K * N];
  static int64_t av[M * K], bv[K * N];
  static uint64_t want[M * N];
  uint64_t seed = 5;
  fill_ints(HLO_S32, M * K, 0, 0, &seed, a, av);
  fill_ints(HLO_S32, K * N, 0, 0, &seed, b, bv);
  expect_loop(av, (int64_t[]){0, K, 1}, bv, (int64_t[]){0, N, 1}, 1, M, N, K, want);
  const char *text =
      "HloModule m\n"
      "ENTRY e {\n"
      "  a = s32[301,77] parameter(0)\n"
      "  b = s32[77,259] parameter(1)\n"
      "  d = s32[301,259] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
      "  a8 = s8[301,77] convert(a)\n"
      "  b8 = s8[77,259] convert(b)\n"
      "  d8 = s32[301,259] dot(a8, b8), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
      "  ROOT t = (s32[301,259], s32[301,259]) tuple(d, d8)\n"
      "}\n";
  static uint64_t want8[M * N];
  static int64_t a8[M * K], b8[K * N];
  for (int i = 0; i < M * K; i++) a8[i] = (int8_t)(uint8_t)av[i];
  for (int i = 0; i < K * N; i++) b8[i] = (int8_t)(uint8_t)bv[i];
  expect_loop(a8, (int64_t[]){0, K, 1}, b8, (int64_t[]){0, N, 1}, 1, M, N, K, want8);
  const TlArray in[2] = {{HLO_TYPE_S32, 2, (int64_t[]){M, K}, a},
                         {HLO_TYPE_S32, 2, (int64_t[]){K, N}, b}};
  for (int threads = 1; threads <= 3; threads++) {
    TlRun r = tl_run_arrays(threads, text, 2, in);
    for (int e = 0; e < 2; e++) {
      HloBuffer *d = NULL;
      ck_assert_int_eq(hlo_buffer_tuple_element(r.ctx, r.result, e, &d), HLO_OK);
      const int32_t *got = hlo_buffer_data(d);
      const uint64_t *w = e == 0 ? want : want8;
      for (int i = 0; i < M * N; i++)
        ck_assert_msg(got[i] == (int32_t)(uint32_t)w[i], "%d threads, result %d, element %d: %d, want %d",
                      threads, e, i, got[i], (int32_t)(uint32_t)w[i]);
      hlo_buffer_free(d);
    }
    tl_run_done(&r);
  }
  tl_end();
}
END_TEST

/* f32 products with one result column or row (matrix times vector, vector
 * times matrix) take their own loops, whose summation order is documented
 * (gemv.c): per result element, 16 lanes of partial sums over k, lane l
 * adding the products of k = l, l + 16, ... in order, then the lanes
 * pairwise (w = 8, 4, 2, 1: lane l += lane l + w); or the products in k
 * order. The order is emulated here in float, one rounding per step, so
 * the results must match bit for bit: two batch matrices, k = 1003 (a lane
 * tail), 150 rows (units of 64 and a tail), 2500 columns (units of 1024
 * and a tail), on 1 to 3 threads; and bf16 operands. */
static float lanes_order(const float *a, const float *y, int64_t k) {
  float t[16] = {0};
  for (int64_t p = 0; p < k; p++) {
    float prod = a[p] * y[p];
    t[p % 16] = t[p % 16] + prod;
  }
  for (int w = 8; w >= 1; w /= 2)
    for (int l = 0; l < w; l++) t[l] = t[l] + t[l + w];
  return t[0];
}

enum { GV_B = 2, GV_M = 150, GV_K = 1003, GV_N = 2500 };

/* The expected results in the documented orders: mv[b][i] (lanes) and
 * vm[b][j] (k order), from a[b][i][p], y[b][p] and w[b][p][j]. */
static void gemv_expected(const float *a, const float *y, const float *w, float *mv, float *vm) {
  for (int64_t b = 0; b < GV_B; b++) {
    for (int64_t i = 0; i < GV_M; i++)
      mv[b * GV_M + i] = lanes_order(a + (b * GV_M + i) * GV_K, y + b * GV_K, GV_K);
    for (int64_t j = 0; j < GV_N; j++) {
      float s = 0;
      for (int64_t p = 0; p < GV_K; p++) {
        float prod = y[b * GV_K + p] * w[(b * GV_K + p) * GV_N + j];
        s = s + prod;
      }
      vm[b * GV_N + j] = s;
    }
  }
}

/* Each float made a bf16 by dropping its low 16 bits: the bits to h, the
 * (exact) value kept in v. */
static void truncate_bf16(float *v, uint16_t *h, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    uint32_t u;
    memcpy(&u, &v[i], 4);
    h[i] = (uint16_t)(u >> 16), u &= 0xFFFF0000u;
    memcpy(&v[i], &u, 4);
  }
}

/* Both products with operands of type ty (data a, y, w) and an f32 result,
 * on 1 to max_threads threads, against mv and vm bit for bit. */
static void gemv_check(const char *ty, HloElementType et, const void *a, const void *y,
                       const void *w, const float *mv, const float *vm, int max_threads) {
  char mv_text[320], vm_text[320];
  snprintf(mv_text, sizeof mv_text,
           "HloModule m\nENTRY e {\n  a = %s[2,150,1003] parameter(0)\n"
           "  y = %s[2,1003] parameter(1)\n"
           "  ROOT d = f32[2,150] dot(a, y), lhs_batch_dims={0}, lhs_contracting_dims={2}, "
           "rhs_batch_dims={0}, rhs_contracting_dims={1}\n}\n", ty, ty);
  snprintf(vm_text, sizeof vm_text,
           "HloModule m\nENTRY e {\n  y = %s[2,1003] parameter(0)\n"
           "  w = %s[2,1003,2500] parameter(1)\n"
           "  ROOT d = f32[2,2500] dot(y, w), lhs_batch_dims={0}, lhs_contracting_dims={1}, "
           "rhs_batch_dims={0}, rhs_contracting_dims={1}\n}\n", ty, ty);
  const TlArray mv_in[2] = {{et, 3, (int64_t[]){GV_B, GV_M, GV_K}, a},
                            {et, 2, (int64_t[]){GV_B, GV_K}, y}};
  const TlArray vm_in[2] = {{et, 2, (int64_t[]){GV_B, GV_K}, y},
                            {et, 3, (int64_t[]){GV_B, GV_K, GV_N}, w}};
  for (int threads = 1; threads <= max_threads; threads++) {
    TlRun r = tl_run_arrays(threads, mv_text, 2, mv_in);
    ck_assert_msg(memcmp(hlo_buffer_data(r.result), mv, sizeof(float) * GV_B * GV_M) == 0,
                  "%s matrix times vector, %d threads", ty, threads);
    tl_run_done(&r);
    r = tl_run_arrays(threads, vm_text, 2, vm_in);
    ck_assert_msg(memcmp(hlo_buffer_data(r.result), vm, sizeof(float) * GV_B * GV_N) == 0,
                  "%s vector times matrix, %d threads", ty, threads);
    tl_run_done(&r);
  }
}

START_TEST(t_gemv_orders) {
  enum { B = GV_B, M = GV_M, K = GV_K, N = GV_N };
  float *a = malloc(sizeof(float) * B * M * K), *y = malloc(sizeof(float) * B * K);
  float *w = malloc(sizeof(float) * B * K * N), *mv = malloc(sizeof(float) * B * M);
  float *vm = malloc(sizeof(float) * B * N);
  uint64_t seed = 11;
#define SMALL(d) ((float)((int64_t)(tl_lcg(&seed) % 2001) - 1000) / (d))
  for (int64_t i = 0; i < B * M * K; i++) a[i] = SMALL(37.0f);
  for (int64_t i = 0; i < B * K; i++) y[i] = SMALL(53.0f);
  for (int64_t i = 0; i < B * K * N; i++) w[i] = SMALL(29.0f);
#undef SMALL
  gemv_expected(a, y, w, mv, vm);
  gemv_check("f32", HLO_TYPE_F32, a, y, w, mv, vm, 3);
  /* bf16 operands of an f32 result: the same order on their exact f32
   * values (the top 16 bits of each float above). */
  uint16_t *ah = malloc(sizeof(uint16_t) * B * M * K), *yh = malloc(sizeof(uint16_t) * B * K);
  uint16_t *wh = malloc(sizeof(uint16_t) * B * K * N);
  truncate_bf16(a, ah, B * M * K);
  truncate_bf16(y, yh, B * K);
  truncate_bf16(w, wh, B * K * N);
  gemv_expected(a, y, w, mv, vm);
  gemv_check("bf16", HLO_TYPE_BF16, ah, yh, wh, mv, vm, 2);
  free(a), free(y), free(w), free(mv), free(vm), free(ah), free(yh), free(wh);
}
END_TEST

/* Wide products with few rows (m < n) on many threads: the planner splits
 * columns into more blocks while that helps; with some widths rounding a
 * block to whole slivers gave back the same count, and planning never
 * ended (these widths hang on 8 threads for slivers of 32, 16 and 8
 * columns). Integer-valued operands: every sum exact. */
START_TEST(t_wide_products_many_threads) {
  enum { M = 13, K = 5 };
  static const int64_t widths[] = {641, 1285, 2566};
  for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
    int64_t N = widths[w];
    float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * K * N);
    for (int64_t i = 0; i < M * K; i++) a[i] = (float)(i % 7) - 3;
    for (int64_t i = 0; i < K * N; i++) b[i] = (float)(i % 5) - 2;
    char text[256];
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n  a = f32[13,5] parameter(0)\n"
             "  b = f32[5,%lld] parameter(1)\n"
             "  ROOT d = f32[13,%lld] dot(a, b), lhs_contracting_dims={1}, "
             "rhs_contracting_dims={0}\n}\n",
             (long long)N, (long long)N);
    const TlArray in[2] = {{HLO_TYPE_F32, 2, (int64_t[]){M, K}, a},
                           {HLO_TYPE_F32, 2, (int64_t[]){K, N}, b}};
    for (int threads = 8; threads <= 16; threads += 8) {
      TlRun r = tl_run_arrays(threads, text, 2, in);
      const float *got = hlo_buffer_data(r.result);
      int64_t wrong = 0;
      for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
          float want = 0;
          for (int64_t p = 0; p < K; p++) want += a[i * K + p] * b[p * N + j];
          wrong += got[i * N + j] != want;
        }
      ck_assert_msg(wrong == 0, "n = %lld, %d threads: %lld wrong", (long long)N, threads,
                    (long long)wrong);
      tl_run_done(&r);
    }
    free(a), free(b);
  }
}
END_TEST

/* A tall product with few columns: one column tile, so the threads share
 * out runs of row blocks, each packing B's panels for its own run; K spans
 * two shared-dim blocks. f32 and f64 on 1 to 4 threads, integer-valued
 * operands small enough that every sum is exact: the values of the plain
 * triple loop. */
/* hlk_interleave32, the patch and A-panel packer: d[t*mr + lane] =
 * src[lane][t] for every row count up to 32 (multiples of 4 take the
 * vector paths) and lengths up to 70 (whole blocks of 16 and 4 steps and
 * tails), each source at its own unaligned address; values whose bits
 * name their row and step (NaN patterns among them, which must pass
 * unchanged). */
START_TEST(t_interleave32) {
  enum { MR = 32, N = 70 };
  static uint32_t rows[MR][N + 1], d[MR * N + 8];
  const uint32_t *src[MR];
  for (int l = 0; l < MR; l++) {
    for (int t = 0; t <= N; t++) rows[l][t] = 0x7f800001u + (uint32_t)(l << 8 | t);
    src[l] = rows[l] + (l & 1);   /* odd rows start 4 bytes further on */
  }
  int64_t wrong = 0;
  for (int mr = 1; mr <= MR; mr++)
    for (int n = 0; n <= N; n++) {
      for (int i = 0; i < MR * N + 8; i++) d[i] = 0xdeadbeefu;
      hlk_interleave32(src, mr, n, d);
      for (int i = 0; i < MR * N + 8; i++) {
        uint32_t want = i < mr * n ? src[i % mr][i / mr] : 0xdeadbeefu;
        wrong += d[i] != want;
      }
    }
  ck_assert_msg(wrong == 0, "%lld elements wrong", (long long)wrong);
}
END_TEST

START_TEST(t_row_block_runs) {
  tl_begin();
  enum { M = 1100, K = 300, N = 40 };
  static float af[M * K], bf[K * N];
  static double ad[M * K], bd[K * N];
  static int64_t want[M * N];
  uint64_t seed = 21;
  for (int i = 0; i < M * K; i++) ad[i] = af[i] = (float)((int)(tl_lcg(&seed) >> 40) % 17 - 8);
  for (int i = 0; i < K * N; i++) bd[i] = bf[i] = (float)((int)(tl_lcg(&seed) >> 40) % 17 - 8);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      int64_t acc = 0;
      for (int p = 0; p < K; p++) acc += (int64_t)af[i * K + p] * (int64_t)bf[p * N + j];
      want[i * N + j] = acc;
    }
  for (int t = 0; t < 2; t++) {
    char text[256];
    const char *ty = t ? "f64" : "f32";
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n  a = %s[1100,300] parameter(0)\n  b = %s[300,40] parameter(1)\n"
             "  ROOT d = %s[1100,40] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
             ty, ty, ty);
    HloElementType et = t ? HLO_TYPE_F64 : HLO_TYPE_F32;
    const TlArray in[2] = {{et, 2, (int64_t[]){M, K}, t ? (const void *)ad : (const void *)af},
                           {et, 2, (int64_t[]){K, N}, t ? (const void *)bd : (const void *)bf}};
    for (int threads = 1; threads <= 4; threads++) {
      TlRun r = tl_run_arrays(threads, text, 2, in);
      const void *got = hlo_buffer_data(r.result);
      int bad = -1;
      for (int i = 0; i < M * N && bad < 0; i++) {
        double g = t ? ((const double *)got)[i] : ((const float *)got)[i];
        if (g != (double)want[i]) bad = i;
      }
      ck_assert_msg(bad < 0, "%s, %d threads: element %d differs", ty, threads, bad);
      tl_run_done(&r);   /* scribbles over the result: the next run cannot inherit it */
    }
  }
  tl_end();
}
END_TEST

/* The f32 GEMM against a plain loop summing in the documented order
 * (gemm.h: blocks of hlk_gemm_kc_f32(k) steps, each summed from zero in
 * step order, block sums added in order), bit for bit: every instruction
 * set the CPU has, 1 to 3 threads, sizes that are no multiple of any
 * tile (partial row slivers of every kernel, partial column slivers, row
 * blocks and column tiles split between threads, three shared-dim blocks),
 * f32 and bf16 operands (widened exactly while packed) with B row-major and
 * transposed. AVX2 and AVX-512 fuse each multiply-add; the
 * portable kernel may or may not (the compiler's choice), but must do one
 * or the other throughout. */
static void order_ref(const float *a, const float *b, int64_t bcs, int64_t brs, int M, int N,
                      int K, bool fused, float *c) {
  int64_t kc = hlk_gemm_kc_f32(K);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      float acc = 0;
      for (int64_t p0 = 0; p0 < K; p0 += kc) {
        float s = 0;
        for (int64_t p = p0; p < K && p < p0 + kc; p++) {
          float x = a[(int64_t)i * K + p], y = b[p * brs + j * bcs];
          if (fused) s = fmaf(x, y, s);
          else { volatile float t = x * y; s = s + t; }
        }
        acc = p0 == 0 ? s : acc + s;
      }
      c[(int64_t)i * N + j] = acc;
    }
}

static float bf16_round(float f) {   /* to a bf16 value (truncation is enough for inputs) */
  uint32_t u;
  memcpy(&u, &f, 4);
  u &= 0xffff0000u;
  memcpy(&f, &u, 4);
  return f;
}

START_TEST(t_gemm_fixed_order) {
  tl_begin();
  /* Then M = 2..25: every row count of a last sliver for tiles of 4, 6
   * and 12 rows (one row is a vector-matrix product: gemv.c, its own
   * order). */
  static const int shapes[][3] = {{61, 77, 517}, {301, 600, 300}};
  int nshapes = (int)(sizeof shapes / sizeof *shapes);
  for (int sh = 0; sh < nshapes + 24; sh++) {
    int M = sh < nshapes ? shapes[sh][0] : sh - nshapes + 2;
    int N = sh < nshapes ? shapes[sh][1] : 45, K = sh < nshapes ? shapes[sh][2] : 300;
    float *a = malloc(sizeof(float) * (size_t)(M * K)), *b = malloc(sizeof(float) * (size_t)(K * N));
    uint16_t *a16 = malloc(2 * (size_t)(M * K)), *b16 = malloc(2 * (size_t)(K * N));
    float *fused = malloc(sizeof(float) * (size_t)(M * N)), *plain = malloc(sizeof(float) * (size_t)(M * N));
    ck_assert(a && b && a16 && b16 && fused && plain);
    uint64_t seed = 5 + (uint64_t)sh;
    for (int t = 0; t < 4; t++) {   /* 0/1: f32, B row-major/transposed; 2/3: bf16, the same */
      bool tr = t == 1 || t == 3, bf = t >= 2;
      if (t == 3 && sh >= nshapes + 4) continue;   /* (its packing is t == 2's A path) */
      /* Values of mixed magnitude, so that the order of the sums shows. */
      for (int i = 0; i < M * K; i++)
        a[i] = (float)((double)(tl_lcg(&seed) >> 20) / 8589934592.0 - 0.5) * (i % 7 == 0 ? 1000.f : 1.f);
      for (int i = 0; i < K * N; i++)
        b[i] = (float)((double)(tl_lcg(&seed) >> 20) / 8589934592.0 - 0.5) * (i % 5 == 0 ? 1e-3f : 1.f);
      if (bf) {
        for (int i = 0; i < M * K; i++) { a[i] = bf16_round(a[i]); uint32_t u; memcpy(&u, &a[i], 4); a16[i] = (uint16_t)(u >> 16); }
        for (int i = 0; i < K * N; i++) { b[i] = bf16_round(b[i]); uint32_t u; memcpy(&u, &b[i], 4); b16[i] = (uint16_t)(u >> 16); }
      }
      /* tr: the same values read as b[j][p] (rhs [N,K], contracting dim 1). */
      int64_t brs = tr ? 1 : N, bcs = tr ? K : 1;
      order_ref(a, b, bcs, brs, M, N, K, true, fused);
      order_ref(a, b, bcs, brs, M, N, K, false, plain);
      const char *ty = bf ? "bf16" : "f32";
      char text[512];
      snprintf(text, sizeof text,
               "HloModule m\nENTRY e {\n  a = %s[%d,%d] parameter(0)\n  b = %s[%d,%d] parameter(1)\n"
               "  ROOT d = f32[%d,%d] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={%d}\n}\n",
               ty, M, K, ty, tr ? N : K, tr ? K : N, M, N, tr ? 1 : 0);
      HloElementType et = bf ? HLO_TYPE_BF16 : HLO_TYPE_F32;
      const TlArray in[2] = {
          {et, 2, (int64_t[]){M, K}, bf ? (const void *)a16 : (const void *)a},
          {et, 2, tr ? (int64_t[]){N, K} : (int64_t[]){K, N}, bf ? (const void *)b16 : (const void *)b}};
      for (TlGemmIsas g = {0}; tl_gemm_isa_next(&g);) {
        bool portable = strcmp(g.isa, "scalar") == 0;
        for (int threads = 1; threads <= 3; threads++) {
          TlRun r = tl_run_arrays(threads, text, 2, in);
          const float *got = hlo_buffer_data(r.result);
          int64_t bad_f = -1, bad_p = -1;
          for (int64_t i = 0; i < (int64_t)M * N; i++) {
            if (bad_f < 0 && memcmp(&got[i], &fused[i], 4) != 0) bad_f = i;
            if (bad_p < 0 && memcmp(&got[i], &plain[i], 4) != 0) bad_p = i;
          }
          /* The portable kernel: the reference it follows further. */
          bool use_p = portable && bad_f >= 0 && (bad_p < 0 || bad_p > bad_f);
          int64_t bad = use_p ? bad_p : bad_f;
          const float *want = use_p ? plain : fused;
          ck_assert_msg(bad < 0, "%s %dx%dx%d %s%s, %d threads: element [%lld,%lld] = %.9g, want %.9g",
                        g.isa, M, N, K, ty, tr ? " (B transposed)" : "", threads,
                        (long long)(bad / N), (long long)(bad % N), bad >= 0 ? got[bad] : 0.0,
                        bad >= 0 ? want[bad] : 0.0);
          tl_run_done(&r);
        }
      }
    }
    free(a); free(b); free(a16); free(b16); free(fused); free(plain);
  }
  tl_end();
}
END_TEST

/* A bf16 or f16 result large enough that its rounding from the f32 sums is
 * shared out over the threads (dot.c, from 131072 elements): on 1 to 3
 * threads every element is the f32 sum rounded to nearest, ties to even.
 * Integer-valued operands make the f32 sums exact (one block of 6 steps,
 * |sum| < 2^15), so the expected value is that integer rounded to 8 (bf16)
 * or 11 (f16) significant bits, worked out here with rint in double. */
static double round_bits(double v, int bits) {
  if (v == 0) return 0;
  int e;
  frexp(fabs(v), &e);               /* 2^(e-1) <= |v| < 2^e */
  double ulp = ldexp(1.0, e - bits);
  return ulp < 1 ? v : rint(v / ulp) * ulp;
}

START_TEST(t_narrow_result_rounding_split) {
  tl_begin();
  enum { M = 384, N = 352, K = 6 };
  static float a[M * K], b[K * N];
  uint64_t seed = 77;
  for (int i = 0; i < M * K; i++) a[i] = (float)((int)(tl_lcg(&seed) >> 40) % 127 - 63);
  for (int i = 0; i < K * N; i++) b[i] = (float)((int)(tl_lcg(&seed) >> 40) % 67 - 33);
  for (int t = 0; t < 2; t++) {
    const char *ty = t == 0 ? "bf16" : "f16";
    char text[512];
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n  a = f32[%d,%d] parameter(0)\n  b = f32[%d,%d] parameter(1)\n"
             "  ROOT d = %s[%d,%d] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
             M, K, K, N, ty, M, N);
    const TlArray in[2] = {{HLO_TYPE_F32, 2, (int64_t[]){M, K}, a},
                           {HLO_TYPE_F32, 2, (int64_t[]){K, N}, b}};
    for (int threads = 1; threads <= 3; threads++) {
      TlRun r = tl_run_arrays(threads, text, 2, in);
      const uint16_t *got = hlo_buffer_data(r.result);
      int64_t bad = -1;
      double want = 0, have = 0;
      for (int64_t i = 0; i < (int64_t)M * N && bad < 0; i++) {
        double sum = 0;
        for (int p = 0; p < K; p++) sum += (double)a[i / N * K + p] * (double)b[p * N + i % N];
        want = round_bits(sum, t == 0 ? 8 : 11);
        have = t == 0 ? hlk_bf16_to_f32(got[i]) : hlk_f16_to_f32(got[i]);
        if (have != want) bad = i;
      }
      ck_assert_msg(bad < 0, "%s result, %d threads: element %lld = %g, want %g", ty, threads,
                    (long long)bad, have, want);
      tl_run_done(&r);
    }
  }
  tl_end();
}
END_TEST

int main(void) {
  Suite *s = suite_create("dot");
  TCase *tc = tcase_create("dimension numbers");
  tcase_add_test(tc, t_matmul_f32);
  tcase_add_test(tc, t_row_block_runs);
  tcase_add_test(tc, t_gemm_fixed_order);
  tcase_add_test(tc, t_interleave32);
  tcase_add_test(tc, t_matvec_vecvec_outer);
  tcase_add_test(tc, t_batch_first);
  tcase_add_test(tc, t_batch_last);
  tcase_add_test(tc, t_batch_middle_two_contracting);
  tcase_add_test(tc, t_zero_sizes);
  tcase_add_test(tc, t_check_errors);
  tcase_add_test(tc, t_ragged_dot);
  /* t_gemm_fixed_order runs large products: under ASan on a loaded host it
   * took more than Check's default 4 s. */
  tcase_set_timeout(tc, 60);
  suite_add_tcase(s, tc);
  tc = tcase_create("types");
  tcase_add_test(tc, t_int_wrap);
  tcase_add_test(tc, t_bf16_f16_accumulate_f32);
  tcase_add_test(tc, t_f8_accumulate_f32);
  tcase_add_test(tc, t_operands_rounded_to_result_type);
  tcase_add_test(tc, t_complex);
  tcase_add_test(tc, t_f64_transposed);
  tcase_add_test(tc, t_pred);
  tcase_add_test(tc, t_narrow_result_rounding_split);
  suite_add_tcase(s, tc);
  tc = tcase_create("gemm");
  tcase_add_test(tc, t_gemm_vs_reference);
  tcase_add_test(tc, t_int_gemm);
  tcase_add_test(tc, t_int_hand);
  tcase_add_test(tc, t_int_threads);
  tcase_add_test(tc, t_gemv_orders);
  tcase_add_test(tc, t_wide_products_many_threads);
  tcase_set_timeout(tc, 60);
  suite_add_tcase(s, tc);
  return tl_main(s);
}
