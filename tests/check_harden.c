/* check_harden.c: resource limits through the public API: iterations per
 * while loop, the run's time limit, recursion and call depth rejected at
 * plan time, the memory limit (values and kernel scratch: dot, reduce, fft,
 * cholesky, topk, the TopK custom call, batch norm) with errors naming
 * the instruction, nesting in literal inputs, and that saving a result
 * never leaves a partial file. Expected texts are the documented messages;
 * values are worked out by hand. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <unistd.h>
#include "hlorun.h"
#include "ir/ir.h"
#include "interp/valio.h"
#include "tests/testlib.h"

static HloCtx *ctx;

static void setup(void) { ctx = tl_ctx_new(1); }
static void teardown(void) { hlo_ctx_free(ctx); }

static HloModule *parse(const char *text) {
  HloModule *m = NULL;
  HloStatus st = hlo_module_parse(ctx, text, strlen(text), "t.hlo", &m);
  ck_assert_msg(st == HLO_OK, "parse: %s", hlo_ctx_diagnostics(ctx));
  return m;
}

static void assert_diag(const char *want) {
  const char *d = hlo_ctx_diagnostics(ctx);
  ck_assert_msg(strstr(d, want) != NULL, "diagnostics lack '%s':\n%s", want, d);
}

/* Counts from the parameter up to 10: exactly 10 body iterations. */
static const char *counting =
  "HloModule counting\n"
  "\n"
  "cond {\n"
  "  p = s32[] parameter(0)\n"
  "  ten = s32[] constant(10)\n"
  "  ROOT lt = pred[] compare(p, ten), direction=LT\n"
  "}\n"
  "\n"
  "body {\n"
  "  p = s32[] parameter(0)\n"
  "  one = s32[] constant(1)\n"
  "  ROOT n = s32[] add(p, one)\n"
  "}\n"
  "\n"
  "ENTRY main {\n"
  "  x = s32[] parameter(0)\n"
  "  ROOT w = s32[] while(x), condition=cond, body=body\n"
  "}\n";

static HloStatus run_counting(int64_t max_iter, double timeout, int32_t start, int32_t *got) {
  HloModule *m = parse(counting);
  HloRunOptions ro = {.struct_size = sizeof ro, .max_iterations = max_iter, .timeout = timeout};
  HloExecutable *e = NULL;
  HloBuffer *in = NULL, *res = NULL;
  ck_assert_int_eq(hlo_compile(ctx, m, &ro, &e), HLO_OK);
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_S32, NULL, 0, &start, &in), HLO_OK);
  HloStatus st = hlo_execute(e, &in, 1, &res);
  if (st == HLO_OK) *got = *(const int32_t *)hlo_buffer_data(res);
  hlo_buffer_free(res);
  hlo_buffer_free(in);
  hlo_executable_free(e);
  hlo_module_free(m);
  return st;
}

START_TEST(iterations_exact_limit_passes) {
  int32_t got = -1;
  ck_assert_int_eq(run_counting(10, 0, 0, &got), HLO_OK);
  ck_assert_int_eq(got, 10);
}
END_TEST

START_TEST(iterations_one_over_fails) {
  int32_t got = -1;
  ck_assert_int_eq(run_counting(9, 0, 0, &got), HLO_RUNTIME_ERROR);
  assert_diag("t.hlo:17:8: error: in w (while): the loop did not finish within 9 iterations "
              "(--max-iterations)");
}
END_TEST

START_TEST(iterations_zero_trip_loop) {
  int32_t got = -1;   /* starts at 10: the body never runs, even with limit 1 */
  ck_assert_int_eq(run_counting(1, 0, 10, &got), HLO_OK);
  ck_assert_int_eq(got, 10);
}
END_TEST

