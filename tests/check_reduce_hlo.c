/* check_reduce_hlo.c: whole HLO modules through the public API, for the
 * paths of the reduce area that call the computation per element (complex
 * reducers, lexicographic comparators, variadic reduce-window, TOTALORDER
 * selects), mixed-precision reduce and topk's attributes. Expected literals
 * are worked out by hand in the comments. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/testlib.h"

/* Runs a module without parameters; returns its result as literal text. */
static char *run_text(const char *text) {
  HloCtx *ctx = tl_ctx_new(0);
  HloStatus st;
  char *lit = tl_run_literal(ctx, text, NULL, 0, &st);
  if (st != HLO_OK) {
    const char *d = hlo_ctx_diagnostics(ctx);
    lit = strdup(d ? d : "error");
  }
  hlo_ctx_free(ctx);
  return lit;
}

static void expect(const char *module, const char *want) {
  char *got = run_text(module);
  ck_assert_ptr_nonnull(got);
  size_t n = strlen(got);
  while (n && (got[n - 1] == '\n' || got[n - 1] == ' ')) got[--n] = 0;
  ck_assert_str_eq(got, want);
  hlo_free(got);
}

/* The argmax computation (jnp.argmax's) on f32 values with index type IT. */
#define ARGMAX_COMP(IT)                                                       \
  "am {\n"                                                                    \
  "  a = f32[] parameter(0)\n  ai = " IT "[] parameter(1)\n"                 \
  "  b = f32[] parameter(2)\n  bi = " IT "[] parameter(3)\n"                 \
  "  gt = pred[] compare(a, b), direction=GT\n"                               \
  "  ne = pred[] compare(a, a), direction=NE\n  p = pred[] or(gt, ne)\n"      \
  "  eq = pred[] compare(a, b), direction=EQ\n"                               \
  "  lt = pred[] compare(ai, bi), direction=LT\n  t = pred[] and(eq, lt)\n"   \
  "  ip = pred[] or(p, t)\n  v = f32[] select(p, a, b)\n"                     \
  "  i = " IT "[] select(ip, ai, bi)\n"                                       \
  "  ROOT r = (f32[], " IT "[]) tuple(v, i)\n}\n"

START_TEST(argmax_over_iota_by_hand) {
  /* The index operand is iota along the reduced dimension, so the kernel
   * makes the coordinates instead of reading them: along the rows (an
   * inner run) and along the middle dimension (one coordinate per step).
   * x[0] = {1 5 5 2; 7 0 7 3; nan 4 9 nan}, x[1] = {2 2 2 2; -1 -3 6 6; 0 8 1 8}.
   * Rows: ties keep the first (5 at 1, 7 at 0, 2 at 0, 6 at 2, 8 at 1), the
   * first NaN wins (at 0). Columns (dim 1): {1,7,nan} -> nan at 2, {5,0,4}
   * -> 5 at 0, {5,7,9} -> 9 at 2, {2,3,nan} -> nan at 2; {2,-1,0} -> 2 at
   * 0, {2,-3,8} -> 8 at 2, {2,6,1} -> 6 at 1, {2,6,8} -> 8 at 2. */
  static const char *x =
      "  x = f32[2,3,4] constant({{{1, 5, 5, 2}, {7, 0, 7, 3}, {nan, 4, 9, nan}}, "
      "{{2, 2, 2, 2}, {-1, -3, 6, 6}, {0, 8, 1, 8}}})\n"
      "  ninf = f32[] constant(-inf)\n";
  char text[2048];
  snprintf(text, sizeof text,
           "HloModule t\n" ARGMAX_COMP("s32") "ENTRY main {\n%s"
           "  io = s32[2,3,4] iota(), iota_dimension=2\n  z = s32[] constant(0)\n"
           "  ROOT r = (f32[2,3], s32[2,3]) reduce(x, io, ninf, z), dimensions={2}, to_apply=am\n}\n",
           x);
  expect(text, "(f32[2,3] {{5, 7, nan}, {2, 6, 8}}, s32[2,3] {{1, 0, 0}, {0, 2, 1}})");
  snprintf(text, sizeof text,
           "HloModule t\n" ARGMAX_COMP("s64") "ENTRY main {\n%s"
           "  io = s64[2,3,4] iota(), iota_dimension=1\n  z = s64[] constant(0)\n"
           "  ROOT r = (f32[2,4], s64[2,4]) reduce(x, io, ninf, z), dimensions={1}, to_apply=am\n}\n",
           x);
  expect(text, "(f32[2,4] {{nan, 5, 9, nan}, {2, 8, 6, 8}}, s64[2,4] {{2, 0, 2, 2}, {0, 2, 1, 2}})");
}
END_TEST

