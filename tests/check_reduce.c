/* check_reduce.c: reduce, reduce-window and select-and-scatter kernels on
 * hand-built instructions. Expected values are worked out by hand in the
 * comments from XLA's documented semantics. */
#include "tests/testlib.h"
#include "interp/kernels/reducer.h"
#include <stdio.h>
#include <stdlib.h>

/* A[i][j][k] = 12i + 4j + k over f32[2,3,4]. */
static HliValue *iota234(HloShape *s) {
  static const int64_t d[3] = {2, 3, 4};
  *s = tl_shape(HLO_F32, 3, d);
  float v[24];
  for (int i = 0; i < 24; i++) v[i] = (float)i;
  return tl_value(s, v);
}

/* reduce(A, init) over dims with to_apply = op; result shape built from the kept dims. */
static HliValue *reduce1(HliValue *a, const HloShape *as, int32_t nd, const int64_t *dims,
                         HloOpcode op, const void *init) {
  int64_t od[8];
  int32_t orank = 0;
  for (int32_t d = 0; d < as->rank; d++) {
    bool r = false;
    for (int32_t j = 0; j < nd; j++) r = r || dims[j] == d;
    if (!r) od[orank++] = as->dims[d];
  }
  HloShape is = SCALAR(as->dtype);
  HloInstr *ins = tl_instr(HLO_OP_REDUCE, tl_shape(as->dtype, orank, od), 2, tl_param(0, *as),
                           tl_param(1, is));
  tl_dims(ins, nd, dims);
  tl_call(ins, HLO_CALL_TO_APPLY, tl_binop(op, as->dtype));
  HliValue *iv = tl_value(&is, init);
  HliValue *in[2] = {a, iv};
  HliValue *out = tl_try_run(ins, in);
  hli_value_unref(NULL, iv);
  return out;
}

static void expect_f32(HliValue *out, const float *want, int64_t n) {
  ck_assert_ptr_nonnull(out);
  ck_assert_int_eq(out->nelem, n);
  const float *g = out->data;
  for (int64_t i = 0; i < n; i++)
    ck_assert_msg(g[i] == want[i] || (isnan(g[i]) && isnan(want[i])),
                  "element %lld: got %g want %g", (long long)i, g[i], want[i]);
  hli_value_unref(NULL, out);
}

START_TEST(reduce_sum_every_dim_subset) {
  tl_begin();
  HloShape s;
  HliValue *a = iota234(&s);
  float z = 0, hundred = 100;
  /* dims {} : every element plus the init */
  {
    float w[24];
    for (int i = 0; i < 24; i++) w[i] = (float)i + 100;
    expect_f32(reduce1(a, &s, 0, NULL, HLO_OP_ADD, &hundred), w, 24);
  }
  /* {0}: 12 + 2(4j + k) */
  expect_f32(reduce1(a, &s, 1, (int64_t[]){0}, HLO_OP_ADD, &z),
             (float[]){12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34}, 12);
  /* {1}: 36i + 12 + 3k */
  expect_f32(reduce1(a, &s, 1, (int64_t[]){1}, HLO_OP_ADD, &z),
             (float[]){12, 15, 18, 21, 48, 51, 54, 57}, 8);
  /* {2}: 48i + 16j + 6 */
  expect_f32(reduce1(a, &s, 1, (int64_t[]){2}, HLO_OP_ADD, &z),
             (float[]){6, 22, 38, 54, 70, 86}, 6);
  /* {0,1}: 60 + 6k */
  expect_f32(reduce1(a, &s, 2, (int64_t[]){0, 1}, HLO_OP_ADD, &z), (float[]){60, 66, 72, 78}, 4);
  /* {0,2}: 60 + 32j; dims listed out of order mean the same */
  expect_f32(reduce1(a, &s, 2, (int64_t[]){2, 0}, HLO_OP_ADD, &z), (float[]){60, 92, 124}, 3);
  /* {1,2}: 144i + 66 */
  expect_f32(reduce1(a, &s, 2, (int64_t[]){1, 2}, HLO_OP_ADD, &z), (float[]){66, 210}, 2);
  /* {0,1,2}: 0 + 1 + ... + 23 = 276, plus init 100 */
  expect_f32(reduce1(a, &s, 3, (int64_t[]){0, 1, 2}, HLO_OP_ADD, &hundred), (float[]){376}, 1);
  hli_value_unref(NULL, a);
  tl_end();
}
END_TEST

START_TEST(reduce_max_min_mul_int) {
  tl_begin();
  static const int64_t d[2] = {2, 3};
  HloShape s = tl_shape(HLO_S32, 2, d);
  int32_t v[6] = {3, -7, 5, 9, 2, -1};
  HliValue *a = tl_value(&s, v);
  int32_t lo = INT32_MIN, hi = INT32_MAX, one = 1;
  HliValue *o = reduce1(a, &s, 1, (int64_t[]){1}, HLO_OP_MAXIMUM, &lo);
  ck_assert_int_eq(((int32_t *)o->data)[0], 5);
  ck_assert_int_eq(((int32_t *)o->data)[1], 9);
  hli_value_unref(NULL, o);
  o = reduce1(a, &s, 1, (int64_t[]){0}, HLO_OP_MINIMUM, &hi);
  ck_assert_int_eq(((int32_t *)o->data)[0], 3);
  ck_assert_int_eq(((int32_t *)o->data)[1], -7);
  ck_assert_int_eq(((int32_t *)o->data)[2], -1);
  hli_value_unref(NULL, o);
  /* 3 * -7 * 5 * 9 * 2 * -1 = 1890 */
  o = reduce1(a, &s, 2, (int64_t[]){0, 1}, HLO_OP_MULTIPLY, &one);
  ck_assert_int_eq(((int32_t *)o->data)[0], 1890);
  hli_value_unref(NULL, o);
  hli_value_unref(NULL, a);
  /* u8 add wraps: 200 + 100 = 44 (mod 256) */
  HloShape s8 = tl_shape(HLO_U8, 1, (int64_t[]){2});
  uint8_t b[2] = {200, 100}, z = 0;
  a = tl_value(&s8, b);
  o = reduce1(a, &s8, 1, (int64_t[]){0}, HLO_OP_ADD, &z);
  ck_assert_int_eq(((uint8_t *)o->data)[0], 44);
  hli_value_unref(NULL, o);
  hli_value_unref(NULL, a);
  tl_end();
}
END_TEST

START_TEST(reduce_float_max_nan_and_zero) {
  tl_begin();
  /* a long row so the lane loop runs; the NaN must win */
  HloShape s = tl_shape(HLO_F32, 1, (int64_t[]){100});
  float v[100];
  for (int i = 0; i < 100; i++) v[i] = (float)(i % 17);
  v[40] = NAN;
  HliValue *a = tl_value(&s, v);
  float ninf = -INFINITY;
  HliValue *o = reduce1(a, &s, 1, (int64_t[]){0}, HLO_OP_MAXIMUM, &ninf);
  ck_assert(isnan(((float *)o->data)[0]));
  hli_value_unref(NULL, o);
  hli_value_unref(NULL, a);
  /* max over {-0, +0, ...negatives}: the first zero seen is kept (-0) */
  for (int i = 0; i < 100; i++) v[i] = -1.0f - (float)i;
  v[10] = -0.0f;
  v[20] = 0.0f;
  a = tl_value(&s, v);
  o = reduce1(a, &s, 1, (int64_t[]){0}, HLO_OP_MAXIMUM, &ninf);
  ck_assert(((float *)o->data)[0] == 0 && signbit(((float *)o->data)[0]));
  hli_value_unref(NULL, o);
  /* 16 rows of 100: the big maximum is exact */
  hli_value_unref(NULL, a);
  tl_end();
}
END_TEST