START_TEST(timeout_stops_endless_loop) {
  /* Counting down from 0 with a "< 10" condition never ends (s32 wraps
   * after 2^31 steps, far beyond the limit). */
  const char *endless =
    "HloModule endless\n"
    "cond {\n  p = s32[] parameter(0)\n  ROOT t = pred[] constant(true)\n}\n"
    "body {\n  p = s32[] parameter(0)\n  ROOT n = s32[] negate(p)\n}\n"
    "ENTRY main {\n  x = s32[] parameter(0)\n"
    "  ROOT w = s32[] while(x), condition=cond, body=body\n}\n";
  HloModule *m = parse(endless);
  HloRunOptions ro = {.struct_size = sizeof ro, .timeout = 0.2};
  HloExecutable *e = NULL;
  HloBuffer *in = NULL, *res = NULL;
  int32_t zero = 0;
  ck_assert_int_eq(hlo_compile(ctx, m, &ro, &e), HLO_OK);
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_S32, NULL, 0, &zero, &in), HLO_OK);
  ck_assert_int_eq(hlo_execute(e, &in, 1, &res), HLO_RUNTIME_ERROR);
  assert_diag("time limit of 0.2 seconds exceeded (--timeout)");
  ck_assert_ptr_null(res);
  /* The executable stays usable: the next run gets a fresh deadline. */
  hlo_ctx_clear_diagnostics(ctx);
  ck_assert_int_eq(hlo_execute(e, &in, 1, &res), HLO_RUNTIME_ERROR);
  assert_diag("time limit of 0.2 seconds exceeded");
  hlo_buffer_free(in);
  hlo_executable_free(e);
  hlo_module_free(m);
}
END_TEST

START_TEST(bad_limits_rejected) {
  HloModule *m = parse(counting);
  HloExecutable *e = NULL;
  HloRunOptions ro = {.struct_size = sizeof ro, .max_iterations = -1};
  ck_assert_int_eq(hlo_compile(ctx, m, &ro, &e), HLO_INVALID_ARGUMENT);
  ro.max_iterations = 0;
  ro.timeout = -1;
  ck_assert_int_eq(hlo_compile(ctx, m, &ro, &e), HLO_INVALID_ARGUMENT);
  hlo_module_free(m);
}
END_TEST

/* f calls g, g calls h; the tests rewire the calls into cycles (the text
 * syntax cannot express one: computations are defined before use). */
static const char *chain =
  "HloModule chain\n"
  "h {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p)\n}\n"
  "g {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=h\n}\n"
  "f {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=g\n}\n"
  "ENTRY main {\n  x = f32[] parameter(0)\n  ROOT r = f32[] call(x), to_apply=f\n}\n";

static HloComputation *comp(HloModule *m, const char *name) {
  for (int32_t i = 0; i < m->ncomps; i++)
    if (strcmp(m->comps[i]->name, name) == 0) return m->comps[i];
  ck_abort_msg("no computation %s", name);
  return NULL;
}

START_TEST(self_recursion_rejected) {
  HloModule *m = parse(chain);
  HloComputation *g = comp(m, "g");
  g->root->called[0].comp = g;   /* g calls itself */
  HloExecutable *e = NULL;
  ck_assert_int_eq(hlo_compile(ctx, m, NULL, &e), HLO_RUNTIME_ERROR);
  ck_assert_ptr_null(e);
  assert_diag("in c (call): computation g calls itself: recursion is not allowed in HLO");
  hlo_module_free(m);
}
END_TEST

START_TEST(mutual_recursion_rejected) {
  HloModule *m = parse(chain);
  HloComputation *f = comp(m, "f"), *g = comp(m, "g");
  g->root->called[0].comp = f;   /* f -> g -> f */
  HloExecutable *e = NULL;
  ck_assert_int_eq(hlo_compile(ctx, m, NULL, &e), HLO_RUNTIME_ERROR);
  assert_diag("computation g calls f, which is already running further up the call chain "
              "(through f): recursion is not allowed in HLO");
  hlo_module_free(m);
}
END_TEST

/* c0 calls c1 ... calls c{n-1} (negate): nested n+1 levels from ENTRY. */
static char *nested_calls(int n) {
  size_t cap = (size_t)n * 120 + 200, len = 0;
  char *t = malloc(cap);
  len += (size_t)snprintf(t + len, cap - len, "HloModule deep\nc%d {\n  p = f32[] parameter(0)\n"
                          "  ROOT r = f32[] negate(p)\n}\n", n - 1);
  for (int i = n - 2; i >= 0; i--)
    len += (size_t)snprintf(t + len, cap - len, "c%d {\n  p = f32[] parameter(0)\n"
                            "  ROOT r = f32[] call(p), to_apply=c%d\n}\n", i, i + 1);
  snprintf(t + len, cap - len, "ENTRY main {\n  x = f32[] parameter(0)\n"
           "  ROOT r = f32[] call(x), to_apply=c0\n}\n");
  return t;
}

