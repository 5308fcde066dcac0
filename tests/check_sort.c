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

/* ---- long rows (the radix sorts) against a reference written here -------- */

typedef int (*RefLess)(const void *a, const void *b);
static int f32_lt(const void *a, const void *b) { return *(const float *)a < *(const float *)b; }
static int f64_lt(const void *a, const void *b) { return *(const double *)a < *(const double *)b; }
static int s32_lt(const void *a, const void *b) { return *(const int32_t *)a < *(const int32_t *)b; }
static int s8_gt(const void *a, const void *b) { return *(const int8_t *)a > *(const int8_t *)b; }
static int u16_lt(const void *a, const void *b) { return *(const uint16_t *)a < *(const uint16_t *)b; }
static float bf16_val(const void *a) {
  uint32_t u = (uint32_t)*(const uint16_t *)a << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static int bf16_lt(const void *a, const void *b) { return bf16_val(a) < bf16_val(b); }
/* IEEE totalOrder, from its definition: -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN. */
static int total_lt_f(float x, float y) {
  if (isnan(x) || isnan(y)) {
    int rx = isnan(x) ? (signbit(x) ? 0 : 2) : 1, ry = isnan(y) ? (signbit(y) ? 0 : 2) : 1;
    return rx < ry;
  }
  if (x != y) return x < y;
  return signbit(x) && !signbit(y);
}
static int f32_total_gt(const void *a, const void *b) {
  return total_lt_f(*(const float *)b, *(const float *)a);
}

/* compare(p0, p1) over (key, key, payload, payload) parameters. */
static HloComputation *key_payload_cmp(HloDtype t, HloCmpDir d, HloCmpType ct) {
  HloShape k = SCALAR(t), i = SCALAR(HLO_S32);
  HloInstr *p[4] = {tl_param(0, k), tl_param(1, k), tl_param(2, i), tl_param(3, i)};
  return tl_comp(4, p, tl_cmp(d, ct, p[0], p[1]));
}

/* Sorts n keys of type t (es bytes) with a payload of positions, by the
 * comparator (dir, ctype), and checks keys and payload against a stable
 * insertion sort by `less`. */
static void check_long_sort(HloDtype t, size_t es, const void *keys, int64_t n, HloCmpDir dir,
                            HloCmpType ct, RefLess less) {
  HloShape s[2] = {tl_shape(t, 1, (int64_t[]){n}), tl_shape(HLO_S32, 1, (int64_t[]){n})};
  int32_t *pos = malloc((size_t)n * 4), *want = malloc((size_t)n * 4);
  for (int64_t i = 0; i < n; i++) pos[i] = want[i] = (int32_t)i;
  const char *kb = keys;
  for (int64_t i = 1; i < n; i++) {   /* stable: move only past strictly greater */
    int32_t v = want[i];
    int64_t j = i;
    while (j > 0 && less(kb + (size_t)v * es, kb + (size_t)want[j - 1] * es)) {
      want[j] = want[j - 1];
      j--;
    }
    want[j] = v;
  }
  HliValue *in[2] = {tl_value(&s[0], keys), tl_value(&s[1], pos)};
  HliValue *o = sortk(2, s, in, 0, key_payload_cmp(t, dir, ct));
  ck_assert_msg(o != NULL, "type %d: %s", (int)t, hli_last_error());
  const char *gk = o->tuple[0]->data;
  const int32_t *gp = o->tuple[1]->data;
  for (int64_t i = 0; i < n; i++) {
    ck_assert_msg(gp[i] == want[i], "type %d position %lld: payload %d, want %d", (int)t,
                  (long long)i, gp[i], want[i]);
    ck_assert(memcmp(gk + (size_t)i * es, kb + (size_t)want[i] * es, es) == 0);
  }
  hli_value_unref(NULL, o);
  hli_value_unref(NULL, in[0]);
  hli_value_unref(NULL, in[1]);
  free(pos);
  free(want);
}

START_TEST(sort_long_rows_match_reference) {
  tl_begin();
  enum { N = 1000 };
  static float f[N], ft[N];
  static double d[N];
  static int32_t i32[N];
  static int8_t i8[300];
  static uint16_t u16[N], bf[N];
  for (int i = 0; i < N; i++) {
    int r = (i * 7919) % 61 - 30;                       /* many ties, both signs */
    f[i] = r == 0 && i % 2 ? -0.0f : (float)r * 0.25f;  /* -0 and +0 tie under LT */
    ft[i] = (float)r * 1.5f;
    d[i] = (double)((i * 104729) % 997 - 498) * 1e-3;
    i32[i] = (i * 2654435761u) % 3 == 0 ? INT32_MIN + i : (int32_t)((i * 40503u) % 20011) - 10005;
    u16[i] = (uint16_t)((i * 60013u) % 65536);
    float b = (float)((i * 31) % 83 - 41) * 0.5f;
    uint32_t u;
    memcpy(&u, &b, 4);
    bf[i] = (uint16_t)(u >> 16);   /* exact: these values have few mantissa bits */
  }
  ft[10] = NAN; ft[20] = -NAN; ft[30] = INFINITY; ft[40] = -INFINITY; ft[50] = 0.0f; ft[60] = -0.0f;
  i32[7] = INT32_MAX;
  for (int i = 0; i < 300; i++) i8[i] = (int8_t)((i * 37) % 256 - 128);
  check_long_sort(HLO_F32, 4, f, N, HLO_CMP_LT, HLO_CMPT_FLOAT, f32_lt);
  check_long_sort(HLO_F32, 4, ft, N, HLO_CMP_GT, HLO_CMPT_TOTALORDER, f32_total_gt);
  check_long_sort(HLO_F64, 8, d, N, HLO_CMP_LT, HLO_CMPT_FLOAT, f64_lt);
  check_long_sort(HLO_S32, 4, i32, N, HLO_CMP_LT, HLO_CMPT_SIGNED, s32_lt);
  check_long_sort(HLO_S8, 1, i8, 300, HLO_CMP_GT, HLO_CMPT_SIGNED, s8_gt);
  check_long_sort(HLO_U16, 2, u16, N, HLO_CMP_LT, HLO_CMPT_UNSIGNED, u16_lt);
  check_long_sort(HLO_BF16, 2, bf, N, HLO_CMP_LT, HLO_CMPT_FLOAT, bf16_lt);
  tl_end();
}
END_TEST

/* One f32 operand sorted alone (no payload), by (dir, ctype) or by the
 * computation c when given: the bits of a stable insertion sort by less.
 * Rows whose keys are all distinct per bit pattern sort the keys alone;
 * the others (-0 beside +0, NaNs under FLOAT or canonicalised) take the
 * (key, position) path: the same answer. */
static void check_alone_sort(const float *keys, int64_t n, HloCmpDir dir, HloCmpType ct,
                             HloComputation *c, RefLess less, const char *what) {
  HloShape s = tl_shape(HLO_F32, 1, (int64_t[]){n});
  float *want = malloc((size_t)n * 4);
  memcpy(want, keys, (size_t)n * 4);
  for (int64_t i = 1; i < n; i++) {
    float v = want[i];
    int64_t j = i;
    while (j > 0 && less(&v, &want[j - 1])) {
      want[j] = want[j - 1];
      j--;
    }
    want[j] = v;
  }
  HliValue *in[1] = {tl_value(&s, keys)};
  HliValue *o = sortk(1, &s, in, 0, c ? c : tl_cmp_comp(HLO_F32, 2, dir, ct));
  ck_assert_msg(o != NULL, "%s: %s", what, hli_last_error());
  const float *got = o->data;
  for (int64_t i = 0; i < n; i++)
    ck_assert_msg(bits(got[i]) == bits(want[i]), "%s: element %lld is %08x, want %08x", what,
                  (long long)i, bits(got[i]), bits(want[i]));
  hli_value_unref(NULL, o);
  hli_value_unref(NULL, in[0]);
  free(want);
}
static int f32_gt(const void *a, const void *b) { return *(const float *)a > *(const float *)b; }
/* TOTALORDER as XLA compares: the bit patterns as sign-magnitude integers
 * (so NaNs order by payload too). */
static int32_t total_key(float f) {
  int32_t v;
  memcpy(&v, &f, 4);
  return v < 0 ? (int32_t)(0x80000000u - (uint32_t)v) - 1 : v;
}
static int f32_total_bits_gt(const void *a, const void *b) {
  return total_key(*(const float *)a) > total_key(*(const float *)b);
}
static int f32_canon_lt(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  x = x == 0 ? 0.0f : isnan(x) ? NAN : x;
  y = y == 0 ? 0.0f : isnan(y) ? NAN : y;
  return total_lt_f(x, y);
}

START_TEST(sort_f32_alone_matches_reference) {
  tl_begin();
  enum { N = 700 };
  static float r[N], z[N], t[N];
  for (int i = 0; i < N; i++) {
    int v = (i * 7919) % 211 - 105;   /* ties, both signs */
    r[i] = (float)v * 0.37f;
    z[i] = v == 0 ? (i % 2 ? -0.0f : 0.0f) : r[i];
    t[i] = r[i];
  }
  r[5] = INFINITY; r[6] = -INFINITY; r[7] = 1e-40f; r[8] = -1e-40f;   /* subnormals too */
  uint32_t pay = 0x7fc00005u;
  memcpy(&t[30], &pay, 4);
  t[10] = NAN; t[20] = -NAN; t[40] = 0.0f; t[50] = -0.0f;
  check_alone_sort(r, N, HLO_CMP_LT, HLO_CMPT_FLOAT, NULL, f32_lt, "FLOAT LT, distinct keys");
  check_alone_sort(r, N, HLO_CMP_GT, HLO_CMPT_FLOAT, NULL, f32_gt, "FLOAT GT, distinct keys");
  check_alone_sort(z, N, HLO_CMP_LT, HLO_CMPT_FLOAT, NULL, f32_lt, "FLOAT LT, -0 and +0");
  check_alone_sort(t, N, HLO_CMP_GT, HLO_CMPT_TOTALORDER, NULL, f32_total_bits_gt, "TOTALORDER GT");
  check_alone_sort(t, N, HLO_CMP_LT, HLO_CMPT_FLOAT, canon_cmp(), f32_canon_lt, "canonicalising");
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
  tcase_add_test(t, sort_long_rows_match_reference);
  tcase_add_test(t, sort_f32_alone_matches_reference);
  suite_add_tcase(s, t);
  TCase *k = tcase_create("topk");
  tcase_add_test(k, topk_ties_and_nan);
  suite_add_tcase(s, k);
  return s;
}

int main(void) { return tl_main(suite()); }
