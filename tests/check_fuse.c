/* check_fuse.c: fused evaluation of elementwise chains (interp/fuse.c),
 * through the public API: results worked out by hand, the same bits with
 * fusion off (HLORUN_FUSION=0), narrow floats rounded after every
 * instruction, broadcast patterns, arrays spanning many tiles and threads,
 * values that escape a chain, and the memory a fused chain needs. */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hlorun.h"

/* Runs a module with parameters `in`; returns the result (caller frees). */
static HloBuffer *run(HloCtx *ctx, const char *text, HloBuffer *const *in, int n,
                      uint64_t *peak) {
  HloModule *m = NULL;
  HloExecutable *e = NULL;
  HloBuffer *r = NULL;
  ck_assert_int_eq(hlo_module_parse(ctx, text, strlen(text), "test.hlo", &m), HLO_OK);
  ck_assert_int_eq(hlo_compile(ctx, m, NULL, &e), HLO_OK);
  HloStatus st = hlo_execute(e, in, n, &r);
  if (st != HLO_OK) ck_abort_msg("%s", hlo_ctx_diagnostics(ctx));
  if (peak) *peak = hlo_executable_peak_memory(e);
  hlo_executable_free(e);
  hlo_module_free(m);
  return r;
}

static char *literal(HloCtx *ctx, const HloBuffer *b) {
  char *t = NULL;
  size_t len = 0;
  ck_assert_int_eq(hlo_buffer_to_literal(ctx, b, &t, &len), HLO_OK);
  return t;
}

/* Result literal of a parameterless module, with fusion on or off. */
static char *run_text(const char *text, bool fusion, int threads) {
  HloCtx *ctx = NULL;
  HloCtxOptions o = {.struct_size = sizeof o, .threads = threads};
  ck_assert_int_eq(hlo_ctx_new(&o, &ctx), HLO_OK);
  if (fusion) unsetenv("HLORUN_FUSION");
  else setenv("HLORUN_FUSION", "0", 1);
  HloBuffer *r = run(ctx, text, NULL, 0, NULL);
  unsetenv("HLORUN_FUSION");
  char *t = literal(ctx, r);
  hlo_buffer_free(r);
  hlo_ctx_free(ctx);
  return t;
}

/* The fused result is `want`, and the unfused run prints the same. */
static void expect(const char *module, const char *want) {
  char *fused = run_text(module, true, 1), *plain = run_text(module, false, 1);
  ck_assert_str_eq(fused, want);
  ck_assert_str_eq(plain, want);
  hlo_free(fused);
  hlo_free(plain);
}

START_TEST(scalar_broadcast_chain) {
  /* (x*2 + 1) * x for x = 0, 1, -2, 0.5: (1, 3, -3, 2) * x = (0, 3, 6, 1) */
  expect("HloModule t\n"
         "ENTRY main {\n"
         "  x = f32[4] constant({0, 1, -2, 0.5})\n"
         "  c2 = f32[] constant(2)\n  two = f32[4] broadcast(c2), dimensions={}\n"
         "  c1 = f32[] constant(1)\n  one = f32[4] broadcast(c1), dimensions={}\n"
         "  a = f32[4] multiply(x, two)\n  b = f32[4] add(a, one)\n"
         "  ROOT r = f32[4] multiply(b, x)\n}\n",
         "f32[4] {0, 3, 6, 1}");
}
END_TEST

START_TEST(row_and_column_broadcasts) {
  /* x + row - col: {{1+10-100, 2+20-100, 3+30-100}, {4+10-200, 5+20-200, 6+30-200}} */
  expect("HloModule t\n"
         "ENTRY main {\n"
         "  x = f32[2,3] constant({{1, 2, 3}, {4, 5, 6}})\n"
         "  row = f32[3] constant({10, 20, 30})\n"
         "  col = f32[2] constant({100, 200})\n"
         "  rb = f32[2,3] broadcast(row), dimensions={1}\n"
         "  cb = f32[2,3] broadcast(col), dimensions={0}\n"
         "  s = f32[2,3] add(x, rb)\n"
         "  ROOT r = f32[2,3] subtract(s, cb)\n}\n",
         "f32[2,3] {{-89, -78, -67}, {-186, -175, -164}}");
}
END_TEST

START_TEST(bf16_rounds_after_every_instruction) {
  /* 1 + 2^-8 is halfway between the bf16 neighbours 1 and 1 + 2^-7 and
   * rounds to even (1), twice; in f32 it would reach 1 + 2^-7. */
  expect("HloModule t\n"
         "ENTRY main {\n"
         "  x = bf16[2] constant({1, 1})\n"
         "  e = bf16[] constant(0.00390625)\n"
         "  eb = bf16[2] broadcast(e), dimensions={}\n"
         "  a = bf16[2] add(x, eb)\n"
         "  ROOT r = bf16[2] add(a, eb)\n}\n",
         "bf16[2] {1, 1}");
}
END_TEST

START_TEST(compare_select_convert) {
  /* i = 0..5 as f32, doubled where i > 2, else negated, then to s32:
   * {0, -1, -2, 6, 8, 10} */
  expect("HloModule t\n"
         "ENTRY main {\n"
         "  i = s32[6] iota(), iota_dimension=0\n"
         "  f = f32[6] convert(i)\n"
         "  c = f32[] constant(2)\n  cb = f32[6] broadcast(c), dimensions={}\n"
         "  gt = pred[6] compare(f, cb), direction=GT\n"
         "  d = f32[6] multiply(f, cb)\n"
         "  n = f32[6] negate(f)\n"
         "  s = f32[6] select(gt, d, n)\n"
         "  ROOT r = s32[6] convert(s)\n}\n",
         "s32[6] {0, -1, -2, 6, 8, 10}");
}
END_TEST

