/* factor.c: jaxlib's factorization targets: LU (?getrf), QR (?geqrf, with
 * column pivoting ?geqp3), forming or applying Q (?orgqr/?ungqr,
 * ?ormqr/?unmqr) and Cholesky (?potrf). Operands, results and workspace
 * queries as jaxlib/cpu/lapack_kernels.cc (jax-ml/jax @ cec06d116c05);
 * pivots and info are s32, pivots 1-based as LAPACK returns them. */
#include "targets/cpu/cpu.h"

#define S32 XLA_FFI_DataType_S32

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* (a[..., m, n]) -> (lu, ipiv s32[..., min(m,n)], info s32[...]) */
XLA_FFI_Error *hlt_cpu_getrf(CpuCall *c) {
  CPU_TRY(hlt_cpu_arity(c, 1, 1, 3, "(a) -> (lu, ipiv, info)"));
  XLA_FFI_Buffer *a = hlt_cpu_arg(c, 0), *lu = hlt_cpu_ret(c, 0), *ipiv = hlt_cpu_ret(c, 1),
                 *info = hlt_cpu_ret(c, 2);
  int64_t m, n;
  CPU_TRY(hlt_cpu_matrix(c, a, "operand 0 (a)", &m, &n));
  int64_t k = min64(m, n);
  CPU_TRY(hlt_cpu_shape(c, lu, "result 0 (lu)", c->t->dtype, 2, m, n));
  CPU_TRY(hlt_cpu_shape(c, ipiv, "result 1 (ipiv)", S32, 1, k, 0));
  CPU_TRY(hlt_cpu_shape(c, info, "result 2 (info)", S32, 0, 0, 0));
  XLA_FFI_Error *err = NULL;
  void *w = hlt_cpu_alloc(c, (size_t)(m * n) * c->t->size, &err);
  if (!w) return err;
  for (int64_t b = 0; b < c->batch; b++) {
    hlt_cpu_load(c, a, b, w, m, n);
    ((int32_t *)info->data)[b] =
        c->la->getrf((int)m, (int)n, w, hlt_cpu_ld(m), (int32_t *)ipiv->data + b * k);
    hlt_cpu_store(c, lu, b, w, m, n);
  }
  return NULL;
}

/* (a[..., m, n]) -> (a_out, tau[..., min(m,n)]); no info. */
XLA_FFI_Error *hlt_cpu_geqrf(CpuCall *c) {
  CPU_TRY(hlt_cpu_arity(c, 1, 1, 2, "(a) -> (a_out, tau)"));
  XLA_FFI_Buffer *a = hlt_cpu_arg(c, 0), *out = hlt_cpu_ret(c, 0), *tau = hlt_cpu_ret(c, 1);
  int64_t m, n;
  CPU_TRY(hlt_cpu_matrix(c, a, "operand 0 (a)", &m, &n));
  int64_t k = min64(m, n);
  CPU_TRY(hlt_cpu_shape(c, out, "result 0 (a_out)", c->t->dtype, 2, m, n));
  CPU_TRY(hlt_cpu_shape(c, tau, "result 1 (tau)", c->t->dtype, 1, k, 0));
  size_t es = c->t->size;
  unsigned char query[16];
  c->la->geqrf((int)m, (int)n, NULL, hlt_cpu_ld(m), NULL, query, -1);
  int lwork = hlt_cpu_lwork(c->t, query);
  XLA_FFI_Error *err = NULL;
  void *w = hlt_cpu_alloc(c, (size_t)(m * n) * es, &err);
  void *work = w ? hlt_cpu_alloc(c, (size_t)lwork * es, &err) : NULL;
  if (!work) return err;
  for (int64_t b = 0; b < c->batch; b++) {
    hlt_cpu_load(c, a, b, w, m, n);
    c->la->geqrf((int)m, (int)n, w, hlt_cpu_ld(m), hlt_cpu_at(tau, es, b, k), work, lwork);
    hlt_cpu_store(c, out, b, w, m, n);
  }
  return NULL;
}

/* (a[..., m, n], jpvt s32[..., n]) -> (a_out, jpvt_out s32[..., n], tau[..., min(m,n)]).
 * jpvt: nonzero entries fix a column to the front (JAX passes zeros); the
 * result is 1-based. */
