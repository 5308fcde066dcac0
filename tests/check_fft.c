/* check_fft.c: the 1-D transform and the fft opcode.
 *
 * Expected values: DFTs worked by hand (lengths 1, 4, 5, 8), XLA's stated
 * results from the public evaluator cases (eval_1D_FFT_4_on_c64x4,
 * eval_1D_RFFT_9_on_f32x9, eval_3D_FFT_1x0x1_on_c64x1x1x1x1), and, for long
 * and prime lengths, a direct O(n^2) DFT in long double written here. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "interp/kernels/control.h"
#include "tests/testlib.h"

typedef double complex cplx;

static void assert_close(cplx got, cplx want, double tol) {
  ck_assert_msg(cabs(got - want) <= tol * (1 + cabs(want)), "got (%.17g, %.17g), want (%.17g, %.17g)",
                creal(got), cimag(got), creal(want), cimag(want));
}

/* ---- the 1-D transform ---------------------------------------------------- */

START_TEST(dft_length_4) {
  cplx d[4] = {1, 2, 3, 4};
  HlkFftPlan *p = hlk_fft_plan_new(4);
  hlk_fft_run(p, d, false);
  const cplx want[4] = {10, -2 + 2 * I, -2, -2 - 2 * I};
  for (int k = 0; k < 4; k++) assert_close(d[k], want[k], 1e-15);
  hlk_fft_run(p, d, true);
  for (int k = 0; k < 4; k++) assert_close(d[k], k + 1, 1e-15);
  hlk_fft_plan_free(p);
}
END_TEST

/* A unit impulse at 1 gives the roots of unity exp(-2 pi i k/5). */
START_TEST(dft_length_5) {
  cplx d[5] = {0, 1, 0, 0, 0};
  HlkFftPlan *p = hlk_fft_plan_new(5);
  hlk_fft_run(p, d, false);
  const double c1 = 0.30901699437494742, s1 = 0.95105651629515357;  /* cos, sin 72 deg */
  const double c2 = -0.80901699437494742, s2 = 0.58778525229247313; /* cos, sin 144 deg */
  const cplx want[5] = {1, c1 - s1 * I, c2 - s2 * I, c2 + s2 * I, c1 + s1 * I};
  for (int k = 0; k < 5; k++) assert_close(d[k], want[k], 1e-15);
  hlk_fft_plan_free(p);
}
END_TEST

/* Box {1,1,1,1,0,0,0,0}: X0 = 4, X1 = 1 - i(1+sqrt2), X2 = 1 - i - 1 + i = 0,
 * X3 = 1 + i(1-sqrt2), X4 = 0 and the rest by conjugate symmetry. */
START_TEST(dft_length_8) {
  cplx d[8] = {1, 1, 1, 1, 0, 0, 0, 0};
  HlkFftPlan *p = hlk_fft_plan_new(8);
  hlk_fft_run(p, d, false);
  const double r2 = sqrt(2.0);
  const cplx want[8] = {4, 1 - I * (1 + r2), 0, 1 + I * (1 - r2), 0,
                        1 - I * (1 - r2), 0, 1 + I * (1 + r2)};
  for (int k = 0; k < 8; k++) assert_close(d[k], want[k], 1e-15);
  hlk_fft_plan_free(p);
}
END_TEST

START_TEST(dft_length_1) {
  cplx d[1] = {3 - 2 * I};
  HlkFftPlan *p = hlk_fft_plan_new(1);
  hlk_fft_run(p, d, false);
  assert_close(d[0], 3 - 2 * I, 0);
  hlk_fft_plan_free(p);
}
END_TEST

/* Mixed radix (360 = 2^3 3^2 5), a large prime (Bluestein) and a prime
 * power against a direct DFT in long double: c128-grade accuracy. */
START_TEST(dft_against_direct) {
  static const int64_t lens[] = {360, 17, 97, 1009, 49, 2 * 67, 16, 1024};
  for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
    int64_t n = lens[li];
    cplx *d = malloc((size_t)n * sizeof *d), *x = malloc((size_t)n * sizeof *x);
    for (int64_t j = 0; j < n; j++) x[j] = d[j] = sin(0.37 * (double)j) + I * cos(1.3 * (double)(j * j % 11));
    HlkFftPlan *p = hlk_fft_plan_new(n);
    ck_assert_ptr_nonnull(p);
    hlk_fft_run(p, d, false);
    for (int64_t k = 0; k < n; k++) {
      long double re = 0, im = 0;
      for (int64_t j = 0; j < n; j++) {
        long double a = -2.0L * 3.14159265358979323846264338327950288L * (long double)((j * k) % n) / (long double)n;
        re += creal(x[j]) * cosl(a) - cimag(x[j]) * sinl(a);
        im += creal(x[j]) * sinl(a) + cimag(x[j]) * cosl(a);
      }
      ck_assert_msg(cabs(d[k] - ((double)re + I * (double)im)) < 1e-11 * sqrt((double)n) * 4,
                    "n=%lld k=%lld", (long long)n, (long long)k);
    }
    hlk_fft_run(p, d, true);
    for (int64_t j = 0; j < n; j++) ck_assert(cabs(d[j] - x[j]) < 1e-12);
    hlk_fft_plan_free(p);
    free(d);
    free(x);
  }
}
END_TEST