/* Maximum and minimum of rows of L elements, row r holding a special value
 * at position r: every position of the lane loop's first vectors, its body
 * and its tail is tried. Reference: the definition (NaN when the row holds
 * one, else the largest / smallest value). */
enum { EXT_L = 150 };
static double extreme_ref(const double *row, bool max) {
  double m = row[0];
  for (int j = 0; j < EXT_L; j++) {
    if (isnan(row[j])) return NAN;
    if (max ? row[j] > m : row[j] < m) m = row[j];
  }
  return m;
}
static void expect_extremes(HloDtype t, HloOpcode op, double special) {
  bool max = op == HLO_OP_MAXIMUM, f32 = t == HLO_F32;
  size_t es = f32 ? 4 : 8;
  double *ref = malloc(sizeof(double) * EXT_L * EXT_L);
  char *buf = malloc(es * EXT_L * EXT_L);
  ck_assert(ref && buf);
  for (int r = 0; r < EXT_L; r++)
    for (int j = 0; j < EXT_L; j++) {
      double v = j == r ? special : (double)((j * 37 + r) % EXT_L) - 70.5;
      ref[r * EXT_L + j] = v;
      if (f32) ((float *)buf)[r * EXT_L + j] = (float)v;
      else ((double *)buf)[r * EXT_L + j] = v;
    }
  HloShape s = tl_shape(t, 2, (int64_t[]){EXT_L, EXT_L});
  HliValue *a = tl_value(&s, buf);
  float if32 = max ? -INFINITY : INFINITY;
  double if64 = max ? -INFINITY : INFINITY;
  HliValue *o = reduce1(a, &s, 1, (int64_t[]){1}, op, f32 ? (const void *)&if32 : (const void *)&if64);
  ck_assert_ptr_nonnull(o);
  int bad = -1;
  for (int r = 0; r < EXT_L && bad < 0; r++) {
    double want = extreme_ref(ref + r * EXT_L, max);
    double got = f32 ? ((float *)o->data)[r] : ((double *)o->data)[r];
    if (!(got == want || (isnan(got) && isnan(want)))) bad = r;
  }
  ck_assert_msg(bad < 0, "%s %s with %g at position %d: wrong", f32 ? "f32" : "f64",
                max ? "max" : "min", special, bad);
  hli_value_unref(NULL, o);
  hli_value_unref(NULL, a);
  free(buf);
  free(ref);
}

START_TEST(reduce_extreme_every_position) {
  tl_begin();
  static const HloDtype types[2] = {HLO_F32, HLO_F64};
  static const HloOpcode ops[2] = {HLO_OP_MAXIMUM, HLO_OP_MINIMUM};
  const double specials[5] = {NAN, INFINITY, -INFINITY, 1000.0, -1000.0};
  for (int t = 0; t < 2; t++)
    for (int o = 0; o < 2; o++)
      for (int k = 0; k < 5; k++) expect_extremes(types[t], ops[o], specials[k]);
  tl_end();
}
END_TEST

START_TEST(reduce_empty_dims) {
  tl_begin();
  float seven = 7;
  HloShape s = tl_shape(HLO_F32, 2, (int64_t[]){2, 0});
  HliValue *a = tl_value(&s, NULL);
  expect_f32(reduce1(a, &s, 1, (int64_t[]){1}, HLO_OP_ADD, &seven), (float[]){7, 7}, 2);
  hli_value_unref(NULL, a);
  HloShape t = tl_shape(HLO_F32, 2, (int64_t[]){0, 3});
  a = tl_value(&t, NULL);
  expect_f32(reduce1(a, &t, 1, (int64_t[]){0}, HLO_OP_MAXIMUM, &seven), (float[]){7, 7, 7}, 3);
  /* nothing kept of an empty array: empty result */
  HliValue *o = reduce1(a, &t, 1, (int64_t[]){1}, HLO_OP_ADD, &seven);
  ck_assert_ptr_nonnull(o);
  ck_assert_int_eq(o->nelem, 0);
  hli_value_unref(NULL, o);
  hli_value_unref(NULL, a);
  tl_end();
}
END_TEST

START_TEST(reduce_f16_bf16) {
  tl_begin();
  /* f16: 1 + 2^-11 + 2^-11: a sum held in double and rounded once is
   * 1 + 2^-10 (exactly representable) */
  HloShape s = tl_shape(HLO_F16, 1, (int64_t[]){3});
  uint16_t h[3] = {0x3c00, 0x1000, 0x1000}, z = 0;  /* 1, 2^-11, 2^-11 */
  HliValue *a = tl_value(&s, h);
  HliValue *o = reduce1(a, &s, 1, (int64_t[]){0}, HLO_OP_ADD, &z);
  ck_assert_uint_eq(((uint16_t *)o->data)[0], 0x3c01);
  hli_value_unref(NULL, o);
  hli_value_unref(NULL, a);
  /* bf16 max of {1, -2, 3.5} = 3.5 (0x4060) */
  HloShape b = tl_shape(HLO_BF16, 1, (int64_t[]){3});
  uint16_t bv[3] = {0x3f80, 0xc000, 0x4060}, ninf = 0xff80;
  a = tl_value(&b, bv);
  o = reduce1(a, &b, 1, (int64_t[]){0}, HLO_OP_MAXIMUM, &ninf);
  ck_assert_uint_eq(((uint16_t *)o->data)[0], 0x4060);
  hli_value_unref(NULL, o);
  hli_value_unref(NULL, a);
  /* A NaN with a payload comes out as the NaN elementwise operations give
   * (common/numeric.c): sign | 0x7E00 in f16, sign | 0x7FC0 in bf16 */
  uint16_t hn[3] = {0x3c00, 0xfe55, 0x3c00}, bn[3] = {0x3f80, 0xffd5, 0x3f80};
  a = tl_value(&s, hn);
  o = reduce1(a, &s, 1, (int64_t[]){0}, HLO_OP_ADD, &z);
  ck_assert_uint_eq(((uint16_t *)o->data)[0], 0xfe00);
  hli_value_unref(NULL, o);
  hli_value_unref(NULL, a);
  a = tl_value(&b, bn);
  o = reduce1(a, &b, 1, (int64_t[]){0}, HLO_OP_MAXIMUM, &ninf);
  ck_assert_uint_eq(((uint16_t *)o->data)[0], 0xffc0);
  hli_value_unref(NULL, o);
  hli_value_unref(NULL, a);
  tl_end();
}
END_TEST

/* JAX's argmax/argmin reducer over (f32 value, s32 index). */
static HloComputation *argred(HloDtype vt, HloCmpDir dir, HloCmpDir idir) {
  HloShape v = SCALAR(vt), ix = SCALAR(HLO_S32);
  HloInstr *p[4] = {tl_param(0, v), tl_param(1, ix), tl_param(2, v), tl_param(3, ix)};
  HloInstr *gt = tl_cmp(dir, HLO_CMPT_DEFAULT, p[0], p[2]);
  HloInstr *ne = tl_cmp(HLO_CMP_NE, HLO_CMPT_DEFAULT, p[0], p[0]);
  HloInstr *pick = tl_instr(HLO_OP_OR, SCALAR(HLO_PRED), 2, gt, ne);
  HloInstr *eq = tl_cmp(HLO_CMP_EQ, HLO_CMPT_DEFAULT, p[0], p[2]);
  HloInstr *lt = tl_cmp(idir, HLO_CMPT_SIGNED, p[1], p[3]);
  HloInstr *tie = tl_instr(HLO_OP_AND, SCALAR(HLO_PRED), 2, eq, lt);
  HloInstr *ipick = tl_instr(HLO_OP_OR, SCALAR(HLO_PRED), 2, pick, tie);
  HloInstr *sv = tl_instr(HLO_OP_SELECT, v, 3, pick, p[0], p[2]);
  HloInstr *si = tl_instr(HLO_OP_SELECT, ix, 3, ipick, p[1], p[3]);
  HloShape ts[2] = {v, ix};
  return tl_comp(4, p, tl_instr(HLO_OP_TUPLE, tl_tuple(2, ts), 2, sv, si));
}

