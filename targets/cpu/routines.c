/* routines.c: the LAPACK and BLAS routines jaxlib's CPU kernels call, one
 * table per element type (cpu.h, CpuLapack), stamped from one definition
 * per routine for the real (s, d) and the complex (c, z) types, as BLIS's
 * GENTFUNC does. The Fortran routines are called directly through the
 * prototypes of LAPACKE's lapack.h (liblapacke-dev), which also passes the
 * hidden lengths of character arguments; BLAS's ?trsm is declared here.
 * Built without LAPACK, the tables are NULL (register.c reports it). */
#include "config.h"
#include "targets/cpu/cpu.h"

#ifdef HLO_HAVE_LAPACK
#include <complex.h>
#include <lapack.h>

/* BLAS level 3 triangular solve (not in lapack.h). */
#define CPU_TRSM_PROTO(P, T)                                                 \
  void P##trsm_(const char *side, const char *uplo, const char *transa,     \
                const char *diag, const int *m, const int *n, const T *alpha, \
                const T *a, const int *lda, T *b, const int *ldb, size_t, size_t, size_t, \
                size_t);
CPU_TRSM_PROTO(s, float)
CPU_TRSM_PROTO(d, double)
CPU_TRSM_PROTO(c, lapack_complex_float)
CPU_TRSM_PROTO(z, lapack_complex_double)

/* Routines with one signature for all four types. O names the orthogonal
 * (real: or) or unitary (complex: un) variant, H symmetric (sy) or
 * Hermitian (he). */
#define CPU_COMMON(P, T, O, H)                                                \
  static void P##_trsm(char side, char uplo, char trans, char diag, int m, int n, \
                       const void *alpha, const void *a, int lda, void *b, int ldb) { \
    P##trsm_(&side, &uplo, &trans, &diag, &m, &n, alpha, a, &lda, b, &ldb, 1, 1, 1, 1); \
  }                                                                           \
  static int P##_getrf(int m, int n, void *a, int lda, int *ipiv) {          \
    int info = 0;                                                             \
    LAPACK_##P##getrf(&m, &n, a, &lda, ipiv, &info);                          \
    return info;                                                              \
  }                                                                           \
  static int P##_geqrf(int m, int n, void *a, int lda, void *tau, void *work, int lwork) { \
    int info = 0;                                                             \
    LAPACK_##P##geqrf(&m, &n, a, &lda, tau, work, &lwork, &info);             \
    return info;                                                              \
  }                                                                           \
  static int P##_orgqr(int m, int n, int k, void *a, int lda, const void *tau, void *work, \
                       int lwork) {                                           \
    int info = 0;                                                             \
    LAPACK_##P##O##gqr(&m, &n, &k, a, &lda, (T *)tau, work, &lwork, &info);   \
    return info;                                                              \
  }                                                                           \
  static int P##_ormqr(char side, char trans, int m, int n, int k, const void *a, int lda, \
                       const void *tau, void *c, int ldc, void *work, int lwork) { \
    int info = 0;                                                             \
    LAPACK_##P##O##mqr(&side, &trans, &m, &n, &k, (T *)a, &lda, (T *)tau, c, &ldc, work, \
                       &lwork, &info);                                        \
    return info;                                                              \
  }                                                                           \
  static int P##_potrf(char uplo, int n, void *a, int lda) {                  \
    int info = 0;                                                             \
    LAPACK_##P##potrf(&uplo, &n, a, &lda, &info);                             \
    return info;                                                              \
  }                                                                           \
  static int P##_gehrd(int n, int ilo, int ihi, void *a, int lda, void *tau, void *work, \
                       int lwork) {                                           \
    int info = 0;                                                             \
    LAPACK_##P##gehrd(&n, &ilo, &ihi, a, &lda, tau, work, &lwork, &info);     \
    return info;                                                              \
  }                                                                           \
  static int P##_sytrd(char uplo, int n, void *a, int lda, void *d, void *e, void *tau, \
                       void *work, int lwork) {                               \
    int info = 0;                                                             \
    LAPACK_##P##H##trd(&uplo, &n, a, &lda, d, e, tau, work, &lwork, &info);   \
    return info;                                                              \
  }                                                                           \
  static int P##_gtsv(int n, int nrhs, void *dl, void *d, void *du, void *b, int ldb) { \
    int info = 0;                                                             \
    LAPACK_##P##gtsv(&n, &nrhs, dl, d, du, b, &ldb, &info);                   \
    return info;                                                              \
  }

/* The routines whose complex variants take extra real workspace (rwork)
 * or return complex eigenvalues in one array. */
