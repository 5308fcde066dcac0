/* check_harden.c: resource limits through the public API: iterations per
 * while loop, the run's time limit, recursion and call depth rejected at
 * plan time, the memory limit (values and kernel scratch) with errors naming
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
#include "parser/ir.h"
#include "interp/valio.h"

static HloCtx *ctx;

static void setup(void) {
  HloCtxOptions o = {.struct_size = sizeof o, .threads = 1};
  ck_assert_int_eq(hlo_ctx_new(&o, &ctx), HLO_OK);
}
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

START_TEST(memory_limit_names_instruction) {
  HloCtx *small;
  HloCtxOptions o = {.struct_size = sizeof o, .threads = 1, .max_memory = 1 << 20};
  ck_assert_int_eq(hlo_ctx_new(&o, &small), HLO_OK);
  /* 1000x1000 f32 is 4 MB of result: over the 1 MiB limit. */
  const char *text = "HloModule big\nENTRY main {\n  x = f32[] parameter(0)\n"
                     "  ROOT b = f32[1000,1000] broadcast(x), dimensions={}\n}\n";
  HloModule *m = NULL;
  ck_assert_int_eq(hlo_module_parse(small, text, strlen(text), "big.hlo", &m), HLO_OK);
  HloBuffer *in = NULL, *res = NULL;
  float one = 1;
  ck_assert_int_eq(hlo_buffer_new_array(small, HLO_TYPE_F32, NULL, 0, &one, &in), HLO_OK);
  ck_assert_int_eq(hlo_run(small, m, &in, 1, &res), HLO_NOMEM);
  const char *d = hlo_ctx_diagnostics(small);
  ck_assert_msg(strstr(d, "big.hlo:4:8: error: in b (broadcast): memory limit of 1048576 bytes "
                       "exceeded (0 in use, 4000000 more requested)"), "%s", d);
  hlo_buffer_free(in);
  hlo_module_free(m);
  hlo_ctx_free(small);
}
END_TEST

START_TEST(scratch_counts_against_limit) {
  /* f64 operands of an f32 dot are converted to f32 scratch (256 KiB each,
   * plus a 64-byte header), after the 256 KiB result: the second
   * conversion no longer fits in 700 KiB, although every value does. */
  HloCtx *small;
  HloCtxOptions o = {.struct_size = sizeof o, .threads = 1, .max_memory = 700 << 10};
  ck_assert_int_eq(hlo_ctx_new(&o, &small), HLO_OK);
  const char *text = "HloModule dotmem\nENTRY main {\n  a = f64[256,256] parameter(0)\n"
                     "  b = f64[256,256] parameter(1)\n  ROOT d = f32[256,256] dot(a, b), "
                     "lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
  HloModule *m = NULL;
  ck_assert_int_eq(hlo_module_parse(small, text, strlen(text), "dot.hlo", &m), HLO_OK);
  HloBuffer *in[2] = {NULL, NULL}, *res = NULL;
  int64_t dims[2] = {256, 256};
  for (int i = 0; i < 2; i++)
    ck_assert_int_eq(hlo_buffer_new_array(small, HLO_TYPE_F64, dims, 2, NULL, &in[i]), HLO_OK);
  ck_assert_int_eq(hlo_run(small, m, in, 2, &res), HLO_NOMEM);
  const char *d = hlo_ctx_diagnostics(small);
  ck_assert_msg(strstr(d, "dot.hlo:5:8: error: in d (dot): memory limit of 716800 bytes exceeded "
                       "(524352 in use, 262208 more requested)"), "%s", d);
  hlo_buffer_free(in[0]);
  hlo_buffer_free(in[1]);
  hlo_module_free(m);
  hlo_ctx_free(small);
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
  tcase_add_test(lim, scratch_counts_against_limit);
  tcase_add_test(lim, literal_nesting_bounded);
  suite_add_tcase(s, lim);
  TCase *files = tcase_create("files");
  tcase_add_checked_fixture(files, setup, teardown);
  tcase_add_test(files, failed_save_leaves_no_file);
  suite_add_tcase(s, files);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int bad = srunner_ntests_failed(r);
  srunner_free(r);
  return bad ? 1 : 0;
}
