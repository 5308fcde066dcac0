/* check_fuse.c: fused evaluation of elementwise chains (interp/fuse.c),
 * through the public API: results worked out by hand, the same bits with
 * fusion off (HLORUN_FUSION=0), narrow floats rounded after every
 * instruction, broadcast patterns, arrays spanning many tiles and threads,
 * values that escape a chain, the memory a fused chain needs, and in-place
 * updates of dying buffers (elementwise, dynamic-update-slice in a loop),
 * a long sum split over threads with one thread's bits, large results
 * written with streaming stores, row groups (reductions over rows
 * fused with the chains around them), and dot chains (a dot, the row group
 * over its result, the dot that reads the group's rows: fuse_chain.c). */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "hlorun.h"
#include "tests/testlib.h"

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
  HloCtx *ctx = tl_ctx_new(threads);
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

START_TEST(scalar_and_row_operands_either_side) {
  /* Scalars and row values read as one element, on the left of subtract and
   * divide too; c2 also feeds a compare and a select, and the row maxima a
   * compare, which need them as whole registers. x = {{1, -2, 4}, {8, 0.5,
   * -1}}, row maxima 4 and 8: 10 - x, 10 / x, max - x, (x > 2 ? x : 2),
   * x * 2 and (x == max ? 10 : x), summed in order: row 0: 9+10+3+2+2+1,
   * 12-5+6+2-4-2, 6+2.5+0+4+8+10; row 1: 2+1.25+0+8+16+10,
   * 9.5+20+7.5+2+1+0.5, 11-10+9+2-2-1. */
  expect("HloModule t\n"
         "mx {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT m = f32[] maximum(a, b)\n}\n"
         "ENTRY main {\n"
         "  x = f32[2,3] constant({{1, -2, 4}, {8, 0.5, -1}})\n"
         "  c = f32[] constant(10)\n  cb = f32[2,3] broadcast(c), dimensions={}\n"
         "  c2 = f32[] constant(2)\n  cb2 = f32[2,3] broadcast(c2), dimensions={}\n"
         "  ninf = f32[] constant(-inf)\n"
         "  rm = f32[2] reduce(x, ninf), dimensions={1}, to_apply=mx\n"
         "  rb = f32[2,3] broadcast(rm), dimensions={0}\n"
         "  a = f32[2,3] subtract(cb, x)\n"
         "  d = f32[2,3] divide(cb, x)\n"
         "  l = f32[2,3] subtract(rb, x)\n"
         "  g = pred[2,3] compare(x, cb2), direction=GT\n"
         "  s = f32[2,3] select(g, x, cb2)\n"
         "  p = f32[2,3] multiply(x, cb2)\n"
         "  e = pred[2,3] compare(x, rb), direction=EQ\n"
         "  q = f32[2,3] select(e, cb, x)\n"
         "  t1 = f32[2,3] add(a, d)\n  t2 = f32[2,3] add(t1, l)\n  t3 = f32[2,3] add(t2, s)\n"
         "  t4 = f32[2,3] add(t3, p)\n"
         "  ROOT r = f32[2,3] add(t4, q)\n}\n",
         "f32[2,3] {{27, 9, 30.5}, {37.25, 40.5, 9}}");
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
  /* Four chained adds on a 1000-element f32 parameter: fused, only the
   * result is allocated; unfused, each add overwrites its dying operand
   * (the broadcast's buffer first), so one buffer is alive too. */
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
  ck_assert_uint_eq(peak, 4000);
  ck_assert_float_eq(((const float *)hlo_buffer_data(r))[999], 16.0f);
  hlo_buffer_free(r);
  hlo_buffer_free(in);
  hlo_ctx_free(ctx);
}
END_TEST

START_TEST(threaded_long_sum_is_exact) {
  /* A full f32 sum of 1048676 elements is split over threads by blocks:
   * the same bits as one thread. Ones sum to exactly 1048676; sin(i) gives
   * rounding in every block, compared between 1 and 2 threads. */
  static const char *ones =
      "HloModule t\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT s = f32[] add(a, b)\n}\n"
      "ENTRY main {\n  c = f32[] constant(1)\n  x = f32[1048676] broadcast(c), dimensions={}\n"
      "  z = f32[] constant(0)\n"
      "  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add\n}\n";
  static const char *sines =
      "HloModule t\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT s = f32[] add(a, b)\n}\n"
      "ENTRY main {\n  i = s32[1048676] iota(), iota_dimension=0\n"
      "  f = f32[1048676] convert(i)\n  x = f32[1048676] sine(f)\n"
      "  z = f32[] constant(0)\n"
      "  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add\n}\n";
  char *a = run_text(ones, true, 2);
  ck_assert_str_eq(a, "f32[] 1048676");
  hlo_free(a);
  char *one = run_text(sines, true, 1), *two = run_text(sines, true, 2);
  ck_assert_str_eq(one, two);
  hlo_free(one);
  hlo_free(two);
}
END_TEST

/* ---- Row groups: reductions over rows fused with their broadcasts ---- */

static const char *const ADD_MAX =
    "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
    "max {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT m = f32[] maximum(a, b)\n}\n";

START_TEST(row_group_normalises_rows) {
  /* Rows {1,2,5} and {4,4,0}: minus the row max {5,4} gives {-4,-3,0} and
   * {0,0,-4}; squared {16,9,0} and {0,0,16}; row sums 25 and 16; divided:
   * {0.64, 0.36, 0} and {0, 0, 1}. */
  char m[2048];
  snprintf(m, sizeof m,
           "HloModule t\n%s"
           "ENTRY main {\n"
           "  x = f32[2,3] constant({{1, 2, 5}, {4, 4, 0}})\n"
           "  ninf = f32[] constant(-inf)\n"
           "  mx = f32[2] reduce(x, ninf), dimensions={1}, to_apply=max\n"
           "  mxb = f32[2,3] broadcast(mx), dimensions={0}\n"
           "  d = f32[2,3] subtract(x, mxb)\n  sq = f32[2,3] multiply(d, d)\n"
           "  z = f32[] constant(0)\n"
           "  s = f32[2] reduce(sq, z), dimensions={1}, to_apply=add\n"
           "  sb = f32[2,3] broadcast(s), dimensions={0}\n"
           "  ROOT r = f32[2,3] divide(sq, sb)\n}\n", ADD_MAX);
  expect(m, "f32[2,3] {{0.64, 0.36, 0}, {0, 0, 1}}");
}
END_TEST

/* Rows of n elements, x[r][c] = ((c + r) mod 7) - 3, over R rows with two
 * row dims (R = r1 * r2); `body` says what is computed from x. */