/* argmax over dim of f32 values vs (their iota indices). */
static void run_arg(HloComputation *c, const HloShape *s, const float *v, int64_t dim,
                    float *ov, int32_t *oi) {
  int64_t n = s->dims[dim], total = hlp_shape_elements(s);
  HloShape is = tl_shape(HLO_S32, s->rank, s->dims);
  int32_t *ix = malloc(sizeof(int32_t) * (size_t)total);
  int64_t stride = 1;
  for (int32_t d = (int32_t)dim + 1; d < s->rank; d++) stride *= s->dims[d];
  for (int64_t e = 0; e < total; e++) ix[e] = (int32_t)((e / stride) % n);
  int64_t od[4];
  int32_t orank = 0;
  for (int32_t d = 0; d < s->rank; d++)
    if (d != dim) od[orank++] = s->dims[d];
  HloShape os[2] = {tl_shape(HLO_F32, orank, od), tl_shape(HLO_S32, orank, od)};
  HloInstr *ins = tl_instr(HLO_OP_REDUCE, tl_tuple(2, os), 4, tl_param(0, *s), tl_param(1, is),
                           tl_param(2, SCALAR(HLO_F32)), tl_param(3, SCALAR(HLO_S32)));
  tl_dims(ins, 1, &dim);
  tl_call(ins, HLO_CALL_TO_APPLY, c);
  HloShape f = SCALAR(HLO_F32), i32 = SCALAR(HLO_S32);
  float ninf = c->root->ops[0]->ops[0]->ops[0]->cmp_dir == HLO_CMP_GT ? -INFINITY : INFINITY;
  int32_t zero = 0;
  HliValue *in[4] = {tl_value(s, v), tl_value(&is, ix), tl_value(&f, &ninf), tl_value(&i32, &zero)};
  HliValue *out = tl_try_run(ins, in);
  ck_assert_ptr_nonnull(out);
  memcpy(ov, out->tuple[0]->data, out->tuple[0]->nbytes);
  memcpy(oi, out->tuple[1]->data, out->tuple[1]->nbytes);
  hli_value_unref(NULL, out);
  for (int k = 0; k < 4; k++) hli_value_unref(NULL, in[k]);
  free(ix);
}

/* The argmax computation above, step by step, as its HLO reads:
 * pick = a CMP b || a != a; ipick = pick || (a == b && ia < ib). */
static void ref_arg(bool is_max, const float *v, const int32_t *ix, int64_t n, float *av,
                    int32_t *ai) {
  for (int64_t k = 0; k < n; k++) {
    float a = *av, b = v[k];
    bool pick = (is_max ? a > b : a < b) || a != a;
    bool ipick = pick || (a == b && *ai < ix[k]);
    if (!pick) *av = b;
    if (!ipick) *ai = ix[k];
  }
}

/* Rows of f32[R,n] with their own index values and init: argmax/argmin of
 * each row against ref_arg, bit for bit. */
static void check_long_arg(bool is_max, int64_t R, int64_t n, const float *v, const int32_t *ix,
                           float v0, int32_t i0) {
  HloComputation *c = argred(HLO_F32, is_max ? HLO_CMP_GT : HLO_CMP_LT, HLO_CMP_LT);
  HloShape s = tl_shape(HLO_F32, 2, (int64_t[]){R, n}), is = tl_shape(HLO_S32, 2, (int64_t[]){R, n});
  HloShape os[2] = {tl_shape(HLO_F32, 1, (int64_t[]){R}), tl_shape(HLO_S32, 1, (int64_t[]){R})};
  HloInstr *ins = tl_instr(HLO_OP_REDUCE, tl_tuple(2, os), 4, tl_param(0, s), tl_param(1, is),
                           tl_param(2, SCALAR(HLO_F32)), tl_param(3, SCALAR(HLO_S32)));
  int64_t dim = 1;
  tl_dims(ins, 1, &dim);
  tl_call(ins, HLO_CALL_TO_APPLY, c);
  HloShape f = SCALAR(HLO_F32), i32 = SCALAR(HLO_S32);
  HliValue *in[4] = {tl_value(&s, v), tl_value(&is, ix), tl_value(&f, &v0), tl_value(&i32, &i0)};
  HliValue *out = tl_try_run(ins, in);
  ck_assert_ptr_nonnull(out);
  for (int64_t r = 0; r < R; r++) {
    float wv = v0;
    int32_t wi = i0;
    ref_arg(is_max, v + r * n, ix + r * n, n, &wv, &wi);
    float gv = ((const float *)out->tuple[0]->data)[r];
    int32_t gi = ((const int32_t *)out->tuple[1]->data)[r];
    ck_assert_msg(memcmp(&gv, &wv, 4) == 0 && gi == wi, "%s row %lld: (%a, %d), want (%a, %d)",
                  is_max ? "argmax" : "argmin", (long long)r, (double)gv, gi, (double)wv, wi);
  }
  hli_value_unref(NULL, out);
  for (int k = 0; k < 4; k++) hli_value_unref(NULL, in[k]);
}

/* Long rows with their own index values: a unique extreme; the extreme
 * tied five times with indices that fall along the row (the least index is
 * the last tie); the init above every element, or tied with the extreme; a
 * NaN (the first wins); extremes of zero with both signs (-0 == +0). */
START_TEST(reduce_argmax_long_rows) {
  tl_begin();
  enum { R = 7, N = 300 };
  static float v[R * N];
  static int32_t ix[R * N];
  for (int r = 0; r < R; r++)
    for (int k = 0; k < N; k++) {
      v[r * N + k] = (float)((k * 37 + r * 11) % 251) - 125.0f;
      ix[r * N + k] = r == 1 ? N - k : k + 3;
    }
  for (int t = 0; t < 5; t++) v[1 * N + 20 + 50 * t] = 200.0f;    /* row 1: five tied maxima */
  for (int t = 0; t < 5; t++) v[2 * N + 10 + 60 * t] = -300.0f;   /* row 2: five tied minima */
  v[3 * N + 150] = NAN;                                           /* row 3: a NaN */
  v[3 * N + 250] = NAN;
  for (int k = 0; k < N; k++) {                                   /* rows 4, 5: zeros of both signs */
    v[4 * N + k] = k % 3 == 0 ? -0.0f : (k % 3 == 1 ? 0.0f : -(float)(k + 1));
    v[5 * N + k] = k % 3 == 0 ? 0.0f : (k % 3 == 1 ? -0.0f : (float)(k + 1));
  }
  v[6 * N + 123] = 125.0f;                                        /* row 6: the init ties it */
  check_long_arg(true, R, N, v, ix, -INFINITY, 0);
  check_long_arg(false, R, N, v, ix, INFINITY, 0);
  check_long_arg(true, R, N, v, ix, 125.0f, 1);     /* init = the max of most rows */
  check_long_arg(true, R, N, v, ix, 1000.0f, 9);    /* init above everything */
  check_long_arg(false, R, N, v, ix, -125.0f, 500);
  tl_end();
}
END_TEST