/* The result of text on x (and, if ix, the index array) as literal text. */
static char *argmax_literal(const char *text, const float *x, const int32_t *ix, int64_t r,
                            int64_t c, int threads) {
  int64_t dims[2] = {r, c};
  TlArray in[2] = {{HLO_TYPE_F32, 2, dims, x}, {HLO_TYPE_S32, 2, dims, ix}};
  TlRun run = tl_run_arrays(threads, text, ix ? 2 : 1, in);
  char *lit = NULL;
  size_t len = 0;
  ck_assert_int_eq(hlo_buffer_to_literal(run.ctx, run.result, &lit, &len), HLO_OK);
  tl_run_done(&run);
  return lit;
}

START_TEST(argmax_over_iota_matches_read_indices) {
  /* f32[37,3001] with many ties (values in a range of 13), a unique row
   * maximum at a different place in each row and NaNs in some rows, argmax
   * over each dimension, on one and two threads: with iota as the index
   * operand (made, not read) the result is the one the same computation
   * gives reading the coordinates from a parameter. */
  enum { R = 37, C = 3001 };
  float *x = malloc(sizeof(float) * R * C);
  int32_t *cols = malloc(sizeof(int32_t) * R * C), *rows = malloc(sizeof(int32_t) * R * C);
  ck_assert(x && cols && rows);
  for (int64_t i = 0; i < (int64_t)R * C; i++) {
    x[i] = (float)((i * 7919) % 13) - 6.0f;
    cols[i] = (int32_t)(i % C);
    rows[i] = (int32_t)(i / C);
  }
  for (int64_t r = 0; r < R; r++) {   /* a unique row maximum anywhere along it; some NaNs */
    x[r * C + (r * 83 + 1500) % C] = 100.0f;
    if (r % 5 == 0) x[r * C + (r * 131 + 2500) % C] = NAN;
  }
  for (int dim = 0; dim < 2; dim++) {
    int64_t kept = dim ? R : C;
    char made[2048], read[2048];
    snprintf(made, sizeof made,
             "HloModule t\n" ARGMAX_COMP("s32") "ENTRY main {\n"
             "  x = f32[37,3001] parameter(0)\n  io = s32[37,3001] iota(), iota_dimension=%d\n"
             "  ninf = f32[] constant(-inf)\n  z = s32[] constant(0)\n"
             "  ROOT r = (f32[%lld], s32[%lld]) reduce(x, io, ninf, z), dimensions={%d}, "
             "to_apply=am\n}\n",
             dim, (long long)kept, (long long)kept, dim);
    snprintf(read, sizeof read,
             "HloModule t\n" ARGMAX_COMP("s32") "ENTRY main {\n"
             "  x = f32[37,3001] parameter(0)\n  io = s32[37,3001] parameter(1)\n"
             "  ninf = f32[] constant(-inf)\n  z = s32[] constant(0)\n"
             "  ROOT r = (f32[%lld], s32[%lld]) reduce(x, io, ninf, z), dimensions={%d}, "
             "to_apply=am\n}\n",
             (long long)kept, (long long)kept, dim);
    char *want = argmax_literal(read, x, dim ? cols : rows, R, C, 1);
    for (int threads = 1; threads <= 2; threads++) {
      char *got = argmax_literal(made, x, NULL, R, C, threads);
      ck_assert_msg(strcmp(got, want) == 0, "dim %d, %d threads: results differ", dim, threads);
      hlo_free(got);
    }
    hlo_free(want);
  }
  free(x);
  free(cols);
  free(rows);
}
END_TEST

/* Counts the iota instruction's events. */
static int count_iota(const HloEvent *e, void *user) {
  if (strcmp(e->opcode, "iota") == 0) ++*(int *)user;
  return 0;
}