static const char *rows_module(int64_t r1, int64_t r2, int64_t n, const char *body) {
  static char buf[4096];
  snprintf(buf, sizeof buf,
           "HloModule t\n%s"
           "ENTRY main {\n"
           "  ic = s32[%lld,%lld,%lld] iota(), iota_dimension=2\n"
           "  ia = s32[%lld,%lld,%lld] iota(), iota_dimension=0\n"
           "  ib = s32[%lld,%lld,%lld] iota(), iota_dimension=1\n"
           "  k2 = s32[] constant(%lld)\n  k2b = s32[%lld,%lld,%lld] broadcast(k2), dimensions={}\n"
           "  ia2 = s32[%lld,%lld,%lld] multiply(ia, k2b)\n  ir = s32[%lld,%lld,%lld] add(ia2, ib)\n"
           "  sum = s32[%lld,%lld,%lld] add(ic, ir)\n"
           "  seven = s32[] constant(7)\n  sevb = s32[%lld,%lld,%lld] broadcast(seven), dimensions={}\n"
           "  mod = s32[%lld,%lld,%lld] remainder(sum, sevb)\n"
           "  three = s32[] constant(3)\n  thrb = s32[%lld,%lld,%lld] broadcast(three), dimensions={}\n"
           "  xi = s32[%lld,%lld,%lld] subtract(mod, thrb)\n"
           "  x = f32[%lld,%lld,%lld] convert(xi)\n%s}\n",
           ADD_MAX,
#define D (long long)r1, (long long)r2, (long long)n
           D, D, D, (long long)r2, D, D, D, D, D, D, D, D, D,
#undef D
           body);
  return buf;
}

START_TEST(row_reduce_root_sums_rows) {
  /* Sum over each row of x squared, fused with the chain computing it (the
   * reduce is the group's root). By hand: one period of 7 squares to
   * 9+4+1+0+1+4+9 = 28; a row of 3000 = 428 periods and 4 more elements,
   * which start at phase (r mod 7). Rows are longer than a tile. */
  char body[1024];
  snprintf(body, sizeof body,
           "  sq = f32[3,5,3000] multiply(x, x)\n  z = f32[] constant(0)\n"
           "  ROOT s = f32[3,5] reduce(sq, z), dimensions={2}, to_apply=add\n");
  const char *m = rows_module(3, 5, 3000, body);
  char want[512] = "f32[3,5] {";
  for (int a = 0; a < 3; a++) {
    strcat(want, a ? ", {" : "{");
    for (int b = 0; b < 5; b++) {
      int r = a * 5 + b, tail = 0;
      for (int c = 0; c < 4; c++) {
        int v = (3000 - 4 + c + r) % 7 - 3;
        tail += v * v;
      }
      char e[32];
      snprintf(e, sizeof e, "%s%d", b ? ", " : "", 428 * 28 + tail);
      strcat(want, e);
    }
    strcat(want, "}");
  }
  strcat(want, "}");
  expect(m, want);
  char *two = run_text(m, true, 2);
  ck_assert_str_eq(two, want);
  hlo_free(two);
}
END_TEST

START_TEST(row_group_softmax_matches_unfused_bits) {
  /* Softmax over rows, for short rows (many rows per tile) and long ones
   * (one row per tile), on one and two threads: the same bits as the
   * unfused kernels, and every row sums to about 1. */
  static const int64_t shapes[][3] = {{4, 33, 100}, {2, 3, 5000}, {1, 7, 16384}, {2, 2, 20000}};
  for (int k = 0; k < 4; k++) {
    char body[1024];
    const int64_t *d = shapes[k];
    snprintf(body, sizeof body,
             "  ninf = f32[] constant(-inf)\n"
             "  mx = f32[%lld,%lld] reduce(x, ninf), dimensions={2}, to_apply=max\n"
             "  mxb = f32[%lld,%lld,%lld] broadcast(mx), dimensions={0,1}\n"
             "  sh = f32[%lld,%lld,%lld] subtract(x, mxb)\n  e = f32[%lld,%lld,%lld] exponential(sh)\n"
             "  z = f32[] constant(0)\n"
             "  s = f32[%lld,%lld] reduce(e, z), dimensions={2}, to_apply=add\n"
             "  sb = f32[%lld,%lld,%lld] broadcast(s), dimensions={0,1}\n"
             "  ROOT r = f32[%lld,%lld,%lld] divide(e, sb)\n",
             (long long)d[0], (long long)d[1], (long long)d[0], (long long)d[1], (long long)d[2],
             (long long)d[0], (long long)d[1], (long long)d[2], (long long)d[0], (long long)d[1],
             (long long)d[2], (long long)d[0], (long long)d[1], (long long)d[0], (long long)d[1],
             (long long)d[2], (long long)d[0], (long long)d[1], (long long)d[2]);
    const char *m = rows_module(d[0], d[1], d[2], body);
    char *one = run_text(m, true, 1), *two = run_text(m, true, 2), *plain = run_text(m, false, 1);
    ck_assert_msg(strcmp(one, plain) == 0, "shape %d: fused differs from unfused", k);
    ck_assert_msg(strcmp(two, plain) == 0, "shape %d: two threads differ", k);
    /* Row 0 starts at phase 0: element 0 is exp(-3 - 3) / sum over the
     * row of exp(x - 3), worked out here in double. */
    double sum = 0;
    for (int64_t c = 0; c < d[2]; c++) sum += exp((double)(c % 7 - 3) - 3.0);
    const char *p = strchr(one, '{');
    while (p && *p == '{') p++;
    ck_assert_ptr_nonnull(p);
    double got = strtod(p, NULL), want = exp(-6.0) / sum;
    ck_assert_msg(fabs(got - want) <= 1e-5 * want, "shape %d: element 0 is %g, not %g", k, got, want);
    hlo_free(one);
    hlo_free(two);
    hlo_free(plain);
  }
}
END_TEST

START_TEST(row_value_used_outside_stays_correct) {
  /* The row sums also leave the computation: the reduce runs on its own
   * and the division reads its result. Rows {1,3}, {2,2}: sums {4,4}. */
  char m[2048];
  snprintf(m, sizeof m,
           "HloModule t\n%s"
           "ENTRY main {\n"
           "  x = f32[2,2] constant({{1, 3}, {2, 2}})\n  z = f32[] constant(0)\n"
           "  s = f32[2] reduce(x, z), dimensions={1}, to_apply=add\n"
           "  sb = f32[2,2] broadcast(s), dimensions={0}\n"
           "  q = f32[2,2] divide(x, sb)\n"
           "  ROOT t = (f32[2], f32[2,2]) tuple(s, q)\n}\n", ADD_MAX);
  expect(m, "(f32[2] {4, 4}, f32[2,2] {{0.25, 0.75}, {0.5, 0.5}})");
}
END_TEST