START_TEST(reduce_argmax_ties_nan) {
  tl_begin();
  HloComputation *amax = argred(HLO_F32, HLO_CMP_GT, HLO_CMP_LT);
  HloComputation *amin = argred(HLO_F32, HLO_CMP_LT, HLO_CMP_LT);
  HlkArgReducer ar;
  ck_assert(hlk_match_arg_reducer(amax, &ar) && ar.is_max);
  ck_assert(hlk_match_arg_reducer(amin, &ar) && !ar.is_max);
  /* the index tie-break reversed is a different computation: not matched */
  ck_assert(!hlk_match_arg_reducer(argred(HLO_F32, HLO_CMP_GT, HLO_CMP_GT), &ar));

  float ov[4];
  int32_t oi[4];
  HloShape s5 = tl_shape(HLO_F32, 1, (int64_t[]){5});
  /* ties: the smaller index wins */
  run_arg(amax, &s5, (float[]){1, 5, 3, 5, 2}, 0, ov, oi);
  ck_assert(ov[0] == 5 && oi[0] == 1);
  run_arg(amin, &s5, (float[]){4, 2, 9, 2, 3}, 0, ov, oi);
  ck_assert(ov[0] == 2 && oi[0] == 1);
  /* the first NaN wins (value NaN, its index) */
  run_arg(amax, &s5, (float[]){1, NAN, 3, NAN, 7}, 0, ov, oi);
  ck_assert(isnan(ov[0]) && oi[0] == 1);
  /* 2-D: rows (inner reduction) and columns (outer reduction) */
  HloShape s23 = tl_shape(HLO_F32, 2, (int64_t[]){2, 3});
  const float m[6] = {1, 7, 7, 4, 4, 0};
  run_arg(amax, &s23, m, 1, ov, oi);
  ck_assert(ov[0] == 7 && oi[0] == 1 && ov[1] == 4 && oi[1] == 0);
  run_arg(amax, &s23, m, 0, ov, oi);
  ck_assert(ov[0] == 4 && oi[0] == 1 && ov[1] == 7 && oi[1] == 0 && ov[2] == 7 && oi[2] == 0);
  run_arg(amin, &s23, m, 0, ov, oi);
  ck_assert(ov[0] == 1 && oi[0] == 0 && ov[1] == 4 && oi[1] == 1 && ov[2] == 0 && oi[2] == 1);
  tl_end();
}
END_TEST

START_TEST(reduce_variadic_independent) {
  tl_begin();
  /* tuple(max(p0, p2), min(p1, p3)) over f32 and s32 columns */
  HloShape f = SCALAR(HLO_F32), i = SCALAR(HLO_S32);
  HloInstr *p[4] = {tl_param(0, f), tl_param(1, i), tl_param(2, f), tl_param(3, i)};
  HloShape ts[2] = {f, i};
  HloInstr *root = tl_instr(HLO_OP_TUPLE, tl_tuple(2, ts), 2,
                            tl_instr(HLO_OP_MAXIMUM, f, 2, p[0], p[2]),
                            tl_instr(HLO_OP_MINIMUM, i, 2, p[1], p[3]));
  HloComputation *c = tl_comp(4, p, root);
  HloShape s = tl_shape(HLO_F32, 2, (int64_t[]){3, 2}), si = tl_shape(HLO_S32, 2, (int64_t[]){3, 2});
  HloShape os[2] = {tl_shape(HLO_F32, 1, (int64_t[]){2}), tl_shape(HLO_S32, 1, (int64_t[]){2})};
  HloInstr *ins = tl_instr(HLO_OP_REDUCE, tl_tuple(2, os), 4, tl_param(0, s), tl_param(1, si),
                           tl_param(2, f), tl_param(3, i));
  tl_dims(ins, 1, (int64_t[]){0});
  tl_call(ins, HLO_CALL_TO_APPLY, c);
  float three = 3;
  int32_t zero = 0;
  HliValue *in[4] = {tl_value(&s, (float[]){1, 8, 2, -1, 0, 2}), tl_value(&si, (int32_t[]){5, -3, 4, 6, 9, 1}),
                     tl_value(&f, &three), tl_value(&i, &zero)};
  HliValue *out = tl_try_run(ins, in);
  ck_assert_ptr_nonnull(out);
  /* max(3, 1, 2, 0) = 3, max(3, 8, -1, 2) = 8; min(0, 5, 4, 9) = 0, min(0, -3, 6, 1) = -3 */
  ck_assert(((float *)out->tuple[0]->data)[0] == 3 && ((float *)out->tuple[0]->data)[1] == 8);
  ck_assert(((int32_t *)out->tuple[1]->data)[0] == 0 && ((int32_t *)out->tuple[1]->data)[1] == -3);
  hli_value_unref(NULL, out);
  for (int k = 0; k < 4; k++) hli_value_unref(NULL, in[k]);
  tl_end();
}
END_TEST

START_TEST(reduce_rejects_bad_shapes) {
  tl_begin();
  HloShape s = tl_shape(HLO_F32, 1, (int64_t[]){4});
  HloInstr *ins = tl_instr(HLO_OP_REDUCE, SCALAR(HLO_F32), 2, tl_param(0, s),
                           tl_param(1, SCALAR(HLO_S32)));   /* init type differs */
  tl_dims(ins, 1, (int64_t[]){0});
  tl_call(ins, HLO_CALL_TO_APPLY, tl_binop(HLO_OP_ADD, HLO_F32));
  ck_assert_int_ne(hlk_reduce_check(NULL, ins), 0);
  ck_assert_ptr_nonnull(strstr(hli_last_error(), "init value 0 must be a f32 scalar"));
  ins->ops[1] = tl_param(1, SCALAR(HLO_F32));
  tl_dims(ins, 1, (int64_t[]){1});   /* out of range */
  ck_assert_int_ne(hlk_reduce_check(NULL, ins), 0);
  tl_dims(ins, 1, (int64_t[]){0});
  ck_assert_int_eq(hlk_reduce_check(NULL, ins), 0);
  tl_end();
}
END_TEST

/* ---- reduce-window ---- */

static HliValue *rwin(const HloShape *s, const float *v, HloOpcode op, float init,
                      int32_t rank, const int64_t (*w)[6], const int64_t *odims) {
  HloShape f = SCALAR(HLO_F32);
  HloInstr *ins = tl_instr(HLO_OP_REDUCE_WINDOW, tl_shape(HLO_F32, rank, odims), 2,
                           tl_param(0, *s), tl_param(1, f));
  tl_window(ins, rank, w);
  tl_call(ins, HLO_CALL_TO_APPLY, tl_binop(op, HLO_F32));
  HliValue *in[2] = {tl_value(s, v), tl_value(&f, &init)};
  HliValue *out = tl_try_run(ins, in);
  hli_value_unref(NULL, in[0]);
  hli_value_unref(NULL, in[1]);
  return out;
}

/* Windows that cover a whole dimension, padded below by size - 1, make
 * cumulative folds (JAX's cumsum, cummax): output i folds inputs 0..i in
 * order from init, as a running fold; the values are worked out by hand or
 * by the same running fold written here. A window narrower than the
 * dimension is a sliding window, not a prefix. */
