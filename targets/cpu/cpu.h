/* cpu.h: jaxlib's CPU linear-algebra custom calls (lapack_*_ffi), built in.
 *
 * JAX CPU dumps call jaxlib's LAPACK kernels by target name (targets.def).
 * Each handler here checks the call against jaxlib's binding (operand and
 * result types and shapes, attributes with jaxlib's encodings), then calls
 * the LAPACK routine jaxlib calls, with the same arguments and workspace
 * sizes, once per batch member. hlorun's buffers hold logical row-major
 * values, so every matrix goes through a column-major copy (what jaxlib's
 * column-major layouts hand LAPACK); vectors need no copy.
 *
 * Not here: what JAX does with the results (NaN filling through `info`,
 * pivot arithmetic): that is ordinary HLO in the dumped module.
 * Files: register.c (handlers, registration), call.c (checks, attributes,
 * copies), routines.c (the LAPACK/BLAS routines of the four types, the only
 * file that includes lapack.h), factor.c, spectral.c, solve.c (kernels),
 * legacy.c (the older descriptor-operand targets, rewritten into these);
 * tridiagonal.c and sparse.c, jaxlib's own kernels (no LAPACK). */
#ifndef HLORUN_TARGETS_CPU_CPU_H
#define HLORUN_TARGETS_CPU_CPU_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ffi/ffi.h"
#include "hlorun/ffi.h"

/* Register every target of targets.def into r. 0, or -1 when out of memory. */
int hlt_cpu_register(HlfRegistry *r);

/* ---- Element types --------------------------------------------------------- */

typedef enum CpuTypeId { CPU_S, CPU_D, CPU_C, CPU_Z } CpuTypeId;

typedef struct CpuType {
  XLA_FFI_DataType dtype;   /* the element type */
  XLA_FFI_DataType real;    /* its real type (singular values, eigh's w, sytrd's d, e) */
  XLA_FFI_DataType cplx;    /* its complex type (real geev's eigenvectors) */
  size_t size;              /* bytes per element */
  bool complex;
} CpuType;
extern const CpuType hlt_cpu_types[4];

/* ---- LAPACK routines, one table per type ----------------------------------- */

/* Scalar arguments by value, arrays as void* of the table's element type
 * ("R" real arrays of its real type). Each returns LAPACK's info. Complex
 * routines take rwork; the real ones ignore it (and wi, for geev and gees,
 * holds the imaginary parts only for real types). lwork = -1 is LAPACK's
 * workspace query: the optimal size lands in work[0]. */
typedef struct CpuLapack {
  void (*trsm)(char side, char uplo, char trans, char diag, int m, int n, const void *alpha,
               const void *a, int lda, void *b, int ldb);
  int (*getrf)(int m, int n, void *a, int lda, int *ipiv);
  int (*geqrf)(int m, int n, void *a, int lda, void *tau, void *work, int lwork);
  int (*geqp3)(int m, int n, void *a, int lda, int *jpvt, void *tau, void *work, int lwork,
               void *rwork);
  int (*orgqr)(int m, int n, int k, void *a, int lda, const void *tau, void *work, int lwork);
  int (*ormqr)(char side, char trans, int m, int n, int k, const void *a, int lda,
               const void *tau, void *c, int ldc, void *work, int lwork);
  int (*potrf)(char uplo, int n, void *a, int lda);
  int (*gesdd)(char jobz, int m, int n, void *a, int lda, void *s, void *u, int ldu, void *vt,
               int ldvt, void *work, int lwork, void *rwork, int *iwork);
  int (*gesvd)(char job, int m, int n, void *a, int lda, void *s, void *u, int ldu, void *vt,
               int ldvt, void *work, int lwork, void *rwork);
  int (*syevd)(char jobz, char uplo, int n, void *a, int lda, void *w, void *work, int lwork,
               void *rwork, int lrwork, int *iwork, int liwork);
  int (*geev)(char jobvl, char jobvr, int n, void *a, int lda, void *wr, void *wi, void *vl,
              int ldvl, void *vr, int ldvr, void *work, int lwork, void *rwork);
  int (*gees)(char jobvs, char sort, int n, void *a, int lda, int *sdim, void *wr, void *wi,
              void *vs, int ldvs, void *work, int lwork, void *rwork);
  int (*gehrd)(int n, int ilo, int ihi, void *a, int lda, void *tau, void *work, int lwork);
  int (*sytrd)(char uplo, int n, void *a, int lda, void *d, void *e, void *tau, void *work,
               int lwork);
  int (*gtsv)(int n, int nrhs, void *dl, void *d, void *du, void *b, int ldb);
} CpuLapack;
/* The routines of one type, LAPACK loaded on the first call; NULL, with
 * *why set to the reason, when it cannot be (built without LAPACK, or the
 * library missing at run time). */
const CpuLapack *hlt_cpu_lapack(CpuTypeId type, const char **why);

/* ---- One call -------------------------------------------------------------- */

#define CPU_MAX_SCRATCH 16
#define CPU_MAX_RANK 16

typedef struct CpuCall {
  XLA_FFI_CallFrame *f;          /* borrowed */
  const char *target;            /* the target name, for messages */
  const CpuType *t;              /* the target's element type */
  const CpuLapack *la;           /* its routines */
  int64_t batch;                 /* product of the batch dims (hlt_cpu_matrix) */
  int nbatch;                    /* number of batch dims */
  int64_t bdims[CPU_MAX_RANK];   /* the batch dims */
  void *scratch[CPU_MAX_SCRATCH];/* owned: freed after the kernel returns */
  int nscratch;
} CpuCall;