/* ---- the fft opcode -------------------------------------------------------- */

typedef struct Op { HliValue *in, *out; } Op;

static int op_run(Op *o, HloFftType ty, HloDtype it, int32_t rank, const int64_t *idims,
                  HloDtype ot, const int64_t *odims, int32_t nlen, const int64_t *len,
                  const void *data) {
  HloInstr *ins = tl_instr(HLO_OP_FFT, tl_shape(ot, rank, odims), 1,
                           tl_param(0, tl_shape(it, rank, idims)));
  ins->fft_type = ty;
  ins->fft_length = tl_ints(nlen, len);
  o->in = tl_value(&ins->ops[0]->shape, data);
  o->out = tl_value(&ins->shape, NULL);
  memset(o->out->data, 0x7f, o->out->nbytes);
  return hli_op_table()[HLO_OP_FFT].run(NULL, ins, &o->in, o->out);
}

static void op_free(Op *o) {
  hli_value_unref(NULL, o->in);
  hli_value_unref(NULL, o->out);
}

/* A 2-D FFT over c128[96,40,40] through a module: its 3840 lines per
 * dimension are shared among threads (each with its own plan), so 1, 2
 * and 3 threads give the same bits; and the first output row matches the
 * DFT summed directly. */
START_TEST(op_fft_threads_same_bits) {
  enum { A = 96, B = 40, C = 40, N = A * B * C };
  static double x[2 * N];
  for (int i = 0; i < 2 * N; i++) x[i] = sin(i * 0.61) + 0.25 * cos(i * 1.7);
  const char *text = "HloModule m\nENTRY e {\n  x = c128[96,40,40] parameter(0)\n"
                     "  ROOT f = c128[96,40,40] fft(x), fft_type=FFT, fft_length={40,40}\n}\n";
  static double first[2 * N];
  for (int threads = 1; threads <= 3; threads++) {
    HloCtx *ctx = tl_ctx_new(threads);
    HloBuffer *in = NULL;
    ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_C128, (int64_t[]){A, B, C}, 3, x, &in),
                     HLO_OK);
    HloBuffer *r = tl_run_ok(ctx, text, &in, 1);
    if (threads == 1) memcpy(first, hlo_buffer_data(r), sizeof first);
    else ck_assert_int_eq(memcmp(first, hlo_buffer_data(r), sizeof first), 0);
    hlo_buffer_free(r);
    hlo_buffer_free(in);
    hlo_ctx_free(ctx);
  }
  /* y[0][0][k] = sum over (b, c) of x[0][b][c] exp(-2 pi i (0 b / 40 + k c / 40)) */
  for (int k = 0; k < C; k++) {
    double re = 0, im = 0;
    for (int b = 0; b < B; b++)
      for (int c = 0; c < C; c++) {
        double a = -2 * M_PI * (double)(k * c % C) / C, xr = x[2 * (b * C + c)],
               xi = x[2 * (b * C + c) + 1];
        re += xr * cos(a) - xi * sin(a);
        im += xr * sin(a) + xi * cos(a);
      }
    ck_assert_double_eq_tol(first[2 * k], re, 1e-9);
    ck_assert_double_eq_tol(first[2 * k + 1], im, 1e-9);
  }
}
END_TEST

/* Result bytes of `text` on one input of type et, dims d (rank), data x. */
static void *module_bytes(const char *text, HloElementType et, int rank, const int64_t *d,
                          const void *x, size_t *bytes) {
  HloCtx *ctx = tl_ctx_new(2);
  HloBuffer *in = NULL;
  ck_assert_int_eq(hlo_buffer_new_array(ctx, et, d, rank, x, &in), HLO_OK);
  HloBuffer *r = tl_run_ok(ctx, text, &in, 1);
  *bytes = hlo_buffer_nbytes(r);
  void *out = malloc(*bytes);
  ck_assert_ptr_nonnull(out);
  memcpy(out, hlo_buffer_data(r), *bytes);
  hlo_buffer_free(r);
  hlo_buffer_free(in);
  hlo_ctx_free(ctx);
  return out;
}