START_TEST(call_depth_bounded) {
  char *ok = nested_calls(200), *deep = nested_calls(300);
  HloModule *m = parse(ok);
  HloBuffer *in = NULL, *res = NULL;
  float one = 1;
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_F32, NULL, 0, &one, &in), HLO_OK);
  ck_assert_int_eq(hlo_run(ctx, m, &in, 1, &res), HLO_OK);
  ck_assert_float_eq(*(const float *)hlo_buffer_data(res), -1.0f);   /* one negate */
  hlo_buffer_free(res);
  hlo_module_free(m);
  m = parse(deep);
  HloExecutable *e = NULL;
  ck_assert_int_eq(hlo_compile(ctx, m, NULL, &e), HLO_RUNTIME_ERROR);
  assert_diag("computations call each other more than 256 levels deep");
  hlo_module_free(m);
  hlo_buffer_free(in);
  free(ok);
  free(deep);
}
END_TEST

/* Runs text (as file) with threads=1 under a memory limit of `limit` bytes
 * on the inputs; returns the status, the diagnostics in diag (copied) and
 * the result in *res (NULL on failure). Values the run makes (results,
 * scratch) count; the caller's inputs do not. */
static HloStatus run_limited(size_t limit, const char *file, const char *text, HloBuffer **in,
                             int nin, HloBuffer **res, char *diag, size_t ndiag) {
  HloCtx *small = tl_ctx_limited(1, limit);
  HloModule *m = NULL;
  ck_assert_int_eq(hlo_module_parse(small, text, strlen(text), file, &m), HLO_OK);
  *res = NULL;
  HloStatus st = hlo_run(small, m, in, nin, res);
  snprintf(diag, ndiag, "%s", hlo_ctx_diagnostics(small));
  hlo_module_free(m);
  hlo_ctx_free(small);
  return st;
}

START_TEST(memory_limit_names_instruction) {
  /* 1000x1000 f32 is 4 MB of result: over the 1 MiB limit. */
  const char *text = "HloModule big\nENTRY main {\n  x = f32[] parameter(0)\n"
                     "  ROOT b = f32[1000,1000] broadcast(x), dimensions={}\n}\n";
  HloBuffer *in = NULL, *res = NULL;
  float one = 1;
  char d[4096];
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_F32, NULL, 0, &one, &in), HLO_OK);
  ck_assert_int_eq(run_limited(1 << 20, "big.hlo", text, &in, 1, &res, d, sizeof d), HLO_NOMEM);
  ck_assert_msg(strstr(d, "big.hlo:4:8: error: in b (broadcast): memory limit of 1048576 bytes "
                       "exceeded (0 in use, 4000000 more requested)"), "%s", d);
  hlo_buffer_free(in);
}
END_TEST

