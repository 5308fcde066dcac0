/* check_stablehlo_gaps.c: StableHLO interpreter tests with
 * interpreter.run_parallel (a grid of replicas x partitions, operands fed
 * device after device, results gathered in the same order: StableHLO's
 * reference/InterpreterOps.cpp), the constructs it cannot run (a precise
 * error each), two operations on one line, and the api_version a built-in
 * LAPACK target answers to (XLA finds a "*_ffi" target only under
 * API_VERSION_TYPED_FFI, a legacy one only under the others), and CHLO's
 * inverse trigonometric functions and atan2 of complex arguments. Expected
 * values are worked out by hand in the comments.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hlorun.h"
#include "tests/testlib.h"

#define HAS(t, s) ck_assert_msg(strstr((t), (s)) != NULL, "missing \"%s\" in:\n%s", (s), (t))

/* Two replicas sum [1,2,3,4] and [5,6,7,8]: [6,8,10,12] on both. */
static const char all_reduce[] =
    "func.func @all_reduce(%x : tensor<4xi64>) -> tensor<4xi64> {\n"
    "  %r = \"stablehlo.all_reduce\"(%x) ({\n"
    "    ^bb0(%a: tensor<i64>, %b: tensor<i64>):\n"
    "      %s = stablehlo.add %a, %b : tensor<i64>\n"
    "      stablehlo.return %s : tensor<i64>\n"
    "  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4xi64>) -> tensor<4xi64>\n"
    "  return %r : tensor<4xi64>\n"
    "}\n"
    "func.func @main() {\n"
    "  %i0 = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi64>\n"
    "  %i1 = stablehlo.constant dense<[5, 6, 7, 8]> : tensor<4xi64>\n"
    "  %r:2 = \"interpreter.run_parallel\"(%i0, %i1) {programs = [[@all_reduce], [@all_reduce]]}"
    " : (tensor<4xi64>, tensor<4xi64>) -> (tensor<4xi64>, tensor<4xi64>)\n"
    "  check.expect_eq_const %r#0, dense<[6, 8, 10, 12]> : tensor<4xi64>\n"
    "  check.expect_eq_const %r#1, dense<[6, 8, 10, LAST]> : tensor<4xi64>\n"
    "  func.return\n"
    "}\n";

/* all_reduce with LAST replaced by v. */
static void with_last(char *text, const char *v) {
  const char *at = strstr(all_reduce, "LAST");
  sprintf(text, "%.*s%s%s", (int)(at - all_reduce), all_reduce, v, at + 4);
}

START_TEST(run_parallel_all_reduce) {
  char text[sizeof all_reduce + 16];
  int passed, failed;
  with_last(text, "12");
  char *r = tl_run_test_file(text, &passed, &failed);
  ck_assert_msg(passed == 2 && failed == 0, "%d passed, %d failed:\n%s", passed, failed, r);
  hlo_free(r);
  /* a wrong expected value fails: the checks do see the devices' results */
  with_last(text, "13");
  r = tl_run_test_file(text, &passed, &failed);
  ck_assert_int_eq(passed, 1);
  ck_assert_int_eq(failed, 1);
  HAS(r, "[3]: got 12, expected 13");
  hlo_free(r);
}
END_TEST

/* A 2 x 2 grid: device (replica i, partition j) is device 2i + j and takes
 * operand 2i + j; each returns x + 10 i + j and its replica id, so the
 * results are (100, 0), (201, 0), (310, 1), (411, 1) in device order. */
