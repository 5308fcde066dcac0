/* spectral.c: jaxlib's decomposition targets: SVD (?gesdd divide and
 * conquer, ?gesvd QR iteration), symmetric/Hermitian eigendecomposition
 * (?syevd/?heevd), general eigendecomposition (?geev), Schur (?gees),
 * Hessenberg (?gehrd) and tridiagonal (?sytrd/?hetrd) reduction.
 * Operands, results, attributes and workspace sizes (queried, or jaxlib's
 * formulas where it uses formulas) as jaxlib/cpu/lapack_kernels.cc
 * (jax-ml/jax @ cec06d116c05). */
#include "targets/cpu/cpu.h"
#include <math.h>
#include <string.h>

#define S32 XLA_FFI_DataType_S32

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* Square matrix operand 0: sets *n. */
static XLA_FFI_Error *square(CpuCall *c, XLA_FFI_Buffer *a, int64_t *n) {
  int64_t n2;
  CPU_TRY(hlt_cpu_matrix(c, a, "operand 0 (a)", n, &n2));
  return hlt_cpu_shape(c, a, "operand 0 (a)", c->t->dtype, 2, *n, *n);
}

/* ---- SVD ---------------------------------------------------------------- */

/* (a[..., m, n]) -> (a_out, s real[..., k], u[..., m, m|k], vt[..., n|k, n],
 * info), k = min(m, n); mode 'A' full, 'S' economy, 'N' no vectors (u and
 * vt are still results, left zero). dc: ?gesdd, else ?gesvd. */
static XLA_FFI_Error *svd(CpuCall *c, bool dc) {
  CPU_TRY(hlt_cpu_arity(c, 1, 1, 5, "(a) -> (a_out, s, u, vt, info)"));
  XLA_FFI_Buffer *a = hlt_cpu_arg(c, 0), *out = hlt_cpu_ret(c, 0), *s = hlt_cpu_ret(c, 1),
                 *u = hlt_cpu_ret(c, 2), *vt = hlt_cpu_ret(c, 3), *info = hlt_cpu_ret(c, 4);
  char mode;
  CPU_TRY(hlt_cpu_char_attr(c, "mode", "ASNO", &mode));
  if (mode == 'O')
    return hlt_cpu_fail(c, XLA_FFI_Error_Code_UNIMPLEMENTED,
                        "mode 79 ('O', overwrite a with U) is not supported (nor by jaxlib)");
  int64_t m, n;
  CPU_TRY(hlt_cpu_matrix(c, a, "operand 0 (a)", &m, &n));
  int64_t k = min64(m, n);
  int64_t ucols = u->rank >= 2 ? u->dims[u->rank - 1] : -1;
  int64_t vrows = vt->rank >= 2 ? vt->dims[vt->rank - 2] : -1;
  if (mode == 'A') ucols = m, vrows = n;
  if (mode == 'S') ucols = k, vrows = k;
  if (mode == 'N' && ucols != m && ucols != k) ucols = m;   /* for the message */
  if (mode == 'N' && vrows != n && vrows != k) vrows = n;
  CPU_TRY(hlt_cpu_shape(c, out, "result 0 (a_out)", c->t->dtype, 2, m, n));
  CPU_TRY(hlt_cpu_shape(c, s, "result 1 (s)", c->t->real, 1, k, 0));
  CPU_TRY(hlt_cpu_shape(c, u, "result 2 (u)", c->t->dtype, 2, m, ucols));
  CPU_TRY(hlt_cpu_shape(c, vt, "result 3 (vt)", c->t->dtype, 2, vrows, n));
  CPU_TRY(hlt_cpu_shape(c, info, "result 4 (info)", S32, 0, 0, 0));
  size_t es = c->t->size;
  int ldu = hlt_cpu_ld(m), ldvt = hlt_cpu_ld(vrows);
  /* jaxlib queries with ldvt = n for 'A', else k. */
  int qldvt = hlt_cpu_ld(mode == 'A' ? n : k);
  unsigned char query[16];
  if (dc)
    c->la->gesdd(mode, (int)m, (int)n, NULL, hlt_cpu_ld(m), NULL, NULL, ldu, NULL, qldvt, query,
                 -1, NULL, NULL);
  else
    c->la->gesvd(mode, (int)m, (int)n, NULL, hlt_cpu_ld(m), NULL, NULL, ldu, NULL, qldvt, query,
                 -1, NULL);
  int lwork = hlt_cpu_lwork(c->t, query);
  /* jaxlib's sizes of the real and integer workspaces (svd::Get*WorkspaceSize*). */
  int64_t rwork_n = !dc ? 5 * k
                    : mode == 'N' ? 7 * k
                                  : max64(5 * k * k + 5 * k, 2 * max64(m, n) * k + 2 * k * k + k);
  XLA_FFI_Error *err = NULL;
  void *w = hlt_cpu_alloc(c, (size_t)(m * n) * es, &err);
  void *wu = w ? hlt_cpu_alloc(c, (size_t)(m * ucols) * es, &err) : NULL;
  void *wvt = wu ? hlt_cpu_alloc(c, (size_t)(vrows * n) * es, &err) : NULL;
  void *work = wvt ? hlt_cpu_alloc(c, (size_t)lwork * es, &err) : NULL;
  void *rwork = work ? hlt_cpu_alloc(c, (size_t)(rwork_n + 1) * es, &err) : NULL;
  int *iwork = rwork ? hlt_cpu_alloc(c, (size_t)(8 * k + 1) * sizeof(int), &err) : NULL;
  if (!iwork) return err;
  size_t rs = es / (c->t->complex ? 2 : 1);
  for (int64_t b = 0; b < c->batch; b++) {
    hlt_cpu_load(c, a, b, w, m, n);
    void *sb = hlt_cpu_at(s, rs, b, k);
    int r = dc ? c->la->gesdd(mode, (int)m, (int)n, w, hlt_cpu_ld(m), sb, wu, ldu, wvt, ldvt,
                              work, lwork, c->t->complex ? rwork : NULL, iwork)
               : c->la->gesvd(mode, (int)m, (int)n, w, hlt_cpu_ld(m), sb, wu, ldu, wvt, ldvt,
                              work, lwork, c->t->complex ? rwork : NULL);
    ((int32_t *)info->data)[b] = r;
    hlt_cpu_store(c, out, b, w, m, n);
    hlt_cpu_store(c, u, b, wu, m, ucols);
    hlt_cpu_store(c, vt, b, wvt, vrows, n);
  }
  return NULL;
}