START_TEST(results_handed_out_stop_counting) {
  /* Each run's 4 MB result belongs to the caller once hlo_execute returns:
   * under a 5 MB limit, one executable runs again and again, whether the
   * caller frees the results or keeps them. (A result left counted against
   * the executor refused the second run: 4000000 in use.) */
  HloCtx *small = tl_ctx_limited(1, 5000000);
  const char *text = "HloModule big\nENTRY main {\n  x = f32[] parameter(0)\n"
                     "  ROOT b = f32[1000,1000] broadcast(x), dimensions={}\n}\n";
  HloModule *m = NULL;
  ck_assert_int_eq(hlo_module_parse(small, text, strlen(text), "big.hlo", &m), HLO_OK);
  HloExecutable *e = NULL;
  ck_assert_int_eq(hlo_compile(small, m, NULL, &e), HLO_OK);
  HloBuffer *in = NULL, *kept[3] = {NULL, NULL, NULL};
  float two = 2;
  ck_assert_int_eq(hlo_buffer_new_array(small, HLO_TYPE_F32, NULL, 0, &two, &in), HLO_OK);
  for (int r = 0; r < 4; r++) {
    HloBuffer *res = NULL;
    ck_assert_msg(hlo_execute(e, &in, 1, &res) == HLO_OK, "run %d: %s", r,
                  hlo_ctx_diagnostics(small));
    ck_assert_float_eq(((const float *)hlo_buffer_data(res))[999999], 2.0f);
    hlo_buffer_free(res);
  }
  for (int r = 0; r < 3; r++)
    ck_assert_msg(hlo_execute(e, &in, 1, &kept[r]) == HLO_OK, "kept run %d: %s", r,
                  hlo_ctx_diagnostics(small));
  for (int r = 0; r < 3; r++) hlo_buffer_free(kept[r]);
  hlo_buffer_free(in);
  hlo_executable_free(e);
  hlo_module_free(m);
  hlo_ctx_free(small);
}
END_TEST

START_TEST(scratch_counts_against_limit) {
  /* f64 operands of an f32 dot are converted to f32 scratch (256 KiB each,
   * plus a 64-byte header), after the 256 KiB result: the second
   * conversion no longer fits in 700 KiB, although every value does. */
  const char *text = "HloModule dotmem\nENTRY main {\n  a = f64[256,256] parameter(0)\n"
                     "  b = f64[256,256] parameter(1)\n  ROOT d = f32[256,256] dot(a, b), "
                     "lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
  HloBuffer *in[2] = {NULL, NULL}, *res = NULL;
  int64_t dims[2] = {256, 256};
  char d[4096];
  for (int i = 0; i < 2; i++)
    ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_F64, dims, 2, NULL, &in[i]), HLO_OK);
  ck_assert_int_eq(run_limited(700 << 10, "dot.hlo", text, in, 2, &res, d, sizeof d), HLO_NOMEM);
  ck_assert_msg(strstr(d, "dot.hlo:5:8: error: in d (dot): memory limit of 716800 bytes exceeded "
                       "(524352 in use, 262208 more requested)"), "%s", d);
  hlo_buffer_free(in[0]);
  hlo_buffer_free(in[1]);
}
END_TEST

START_TEST(gemm_panels_count) {
  /* A 64x64 f32 dot needs its 16384-byte result and packing panels (their
   * size depends on the CPU's kernel shape, so only "more than nothing" is
   * fixed here): with room for the result alone it fails naming the dot;
   * with room to spare, ones times ones gives 64 everywhere. */
  const char *text = "HloModule d\nENTRY main {\n  a = f32[64,64] parameter(0)\n"
                     "  b = f32[64,64] parameter(1)\n"
                     "  ROOT c = f32[64,64] dot(a, b), lhs_contracting_dims={1}, "
                     "rhs_contracting_dims={0}\n}\n";
  int64_t dims[2] = {64, 64};
  static float ones[64 * 64];
  for (int i = 0; i < 64 * 64; i++) ones[i] = 1.0f;
  HloBuffer *in[2] = {NULL, NULL}, *res = NULL;
  char d[4096];
  for (int k = 0; k < 2; k++)
    ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_F32, dims, 2, ones, &in[k]), HLO_OK);
  ck_assert_int_eq(run_limited(16384, "d.hlo", text, in, 2, &res, d, sizeof d), HLO_NOMEM);
  ck_assert_msg(strstr(d, "d.hlo:5:8: error: in c (dot): memory limit of 16384 bytes exceeded "
                       "(16384 in use, "), "%s", d);
  ck_assert_msg(strstr(d, "matrix multiply failed") == NULL, "%s", d);   /* one error */
  ck_assert_int_eq(run_limited(64 << 20, "d.hlo", text, in, 2, &res, d, sizeof d), HLO_OK);
  ck_assert_float_eq(((const float *)hlo_buffer_data(res))[64 * 64 - 1], 64.0f);
  hlo_buffer_free(res);
  for (int k = 0; k < 2; k++) hlo_buffer_free(in[k]);
}
END_TEST

