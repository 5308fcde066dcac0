/* check_sort.c: sort and topk kernels on hand-built instructions; expected
 * orders worked out by hand from XLA's comparison semantics. */
#include "tests/testlib.h"
#include "interp/kernels/reducer.h"

static uint32_t bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

/* sort(ops...) along dim with comparator c; returns the output value. */
static HliValue *sortk(int32_t k, const HloShape *s, HliValue **in, int64_t dim,
                       HloComputation *c) {
  HloShape os[4];
  for (int32_t i = 0; i < k; i++) os[i] = s[i];
  HloInstr *ins = tl_instr(HLO_OP_SORT, k == 1 ? s[0] : tl_tuple(k, os), 0);
  ins->nops = k;
  ins->ops = hlc_arena_alloc(&tl_arena, sizeof(HloInstr *) * (size_t)k);
  for (int32_t i = 0; i < k; i++) ins->ops[i] = tl_param(i, s[i]);
  tl_dims(ins, 1, &dim);
  ins->is_stable = true;
  tl_call(ins, HLO_CALL_TO_APPLY, c);
  return tl_try_run(ins, in);
}

/* JAX's canonicalising comparator: -0 -> 0, NaN -> NaN, then TOTALORDER LT. */
static HloComputation *canon_cmp(void) {
  HloShape f = SCALAR(HLO_F32);
  HloInstr *p[2] = {tl_param(0, f), tl_param(1, f)};
  HloInstr *cv[2];
  for (int k = 0; k < 2; k++) {
    HloInstr *eq = tl_cmp(HLO_CMP_EQ, HLO_CMPT_FLOAT, p[k], tl_const_f32(0));
    HloInstr *z = tl_instr(HLO_OP_SELECT, f, 3, eq, tl_const_f32(0), p[k]);
    HloInstr *ne = tl_cmp(HLO_CMP_NE, HLO_CMPT_FLOAT, p[k], p[k]);
    cv[k] = tl_instr(HLO_OP_SELECT, f, 3, ne, tl_const_f32(NAN), z);
  }
  return tl_comp(2, p, tl_cmp(HLO_CMP_LT, HLO_CMPT_TOTALORDER, cv[0], cv[1]));
}

START_TEST(sort_totalorder_nan_zero) {
  tl_begin();
  HloShape s = tl_shape(HLO_F32, 1, (int64_t[]){7});
  float v[7] = {3, -0.0f, NAN, -INFINITY, 0.0f, -NAN, 1};
  HliValue *in[1] = {tl_value(&s, v)};
  HliValue *o = sortk(1, &s, in, 0, tl_cmp_comp(HLO_F32, 2, HLO_CMP_LT, HLO_CMPT_TOTALORDER));
  ck_assert_ptr_nonnull(o);
  const float *g = o->data;
  /* -NaN < -inf < -0 < +0 < 1 < 3 < +NaN */
  ck_assert(isnan(g[0]) && signbit(g[0]));
  ck_assert(g[1] == -INFINITY);
  ck_assert_uint_eq(bits(g[2]), 0x80000000u);
  ck_assert_uint_eq(bits(g[3]), 0);
  ck_assert(g[4] == 1 && g[5] == 3);
  ck_assert(isnan(g[6]) && !signbit(g[6]));
  hli_value_unref(NULL, o);
  /* descending (GT) is the exact reverse here (no ties) */
  o = sortk(1, &s, in, 0, tl_cmp_comp(HLO_F32, 2, HLO_CMP_GT, HLO_CMPT_TOTALORDER));
  g = o->data;
  ck_assert(isnan(g[0]) && !signbit(g[0]) && g[1] == 3 && bits(g[3]) == 0);
  ck_assert(bits(g[4]) == 0x80000000u && g[5] == -INFINITY && isnan(g[6]));
  hli_value_unref(NULL, o);
  hli_value_unref(NULL, in[0]);
  tl_end();
}
END_TEST

START_TEST(sort_canonical_comparator) {
  tl_begin();
  HloComputation *c = canon_cmp();
  HlkComparator m;
  ck_assert(hlk_match_comparator(c, 1, &m) && m.kind == HLK_CMP_CANON && !m.descending);
  HloShape s = tl_shape(HLO_F32, 1, (int64_t[]){6});
  float v[6] = {0.0f, NAN, -0.0f, 1, -NAN, -1};
  HliValue *in[1] = {tl_value(&s, v)};
  HliValue *o = sortk(1, &s, in, 0, c);
  ck_assert_ptr_nonnull(o);
  const float *g = o->data;
  /* zeros are equal (input order kept: +0 then -0); every NaN sorts last,
   * in input order (NaN then -NaN) */
  ck_assert(g[0] == -1 && bits(g[1]) == 0 && bits(g[2]) == 0x80000000u && g[3] == 1);
  ck_assert(isnan(g[4]) && !signbit(g[4]) && isnan(g[5]) && signbit(g[5]));
  hli_value_unref(NULL, o);
  hli_value_unref(NULL, in[0]);
  tl_end();
}
END_TEST

