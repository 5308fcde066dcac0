/* check_diverge.c: the comparison engine's library side: distances in
 * representable values (hli_ulp_distance) on every kind of float layout, and
 * hlo_compare_runs splitting a comparison into parts when the memory budget
 * cannot hold every reference value (the same divergence is found), plus its
 * parameter check. Expected values are worked out by hand in the comments. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "hlorun.h"
#include "interp/diverge.h"
#include "tests/testlib.h"

static uint64_t f32_bits(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }

START_TEST(ulp_distances) {
  /* f32: 1 and the next float up; +0 and -0; the smallest subnormals on
   * both sides of zero (two apart: -s, 0, s); the largest float and 1 below. */
  ck_assert_uint_eq(hli_ulp_distance(HLO_F32, f32_bits(1.0f), f32_bits(nextafterf(1.0f, 2.0f))), 1);
  ck_assert_uint_eq(hli_ulp_distance(HLO_F32, f32_bits(0.0f), f32_bits(-0.0f)), 0);
  ck_assert_uint_eq(hli_ulp_distance(HLO_F32, 0x00000001u, 0x80000001u), 2);
  ck_assert_uint_eq(hli_ulp_distance(HLO_F32, 0x7f7fffffu, 0x7f7ffffeu), 1);
  /* 1 and 2 are 2^23 f32 values apart (one binade). */
  ck_assert_uint_eq(hli_ulp_distance(HLO_F32, f32_bits(1.0f), f32_bits(2.0f)), 1u << 23);
  /* f64: -1 and 1 are 2 * 0x3ff0000000000000 apart. */
  ck_assert_uint_eq(hli_ulp_distance(HLO_F64, 0xbff0000000000000ull, 0x3ff0000000000000ull),
                    2 * 0x3ff0000000000000ull);
  /* f16 1.0 = 0x3c00, bf16 1.0 = 0x3f80: the next value up is 1 away. */
  ck_assert_uint_eq(hli_ulp_distance(HLO_F16, 0x3c00, 0x3c01), 1);
  ck_assert_uint_eq(hli_ulp_distance(HLO_BF16, 0x3f80, 0x3f7f), 1);
  /* f8e4m3fn: 0x38 (1.0) and 0xb8 (-1.0): 0x38 from zero on each side. */
  ck_assert_uint_eq(hli_ulp_distance(HLO_F8E4M3FN, 0x38, 0xb8), 2 * 0x38);
  /* f4e2m1fn (4 bits, sign bit 3): 0x1 (0.5) and 0x9 (-0.5) are 2 apart. */
  ck_assert_uint_eq(hli_ulp_distance(HLO_F4E2M1FN, 0x1, 0x9), 2);
  /* f8e8m0fnu has no sign: powers of two, one apart per exponent step. */
  ck_assert_uint_eq(hli_ulp_distance(HLO_F8E8M0FNU, 0x7f, 0x81), 2);
}
END_TEST

/* hli_compare_values compares 4096-byte blocks with memcmp before the
 * element loop (1024 f32 elements a block): differences on both sides of a
 * block edge and in the short last block are all found, in order, and
 * bytes that differ but pass (-0 against +0) or bytes equal but the values
 * not (f16 against bf16) follow the element rules. */
static HliValue *v_of(HloBuffer *b) { return b->v; }