/* The run fails at limit fail_at with the message msg, and succeeds at
 * limit pass_at (each scratch total worked out by hand in the tests). */
static void expect_limit(const char *file, const char *text, HloBuffer **in, int nin,
                         size_t fail_at, size_t pass_at, const char *msg) {
  HloBuffer *res = NULL;
  char d[4096];
  ck_assert_int_eq(run_limited(fail_at, file, text, in, nin, &res, d, sizeof d), HLO_NOMEM);
  ck_assert_msg(strstr(d, msg), "%s", d);
  ck_assert_int_eq(run_limited(pass_at, file, text, in, nin, &res, d, sizeof d), HLO_OK);
  hlo_buffer_free(res);
}

static const char *reduce_cols =
  "HloModule red\n"
  "add {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT s = s32[] add(a, b)\n}\n"
  "ENTRY main {\n  x = s32[4,1000] parameter(0)\n  z = s32[] parameter(1)\n"
  "  ROOT r = s32[1000] reduce(x, z), dimensions={0}, to_apply=add\n}\n";

START_TEST(reduce_scratch_counts) {
  /* Reducing the outer dimension of s32[4,1000] keeps a row of 1000 s32
   * accumulators per thread (4000 bytes) next to the 4000-byte result:
   * 8000 bytes fit exactly, 7999 do not. */
  int64_t dims[2] = {4, 1000};
  int32_t *ones = malloc(4000 * sizeof *ones), zero = 0;
  for (int i = 0; i < 4000; i++) ones[i] = 1;
  HloBuffer *in[2] = {NULL, NULL}, *res = NULL;
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_S32, dims, 2, ones, &in[0]), HLO_OK);
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_S32, NULL, 0, &zero, &in[1]), HLO_OK);
  char d[4096];
  ck_assert_int_eq(run_limited(7999, "red.hlo", reduce_cols, in, 2, &res, d, sizeof d), HLO_NOMEM);
  ck_assert_msg(strstr(d, "red.hlo:10:8: error: in r (reduce): memory limit of 7999 bytes exceeded "
                       "(4000 in use, 4000 more requested)"), "%s", d);
  ck_assert_int_eq(run_limited(8000, "red.hlo", reduce_cols, in, 2, &res, d, sizeof d), HLO_OK);
  const int32_t *r = hlo_buffer_data(res);
  ck_assert_int_eq(r[0], 4);
  ck_assert_int_eq(r[999], 4);
  hlo_buffer_free(res);
  hlo_buffer_free(in[0]);
  hlo_buffer_free(in[1]);
  free(ones);
}
END_TEST

/* fft of one c64[N] line, transformed at length len (zero-padded past N;
 * the result keeps the operand's shape). */
static void fft_text(char *buf, size_t n, int N, int len) {
  snprintf(buf, n, "HloModule f\nENTRY main {\n  x = c64[%d] parameter(0)\n"
           "  ROOT f = c64[%d] fft(x), fft_type=FFT, fft_length={%d}\n}\n", N, N, len);
}

