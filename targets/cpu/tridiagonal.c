/* tridiagonal.c: jaxlib's tridiagonal_solve_perturbed_ffi
 * (lax.linalg.tridiagonal_solve(..., perturb_singular=True) on the CPU).
 *
 * (dl, d, du [..., n], b [..., n, k]) -> x [..., n, k], one element type
 * (f32, f64, c64, c128) for all. jaxlib's own solver, not LAPACK
 * (jaxlib/tridiagonal_solve_perturbed.h, jax-ml/jax @ cec06d116c05,
 * SolveWithGaussianEliminationWithPivotingAndPerturbSingular, after LAPACK's
 * xLAGTF + xLAGTS): a row-pivoted LU factorization fused with the forward
 * solve, then back substitution in which a pivot below 1 in magnitude is
 * perturbed by eps * max|U| (doubling until the row no longer overflows) or
 * scaled up, so that singular systems give finite answers. The arithmetic
 * here is the header's, step for step and in its order: a row divided by a
 * pivot is a multiplication by its reciprocal, except for n = 1. dl[0] and
 * du[n-1] are not read. Lengths that do not match are an error (jaxlib
 * reads past the end). */
#include "targets/cpu/cpu.h"
#include <complex.h>
#include <float.h>
#include <math.h>
#include <string.h>

/* One instance per element type T with real type R. */
#define TRIDIAG(NAME, T, R, ABS, RABS, REAL, R_MIN, R_MAX, R_EPS)                                    \
  static void NAME##_perturb(R perturb, T *pivot, T *row, int64_t k) {                          \
    const R one = 1, tiny = R_MIN, small = one / R_MAX;                                        \
    const R safemin = small < tiny ? tiny : small * (one + R_EPS);                             \
    const R bignum = one / safemin;                                                            \
    R abs_pivot = ABS(*pivot);                                                                 \
    if (abs_pivot >= one) return;                                                              \
    perturb = RABS(perturb) < safemin ? safemin : RABS(perturb); /* std::max */                \
    perturb = (R)copysign(perturb, REAL(*pivot));                                              \
    R max_factor = 0;                                                                          \
    for (int64_t j = 0; j < k; j++)                                                            \
      if (j == 0 || ABS(row[j]) > max_factor) max_factor = ABS(row[j]);                        \
    bool stop = false;                                                                         \
    while (abs_pivot < one && !stop) {                                                         \
      if (abs_pivot < safemin) {                                                               \
        if (abs_pivot == 0 || max_factor * safemin > abs_pivot) {                              \
          *pivot += perturb;                                                                   \
          perturb *= 2;                                                                        \
        } else {                                                                               \
          *pivot *= bignum;                                                                    \
          for (int64_t j = 0; j < k; j++) row[j] *= bignum;                                    \
          stop = true;                                                                         \
        }                                                                                      \
      } else if (max_factor > abs_pivot * bignum) {                                            \
        *pivot += perturb;                                                                     \
        perturb *= 2;                                                                          \
      } else {                                                                                 \
        stop = true;                                                                           \
      }                                                                                        \
      abs_pivot = ABS(*pivot);                                                                 \
    }                                                                                          \
  }                                                                                            \
                                                                                               \
  /* x (n x k, row-major) from the diagonals and b; u: 3n scratch, row: k. */                  \
  static void NAME##_solve(int64_t n, int64_t k, const T *sub, const T *diag, const T *sup,   \
                           const T *rhs, T *x, T *u, T *row) {                                 \
    if (n == 0) return;                                                                        \
    if (n == 1) {                                                                              \
      T p = diag[0];                                                                           \
      R perturb = R_EPS * ABS(p);                                                              \
      memcpy(row, rhs, (size_t)k * sizeof(T));                                                 \
      NAME##_perturb(perturb, &p, row, k);                                                     \
      for (int64_t j = 0; j < k; j++) x[j] = row[j] / p;                                       \
      return;                                                                                  \
    }                                                                                          \
    /* u(i, c) = u[i * 3 + c]: U's diagonal and two superdiagonals. */                         \
    memset(u, 0, (size_t)(3 * n) * sizeof(T));                                                 \
    u[0] = diag[0];                                                                            \
    u[1] = sup[0];                                                                             \
    R max_abs_u = ABS(u[0]) < ABS(u[1]) ? ABS(u[1]) : ABS(u[0]);                               \
    R scale1 = ABS(u[0]) + ABS(u[1]);                                                          \
    memcpy(x, rhs, (size_t)k * sizeof(T));                                                     \
    for (int64_t i = 0; i < n - 1; i++) {                                                      \
      T *x0 = x + i * k, *x1 = x + (i + 1) * k;                                                \
      const T *r1 = rhs + (i + 1) * k;                                                         \
      u[(i + 1) * 3] = diag[i + 1];                                                            \
      R scale2 = ABS(sub[i + 1]) + ABS(u[(i + 1) * 3]);                                        \
      if (i < n - 2) scale2 += ABS(sup[i + 1]);                                                \
      if (sub[i + 1] == 0) {                                                                   \
        scale1 = scale2;                                                                       \
        u[(i + 1) * 3 + 1] = sup[i + 1];                                                       \
        u[i * 3 + 2] = 0;                                                                      \
        memcpy(x1, r1, (size_t)k * sizeof(T));                                                 \
      } else {                                                                                 \
        const R piv1 = u[i * 3] == 0 ? 0 : ABS(u[i * 3]) / scale1;                             \
        const R piv2 = ABS(sub[i + 1]) / scale2;                                               \
        if (piv2 <= piv1) {                                                                    \
          scale1 = scale2;                                                                     \
          const T factor = sub[i + 1] / u[i * 3];                                              \
          u[(i + 1) * 3] -= factor * u[i * 3 + 1];                                             \
          u[(i + 1) * 3 + 1] = sup[i + 1];                                                     \
          u[i * 3 + 2] = 0;                                                                    \
          for (int64_t j = 0; j < k; j++) x1[j] = r1[j] - factor * x0[j];                      \
        } else {                                                                               \
          const T factor = u[i * 3] / sub[i + 1];                                              \
          const T utmp = u[i * 3 + 1];                                                         \
          u[i * 3] = sub[i + 1];                                                               \
          u[(i + 1) * 3] = utmp - factor * diag[i + 1];                                        \
          u[i * 3 + 1] = diag[i + 1];                                                          \
          if (i < n - 2) {                                                                     \
            u[i * 3 + 2] = sup[i + 1];                                                         \
            u[(i + 1) * 3 + 1] = -factor * sup[i + 1];                                         \
          }                                                                                    \
          for (int64_t j = 0; j < k; j++) x1[j] = x0[j] - factor * r1[j];                      \
          memcpy(x0, r1, (size_t)k * sizeof(T));                                               \
          scale1 = ABS(u[(i + 1) * 3]) + ABS(u[(i + 1) * 3 + 1]);                              \
        }                                                                                      \
      }                                                                                        \
      if (i < n - 2)                                                                           \
        for (int c = 0; c < 3; c++)                                                            \
          if (ABS(u[i * 3 + c]) > max_abs_u) max_abs_u = ABS(u[i * 3 + c]);                    \
    }                                                                                          \
    if (ABS(u[(n - 1) * 3]) > max_abs_u) max_abs_u = ABS(u[(n - 1) * 3]);                      \
    const R perturb = R_EPS * max_abs_u;                                                       \
    /* Back substitution: each row times the reciprocal of its pivot. */                       \
    for (int64_t i = n - 1; i >= 0; i--) {                                                     \
      T p = u[i * 3];                                                                          \
      const T *x1 = x + (i + 1) * k, *x2 = x + (i + 2) * k;                                    \
      for (int64_t j = 0; j < k; j++) {                                                        \
        T v = x[i * k + j];                                                                    \
        if (i <= n - 2) v = v - u[i * 3 + 1] * x1[j];                                          \
        if (i <= n - 3) v = v - u[i * 3 + 2] * x2[j];                                          \
        row[j] = v;                                                                            \
      }                                                                                        \
      NAME##_perturb(i == n - 1 ? perturb : (R)copysign(perturb, REAL(p)), &p, row, k);        \
      const T inv = (T)1 / p;                                                                  \
      for (int64_t j = 0; j < k; j++) x[i * k + j] = row[j] * inv;                             \
    }                                                                                          \
  }

