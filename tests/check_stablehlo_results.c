/* check_stablehlo_results.c: values behind the StableHLO test files that
 * hlorun fails as "wrong result" (tests/stablehlo/cannot-pass.txt): the
 * attributes get_dimension_size and iota read in both of their forms (a
 * missing one is an error, never dimension 0), the order of an all_gather
 * across replicas and partitions (XLA's, which is not the spec's), and
 * expect_eq on NaN (StableHLO compares with APFloat ==: never equal), and
 * chlo.mulhi (ChloDecompositionPatterns.td) on 8- to 64-bit integers, and
 * complex power as XLA's formula gives it at a zero base.
 * Expected values are worked out by hand in the comments.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hlorun.h"
#include "tests/testlib.h"

#define HAS(t, s) ck_assert_msg(strstr((t), (s)) != NULL, "missing \"%s\" in:\n%s", (s), (t))

/* A 2x3x5 tensor: dimension 0, 1, 2 have sizes 2, 3, 5, in the pretty
 * (dim = N) and the generic ({dimension = N}) form. */
START_TEST(get_dimension_size_dims) {
  const char *text =
      "func.func @main() {\n"
      "  %x = stablehlo.constant dense<0.0> : tensor<2x3x5xf32>\n"
      "  %a = stablehlo.get_dimension_size %x, dim = 0 : (tensor<2x3x5xf32>) -> tensor<i32>\n"
      "  %b = stablehlo.get_dimension_size %x, dim = 1 : (tensor<2x3x5xf32>) -> tensor<i32>\n"
      "  %c = \"stablehlo.get_dimension_size\"(%x) {dimension = 2 : i64} : (tensor<2x3x5xf32>) -> tensor<i32>\n"
      "  check.expect_eq_const %a, dense<2> : tensor<i32>\n"
      "  check.expect_eq_const %b, dense<3> : tensor<i32>\n"
      "  check.expect_eq_const %c, dense<5> : tensor<i32>\n"
      "  func.return\n"
      "}\n";
  int passed, failed;
  char *r = tl_run_test_file(text, &passed, &failed);
  ck_assert_msg(passed == 3 && failed == 0, "%d passed, %d failed:\n%s", passed, failed, r);
  hlo_free(r);
}
END_TEST

/* iota along dimension 1 of 2x3: [[0, 1, 2], [0, 1, 2]] (along 0 it would
 * be [[0, 0, 0], [1, 1, 1]]). */
START_TEST(iota_dim) {
  const char *text =
      "func.func @main() {\n"
      "  %a = stablehlo.iota dim = 1 : tensor<2x3xi32>\n"
      "  %b = \"stablehlo.iota\"() {iota_dimension = 1 : i64} : () -> tensor<2x3xi32>\n"
      "  check.expect_eq_const %a, dense<[[0, 1, 2], [0, 1, 2]]> : tensor<2x3xi32>\n"
      "  check.expect_eq_const %b, dense<[[0, 1, 2], [0, 1, 2]]> : tensor<2x3xi32>\n"
      "  func.return\n"
      "}\n";
  int passed, failed;
  char *r = tl_run_test_file(text, &passed, &failed);
  ck_assert_msg(passed == 2 && failed == 0, "%d passed, %d failed:\n%s", passed, failed, r);
  hlo_free(r);
}
END_TEST