START_TEST(row_group_in_row_space_and_bf16) {
  /* Work on the row values inside the group: 1/sum broadcast back (rows
   * {1,3}, {2,6}: sums 4 and 8, so x * (1/sum) = {0.25, 0.75}, {0.25,
   * 0.75}). Narrow types are not row-fused but give the same answer. */
  static const char *const types[] = {"f32", "bf16"};
  for (int k = 0; k < 2; k++) {
    const char *t = types[k];
    char m[2048];
    snprintf(m, sizeof m,
             "HloModule t\n"
             "add {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n  ROOT s = %s[] add(a, b)\n}\n"
             "ENTRY main {\n"
             "  x = %s[2,2] constant({{1, 3}, {2, 6}})\n  z = %s[] constant(0)\n"
             "  s = %s[2] reduce(x, z), dimensions={1}, to_apply=add\n"
             "  one = %s[] constant(1)\n  oneb = %s[2] broadcast(one), dimensions={}\n"
             "  inv = %s[2] divide(oneb, s)\n"
             "  ib = %s[2,2] broadcast(inv), dimensions={0}\n"
             "  ROOT q = %s[2,2] multiply(x, ib)\n}\n",
             t, t, t, t, t, t, t, t, t, t, t);
    char want[128];
    snprintf(want, sizeof want, "%s[2,2] {{0.25, 0.75}, {0.25, 0.75}}", t);
    expect(m, want);
  }
}
END_TEST

START_TEST(row_group_registers_count_against_memory_limit) {
  /* Rows of 16384 f32 make tiles of 64 KiB per register: a register and
   * two scratch tiles are 192 KiB for the one thread (above the 64 KiB a
   * group may keep on the stack). With a limit of
   * 300000 bytes the 128 KiB input and the 128 KiB result fit, but not the
   * registers too; the error names the group (its root r). */
  char m[1024];
  snprintf(m, sizeof m,
           "HloModule t\n%s"
           "ENTRY main {\n"
           "  x = f32[2,16384] parameter(0)\n  z = f32[] constant(0)\n"
           "  s = f32[2] reduce(x, z), dimensions={1}, to_apply=add\n"
           "  sb = f32[2,16384] broadcast(s), dimensions={0}\n"
           "  ROOT r = f32[2,16384] divide(x, sb)\n}\n", ADD_MAX);
  HloCtx *ctx = tl_ctx_limited(1, 300000);
  HloModule *mod = NULL;
  HloExecutable *e = NULL;
  HloBuffer *r = NULL;
  ck_assert_int_eq(hlo_module_parse(ctx, m, strlen(m), "t.hlo", &mod), HLO_OK);
  ck_assert_int_eq(hlo_compile(ctx, mod, NULL, &e), HLO_OK);
  static float ones[2 * 16384];
  for (int i = 0; i < 2 * 16384; i++) ones[i] = 1.0f;
  int64_t dims[2] = {2, 16384};
  HloBuffer *in = NULL;
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_F32, dims, 2, ones, &in), HLO_OK);
  ck_assert_int_ne(hlo_execute(e, &in, 1, &r), HLO_OK);
  const char *diag = hlo_ctx_diagnostics(ctx);
  ck_assert_msg(strstr(diag, "memory limit") && strstr(diag, "in r "), "%s", diag);
  hlo_executable_free(e);
  hlo_module_free(mod);
  hlo_buffer_free(in);
  hlo_ctx_free(ctx);
  /* Without the limit, every element is 1/16384. */
  ck_assert_int_eq(hlo_ctx_new(NULL, &ctx), HLO_OK);
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_F32, dims, 2, ones, &in), HLO_OK);
  uint64_t peak = 0;
  r = run(ctx, m, &in, 1, &peak);
  ck_assert_float_eq(((const float *)hlo_buffer_data(r))[16384 + 77], 1.0f / 16384);
  /* Fused: the result and one thread's tiles (s in a register, two scratch
   * tiles: 3 x 64 KiB; the divide reads s once per row, so sb needs no
   * register), nothing else; unfused would hold the broadcast sb (128 KiB)
   * and s instead of the tiles. */
  ck_assert_uint_eq(peak, 131072 + 3 * 65536);
  hlo_buffer_free(r);
  hlo_buffer_free(in);
  hlo_ctx_free(ctx);
}
END_TEST

START_TEST(large_result_is_streamed_exactly) {
  /* A result of 2100003 f32 (8.4 MB, above the streaming size) over two
   * threads, with a tail that is not a whole tile or vector: every element
   * is 2i + 1, with streamed stores and without. */
  static const char *text =
      "HloModule t\n"
      "ENTRY main {\n"
      "  i = s32[2100003] iota(), iota_dimension=0\n  x = f32[2100003] convert(i)\n"
      "  c = f32[] constant(2)\n  cb = f32[2100003] broadcast(c), dimensions={}\n"
      "  o = f32[] constant(1)\n  ob = f32[2100003] broadcast(o), dimensions={}\n"
      "  y = f32[2100003] multiply(x, cb)\n  ROOT r = f32[2100003] add(y, ob)\n}\n";
  for (int k = 0; k < 2; k++) {
    if (k) setenv("HLORUN_STREAM", "0", 1);
    HloCtx *ctx = tl_ctx_new(2);
    HloBuffer *r = run(ctx, text, NULL, 0, NULL);
    const float *v = hlo_buffer_data(r);
    int64_t bad = 0;
    for (int64_t i = 0; i < 2100003; i++) bad += v[i] != (float)(2 * i + 1);
    ck_assert_int_eq(bad, 0);
    hlo_buffer_free(r);
    hlo_ctx_free(ctx);
    unsetenv("HLORUN_STREAM");
  }
}
END_TEST

/* The result bytes of a run on array inputs (two threads) with environment
 * variable var set to val (NULL: unset); the caller frees them. */
static char *result_bytes(const char *text, int n, const TlArray *in, const char *var,
                          const char *val, size_t *len) {
  if (val) setenv(var, val, 1);
  TlRun r = tl_run_arrays(2, text, n, in);
  unsetenv(var);
  *len = hlo_buffer_nbytes(r.result);
  char *b = malloc(*len);
  ck_assert_ptr_nonnull(b);
  memcpy(b, hlo_buffer_data(r.result), *len);
  tl_run_done(&r);
  return b;
}