START_TEST(reduce_window_prefix_scans) {
  tl_begin();
  /* last dim: x[i][j] = (i+1) j, init 0.5: (i+1) j (j+1) / 2 + 0.5 */
  enum { R = 3, C = 300 };
  static float a[R * C], want[R * C];
  for (int i = 0; i < R; i++)
    for (int j = 0; j < C; j++) {
      a[i * C + j] = (float)((i + 1) * j);
      want[i * C + j] = (float)((i + 1) * j * (j + 1) / 2) + 0.5f;
    }
  HloShape s = tl_shape(HLO_F32, 2, (int64_t[]){R, C});
  expect_f32(rwin(&s, a, HLO_OP_ADD, 0.5f, 2,
                  (const int64_t[][6]){{1, 1, 0, 0, 1, 1}, {C, 1, C - 1, 0, 1, 1}},
                  (int64_t[]){R, C}), want, R * C);
  /* first dim, window longer than it: x[i][j] = i - j -> i (i+1) / 2 - (i+1) j */
  static float b[50 * 7], wb[50 * 7];
  for (int i = 0; i < 50; i++)
    for (int j = 0; j < 7; j++) {
      b[i * 7 + j] = (float)(i - j);
      wb[i * 7 + j] = (float)(i * (i + 1) / 2 - (i + 1) * j);
    }
  HloShape s2 = tl_shape(HLO_F32, 2, (int64_t[]){50, 7});
  expect_f32(rwin(&s2, b, HLO_OP_ADD, 0, 2,
                  (const int64_t[][6]){{60, 1, 59, 0, 1, 1}, {1, 1, 0, 0, 1, 1}},
                  (int64_t[]){50, 7}), wb, 50 * 7);
  /* inexact float sums: the bits of a float running sum from init -1 */
  static float c[2 * 1000], wc[2 * 1000];
  for (int i = 0; i < 2; i++) {
    float acc = -1.0f;
    for (int j = 0; j < 1000; j++) {
      c[i * 1000 + j] = (float)sin(j * 0.37 + i) * 1.3e-3f * (float)(j % 17 + 1);
      acc = acc + c[i * 1000 + j];
      wc[i * 1000 + j] = acc;
    }
  }
  HloShape s3 = tl_shape(HLO_F32, 2, (int64_t[]){2, 1000});
  expect_f32(rwin(&s3, c, HLO_OP_ADD, -1.0f, 2,
                  (const int64_t[][6]){{1, 1, 0, 0, 1, 1}, {1000, 1, 999, 0, 1, 1}},
                  (int64_t[]){2, 1000}), wc, 2000);
  /* cumulative maximum: rises, then a NaN at 100 stays */
  static float d[400], wd[400];
  for (int j = 0; j < 400; j++) {
    d[j] = (float)((j * 37) % 101);
    wd[j] = j == 0 ? d[0] : fmaxf(wd[j - 1], d[j]);
  }
  d[100] = NAN;
  for (int j = 100; j < 400; j++) wd[j] = NAN;
  HloShape s4 = tl_shape(HLO_F32, 1, (int64_t[]){400});
  expect_f32(rwin(&s4, d, HLO_OP_MAXIMUM, -INFINITY, 1, (const int64_t[][6]){{400, 1, 399, 0, 1, 1}},
                  (int64_t[]){400}), wd, 400);
  /* size 3 < 5, padded 2_0: sliding sums x[i-2] + x[i-1] + x[i] */
  HloShape s5 = tl_shape(HLO_F32, 1, (int64_t[]){5});
  expect_f32(rwin(&s5, (float[]){1, 2, 4, 8, 16}, HLO_OP_ADD, 0, 1,
                  (const int64_t[][6]){{3, 1, 2, 0, 1, 1}}, (int64_t[]){5}),
             (float[]){1, 3, 7, 14, 28}, 5);
  tl_end();
}
END_TEST

/* ---- reductions over leading dimensions, through whole modules ------------ */

static const char *sum_mod =
  "HloModule m\nadd {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n"
  "  ROOT s = %s[] %s(a, b)\n}\nENTRY main {\n  x = %s parameter(0)\n  z = %s[] constant(%s)\n"
  "  ROOT r = %s reduce(x, z), dimensions={%s}, to_apply=add\n}\n";

/* Runs reduce over dims of an input built from data, on `threads` threads. */
static HloBuffer *reduce_module(int threads, const char *t, const char *op, const char *in_shape,
                                const char *init, const char *out_shape, const char *dims,
                                HloElementType et, const int64_t *d, int rank, const void *data) {
  char text[1024];
  snprintf(text, sizeof text, sum_mod, t, t, t, op, in_shape, t, init, out_shape, dims);
  HloCtx *c = tl_ctx_new(threads);
  HloBuffer *in = NULL;
  ck_assert_int_eq(hlo_buffer_new_array(c, et, d, rank, data, &in), HLO_OK);
  HloBuffer *r = tl_run_ok(c, text, &in, 1);
  hlo_buffer_free(in);
  hlo_ctx_free(c);
  return r;
}

/* Summing over leading dimensions splits the kept columns among threads
 * (blocks of 336 columns on 3 threads, 304 on 4) and folds four rows per
 * pass over the accumulators: the sums stay what the hand computation says. */
START_TEST(reduce_leading_dims_integers) {
  /* x[i][j] = 1000 i + j over s32[7,1000]: sum over i = 21000 + 7 j. */
  static int32_t a[7 * 1000];
  for (int i = 0; i < 7; i++)
    for (int j = 0; j < 1000; j++) a[i * 1000 + j] = 1000 * i + j;
  for (int threads = 1; threads <= 3; threads++) {
    HloBuffer *r = reduce_module(threads, "s32", "add", "s32[7,1000]", "0", "s32[1000]", "0",
                                 HLO_TYPE_S32, (int64_t[]){7, 1000}, 2, a);
    const int32_t *g = hlo_buffer_data(r);
    for (int j = 0; j < 1000; j++) ck_assert_int_eq(g[j], 21000 + 7 * j);
    hlo_buffer_free(r);
  }
  /* y[i][k][l][c] = 100000 k + 1000 i + 10 l + c over s32[3,2,5,600], dims {0,2}:
   * 15 (100000 k + c) + 5 (0 + 1000 + 2000) + 3 (0 + 10 + ... + 40). */
  static int32_t b[3 * 2 * 5 * 600];
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 2; k++)
      for (int l = 0; l < 5; l++)
        for (int c = 0; c < 600; c++)
          b[((i * 2 + k) * 5 + l) * 600 + c] = 100000 * k + 1000 * i + 10 * l + c;
  for (int threads = 1; threads <= 4; threads += 3) {
    HloBuffer *r = reduce_module(threads, "s32", "add", "s32[3,2,5,600]", "7", "s32[2,600]", "0,2",
                                 HLO_TYPE_S32, (int64_t[]){3, 2, 5, 600}, 4, b);
    const int32_t *g = hlo_buffer_data(r);
    for (int k = 0; k < 2; k++)
      for (int c = 0; c < 600; c++)
        ck_assert_int_eq(g[k * 600 + c], 7 + 15 * (100000 * k + c) + 15000 + 300);
    hlo_buffer_free(r);
  }
}
END_TEST

/* f32 sums over a leading dimension accumulate each column in double in row
 * order and round once (reduce's wide add): the bits of that loop, on any
 * thread count. Maximum keeps NaN and the first of -0/+0. */
START_TEST(reduce_leading_dims_floats) {
  enum { R = 37, C = 2048 };
  static float a[R * C];
  for (int i = 0; i < R * C; i++)
    a[i] = (float)ldexp(sin(i * 0.7), (i * 7) % 41 - 20);   /* wide range of magnitudes */
  static float want[C];
  for (int c = 0; c < C; c++) {
    double acc = 0.5;
    for (int i = 0; i < R; i++) acc += a[i * C + c];
    want[c] = (float)acc;
  }
  for (int threads = 1; threads <= 3; threads++) {
    HloBuffer *r = reduce_module(threads, "f32", "add", "f32[37,2048]", "0.5", "f32[2048]", "0",
                                 HLO_TYPE_F32, (int64_t[]){R, C}, 2, a);
    ck_assert_int_eq(memcmp(hlo_buffer_data(r), want, sizeof want), 0);
    hlo_buffer_free(r);
  }
  /* maximum: column 3 holds a NaN (row 5), column 4 is -0 then +0 (stays
   * -0), column 5 is +0 then -0 (stays +0); the rest is the largest row. */
  static float m[R * C];
  for (int i = 0; i < R; i++)
    for (int c = 0; c < C; c++) m[i * C + c] = (float)(i % 9) - 20.0f;
  m[5 * C + 3] = NAN;
  for (int i = 0; i < R; i++) {
    m[i * C + 4] = i == 0 ? -0.0f : 0.0f;
    m[i * C + 5] = i == 0 ? 0.0f : -0.0f;
  }
  HloBuffer *r = reduce_module(2, "f32", "maximum", "f32[37,2048]", "-inf", "f32[2048]", "0",
                               HLO_TYPE_F32, (int64_t[]){R, C}, 2, m);
  const float *g = hlo_buffer_data(r);
  ck_assert(isnan(g[3]));
  ck_assert(g[4] == 0 && signbit(g[4]));
  ck_assert(g[5] == 0 && !signbit(g[5]));
  for (int c = 0; c < C; c++)
    if (c < 3 || c > 5) ck_assert_float_eq(g[c], -12.0f);
  hlo_buffer_free(r);
}
END_TEST

