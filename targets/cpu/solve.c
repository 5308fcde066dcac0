/* solve.c: jaxlib's linear-system targets: the triangular solve (BLAS
 * ?trsm) and the general tridiagonal solve (?gtsv). Operands and results as
 * jaxlib/cpu/lapack_kernels.cc (jax-ml/jax @ cec06d116c05); trsm also takes
 * the scalar alpha operand of the 2024-12 FFI binding (jax @ 1256153200),
 * which later jaxlib versions dropped (JAX always passed 1). */
#include "targets/cpu/cpu.h"
#include <string.h>

/* (a[..., k, k], b[..., m, n] [, alpha[]]) -> (x[..., m, n]): op(a)·x =
 * alpha·b (side L, k = m) or x·op(a) = alpha·b (side R, k = n); only the
 * uplo triangle of a is read, and not its diagonal when diag is 'U'. */
XLA_FFI_Error *hlt_cpu_trsm(CpuCall *c) {
  CPU_TRY(hlt_cpu_arity(c, 2, 3, 1, "(a, b[, alpha]) -> (x)"));
  XLA_FFI_Buffer *a = hlt_cpu_arg(c, 0), *b = hlt_cpu_arg(c, 1), *x = hlt_cpu_ret(c, 0);
  char side, uplo, trans, diag;
  CPU_TRY(hlt_cpu_char_attr(c, "side", "LR", &side));
  CPU_TRY(hlt_cpu_char_attr(c, "uplo", "LU", &uplo));
  CPU_TRY(hlt_cpu_char_attr(c, "trans_x", "NTC", &trans));
  CPU_TRY(hlt_cpu_char_attr(c, "diag", "NU", &diag));
  int64_t m, n;
  CPU_TRY(hlt_cpu_matrix(c, b, "operand 1 (b)", &m, &n));
  int64_t k = side == 'L' ? m : n;
  CPU_TRY(hlt_cpu_shape(c, a, side == 'L' ? "operand 0 (a, side L: b's rows square)"
                                          : "operand 0 (a, side R: b's columns square)",
                        c->t->dtype, 2, k, k));
  CPU_TRY(hlt_cpu_shape(c, x, "result 0 (x)", c->t->dtype, 2, m, n));
  unsigned char one[16] = {0};
  if (c->t->real == XLA_FFI_DataType_F32) *(float *)one = 1;
  else *(double *)one = 1;
  const void *alpha = one;
  if (c->f->args.size == 3) {
    XLA_FFI_Buffer *al = hlt_cpu_arg(c, 2);
    int nb = c->nbatch;
    c->nbatch = 0;   /* alpha is one scalar for the whole batch */
    XLA_FFI_Error *e = hlt_cpu_shape(c, al, "operand 2 (alpha)", c->t->dtype, 0, 0, 0);
    c->nbatch = nb;
    if (e) return e;
    alpha = al->data;
  }
  size_t es = c->t->size;
  XLA_FFI_Error *err = NULL;
  void *wa = hlt_cpu_alloc(c, (size_t)(k * k) * es, &err);
  void *wb = wa ? hlt_cpu_alloc(c, (size_t)(m * n) * es, &err) : NULL;
  if (!wb) return err;
  for (int64_t i = 0; i < c->batch; i++) {
    hlt_cpu_load(c, a, i, wa, k, k);
    hlt_cpu_load(c, b, i, wb, m, n);
    c->la->trsm(side, uplo, trans, diag, (int)m, (int)n, alpha, wa, hlt_cpu_ld(k), wb,
                hlt_cpu_ld(m));
    hlt_cpu_store(c, x, i, wb, m, n);
  }
  return NULL;
}

/* (dl, d, du [..., n], b[..., n, nrhs]) -> (dl_out, d_out, du_out (LAPACK's
 * factor rows), x[..., n, nrhs], info). JAX's dl[0] and du[n-1] are unused:
 * LAPACK's DL is dl + 1 (as jaxlib passes it). */
XLA_FFI_Error *hlt_cpu_gtsv(CpuCall *c) {
  CPU_TRY(hlt_cpu_arity(c, 4, 4, 5, "(dl, d, du, b) -> (dl_out, d_out, du_out, x, info)"));
  static const char *const in_names[3] = {"operand 0 (dl)", "operand 1 (d)", "operand 2 (du)"};
  static const char *const out_names[3] = {"result 0 (dl_out)", "result 1 (d_out)",
                                           "result 2 (du_out)"};
  XLA_FFI_Buffer *b = hlt_cpu_arg(c, 3), *x = hlt_cpu_ret(c, 3), *info = hlt_cpu_ret(c, 4);
  int64_t n, nrhs;
  CPU_TRY(hlt_cpu_matrix(c, b, "operand 3 (b)", &n, &nrhs));
  size_t es = c->t->size;
  for (int i = 0; i < 3; i++) {
    XLA_FFI_Buffer *in = hlt_cpu_arg(c, i), *out = hlt_cpu_ret(c, i);
    CPU_TRY(hlt_cpu_shape(c, in, in_names[i], c->t->dtype, 1, n, 0));
    CPU_TRY(hlt_cpu_shape(c, out, out_names[i], c->t->dtype, 1, n, 0));
    if (out->data != in->data) memcpy(out->data, in->data, (size_t)(c->batch * n) * es);
  }
  CPU_TRY(hlt_cpu_shape(c, x, "result 3 (x)", c->t->dtype, 2, n, nrhs));
  CPU_TRY(hlt_cpu_shape(c, info, "result 4 (info)", XLA_FFI_DataType_S32, 0, 0, 0));
  XLA_FFI_Error *err = NULL;
  void *wb = hlt_cpu_alloc(c, (size_t)(n * nrhs) * es, &err);
  if (!wb) return err;
  for (int64_t i = 0; i < c->batch; i++) {
    char *dl = hlt_cpu_at(hlt_cpu_ret(c, 0), es, i, n), *d = hlt_cpu_at(hlt_cpu_ret(c, 1), es, i, n),
         *du = hlt_cpu_at(hlt_cpu_ret(c, 2), es, i, n);
    hlt_cpu_load(c, b, i, wb, n, nrhs);
    /* n = 0: no element to skip in dl */
    ((int32_t *)info->data)[i] =
        c->la->gtsv((int)n, (int)nrhs, n ? dl + es : dl, d, du, wb, hlt_cpu_ld(n));
    hlt_cpu_store(c, x, i, wb, n, nrhs);
  }
  return NULL;
}
