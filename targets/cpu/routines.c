/* routines.c: the LAPACK and BLAS routines jaxlib's CPU kernels call, one
 * table per element type (cpu.h, CpuLapack), stamped from one definition
 * per routine for the real (s, d) and the complex (c, z) types, as BLIS's
 * GENTFUNC does. The Fortran routines are called through the prototypes of
 * LAPACKE's lapack.h (liblapacke-dev), which also passes the hidden lengths
 * of character arguments; BLAS's ?trsm is declared here.
 *
 * LAPACK is loaded on the first call (dlopen), not linked: Debian's
 * liblapack3 is often OpenBLAS, whose library constructor starts a thread
 * that polls with sched_yield for its first ~0.1 s; in every hlorun process
 * that thread took a CPU from hlorun's own workers, which made a short run
 * on two cores up to 4x slower. Each routine's name below is a macro for
 * its pointer, so the LAPACK_* macros of lapack.h call through it.
 * Built without LAPACK, there are no tables (register.c reports it). */
#include "config.h"
#include "targets/cpu/cpu.h"
#include <stdio.h>

#ifdef HLO_HAVE_LAPACK
#include <complex.h>
#include <dlfcn.h>
#include <lapack.h>
#include <pthread.h>
#include <stdlib.h>

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

/* Every routine the tables call, for the four types. */
#define CPU_EACH_TYPE(X, NAME) X(s##NAME##_) X(d##NAME##_) X(c##NAME##_) X(z##NAME##_)
#define CPU_SYMBOLS(X)                                                        \
  CPU_EACH_TYPE(X, trsm) CPU_EACH_TYPE(X, getrf) CPU_EACH_TYPE(X, geqrf)      \
  CPU_EACH_TYPE(X, geqp3) CPU_EACH_TYPE(X, potrf) CPU_EACH_TYPE(X, gesdd)     \
  CPU_EACH_TYPE(X, gesvd) CPU_EACH_TYPE(X, geev) CPU_EACH_TYPE(X, gees)       \
  CPU_EACH_TYPE(X, gehrd) CPU_EACH_TYPE(X, gtsv)                              \
  X(sorgqr_) X(dorgqr_) X(cungqr_) X(zungqr_) X(sormqr_) X(dormqr_) X(cunmqr_) \
  X(zunmqr_) X(ssyevd_) X(dsyevd_) X(cheevd_) X(zheevd_) X(ssytrd_) X(dsytrd_) \
  X(chetrd_) X(zhetrd_)
#define CPU_POINTER(f) static __typeof__(f) *lp_##f;
CPU_SYMBOLS(CPU_POINTER)