START_TEST(run_parallel_grid_order) {
  const char *text =
      "func.func @f(%x : tensor<i32>) -> (tensor<i32>, tensor<ui32>) {\n"
      "  %r = stablehlo.replica_id : tensor<ui32>\n"
      "  %p = stablehlo.partition_id : tensor<ui32>\n"
      "  %ri = stablehlo.convert %r : (tensor<ui32>) -> tensor<i32>\n"
      "  %pi = stablehlo.convert %p : (tensor<ui32>) -> tensor<i32>\n"
      "  %ten = stablehlo.constant dense<10> : tensor<i32>\n"
      "  %a = stablehlo.multiply %ri, %ten : tensor<i32>\n"
      "  %b = stablehlo.add %a, %pi : tensor<i32>\n"
      "  %c = stablehlo.add %b, %x : tensor<i32>\n"
      "  return %c, %r : tensor<i32>, tensor<ui32>\n"
      "}\n"
      "func.func @main() {\n"
      "  %x0 = stablehlo.constant dense<100> : tensor<i32>\n"
      "  %x1 = stablehlo.constant dense<200> : tensor<i32>\n"
      "  %x2 = stablehlo.constant dense<300> : tensor<i32>\n"
      "  %x3 = stablehlo.constant dense<400> : tensor<i32>\n"
      "  %r:8 = \"interpreter.run_parallel\"(%x0, %x1, %x2, %x3) {programs = [[@f, @f], [@f, @f]]}"
      " : (tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> (tensor<i32>, tensor<ui32>, tensor<i32>,"
      " tensor<ui32>, tensor<i32>, tensor<ui32>, tensor<i32>, tensor<ui32>)\n"
      "  check.expect_eq_const %r#0, dense<100> : tensor<i32>\n"
      "  check.expect_eq_const %r#1, dense<0> : tensor<ui32>\n"
      "  check.expect_eq_const %r#2, dense<201> : tensor<i32>\n"
      "  check.expect_eq_const %r#3, dense<0> : tensor<ui32>\n"
      "  check.expect_eq_const %r#4, dense<310> : tensor<i32>\n"
      "  check.expect_eq_const %r#5, dense<1> : tensor<ui32>\n"
      "  check.expect_eq_const %r#6, dense<411> : tensor<i32>\n"
      "  check.expect_eq_const %r#7, dense<1> : tensor<ui32>\n"
      "  func.return\n"
      "}\n";
  int passed, failed;
  char *r = tl_run_test_file(text, &passed, &failed);
  ck_assert_msg(passed == 8 && failed == 0, "%d passed, %d failed:\n%s", passed, failed, r);
  hlo_free(r);
}
END_TEST

/* all_to_all splitting dim 0 and concatenating dim 1 on two replicas:
 * device 0 keeps rows {1,2} and sends {3,4}; device 1 sends {5,6} and keeps
 * {7,8}; each concatenates what it gets in peer order along dim 1:
 * [[1,5],[2,6]] and [[3,7],[4,8]]. */
START_TEST(run_parallel_all_to_all) {
  const char *text =
      "func.func @f(%x : tensor<4x1xi32>) -> tensor<2x2xi32> {\n"
      "  %r = \"stablehlo.all_to_all\"(%x) {split_dimension = 0 : i64, concat_dimension = 1 : i64,"
      " split_count = 2 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4x1xi32>) ->"
      " tensor<2x2xi32>\n"
      "  return %r : tensor<2x2xi32>\n"
      "}\n"
      "func.func @main() {\n"
      "  %a = stablehlo.constant dense<[[1], [2], [3], [4]]> : tensor<4x1xi32>\n"
      "  %b = stablehlo.constant dense<[[5], [6], [7], [8]]> : tensor<4x1xi32>\n"
      "  %r:2 = \"interpreter.run_parallel\"(%a, %b) {programs = [[@f], [@f]]} : (tensor<4x1xi32>, tensor<4x1xi32>)"
      " -> (tensor<2x2xi32>, tensor<2x2xi32>)\n"
      "  check.expect_eq_const %r#0, dense<[[1, 5], [2, 6]]> : tensor<2x2xi32>\n"
      "  check.expect_eq_const %r#1, dense<[[3, 7], [4, 8]]> : tensor<2x2xi32>\n"
      "  func.return\n"
      "}\n";
  int passed, failed;
  char *r = tl_run_test_file(text, &passed, &failed);
  ck_assert_msg(passed == 2 && failed == 0, "%d passed, %d failed:\n%s", passed, failed, r);
  hlo_free(r);
}
END_TEST