START_TEST(fft_scratch_counts) {
  /* c64[6] padded to 8: result 48 bytes; the c128 work array 8*16 = 128
   * bytes is a scratch block of 192 (64-byte header, rounded to 64); then
   * the length-8 plan (twiddles and buffer, 2*8*16 = 256) and the line
   * buffer (128): 384 more. 48 + 192 + 384 = 624 fit exactly; 623 do not.
   * Unpadded (c64[8]), the lines go straight from the operand to the
   * result: 64 + 384 = 448 fit, 447 do not. */
  char text[256], d[4096];
  fft_text(text, sizeof text, 6, 8);
  float impulse[16] = {1};
  int64_t n = 6;
  HloBuffer *in = NULL, *res = NULL;
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_C64, &n, 1, impulse, &in), HLO_OK);
  ck_assert_int_eq(run_limited(623, "f.hlo", text, &in, 1, &res, d, sizeof d), HLO_NOMEM);
  ck_assert_msg(strstr(d, "f.hlo:4:8: error: in f (fft): memory limit of 623 bytes exceeded "
                       "(240 in use, 384 more requested)"), "%s", d);
  /* Below the work array: 48 in use, 192 requested. */
  ck_assert_int_eq(run_limited(239, "f.hlo", text, &in, 1, &res, d, sizeof d), HLO_NOMEM);
  ck_assert_msg(strstr(d, "f.hlo:4:8: error: in f (fft): memory limit of 239 bytes exceeded "
                       "(48 in use, 192 more requested)"), "%s", d);
  ck_assert_int_eq(run_limited(624, "f.hlo", text, &in, 1, &res, d, sizeof d), HLO_OK);
  const float *r = hlo_buffer_data(res);   /* the DFT of an impulse: all ones */
  for (int i = 0; i < 6; i++) {
    ck_assert_float_eq_tol(r[2 * i], 1.0f, 1e-6f);
    ck_assert_float_eq_tol(r[2 * i + 1], 0.0f, 1e-6f);
  }
  hlo_buffer_free(res);
  hlo_buffer_free(in);

  fft_text(text, sizeof text, 8, 8);
  n = 8;
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_C64, &n, 1, impulse, &in), HLO_OK);
  expect_limit("f.hlo", text, &in, 1, 447, 448,
               "f.hlo:4:8: error: in f (fft): memory limit of 447 bytes exceeded "
               "(64 in use, 384 more requested)");
  hlo_buffer_free(in);
}
END_TEST

START_TEST(fft_bluestein_scratch_counts) {
  /* c64[67] (67 is a prime above the largest radix: Bluestein), straight
   * from operand to result: result 536 bytes. The plan: chirp 67*16 =
   * 1072, kernel and buffer of the power-of-two length 256 >= 2*67-1
   * (2*4096), and the length-256 plan under it (2*4096): 17456; plus the
   * line (1072): 18528 more. */
  char text[256];
  fft_text(text, sizeof text, 67, 67);
  int64_t n = 67;
  HloBuffer *in = NULL;
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_C64, &n, 1, NULL, &in), HLO_OK);
  expect_limit("f.hlo", text, &in, 1, 10000, 536 + 18528,
               "f.hlo:4:8: error: in f (fft): memory limit of 10000 bytes exceeded "
               "(536 in use, 18528 more requested)");
  hlo_buffer_free(in);
}
END_TEST

START_TEST(linalg_topk_scratch_counts) {
  /* cholesky of f32[2,4,4]: result 128 bytes; three c128 4x4 matrices
   * (3*16*16 = 768) in one scratch block of 832. */
  const char *chol = "HloModule c\nENTRY main {\n  a = f32[2,4,4] parameter(0)\n"
                     "  ROOT l = f32[2,4,4] cholesky(a), lower=true\n}\n";
  int64_t cd[3] = {2, 4, 4};
  HloBuffer *in = NULL;
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_F32, cd, 3, NULL, &in), HLO_OK);
  expect_limit("c.hlo", chol, &in, 1, 959, 960,
               "c.hlo:4:8: error: in l (cholesky): memory limit of 959 bytes exceeded "
               "(128 in use, 832 more requested)");
  hlo_buffer_free(in);
  /* topk k=3 of f32[2,100]: results 2*3*4 = 24 bytes each; the thread's
   * key table holds two rows of 100 (key, index) pairs: 100*2*16 + 1. */
  const char *topk = "HloModule t\nENTRY main {\n  x = f32[2,100] parameter(0)\n"
                     "  ROOT t = (f32[2,3], s32[2,3]) topk(x), k=3, largest=true\n}\n";
  int64_t td[2] = {2, 100};
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_F32, td, 2, NULL, &in), HLO_OK);
  expect_limit("t.hlo", topk, &in, 1, 3000, 48 + 3201,
               "t.hlo:4:8: error: in t (topk): memory limit of 3000 bytes exceeded "
               "(48 in use, 3201 more requested)");
  hlo_buffer_free(in);
}
END_TEST