/* Runs text on the inputs three ways: as planned (through a table where the
 * group pays for one), with tables off (HLORUN_TABLE=0) and unfused: all
 * three give the same bytes, which are returned (the caller frees them). */
static char *same_bytes_three_ways(const char *text, int n, const TlArray *in, size_t *len) {
  size_t l1, l2, l3;
  char *planned = result_bytes(text, n, in, "HLORUN_TABLE", NULL, &l1);
  char *direct = result_bytes(text, n, in, "HLORUN_TABLE", "0", &l2);
  char *plain = result_bytes(text, n, in, "HLORUN_FUSION", "0", &l3);
  ck_assert_uint_eq(l1, l2);
  ck_assert_uint_eq(l1, l3);
  ck_assert_msg(memcmp(planned, direct, l1) == 0, "planned run differs from tables off");
  ck_assert_msg(memcmp(planned, plain, l1) == 0, "planned run differs from unfused");
  free(direct);
  free(plain);
  *len = l1;
  return planned;
}

/* The planned run's bytes (want, len of them) again with the table's
 * lookups forced through AVX-512 gathers and through plain loads
 * (HLORUN_GATHER; without AVX-512 both are plain). */
static void same_with_each_lookup(const char *text, int n, const TlArray *in, const char *want,
                                  size_t len) {
  for (int g = 0; g < 2; g++) {
    size_t l;
    char *b = result_bytes(text, n, in, "HLORUN_GATHER", g ? "1" : "0", &l);
    ck_assert_uint_eq(l, len);
    ck_assert_msg(memcmp(b, want, len) == 0, "table lookups %s gathers differ",
                  g ? "with" : "without");
    free(b);
  }
}

/* n 16-bit elements whose first 65536 are every bit pattern: element i is
 * i times an odd number, mod 2^16 (the caller frees them). */
static uint16_t *every_pattern16(int64_t n) {
  uint16_t *x = malloc(sizeof(uint16_t) * (size_t)n);
  ck_assert_ptr_nonnull(x);
  for (int64_t i = 0; i < n; i++) x[i] = (uint16_t)(i * 40503);
  return x;
}

START_TEST(bf16_chain_through_table_has_direct_bits) {
  /* The activation chain x*logistic(1.702x) + 0.5*tanh(x+0.25)*exp(-x*x) on
   * 2^20 + 7 bf16 elements whose first 65536 are every bit pattern (i times
   * an odd number, mod 2^16): the chain is a function of x alone, so it may
   * run through a table of its 65536 results; NaNs, infinities, subnormals
   * and the tail included, the bits are those of the direct and unfused
   * runs. By hand: x = +-0 gives tanh(0.25) = 0.2449187 -> bf16 0.2451171875
   * (123/128 of the way from 0.125 to 0.25), halved: 0.12255859375 = 0x3DFB. */
  enum { N = (1 << 20) + 7 };
  uint16_t *x = every_pattern16(N);
  const char *text =
      "HloModule t\n"
      "ENTRY main {\n"
      "  x = bf16[1048583] parameter(0)\n"
      "  c_scale = bf16[] constant(1.702)\n  scale = bf16[1048583] broadcast(c_scale), dimensions={}\n"
      "  c_half = bf16[] constant(0.5)\n  half = bf16[1048583] broadcast(c_half), dimensions={}\n"
      "  c_shift = bf16[] constant(0.25)\n  shift = bf16[1048583] broadcast(c_shift), dimensions={}\n"
      "  xs = bf16[1048583] multiply(x, scale)\n  sig = bf16[1048583] logistic(xs)\n"
      "  gate = bf16[1048583] multiply(x, sig)\n  xb = bf16[1048583] add(x, shift)\n"
      "  th = bf16[1048583] tanh(xb)\n  x2 = bf16[1048583] multiply(x, x)\n"
      "  nx2 = bf16[1048583] negate(x2)\n  gauss = bf16[1048583] exponential(nx2)\n"
      "  tg = bf16[1048583] multiply(th, gauss)\n  htg = bf16[1048583] multiply(tg, half)\n"
      "  ROOT out = bf16[1048583] add(gate, htg)\n}\n";
  const TlArray in[1] = {{HLO_TYPE_BF16, 1, (int64_t[]){N}, x}};
  size_t len;
  uint16_t *got = (uint16_t *)(void *)same_bytes_three_ways(text, 1, in, &len);
  ck_assert_uint_eq(len, sizeof(uint16_t) * N);
  ck_assert_uint_eq(got[0], 0x3DFB);                      /* x = +0 */
  ck_assert_uint_eq(got[32768], 0x3DFB);                  /* x = -0: 32768 * 40503 = 0x8000 mod 2^16 */
  same_with_each_lookup(text, 1, in, (const char *)got, len);
  /* Under a memory limit that holds the result (2097166 bytes) and the
   * tiles' scratch but not the table (65536 * 4 bytes), the chain runs on
   * its elements instead of failing: the same bytes. */
  HloCtx *ctx = tl_ctx_limited(2, 2097166 + 200000);
  HloBuffer *b = NULL;
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_BF16, (int64_t[]){N}, 1, x, &b), HLO_OK);
  HloBuffer *r = tl_run_ok(ctx, text, &b, 1);
  ck_assert_int_eq(memcmp(hlo_buffer_data(r), got, len), 0);
  hlo_buffer_free(r);
  hlo_buffer_free(b);
  hlo_ctx_free(ctx);
  free(got);
  free(x);
}
END_TEST

START_TEST(large_table_result_is_streamed_exactly) {
  /* |x*x - x| + 1 on 4194311 bf16 elements (8 MiB: the result is written
   * with non-temporal stores, eight entries at a time after an unaligned
   * head, and a tail): through the table, streamed or not, the bytes of the
   * direct and unfused runs. By hand: x = +0 gives 1 (0x3F80), x = 2
   * (0x4000) gives 3 (0x4040). */
  enum { N = 4194311 };
  uint16_t *x = every_pattern16(N);
  const char *text =
      "HloModule t\n"
      "ENTRY main {\n"
      "  x = bf16[4194311] parameter(0)\n"
      "  one = bf16[] constant(1)\n  ob = bf16[4194311] broadcast(one), dimensions={}\n"
      "  sq = bf16[4194311] multiply(x, x)\n  d = bf16[4194311] subtract(sq, x)\n"
      "  a = bf16[4194311] abs(d)\n  ROOT r = bf16[4194311] add(a, ob)\n}\n";
  const TlArray in[1] = {{HLO_TYPE_BF16, 1, (int64_t[]){N}, x}};
  size_t len, len2;
  uint16_t *got = (uint16_t *)(void *)same_bytes_three_ways(text, 1, in, &len);
  char *cached = result_bytes(text, 1, in, "HLORUN_STREAM", "0", &len2);
  ck_assert_uint_eq(len, len2);
  ck_assert_msg(memcmp(got, cached, len) == 0, "streamed and cached table results differ");
  same_with_each_lookup(text, 1, in, (const char *)got, len);
  ck_assert_uint_eq(got[0], 0x3F80);
  for (int64_t i = 0; i < 65536; i++)
    if (x[i] == 0x4000) ck_assert_uint_eq(got[i], 0x4040);
  free(cached);
  free(got);
  free(x);
}
END_TEST