/* Without its dimension attribute each op is an error naming it. */
START_TEST(missing_dimension) {
  static const struct { const char *op, *want; } cases[] = {
      {"%r = stablehlo.get_dimension_size %x : (tensor<2x3xf32>) -> tensor<i32>",
       "stablehlo.get_dimension_size: missing attribute dimension"},
      {"%r = \"stablehlo.iota\"() : () -> tensor<2x3xf32>", "stablehlo.iota: missing attribute iota_dimension"},
      {"%r:3 = \"stablehlo.batch_norm_training\"(%x, %s, %s) {epsilon = 1.0e-3 : f32} : (tensor<2x3xf32>,"
       " tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)",
       "stablehlo.batch_norm_training: missing attribute feature_index"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char text[1024];
    snprintf(text, sizeof text,
             "func.func @main() {\n"
             "  %%x = stablehlo.constant dense<1.0> : tensor<2x3xf32>\n"
             "  %%s = stablehlo.constant dense<1.0> : tensor<3xf32>\n"
             "  %s\n"
             "  check.expect_eq_const %%x, dense<1.0> : tensor<2x3xf32>\n"
             "  func.return\n"
             "}\n",
             cases[i].op);
    int passed, failed;
    char *r = tl_run_test_file(text, &passed, &failed);
    ck_assert_msg(passed == 0 && failed == 1, "%s: %d passed, %d failed:\n%s", cases[i].op, passed, failed, r);
    HAS(r, cases[i].want);
    hlo_free(r);
  }
}
END_TEST

/* all_gather with a channel and no use_global_device_ids is
 * cross-replica-and-partition. On 2 replicas x 2 partitions with
 * replica_groups [[0, 1]], XLA's GetParticipatingDevices lists the group
 * replica by replica, each over all partitions: (0,0), (0,1), (1,0), (1,1),
 * i.e. device order; device d = 2 r + p gathers value d + 1, so every device
 * gets [1, 2, 3, 4]. (StableHLO's spec lists partition by partition and
 * would give [1, 3, 2, 4]: stablehlo/tests/interpret/all_gather.mlir
 * expects that.) */
START_TEST(all_gather_cross_replica_and_partition) {
  const char *text =
      "func.func @g(%x : tensor<1xi64>) -> tensor<4xi64> {\n"
      "  %r = \"stablehlo.all_gather\"(%x) {all_gather_dim = 0 : i64,\n"
      "    replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>,\n"
      "    channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>} : (tensor<1xi64>) -> tensor<4xi64>\n"
      "  return %r : tensor<4xi64>\n"
      "}\n"
      "func.func @main() {\n"
      "  %a = stablehlo.constant dense<[1]> : tensor<1xi64>\n"
      "  %b = stablehlo.constant dense<[2]> : tensor<1xi64>\n"
      "  %c = stablehlo.constant dense<[3]> : tensor<1xi64>\n"
      "  %d = stablehlo.constant dense<[4]> : tensor<1xi64>\n"
      "  %r:4 = \"interpreter.run_parallel\"(%a, %b, %c, %d) {programs = [[@g, @g], [@g, @g]]}"
      " : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> (tensor<4xi64>, tensor<4xi64>,"
      " tensor<4xi64>, tensor<4xi64>)\n"
      "  check.expect_eq_const %r#0, dense<[1, 2, 3, 4]> : tensor<4xi64>\n"
      "  check.expect_eq_const %r#1, dense<[1, 2, 3, 4]> : tensor<4xi64>\n"
      "  check.expect_eq_const %r#2, dense<[1, 2, 3, 4]> : tensor<4xi64>\n"
      "  check.expect_eq_const %r#3, dense<[1, 2, 3, 4]> : tensor<4xi64>\n"
      "  func.return\n"
      "}\n";
  int passed, failed;
  char *r = tl_run_test_file(text, &passed, &failed);
  ck_assert_msg(passed == 4 && failed == 0, "%d passed, %d failed:\n%s", passed, failed, r);
  hlo_free(r);
}
END_TEST

/* expect_eq compares floats with APFloat == (CheckOps.cpp, Element.cpp): a
 * NaN never equals, even one of the same bits; expect_almost_eq takes two
 * NaNs as equal. So the custom_call @check.expect_eq of top_k_float32_5_chlo
 * and sort_float32_5, which expect NaNs, fail in StableHLO's reference too. */
START_TEST(expect_eq_nan) {
  const char *text =
      "func.func @main() {\n"
      "  %x = stablehlo.constant dense<[1.0, 0x7FC00000]> : tensor<2xf32>\n"
      "  %y = stablehlo.constant dense<[1.0, 0x7FC00000]> : tensor<2xf32>\n"
      "  stablehlo.custom_call @check.expect_eq(%x, %y) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()\n"
      "  stablehlo.custom_call @check.expect_almost_eq(%x, %y) {has_side_effect = true} : (tensor<2xf32>,"
      " tensor<2xf32>) -> ()\n"
      "  func.return\n"
      "}\n";
  int passed, failed;
  char *r = tl_run_test_file(text, &passed, &failed);
  ck_assert_msg(passed == 1 && failed == 1, "%d passed, %d failed:\n%s", passed, failed, r);
  HAS(r, "check.expect_eq failed");
  HAS(r, "[1]: got nan, expected nan");
  hlo_free(r);
}
END_TEST

/* chlo.mulhi: the high half of the exact double-width product (Python's
 * (a * b) >> n gives every value): s8 64*4 = 256 -> 1, -64*4 -> -1,
 * -128*-128 = 16384 -> 64, 127*-1 = -127 -> -1 (floor), 3*5 -> 0; u8
 * 255*255 = 65025 -> 254; s32 (-2^31)^2 = 2^62 -> 2^30; u32 (2^32-1)^2 ->
 * 2^32-2; u64 (2^64-1)^2 -> 2^64-2, (2^32+1)^2 = 2^64+2^33+1 -> 1,
 * (2^32-1)^2 < 2^64 -> 0; s64 (-2^63)^2 -> 2^62, -2^63 (2^63-1) -> -2^62,
 * -3*5 -> -1, -1*-1 -> 0. */
START_TEST(chlo_mulhi) {
  const char *text =
      "func.func @main() {\n"
      "  %a = stablehlo.constant dense<[64, -64, -128, 127, 3]> : tensor<5xi8>\n"
      "  %b = stablehlo.constant dense<[4, 4, -128, -1, 5]> : tensor<5xi8>\n"
      "  %r = \"chlo.mulhi\"(%a, %b) : (tensor<5xi8>, tensor<5xi8>) -> tensor<5xi8>\n"
      "  check.expect_eq_const %r, dense<[1, -1, 64, -1, 0]> : tensor<5xi8>\n"
      "  %c = stablehlo.constant dense<[255, 240]> : tensor<2xui8>\n"
      "  %d = stablehlo.constant dense<[255, 16]> : tensor<2xui8>\n"
      "  %s = \"chlo.mulhi\"(%c, %d) : (tensor<2xui8>, tensor<2xui8>) -> tensor<2xui8>\n"
      "  check.expect_eq_const %s, dense<[254, 15]> : tensor<2xui8>\n"
      "  %e = stablehlo.constant dense<[-2147483648, 2147483647, -1]> : tensor<3xi32>\n"
      "  %f = stablehlo.constant dense<[-2147483648, 2, 1]> : tensor<3xi32>\n"
      "  %t = \"chlo.mulhi\"(%e, %f) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>\n"
      "  check.expect_eq_const %t, dense<[1073741824, 0, -1]> : tensor<3xi32>\n"
      "  %g = stablehlo.constant dense<4294967295> : tensor<ui32>\n"
      "  %u = \"chlo.mulhi\"(%g, %g) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>\n"
      "  check.expect_eq_const %u, dense<4294967294> : tensor<ui32>\n"
      "  %h = stablehlo.constant dense<[18446744073709551615, 9223372036854775808, 4294967297, 4294967295]>"
      " : tensor<4xui64>\n"
      "  %i = stablehlo.constant dense<[18446744073709551615, 2, 4294967297, 4294967295]> : tensor<4xui64>\n"
      "  %v = \"chlo.mulhi\"(%h, %i) : (tensor<4xui64>, tensor<4xui64>) -> tensor<4xui64>\n"
      "  check.expect_eq_const %v, dense<[18446744073709551614, 1, 1, 0]> : tensor<4xui64>\n"
      "  %j = stablehlo.constant dense<[-9223372036854775808, -9223372036854775808, -3, -1, 4611686018427387904]>"
      " : tensor<5xi64>\n"
      "  %k = stablehlo.constant dense<[-9223372036854775808, 9223372036854775807, 5, -1, 4]> : tensor<5xi64>\n"
      "  %w = \"chlo.mulhi\"(%j, %k) : (tensor<5xi64>, tensor<5xi64>) -> tensor<5xi64>\n"
      "  check.expect_eq_const %w, dense<[4611686018427387904, -4611686018427387904, -1, 0, 1]> : tensor<5xi64>\n"
      "  func.return\n"
      "}\n";
  int passed, failed;
  char *r = tl_run_test_file(text, &passed, &failed);
  ck_assert_msg(passed == 6 && failed == 0, "%d passed, %d failed:\n%s", passed, failed, r);
  hlo_free(r);
}
END_TEST

/* mulhi of floats is an error, not a value. */
START_TEST(chlo_mulhi_float) {
  const char *text =
      "func.func @main() {\n"
      "  %a = stablehlo.constant dense<2.0> : tensor<f32>\n"
      "  %r = \"chlo.mulhi\"(%a, %a) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
      "  check.expect_eq_const %r, dense<0.0> : tensor<f32>\n"
      "  func.return\n"
      "}\n";
  int passed, failed;
  char *r = tl_run_test_file(text, &passed, &failed);
  ck_assert_int_eq(failed, 1);
  HAS(r, "chlo.mulhi: operands must be integer arrays of one type");
  hlo_free(r);
}
END_TEST

/* stablehlo.power of complex numbers is XLA's EmitComplexPower:
 * |z|^c e^(-d arg z) (cos q + i sin q), q = c arg z + d/2 log |z|^2, and
 * 0^(c+0i) = 1 for c = 0, +0 for c > 0. So 0^(2+i) is NaN (log 0 = -inf,
 * cos(-inf) = NaN; C's cpow gives 0), 0^(-1) NaN + NaN i (pow(0, -0.5) =
 * inf times cos(0 * -inf) = NaN; cpow: inf), 0^2 has imaginary part +0
 * (bits 0; cpowf gave -0), 0^0 = 1, 4^0.5 = 2 exactly, and 2^(1+i) =
 * 2 (cos ln 2 + i sin ln 2) = 1.5384778027279442 + 1.2779225526272695i,
 * i^i = e^(-pi/2) = 0.20787957635076193 (Python's math). */
START_TEST(power_complex_xla) {
  const char *text =
      "func.func @main() {\n"
      "  %z = stablehlo.constant dense<[(0.0, 0.0), (0.0, 0.0), (0.0, 0.0), (0.0, 0.0), (4.0, 0.0)]>"
      " : tensor<5xcomplex<f32>>\n"
      "  %e = stablehlo.constant dense<[(2.0, 1.0), (-1.0, 0.0), (2.0, 0.0), (0.0, 0.0), (0.5, 0.0)]>"
      " : tensor<5xcomplex<f32>>\n"
      "  %p = stablehlo.power %z, %e : tensor<5xcomplex<f32>>\n"
      "  %re = stablehlo.real %p : (tensor<5xcomplex<f32>>) -> tensor<5xf32>\n"
      "  %im = stablehlo.imag %p : (tensor<5xcomplex<f32>>) -> tensor<5xf32>\n"
      "  %nr = stablehlo.compare NE, %re, %re : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xi1>\n"
      "  %ni = stablehlo.compare NE, %im, %im : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xi1>\n"
      "  check.expect_eq_const %nr, dense<[true, true, false, false, false]> : tensor<5xi1>\n"
      "  check.expect_eq_const %ni, dense<[true, true, false, false, false]> : tensor<5xi1>\n"
      "  %bits = stablehlo.bitcast_convert %im : (tensor<5xf32>) -> tensor<5xi32>\n"
      "  %rb = stablehlo.bitcast_convert %re : (tensor<5xf32>) -> tensor<5xi32>\n"
      "  %s = stablehlo.slice %bits [2:5] : (tensor<5xi32>) -> tensor<3xi32>\n"
      "  %r = stablehlo.slice %rb [2:5] : (tensor<5xi32>) -> tensor<3xi32>\n"
      "  check.expect_eq_const %s, dense<[0, 0, 0]> : tensor<3xi32>\n"
      "  check.expect_eq_const %r, dense<[0, 1065353216, 1073741824]> : tensor<3xi32>\n"
      "  %a = stablehlo.constant dense<[(2.0, 0.0), (0.0, 1.0)]> : tensor<2xcomplex<f64>>\n"
      "  %b = stablehlo.constant dense<[(1.0, 1.0), (0.0, 1.0)]> : tensor<2xcomplex<f64>>\n"
      "  %c = stablehlo.power %a, %b : tensor<2xcomplex<f64>>\n"
      "  check.expect_almost_eq_const %c, dense<[(1.5384778027279442, 1.2779225526272695),"
      " (0.20787957635076193, 0.0)]> : tensor<2xcomplex<f64>>, tolerance = 1.0e-15\n"
      "  func.return\n"
      "}\n";
  int passed, failed;
  char *r = tl_run_test_file(text, &passed, &failed);
  ck_assert_msg(passed == 5 && failed == 0, "%d passed, %d failed:\n%s", passed, failed, r);
  hlo_free(r);
}
END_TEST

int main(void) {
  Suite *s = suite_create("stablehlo_results");
  TCase *tc = tcase_create("results");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, get_dimension_size_dims);
  tcase_add_test(tc, iota_dim);
  tcase_add_test(tc, missing_dimension);
  tcase_add_test(tc, all_gather_cross_replica_and_partition);
  tcase_add_test(tc, expect_eq_nan);
  tcase_add_test(tc, chlo_mulhi);
  tcase_add_test(tc, chlo_mulhi_float);
  tcase_add_test(tc, power_complex_xla);
  suite_add_tcase(s, tc);
  return tl_main(s);
}