START_TEST(builtin_topk_and_batch_norm_scratch_count) {
  /* The built-in TopK custom call of f32[2,100]: results 24 bytes each;
   * the handler's keys (int64) and two index arrays (int32) of one row of
   * 100: 100*16 = 1600 bytes. */
  const char *tk = "HloModule t\nENTRY main {\n  x = f32[2,100] parameter(0)\n"
                   "  ROOT t = (f32[2,3], s32[2,3]) custom-call(x), custom_call_target=\"TopK\"\n}\n";
  int64_t td[2] = {2, 100};
  HloBuffer *in[5] = {NULL}, *res = NULL;
  char d[4096];
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_F32, td, 2, NULL, &in[0]), HLO_OK);
  ck_assert_int_eq(run_limited(1647, "t.hlo", tk, in, 1, &res, d, sizeof d), HLO_NOMEM);
  ck_assert_msg(strstr(d, "t.hlo:4:8: error: in t (custom-call): memory limit of 1647 bytes "
                       "exceeded (48 in use, 1600 more requested)"), "%s", d);
  ck_assert_ptr_null(hlo_custom_call_in_progress());
  ck_assert_int_eq(run_limited(1648, "t.hlo", tk, in, 1, &res, d, sizeof d), HLO_OK);
  /* Once the handler returned, no custom call is said to be running (a
   * later crash must not be blamed on it). */
  ck_assert_ptr_null(hlo_custom_call_in_progress());
  hlo_buffer_free(res);
  hlo_buffer_free(in[0]);
  /* batch-norm-inference of f32[2,3] (feature 1): result 24 bytes; the
   * work block holds two double copies of the operand (2*6*8) and four
   * per-feature double arrays (4*3*8): 192 bytes, a 256-byte block. */
  const char *bn = "HloModule b\nENTRY main {\n  x = f32[2,3] parameter(0)\n"
                   "  s = f32[3] parameter(1)\n  o = f32[3] parameter(2)\n"
                   "  m = f32[3] parameter(3)\n  v = f32[3] parameter(4)\n"
                   "  ROOT y = f32[2,3] batch-norm-inference(x, s, o, m, v), epsilon=0.001, "
                   "feature_index=1\n}\n";
  int64_t xd[2] = {2, 3}, fd = 3;
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_F32, xd, 2, NULL, &in[0]), HLO_OK);
  for (int i = 1; i < 5; i++)
    ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_F32, &fd, 1, NULL, &in[i]), HLO_OK);
  ck_assert_int_eq(run_limited(279, "b.hlo", bn, in, 5, &res, d, sizeof d), HLO_NOMEM);
  ck_assert_msg(strstr(d, "b.hlo:8:8: error: in y (batch-norm-inference): memory limit of 279 "
                       "bytes exceeded (24 in use, 256 more requested)"), "%s", d);
  ck_assert_int_eq(run_limited(280, "b.hlo", bn, in, 5, &res, d, sizeof d), HLO_OK);
  hlo_buffer_free(res);
  for (int i = 0; i < 5; i++) hlo_buffer_free(in[i]);
}
END_TEST

START_TEST(literal_nesting_bounded) {
  /* 100 nested tuples around a scalar: more than the reader's 64 levels. */
  char text[1024];
  size_t n = 0;
  for (int i = 0; i < 100; i++) text[n++] = '(';
  n += (size_t)snprintf(text + n, sizeof text - n, "f32[] 1");
  for (int i = 0; i < 100; i++) text[n++] = ')';
  HlcArena a;
  hlc_arena_init(&a);
  HlcDiags d = {0};
  HliValue *v = NULL;
  ck_assert_int_eq(hli_literal_read(text, n, NULL, &a, "deep", &d, &v), -1);
  ck_assert_ptr_null(v);
  ck_assert_msg(d.n > 0 && strstr(d.v[0].text, "tuples nested more than 64 deep"), "%s",
                d.n ? d.v[0].text : "");
  hlc_diags_clear(&d);
  /* 64 levels are fine: ((...(f32[] 1)...)). */
  n = 0;
  for (int i = 0; i < 64; i++) text[n++] = '(';
  n += (size_t)snprintf(text + n, sizeof text - n, "f32[] 1");
  for (int i = 0; i < 64; i++) text[n++] = ')';
  ck_assert_int_eq(hli_literal_read(text, n, NULL, &a, "ok", &d, &v), 0);
  hli_value_unref(NULL, v);
  /* A declared size the text cannot hold is refused before allocating. */
  const char *huge = "f32[2000000000] {1}";
  ck_assert_int_eq(hli_literal_read(huge, strlen(huge), NULL, &a, "huge", &d, &v), -1);
  ck_assert_msg(d.n > 0 && strstr(d.v[0].text, "the literal declares more elements than its "
                                  "text holds"), "%s", d.n ? d.v[0].text : "");
  hlc_diags_clear(&d);
  hlc_arena_free(&a);
}
END_TEST