#define CPU_REAL(P, T)                                                        \
  CPU_COMMON(P, T, or, sy)                                                    \
  static int P##_geqp3(int m, int n, void *a, int lda, int *jpvt, void *tau, void *work, \
                       int lwork, void *rwork) {                              \
    int info = 0;                                                             \
    (void)rwork;                                                              \
    LAPACK_##P##geqp3(&m, &n, a, &lda, jpvt, tau, work, &lwork, &info);       \
    return info;                                                              \
  }                                                                           \
  static int P##_gesdd(char jobz, int m, int n, void *a, int lda, void *s, void *u, int ldu, \
                       void *vt, int ldvt, void *work, int lwork, void *rwork, int *iwork) { \
    int info = 0;                                                             \
    (void)rwork;                                                              \
    LAPACK_##P##gesdd(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, \
                      &info);                                                 \
    return info;                                                              \
  }                                                                           \
  static int P##_gesvd(char job, int m, int n, void *a, int lda, void *s, void *u, int ldu, \
                       void *vt, int ldvt, void *work, int lwork, void *rwork) { \
    int info = 0;                                                             \
    (void)rwork;                                                              \
    LAPACK_##P##gesvd(&job, &job, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, \
                      &info);                                                 \
    return info;                                                              \
  }                                                                           \
  static int P##_syevd(char jobz, char uplo, int n, void *a, int lda, void *w, void *work, \
                       int lwork, void *rwork, int lrwork, int *iwork, int liwork) { \
    int info = 0;                                                             \
    (void)rwork, (void)lrwork;                                                \
    LAPACK_##P##syevd(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, &info); \
    return info;                                                              \
  }                                                                           \
  static int P##_geev(char jobvl, char jobvr, int n, void *a, int lda, void *wr, void *wi, \
                      void *vl, int ldvl, void *vr, int ldvr, void *work, int lwork, \
                      void *rwork) {                                          \
    int info = 0;                                                             \
    (void)rwork;                                                              \
    LAPACK_##P##geev(&jobvl, &jobvr, &n, a, &lda, wr, wi, vl, &ldvl, vr, &ldvr, work, \
                     &lwork, &info);                                          \
    return info;                                                              \
  }                                                                           \
  static int P##_gees(char jobvs, char sort, int n, void *a, int lda, int *sdim, void *wr, \
                      void *wi, void *vs, int ldvs, void *work, int lwork, void *rwork) { \
    int info = 0;                                                             \
    (void)rwork;                                                              \
    LAPACK_##P##gees(&jobvs, &sort, NULL, &n, a, &lda, sdim, wr, wi, vs, &ldvs, work, \
                     &lwork, NULL, &info);                                    \
    return info;                                                              \
  }

#define CPU_COMPLEX(P, T)                                                     \
  CPU_COMMON(P, T, un, he)                                                    \
  static int P##_geqp3(int m, int n, void *a, int lda, int *jpvt, void *tau, void *work, \
                       int lwork, void *rwork) {                              \
    int info = 0;                                                             \
    LAPACK_##P##geqp3(&m, &n, a, &lda, jpvt, tau, work, &lwork, rwork, &info); \
    return info;                                                              \
  }                                                                           \
  static int P##_gesdd(char jobz, int m, int n, void *a, int lda, void *s, void *u, int ldu, \
                       void *vt, int ldvt, void *work, int lwork, void *rwork, int *iwork) { \
    int info = 0;                                                             \
    LAPACK_##P##gesdd(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, \
                      iwork, &info);                                          \
    return info;                                                              \
  }                                                                           \
  static int P##_gesvd(char job, int m, int n, void *a, int lda, void *s, void *u, int ldu, \
                       void *vt, int ldvt, void *work, int lwork, void *rwork) { \
    int info = 0;                                                             \
    LAPACK_##P##gesvd(&job, &job, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, \
                      rwork, &info);                                          \
    return info;                                                              \
  }                                                                           \
  static int P##_syevd(char jobz, char uplo, int n, void *a, int lda, void *w, void *work, \
                       int lwork, void *rwork, int lrwork, int *iwork, int liwork) { \
    int info = 0;                                                             \
    LAPACK_##P##heevd(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, \
                      &liwork, &info);                                        \
    return info;                                                              \
  }                                                                           \
  static int P##_geev(char jobvl, char jobvr, int n, void *a, int lda, void *wr, void *wi, \
                      void *vl, int ldvl, void *vr, int ldvr, void *work, int lwork, \
                      void *rwork) {                                          \
    int info = 0;                                                             \
    (void)wi;                                                                 \
    LAPACK_##P##geev(&jobvl, &jobvr, &n, a, &lda, wr, vl, &ldvl, vr, &ldvr, work, &lwork, \
                     rwork, &info);                                           \
    return info;                                                              \
  }                                                                           \
  static int P##_gees(char jobvs, char sort, int n, void *a, int lda, int *sdim, void *wr, \
                      void *wi, void *vs, int ldvs, void *work, int lwork, void *rwork) { \
    int info = 0;                                                             \
    (void)wi;                                                                 \
    LAPACK_##P##gees(&jobvs, &sort, NULL, &n, a, &lda, sdim, wr, vs, &ldvs, work, &lwork, \
                     rwork, NULL, &info);                                     \
    return info;                                                              \
  }

CPU_REAL(s, float)
CPU_REAL(d, double)
CPU_COMPLEX(c, lapack_complex_float)
CPU_COMPLEX(z, lapack_complex_double)

#define CPU_TABLE(P)                                                          \
  static const CpuLapack P##_table = {                                        \
    P##_trsm, P##_getrf, P##_geqrf, P##_geqp3, P##_orgqr, P##_ormqr, P##_potrf, P##_gesdd, \
    P##_gesvd, P##_syevd, P##_geev, P##_gees, P##_gehrd, P##_sytrd, P##_gtsv, \
  };
CPU_TABLE(s)
CPU_TABLE(d)
CPU_TABLE(c)
CPU_TABLE(z)

const CpuLapack *const hlt_cpu_lapack[4] = {&s_table, &d_table, &c_table, &z_table};
#else
const CpuLapack *const hlt_cpu_lapack[4] = {NULL, NULL, NULL, NULL};
#endif