START_TEST(sort_float_compare_zeros_equal) {
  tl_begin();
  /* FLOAT LT: -0 and +0 compare equal, so the stable order keeps them as given */
  HloShape s = tl_shape(HLO_F32, 1, (int64_t[]){4});
  HliValue *in[1] = {tl_value(&s, (float[]){0.0f, -2, -0.0f, -1})};
  HliValue *o = sortk(1, &s, in, 0, tl_cmp_comp(HLO_F32, 2, HLO_CMP_LT, HLO_CMPT_FLOAT));
  const float *g = o->data;
  ck_assert(g[0] == -2 && g[1] == -1 && bits(g[2]) == 0 && bits(g[3]) == 0x80000000u);
  hli_value_unref(NULL, o);
  hli_value_unref(NULL, in[0]);
  tl_end();
}
END_TEST

/* compare(p0, p1) over (s32 key pair, f32 value pair) */
static HloComputation *key_value_cmp(HloCmpDir d) {
  HloShape i = SCALAR(HLO_S32), f = SCALAR(HLO_F32);
  HloInstr *p[4] = {tl_param(0, i), tl_param(1, i), tl_param(2, f), tl_param(3, f)};
  return tl_comp(4, p, tl_cmp(d, HLO_CMPT_SIGNED, p[0], p[1]));
}

START_TEST(sort_variadic_stable_ties) {
  tl_begin();
  HloShape s[2] = {tl_shape(HLO_S32, 1, (int64_t[]){5}), tl_shape(HLO_F32, 1, (int64_t[]){5})};
  HliValue *in[2] = {tl_value(&s[0], (int32_t[]){3, 1, 2, 1, 3}), tl_value(&s[1], (float[]){30, 10, 20, 11, 31})};
  HliValue *o = sortk(2, s, in, 0, key_value_cmp(HLO_CMP_LT));
  ck_assert_ptr_nonnull(o);
  const int32_t *k = o->tuple[0]->data;
  const float *v = o->tuple[1]->data;
  ck_assert(k[0] == 1 && k[1] == 1 && k[2] == 2 && k[3] == 3 && k[4] == 3);
  ck_assert(v[0] == 10 && v[1] == 11 && v[2] == 20 && v[3] == 30 && v[4] == 31);
  hli_value_unref(NULL, o);
  /* descending keeps equal keys in input order too */
  o = sortk(2, s, in, 0, key_value_cmp(HLO_CMP_GT));
  v = o->tuple[1]->data;
  ck_assert(v[0] == 30 && v[1] == 31 && v[2] == 20 && v[3] == 10 && v[4] == 11);
  hli_value_unref(NULL, o);
  hli_value_unref(NULL, in[0]);
  hli_value_unref(NULL, in[1]);
  tl_end();
}
END_TEST

START_TEST(sort_along_dim0_and_unsigned) {
  tl_begin();
  /* u8[3,2] sorted along dim 0: columns {200, 3, 7} and {1, 255, 0} */
  HloShape s = tl_shape(HLO_U8, 2, (int64_t[]){3, 2});
  HliValue *in[1] = {tl_value(&s, (uint8_t[]){200, 1, 3, 255, 7, 0})};
  HliValue *o = sortk(1, &s, in, 0, tl_cmp_comp(HLO_U8, 2, HLO_CMP_LT, HLO_CMPT_UNSIGNED));
  const uint8_t *g = o->data;
  ck_assert(g[0] == 3 && g[2] == 7 && g[4] == 200 && g[1] == 0 && g[3] == 1 && g[5] == 255);
  hli_value_unref(NULL, o);
  hli_value_unref(NULL, in[0]);
  /* a long row (beyond one insertion run): merge must keep stability */
  HloShape l[2] = {tl_shape(HLO_S32, 1, (int64_t[]){100}), tl_shape(HLO_S32, 1, (int64_t[]){100})};
  int32_t key[100], pos[100];
  for (int i = 0; i < 100; i++) { key[i] = (i * 37) % 10; pos[i] = i; }
  HliValue *in2[2] = {tl_value(&l[0], key), tl_value(&l[1], pos)};
  o = sortk(2, l, in2, 0, tl_cmp_comp(HLO_S32, 4, HLO_CMP_LT, HLO_CMPT_SIGNED));
  const int32_t *k = o->tuple[0]->data, *p = o->tuple[1]->data;
  for (int i = 1; i < 100; i++) {
    ck_assert_int_le(k[i - 1], k[i]);
    if (k[i - 1] == k[i]) ck_assert_int_lt(p[i - 1], p[i]);
  }
  ck_assert_int_eq(k[0], 0);
  ck_assert_int_eq(p[0], 0);
  hli_value_unref(NULL, o);
  hli_value_unref(NULL, in2[0]);
  hli_value_unref(NULL, in2[1]);
  tl_end();
}
END_TEST