XLA_FFI_Error *hlt_cpu_gesdd(CpuCall *c) { return svd(c, true); }
XLA_FFI_Error *hlt_cpu_gesvd(CpuCall *c) { return svd(c, false); }

/* ---- Symmetric / Hermitian eigendecomposition ----------------------------- */

/* (a[..., n, n]) -> (v (eigenvectors as columns), w real[..., n] ascending,
 * info); reads only the uplo triangle. */
XLA_FFI_Error *hlt_cpu_syevd(CpuCall *c) {
  CPU_TRY(hlt_cpu_arity(c, 1, 1, 3, "(a) -> (v, w, info)"));
  XLA_FFI_Buffer *a = hlt_cpu_arg(c, 0), *v = hlt_cpu_ret(c, 0), *w = hlt_cpu_ret(c, 1),
                 *info = hlt_cpu_ret(c, 2);
  char mode, uplo;
  CPU_TRY(hlt_cpu_char_attr(c, "mode", "VN", &mode));
  CPU_TRY(hlt_cpu_char_attr(c, "uplo", "LU", &uplo));
  int64_t n;
  CPU_TRY(square(c, a, &n));
  CPU_TRY(hlt_cpu_shape(c, v, "result 0 (v)", c->t->dtype, 2, n, n));
  CPU_TRY(hlt_cpu_shape(c, w, "result 1 (w)", c->t->real, 1, n, 0));
  CPU_TRY(hlt_cpu_shape(c, info, "result 2 (info)", S32, 0, 0, 0));
  /* jaxlib's formulas (eig::Get*WorkspaceSize), not a query. */
  bool vec = mode == 'V';
  int64_t lwork = !c->t->complex ? (vec ? 1 + 6 * n + 2 * n * n : 2 * n + 1)
                                 : (vec ? 2 * n + n * n : n + 1);
  int64_t lrwork = vec ? 1 + 5 * n + 2 * n * n : max64(n, 1);
  int64_t liwork = vec ? 3 + 5 * n : 1;
  CPU_TRY(hlt_cpu_fits(c, lwork));
  CPU_TRY(hlt_cpu_fits(c, lrwork));
  size_t es = c->t->size, rs = es / (c->t->complex ? 2 : 1);
  XLA_FFI_Error *err = NULL;
  void *wa = hlt_cpu_alloc(c, (size_t)(n * n) * es, &err);
  void *work = wa ? hlt_cpu_alloc(c, (size_t)lwork * es, &err) : NULL;
  void *rwork = work ? hlt_cpu_alloc(c, (size_t)lrwork * rs, &err) : NULL;
  int *iwork = rwork ? hlt_cpu_alloc(c, (size_t)liwork * sizeof(int), &err) : NULL;
  if (!iwork) return err;
  for (int64_t b = 0; b < c->batch; b++) {
    hlt_cpu_load(c, a, b, wa, n, n);
    ((int32_t *)info->data)[b] =
        c->la->syevd(mode, uplo, (int)n, wa, hlt_cpu_ld(n), hlt_cpu_at(w, rs, b, n), work,
                     (int)lwork, rwork, (int)lrwork, iwork, (int)liwork);
    hlt_cpu_store(c, v, b, wa, n, n);
  }
  return NULL;
}