typedef XLA_FFI_Error *CpuKernel(CpuCall *c);

/* Return on error. */
#define CPU_TRY(expr)                                                        \
  do {                                                                       \
    XLA_FFI_Error *cpu_err_ = (expr);                                        \
    if (cpu_err_) return cpu_err_;                                           \
  } while (0)

/* An error "TARGET: message". */
XLA_FFI_Error *hlt_cpu_fail(CpuCall *c, XLA_FFI_Error_Code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The call has nargs_min..nargs_max operand buffers and nrets result
 * buffers; sig describes them for the message ("(a) -> (lu, ipiv, info)"). */
XLA_FFI_Error *hlt_cpu_arity(CpuCall *c, int nargs_min, int nargs_max, int nrets,
                             const char *sig);
XLA_FFI_Buffer *hlt_cpu_arg(CpuCall *c, int i);
XLA_FFI_Buffer *hlt_cpu_ret(CpuCall *c, int i);

/* b is the main matrix operand `what`: the call's element type, rank >= 2;
 * sets c's batch dims (all but the last two) and *rows, *cols. */
XLA_FFI_Error *hlt_cpu_matrix(CpuCall *c, const XLA_FFI_Buffer *b, const char *what,
                              int64_t *rows, int64_t *cols);
/* b is `what` of type dt and shape batch dims + ntrail trailing dims (d0, d1). */
XLA_FFI_Error *hlt_cpu_shape(CpuCall *c, const XLA_FFI_Buffer *b, const char *what,
                             XLA_FFI_DataType dt, int ntrail, int64_t d0, int64_t d1);
/* "f32[2,3]" into buf. */
void hlt_cpu_shape_text(XLA_FFI_DataType t, int64_t rank, const int64_t *dims, char *buf,
                        size_t n);
/* Dimensions fit LAPACK's 32-bit integers. */
XLA_FFI_Error *hlt_cpu_fits(CpuCall *c, int64_t n);

/* A LAPACK character flag: attribute `name`, an FFI scalar of type u8
 * (jaxlib's `enum class : char`), one of the characters of `allowed`. */
XLA_FFI_Error *hlt_cpu_char_attr(CpuCall *c, const char *name, const char *allowed, char *out);
/* An i32 attribute (gehrd's low, high). */
XLA_FFI_Error *hlt_cpu_i32_attr(CpuCall *c, const char *name, int32_t *out);
/* A bool attribute (ormqr's left, transpose): an FFI pred scalar. */
XLA_FFI_Error *hlt_cpu_bool_attr(CpuCall *c, const char *name, bool *out);

/* Zeroed scratch memory that lives until the kernel returns; NULL (with
 * *err set) when out of memory. */
void *hlt_cpu_alloc(CpuCall *c, size_t bytes, XLA_FFI_Error **err);
/* Workspace size from a LAPACK query's work[0] (jaxlib: its real part,
 * truncated), at least 1. */
int hlt_cpu_lwork(const CpuType *t, const void *work0);

/* Matrix copies between logical row-major values and LAPACK's column-major
 * storage (leading dimension = rows). */
void hlt_cpu_to_cm(size_t esize, void *dst, const void *src, int64_t rows, int64_t cols);
void hlt_cpu_from_cm(size_t esize, void *dst, const void *src, int64_t rows, int64_t cols);
/* Batch member k of matrix buffer b (rows x cols) into column-major cm,
 * and back. */
void hlt_cpu_load(const CpuCall *c, const XLA_FFI_Buffer *b, int64_t k, void *cm, int64_t rows,
                  int64_t cols);
void hlt_cpu_store(const CpuCall *c, XLA_FFI_Buffer *b, int64_t k, const void *cm,
                   int64_t rows, int64_t cols);
/* max(1, n): LAPACK's smallest leading dimension (an argument error would
 * stop the process in LAPACK's xerbla). */
static inline int hlt_cpu_ld(int64_t n) { return n > 1 ? (int)n : 1; }
/* Element i of batch member k of a buffer whose members hold `per` elements. */
static inline char *hlt_cpu_at(const XLA_FFI_Buffer *b, size_t esize, int64_t k, int64_t per) {
  return (char *)b->data + (size_t)(k * per) * esize;
}

/* ---- Kernels (factor.c, spectral.c, solve.c) ------------------------------- */

CpuKernel hlt_cpu_trsm, hlt_cpu_getrf, hlt_cpu_geqrf, hlt_cpu_geqp3, hlt_cpu_orgqr,
    hlt_cpu_ormqr, hlt_cpu_potrf, hlt_cpu_gesdd, hlt_cpu_gesvd, hlt_cpu_syevd, hlt_cpu_geev,
    hlt_cpu_gees, hlt_cpu_gehrd, hlt_cpu_sytrd, hlt_cpu_gtsv;
/* jaxlib's own kernels, no LAPACK (tridiagonal.c, sparse.c). */
CpuKernel hlt_cpu_tridiagonal_solve_perturbed, hlt_cpu_csr_sparse_dense;
/* The older generation (legacy.c): rewrite the call, then run the above. */
CpuKernel hlt_cpu_legacy_trsm, hlt_cpu_legacy_getrf, hlt_cpu_legacy_geqrf, hlt_cpu_legacy_orgqr,
    hlt_cpu_legacy_potrf, hlt_cpu_legacy_gesdd, hlt_cpu_legacy_syevd, hlt_cpu_legacy_geev,
    hlt_cpu_legacy_gees, hlt_cpu_legacy_gehrd, hlt_cpu_legacy_sytrd;
#endif
