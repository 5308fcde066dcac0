/* check_status.c: the status a failing public API call returns comes from
 * what failed, not from the words of its message: an instruction or a file
 * whose name says "memory", "not supported" or "does not match" does not
 * change it. Each case states the documented status of its failure:
 * HLO_UNSUPPORTED for a dot hlorun cannot run, HLO_NOMEM for the memory
 * limit, HLO_RUNTIME_ERROR for the iteration limit, HLO_TYPE_MISMATCH for an
 * input of another type or shape, HLO_IO_ERROR for a cut-short file. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hlorun.h"
#include "tests/testlib.h"

static HloCtx *ctx;
static char dir[] = "/tmp/hlorun_status_XXXXXX";

static void setup(void) {
  ctx = tl_ctx_new(1);
  ck_assert_ptr_nonnull(mkdtemp(dir));
}
static void teardown(void) {
  hlo_ctx_free(ctx);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
  strcpy(dir, "/tmp/hlorun_status_XXXXXX");
}

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

/* A file in the test's directory holding n bytes of data. */
static const char *put_file(const char *name, const void *data, size_t n) {
  static char path[256];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fwrite(data, 1, n, f), n);
  ck_assert_int_eq(fclose(f), 0);
  return path;
}

/* A version 1.0 .npy of descr and shape text: a 128-byte preamble (magic,
 * version, header length 118, the header padded with spaces and a newline),
 * then n bytes of data. */
static size_t make_npy(char *out, const char *descr, const char *shape, const void *data,
                       size_t n) {
  char hdr[119];
  int len = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                     descr, shape);
  ck_assert_int_lt(len, 117);
  memset(hdr + len, ' ', 117 - (size_t)len);
  hdr[117] = '\n';
  memcpy(out, "\x93NUMPY\x01\x00\x76\x00", 10);
  memcpy(out + 10, hdr, 118);
  memcpy(out + 128, data, n);
  return 128 + n;
}

START_TEST(unsupported_dot_is_unsupported) {
  /* The dot's name says "memory": still HLO_UNSUPPORTED, at compile time. */
  HloModule *m = parse("HloModule m\nENTRY main {\n  a = c64[2] parameter(0)\n"
                       "  b = c64[2] parameter(1)\n"
                       "  ROOT out_of_memory = f32[] dot(a, b), lhs_contracting_dims={0}, "
                       "rhs_contracting_dims={0}\n}\n");
  HloExecutable *e = NULL;
  ck_assert_int_eq(hlo_compile(ctx, m, NULL, &e), HLO_UNSUPPORTED);
  ck_assert_ptr_null(e);
  assert_diag("in out_of_memory (dot): not supported: dot of c64 and c64 to f32");
  hlo_module_free(m);
}
END_TEST

/* Counts to 10 in a while loop named NAME. */
static const char *counting =
  "HloModule counting\n"
  "cond {\n  p = s32[] parameter(0)\n  ten = s32[] constant(10)\n"
  "  ROOT lt = pred[] compare(p, ten), direction=LT\n}\n"
  "body {\n  p = s32[] parameter(0)\n  one = s32[] constant(1)\n"
  "  ROOT n = s32[] add(p, one)\n}\n"
  "ENTRY main {\n  x = s32[] parameter(0)\n"
  "  ROOT %s = s32[] while(x), condition=cond, body=body\n}\n";

static HloStatus run_loop(const char *name, int64_t max_iter, uint64_t max_memory) {
  char text[1024];
  snprintf(text, sizeof text, counting, name);
  HloCtxOptions co = {.struct_size = sizeof co, .threads = 1, .max_memory = max_memory};
  HloCtx *c = NULL;
  ck_assert_int_eq(hlo_ctx_new(&co, &c), HLO_OK);
  HloModule *m = NULL;
  ck_assert_int_eq(hlo_module_parse(c, text, strlen(text), "t.hlo", &m), HLO_OK);
  HloRunOptions ro = {.struct_size = sizeof ro, .max_iterations = max_iter};
  HloExecutable *e = NULL;
  HloBuffer *in = NULL, *res = NULL;
  int32_t zero = 0;
  ck_assert_int_eq(hlo_compile(c, m, &ro, &e), HLO_OK);
  ck_assert_int_eq(hlo_buffer_new_array(c, HLO_TYPE_S32, NULL, 0, &zero, &in), HLO_OK);
  HloStatus st = hlo_execute(e, &in, 1, &res);
  if (st == HLO_OK) ck_assert_int_eq(*(const int32_t *)hlo_buffer_data(res), 10);
  else ck_assert_ptr_null(res);
  ck_assert_int_eq(hlo_ctx_error_count(c), st == HLO_OK ? 0 : 1);
  hlo_buffer_free(res);
  hlo_buffer_free(in);
  hlo_executable_free(e);
  hlo_module_free(m);
  hlo_ctx_free(c);
  return st;
}