/* One long run reduced whole, on 1 to 3 threads (threads share its blocks):
 * integer folds give the wrapped or exact answer the test works out
 * (s32 add wraps past 2^31; max at one position; u8 xor); an f64 sum is
 * accurate to about 16 ulp + one per 256-element block, where adding in
 * sequence would lose every tiny term (1 + 2^20 terms of 2^-53: the exact
 * sum is 1 + 2^-33); f64 maximum falls back to the sequential fold for a
 * NaN (kept, with its payload) and for -0/+0 (the first one stays). */
START_TEST(reduce_long_runs) {
  enum { N = 1 << 20 };
  static int32_t a[N];
  static uint8_t u[N];
  static double d[N + 1];
  uint32_t wsum = 0;
  uint8_t wxor = 0;
  uint64_t seed = 3;
  for (int i = 0; i < N; i++) {
    a[i] = (int32_t)(tl_lcg(&seed) >> 33) % 100000 - 20000 + (i % 7 == 0 ? 1 << 28 : 0);
    u[i] = (uint8_t)(tl_lcg(&seed) >> 40);
    wxor ^= u[i];
  }
  int32_t big = a[777777] = INT32_MAX - 5;
  for (int i = 0; i < N; i++) wsum += (uint32_t)a[i];   /* wraps, as s32 add does */
  for (int threads = 1; threads <= 3; threads++) {
    HloBuffer *r = reduce_module(threads, "s32", "add", "s32[1048576]", "0", "s32[]", "0",
                                 HLO_TYPE_S32, (int64_t[]){N}, 1, a);
    ck_assert_int_eq(*(const int32_t *)hlo_buffer_data(r), (int32_t)wsum);
    hlo_buffer_free(r);
    r = reduce_module(threads, "s32", "maximum", "s32[1048576]", "-2147483648", "s32[]", "0",
                      HLO_TYPE_S32, (int64_t[]){N}, 1, a);
    ck_assert_int_eq(*(const int32_t *)hlo_buffer_data(r), big);
    hlo_buffer_free(r);
    r = reduce_module(threads, "u8", "xor", "u8[1048576]", "0", "u8[]", "0", HLO_TYPE_U8,
                      (int64_t[]){N}, 1, u);
    ck_assert_int_eq(*(const uint8_t *)hlo_buffer_data(r), wxor);
    hlo_buffer_free(r);
  }
  d[0] = 1;
  for (int i = 1; i <= N; i++) d[i] = 0x1p-53;
  double seq = 0;
  for (int i = 0; i <= N; i++) seq += d[i];
  ck_assert(seq == 1.0);   /* in sequence, every tiny term is lost */
  double got[3];
  for (int threads = 1; threads <= 3; threads++) {
    HloBuffer *r = reduce_module(threads, "f64", "add", "f64[1048577]", "0", "f64[]", "0",
                                 HLO_TYPE_F64, (int64_t[]){N + 1}, 1, d);
    got[threads - 1] = *(const double *)hlo_buffer_data(r);
    hlo_buffer_free(r);
    ck_assert_msg(fabs(got[threads - 1] - (1 + 0x1p-33)) <= 16 * 0x1p-53, "%d threads: %a",
                  threads, got[threads - 1]);
    ck_assert(memcmp(&got[threads - 1], &got[0], 8) == 0);   /* same bits on any count */
  }
  for (int i = 0; i <= N; i++) d[i] = -(double)(i % 1000) - 1;
  d[5000] = 0.5;
  d[6000] = 0.25;
  for (int step = 0; step < 2; step++) {
    /* step 0: the largest is 0.5; step 1: a NaN at 9000 and -0 before +0. */
    if (step == 1) {
      uint64_t nan = 0x7ff8000000000123u;
      memcpy(&d[9000], &nan, 8);
    }
    HloBuffer *r = reduce_module(2, "f64", "maximum", "f64[1048577]", "-inf", "f64[]", "0",
                                 HLO_TYPE_F64, (int64_t[]){N + 1}, 1, d);
    uint64_t bits;
    memcpy(&bits, hlo_buffer_data(r), 8);
    hlo_buffer_free(r);
    if (step == 0) ck_assert(bits == 0x3fe0000000000000u);
    else ck_assert_msg(bits == 0x7ff8000000000123u, "%016llx", (unsigned long long)bits);
  }
  for (int i = 0; i <= N; i++) d[i] = -(double)(i % 1000) - 1;
  d[100] = -0.0;
  d[200] = 0.0;
  HloBuffer *r = reduce_module(2, "f64", "maximum", "f64[1048577]", "-inf", "f64[]", "0",
                               HLO_TYPE_F64, (int64_t[]){N + 1}, 1, d);
  double z = *(const double *)hlo_buffer_data(r);
  ck_assert(z == 0 && signbit(z));
  hlo_buffer_free(r);
}
END_TEST

/* NHWC pooling: the channels (a one-element window) ride along as runs.
 * Windows 3x3 with stride 2 (overlapping, output by output), stride 1 (one
 * run per window column), base dilation on W, padding on both sides; max
 * and add, on 1-3 threads, against the definition (skip padding and
 * dilation holes; values are quarters of small integers, so sums are exact). */
static float pool_ref(const float *x, const int64_t *id, const int64_t (*w)[5], bool add,
                      float init, const int64_t *o) {
  float acc = init;
  for (int64_t a = 0; a < w[1][0]; a++)
    for (int64_t b = 0; b < w[2][0]; b++) {
      int64_t t[2] = {o[1] * w[1][1] - w[1][2] + a, o[2] * w[2][1] - w[2][2] + b}, ix[2];
      bool in = true;
      for (int d = 0; d < 2; d++) {
        int64_t base = w[d + 1][4];
        in = in && t[d] >= 0 && t[d] % base == 0 && t[d] / base < id[d + 1];
        ix[d] = t[d] / base;
      }
      if (!in) continue;
      float v = x[((o[0] * id[1] + ix[0]) * id[2] + ix[1]) * id[3] + o[3]];
      acc = add ? acc + v : (v > acc ? v : acc);
    }
  return acc;
}

