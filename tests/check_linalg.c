/* check_linalg.c: cholesky and triangular-solve on small matrices worked
 * by hand (the factor or the solution is checked against values computed
 * on paper, stated in each test). */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "interp/kernels/control.h"
#include "tests/testlib.h"

typedef double complex cplx;

/* One-operand or two-operand instruction with array shapes. */
typedef struct Op {
  HloInstr *ins;
  HliValue *in[2], *out;
} Op;

static void op_init(Op *o, HloOpcode op, HloDtype t, int nops, int32_t rank, const int64_t *d0,
                    const int64_t *d1, const void *x0, const void *x1) {
  memset(o, 0, sizeof *o);
  const int64_t *dd[2] = {d0, d1};
  const void *xx[2] = {x0, x1};
  HloInstr *p[2] = {NULL, NULL};
  for (int i = 0; i < nops; i++) p[i] = tl_param(i, tl_shape(t, rank, dd[i]));
  o->ins = tl_instr(op, tl_shape(t, rank, dd[nops - 1]), nops, p[0], p[1]);
  for (int i = 0; i < nops; i++) o->in[i] = tl_value(&p[i]->shape, xx[i]);
  o->out = tl_value(&o->ins->shape, NULL);
}

static int op_run(Op *o) { return hli_op_table()[o->ins->op].run(NULL, o->ins, o->in, o->out); }
static void op_free(Op *o) {
  for (int i = 0; i < 2; i++) hli_value_unref(NULL, o->in[i]);
  hli_value_unref(NULL, o->out);
}

static void expect_f64(const Op *o, const double *want, int64_t n, double tol) {
  const double *y = o->out->data;
  for (int64_t i = 0; i < n; i++)
    ck_assert_msg(fabs(y[i] - want[i]) <= tol, "element %lld: got %.17g want %.17g", (long long)i,
                  y[i], want[i]);
}

/* ---- cholesky --------------------------------------------------------------- */

/* [[4,2],[2,3]] = L L^T with L = [[2,0],[1,sqrt2]]; upper U = L^T. The
 * triangle not read holds garbage (99) and the other result triangle is 0. */
START_TEST(cholesky_2x2_lower_upper) {
  const int64_t d[2] = {2, 2};
  const double lo_in[4] = {4, 99, 2, 3}, up_in[4] = {4, 2, 99, 3};
  Op o;
  op_init(&o, HLO_OP_CHOLESKY, HLO_F64, 1, 2, d, NULL, lo_in, NULL);
  o.ins->lower = true;
  ck_assert_int_eq(op_run(&o), 0);
  const double l[4] = {2, 0, 1, sqrt(2.0)};
  expect_f64(&o, l, 4, 1e-15);
  op_free(&o);
  op_init(&o, HLO_OP_CHOLESKY, HLO_F64, 1, 2, d, NULL, up_in, NULL);
  o.ins->lower = false;
  ck_assert_int_eq(op_run(&o), 0);
  const double u[4] = {2, 1, 0, sqrt(2.0)};
  expect_f64(&o, u, 4, 1e-15);
  op_free(&o);
}
END_TEST

/* The classic [[25,15,-5],[15,18,0],[-5,0,11]] = L L^T, L = [[5,0,0],[3,3,0],[-1,1,3]],
 * batched with [[1]] blocks as a second matrix to check batching (f32). */
START_TEST(cholesky_3x3_batched_f32) {
  const int64_t d[3] = {2, 3, 3};
  const float a[18] = {25, 15, -5, 15, 18, 0, -5, 0, 11,
                       9, 0, 0, 0, 16, 0, 0, 0, 1};
  Op o;
  op_init(&o, HLO_OP_CHOLESKY, HLO_F32, 1, 3, d, NULL, a, NULL);
  o.ins->lower = true;
  ck_assert_int_eq(op_run(&o), 0);
  const float want[18] = {5, 0, 0, 3, 3, 0, -1, 1, 3,
                          3, 0, 0, 0, 4, 0, 0, 0, 1};
  const float *y = o.out->data;
  for (int i = 0; i < 18; i++) ck_assert_float_eq_tol(y[i], want[i], 1e-6);
  op_free(&o);
}
END_TEST