/* Result bytes of an fft of x (type ty, dims text, fft_length text, kind)
 * of et, dims d (rank); checked to be `bytes` long. */
static void *fft_bytes(const char *ty, const char *dims, const char *lengths, const char *kind,
                       HloElementType et, int rank, const int64_t *d, const void *x, size_t bytes) {
  char text[512];
  snprintf(text, sizeof text,
           "HloModule m\nENTRY e {\n  x = %s[%s] parameter(0)\n"
           "  ROOT f = %s[%s] fft(x), fft_type=%s, fft_length={%s}\n}\n",
           ty, dims, ty, dims, kind, lengths);
  size_t got;
  void *out = module_bytes(text, et, rank, d, x, &got);
  ck_assert_uint_eq(got, bytes);
  return out;
}

START_TEST(op_fft_lines_direct_same_bits) {
  /* A 1-D FFT or IFFT over the whole last dimension runs line by line from
   * the operand into the result; the same lines as a 2-D transform whose
   * first length is 1 (the general path: work array, copies) must give the
   * same bytes: powers of two (the split butterflies), 12 (mixed radix),
   * 97 (Bluestein), and a power of two whose lines hold an infinity or a
   * NaN (those fall back to the complex-product path). The first line of a
   * 16-point FFT is checked against a direct DFT as well. */
  static const int64_t lengths[] = {16, 1024, 4096, 12, 97};
  static const char *const kinds[] = {"FFT", "IFFT"};
  enum { B = 5 };
  for (int li = 0; li < 5; li++)
    for (int c = 0; c < 2; c++)
      for (int kind = 0; kind < 2; kind++) {
        int64_t n = lengths[li];
        bool c64 = c == 0;
        size_t es = c64 ? 8 : 16, bytes = (size_t)B * (size_t)n * es;
        char *x = malloc(bytes);
        ck_assert_ptr_nonnull(x);
        for (int64_t i = 0; i < 2 * B * n; i++) {
          double v = sin((double)i * 0.37) + 0.5 * cos((double)i * 2.3);
          if (li == 1 && i == 2 * n + 7) v = INFINITY;   /* line 1 */
          if (li == 1 && i == 3 * 2 * n + 100) v = NAN;  /* line 3 */
          if (c64) ((float *)(void *)x)[i] = (float)v;
          else ((double *)(void *)x)[i] = v;
        }
        char dims2[64], dims3[64], len1[32], len2[32];
        snprintf(dims2, sizeof dims2, "%d,%lld", B, (long long)n);
        snprintf(dims3, sizeof dims3, "%d,1,%lld", B, (long long)n);
        snprintf(len1, sizeof len1, "%lld", (long long)n);
        snprintf(len2, sizeof len2, "1,%lld", (long long)n);
        const char *ty = c64 ? "c64" : "c128";
        HloElementType et = c64 ? HLO_TYPE_C64 : HLO_TYPE_C128;
        void *direct = fft_bytes(ty, dims2, len1, kinds[kind], et, 2, (int64_t[]){B, n}, x, bytes);
        void *general = fft_bytes(ty, dims3, len2, kinds[kind], et, 3, (int64_t[]){B, 1, n}, x, bytes);
        ck_assert_msg(memcmp(direct, general, bytes) == 0, "n %lld, %s, %s: the paths differ",
                      (long long)n, ty, kinds[kind]);
        if (n == 16 && !c64 && kind == 0) {
          const double *xd = (const double *)(void *)x, *y = direct;
          for (int k = 0; k < 16; k++) {
            cplx want = 0;
            for (int t = 0; t < 16; t++)
              want += (xd[2 * t] + I * xd[2 * t + 1]) * cexp(-2 * M_PI * I * (double)(k * t % 16) / 16);
            assert_close(y[2 * k] + I * y[2 * k + 1], want, 1e-12);
          }
        }
        free(direct);
        free(general);
        free(x);
      }
}
END_TEST

