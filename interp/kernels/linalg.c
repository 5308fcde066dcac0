/* linalg.c: cholesky and triangular-solve on batches of small dense
 * matrices (the minor two dimensions; every other dimension is a batch).
 *
 * Both work on one matrix at a time in double (complex) precision for every
 * floating-point and complex element type, then round once into the result
 * type. XLA:CPU expands these ops into blocked HLO in the element type, so
 * low-precision results can differ from XLA's in the last bits; the
 * algorithm is the same.
 *
 * cholesky follows XLA's CholeskyExpander: only the chosen triangle of the
 * input is read, the other triangle of the result is zero, and a matrix
 * whose factorisation meets a NaN pivot square root (not positive
 * definite) comes back as all NaN. upper is computed as the lower factor of
 * the transposed input, transposed back (so U^H U = A).
 *
 * triangular-solve solves op(a) x = b (left_side) or x op(a) = b, reading
 * only the chosen triangle of a (and not its diagonal when unit_diagonal),
 * with op = identity, transpose or conjugate transpose. Zero pivots divide
 * by zero (IEEE inf/NaN), as XLA does. */
#include "interp/kernels/control.h"
#include "interp/kernels/register.h"
#include "common/numeric.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef double complex cplx;

static bool linalg_type_ok(HloDtype t) { return hlc_dtype_is_float(t) || hlc_dtype_is_complex(t); }

/* Load n elements starting at element `at` of an array of type t. */
static void load_matrix(HloDtype t, const void *data, int64_t at, int64_t n, cplx *dst) {
  switch (t) {
  case HLO_F32: { const float *p = (const float *)data + at; for (int64_t i = 0; i < n; i++) dst[i] = p[i]; return; }
  case HLO_F64: { const double *p = (const double *)data + at; for (int64_t i = 0; i < n; i++) dst[i] = p[i]; return; }
  case HLO_C64: { const float *p = (const float *)data + 2 * at; for (int64_t i = 0; i < n; i++) dst[i] = p[2 * i] + I * p[2 * i + 1]; return; }
  case HLO_C128: { const double *p = (const double *)data + 2 * at; for (int64_t i = 0; i < n; i++) dst[i] = p[2 * i] + I * p[2 * i + 1]; return; }
  default: {
    size_t es = hlc_dtype_size(t);
    const char *p = (const char *)data + (size_t)at * es;
    for (int64_t i = 0; i < n; i++) dst[i] = hlc_load_f64(t, p + (size_t)i * es);
  }
  }
}

static void store_matrix(HloDtype t, void *data, int64_t at, int64_t n, const cplx *src) {
  switch (t) {
  case HLO_F32: { float *p = (float *)data + at; for (int64_t i = 0; i < n; i++) p[i] = (float)creal(src[i]); return; }
  case HLO_F64: { double *p = (double *)data + at; for (int64_t i = 0; i < n; i++) p[i] = creal(src[i]); return; }
  case HLO_C64: { float *p = (float *)data + 2 * at; for (int64_t i = 0; i < n; i++) { p[2 * i] = (float)creal(src[i]); p[2 * i + 1] = (float)cimag(src[i]); } return; }
  case HLO_C128: { double *p = (double *)data + 2 * at; for (int64_t i = 0; i < n; i++) { p[2 * i] = creal(src[i]); p[2 * i + 1] = cimag(src[i]); } return; }
  default: {
    size_t es = hlc_dtype_size(t);
    char *p = (char *)data + (size_t)at * es;
    for (int64_t i = 0; i < n; i++) hlc_store_f64(t, p + (size_t)i * es, creal(src[i]));
  }
  }
}

/* ---- cholesky ----------------------------------------------------------- */

/* Lower factor of the n x n matrix a (row-major; only i >= j read) into l
 * (zero above the diagonal). Returns -1 on a NaN pivot square root. The
 * update matches XLA's unblocked loop: column j of (A - L L^H) divided by
 * sqrt of its diagonal entry (so the diagonal is t / sqrt(t)). */