START_TEST(escaping_value_stays_correct) {
  /* x2 is used inside the chain and by the tuple: it must be materialised. */
  expect("HloModule t\n"
         "ENTRY main {\n"
         "  x = f32[3] constant({1, 2, 3})\n"
         "  x2 = f32[3] multiply(x, x)\n"
         "  c = f32[] constant(1)\n  cb = f32[3] broadcast(c), dimensions={}\n"
         "  y = f32[3] add(x2, cb)\n"
         "  ROOT t = (f32[3], f32[3]) tuple(x2, y)\n}\n",
         "(f32[3] {1, 4, 9}, f32[3] {2, 5, 10})");
}
END_TEST

/* A chain over 300001 elements (many tiles, several threads, an odd tail):
 * out[i] = exp(-(i/1024)^2) * 0.5 + tanh(i/1024) with bf16 and f32 paths.
 * Checked against the unfused run bit for bit, and by hand at i = 0
 * (exp(0) * 0.5 + tanh(0) = 0.5). */
static const char *big_module(const char *t) {
  static char buf[2048];
  snprintf(buf, sizeof buf,
           "HloModule big\n"
           "ENTRY main {\n"
           "  i = s32[300001] iota(), iota_dimension=0\n"
           "  f = f32[300001] convert(i)\n"
           "  x = %s[300001] convert(f)\n"
           "  k = %s[] constant(0.0009765625)\n  kb = %s[300001] broadcast(k), dimensions={}\n"
           "  h = %s[] constant(0.5)\n  hb = %s[300001] broadcast(h), dimensions={}\n"
           "  s = %s[300001] multiply(x, kb)\n"
           "  s2 = %s[300001] multiply(s, s)\n"
           "  n = %s[300001] negate(s2)\n"
           "  e = %s[300001] exponential(n)\n"
           "  g = %s[300001] multiply(e, hb)\n"
           "  th = %s[300001] tanh(s)\n"
           "  ROOT r = %s[300001] add(g, th)\n}\n",
           t, t, t, t, t, t, t, t, t, t, t, t);
  return buf;
}

START_TEST(many_tiles_and_threads_match_unfused) {
  static const char *const types[] = {"f32", "bf16", "f64"};
  for (int k = 0; k < 3; k++) {
    const char *m = big_module(types[k]);
    char *fused = run_text(m, true, 2), *plain = run_text(m, false, 1);
    ck_assert_msg(strcmp(fused, plain) == 0, "%s: fused and unfused results differ", types[k]);
    ck_assert_msg(strstr(fused, "{0.5, ") != NULL, "%s: element 0 is not 0.5", types[k]);
    hlo_free(fused);
    hlo_free(plain);
  }
}
END_TEST

START_TEST(fused_chain_allocates_only_its_result) {
  /* Four chained adds on a 1000-element f32 parameter: unfused, an operand
   * and its result are alive at once (8000 bytes); fused, only the result. */
  static const char *text =
      "HloModule t\n"
      "ENTRY main {\n"
      "  p = f32[1000] parameter(0)\n"
      "  c = f32[] constant(1)\n  cb = f32[1000] broadcast(c), dimensions={}\n"
      "  a = f32[1000] add(p, cb)\n  b = f32[1000] add(a, a)\n"
      "  d = f32[1000] add(b, b)\n  ROOT r = f32[1000] add(d, d)\n}\n";
  HloCtx *ctx = NULL;
  ck_assert_int_eq(hlo_ctx_new(NULL, &ctx), HLO_OK);
  float ones[1000];
  for (int i = 0; i < 1000; i++) ones[i] = 1.0f;
  int64_t dims[1] = {1000};
  HloBuffer *in = NULL;
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_F32, dims, 1, ones, &in), HLO_OK);
  uint64_t peak = 0;
  HloBuffer *r = run(ctx, text, &in, 1, &peak);
  ck_assert_uint_eq(peak, 4000);
  ck_assert_float_eq(((const float *)hlo_buffer_data(r))[999], 16.0f);   /* (1+1)*8 */
  hlo_buffer_free(r);
  setenv("HLORUN_FUSION", "0", 1);
  r = run(ctx, text, &in, 1, &peak);
  unsetenv("HLORUN_FUSION");
  ck_assert_uint_eq(peak, 8000);
  ck_assert_float_eq(((const float *)hlo_buffer_data(r))[999], 16.0f);
  hlo_buffer_free(r);
  hlo_buffer_free(in);
  hlo_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("fuse");
  TCase *tc = tcase_create("fuse");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, scalar_broadcast_chain);
  tcase_add_test(tc, row_and_column_broadcasts);
  tcase_add_test(tc, bf16_rounds_after_every_instruction);
  tcase_add_test(tc, compare_select_convert);
  tcase_add_test(tc, escaping_value_stays_correct);
  tcase_add_test(tc, many_tiles_and_threads_match_unfused);
  tcase_add_test(tc, fused_chain_allocates_only_its_result);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