#define RABS_F(v) fabsf(v)
#define RABS_D(v) fabs(v)
#define ID(v) (v)
TRIDIAG(td_s, float, float, RABS_F, RABS_F, ID, FLT_MIN, FLT_MAX, FLT_EPSILON)
TRIDIAG(td_d, double, double, RABS_D, RABS_D, ID, DBL_MIN, DBL_MAX, DBL_EPSILON)
TRIDIAG(td_c, float complex, float, cabsf, RABS_F, crealf, FLT_MIN, FLT_MAX, FLT_EPSILON)
TRIDIAG(td_z, double complex, double, cabs, RABS_D, creal, DBL_MIN, DBL_MAX, DBL_EPSILON)

XLA_FFI_Error *hlt_cpu_tridiagonal_solve_perturbed(CpuCall *c) {
  CPU_TRY(hlt_cpu_arity(c, 4, 4, 1, "(dl, d, du, b) -> (x)"));
  static const char *const names[3] = {"operand 0 (dl)", "operand 1 (d)", "operand 2 (du)"};
  XLA_FFI_Buffer *b = hlt_cpu_arg(c, 3), *x = hlt_cpu_ret(c, 0);
  int64_t n, k;
  CPU_TRY(hlt_cpu_matrix(c, b, "operand 3 (b)", &n, &k));
  for (int i = 0; i < 3; i++)
    CPU_TRY(hlt_cpu_shape(c, hlt_cpu_arg(c, i), names[i], c->t->dtype, 1, n, 0));
  CPU_TRY(hlt_cpu_shape(c, x, "result 0 (x)", c->t->dtype, 2, n, k));
  size_t es = c->t->size;
  XLA_FFI_Error *err = NULL;
  void *u = hlt_cpu_alloc(c, (size_t)(3 * (n ? n : 1)) * es, &err);
  void *row = u ? hlt_cpu_alloc(c, (size_t)(k ? k : 1) * es, &err) : NULL;
  if (!row) return err;
  for (int64_t i = 0; i < c->batch; i++) {
    const void *dl = hlt_cpu_at(hlt_cpu_arg(c, 0), es, i, n), *d = hlt_cpu_at(hlt_cpu_arg(c, 1), es, i, n),
               *du = hlt_cpu_at(hlt_cpu_arg(c, 2), es, i, n), *bb = hlt_cpu_at(b, es, i, n * k);
    void *xx = hlt_cpu_at(x, es, i, n * k);
    switch (c->t->dtype) {
    case XLA_FFI_DataType_F32: td_s_solve(n, k, dl, d, du, bb, xx, u, row); break;
    case XLA_FFI_DataType_F64: td_d_solve(n, k, dl, d, du, bb, xx, u, row); break;
    case XLA_FFI_DataType_C64: td_c_solve(n, k, dl, d, du, bb, xx, u, row); break;
    default: td_z_solve(n, k, dl, d, du, bb, xx, u, row); break;
    }
  }
  return NULL;
}