XLA_FFI_Error *hlt_cpu_geqp3(CpuCall *c) {
  CPU_TRY(hlt_cpu_arity(c, 2, 2, 3, "(a, jpvt) -> (a_out, jpvt_out, tau)"));
  XLA_FFI_Buffer *a = hlt_cpu_arg(c, 0), *jpvt = hlt_cpu_arg(c, 1), *out = hlt_cpu_ret(c, 0),
                 *jout = hlt_cpu_ret(c, 1), *tau = hlt_cpu_ret(c, 2);
  int64_t m, n;
  CPU_TRY(hlt_cpu_matrix(c, a, "operand 0 (a)", &m, &n));
  int64_t k = min64(m, n);
  CPU_TRY(hlt_cpu_shape(c, jpvt, "operand 1 (jpvt)", S32, 1, n, 0));
  CPU_TRY(hlt_cpu_shape(c, out, "result 0 (a_out)", c->t->dtype, 2, m, n));
  CPU_TRY(hlt_cpu_shape(c, jout, "result 1 (jpvt_out)", S32, 1, n, 0));
  CPU_TRY(hlt_cpu_shape(c, tau, "result 2 (tau)", c->t->dtype, 1, k, 0));
  size_t es = c->t->size;
  unsigned char query[16];
  c->la->geqp3((int)m, (int)n, NULL, hlt_cpu_ld(m), NULL, NULL, query, -1, NULL);
  int lwork = hlt_cpu_lwork(c->t, query);
  XLA_FFI_Error *err = NULL;
  void *w = hlt_cpu_alloc(c, (size_t)(m * n) * es, &err);
  void *work = w ? hlt_cpu_alloc(c, (size_t)lwork * es, &err) : NULL;
  void *rwork = work ? hlt_cpu_alloc(c, (size_t)(2 * n + 1) * es, &err) : NULL;
  if (!rwork) return err;
  for (int64_t b = 0; b < c->batch; b++) {
    int32_t *jp = (int32_t *)jout->data + b * n;
    const int32_t *jin = (const int32_t *)jpvt->data + b * n;
    for (int64_t j = 0; j < n; j++) jp[j] = jin[j];   /* jpvt may alias jpvt_out */
    hlt_cpu_load(c, a, b, w, m, n);
    c->la->geqp3((int)m, (int)n, w, hlt_cpu_ld(m), jp, hlt_cpu_at(tau, es, b, k), work, lwork,
                 rwork);
    hlt_cpu_store(c, out, b, w, m, n);
  }
  return NULL;
}

/* (a[..., m, n] reflectors, tau[..., k]) -> (q[..., m, n]): the first n
 * columns of Q = H(1)...H(k). LAPACK needs m >= n >= k. */
XLA_FFI_Error *hlt_cpu_orgqr(CpuCall *c) {
  CPU_TRY(hlt_cpu_arity(c, 2, 2, 1, "(a, tau) -> (q)"));
  XLA_FFI_Buffer *a = hlt_cpu_arg(c, 0), *tau = hlt_cpu_arg(c, 1), *q = hlt_cpu_ret(c, 0);
  int64_t m, n;
  CPU_TRY(hlt_cpu_matrix(c, a, "operand 0 (a)", &m, &n));
  int64_t k = tau->rank >= 1 ? tau->dims[tau->rank - 1] : -1;
  if (k < 0 || k > n || n > m)
    return hlt_cpu_fail(c, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                        "needs rows >= columns >= reflectors (m >= n >= k): operand 0 (a) has "
                        "m = %lld, n = %lld and operand 1 (tau) k = %lld",
                        (long long)m, (long long)n, (long long)k);
  CPU_TRY(hlt_cpu_shape(c, tau, "operand 1 (tau)", c->t->dtype, 1, k, 0));
  CPU_TRY(hlt_cpu_shape(c, q, "result 0 (q)", c->t->dtype, 2, m, n));
  size_t es = c->t->size;
  unsigned char query[16];
  c->la->orgqr((int)m, (int)n, (int)k, NULL, hlt_cpu_ld(m), NULL, query, -1);
  int lwork = hlt_cpu_lwork(c->t, query);
  XLA_FFI_Error *err = NULL;
  void *w = hlt_cpu_alloc(c, (size_t)(m * n) * es, &err);
  void *work = w ? hlt_cpu_alloc(c, (size_t)lwork * es, &err) : NULL;
  if (!work) return err;
  for (int64_t b = 0; b < c->batch; b++) {
    hlt_cpu_load(c, a, b, w, m, n);
    c->la->orgqr((int)m, (int)n, (int)k, w, hlt_cpu_ld(m), hlt_cpu_at(tau, es, b, k), work,
                 lwork);
    hlt_cpu_store(c, q, b, w, m, n);
  }
  return NULL;
}

/* (a[..., r, k'] reflectors, tau[..., k], c[..., m, n]) -> (c_out):
 * op(Q)·c (left) or c·op(Q) (right), op = identity or (conjugate)
 * transpose; a has m rows (left) or n rows (right). */