/* Runs text on x (f32[256,1024]), observed or not; the result as literal text and
 * the executable's peak memory. */
static char *run_peak(const char *text, const float *x, bool observe, int *iota_events,
                      uint64_t *peak) {
  HloCtx *ctx = tl_ctx_new(1);
  HloBuffer *in = NULL;
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_F32, (int64_t[]){256, 1024}, 2, x, &in),
                   HLO_OK);
  HloModule *m = NULL;
  HloExecutable *e = NULL;
  HloBuffer *r = NULL;
  ck_assert_int_eq(hlo_module_parse(ctx, text, strlen(text), "test.hlo", &m), HLO_OK);
  ck_assert_int_eq(hlo_compile(ctx, m, NULL, &e), HLO_OK);
  if (observe)
    ck_assert_int_eq(hlo_executable_set_observer(e, count_iota, iota_events, HLO_OBSERVE_AFTER),
                     HLO_OK);
  ck_assert_int_eq(hlo_execute(e, &in, 1, &r), HLO_OK);
  *peak = hlo_executable_peak_memory(e);
  hlo_buffer_free(in);
  char *lit = NULL;
  size_t len = 0;
  ck_assert_int_eq(hlo_buffer_to_literal(ctx, r, &lit, &len), HLO_OK);
  hlo_buffer_free(r);
  hlo_executable_free(e);
  hlo_module_free(m);
  hlo_ctx_free(ctx);
  return lit;
}

START_TEST(argmax_iota_is_never_computed) {
  /* x[r][c] = c mod 7 over f32[256,1024], row r's maximum 100 at column
   * 4r: the argmax makes its own coordinates, so the 1 MiB iota is never
   * allocated (the peak is the two small results), unless an observer
   * watches, which sees the iota run and the same result. Where the iota
   * has another reader (a row sum, 0 + 1 + ... + 1023 = 523776), it is
   * computed. */
  static float x[256 * 1024];
  for (int r = 0; r < 256; r++)
    for (int c = 0; c < 1024; c++) x[r * 1024 + c] = c == 4 * r ? 100.0f : (float)(c % 7);
  static const char *head =
      "HloModule t\n" ARGMAX_COMP("s32")
      "add {\n  p = s32[] parameter(0)\n  q = s32[] parameter(1)\n  ROOT a = s32[] add(p, q)\n}\n"
      "ENTRY main {\n  x = f32[256,1024] parameter(0)\n"
      "  io = s32[256,1024] iota(), iota_dimension=1\n"
      "  ninf = f32[] constant(-inf)\n  z = s32[] constant(0)\n"
      "  am = (f32[256], s32[256]) reduce(x, io, ninf, z), dimensions={1}, to_apply=am\n"
      "  v = f32[256] get-tuple-element(am), index=0\n  i = s32[256] get-tuple-element(am), index=1\n";
  char text[4096];
  snprintf(text, sizeof text, "%s  ROOT out = (f32[256], s32[256]) tuple(v, i)\n}\n", head);
  uint64_t peak, peak_obs;
  int events = 0;
  char *plain = run_peak(text, x, false, &events, &peak);
  char *watched = run_peak(text, x, true, &events, &peak_obs);
  ck_assert_msg(peak < 8192, "peak %llu: the iota was allocated", (unsigned long long)peak);
  ck_assert_msg(peak_obs >= (1u << 20), "observed peak %llu: the iota did not run",
                (unsigned long long)peak_obs);
  ck_assert_int_eq(events, 1);   /* the observed run only */
  ck_assert_str_eq(plain, watched);
  for (int row = 0; row < 256; row++) {   /* "(f32[256] {100, 100, ...}, s32[256] {0, 4, 8, ...})" */
    char want[32];
    snprintf(want, sizeof want, row ? ", %d" : "{%d", 4 * row);
    ck_assert_msg(strstr(strchr(plain, 's'), want) != NULL, "row %d: index %d missing", row, 4 * row);
  }
  ck_assert_ptr_nonnull(strstr(plain, "f32[256] {100, 100, "));
  hlo_free(plain);
  hlo_free(watched);

  snprintf(text, sizeof text,
           "%s  sum = s32[256] reduce(io, z), dimensions={1}, to_apply=add\n"
           "  ROOT out = (f32[256], s32[256], s32[256]) tuple(v, i, sum)\n}\n",
           head);
  events = 0;
  char *both = run_peak(text, x, false, &events, &peak);
  ck_assert_ptr_nonnull(strstr(both, "s32[256] {523776, 523776, "));
  ck_assert_ptr_nonnull(strstr(both, "s32[256] {0, 4, 8, 12, "));
  hlo_free(both);
}
END_TEST