START_TEST(blocks_compare_like_elements) {
  HloCtx *ctx;
  ck_assert_int_eq(hlo_ctx_new(NULL, &ctx), HLO_OK);
  enum { N = 2500 };
  static float g[N], w[N];
  for (int i = 0; i < N; i++) g[i] = w[i] = (float)i * 0.5f;
  g[7] = w[7] = NAN;         /* the same NaN: matches */
  g[9] = -0.0f;              /* -0 against +0: other bytes, equal values */
  w[9] = 0.0f;
  g[1023] += 1;              /* the last element of block 0 */
  g[1024] += 1;              /* the first of block 1 */
  g[N - 1] += 1;             /* the last of the short block 2 */
  HloBuffer *bg, *bw;
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_F32, (int64_t[]){N}, 1, g, &bg), HLO_OK);
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_F32, (int64_t[]){N}, 1, w, &bw), HLO_OK);
  HloCompareOptions o = {sizeof o, -1, -1, 0, 0};
  HliCompareSummary sum;
  ck_assert_int_eq(hli_compare_values(v_of(bg), v_of(bw), &o, 5, &sum, NULL), 0);
  /* |1 - 0| = 1 > 1e-4 + 1e-4 * w: three differ; the first at [1023]. */
  ck_assert_int_eq(sum.bad, 3);
  ck_assert_int_eq(sum.total, N);
  ck_assert_str_eq(sum.first_at, "[1023]");
  /* Equal values throughout: nothing differs, every element counted. */
  ck_assert_int_eq(hli_compare_values(v_of(bw), v_of(bw), &o, 5, &sum, NULL), 0);
  ck_assert_int_eq(sum.bad, 0);
  ck_assert_int_eq(sum.total, N);
  /* rtol = inf: equal values pass whatever the tolerance (0 against 0 too,
   * where atol + inf * |0| is NaN), and any finite error passes where w is
   * not 0: g against w has no difference left. Against zeros only g's zeros
   * pass ([0], and -0 at [9]); the NaN at [7] and every nonzero element
   * fail (|g| <= 1e-4 + NaN is false, as numpy's isclose says). */
  o.rtol = INFINITY;
  ck_assert_int_eq(hli_compare_values(v_of(bw), v_of(bw), &o, 5, &sum, NULL), 0);
  ck_assert_int_eq(sum.bad, 0);
  ck_assert_int_eq(hli_compare_values(v_of(bg), v_of(bw), &o, 5, &sum, NULL), 0);
  ck_assert_int_eq(sum.bad, 0);
  static float z[N];
  HloBuffer *bz;
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_F32, (int64_t[]){N}, 1, z, &bz), HLO_OK);
  ck_assert_int_eq(hli_compare_values(v_of(bg), v_of(bz), &o, 5, &sum, NULL), 0);
  ck_assert_int_eq(sum.bad, N - 2);
  o.rtol = -1;
  hlo_buffer_free(bz);
  hlo_buffer_free(bg);
  hlo_buffer_free(bw);

  /* f16 0x3c00 is 1, bf16 0x3c00 is 2^-7: equal bytes, values 0.9921875
   * apart (f16's tolerance: 5e-3 + 5e-3 * 2^-7 is less). */
  uint16_t h[3] = {0x3c00, 0x3c00, 0x3c00};
  HloBuffer *b16, *bb16;
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_F16, (int64_t[]){3}, 1, h, &b16), HLO_OK);
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_BF16, (int64_t[]){3}, 1, h, &bb16), HLO_OK);
  ck_assert_int_eq(hli_compare_values(v_of(b16), v_of(bb16), &o, 5, &sum, NULL), 0);
  ck_assert_int_eq(sum.bad, 3);
  ck_assert_int_eq(sum.total, 3);
  hlo_buffer_free(b16);
  hlo_buffer_free(bb16);
  hlo_ctx_free(ctx);
}
END_TEST

static const char loop_ok[] =
    "HloModule loop_ok\n"
    "body {\n"
    "  p = (s32[], f32[4]) parameter(0)\n"
    "  i = s32[] get-tuple-element(p), index=0\n"
    "  x = f32[4] get-tuple-element(p), index=1\n"
    "  two = f32[] constant(2)\n"
    "  f = f32[4] broadcast(two), dimensions={}\n"
    "  y = f32[4] multiply(x, f)\n"
    "  one = s32[] constant(1)\n"
    "  next = s32[] add(i, one)\n"
    "  ROOT t = (s32[], f32[4]) tuple(next, y)\n"
    "}\n"
    "cond {\n"
    "  p = (s32[], f32[4]) parameter(0)\n"
    "  i = s32[] get-tuple-element(p), index=0\n"
    "  four = s32[] constant(4)\n"
    "  ROOT lt = pred[] compare(i, four), direction=LT\n"
    "}\n"
    "ENTRY main {\n"
    "  x0 = f32[4] parameter(0)\n"
    "  zero = s32[] constant(0)\n"
    "  init = (s32[], f32[4]) tuple(zero, x0)\n"
    "  loop = (s32[], f32[4]) while(init), condition=cond, body=body\n"
    "  ROOT r = f32[4] get-tuple-element(loop), index=1\n"
    "}\n";

/* loop_ok with y = x * 3 on iteration 2 (i == 2) only. */
static char *loop_bad(void) {
  const char *from = "  y = f32[4] multiply(x, f)\n";
  const char *to =
      "  three = f32[] constant(3)\n"
      "  k = s32[] constant(2)\n"
      "  hit = pred[] compare(i, k), direction=EQ\n"
      "  f3 = f32[4] broadcast(three), dimensions={}\n"
      "  g = f32[4] select(hit, f3, f)\n"
      "  y = f32[4] multiply(x, g)\n";
  const char *at = strstr(loop_ok, from);
  size_t head = (size_t)(at - loop_ok);
  char *s = malloc(sizeof loop_ok + strlen(to));
  memcpy(s, loop_ok, head);
  strcpy(s + head, to);
  strcat(s, at + strlen(from));
  return s;
}