/* [[1,2],[2,1]] is not positive definite (second pivot 1 - 4 < 0): XLA
 * returns NaN for the whole matrix; the other batch element is unaffected. */
START_TEST(cholesky_not_spd_gives_nan) {
  const int64_t d[3] = {2, 2, 2};
  const double a[8] = {1, 2, 2, 1, 4, 0, 0, 9};
  Op o;
  op_init(&o, HLO_OP_CHOLESKY, HLO_F64, 1, 3, d, NULL, a, NULL);
  o.ins->lower = true;
  ck_assert_int_eq(op_run(&o), 0);
  const double *y = o.out->data;
  for (int i = 0; i < 4; i++) ck_assert(isnan(y[i]));
  const double good[4] = {2, 0, 0, 3};
  for (int i = 0; i < 4; i++) ck_assert_double_eq_tol(y[4 + i], good[i], 1e-15);
  op_free(&o);
}
END_TEST

/* Hermitian [[4, -2i],[2i, 2]] = L L^H with L = [[2, 0],[i, 1]] (c128). */
START_TEST(cholesky_complex_hermitian) {
  const int64_t d[2] = {2, 2};
  const double a[8] = {4, 0, 0, -2, 0, 2, 2, 0};
  Op o;
  op_init(&o, HLO_OP_CHOLESKY, HLO_C128, 1, 2, d, NULL, a, NULL);
  o.ins->lower = true;
  ck_assert_int_eq(op_run(&o), 0);
  const double want[8] = {2, 0, 0, 0, 0, 1, 1, 0};
  expect_f64(&o, want, 8, 1e-15);
  op_free(&o);
}
END_TEST

/* ---- triangular-solve ----------------------------------------------------- */

static void trsm(Op *o, HloDtype t, int32_t rank, const int64_t *ad, const int64_t *bd,
                 const void *a, const void *b, bool left, bool lower, bool unit, HloTransposeA tr) {
  op_init(o, HLO_OP_TRIANGULAR_SOLVE, t, 2, rank, ad, bd, a, b);
  o->ins->left_side = left;
  o->ins->lower = lower;
  o->ins->unit_diagonal = unit;
  o->ins->transpose_a = tr;
  ck_assert_int_eq(op_run(o), 0);
}

/* a = [[2,0],[1,4]] (the 7 above the diagonal is ignored), b = [2, 9]^T.
 * a x = b: x = [1, 2]. a^T x = b: x1 = 9/4, x0 = (2 - 9/4)/2 = -1/8. */
START_TEST(trsm_left_lower_notrans_trans) {
  const int64_t ad[2] = {2, 2}, bd[2] = {2, 1};
  const double a[4] = {2, 7, 1, 4}, b[2] = {2, 9};
  Op o;
  trsm(&o, HLO_F64, 2, ad, bd, a, b, true, true, false, HLO_TRANSPOSE_NO);
  const double x1[2] = {1, 2};
  expect_f64(&o, x1, 2, 1e-15);
  op_free(&o);
  trsm(&o, HLO_F64, 2, ad, bd, a, b, true, true, false, HLO_TRANSPOSE_YES);
  const double x2[2] = {-0.125, 2.25};
  expect_f64(&o, x2, 2, 1e-15);
  op_free(&o);
}
END_TEST

/* Right side: x a = b with a = [[2,0],[1,4]], b = [4, 8]: 4 x1 = 8 -> x1 = 2;
 * 2 x0 + x1 = 4 -> x0 = 1. Upper (garbage 99 below ignored) a = [[2,1],[99,4]]:
 * x a = [2 x0, x0 + 4 x1] = [4, 8] -> x0 = 2, x1 = 1.5. */
START_TEST(trsm_right_side) {
  const int64_t ad[2] = {2, 2}, bd[2] = {1, 2};
  const double lo[4] = {2, 7, 1, 4}, up[4] = {2, 1, 99, 4}, b[2] = {4, 8};
  Op o;
  trsm(&o, HLO_F64, 2, ad, bd, lo, b, false, true, false, HLO_TRANSPOSE_NO);
  const double x1[2] = {1, 2};
  expect_f64(&o, x1, 2, 1e-15);
  op_free(&o);
  trsm(&o, HLO_F64, 2, ad, bd, up, b, false, false, false, HLO_TRANSPOSE_NO);
  const double x2[2] = {2, 1.5};
  expect_f64(&o, x2, 2, 1e-15);
  op_free(&o);
}
END_TEST