START_TEST(op_real_fft_lines_direct_same_bits) {
  /* RFFT (n reals -> n/2+1) and IRFFT (n/2+1 -> n reals) over the whole
   * last dimension run line by line from operand to result; the same lines
   * as a 2-D transform whose first length is 1 (the general path) must give
   * the same bytes: lengths 16, 1024 (powers of two), 9, 12 and 97, f32 and
   * f64. By hand: the RFFT of line 0 of a length-16 f64 signal starts with
   * the sum of its values. */
  static const int64_t lengths[] = {16, 1024, 9, 12, 97};
  enum { B = 3 };
  for (int li = 0; li < 5; li++)
    for (int f64 = 0; f64 < 2; f64++)
      for (int inv = 0; inv < 2; inv++) {
        int64_t n = lengths[li], h = n / 2 + 1, nin = inv ? h : n;
        const char *rt = f64 ? "f64" : "f32", *ct = f64 ? "c128" : "c64";
        const char *ti = inv ? ct : rt, *to = inv ? rt : ct, *kind = inv ? "IRFFT" : "RFFT";
        HloElementType et = inv ? (f64 ? HLO_TYPE_C128 : HLO_TYPE_C64)
                                : (f64 ? HLO_TYPE_F64 : HLO_TYPE_F32);
        int64_t vals = B * nin * (inv ? 2 : 1);
        char *x = malloc((size_t)vals * 8);
        ck_assert_ptr_nonnull(x);
        for (int64_t i = 0; i < vals; i++) {
          double v = cos((double)i * 0.91) - 0.3 * sin((double)i * 0.13);
          if (f64) ((double *)(void *)x)[i] = v;
          else ((float *)(void *)x)[i] = (float)v;
        }
        char direct[512], general[512];
        snprintf(direct, sizeof direct,
                 "HloModule m\nENTRY e {\n  x = %s[%d,%lld] parameter(0)\n"
                 "  ROOT f = %s[%d,%lld] fft(x), fft_type=%s, fft_length={%lld}\n}\n",
                 ti, B, (long long)nin, to, B, (long long)(inv ? n : h), kind, (long long)n);
        snprintf(general, sizeof general,
                 "HloModule m\nENTRY e {\n  x = %s[%d,1,%lld] parameter(0)\n"
                 "  ROOT f = %s[%d,1,%lld] fft(x), fft_type=%s, fft_length={1,%lld}\n}\n",
                 ti, B, (long long)nin, to, B, (long long)(inv ? n : h), kind, (long long)n);
        size_t b1, b2;
        void *d = module_bytes(direct, et, 2, (int64_t[]){B, nin}, x, &b1);
        void *g = module_bytes(general, et, 3, (int64_t[]){B, 1, nin}, x, &b2);
        ck_assert_uint_eq(b1, b2);
        ck_assert_msg(memcmp(d, g, b1) == 0, "%s n %lld %s: the paths differ", kind, (long long)n, rt);
        if (n == 16 && f64 && !inv) {
          double sum = 0;
          for (int t = 0; t < 16; t++) sum += ((const double *)(void *)x)[t];
          ck_assert_double_eq_tol(((const double *)d)[0], sum, 1e-12);
          ck_assert_double_eq_tol(((const double *)d)[1], 0.0, 1e-12);
        }
        free(d);
        free(g);
        free(x);
      }
}
END_TEST

/* XLA's evaluator test 1D_FFT_4_on_c64x4: {1,2,3,4} -> {10, -2+2i, -2, -2-2i}. */
START_TEST(op_fft_c64) {
  Op o;
  const float x[8] = {1, 0, 2, 0, 3, 0, 4, 0};
  const int64_t d[1] = {4};
  ck_assert_int_eq(op_run(&o, HLO_FFT_FFT, HLO_C64, 1, d, HLO_C64, d, 1, d, x), 0);
  const float want[8] = {10, 0, -2, 2, -2, 0, -2, -2};
  const float *y = o.out->data;
  for (int i = 0; i < 8; i++) ck_assert_float_eq_tol(y[i], want[i], 1e-5);
  op_free(&o);
}
END_TEST

/* XLA's evaluator test 1D_RFFT_9_on_f32x9 (input and expected values from
 * the case files). */
START_TEST(op_rfft_9) {
  Op o;
  const float x[9] = {1.8f, 2.7f, 3.6f, 4.5f, 5.4f, 6.3f, 7.2f, 8.1f, 9.9f};
  const int64_t id[1] = {9}, od[1] = {5}, len[1] = {9};
  ck_assert_int_eq(op_run(&o, HLO_FFT_RFFT, HLO_F32, 1, id, HLO_C64, od, 1, len, x), 0);
  const float want[10] = {49.5f, 0.0f, -3.36056f, 11.705792f, -3.893717f, 5.712929f,
                          -4.5f, 3.117691f, -4.895723f, 1.021942f};
  const float *y = o.out->data;
  for (int i = 0; i < 10; i++) ck_assert_float_eq_tol(y[i], want[i], 1e-4);
  op_free(&o);
}
END_TEST

/* IRFFT of RFFT gives the signal back, for even and odd lengths, in f64,
 * and with two transformed dimensions. */