static HloModule *parse(HloCtx *ctx, const char *text) {
  HloModule *m = NULL;
  ck_assert_int_eq(hlo_module_parse(ctx, text, strlen(text), "t.hlo", &m), HLO_OK);
  return m;
}

START_TEST(parts_find_the_same_divergence) {
  HloCtx *ctx;
  ck_assert_int_eq(hlo_ctx_new(NULL, &ctx), HLO_OK);
  char *bad = loop_bad();
  HloModule *m = parse(ctx, bad), *ref = parse(ctx, loop_ok);
  float x[4] = {1, 2, 3, 4};
  HloBuffer *in;
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_F32, (int64_t[]){4}, 1, x, &in), HLO_OK);
  /* budget 0: one part. 1 byte: every part holds one reference value; the
   * reference's compared values are y and next 4 times each, lt 5 times and
   * the loop once: 14 parts. Both name y on iteration 2: {12,24,36,48}
   * against {8,16,24,32}, largest error 16 at [3]. */
  uint64_t budgets[2] = {0, 1};
  int runs[2] = {1, 14};
  for (int k = 0; k < 2; k++) {
    HloDivergenceOptions o = {.struct_size = sizeof o, .memory_budget = budgets[k]};
    HloDivergence *d = NULL;
    ck_assert_int_eq(hlo_compare_runs(ctx, m, ref, &in, 1, &o, &d), HLO_OK);
    ck_assert_int_eq(d->runs, runs[k]);
    ck_assert_int_eq(d->found, 1);
    ck_assert_str_eq(hlo_instruction_name(d->instruction), "y");
    ck_assert_str_eq(hlo_instruction_name(d->counterpart), "y");
    ck_assert_int_eq(d->iteration, 2);
    ck_assert_int_eq(d->call, -1);
    ck_assert_int_eq(d->mismatches, 4);
    ck_assert_int_eq(d->elements, 4);
    ck_assert_double_eq(d->max_abs_error, 16);
    ck_assert_str_eq(d->max_abs_at, "[3]");
    /* Results: x * 24 against x * 16, every element. */
    ck_assert_int_eq(d->result_mismatches, 4);
    ck_assert_ptr_nonnull(d->result_report);
    ck_assert_int_eq(d->paired, 4);      /* y, next, lt, loop */
    ck_assert_int_eq(d->unpaired, 2);    /* hit and g (f3 broadcasts a constant:
                                            not compared, not counted) */
    hlo_divergence_free(d);
  }
  /* The module against itself in parts: none, and every value compared. */
  HloDivergenceOptions o = {.struct_size = sizeof o, .memory_budget = 1};
  HloDivergence *d = NULL;
  ck_assert_int_eq(hlo_compare_runs(ctx, ref, ref, &in, 1, &o, &d), HLO_OK);
  ck_assert_int_eq(d->found, 0);
  ck_assert_int_eq(d->values_compared, 14);
  ck_assert_int_eq(d->result_mismatches, 0);
  ck_assert_str_eq(d->line, "first divergence: none");
  hlo_divergence_free(d);
  hlo_buffer_free(in);
  hlo_module_free(m);
  hlo_module_free(ref);
  free(bad);
  hlo_ctx_free(ctx);
}
END_TEST

START_TEST(parameters_checked_first) {
  HloCtx *ctx;
  ck_assert_int_eq(hlo_ctx_new(NULL, &ctx), HLO_OK);
  HloModule *m = parse(ctx, "HloModule a\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT n = f32[2] negate(x)\n}\n");
  HloModule *r = parse(ctx, "HloModule b\nENTRY e {\n  x = f32[3] parameter(0)\n  ROOT n = f32[3] negate(x)\n}\n");
  float v[2] = {1, 2};
  HloBuffer *in;
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_F32, (int64_t[]){2}, 1, v, &in), HLO_OK);
  HloDivergence *d = (HloDivergence *)1;
  ck_assert_int_eq(hlo_compare_runs(ctx, m, r, &in, 1, NULL, &d), HLO_TYPE_MISMATCH);
  ck_assert_ptr_null(d);
  ck_assert_ptr_nonnull(strstr(hlo_ctx_diagnostics(ctx),
                               "parameter 0 differs: the module's x is f32[2], the reference's x is f32[3]"));
  hlo_buffer_free(in);
  hlo_module_free(m);
  hlo_module_free(r);
  hlo_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("diverge");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, ulp_distances);
  tcase_add_test(tc, blocks_compare_like_elements);
  tcase_add_test(tc, parts_find_the_same_divergence);
  tcase_add_test(tc, parameters_checked_first);
  suite_add_tcase(s, tc);
  return tl_main(s);
}