START_TEST(sort_comparator_matcher) {
  tl_begin();
  HlkComparator m;
  /* compare(p1, p0) LT sorts descending */
  HloShape f = SCALAR(HLO_F32);
  HloInstr *p[2] = {tl_param(0, f), tl_param(1, f)};
  HloComputation *rev = tl_comp(2, p, tl_cmp(HLO_CMP_LT, HLO_CMPT_DEFAULT, p[1], p[0]));
  ck_assert(hlk_match_comparator(rev, 1, &m) && m.kind == HLK_CMP_PLAIN && m.descending &&
            m.type == HLO_CMPT_FLOAT);
  /* LE is not a strict order: not recognised */
  ck_assert(!hlk_match_comparator(tl_cmp_comp(HLO_F32, 2, HLO_CMP_LE, HLO_CMPT_FLOAT), 1, &m));
  /* wrong parameter count for 2 operands */
  ck_assert(!hlk_match_comparator(tl_cmp_comp(HLO_F32, 2, HLO_CMP_LT, HLO_CMPT_FLOAT), 2, &m));
  tl_end();
}
END_TEST

static HliValue *topk(const HloShape *s, const void *data, int64_t k, bool largest) {
  int64_t od[4];
  for (int32_t d = 0; d < s->rank; d++) od[d] = s->dims[d];
  od[s->rank - 1] = k;
  HloShape os[2] = {tl_shape(s->dtype, s->rank, od), tl_shape(HLO_S32, s->rank, od)};
  HloInstr *ins = tl_instr(HLO_OP_TOPK, tl_tuple(2, os), 1, tl_param(0, *s));
  ins->k = k;
  ins->largest = largest;
  HliValue *in[1] = {tl_value(s, data)};
  HliValue *o = tl_try_run(ins, in);
  hli_value_unref(NULL, in[0]);
  return o;
}

START_TEST(topk_ties_and_nan) {
  tl_begin();
  HloShape s = tl_shape(HLO_F32, 1, (int64_t[]){4});
  HliValue *o = topk(&s, (float[]){1, 3, 3, 2}, 2, true);
  ck_assert_ptr_nonnull(o);
  const float *v = o->tuple[0]->data;
  const int32_t *i = o->tuple[1]->data;
  ck_assert(v[0] == 3 && v[1] == 3 && i[0] == 1 && i[1] == 2);   /* ties: lower index first */
  hli_value_unref(NULL, o);
  o = topk(&s, (float[]){1, 3, 3, 2}, 3, false);
  v = o->tuple[0]->data;
  i = o->tuple[1]->data;
  ck_assert(v[0] == 1 && v[1] == 2 && v[2] == 3 && i[0] == 0 && i[1] == 3 && i[2] == 1);
  hli_value_unref(NULL, o);
  /* rows of a 2-D s32 input; NaN is the largest float */
  HloShape m = tl_shape(HLO_S32, 2, (int64_t[]){2, 3});
  o = topk(&m, (int32_t[]){5, -1, 5, 0, 9, -4}, 1, true);
  i = o->tuple[1]->data;
  ck_assert(((int32_t *)o->tuple[0]->data)[0] == 5 && i[0] == 0);
  ck_assert(((int32_t *)o->tuple[0]->data)[1] == 9 && i[1] == 1);
  hli_value_unref(NULL, o);
  HloShape s3 = tl_shape(HLO_F32, 1, (int64_t[]){3});
  o = topk(&s3, (float[]){1, NAN, 2}, 1, true);
  ck_assert(isnan(((float *)o->tuple[0]->data)[0]) && ((int32_t *)o->tuple[1]->data)[0] == 1);
  hli_value_unref(NULL, o);
  tl_end();
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("sort");
  TCase *t = tcase_create("sort");
  tcase_add_test(t, sort_totalorder_nan_zero);
  tcase_add_test(t, sort_canonical_comparator);
  tcase_add_test(t, sort_float_compare_zeros_equal);
  tcase_add_test(t, sort_variadic_stable_ties);
  tcase_add_test(t, sort_along_dim0_and_unsigned);
  tcase_add_test(t, sort_comparator_matcher);
  suite_add_tcase(s, t);
  TCase *k = tcase_create("topk");
  tcase_add_test(k, topk_ties_and_nan);
  suite_add_tcase(s, k);
  return s;
}

int main(void) { return tl_main(suite()); }