/* Saving: an unwritable target leaves neither a partial file nor a
 * temporary one, and an existing file is replaced only by a whole one. */
static int count_entries(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

START_TEST(failed_save_leaves_no_file) {
  char dir[] = "/tmp/check_harden_saveXXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char path[256];
  float v[3] = {1, 2, 3};
  int64_t dim = 3;
  HloBuffer *b = NULL, *t = NULL;
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_F32, &dim, 1, v, &b), HLO_OK);
  /* A tuple cannot be written to .npy: the save fails before writing. */
  ck_assert_int_eq(hlo_buffer_new_tuple(ctx, &b, 1, &t), HLO_OK);
  snprintf(path, sizeof path, "%s/out.npy", dir);
  ck_assert_int_ne(hlo_buffer_save(ctx, t, path), HLO_OK);
  ck_assert_int_eq(count_entries(dir), 0);
  /* A good save, then a failing one onto the same path: the old file stays whole. */
  ck_assert_int_eq(hlo_buffer_save(ctx, b, path), HLO_OK);
  struct stat st0, st1;
  ck_assert_int_eq(stat(path, &st0), 0);
  ck_assert_int_ne(hlo_buffer_save(ctx, t, path), HLO_OK);
  ck_assert_int_eq(stat(path, &st1), 0);
  ck_assert_int_eq(st0.st_size, st1.st_size);
  ck_assert_int_eq(st0.st_ino, st1.st_ino);
  ck_assert_int_eq(count_entries(dir), 1);
  /* A directory that cannot be written: no temporary left anywhere. */
  if (geteuid() != 0) {
    chmod(dir, 0500);
    ck_assert_int_ne(hlo_buffer_save(ctx, b, path), HLO_OK);
    chmod(dir, 0700);
    ck_assert_int_eq(count_entries(dir), 1);
  }
  unlink(path);
  rmdir(dir);
  hlo_buffer_free(t);
  hlo_buffer_free(b);
}
END_TEST

int main(void) {
  Suite *s = suite_create("harden");
  TCase *lim = tcase_create("limits");
  tcase_add_checked_fixture(lim, setup, teardown);
  tcase_set_timeout(lim, 60);
  tcase_add_test(lim, iterations_exact_limit_passes);
  tcase_add_test(lim, iterations_one_over_fails);
  tcase_add_test(lim, iterations_zero_trip_loop);
  tcase_add_test(lim, timeout_stops_endless_loop);
  tcase_add_test(lim, bad_limits_rejected);
  tcase_add_test(lim, self_recursion_rejected);
  tcase_add_test(lim, mutual_recursion_rejected);
  tcase_add_test(lim, call_depth_bounded);
  tcase_add_test(lim, memory_limit_names_instruction);
  tcase_add_test(lim, results_handed_out_stop_counting);
  tcase_add_test(lim, scratch_counts_against_limit);
  tcase_add_test(lim, reduce_scratch_counts);
  tcase_add_test(lim, fft_scratch_counts);
  tcase_add_test(lim, fft_bluestein_scratch_counts);
  tcase_add_test(lim, linalg_topk_scratch_counts);
  tcase_add_test(lim, builtin_topk_and_batch_norm_scratch_count);
  tcase_add_test(lim, gemm_panels_count);
  tcase_add_test(lim, literal_nesting_bounded);
  suite_add_tcase(s, lim);
  TCase *files = tcase_create("files");
  tcase_add_checked_fixture(files, setup, teardown);
  tcase_add_test(files, failed_save_leaves_no_file);
  suite_add_tcase(s, files);
  return tl_main(s);
}