START_TEST(op_rfft_irfft_round_trip) {
  static const int64_t shapes[][2] = {{3, 8}, {4, 9}, {5, 7}};
  for (int si = 0; si < 3; si++) {
    int64_t r0 = shapes[si][0], n = shapes[si][1], h = n / 2 + 1;
    double *x = malloc((size_t)(r0 * n) * sizeof *x);
    for (int64_t i = 0; i < r0 * n; i++) x[i] = cos(0.7 * (double)i) + 0.25 * (double)(i % 3);
    const int64_t id[2] = {r0, n}, hd[2] = {r0, h}, len[2] = {r0, n};
    Op a, b;
    ck_assert_int_eq(op_run(&a, HLO_FFT_RFFT, HLO_F64, 2, id, HLO_C128, hd, 2, len, x), 0);
    ck_assert_int_eq(op_run(&b, HLO_FFT_IRFFT, HLO_C128, 2, hd, HLO_F64, id, 2, len, a.out->data), 0);
    const double *y = b.out->data;
    for (int64_t i = 0; i < r0 * n; i++) ck_assert_double_eq_tol(y[i], x[i], 1e-12);
    /* The DC bin of the 2-D transform is the sum of the signal. */
    double sum = 0;
    for (int64_t i = 0; i < r0 * n; i++) sum += x[i];
    ck_assert_double_eq_tol(((const double *)a.out->data)[0], sum, 1e-11);
    op_free(&a);
    op_free(&b);
    free(x);
  }
}
END_TEST

/* IRFFT by hand: spectrum {4, 0, 0} of length 4 -> {1, 1, 1, 1}; the
 * imaginary parts of DC and Nyquist are ignored. */
START_TEST(op_irfft_ignores_dc_nyquist_imag) {
  Op o;
  const float x[6] = {4, 5, 0, 0, 0, -3};
  const int64_t id[1] = {3}, od[1] = {4};
  ck_assert_int_eq(op_run(&o, HLO_FFT_IRFFT, HLO_C64, 1, id, HLO_F32, od, 1, od, x), 0);
  const float *y = o.out->data;
  for (int i = 0; i < 4; i++) ck_assert_float_eq_tol(y[i], 1.0f, 1e-6);
  op_free(&o);
}
END_TEST

/* XLA's evaluator test 3D_FFT_1x0x1_on_c64x1x1x1x1: a zero fft_length gives zeros. */
START_TEST(op_zero_length_gives_zeros) {
  Op o;
  const float x[2] = {42.24f, 24.42f};
  const int64_t d[4] = {1, 1, 1, 1}, len[3] = {1, 0, 1};
  ck_assert_int_eq(op_run(&o, HLO_FFT_FFT, HLO_C64, 4, d, HLO_C64, d, 3, len, x), 0);
  const float *y = o.out->data;
  ck_assert_float_eq(y[0], 0.0f);
  ck_assert_float_eq(y[1], 0.0f);
  op_free(&o);
}
END_TEST

START_TEST(op_type_mismatch_is_error) {
  Op o;
  const float x[4] = {1, 2, 3, 4};
  const int64_t d[1] = {4};
  ck_assert_int_eq(op_run(&o, HLO_FFT_FFT, HLO_F32, 1, d, HLO_C64, d, 1, d, x), -1);
  ck_assert_ptr_nonnull(strstr(hli_last_error(), "element types f32 -> c64 do not fit this fft_type"));
  op_free(&o);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("fft");
  TCase *t = tcase_create("transform");
  tcase_add_test(t, dft_length_4);
  tcase_add_test(t, dft_length_5);
  tcase_add_test(t, dft_length_8);
  tcase_add_test(t, dft_length_1);
  tcase_add_test(t, dft_against_direct);
  /* The direct O(n^2) references take seconds on a loaded host: Check's
   * default 4 s limit failed them in a CI run sharing its cores. */
  tcase_set_timeout(t, 60);
  suite_add_tcase(s, t);
  t = tcase_create("opcode");
  tcase_add_checked_fixture(t, tl_begin, tl_end);
  tcase_add_test(t, op_fft_c64);
  tcase_add_test(t, op_fft_threads_same_bits);
  tcase_add_test(t, op_rfft_9);
  tcase_add_test(t, op_rfft_irfft_round_trip);
  tcase_add_test(t, op_irfft_ignores_dc_nyquist_imag);
  tcase_add_test(t, op_zero_length_gives_zeros);
  tcase_add_test(t, op_type_mismatch_is_error);
  tcase_add_test(t, op_fft_lines_direct_same_bits);
  tcase_add_test(t, op_real_fft_lines_direct_same_bits);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tl_main(suite()); }