/* unit_diagonal ignores the stored diagonal: a = [[7,0],[3,9]] -> [[1,0],[3,1]],
 * b = [1, 5] -> x = [1, 2]; batched with a second system (f32). */
START_TEST(trsm_unit_diagonal_batched) {
  const int64_t ad[3] = {2, 2, 2}, bd[3] = {2, 2, 1};
  const float a[8] = {7, 0, 3, 9, 5, 1, 0, 5}, b[4] = {1, 5, 3, 2};
  Op o;
  trsm(&o, HLO_F32, 3, ad, bd, a, b, true, true, true, HLO_TRANSPOSE_NO);
  /* Second: lower unit of [[5,1],[0,5]] is [[1,0],[0,1]]: x = b. */
  const float want[4] = {1, 2, 3, 2};
  const float *y = o.out->data;
  for (int i = 0; i < 4; i++) ck_assert_float_eq_tol(y[i], want[i], 1e-6);
  op_free(&o);
}
END_TEST

/* ADJOINT conjugates: a = [[2,0],[i,1]] lower, a^H = [[2,-i],[0,1]];
 * b = [2-i, 1]: x1 = 1, x0 = (2 - i + i)/2 = 1. TRANSPOSE alone would give
 * [[2, i],[0, 1]]: x1 = 1, x0 = (2 - i - i)/2 = 1 - i. */
START_TEST(trsm_adjoint_complex) {
  const int64_t ad[2] = {2, 2}, bd[2] = {2, 1};
  const double a[8] = {2, 0, 0, 0, 0, 1, 1, 0}, b[4] = {2, -1, 1, 0};
  Op o;
  trsm(&o, HLO_C128, 2, ad, bd, a, b, true, true, false, HLO_TRANSPOSE_ADJOINT);
  const double x[4] = {1, 0, 1, 0};
  expect_f64(&o, x, 4, 1e-15);
  op_free(&o);
  trsm(&o, HLO_C128, 2, ad, bd, a, b, true, true, false, HLO_TRANSPOSE_YES);
  const double y[4] = {1, -1, 1, 0};
  expect_f64(&o, y, 4, 1e-15);
  op_free(&o);
}
END_TEST

/* Upper, transposed, right side, 3x3: a = [[1,2,3],[0,4,5],[0,0,6]],
 * op(a) = a^T (lower); x a^T = b with x = [1,1,1]: b = [6, 9, 6]. */
START_TEST(trsm_right_upper_transposed) {
  const int64_t ad[2] = {3, 3}, bd[2] = {1, 3};
  const double a[9] = {1, 2, 3, -1, 4, 5, -1, -1, 6}, b[3] = {6, 9, 6};
  Op o;
  trsm(&o, HLO_F64, 2, ad, bd, a, b, false, false, false, HLO_TRANSPOSE_YES);
  const double x[3] = {1, 1, 1};
  expect_f64(&o, x, 3, 1e-14);
  op_free(&o);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("linalg");
  TCase *t = tcase_create("cholesky");
  tcase_add_checked_fixture(t, tl_begin, tl_end);
  tcase_add_test(t, cholesky_2x2_lower_upper);
  tcase_add_test(t, cholesky_3x3_batched_f32);
  tcase_add_test(t, cholesky_not_spd_gives_nan);
  tcase_add_test(t, cholesky_complex_hermitian);
  suite_add_tcase(s, t);
  t = tcase_create("triangular-solve");
  tcase_add_checked_fixture(t, tl_begin, tl_end);
  tcase_add_test(t, trsm_left_lower_notrans_trans);
  tcase_add_test(t, trsm_right_side);
  tcase_add_test(t, trsm_unit_diagonal_batched);
  tcase_add_test(t, trsm_adjoint_complex);
  tcase_add_test(t, trsm_right_upper_transposed);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tl_main(suite()); }