/* ---- General eigendecomposition ------------------------------------------ */

static bool all_finite(const CpuType *t, const void *x, int64_t n) {
  int64_t count = t->complex ? 2 * n : n;
  for (int64_t i = 0; i < count; i++) {
    double v = t->real == XLA_FFI_DataType_F32 ? ((const float *)x)[i] : ((const double *)x)[i];
    if (!isfinite(v)) return false;
  }
  return true;
}

/* LAPACK's real eigenvectors (column-major, a conjugate pair j, j+1 stored
 * as its real and imaginary parts) into complex columns: jaxlib's
 * UnpackEigenvectors. R is float or double. */
#define UNPACK(NAME, R)                                                      \
  static void NAME(int64_t n, const void *wi_, const void *packed_, void *out_) { \
    const R *wi = wi_, *p = packed_;                                         \
    R *o = out_;                                                             \
    for (int64_t j = 0; j < n;) {                                            \
      if (wi[j] == 0 || isnan(wi[j]) || j + 1 == n) {                        \
        for (int64_t i = 0; i < n; i++) o[2 * (j * n + i)] = p[j * n + i], o[2 * (j * n + i) + 1] = 0; \
        j++;                                                                 \
        continue;                                                            \
      }                                                                      \
      for (int64_t i = 0; i < n; i++) {                                      \
        R re = p[j * n + i], im = p[(j + 1) * n + i];                        \
        o[2 * (j * n + i)] = re, o[2 * (j * n + i) + 1] = im;                \
        o[2 * ((j + 1) * n + i)] = re, o[2 * ((j + 1) * n + i) + 1] = -im;   \
      }                                                                      \
      j += 2;                                                                \
    }                                                                        \
  }
UNPACK(unpack_f32, float)
UNPACK(unpack_f64, double)

/* real: (a[..., n, n]) -> (wr, wi, vl complex, vr complex, info);
 * complex: (a) -> (w, vl, vr, info). A matrix with a non-finite entry is
 * not handed to LAPACK: info = -4 (as jaxlib). */