START_TEST(complex_max_reducer) {
  /* lexicographic max of complex numbers by (real, imag), per column:
   * (1,5) vs (1,7): equal real, 5 > 7 false -> (1,7); (2,0) beats (0,9);
   * (-1,1) vs (-1,0): 1 > 0 -> (-1,1) */
  expect("HloModule t\n"
         "cmax {\n"
         "  a = c64[] parameter(0)\n  b = c64[] parameter(1)\n"
         "  ra = f32[] real(a)\n  rb = f32[] real(b)\n"
         "  eq = pred[] compare(ra, rb), direction=EQ\n"
         "  gt = pred[] compare(ra, rb), direction=GT\n"
         "  ia = f32[] imag(a)\n  ib = f32[] imag(b)\n"
         "  igt = pred[] compare(ia, ib), direction=GT\n"
         "  p = pred[] select(eq, igt, gt)\n"
         "  ROOT r = c64[] select(p, a, b)\n}\n"
         "ENTRY main {\n"
         "  x = c64[2,3] constant({{(1,5), (2,0), (-1,1)}, {(1,7), (0,9), (-1,0)}})\n"
         "  init = c64[] constant((-inf, 0))\n"
         "  ROOT m = c64[3] reduce(x, init), dimensions={0}, to_apply=cmax\n}\n",
         "c64[3] {(1, 7), (2, 0), (-1, 1)}");
}
END_TEST

START_TEST(lexicographic_sort) {
  /* keys (k0, k1) = (2,5) (1,6) (2,4) (1,6): sorted (1,6)#1 (1,6)#3 (2,4)#2 (2,5)#0 */
  expect("HloModule t\n"
         "cmp {\n"
         "  a0 = s32[] parameter(0)\n  b0 = s32[] parameter(1)\n"
         "  a1 = s32[] parameter(2)\n  b1 = s32[] parameter(3)\n"
         "  a2 = s32[] parameter(4)\n  b2 = s32[] parameter(5)\n"
         "  lt0 = pred[] compare(a0, b0), direction=LT\n"
         "  eq0 = pred[] compare(a0, b0), direction=EQ\n"
         "  lt1 = pred[] compare(a1, b1), direction=LT\n"
         "  t = pred[] and(eq0, lt1)\n"
         "  ROOT r = pred[] or(lt0, t)\n}\n"
         "ENTRY main {\n"
         "  k0 = s32[4] constant({2, 1, 2, 1})\n"
         "  k1 = s32[4] constant({5, 6, 4, 6})\n"
         "  i = s32[4] iota(), iota_dimension=0\n"
         "  ROOT s = (s32[4], s32[4], s32[4]) sort(k0, k1, i), dimensions={0}, to_apply=cmp\n}\n",
         "(s32[4] {1, 1, 2, 2}, s32[4] {6, 6, 4, 5}, s32[4] {1, 3, 2, 0})");
}
END_TEST

START_TEST(variadic_reduce_window_argmax) {
  /* windows of 2 over (3,1,4,4): (3,#0) (4,#2) and a tie (4,#2) (4,#3) -> #2 */
  expect("HloModule t\n"
         "am {\n"
         "  v0 = f32[] parameter(0)\n  i0 = s32[] parameter(1)\n"
         "  v1 = f32[] parameter(2)\n  i1 = s32[] parameter(3)\n"
         "  gt = pred[] compare(v0, v1), direction=GT\n"
         "  ne = pred[] compare(v0, v0), direction=NE\n"
         "  pick = pred[] or(gt, ne)\n"
         "  eq = pred[] compare(v0, v1), direction=EQ\n"
         "  lt = pred[] compare(i0, i1), direction=LT\n"
         "  tie = pred[] and(eq, lt)\n"
         "  ipick = pred[] or(pick, tie)\n"
         "  sv = f32[] select(pick, v0, v1)\n"
         "  si = s32[] select(ipick, i0, i1)\n"
         "  ROOT t = (f32[], s32[]) tuple(sv, si)\n}\n"
         "ENTRY main {\n"
         "  x = f32[4] constant({3, 1, 4, 4})\n"
         "  i = s32[4] iota(), iota_dimension=0\n"
         "  ninf = f32[] constant(-inf)\n  z = s32[] constant(0)\n"
         "  ROOT r = (f32[3], s32[3]) reduce-window(x, i, ninf, z), window={size=2}, to_apply=am\n}\n",
         "(f32[3] {3, 4, 4}, s32[3] {0, 2, 2})");
}
END_TEST