START_TEST(iteration_limit_is_a_runtime_error_whatever_its_name) {
  ck_assert_int_eq(run_loop("w", 0, 0), HLO_OK);
  ck_assert_int_eq(run_loop("w", 5, 0), HLO_RUNTIME_ERROR);
  ck_assert_int_eq(run_loop("out_of_memory", 5, 0), HLO_RUNTIME_ERROR);
  ck_assert_int_eq(run_loop("not_supported", 5, 0), HLO_RUNTIME_ERROR);
}
END_TEST

START_TEST(memory_limit_is_nomem) {
  /* Four bytes in use is the loop's s32 value; a limit of 3 bytes refuses it. */
  ck_assert_int_eq(run_loop("w", 0, 3), HLO_NOMEM);
  ck_assert_int_eq(run_loop("not_supported", 0, 3), HLO_NOMEM);
}
END_TEST

START_TEST(input_of_another_shape_is_a_mismatch) {
  HloModule *m = parse("HloModule m\nENTRY main {\n  x = f32[2] parameter(0)\n"
                       "  ROOT n = f32[2] negate(x)\n}\n");
  HloExecutable *e = NULL;
  ck_assert_int_eq(hlo_compile(ctx, m, NULL, &e), HLO_OK);
  int64_t three = 3;
  float v[3] = {1, 2, 3};
  HloBuffer *in = NULL, *res = NULL;
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_F32, &three, 1, v, &in), HLO_OK);
  ck_assert_int_eq(hlo_execute(e, &in, 1, &res), HLO_TYPE_MISMATCH);
  ck_assert_ptr_null(res);
  ck_assert_int_eq(hlo_ctx_error_count(ctx), 1);   /* checked once, reported once */
  assert_diag("input 0 has shape f32[3], but parameter 0 (x) is f32[2]");
  ck_assert_int_eq(hlo_execute(e, &in, 0, &res), HLO_INVALID_ARGUMENT);
  hlo_buffer_free(in);
  hlo_executable_free(e);
  hlo_module_free(m);
}
END_TEST

START_TEST(input_files_mismatch_or_fail_by_what_they_hold) {
  HloModule *m = parse("HloModule m\nENTRY main {\n  x = f32[2] parameter(0)\n"
                       "  ROOT n = f32[2] negate(x)\n}\n");
  char npy[256];
  int32_t s32[2] = {1, 2};
  float f32[2] = {1, 2};
  HloBuffer *b = NULL;
  /* s32 data for an f32 parameter: a type mismatch. */
  size_t n = make_npy(npy, "<i4", "(2,)", s32, sizeof s32);
  ck_assert_int_eq(hlo_load_param(ctx, m, 0, put_file("a.npy", npy, n), &b), HLO_TYPE_MISMATCH);
  assert_diag("dtype <i4 (s32) does not match the expected type f32");
  /* Three elements for two: a shape mismatch. */
  float three[3] = {1, 2, 3};
  n = make_npy(npy, "<f4", "(3,)", three, sizeof three);
  ck_assert_int_eq(hlo_load_param(ctx, m, 0, put_file("b.npy", npy, n), &b), HLO_TYPE_MISMATCH);
  /* Literal text of another shape. */
  const char *lit = "f32[3] {1, 2, 3}";
  ck_assert_int_eq(hlo_load_param(ctx, m, 0, put_file("c.txt", lit, strlen(lit)), &b),
                   HLO_TYPE_MISMATCH);
  /* The right header with a byte of data missing: an I/O error, even from a
   * file whose name says "does not match" (the message quotes it). */
  n = make_npy(npy, "<f4", "(2,)", f32, sizeof f32);
  hlo_ctx_clear_diagnostics(ctx);
  ck_assert_int_eq(hlo_load_param(ctx, m, 0, put_file("does not match.npy", npy, n - 1), &b),
                   HLO_IO_ERROR);
  assert_diag("does not match.npy");
  assert_diag("truncated data: 7 bytes, 8 expected");
  ck_assert_ptr_null(b);
  /* The whole file reads. */
  ck_assert_int_eq(hlo_load_param(ctx, m, 0, put_file("d.npy", npy, n), &b), HLO_OK);
  ck_assert_float_eq(((const float *)hlo_buffer_data(b))[1], 2.0f);
  hlo_buffer_free(b);
  hlo_module_free(m);
}
END_TEST

int main(void) {
  Suite *s = suite_create("status");
  TCase *tc = tcase_create("status");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, unsupported_dot_is_unsupported);
  tcase_add_test(tc, iteration_limit_is_a_runtime_error_whatever_its_name);
  tcase_add_test(tc, memory_limit_is_nomem);
  tcase_add_test(tc, input_of_another_shape_is_a_mismatch);
  tcase_add_test(tc, input_files_mismatch_or_fail_by_what_they_hold);
  suite_add_tcase(s, tc);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? 1 : 0;
}