XLA_FFI_Error *hlt_cpu_geev(CpuCall *c) {
  bool cx = c->t->complex;
  CPU_TRY(cx ? hlt_cpu_arity(c, 1, 1, 4, "(a) -> (w, vl, vr, info)")
             : hlt_cpu_arity(c, 1, 1, 5, "(a) -> (wr, wi, vl, vr, info)"));
  int r0 = cx ? 0 : 1;   /* index of wi, the last eigenvalue result */
  XLA_FFI_Buffer *a = hlt_cpu_arg(c, 0), *wr = hlt_cpu_ret(c, 0), *wi = hlt_cpu_ret(c, r0),
                 *vl = hlt_cpu_ret(c, r0 + 1), *vr = hlt_cpu_ret(c, r0 + 2),
                 *info = hlt_cpu_ret(c, r0 + 3);
  char jl, jr;
  CPU_TRY(hlt_cpu_char_attr(c, "compute_left", "VN", &jl));
  CPU_TRY(hlt_cpu_char_attr(c, "compute_right", "VN", &jr));
  int64_t n;
  CPU_TRY(square(c, a, &n));
  CPU_TRY(hlt_cpu_shape(c, wr, cx ? "result 0 (w)" : "result 0 (wr)", c->t->dtype, 1, n, 0));
  if (!cx) CPU_TRY(hlt_cpu_shape(c, wi, "result 1 (wi)", c->t->dtype, 1, n, 0));
  CPU_TRY(hlt_cpu_shape(c, vl, cx ? "result 1 (vl)" : "result 2 (vl)", c->t->cplx, 2, n, n));
  CPU_TRY(hlt_cpu_shape(c, vr, cx ? "result 2 (vr)" : "result 3 (vr)", c->t->cplx, 2, n, n));
  CPU_TRY(hlt_cpu_shape(c, info, cx ? "result 3 (info)" : "result 4 (info)", S32, 0, 0, 0));
  size_t es = c->t->size, cs = cx ? es : 2 * es;
  int ld = hlt_cpu_ld(n);
  unsigned char query[16];
  double rquery[2];   /* complex ?geev writes rwork even in a query (jaxlib) */
  c->la->geev(jl, jr, (int)n, NULL, ld, NULL, NULL, NULL, ld, NULL, ld, query, -1, rquery);
  int lwork = hlt_cpu_lwork(c->t, query);
  XLA_FFI_Error *err = NULL;
  void *wa = hlt_cpu_alloc(c, (size_t)(n * n) * es, &err);
  void *pl = wa ? hlt_cpu_alloc(c, (size_t)(n * n) * es, &err) : NULL;
  void *pr = pl ? hlt_cpu_alloc(c, (size_t)(n * n) * es, &err) : NULL;
  void *ul = pr ? hlt_cpu_alloc(c, (size_t)(n * n) * cs, &err) : NULL;
  void *ur = ul ? hlt_cpu_alloc(c, (size_t)(n * n) * cs, &err) : NULL;
  void *work = ur ? hlt_cpu_alloc(c, (size_t)lwork * es, &err) : NULL;
  void *rwork = work ? hlt_cpu_alloc(c, (size_t)(2 * n + 1) * es, &err) : NULL;
  if (!rwork) return err;
  void (*unpack)(int64_t, const void *, const void *, void *) =
      c->t->real == XLA_FFI_DataType_F32 ? unpack_f32 : unpack_f64;
  for (int64_t b = 0; b < c->batch; b++) {
    int32_t *inf = (int32_t *)info->data + b;
    void *wrb = hlt_cpu_at(wr, es, b, n), *wib = cx ? NULL : hlt_cpu_at(wi, es, b, n);
    hlt_cpu_load(c, a, b, wa, n, n);
    memset(pl, 0, (size_t)(n * n) * es);
    memset(pr, 0, (size_t)(n * n) * es);
    if (!all_finite(c->t, wa, n * n)) {
      *inf = -4;
      memset(wrb, 0, (size_t)n * es);
      if (wib) memset(wib, 0, (size_t)n * es);
    } else {
      *inf = c->la->geev(jl, jr, (int)n, wa, ld, wrb, wib, pl, ld, pr, ld, work, lwork, rwork);
    }
    if (!cx && *inf == 0) {
      unpack(n, wib, pl, ul);
      unpack(n, wib, pr, ur);
    } else if (!cx) {
      memset(ul, 0, (size_t)(n * n) * cs);
      memset(ur, 0, (size_t)(n * n) * cs);
    }
    hlt_cpu_from_cm(cs, hlt_cpu_at(vl, cs, b, n * n), cx ? pl : ul, n, n);
    hlt_cpu_from_cm(cs, hlt_cpu_at(vr, cs, b, n * n), cx ? pr : ur, n, n);
  }
  return NULL;
}

/* ---- Schur decomposition --------------------------------------------------- */

/* real: (a[..., n, n]) -> (t, vs, wr, wi, sdim, info); complex: (a) -> (t,
 * vs, w, sdim, info). sort 'S' needs a selection function jaxlib never
 * passes: unsupported, as in jaxlib. */