/* What run_parallel cannot do here: each a failed test naming it. */
START_TEST(run_parallel_errors) {
  static const struct { const char *main, *want; int line; } cases[] = {
      {"  %r:2 = \"interpreter.run_parallel\"(%x, %x) {programs = [[@f], [@g]]} : (tensor<i32>, tensor<i32>)"
       " -> (tensor<i32>, tensor<i32>)\n",
       "devices run different programs (@f and @g); hlorun runs one module on every device", 13},
      {"  %r:2 = \"interpreter.run_parallel\"(%x, %x) {infeed = [@f], programs = [[@f], [@f]]} : (tensor<i32>,"
       " tensor<i32>) -> (tensor<i32>, tensor<i32>)\n",
       "interpreter.run_parallel with infeed queues is not supported", 13},
      {"  %r:2 = \"interpreter.run_parallel\"(%x) {programs = [[@f], [@f]]} : (tensor<i32>)"
       " -> (tensor<i32>, tensor<i32>)\n",
       "interpreter.run_parallel: 1 operands for 2 devices of @f (1 arguments each)", 13},
      {"  %r:2 = \"interpreter.run_parallel\"(%x, %x, %x) {programs = [[@f], [@f]]} : (tensor<i32>, tensor<i32>,"
       " tensor<i32>) -> (tensor<i32>, tensor<i32>)\n",
       "interpreter.run_parallel: 3 operands for 2 devices of @f (1 arguments each)", 13},
      {"  %r:2 = \"interpreter.run_parallel\"(%x, %x, %x) {programs = [[@f, @f], [@f]]} : (tensor<i32>,"
       " tensor<i32>, tensor<i32>) -> (tensor<i32>, tensor<i32>)\n",
       "rows of programs differ in length (2 and 1)", 13},
      {"  %t = stablehlo.after_all : !stablehlo.token\n"
       "  %r = \"interpreter.run_parallel\"(%t) {programs = [[@h]]} : (!stablehlo.token) -> tensor<i32>\n",
       "operand 0 is a token; only tensors pass between the test and its devices", 14},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char text[2048];
    snprintf(text, sizeof text,
             "func.func private @f(%%x : tensor<i32>) -> tensor<i32> {\n  return %%x : tensor<i32>\n}\n"
             "func.func private @g(%%x : tensor<i32>) -> tensor<i32> {\n  return %%x : tensor<i32>\n}\n"
             "func.func private @h(%%t : !stablehlo.token) -> tensor<i32> {\n"
             "  %%c = stablehlo.constant dense<1> : tensor<i32>\n  return %%c : tensor<i32>\n}\n"
             "func.func @main() {\n  %%x = stablehlo.constant dense<1> : tensor<i32>\n%s"
             "  check.expect_eq_const %%x, dense<1> : tensor<i32>\n  func.return\n}\n",
             cases[i].main);
    int passed, failed;
    char *r = tl_run_test_file(text, &passed, &failed);
    ck_assert_int_eq(passed, 0);
    ck_assert_int_eq(failed, 1);
    HAS(r, cases[i].want);
    char at[32];   /* the position of the run_parallel op (line 13, after the after_all: 14) */
    snprintf(at, sizeof at, ".mlir:%d:", cases[i].line);
    HAS(r, at);
    hlo_free(r);
  }
}
END_TEST

/* Operations share a line: 1+1=2, 2*1=2; 2+2=4, 4*2=8; reduce's "applies
 * stablehlo.add" names its body, not a new operation: 1+2+3 = 6. */