START_TEST(u8_chain_through_table_is_exact) {
  /* sqrt(convert(x)) on 5000 u8 elements (a tail past whole vectors): each
   * result is the correctly rounded sqrtf of the byte, planned, with tables
   * off and unfused. */
  enum { N = 5000 };
  uint8_t x[N];
  for (int i = 0; i < N; i++) x[i] = (uint8_t)(i * 7 + 3);
  const char *text = "HloModule t\n"
                     "ENTRY main {\n"
                     "  x = u8[5000] parameter(0)\n  f = f32[5000] convert(x)\n"
                     "  ROOT r = f32[5000] sqrt(f)\n}\n";
  const TlArray in[1] = {{HLO_TYPE_U8, 1, (int64_t[]){N}, x}};
  size_t len;
  float *got = (float *)(void *)same_bytes_three_ways(text, 1, in, &len);
  ck_assert_uint_eq(len, sizeof(float) * N);
  for (int i = 0; i < N; i++)
    ck_assert_msg(got[i] == sqrtf((float)x[i]), "element %d: sqrt(%d) = %a", i, x[i], got[i]);
  free(got);
}
END_TEST

START_TEST(position_dependent_groups_keep_their_bits) {
  /* Groups whose results depend on more than one bf16 element: a row
   * broadcast (the value varies along the rows), a second array input, and
   * a row reduction broadcast back. Each must run on its elements: the same
   * bytes as with tables off and unfused. x holds every bf16 pattern; y
   * and b vary along the columns (y just below 1, b near 2^-7). */
  enum { R = 16, C = 65536 + 5 };
  uint16_t *x = every_pattern16((int64_t)R * C), *y = malloc(sizeof(uint16_t) * R * C);
  uint16_t b[C];
  ck_assert_ptr_nonnull(y);
  for (int64_t i = 0; i < (int64_t)R * C; i++) y[i] = (uint16_t)(0x3f80 - (i % C) % 64);
  for (int c = 0; c < C; c++) b[c] = (uint16_t)(0x3c00 + c % 256);
  static const char *const bodies[] = {
      "  bb = bf16[16,65541] broadcast(b), dimensions={1}\n"
      "  e = bf16[16,65541] exponential(x)\n  t = bf16[16,65541] tanh(e)\n"
      "  ROOT r = bf16[16,65541] multiply(t, bb)\n",
      "  e = bf16[16,65541] exponential(x)\n  t = bf16[16,65541] tanh(e)\n"
      "  ROOT r = bf16[16,65541] multiply(t, y)\n",
      "  e = bf16[16,65541] exponential(x)\n  t = bf16[16,65541] tanh(e)\n"
      "  z = bf16[] constant(0)\n"
      "  s = bf16[16] reduce(t, z), dimensions={1}, to_apply=add\n"
      "  sb = bf16[16,65541] broadcast(s), dimensions={0}\n"
      "  ROOT r = bf16[16,65541] subtract(t, sb)\n"};
  for (int k = 0; k < 3; k++) {
    char text[2048];
    snprintf(text, sizeof text,
             "HloModule t\n"
             "add {\n  p = bf16[] parameter(0)\n  q = bf16[] parameter(1)\n"
             "  ROOT a = bf16[] add(p, q)\n}\n"
             "ENTRY main {\n"
             "  x = bf16[16,65541] parameter(0)\n  y = bf16[16,65541] parameter(1)\n"
             "  b = bf16[65541] parameter(2)\n%s}\n",
             bodies[k]);
    const TlArray in[3] = {{HLO_TYPE_BF16, 2, (int64_t[]){R, C}, x},
                           {HLO_TYPE_BF16, 2, (int64_t[]){R, C}, y},
                           {HLO_TYPE_BF16, 1, (int64_t[]){C}, b}};
    size_t len;
    free(same_bytes_three_ways(text, 3, in, &len));
  }
  free(x);
  free(y);
}
END_TEST

START_TEST(iota_fused_one_hot_by_hand) {
  /* one_hot(labels, 10) as jax writes it: labels broadcast along rows,
   * compared with iota along the columns, converted. Labels {3, 0, 9, 7}:
   * row r has its 1 at column labels[r]. The iota is copied into the
   * group: the run allocates the result alone (f32[4,10]: 160 bytes, and
   * 40 for the s32 labels constant). */
  static const char *text =
      "HloModule t\nENTRY main {\n"
      "  labels = s32[4] constant({3, 0, 9, 7})\n"
      "  lb = s32[4,10] broadcast(labels), dimensions={0}\n"
      "  io = s32[4,10] iota(), iota_dimension=1\n"
      "  eq = pred[4,10] compare(lb, io), direction=EQ\n"
      "  ROOT oh = f32[4,10] convert(eq)\n}\n";
  expect(text, "f32[4,10] {{0, 0, 0, 1, 0, 0, 0, 0, 0, 0}, {1, 0, 0, 0, 0, 0, 0, 0, 0, 0}, "
               "{0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, {0, 0, 0, 0, 0, 0, 0, 1, 0, 0}}");
  HloCtx *ctx = tl_ctx_new(1);
  uint64_t peak = 0;
  HloBuffer *r = run(ctx, text, NULL, 0, &peak);
  ck_assert_msg(peak < 160 + 40 + 64, "peak %llu: more than the result and the labels",
                (unsigned long long)peak);
  hlo_buffer_free(r);
  hlo_ctx_free(ctx);
}
END_TEST