XLA_FFI_Error *hlt_cpu_gees(CpuCall *c) {
  bool cx = c->t->complex;
  CPU_TRY(cx ? hlt_cpu_arity(c, 1, 1, 5, "(a) -> (t, vs, w, sdim, info)")
             : hlt_cpu_arity(c, 1, 1, 6, "(a) -> (t, vs, wr, wi, sdim, info)"));
  int r0 = cx ? 2 : 3;   /* index of wi (complex: of w) */
  XLA_FFI_Buffer *a = hlt_cpu_arg(c, 0), *t = hlt_cpu_ret(c, 0), *vs = hlt_cpu_ret(c, 1),
                 *wr = hlt_cpu_ret(c, 2), *wi = hlt_cpu_ret(c, r0),
                 *sdim = hlt_cpu_ret(c, r0 + 1), *info = hlt_cpu_ret(c, r0 + 2);
  char mode, sort;
  CPU_TRY(hlt_cpu_char_attr(c, "mode", "VN", &mode));
  CPU_TRY(hlt_cpu_char_attr(c, "sort", "NS", &sort));
  if (sort == 'S')
    return hlt_cpu_fail(c, XLA_FFI_Error_Code_UNIMPLEMENTED,
                        "sort 83 ('S'): ordering eigenvalues on the diagonal is not "
                        "implemented (nor by jaxlib)");
  int64_t n;
  CPU_TRY(square(c, a, &n));
  CPU_TRY(hlt_cpu_shape(c, t, "result 0 (t)", c->t->dtype, 2, n, n));
  CPU_TRY(hlt_cpu_shape(c, vs, "result 1 (vs)", c->t->dtype, 2, n, n));
  CPU_TRY(hlt_cpu_shape(c, wr, cx ? "result 2 (w)" : "result 2 (wr)", c->t->dtype, 1, n, 0));
  if (!cx) CPU_TRY(hlt_cpu_shape(c, wi, "result 3 (wi)", c->t->dtype, 1, n, 0));
  CPU_TRY(hlt_cpu_shape(c, sdim, cx ? "result 3 (sdim)" : "result 4 (sdim)", S32, 0, 0, 0));
  CPU_TRY(hlt_cpu_shape(c, info, cx ? "result 4 (info)" : "result 5 (info)", S32, 0, 0, 0));
  size_t es = c->t->size;
  int ld = hlt_cpu_ld(n);
  unsigned char query[16];
  int qsdim = 0;
  c->la->gees(mode, sort, (int)n, NULL, ld, &qsdim, NULL, NULL, NULL, ld, query, -1, NULL);
  int lwork = hlt_cpu_lwork(c->t, query);
  XLA_FFI_Error *err = NULL;
  void *wa = hlt_cpu_alloc(c, (size_t)(n * n) * es, &err);
  void *wv = wa ? hlt_cpu_alloc(c, (size_t)(n * n) * es, &err) : NULL;
  void *work = wv ? hlt_cpu_alloc(c, (size_t)lwork * es, &err) : NULL;
  void *rwork = work ? hlt_cpu_alloc(c, (size_t)(n + 1) * es, &err) : NULL;
  if (!rwork) return err;
  for (int64_t b = 0; b < c->batch; b++) {
    hlt_cpu_load(c, a, b, wa, n, n);
    int sd = 0;
    ((int32_t *)info->data)[b] =
        c->la->gees(mode, sort, (int)n, wa, ld, &sd, hlt_cpu_at(wr, es, b, n),
                    cx ? NULL : hlt_cpu_at(wi, es, b, n), wv, ld, work, lwork, rwork);
    ((int32_t *)sdim->data)[b] = sd;
    hlt_cpu_store(c, t, b, wa, n, n);
    hlt_cpu_store(c, vs, b, wv, n, n);
  }
  return NULL;
}

/* ---- Hessenberg and tridiagonal reduction ----------------------------------- */

/* (a[..., n, n]) -> (a_out (H on and above the subdiagonal, reflectors
 * below), tau[..., n-1], info); attributes low, high (LAPACK's ilo, ihi). */