START_TEST(reduce_window_nhwc_pooling) {
  tl_begin();
  static const int64_t id[4] = {2, 11, 9, 40};
  static float x[2 * 11 * 9 * 40];
  uint64_t seed = 17;
  for (int i = 0; i < 2 * 11 * 9 * 40; i++) x[i] = (float)((int)(tl_lcg(&seed) >> 40) % 41 - 20) / 4;
  /* per case: dims 1 and 2 as {size, stride, pad_lo, pad_hi, base dilation} */
  static const int64_t cases[3][2][5] = {{{3, 2, 1, 1, 1}, {3, 2, 0, 1, 1}},
                                         {{3, 1, 1, 1, 1}, {2, 1, 1, 0, 1}},
                                         {{2, 2, 0, 1, 1}, {3, 2, 1, 1, 2}}};
  for (int c = 0; c < 3; c++)
    for (int add = 0; add < 2; add++) {
      int64_t w[3][5] = {{1, 1, 0, 0, 1}};
      int64_t od[4] = {id[0], 0, 0, id[3]};
      for (int d = 0; d < 2; d++) {
        memcpy(w[d + 1], cases[c][d], sizeof w[d + 1]);
        int64_t padded = (id[d + 1] - 1) * w[d + 1][4] + 1 + w[d + 1][2] + w[d + 1][3];
        od[d + 1] = (padded - w[d + 1][0]) / w[d + 1][1] + 1;
      }
      char text[1024];
      snprintf(text, sizeof text,
               "HloModule m\nf {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
               "  ROOT r = f32[] %s(a, b)\n}\nENTRY e {\n  x = f32[2,11,9,40] parameter(0)\n"
               "  i = f32[] constant(%s)\n"
               "  ROOT p = f32[2,%lld,%lld,40] reduce-window(x, i), window={size=1x%lldx%lldx1 "
               "stride=1x%lldx%lldx1 pad=0_0x%lld_%lldx%lld_%lldx0_0 lhs_dilate=1x%lldx%lldx1}, "
               "to_apply=f\n}\n",
               add ? "add" : "maximum", add ? "0.5" : "-inf", (long long)od[1], (long long)od[2],
               (long long)w[1][0], (long long)w[2][0], (long long)w[1][1], (long long)w[2][1],
               (long long)w[1][2], (long long)w[1][3], (long long)w[2][2], (long long)w[2][3],
               (long long)w[1][4], (long long)w[2][4]);
      const TlArray in[1] = {{HLO_TYPE_F32, 4, id, x}};
      for (int threads = 1; threads <= 3; threads++) {
        TlRun r = tl_run_arrays(threads, text, 1, in);
        const float *got = hlo_buffer_data(r.result);
        int64_t o[4], at = 0, bad = -1;
        float badw = 0;
        for (o[0] = 0; o[0] < od[0]; o[0]++)
          for (o[1] = 0; o[1] < od[1]; o[1]++)
            for (o[2] = 0; o[2] < od[2]; o[2]++)
              for (o[3] = 0; o[3] < od[3]; o[3]++, at++) {
                float want = pool_ref(x, id, (const int64_t(*)[5])w, add, add ? 0.5f : -INFINITY, o);
                if (bad < 0 && memcmp(&got[at], &want, 4) != 0) bad = at, badw = want;
              }
        ck_assert_msg(bad < 0, "case %d %s, %d threads: element %lld is %g, want %g", c,
                      add ? "add" : "max", threads, (long long)bad, bad < 0 ? 0.0 : (double)got[bad],
                      (double)badw);
        tl_run_done(&r);
      }
    }
  tl_end();
}
END_TEST

START_TEST(reduce_window_1d) {
  tl_begin();
  HloShape s5 = tl_shape(HLO_F32, 1, (int64_t[]){5});
  const float x[5] = {1, 3, 2, 5, 4};
  /* max-pool size 2 stride 2 pad 0_1: [1,3] [2,5] [4,pad] */
  expect_f32(rwin(&s5, x, HLO_OP_MAXIMUM, -INFINITY, 1, (const int64_t[][6]){{2, 2, 0, 1, 1, 1}},
                  (int64_t[]){3}),
             (float[]){3, 5, 4}, 3);
  /* window dilation 2, size 2: (x0,x2) (x1,x3) (x2,x4) summed */
  expect_f32(rwin(&s5, (float[]){1, 2, 3, 4, 5}, HLO_OP_ADD, 0, 1,
                  (const int64_t[][6]){{2, 1, 0, 0, 1, 2}}, (int64_t[]){3}),
             (float[]){4, 6, 8}, 3);
  /* base dilation 2 of [1,2,3] = 1 _ 2 _ 3; windows of 3: 1+2, 2, 2+3 */
  HloShape s3 = tl_shape(HLO_F32, 1, (int64_t[]){3});
  expect_f32(rwin(&s3, (float[]){1, 2, 3}, HLO_OP_ADD, 0, 1,
                  (const int64_t[][6]){{3, 1, 0, 0, 2, 1}}, (int64_t[]){3}),
             (float[]){3, 2, 5}, 3);
  /* padding 2_2, size 3, stride 3, init 10: windows [p,p,1] [2,3,p] -> 11, 15 */
  expect_f32(rwin(&s3, (float[]){1, 2, 3}, HLO_OP_ADD, 10, 1,
                  (const int64_t[][6]){{3, 3, 2, 2, 1, 1}}, (int64_t[]){2}),
             (float[]){11, 15}, 2);
  tl_end();
}
END_TEST

START_TEST(reduce_window_2d) {
  tl_begin();
  HloShape s = tl_shape(HLO_F32, 2, (int64_t[]){3, 3});
  const float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  /* 2x2 sums, stride 1 (avg-pool numerators) */
  expect_f32(rwin(&s, x, HLO_OP_ADD, 0, 2, (const int64_t[][6]){{2, 1, 0, 0, 1, 1}, {2, 1, 0, 0, 1, 1}},
                  (int64_t[]){2, 2}),
             (float[]){12, 16, 24, 28}, 4);
  /* 2x2 stride 2 pad 1_1: {1}, {2,3}, {4,7}, {5,6,8,9} */
  expect_f32(rwin(&s, x, HLO_OP_ADD, 0, 2, (const int64_t[][6]){{2, 2, 1, 1, 1, 1}, {2, 2, 1, 1, 1, 1}},
                  (int64_t[]){2, 2}),
             (float[]){1, 5, 11, 28}, 4);
  /* max 3x1 window with padding 1_1 in dim 0 and stride 2 in dim 1 */
  expect_f32(rwin(&s, x, HLO_OP_MAXIMUM, -INFINITY, 2,
                  (const int64_t[][6]){{3, 1, 1, 1, 1, 1}, {1, 2, 0, 0, 1, 1}}, (int64_t[]){3, 2}),
             (float[]){4, 6, 7, 9, 7, 9}, 6);
  tl_end();
}
END_TEST

/* ---- select-and-scatter ---- */

static HliValue *sas(const HloShape *s, const float *op, const HloShape *ss, const float *src,
                     HloCmpDir dir, int32_t rank, const int64_t (*w)[6]) {
  HloShape f = SCALAR(HLO_F32);
  HloInstr *ins = tl_instr(HLO_OP_SELECT_AND_SCATTER, *s, 3, tl_param(0, *s), tl_param(1, *ss),
                           tl_param(2, f));
  tl_window(ins, rank, w);
  tl_call(ins, HLO_CALL_SELECT, tl_cmp_comp(HLO_F32, 2, dir, HLO_CMPT_FLOAT));
  tl_call(ins, HLO_CALL_SCATTER, tl_binop(HLO_OP_ADD, HLO_F32));
  float zero = 0;
  HliValue *in[3] = {tl_value(s, op), tl_value(ss, src), tl_value(&f, &zero)};
  HliValue *out = tl_try_run(ins, in);
  for (int k = 0; k < 3; k++) hli_value_unref(NULL, in[k]);
  return out;
}

/* select-and-scatter written from its definition for f32[N,H,W,C] with a
 * 1xKxKx1 window (stride S, padding P on H and W) and scatter = add:
 * source elements in row-major order, each window scanned in row-major
 * order from its first valid position, a later position replacing the
 * candidate when select(candidate, current) is false. */
static void sas_reference(const float *op, const float *src, float *res, int N, int H, int W,
                          int C, int K, int S, int P, int OH, int OW, HloCmpDir dir) {
  for (int i = 0; i < N * H * W * C; i++) res[i] = 0;
  for (int b = 0; b < N; b++)
    for (int y = 0; y < OH; y++)
      for (int x = 0; x < OW; x++)
        for (int c = 0; c < C; c++) {
          int best = -1;
          for (int ky = 0; ky < K; ky++)
            for (int kx = 0; kx < K; kx++) {
              int iy = y * S - P + ky, ix = x * S - P + kx;
              if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
              int at = ((b * H + iy) * W + ix) * C + c;
              if (best < 0) { best = at; continue; }
              float a = op[best], v = op[at];
              bool keep = dir == HLO_CMP_GE ? a >= v : dir == HLO_CMP_GT ? a > v
                        : dir == HLO_CMP_LE ? a <= v : a < v;
              if (!keep) best = at;
            }
          res[best] += src[((b * OH + y) * OW + x) * C + c];
        }
}