static int cholesky_lower(const cplx *a, cplx *l, int64_t n) {
  memset(l, 0, (size_t)(n * n) * sizeof *l);
  if (n == 1) {
    /* A single block of size one: XLA takes the square root directly. */
    double d = sqrt(creal(a[0]));
    l[0] = d;
    return isnan(d) ? -1 : 0;
  }
  for (int64_t j = 0; j < n; j++) {
    cplx t = a[j * n + j];
    for (int64_t k = 0; k < j; k++) t -= l[j * n + k] * conj(l[j * n + k]);
    double piv = sqrt(creal(t));   /* complex: the real part, as XLA */
    if (isnan(piv)) return -1;
    for (int64_t i = j; i < n; i++) {
      cplx s = i == j ? t : a[i * n + j];
      if (i != j)
        for (int64_t k = 0; k < j; k++) s -= l[i * n + k] * conj(l[j * n + k]);
      l[i * n + j] = s / piv;
    }
  }
  return 0;
}

int hlk_cholesky_f64(double *a, int64_t n, bool lower) {
  if (n <= 0) return 0;
  cplx *m = calloc((size_t)(n * n), sizeof *m);
  cplx *l = calloc((size_t)(n * n), sizeof *l);
  if (!m || !l) { free(m); free(l); return -1; }
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) m[i * n + j] = lower ? a[i * n + j] : a[j * n + i];
  int rc = cholesky_lower(m, l, n);
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) {
      double v = rc ? NAN : creal(l[i * n + j]);
      if (lower) a[i * n + j] = v;
      else a[j * n + i] = v;
    }
  free(m);
  free(l);
  return rc;
}

static int check_cholesky(HliExec *x, const HloInstr *ins) {
  const HloShape *s = &ins->ops[0]->shape;
  if (!linalg_type_ok(s->dtype))
    return hli_fail(x, ins, "cholesky needs a floating-point or complex type, got %s",
                    hlc_dtype_name(s->dtype));
  if (s->rank < 2 || s->dims[s->rank - 1] != s->dims[s->rank - 2])
    return hli_fail(x, ins, "operand must be a batch of square matrices");
  if (!hlp_shape_compatible(s, &ins->shape)) return hli_fail(x, ins, "result shape differs from operand");
  if (s->dynamic) return hli_unsupported(x, ins, "cholesky with dynamic dimensions");
  return 0;
}

static int run_cholesky(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (check_cholesky(x, ins)) return -1;
  HloDtype t = in[0]->dtype;
  int64_t n = in[0]->dims[in[0]->rank - 1], nn = n * n;
  if (nn == 0) return 0;
  int64_t batch = in[0]->nelem / nn;
  /* One matrix at a time: a, m and l in one block counted against
   * --max-memory (hli_scratch_alloc reports when it does not fit). */
  cplx *a = hli_scratch_alloc(x, ins, 3 * (size_t)nn * sizeof *a);
  if (!a) return -1;
  cplx *m = a + nn, *l = m + nn;
  for (int64_t b = 0; b < batch; b++) {
    load_matrix(t, in[0]->data, b * nn, nn, a);
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) m[i * n + j] = ins->lower ? a[i * n + j] : a[j * n + i];
    int rc = cholesky_lower(m, l, n);
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) {
        cplx v = rc ? CMPLX(NAN, 0.0) : l[i * n + j];   /* XLA fills NaN (imaginary 0) */
        if (ins->lower) a[i * n + j] = v;
        else a[j * n + i] = v;
      }
    store_matrix(t, out->data, b * nn, nn, a);
  }
  hli_scratch_free(x, a);
  return 0;
}

/* ---- triangular-solve --------------------------------------------------- */

static int check_trsm(HliExec *x, const HloInstr *ins) {
  const HloShape *a = &ins->ops[0]->shape, *b = &ins->ops[1]->shape;
  if (!linalg_type_ok(a->dtype) || a->dtype != b->dtype)
    return hli_fail(x, ins, "operands must share a floating-point or complex type (%s, %s)",
                    hlc_dtype_name(a->dtype), hlc_dtype_name(b->dtype));
  if (a->rank < 2 || a->rank != b->rank)
    return hli_fail(x, ins, "a and b must be batches of matrices of the same rank");
  if (a->dims[a->rank - 1] != a->dims[a->rank - 2]) return hli_fail(x, ins, "a must be square");
  for (int32_t i = 0; i < a->rank - 2; i++)
    if (a->dims[i] != b->dims[i]) return hli_fail(x, ins, "batch dimensions of a and b differ");
  int64_t m = a->dims[a->rank - 1];
  int64_t bdim = ins->left_side ? b->dims[b->rank - 2] : b->dims[b->rank - 1];
  if (bdim != m)
    return hli_fail(x, ins, "b's %s dimension (%lld) must equal a's size (%lld)",
                    ins->left_side ? "row" : "column", (long long)bdim, (long long)m);
  if (!hlp_shape_compatible(b, &ins->shape)) return hli_fail(x, ins, "result shape differs from b");
  if (a->dynamic || b->dynamic) return hli_unsupported(x, ins, "triangular-solve with dynamic dimensions");
  return 0;
}