XLA_FFI_Error *hlt_cpu_gehrd(CpuCall *c) {
  CPU_TRY(hlt_cpu_arity(c, 1, 1, 3, "(a) -> (a_out, tau, info)"));
  XLA_FFI_Buffer *a = hlt_cpu_arg(c, 0), *out = hlt_cpu_ret(c, 0), *tau = hlt_cpu_ret(c, 1),
                 *info = hlt_cpu_ret(c, 2);
  int32_t lo, hi;
  CPU_TRY(hlt_cpu_i32_attr(c, "low", &lo));
  CPU_TRY(hlt_cpu_i32_attr(c, "high", &hi));
  int64_t n;
  CPU_TRY(square(c, a, &n));
  if (lo < 1 || lo > max64(n, 1) || hi < min64(lo, n) || hi > n)
    return hlt_cpu_fail(c, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                        "attributes low = %d, high = %d must satisfy 1 <= low <= max(1, n) and "
                        "min(low, n) <= high <= n = %lld",
                        lo, hi, (long long)n);
  int64_t nt = max64(n - 1, 0);
  CPU_TRY(hlt_cpu_shape(c, out, "result 0 (a_out)", c->t->dtype, 2, n, n));
  CPU_TRY(hlt_cpu_shape(c, tau, "result 1 (tau)", c->t->dtype, 1, nt, 0));
  CPU_TRY(hlt_cpu_shape(c, info, "result 2 (info)", S32, 0, 0, 0));
  size_t es = c->t->size;
  unsigned char query[16];
  c->la->gehrd((int)n, lo, hi, NULL, hlt_cpu_ld(n), NULL, query, -1);
  int lwork = hlt_cpu_lwork(c->t, query);
  XLA_FFI_Error *err = NULL;
  void *wa = hlt_cpu_alloc(c, (size_t)(n * n) * es, &err);
  void *wt = wa ? hlt_cpu_alloc(c, (size_t)(nt + 1) * es, &err) : NULL;
  void *work = wt ? hlt_cpu_alloc(c, (size_t)lwork * es, &err) : NULL;
  if (!work) return err;
  for (int64_t b = 0; b < c->batch; b++) {
    hlt_cpu_load(c, a, b, wa, n, n);
    ((int32_t *)info->data)[b] = c->la->gehrd((int)n, lo, hi, wa, hlt_cpu_ld(n), wt, work, lwork);
    hlt_cpu_store(c, out, b, wa, n, n);
    memcpy(hlt_cpu_at(tau, es, b, nt), wt, (size_t)nt * es);
  }
  return NULL;
}

/* (a[..., n, n]) -> (a_out, d real[..., n], e real[..., n-1], tau[..., n-1],
 * info); the other triangle than uplo is left as it was. */
XLA_FFI_Error *hlt_cpu_sytrd(CpuCall *c) {
  CPU_TRY(hlt_cpu_arity(c, 1, 1, 5, "(a) -> (a_out, d, e, tau, info)"));
  XLA_FFI_Buffer *a = hlt_cpu_arg(c, 0), *out = hlt_cpu_ret(c, 0), *d = hlt_cpu_ret(c, 1),
                 *e = hlt_cpu_ret(c, 2), *tau = hlt_cpu_ret(c, 3), *info = hlt_cpu_ret(c, 4);
  char uplo;
  CPU_TRY(hlt_cpu_char_attr(c, "uplo", "LU", &uplo));
  int64_t n;
  CPU_TRY(square(c, a, &n));
  int64_t nt = max64(n - 1, 0);
  CPU_TRY(hlt_cpu_shape(c, out, "result 0 (a_out)", c->t->dtype, 2, n, n));
  CPU_TRY(hlt_cpu_shape(c, d, "result 1 (d)", c->t->real, 1, n, 0));
  CPU_TRY(hlt_cpu_shape(c, e, "result 2 (e)", c->t->real, 1, nt, 0));
  CPU_TRY(hlt_cpu_shape(c, tau, "result 3 (tau)", c->t->dtype, 1, nt, 0));
  CPU_TRY(hlt_cpu_shape(c, info, "result 4 (info)", S32, 0, 0, 0));
  size_t es = c->t->size, rs = es / (c->t->complex ? 2 : 1);
  unsigned char query[16];
  c->la->sytrd('L', (int)n, NULL, hlt_cpu_ld(n), NULL, NULL, NULL, query, -1);
  int lwork = hlt_cpu_lwork(c->t, query);
  XLA_FFI_Error *err = NULL;
  void *wa = hlt_cpu_alloc(c, (size_t)(n * n) * es, &err);
  void *we = wa ? hlt_cpu_alloc(c, (size_t)(nt + 1) * rs, &err) : NULL;
  void *wt = we ? hlt_cpu_alloc(c, (size_t)(nt + 1) * es, &err) : NULL;
  void *work = wt ? hlt_cpu_alloc(c, (size_t)lwork * es, &err) : NULL;
  if (!work) return err;
  for (int64_t b = 0; b < c->batch; b++) {
    hlt_cpu_load(c, a, b, wa, n, n);
    ((int32_t *)info->data)[b] = c->la->sytrd(uplo, (int)n, wa, hlt_cpu_ld(n),
                                              hlt_cpu_at(d, rs, b, n), we, wt, work, lwork);
    hlt_cpu_store(c, out, b, wa, n, n);
    memcpy(hlt_cpu_at(e, rs, b, nt), we, (size_t)nt * rs);
    memcpy(hlt_cpu_at(tau, es, b, nt), wt, (size_t)nt * es);
  }
  return NULL;
}