static const char *sas_module(const char *operand, const char *cmptype) {
  static char buf[1024];
  snprintf(buf, sizeof buf,
           "HloModule t\n"
           "sel {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
           "  ROOT c = pred[] compare(a, b), direction=GE, type=%s\n}\n"
           "sc {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
           "  ROOT c = f32[] add(a, b)\n}\n"
           "ENTRY main {\n"
           "  x = f32[2] constant(%s)\n  s = f32[1] constant({5})\n  z = f32[] constant(0)\n"
           "  ROOT r = f32[2] select-and-scatter(x, s, z), window={size=2}, select=sel, scatter=sc\n}\n",
           cmptype, operand);
  return buf;
}

START_TEST(select_totalorder_zeros) {
  /* TOTALORDER: -0 >= +0 is false, so the window switches to the +0 */
  expect(sas_module("{-0, 0}", "TOTALORDER"), "f32[2] {0, 5}");
  /* FLOAT: -0 >= +0 holds: the first element stays selected */
  expect(sas_module("{-0, 0}", "FLOAT"), "f32[2] {5, 0}");
  expect(sas_module("{0, -0}", "TOTALORDER"), "f32[2] {5, 0}");
}
END_TEST

START_TEST(mixed_precision_reduce) {
  /* f32 sum 1.5 + 2.25 = 3.75, converted to the bf16 result (exact) */
  expect("HloModule t\n"
         "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n"
         "ENTRY main {\n"
         "  x = f32[2] constant({1.5, 2.25})\n  z = f32[] constant(0)\n"
         "  ROOT r = bf16[] reduce(x, z), dimensions={0}, to_apply=add\n}\n",
         "bf16[] 3.75");
}
END_TEST

START_TEST(topk_attributes) {
  const char *m = "HloModule t\nENTRY main {\n  x = f32[4] constant({1, 3, 3, 2})\n"
                  "  ROOT t = (f32[2], s32[2]) topk(x), k=2%s\n}\n";
  char buf[256];
  snprintf(buf, sizeof buf, m, "");
  expect(buf, "(f32[2] {3, 3}, s32[2] {1, 2})");   /* largest by default; ties: lower index */
  snprintf(buf, sizeof buf, m, ", largest=false");
  expect(buf, "(f32[2] {1, 2}, s32[2] {0, 3})");
}
END_TEST

START_TEST(reduce_generic_noncommutative) {
  /* to_apply = p1 - p0 (not a recognised reducer): folds as acc' = x - acc
   * from init 0 over (1, 2, 4): 1, 1, 3 */
  expect("HloModule t\n"
         "sub {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] subtract(b, a)\n}\n"
         "ENTRY main {\n"
         "  x = f32[3] constant({1, 2, 4})\n  z = f32[] constant(0)\n"
         "  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=sub\n}\n",
         "f32[] 3");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("reduce_hlo");
  TCase *t = tcase_create("modules");
  tcase_add_test(t, complex_max_reducer);
  tcase_add_test(t, lexicographic_sort);
  tcase_add_test(t, variadic_reduce_window_argmax);
  tcase_add_test(t, select_totalorder_zeros);
  tcase_add_test(t, mixed_precision_reduce);
  tcase_add_test(t, topk_attributes);
  tcase_add_test(t, reduce_generic_noncommutative);
  tcase_add_test(t, argmax_over_iota_by_hand);
  tcase_add_test(t, argmax_over_iota_matches_read_indices);
  tcase_add_test(t, argmax_iota_is_never_computed);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tl_main(suite()); }