START_TEST(iota_fused_causal_softmax_by_hand) {
  /* A causal mask from two iotas (column <= row) on zeros, then a row
   * softmax in the same row group: row r is 1/(r+1) up to column r, 0
   * after it. */
  char text[2048];
  snprintf(text, sizeof text,
           "HloModule t\n%s"
           "ENTRY main {\n"
           "  zero = f32[] constant(0)\n  x = f32[4,4] broadcast(zero), dimensions={}\n"
           "  r = s32[4,4] iota(), iota_dimension=0\n  c = s32[4,4] iota(), iota_dimension=1\n"
           "  ok = pred[4,4] compare(c, r), direction=LE\n"
           "  ninf = f32[] constant(-inf)\n  nb = f32[4,4] broadcast(ninf), dimensions={}\n"
           "  m = f32[4,4] select(ok, x, nb)\n"
           "  mx = f32[4] reduce(m, ninf), dimensions={1}, to_apply=max\n"
           "  mxb = f32[4,4] broadcast(mx), dimensions={0}\n"
           "  sh = f32[4,4] subtract(m, mxb)\n  e = f32[4,4] exponential(sh)\n"
           "  s = f32[4] reduce(e, zero), dimensions={1}, to_apply=add\n"
           "  sb = f32[4,4] broadcast(s), dimensions={0}\n"
           "  ROOT p = f32[4,4] divide(e, sb)\n}\n",
           ADD_MAX);
  expect(text, "f32[4,4] {{1, 0, 0, 0}, {0.5, 0.5, 0, 0}, "
               "{0.333333343, 0.333333343, 0.333333343, 0}, {0.25, 0.25, 0.25, 0.25}}");
}
END_TEST

START_TEST(iota_fused_element_types_by_hand) {
  /* An iota's values are converted to its type as its kernel does: u8
   * wraps (column 257 of a u8 iota is 1; doubled, 2), bf16 rounds to
   * nearest even (257 -> 256, 259 -> 260), pred is index != 0. */
  expect("HloModule t\nENTRY main {\n"
         "  i = u8[1,300] iota(), iota_dimension=1\n  s = u8[1,300] add(i, i)\n"
         "  ROOT sl = u8[1,4] slice(s), slice={[0:1], [256:260]}\n}\n",
         "u8[1,4] {{0, 2, 4, 6}}");
  expect("HloModule t\nENTRY main {\n"
         "  i = bf16[300] iota(), iota_dimension=0\n"
         "  h = bf16[] constant(0.5)\n  hb = bf16[300] broadcast(h), dimensions={}\n"
         "  s = bf16[300] multiply(i, hb)\n"
         "  ROOT sl = bf16[4] slice(s), slice={[256:260]}\n}\n",
         "bf16[4] {128, 128, 129, 130}");
  expect("HloModule t\nENTRY main {\n"
         "  i = pred[4] iota(), iota_dimension=0\n  ROOT n = pred[4] not(i)\n}\n",
         "pred[4] {true, false, false, false}");
}
END_TEST

START_TEST(while_updates_in_place) {
  /* Each iteration writes b[i] = i and b[i+1] = i+1 with two chained
   * dynamic-update-slices, for i = 0..4: b[k] = k for k <= 5, the rest
   * stays the parameter's 0. The first iteration copies the parameter's
   * buffer once (the caller still holds it); afterwards both updates write
   * in place, so that 1 MB copy and the while's own 1 MB result are all
   * that is ever alive (plus scalars); copying updates would add a third
   * megabyte (an update's operand and result alive at once). The caller's
   * input stays untouched. */
  static const char *text =
      "HloModule t\n"
      "body {\n"
      "  t = (s32[], f32[250000]) parameter(0)\n"
      "  i = s32[] get-tuple-element(t), index=0\n"
      "  b = f32[250000] get-tuple-element(t), index=1\n"
      "  f = f32[] convert(i)\n  u = f32[1] broadcast(f), dimensions={}\n"
      "  b1 = f32[250000] dynamic-update-slice(b, u, i)\n"
      "  one = s32[] constant(1)\n  j = s32[] add(i, one)\n"
      "  g = f32[] convert(j)\n  u2 = f32[1] broadcast(g), dimensions={}\n"
      "  b2 = f32[250000] dynamic-update-slice(b1, u2, j)\n"
      "  ROOT r = (s32[], f32[250000]) tuple(j, b2)\n}\n"
      "cond {\n"
      "  t = (s32[], f32[250000]) parameter(0)\n"
      "  i = s32[] get-tuple-element(t), index=0\n"
      "  n = s32[] constant(5)\n"
      "  ROOT lt = pred[] compare(i, n), direction=LT\n}\n"
      "ENTRY main {\n"
      "  p = f32[250000] parameter(0)\n"
      "  z = s32[] constant(0)\n"
      "  init = (s32[], f32[250000]) tuple(z, p)\n"
      "  w = (s32[], f32[250000]) while(init), condition=cond, body=body\n"
      "  ROOT out = f32[250000] get-tuple-element(w), index=1\n}\n";
  HloCtx *ctx = NULL;
  ck_assert_int_eq(hlo_ctx_new(NULL, &ctx), HLO_OK);
  float *zeros = calloc(250000, sizeof *zeros);
  ck_assert_ptr_nonnull(zeros);
  int64_t dims[1] = {250000};
  HloBuffer *in = NULL;
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_F32, dims, 1, zeros, &in), HLO_OK);
  uint64_t peak = 0;
  HloBuffer *r = run(ctx, text, &in, 1, &peak);
  const float *o = hlo_buffer_data(r), *i0 = hlo_buffer_data(in);
  for (int k = 0; k <= 5; k++) ck_assert_float_eq(o[k], (float)k);
  ck_assert_float_eq(o[6], 0.0f);
  ck_assert_float_eq(o[249999], 0.0f);
  for (int k = 0; k <= 6; k++) ck_assert_float_eq(i0[k], 0.0f);
  ck_assert_uint_ge(peak, 2000000);
  ck_assert_uint_lt(peak, 2500000);
  hlo_buffer_free(r);
  hlo_buffer_free(in);
  free(zeros);
  hlo_ctx_free(ctx);
}
END_TEST

/* ---- Dot chains: a dot, the row group over it, the dot reading its rows ---- */

/* Counts the events of one kind of fused step (HloEvent.fused: 1 a fused
 * group, 2 a dot chain). */
typedef struct FusedCount { int kind, n, reduces; } FusedCount;
static int count_fused(const HloEvent *e, void *user) {
  FusedCount *c = user;
  if (e->fused == c->kind) c->n++;
  if (!e->fused && strcmp(e->opcode, "reduce") == 0) c->reduces++;   /* run on their own */
  return 0;
}

/* Result literal of a parameterless module; *count gets how many fused
 * steps of kind ran, *reduces (if not NULL) how many reduces ran unfused. */