START_TEST(ops_on_one_line) {
  const char *text =
      "func.func @main() {\n"
      "  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32> %0 = stablehlo.add %a, %a : tensor<2xf32>"
      " %1 = stablehlo.multiply %0, %a : tensor<2xf32> check.expect_eq_const %1, dense<[2.0, 8.0]> : tensor<2xf32>\n"
      "  %v = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32> %z = stablehlo.constant dense<0.0> :"
      " tensor<f32> %s = stablehlo.reduce(%v init: %z) applies stablehlo.add across dimensions = [0] :"
      " (tensor<3xf32>, tensor<f32>) -> tensor<f32> check.expect_eq_const %s, dense<6.0> : tensor<f32>\n"
      "  %m = \"stablehlo.reduce\"(%v, %z) ({ ^bb0(%p: tensor<f32>, %q: tensor<f32>): %w = stablehlo.maximum %p,"
      " %q : tensor<f32> stablehlo.return %w : tensor<f32> }) {dimensions = array<i64: 0>} : (tensor<3xf32>,"
      " tensor<f32>) -> tensor<f32> check.expect_eq_const %m, dense<3.0> : tensor<f32> func.return\n"
      "}\n";
  int passed, failed;
  char *r = tl_run_test_file(text, &passed, &failed);
  ck_assert_msg(passed == 3 && failed == 0, "%d passed, %d failed:\n%s", passed, failed, r);
  hlo_free(r);
}
END_TEST

/* cholesky of diag(4, 9) is diag(2, 3) under the api_version XLA would call
 * the target with; any other is an error naming the target and both versions. */