/* Solve with the m x m triangular matrix t (lower if tl): left side
 * t X = B for B m x n, or right side X t = B for B n x m; B overwritten. */
static void solve(const cplx *t, bool tl, cplx *bm, int64_t m, int64_t rows, int64_t cols,
                  bool left) {
  if (left) {
    for (int64_t c = 0; c < cols; c++) {
      if (tl)
        for (int64_t i = 0; i < m; i++) {
          cplx s = bm[i * cols + c];
          for (int64_t k = 0; k < i; k++) s -= t[i * m + k] * bm[k * cols + c];
          bm[i * cols + c] = s / t[i * m + i];
        }
      else
        for (int64_t i = m - 1; i >= 0; i--) {
          cplx s = bm[i * cols + c];
          for (int64_t k = i + 1; k < m; k++) s -= t[i * m + k] * bm[k * cols + c];
          bm[i * cols + c] = s / t[i * m + i];
        }
    }
    return;
  }
  for (int64_t r = 0; r < rows; r++) {
    cplx *x = bm + r * cols;
    if (tl)   /* x_j = (b_j - sum_{k>j} x_k t[k][j]) / t[j][j], j descending */
      for (int64_t j = m - 1; j >= 0; j--) {
        cplx s = x[j];
        for (int64_t k = j + 1; k < m; k++) s -= x[k] * t[k * m + j];
        x[j] = s / t[j * m + j];
      }
    else
      for (int64_t j = 0; j < m; j++) {
        cplx s = x[j];
        for (int64_t k = 0; k < j; k++) s -= x[k] * t[k * m + j];
        x[j] = s / t[j * m + j];
      }
  }
}

static int run_trsm(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (check_trsm(x, ins)) return -1;
  HloDtype ty = in[0]->dtype;
  int32_t r = in[1]->rank;
  int64_t m = in[0]->dims[r - 1], rows = in[1]->dims[r - 2], cols = in[1]->dims[r - 1];
  int64_t na = m * m, nb = rows * cols;
  if (nb == 0) return 0;
  int64_t batch = in[1]->nelem / nb;
  /* a, t (m x m each) and bm in one block counted against --max-memory. */
  cplx *a = hli_scratch_alloc(x, ins, (2 * (size_t)na + (size_t)nb) * sizeof *a);
  if (!a) return -1;
  cplx *t = a + na, *bm = t + na;
  bool trans = ins->transpose_a != HLO_TRANSPOSE_NO, adj = ins->transpose_a == HLO_TRANSPOSE_ADJOINT;
  bool tl = ins->lower != trans;   /* op(a) is lower triangular */
  for (int64_t b = 0; b < batch; b++) {
    load_matrix(ty, in[0]->data, b * na, na, a);
    /* t = op(triangle of a), with a unit diagonal if asked. */
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < m; j++) {
        int64_t si = trans ? j : i, sj = trans ? i : j;   /* element of a */
        bool in_tri = ins->lower ? si >= sj : si <= sj;
        cplx v = in_tri ? a[si * m + sj] : 0;
        if (adj) v = conj(v);
        if (i == j && ins->unit_diagonal) v = 1;
        t[i * m + j] = v;
      }
    load_matrix(ty, in[1]->data, b * nb, nb, bm);
    solve(t, tl, bm, m, rows, cols, ins->left_side);
    store_matrix(ty, out->data, b * nb, nb, bm);
  }
  hli_scratch_free(x, a);
  return 0;
}

void hlk_register_linalg(HliOpTable t) {
  t[HLO_OP_CHOLESKY] = (HliOpEntry){run_cholesky, check_cholesky};
  t[HLO_OP_TRIANGULAR_SOLVE] = (HliOpEntry){run_trsm, check_trsm};
}