static char *run_fused(const char *text, int threads, int kind, int *count, int *reduces) {
  HloCtx *ctx = tl_ctx_new(threads);
  HloModule *m = NULL;
  HloExecutable *e = NULL;
  HloBuffer *r = NULL;
  ck_assert_int_eq(hlo_module_parse(ctx, text, strlen(text), "test.hlo", &m), HLO_OK);
  ck_assert_int_eq(hlo_compile(ctx, m, NULL, &e), HLO_OK);
  FusedCount c = {kind, 0, 0};
  ck_assert_int_eq(hlo_executable_set_observer(e, count_fused, &c,
                                               HLO_OBSERVE_AFTER | HLO_OBSERVE_NO_OPERANDS),
                   HLO_OK);
  if (hlo_execute(e, NULL, 0, &r) != HLO_OK) ck_abort_msg("%s", hlo_ctx_diagnostics(ctx));
  char *t = literal(ctx, r);
  *count = c.n;
  if (reduces) *reduces = c.reduces;
  hlo_buffer_free(r);
  hlo_executable_free(e);
  hlo_module_free(m);
  hlo_ctx_free(ctx);
  return t;
}

/* run_fused counting dot chains. */
static char *run_chains(const char *text, int threads, int *chains) {
  return run_fused(text, threads, 2, chains, NULL);
}

/* text gives want as one dot chain on 1 and 2 threads, for each block size
 * rows[i] (HLORUN_CHAIN_ROWS; NULL: the default), and unfused the same. */
static void expect_chained(const char *text, const char *want, const char *const *rows,
                           int nrows) {
  for (int threads = 1; threads <= 2; threads++)
    for (int r = 0; r < nrows; r++) {
      if (rows[r]) setenv("HLORUN_CHAIN_ROWS", rows[r], 1);
      int chains = 0;
      char *t = run_chains(text, threads, &chains);
      unsetenv("HLORUN_CHAIN_ROWS");
      ck_assert_str_eq(t, want);
      ck_assert_int_eq(chains, 1);
      hlo_free(t);
    }
  char *plain = run_text(text, false, 1);
  ck_assert_str_eq(plain, want);
  hlo_free(plain);
}

START_TEST(bf16_row_reductions_fuse) {
  /* bf16 rows reduced inside one fused group, as the reduce kernel folds
   * them: the maximum, and the sum accumulated wide and rounded once (row
   * 0: 1 + 2^-8 + 2^-8 = 1 + 2^-7, where rounding each step to bf16 would
   * stay at 1). r = x - max + sum: row 0 {1 + 2^-7, 3/256, 3/256}, row 1
   * (max 3, sum 1.5) {-3.5, -1, 1.5}. */
  const char *text = "HloModule t\n"
                     "max16 {\n  a = bf16[] parameter(0)\n  b = bf16[] parameter(1)\n"
                     "  ROOT m = bf16[] maximum(a, b)\n}\n"
                     "add16 {\n  a = bf16[] parameter(0)\n  b = bf16[] parameter(1)\n"
                     "  ROOT s = bf16[] add(a, b)\n}\n"
                     "ENTRY main {\n"
                     "  x = bf16[2,3] constant({{1, 0.00390625, 0.00390625}, {-2, 0.5, 3}})\n"
                     "  ninf = bf16[] constant(-inf)\n  zero = bf16[] constant(0)\n"
                     "  mx = bf16[2] reduce(x, ninf), dimensions={1}, to_apply=max16\n"
                     "  mxb = bf16[2,3] broadcast(mx), dimensions={0}\n"
                     "  d = bf16[2,3] subtract(x, mxb)\n"
                     "  sm = bf16[2] reduce(x, zero), dimensions={1}, to_apply=add16\n"
                     "  smb = bf16[2,3] broadcast(sm), dimensions={0}\n"
                     "  ROOT r = bf16[2,3] add(d, smb)\n}\n";
  /* (printed shortest: 1 + 2^-7 as 1.008, 3/256 as 0.01172) */
  const char *want = "bf16[2,3] {{1.008, 0.01172, 0.01172}, {-3.5, -1, 1.5}}";
  for (int threads = 1; threads <= 2; threads++) {
    int groups = 0, reduces = -1;
    char *t = run_fused(text, threads, 1, &groups, &reduces);
    ck_assert_str_eq(t, want);
    ck_assert_int_eq(groups, 1);
    ck_assert_int_eq(reduces, 0);   /* both reductions inside the group */
    hlo_free(t);
  }
  char *plain = run_text(text, false, 1);
  ck_assert_str_eq(plain, want);
  hlo_free(plain);
}
END_TEST

START_TEST(dot_chain_attention_by_hand) {
  /* Scores q.k^T are 0 or -1000 (k's rows are unit vectors, q's entries 0
   * or -1000); scaled by 0.125, exp(-125 - 0) underflows to 0, so the
   * softmax gives 1/count on the allowed columns: rows 0 and 1 allow two
   * columns (1/2), row 2 all four (1/4). Then probs.v is an exact mean of
   * v's allowed rows. Batch 0: k rows e0 e0 e1 e1, v rows (j+1, 10(j+1));
   * batch 1: k rows e1 e0 e0 e1, v rows ((j+1)^2, -(j+1)). Operands keep
   * the batch dimension in the middle or last (batch offsets, strides). */
  char text[4096];
  snprintf(text, sizeof text,
           "HloModule t\n%s"
           "ENTRY main {\n"
           "  q = f32[3,2,2] constant({{{0, -1000}, {0, -1000}}, {{-1000, 0}, {-1000, 0}},"
           " {{0, 0}, {0, 0}}})\n"
           "  k = f32[2,4,2] constant({{{1, 0}, {1, 0}, {0, 1}, {0, 1}},"
           " {{0, 1}, {1, 0}, {1, 0}, {0, 1}}})\n"
           "  v = f32[4,2,2] constant({{{1, 10}, {1, -1}}, {{2, 20}, {4, -2}}, {{3, 30}, {9, -3}},"
           " {{4, 40}, {16, -4}}})\n"
           "  s = f32[2,3,4] dot(q, k), lhs_batch_dims={1}, lhs_contracting_dims={2},"
           " rhs_batch_dims={0}, rhs_contracting_dims={2}\n"
           "  c = f32[] constant(0.125)\n  cb = f32[2,3,4] broadcast(c), dimensions={}\n"
           "  x = f32[2,3,4] multiply(s, cb)\n"
           "  ninf = f32[] constant(-inf)\n  zero = f32[] constant(0)\n"
           "  mx = f32[2,3] reduce(x, ninf), dimensions={2}, to_apply=max\n"
           "  mxb = f32[2,3,4] broadcast(mx), dimensions={0,1}\n"
           "  sh = f32[2,3,4] subtract(x, mxb)\n  e = f32[2,3,4] exponential(sh)\n"
           "  sm = f32[2,3] reduce(e, zero), dimensions={2}, to_apply=add\n"
           "  smb = f32[2,3,4] broadcast(sm), dimensions={0,1}\n"
           "  p = f32[2,3,4] divide(e, smb)\n"
           "  ROOT o = f32[2,3,2] dot(p, v), lhs_batch_dims={0}, lhs_contracting_dims={2},"
           " rhs_batch_dims={1}, rhs_contracting_dims={0}\n}\n",
           ADD_MAX);
  const char *want = "f32[2,3,2] {{{1.5, 15}, {3.5, 35}, {2.5, 25}}, "
                     "{{6.5, -2.5}, {8.5, -2.5}, {7.5, -2.5}}}";
  static const char *const rows[] = {NULL, "1", "2"};   /* blocks of 3, 1 and 2 rows */
  expect_chained(text, want, rows, 3);
}
END_TEST