START_TEST(lapack_api_version) {
  static const char mod[] =
      "HloModule m\n\nENTRY e {\n"
      "  a = f32[2,2] constant({{4, 0}, {0, 9}})\n"
      "  ROOT c = (f32[2,2], s32[]) custom-call(%s), custom_call_target=\"%s\"%s\n}\n";
  static const struct { const char *ops, *target, *attrs, *want; } cases[] = {
      {"a", "lapack_spotrf_ffi", ", api_version=API_VERSION_TYPED_FFI, backend_config={uplo = 76 : ui8}", NULL},
      {"a", "lapack_spotrf_ffi", ", backend_config={uplo = 76 : ui8}",
       "custom-call target \"lapack_spotrf_ffi\" (line 5, built-in: LAPACK) is a typed FFI handler "
       "(api_version=API_VERSION_TYPED_FFI), but the instruction has api_version=API_VERSION_ORIGINAL"},
      {"a", "lapack_spotrf_ffi", ", api_version=API_VERSION_STATUS_RETURNING, backend_config={uplo = 76 : ui8}",
       "but the instruction has api_version=API_VERSION_STATUS_RETURNING"},
      {"a", "lapack_spotrf", ", api_version=API_VERSION_TYPED_FFI",
       "custom-call target \"lapack_spotrf\" (line 5, built-in: LAPACK) is a legacy custom-call function"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char text[1024];
    snprintf(text, sizeof text, mod, cases[i].ops, cases[i].target, cases[i].attrs);
    HloCtx *ctx = tl_ctx_new(1);
    HloStatus st;
    char *lit = tl_run_literal(ctx, text, NULL, 0, &st);
    if (!cases[i].want) {
      ck_assert_msg(lit != NULL, "%s", hlo_ctx_diagnostics(ctx));
      HAS(lit, "{{2, 0}, {0, 3}}");
    } else {
      ck_assert_msg(lit == NULL, "case %zu ran: %s", i, lit ? lit : "");
      HAS(hlo_ctx_diagnostics(ctx), cases[i].want);
      HAS(hlo_ctx_diagnostics(ctx), "XLA finds no implementation of it under that api_version");
    }
    hlo_free(lit);
    hlo_ctx_free(ctx);
  }
}
END_TEST

/* chlo's inverse functions of complex z = 0.5+0.25i, -2+3i, 3-0.5i,
 * -0.75-1.5i (off the branch cuts) against numpy's arcsin, arccos, ...
 * (values printed with %.17g): within 1e-13 in c128, 1e-5 in c64. */
START_TEST(chlo_complex_inverse) {
  static const struct { const char *name, *want; } cases[] = {
      {"asin",
       "(0.50160885327550075, 0.28139605624529274), (-0.57065278432109945, 1.9833870299165355), (1.3961498617094474, -1.7789904938267689), (-0.40291083014656992, -1.2650750428933686)"},
      {"acos",
       "(1.0691874735193958, -0.28139605624529274), (2.1414491111159961, -1.9833870299165355), (0.17464646508544923, 1.7789904938267689), (1.9737071569414666, 1.2650750428933686)"},
      {"asinh",
       "(0.49267568342077062, 0.2243284526346675), (-1.9686379257930964, 0.96465850440760281), (1.8301947623375088, -0.15700459478894227), (-1.1627920981631037, -1.0242880572034125)"},
      {"acosh",
       "(0.28139605624529274, 1.0691874735193958), (1.9833870299165355, 2.1414491111159961), (1.7789904938267689, -0.17464646508544923), (1.2650750428933686, -1.9737071569414666)"},
      {"atan",
       "(0.4842544903299662, 0.20058661813123432), (-1.4099210495965755, 0.22907268296853878), (1.2563981835871803, -0.048936144281523833), (-1.2251278624101656, -0.53159963119190168)"},
      {"atanh",
       "(0.50037000005253107, 0.31439814320771647), (-0.14694666622552974, 1.3389725222944935), (0.33529348145985527, -1.5104844925048453), (-0.207933335961523, -1.05713696075397)"},
  };
  static const struct { const char *type, *tol; } types[] = {{"f64", "1.0e-13"}, {"f32", "1.0e-5"}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    for (size_t j = 0; j < 2; j++) {
      char text[2048];
      snprintf(text, sizeof text,
               "func.func @main() {\n"
               "  %%z = stablehlo.constant dense<[(0.5, 0.25), (-2.0, 3.0), (3.0, -0.5), (-0.75, -1.5)]> :"
               " tensor<4xcomplex<%s>>\n"
               "  %%r = chlo.%s %%z : tensor<4xcomplex<%s>> -> tensor<4xcomplex<%s>>\n"
               "  check.expect_almost_eq_const %%r, dense<[%s]> : tensor<4xcomplex<%s>> {tolerance = %s : f64}\n"
               "  func.return\n}\n",
               types[j].type, cases[i].name, types[j].type, types[j].type, cases[i].want, types[j].type, types[j].tol);
      int passed, failed;
      char *r = tl_run_test_file(text, &passed, &failed);
      ck_assert_msg(passed == 1 && failed == 0, "chlo.%s %s: %s", cases[i].name, types[j].type, r);
      hlo_free(r);
    }
}
END_TEST

/* stablehlo.atan2 of complex y, x is XLA's -i log((x + i y) / sqrt(x^2 + y^2)):
 * atan2(1, 1) = pi/4 by hand; the others from Python's cmath with that formula. */
START_TEST(atan2_complex) {
  const char *text =
      "func.func @main() {\n"
      "  %y = stablehlo.constant dense<[(1.0, 0.0), (1.0, 2.0), (-0.5, 0.25)]> : tensor<3xcomplex<f64>>\n"
      "  %x = stablehlo.constant dense<[(1.0, 0.0), (3.0, 4.0), (2.0, -1.0)]> : tensor<3xcomplex<f64>>\n"
      "  %r = stablehlo.atan2 %y, %x : tensor<3xcomplex<f64>>\n"
      "  check.expect_almost_eq_const %r, dense<[(0.78539816339744828, 0.0), (0.4164906333372157,"
      " 0.067065996648669801), (-0.24497866312686414, 0.0)]> : tensor<3xcomplex<f64>> {tolerance = 1.0e-14 : f64}\n"
      "  func.return\n"
      "}\n";
  int passed, failed;
  char *r = tl_run_test_file(text, &passed, &failed);
  ck_assert_msg(passed == 1 && failed == 0, "%d passed, %d failed:\n%s", passed, failed, r);
  hlo_free(r);
}
END_TEST

int main(void) {
  Suite *s = suite_create("stablehlo_gaps");
  TCase *tc = tcase_create("gaps");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, run_parallel_all_reduce);
  tcase_add_test(tc, run_parallel_grid_order);
  tcase_add_test(tc, run_parallel_all_to_all);
  tcase_add_test(tc, run_parallel_errors);
  tcase_add_test(tc, ops_on_one_line);
  tcase_add_test(tc, lapack_api_version);
  tcase_add_test(tc, chlo_complex_inverse);
  tcase_add_test(tc, atan2_complex);
  suite_add_tcase(s, tc);
  return tl_main(s);
}