/* NHWC pooling gradients (the feature window is one element: the kernel
 * compares a row of features at a time) against the definition, with many
 * ties and overlapping windows, for each select direction. */
START_TEST(select_and_scatter_nhwc_rows) {
  tl_begin();
  enum { N = 2, H = 5, W = 6, C = 7, K = 3, S = 2, P = 1, OH = 3, OW = 3 };
  static float op[N * H * W * C], src[N * OH * OW * C], want[N * H * W * C];
  for (int i = 0; i < N * H * W * C; i++) op[i] = (float)((i * 7) % 5);
  for (int i = 0; i < N * OH * OW * C; i++) src[i] = (float)(i + 1);
  HloShape s = tl_shape(HLO_F32, 4, (int64_t[]){N, H, W, C});
  HloShape ss = tl_shape(HLO_F32, 4, (int64_t[]){N, OH, OW, C});
  const HloCmpDir dirs[4] = {HLO_CMP_GE, HLO_CMP_GT, HLO_CMP_LE, HLO_CMP_LT};
  for (int d = 0; d < 4; d++) {
    sas_reference(op, src, want, N, H, W, C, K, S, P, OH, OW, dirs[d]);
    expect_f32(sas(&s, op, &ss, src, dirs[d], 4,
                   (const int64_t[][6]){{1, 1, 0, 0, 1, 1}, {K, S, P, P, 1, 1},
                                        {K, S, P, P, 1, 1}, {1, 1, 0, 0, 1, 1}}),
               want, N * H * W * C);
  }
  tl_end();
}
END_TEST

/* A pooling gradient over four batches, which threads take separately (no
 * window crosses the batch): on 1 to 3 threads, the definition's bits,
 * with fractional source values added in the definition's order. */
START_TEST(select_and_scatter_batches_threads) {
  tl_begin();
  enum { N = 4, H = 7, W = 6, C = 20, K = 3, S = 2, P = 1, OH = 4, OW = 3 };
  static float op[N * H * W * C], src[N * OH * OW * C], want[N * H * W * C];
  for (int i = 0; i < N * H * W * C; i++) op[i] = (float)((i * 7) % 5);
  for (int i = 0; i < N * OH * OW * C; i++) src[i] = (float)(i % 13) * 0.1f + 0.01f;
  sas_reference(op, src, want, N, H, W, C, K, S, P, OH, OW, HLO_CMP_GE);
  const char *text =
      "HloModule m\nge {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT c = pred[] compare(a, b), direction=GE\n}\n"
      "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
      "ENTRY e {\n  x = f32[4,7,6,20] parameter(0)\n  g = f32[4,4,3,20] parameter(1)\n"
      "  z = f32[] constant(0)\n"
      "  ROOT r = f32[4,7,6,20] select-and-scatter(x, g, z), window={size=1x3x3x1 "
      "stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, select=ge, scatter=add\n}\n";
  const TlArray in[2] = {{HLO_TYPE_F32, 4, (int64_t[]){N, H, W, C}, op},
                         {HLO_TYPE_F32, 4, (int64_t[]){N, OH, OW, C}, src}};
  for (int threads = 1; threads <= 3; threads++) {
    TlRun r = tl_run_arrays(threads, text, 2, in);
    ck_assert_msg(memcmp(hlo_buffer_data(r.result), want, sizeof want) == 0,
                  "%d threads: differs from the definition", threads);
    tl_run_done(&r);
  }
  tl_end();
}
END_TEST

START_TEST(select_and_scatter_maxpool_grad) {
  tl_begin();
  /* overlapping windows of 3, stride 1 over [1,5,2,5,3]: the maxima are at
   * 1, 1 (GE keeps the first of the tied 5s), 3 */
  HloShape s = tl_shape(HLO_F32, 1, (int64_t[]){5}), ss = tl_shape(HLO_F32, 1, (int64_t[]){3});
  expect_f32(sas(&s, (float[]){1, 5, 2, 5, 3}, &ss, (float[]){10, 20, 30}, HLO_CMP_GE, 1,
                 (const int64_t[][6]){{3, 1, 0, 0, 1, 1}}),
             (float[]){0, 30, 0, 30, 0}, 5);
  /* GT switches to a later equal element: the last tied 5 */
  expect_f32(sas(&s, (float[]){1, 5, 2, 5, 3}, &ss, (float[]){10, 20, 30}, HLO_CMP_GT, 1,
                 (const int64_t[][6]){{3, 1, 0, 0, 1, 1}}),
             (float[]){0, 10, 0, 50, 0}, 5);
  /* LE: min-pool */
  expect_f32(sas(&s, (float[]){1, 5, 2, 5, 3}, &ss, (float[]){10, 20, 30}, HLO_CMP_LE, 1,
                 (const int64_t[][6]){{3, 1, 0, 0, 1, 1}}),
             (float[]){10, 0, 50, 0, 0}, 5);
  /* 2-D 2x2 stride 2 on 4x4 with padding 1_1 on both dims: windows start at -1, 1, 3 */
  HloShape s4 = tl_shape(HLO_F32, 2, (int64_t[]){4, 4}), s3 = tl_shape(HLO_F32, 2, (int64_t[]){3, 3});
  float op[16];
  for (int i = 0; i < 16; i++) op[i] = (float)(i + 1);
  /* window (r, c) covers rows 2r-1..2r, cols 2c-1..2c; its max is at the
   * bottom-right valid element: rows {0,2,3}, cols {0,2,3} */
  float want[16] = {0};
  const float src[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const int rr[3] = {0, 2, 3}, cc[3] = {0, 2, 3};
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) want[rr[r] * 4 + cc[c]] += src[r * 3 + c];
  expect_f32(sas(&s4, op, &s3, src, HLO_CMP_GE, 2,
                 (const int64_t[][6]){{2, 2, 1, 1, 1, 1}, {2, 2, 1, 1, 1, 1}}),
             want, 16);
  tl_end();
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("reduce");
  TCase *r = tcase_create("reduce");
  tcase_add_test(r, reduce_sum_every_dim_subset);
  tcase_add_test(r, reduce_max_min_mul_int);
  tcase_add_test(r, reduce_float_max_nan_and_zero);
  tcase_add_test(r, reduce_extreme_every_position);
  tcase_add_test(r, reduce_empty_dims);
  tcase_add_test(r, reduce_f16_bf16);
  tcase_add_test(r, reduce_argmax_ties_nan);
  tcase_add_test(r, reduce_argmax_long_rows);
  tcase_add_test(r, reduce_variadic_independent);
  tcase_add_test(r, reduce_rejects_bad_shapes);
  tcase_add_test(r, reduce_leading_dims_integers);
  tcase_add_test(r, reduce_leading_dims_floats);
  tcase_add_test(r, reduce_long_runs);
  suite_add_tcase(s, r);
  TCase *w = tcase_create("reduce_window");
  tcase_add_test(w, reduce_window_1d);
  tcase_add_test(w, reduce_window_nhwc_pooling);
  tcase_add_test(w, reduce_window_2d);
  tcase_add_test(w, reduce_window_prefix_scans);
  suite_add_tcase(s, w);
  TCase *sc = tcase_create("select_and_scatter");
  tcase_add_test(sc, select_and_scatter_maxpool_grad);
  tcase_add_test(sc, select_and_scatter_nhwc_rows);
  tcase_add_test(sc, select_and_scatter_batches_threads);
  suite_add_tcase(s, sc);
  return s;
}

int main(void) { return tl_main(suite()); }