XLA_FFI_Error *hlt_cpu_ormqr(CpuCall *c) {
  CPU_TRY(hlt_cpu_arity(c, 3, 3, 1, "(a, tau, c) -> (c_out)"));
  XLA_FFI_Buffer *a = hlt_cpu_arg(c, 0), *tau = hlt_cpu_arg(c, 1), *cm = hlt_cpu_arg(c, 2),
                 *out = hlt_cpu_ret(c, 0);
  bool left, transpose;
  CPU_TRY(hlt_cpu_bool_attr(c, "left", &left));
  CPU_TRY(hlt_cpu_bool_attr(c, "transpose", &transpose));
  int64_t ar, ac, m, n;
  CPU_TRY(hlt_cpu_matrix(c, a, "operand 0 (a)", &ar, &ac));
  CPU_TRY(hlt_cpu_matrix(c, cm, "operand 2 (c)", &m, &n));
  int64_t k = tau->rank >= 1 ? tau->dims[tau->rank - 1] : -1;
  int64_t q = left ? m : n;
  if (ar != q || k < 0 || k > ac || k > q)
    return hlt_cpu_fail(c, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                        "operand 0 (a) must have %lld rows (c's %s) and at least k = %lld "
                        "columns, k <= %lld; got a with %lld x %lld",
                        (long long)q, left ? "rows, left" : "columns, right", (long long)k,
                        (long long)q, (long long)ar, (long long)ac);
  CPU_TRY(hlt_cpu_shape(c, a, "operand 0 (a)", c->t->dtype, 2, ar, ac));
  CPU_TRY(hlt_cpu_shape(c, tau, "operand 1 (tau)", c->t->dtype, 1, k, 0));
  CPU_TRY(hlt_cpu_shape(c, out, "result 0 (c_out)", c->t->dtype, 2, m, n));
  char side = left ? 'L' : 'R', trans = transpose ? (c->t->complex ? 'C' : 'T') : 'N';
  size_t es = c->t->size;
  unsigned char query[16];
  c->la->ormqr(side, trans, (int)m, (int)n, (int)k, NULL, hlt_cpu_ld(ar), NULL, NULL,
               hlt_cpu_ld(m), query, -1);
  int lwork = hlt_cpu_lwork(c->t, query);
  XLA_FFI_Error *err = NULL;
  void *wa = hlt_cpu_alloc(c, (size_t)(ar * ac) * es, &err);
  void *wc = wa ? hlt_cpu_alloc(c, (size_t)(m * n) * es, &err) : NULL;
  void *work = wc ? hlt_cpu_alloc(c, (size_t)lwork * es, &err) : NULL;
  if (!work) return err;
  for (int64_t b = 0; b < c->batch; b++) {
    hlt_cpu_load(c, a, b, wa, ar, ac);
    hlt_cpu_load(c, cm, b, wc, m, n);
    c->la->ormqr(side, trans, (int)m, (int)n, (int)k, wa, hlt_cpu_ld(ar),
                 hlt_cpu_at(tau, es, b, k), wc, hlt_cpu_ld(m), work, lwork);
    hlt_cpu_store(c, out, b, wc, m, n);
  }
  return NULL;
}

/* (a[..., n, n]) -> (l, info s32[...]); only the uplo triangle is
 * written, the other keeps the input. */
XLA_FFI_Error *hlt_cpu_potrf(CpuCall *c) {
  CPU_TRY(hlt_cpu_arity(c, 1, 1, 2, "(a) -> (l, info)"));
  XLA_FFI_Buffer *a = hlt_cpu_arg(c, 0), *l = hlt_cpu_ret(c, 0), *info = hlt_cpu_ret(c, 1);
  char uplo;
  CPU_TRY(hlt_cpu_char_attr(c, "uplo", "LU", &uplo));
  int64_t n, n2;
  CPU_TRY(hlt_cpu_matrix(c, a, "operand 0 (a)", &n, &n2));
  CPU_TRY(hlt_cpu_shape(c, a, "operand 0 (a)", c->t->dtype, 2, n, n));
  CPU_TRY(hlt_cpu_shape(c, l, "result 0 (l)", c->t->dtype, 2, n, n));
  CPU_TRY(hlt_cpu_shape(c, info, "result 1 (info)", S32, 0, 0, 0));
  XLA_FFI_Error *err = NULL;
  void *w = hlt_cpu_alloc(c, (size_t)(n * n) * c->t->size, &err);
  if (!w) return err;
  for (int64_t b = 0; b < c->batch; b++) {
    hlt_cpu_load(c, a, b, w, n, n);
    ((int32_t *)info->data)[b] = c->la->potrf(uplo, (int)n, w, hlt_cpu_ld(n));
    hlt_cpu_store(c, l, b, w, n, n);
  }
  return NULL;
}