START_TEST(dot_chain_bf16_by_hand) {
  /* A bf16 attention: scores q.k^T rounded to bf16 (row 0: 1 + 2^-8, a tie,
   * rounds to even 1; and 1), softmax in f32 over the converted scores
   * (1/2 each in both rows), probabilities converted to bf16 (0.5 exactly),
   * then probs.v rounded to bf16: 0.5 * 256 + 0.5 * 1 = 128.5, a tie, rounds
   * to even 128; 0.5 * 3 + 0.5 * 4 = 3.5 exactly. */
  char text[4096];
  snprintf(text, sizeof text,
           "HloModule t\n%s"
           "ENTRY main {\n"
           "  q = bf16[2,2] constant({{1, 1}, {0, 0}})\n"
           "  k = bf16[2,2] constant({{1, 0.00390625}, {1, 0}})\n"
           "  v = bf16[2,2] constant({{256, 3}, {1, 4}})\n"
           "  s = bf16[2,2] dot(q, k), lhs_contracting_dims={1}, rhs_contracting_dims={1}\n"
           "  sg = f32[2,2] convert(s)\n"
           "  c = f32[] constant(0.125)\n  cb = f32[2,2] broadcast(c), dimensions={}\n"
           "  x = f32[2,2] multiply(sg, cb)\n"
           "  ninf = f32[] constant(-inf)\n  zero = f32[] constant(0)\n"
           "  mx = f32[2] reduce(x, ninf), dimensions={1}, to_apply=max\n"
           "  mxb = f32[2,2] broadcast(mx), dimensions={0}\n"
           "  sh = f32[2,2] subtract(x, mxb)\n  e = f32[2,2] exponential(sh)\n"
           "  sm = f32[2] reduce(e, zero), dimensions={1}, to_apply=add\n"
           "  smb = f32[2,2] broadcast(sm), dimensions={0}\n"
           "  p = f32[2,2] divide(e, smb)\n"
           "  pc = bf16[2,2] convert(p)\n"
           "  ROOT o = bf16[2,2] dot(pc, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
           "}\n",
           ADD_MAX);
  static const char *const rows[] = {NULL};
  expect_chained(text, "bf16[2,2] {{128, 3.5}, {128, 3.5}}", rows, 1);
}
END_TEST

START_TEST(dot_chain_not_formed_when_a_value_escapes) {
  /* The scores are also a result: the dots run alone (no chain), and the
   * values are the same: scores {2, 0} and {0, 0}... row softmax, times v. */
  char text[2048];
  snprintf(text, sizeof text,
           "HloModule t\n%s"
           "ENTRY main {\n"
           "  q = f32[2,2] constant({{1, 0}, {0, 0}})\n"
           "  k = f32[2,2] constant({{2, 0}, {0, 0}})\n"
           "  v = f32[2,2] constant({{1, 2}, {3, 4}})\n"
           "  s = f32[2,2] dot(q, k), lhs_contracting_dims={1}, rhs_contracting_dims={1}\n"
           "  zero = f32[] constant(0)\n"
           "  sm = f32[2] reduce(s, zero), dimensions={1}, to_apply=add\n"
           "  smb = f32[2,2] broadcast(sm), dimensions={0}\n"
           "  p = f32[2,2] subtract(s, smb)\n"
           "  o = f32[2,2] dot(p, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
           "  ROOT t = (f32[2,2], f32[2,2]) tuple(o, s)\n}\n",
           ADD_MAX);
  /* s = {{2, 0}, {0, 0}}; rows minus their sums: p = {{0, -2}, {0, 0}};
   * p.v = {{-6, -8}, {0, 0}}. */
  int chains = -1;
  char *t = run_chains(text, 2, &chains);
  ck_assert_str_eq(t, "(f32[2,2] {{-6, -8}, {0, 0}}, f32[2,2] {{2, 0}, {0, 0}})");
  ck_assert_int_eq(chains, 0);
  hlo_free(t);
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
  tcase_add_test(tc, scalar_and_row_operands_either_side);
  tcase_add_test(tc, fused_chain_allocates_only_its_result);
  tcase_add_test(tc, while_updates_in_place);
  tcase_add_test(tc, threaded_long_sum_is_exact);
  tcase_add_test(tc, large_result_is_streamed_exactly);
  tcase_add_test(tc, row_group_normalises_rows);
  tcase_add_test(tc, row_reduce_root_sums_rows);
  tcase_add_test(tc, row_group_softmax_matches_unfused_bits);
  tcase_add_test(tc, row_value_used_outside_stays_correct);
  tcase_add_test(tc, row_group_in_row_space_and_bf16);
  tcase_add_test(tc, row_group_registers_count_against_memory_limit);
  tcase_add_test(tc, bf16_chain_through_table_has_direct_bits);
  tcase_add_test(tc, large_table_result_is_streamed_exactly);
  tcase_add_test(tc, u8_chain_through_table_is_exact);
  tcase_add_test(tc, position_dependent_groups_keep_their_bits);
  tcase_add_test(tc, iota_fused_one_hot_by_hand);
  tcase_add_test(tc, iota_fused_causal_softmax_by_hand);
  tcase_add_test(tc, iota_fused_element_types_by_hand);
  tcase_add_test(tc, dot_chain_attention_by_hand);
  tcase_add_test(tc, bf16_row_reductions_fuse);
  tcase_add_test(tc, dot_chain_bf16_by_hand);
  tcase_add_test(tc, dot_chain_not_formed_when_a_value_escapes);
  suite_add_tcase(s, tc);
  return tl_main(s);
}