/* From here on a routine's name calls through its pointer. */
#define strsm_ (*lp_strsm_)
#define dtrsm_ (*lp_dtrsm_)
#define ctrsm_ (*lp_ctrsm_)
#define ztrsm_ (*lp_ztrsm_)
#define sgetrf_ (*lp_sgetrf_)
#define dgetrf_ (*lp_dgetrf_)
#define cgetrf_ (*lp_cgetrf_)
#define zgetrf_ (*lp_zgetrf_)
#define sgeqrf_ (*lp_sgeqrf_)
#define dgeqrf_ (*lp_dgeqrf_)
#define cgeqrf_ (*lp_cgeqrf_)
#define zgeqrf_ (*lp_zgeqrf_)
#define sgeqp3_ (*lp_sgeqp3_)
#define dgeqp3_ (*lp_dgeqp3_)
#define cgeqp3_ (*lp_cgeqp3_)
#define zgeqp3_ (*lp_zgeqp3_)
#define spotrf_ (*lp_spotrf_)
#define dpotrf_ (*lp_dpotrf_)
#define cpotrf_ (*lp_cpotrf_)
#define zpotrf_ (*lp_zpotrf_)
#define sgesdd_ (*lp_sgesdd_)
#define dgesdd_ (*lp_dgesdd_)
#define cgesdd_ (*lp_cgesdd_)
#define zgesdd_ (*lp_zgesdd_)
#define sgesvd_ (*lp_sgesvd_)
#define dgesvd_ (*lp_dgesvd_)
#define cgesvd_ (*lp_cgesvd_)
#define zgesvd_ (*lp_zgesvd_)
#define sgeev_ (*lp_sgeev_)
#define dgeev_ (*lp_dgeev_)
#define cgeev_ (*lp_cgeev_)
#define zgeev_ (*lp_zgeev_)
#define sgees_ (*lp_sgees_)
#define dgees_ (*lp_dgees_)
#define cgees_ (*lp_cgees_)
#define zgees_ (*lp_zgees_)
#define sgehrd_ (*lp_sgehrd_)
#define dgehrd_ (*lp_dgehrd_)
#define cgehrd_ (*lp_cgehrd_)
#define zgehrd_ (*lp_zgehrd_)
#define sgtsv_ (*lp_sgtsv_)
#define dgtsv_ (*lp_dgtsv_)
#define cgtsv_ (*lp_cgtsv_)
#define zgtsv_ (*lp_zgtsv_)
#define sorgqr_ (*lp_sorgqr_)
#define dorgqr_ (*lp_dorgqr_)
#define cungqr_ (*lp_cungqr_)
#define zungqr_ (*lp_zungqr_)
#define sormqr_ (*lp_sormqr_)
#define dormqr_ (*lp_dormqr_)
#define cunmqr_ (*lp_cunmqr_)
#define zunmqr_ (*lp_zunmqr_)
#define ssyevd_ (*lp_ssyevd_)
#define dsyevd_ (*lp_dsyevd_)
#define cheevd_ (*lp_cheevd_)
#define zheevd_ (*lp_zheevd_)
#define ssytrd_ (*lp_ssytrd_)
#define dsytrd_ (*lp_dsytrd_)
#define chetrd_ (*lp_chetrd_)
#define zhetrd_ (*lp_zhetrd_)

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

static const CpuLapack *const tables[4] = {&s_table, &d_table, &c_table, &z_table};

/* The libraries tried, in order: HLORUN_LAPACK if set (a name or path,
 * to choose one implementation), else Debian's LAPACK (liblapack3, or an
 * alternative such as OpenBLAS registered under its name). ?trsm comes
 * from the BLAS it depends on. */
static const char *const lapack_names[] = {"liblapack.so.3", "liblapack.so"};
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static bool loaded;
static char load_error[512];

static void load(void) {
  void *h = NULL;
  const char *name = getenv("HLORUN_LAPACK");
  if (name && *name) {
    if (!(h = dlopen(name, RTLD_NOW | RTLD_LOCAL))) {
      snprintf(load_error, sizeof load_error, "cannot load HLORUN_LAPACK='%s' (%s)", name,
               dlerror());
      return;
    }
  }
  for (size_t i = 0; !h && i < sizeof lapack_names / sizeof *lapack_names; i++)
    h = dlopen(name = lapack_names[i], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    snprintf(load_error, sizeof load_error,
             "cannot load LAPACK (%s); install the Debian package 'liblapack3'", dlerror());
    return;
  }
  /* (dlsym searches the library and the ones it depends on, BLAS too) */
#define CPU_RESOLVE(f)                                                        \
  if (!(lp_##f = (__typeof__(lp_##f))dlsym(h, #f))) {                         \
    snprintf(load_error, sizeof load_error,                                   \
             "the LAPACK library loaded (%s) has no routine '%s'", name, #f);  \
    return;                                                                   \
  }
  CPU_SYMBOLS(CPU_RESOLVE)
#undef CPU_RESOLVE
  loaded = true;   /* h stays open for the life of the process */
}

const CpuLapack *hlt_cpu_lapack(CpuTypeId type, const char **why) {
  pthread_once(&load_once, load);
  *why = load_error;
  return loaded ? tables[type] : NULL;
}
#else
const CpuLapack *hlt_cpu_lapack(CpuTypeId type, const char **why) {
  (void)type;
  *why = "hlorun was built without LAPACK; install the Debian package 'liblapacke-dev' and "
         "reconfigure (or bind the target with --custom-call)";
  return NULL;
}
#endif
