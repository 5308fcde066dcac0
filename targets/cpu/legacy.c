/* legacy.c: jaxlib's older CPU linear-algebra custom calls (no _ffi suffix,
 * api_version 2; JAX emitted them until jaxlib 0.4.34 / 0.4.38): leading
 * scalar descriptor operands (batch size, dimensions, flags, workspace
 * sizes) and extra workspace results. Layouts as the kernels of
 * jaxlib/cpu/lapack_kernels.cc at jax-ml/jax @ d42d2e88b47e (getrf, geqrf,
 * orgqr, potrf, gesdd, syevd, geev, gees, gehrd, sytrd) and
 * @ 09d903fc9a60 (blas_?trsm).
 *
 * Each call is rewritten into the typed-FFI call of the same routine: a
 * call frame holding only the matrix operands and the results the FFI
 * kernel has, with the descriptor flags as its attributes; the descriptors
 * must agree with the operand shapes. Workspace results are left zero
 * (JAX never reads them); workspace sizes are the FFI kernels' own
 * queries, which is what the descriptors held (jaxlib computed them by the
 * same queries). */
#include "targets/cpu/cpu.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A typed-FFI call frame built from a legacy one. */
typedef struct Sub {
  XLA_FFI_CallFrame f;
  void *args[3];
  XLA_FFI_ArgType arg_types[3];
  void *rets[6];
  XLA_FFI_RetType ret_types[6];
  XLA_FFI_ByteSpan name[4];
  XLA_FFI_ByteSpan *names[4];
  XLA_FFI_AttrType attr_types[4];
  void *attrs[4];
  XLA_FFI_Scalar scalar[4];
  int32_t value[4];   /* the scalars' storage (a char value in its first byte) */
} Sub;

static void sub_init(Sub *s, const XLA_FFI_CallFrame *orig) {
  memset(s, 0, sizeof *s);
  s->f = *orig;
  s->f.args.size = s->f.rets.size = s->f.attrs.size = 0;
  s->f.args.types = s->arg_types, s->f.args.args = s->args;
  s->f.rets.types = s->ret_types, s->f.rets.rets = s->rets;
  s->f.attrs.types = s->attr_types, s->f.attrs.names = s->names, s->f.attrs.attrs = s->attrs;
  s->f.args.extension_start = s->f.rets.extension_start = s->f.attrs.extension_start = NULL;
}

/* Operands (args) and results (rets) of the legacy call, by index, in the
 * FFI kernel's order; -1 ends a list. */
static void sub_buffers(Sub *s, const XLA_FFI_CallFrame *orig, const int *args, const int *rets) {
  for (; *args >= 0; args++) {
    s->arg_types[s->f.args.size] = XLA_FFI_ArgType_BUFFER;
    s->args[s->f.args.size++] = orig->args.args[*args];
  }
  for (; *rets >= 0; rets++) {
    s->ret_types[s->f.rets.size] = XLA_FFI_RetType_BUFFER;
    s->rets[s->f.rets.size++] = orig->rets.rets[*rets];
  }
}

static void sub_attr(Sub *s, const char *name, XLA_FFI_DataType dt, int32_t v) {
  int64_t i = s->f.attrs.size++;
  s->name[i] = (XLA_FFI_ByteSpan){name, strlen(name)};
  s->names[i] = &s->name[i];
  s->attr_types[i] = XLA_FFI_AttrType_SCALAR;
  if (dt == XLA_FFI_DataType_U8) *(unsigned char *)&s->value[i] = (unsigned char)v;
  else s->value[i] = v;
  s->scalar[i] = (XLA_FFI_Scalar){dt, &s->value[i]};
  s->attrs[i] = &s->scalar[i];
}

static void sub_char(Sub *s, const char *name, char v) {
  sub_attr(s, name, XLA_FFI_DataType_U8, (unsigned char)v);
}

/* Scalar descriptor operand i (s32 as jaxlib wrote them; s64 in the 2023
 * getrf module, u8 for character flags). */
static XLA_FFI_Error *desc(CpuCall *c, int i, const char *what, int64_t *v) {
  XLA_FFI_Buffer *b = hlt_cpu_arg(c, i);
  switch (b->rank == 0 ? b->dtype : XLA_FFI_DataType_INVALID) {
  case XLA_FFI_DataType_S32: *v = *(const int32_t *)b->data; return NULL;
  case XLA_FFI_DataType_S64: *v = *(const int64_t *)b->data; return NULL;
  case XLA_FFI_DataType_U8: *v = *(const uint8_t *)b->data; return NULL;
  default:
    return hlt_cpu_fail(c, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                        "operand %d (%s) must be an integer scalar (a descriptor)", i, what);
  }
}

/* The leading descriptor operands, named in names (", " between them for
 * messages), one int64_t * per name after it. */
static XLA_FFI_Error *descs(CpuCall *c, const char *names, ...) {
  va_list ap;
  va_start(ap, names);
  XLA_FFI_Error *err = NULL;
  for (int i = 0; *names && !err; i++) {
    size_t len = strcspn(names, ",");
    char name[32];
    snprintf(name, sizeof name, "%.*s", (int)len, names);
    err = desc(c, i, name, va_arg(ap, int64_t *));
    names += len + (names[len] ? 2 : 0);
  }
  va_end(ap);
  return err;
}

/* The descriptors (batch, rows, cols) agree with matrix operand i. */
static XLA_FFI_Error *agree(CpuCall *c, int i, int64_t batch, int64_t rows, int64_t cols) {
  XLA_FFI_Buffer *a = hlt_cpu_arg(c, i);
  int64_t b = 1;
  for (int64_t k = 0; k + 2 < a->rank; k++) b *= a->dims[k];
  if (a->rank >= 2 && b == batch && a->dims[a->rank - 2] == rows && a->dims[a->rank - 1] == cols)
    return NULL;
  char got[256];
  hlt_cpu_shape_text(a->dtype, a->rank, a->dims, got, sizeof got);
  return hlt_cpu_fail(c, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                      "descriptor operands (batch %lld, %lld x %lld) do not match operand %d, %s",
                      (long long)batch, (long long)rows, (long long)cols, i, got);
}

/* Run kernel k on the rewritten frame. */
static XLA_FFI_Error *run_sub(CpuCall *c, Sub *s, CpuKernel *k) {
  XLA_FFI_CallFrame *orig = c->f;
  c->f = &s->f;
  XLA_FFI_Error *err = k(c);
  c->f = orig;
  return err;
}

/* Results the FFI kernel does not have are scratch: zero them. */
static void zero_ret(CpuCall *c, int i) {
  XLA_FFI_Buffer *b = hlt_cpu_ret(c, i);
  size_t es = b->dtype == XLA_FFI_DataType_S32 ? 4 : b->dtype == c->t->real ? c->t->size / (c->t->complex ? 2 : 1) : c->t->size;
  memset(b->data, 0, (size_t)hlorun_ffi_elements(b) * es);
}

static const int END = -1;

/* lapack_Pgetrf: (b, m, n, a) -> (a, ipiv, info) */
XLA_FFI_Error *hlt_cpu_legacy_getrf(CpuCall *c) {
  CPU_TRY(hlt_cpu_arity(c, 4, 4, 3, "(b, m, n, a) -> (lu, ipiv, info)"));
  int64_t b, m, n;
  CPU_TRY(descs(c, "b, m, n", &b, &m, &n));
  CPU_TRY(agree(c, 3, b, m, n));
  Sub s;
  sub_init(&s, c->f);
  sub_buffers(&s, c->f, (const int[]){3, END}, (const int[]){0, 1, 2, END});
  return run_sub(c, &s, hlt_cpu_getrf);
}

/* lapack_Pgeqrf: (b, m, n, lwork, a) -> (a, tau, info, work) */
XLA_FFI_Error *hlt_cpu_legacy_geqrf(CpuCall *c) {
  CPU_TRY(hlt_cpu_arity(c, 5, 5, 4, "(b, m, n, lwork, a) -> (a_out, tau, info, work)"));
  int64_t b, m, n, lwork;
  CPU_TRY(descs(c, "b, m, n, lwork", &b, &m, &n, &lwork));
  CPU_TRY(agree(c, 4, b, m, n));
  Sub s;
  sub_init(&s, c->f);
  sub_buffers(&s, c->f, (const int[]){4, END}, (const int[]){0, 1, END});
  CPU_TRY(run_sub(c, &s, hlt_cpu_geqrf));
  zero_ret(c, 2);   /* info: geqrf fails only on bad arguments, checked above */
  zero_ret(c, 3);
  return NULL;
}

/* lapack_{s,d}orgqr, lapack_{c,z}ungqr: (b, m, n, k, lwork, a, tau) -> (a, info, work) */
XLA_FFI_Error *hlt_cpu_legacy_orgqr(CpuCall *c) {
  CPU_TRY(hlt_cpu_arity(c, 7, 7, 3, "(b, m, n, k, lwork, a, tau) -> (q, info, work)"));
  int64_t b, m, n, k, lwork;
  CPU_TRY(descs(c, "b, m, n, k, lwork", &b, &m, &n, &k, &lwork));
  CPU_TRY(agree(c, 5, b, m, n));
  XLA_FFI_Buffer *tau = hlt_cpu_arg(c, 6);
  if (tau->rank < 1 || tau->dims[tau->rank - 1] != k)
    return hlt_cpu_fail(c, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                        "operand 6 (tau) must end in k = %lld", (long long)k);
  Sub s;
  sub_init(&s, c->f);
  sub_buffers(&s, c->f, (const int[]){5, 6, END}, (const int[]){0, END});
  CPU_TRY(run_sub(c, &s, hlt_cpu_orgqr));
  zero_ret(c, 1);
  zero_ret(c, 2);
  return NULL;
}

/* lapack_Ppotrf: (lower, b, n, a) -> (a, info) */
XLA_FFI_Error *hlt_cpu_legacy_potrf(CpuCall *c) {
  CPU_TRY(hlt_cpu_arity(c, 4, 4, 2, "(lower, b, n, a) -> (l, info)"));
  int64_t lower, b, n;
  CPU_TRY(descs(c, "lower, b, n", &lower, &b, &n));
  CPU_TRY(agree(c, 3, b, n, n));
  Sub s;
  sub_init(&s, c->f);
  sub_buffers(&s, c->f, (const int[]){3, END}, (const int[]){0, 1, END});
  sub_char(&s, "uplo", lower ? 'L' : 'U');
  return run_sub(c, &s, hlt_cpu_potrf);
}

/* lapack_Pgesdd: (full_matrices, compute_uv, b, m, n, lwork, a) ->
 * (a, s, u, vt, info, iwork, work) (complex: ..., iwork, rwork, work) */
XLA_FFI_Error *hlt_cpu_legacy_gesdd(CpuCall *c) {
  int nrets = c->t->complex ? 8 : 7;
  CPU_TRY(hlt_cpu_arity(c, 7, 7, nrets, c->t->complex
                          ? "(full_matrices, compute_uv, b, m, n, lwork, a) -> (a_out, s, u, "
                            "vt, info, iwork, rwork, work)"
                          : "(full_matrices, compute_uv, b, m, n, lwork, a) -> (a_out, s, u, "
                            "vt, info, iwork, work)"));
  int64_t full, uv, b, m, n, lwork;
  CPU_TRY(descs(c, "full_matrices, compute_uv, b, m, n, lwork", &full, &uv, &b, &m, &n, &lwork));
  CPU_TRY(agree(c, 6, b, m, n));
  Sub s;
  sub_init(&s, c->f);
  sub_buffers(&s, c->f, (const int[]){6, END}, (const int[]){0, 1, 2, 3, 4, END});
  sub_char(&s, "mode", !uv ? 'N' : full ? 'A' : 'S');
  CPU_TRY(run_sub(c, &s, hlt_cpu_gesdd));
  for (int i = 5; i < nrets; i++) zero_ret(c, i);
  return NULL;
}

/* lapack_{s,d}syevd, lapack_{c,z}heevd: (lower, b, n, a) -> (v, w, info,
 * work, iwork) (complex: v, w, info, work, rwork, iwork) */
XLA_FFI_Error *hlt_cpu_legacy_syevd(CpuCall *c) {
  int nrets = c->t->complex ? 6 : 5;
  CPU_TRY(hlt_cpu_arity(c, 4, 4, nrets, c->t->complex
                          ? "(lower, b, n, a) -> (v, w, info, work, rwork, iwork)"
                          : "(lower, b, n, a) -> (v, w, info, work, iwork)"));
  int64_t lower, b, n;
  CPU_TRY(descs(c, "lower, b, n", &lower, &b, &n));
  CPU_TRY(agree(c, 3, b, n, n));
  Sub s;
  sub_init(&s, c->f);
  sub_buffers(&s, c->f, (const int[]){3, END}, (const int[]){0, 1, 2, END});
  sub_char(&s, "mode", 'V');
  sub_char(&s, "uplo", lower ? 'L' : 'U');
  CPU_TRY(run_sub(c, &s, hlt_cpu_syevd));
  for (int i = 3; i < nrets; i++) zero_ret(c, i);
  return NULL;
}

/* lapack_Pgeev: (b, n, jobvl, jobvr, a) -> real (a_work, vl_work, vr_work,
 * wr, wi, vl, vr, info), complex (a_work, rwork, w, vl, vr, info) */
XLA_FFI_Error *hlt_cpu_legacy_geev(CpuCall *c) {
  bool cx = c->t->complex;
  CPU_TRY(hlt_cpu_arity(c, 5, 5, cx ? 6 : 8, cx
                          ? "(b, n, jobvl, jobvr, a) -> (a_work, rwork, w, vl, vr, info)"
                          : "(b, n, jobvl, jobvr, a) -> (a_work, vl_work, vr_work, wr, wi, vl, "
                            "vr, info)"));
  int64_t b, n, jl, jr;
  CPU_TRY(descs(c, "b, n, jobvl, jobvr", &b, &n, &jl, &jr));
  CPU_TRY(agree(c, 4, b, n, n));
  Sub s;
  sub_init(&s, c->f);
  sub_buffers(&s, c->f, (const int[]){4, END},
              cx ? (const int[]){2, 3, 4, 5, END} : (const int[]){3, 4, 5, 6, 7, END});
  sub_char(&s, "compute_left", (char)jl);
  sub_char(&s, "compute_right", (char)jr);
  CPU_TRY(run_sub(c, &s, hlt_cpu_geev));
  for (int i = 0; i < (cx ? 2 : 3); i++) zero_ret(c, i);
  return NULL;
}

/* lapack_Pgees: (b, n, jobvs, sort, a) -> real (t, wr, wi, vs, sdim, info),
 * complex (t, rwork, w, vs, sdim, info) */
XLA_FFI_Error *hlt_cpu_legacy_gees(CpuCall *c) {
  bool cx = c->t->complex;
  CPU_TRY(hlt_cpu_arity(c, 5, 5, 6, cx ? "(b, n, jobvs, sort, a) -> (t, rwork, w, vs, sdim, info)"
                                       : "(b, n, jobvs, sort, a) -> (t, wr, wi, vs, sdim, info)"));
  int64_t b, n, jobvs, sort;
  CPU_TRY(descs(c, "b, n, jobvs, sort", &b, &n, &jobvs, &sort));
  CPU_TRY(agree(c, 4, b, n, n));
  Sub s;
  sub_init(&s, c->f);
  sub_buffers(&s, c->f, (const int[]){4, END},
              cx ? (const int[]){0, 3, 2, 4, 5, END} : (const int[]){0, 3, 1, 2, 4, 5, END});
  sub_char(&s, "mode", (char)jobvs);
  sub_char(&s, "sort", (char)sort);
  CPU_TRY(run_sub(c, &s, hlt_cpu_gees));
  if (cx) zero_ret(c, 1);
  return NULL;
}

/* lapack_Pgehrd: (n, ilo, ihi, lda, b, lwork, a) -> (a, tau, info, work) */
XLA_FFI_Error *hlt_cpu_legacy_gehrd(CpuCall *c) {
  CPU_TRY(hlt_cpu_arity(c, 7, 7, 4, "(n, ilo, ihi, lda, b, lwork, a) -> (a_out, tau, info, work)"));
  int64_t n, ilo, ihi, lda, b, lwork;
  CPU_TRY(descs(c, "n, ilo, ihi, lda, b, lwork", &n, &ilo, &ihi, &lda, &b, &lwork));
  CPU_TRY(agree(c, 6, b, lda, n));
  Sub s;
  sub_init(&s, c->f);
  sub_buffers(&s, c->f, (const int[]){6, END}, (const int[]){0, 1, 2, END});
  sub_attr(&s, "high", XLA_FFI_DataType_S32, (int32_t)ihi);
  sub_attr(&s, "low", XLA_FFI_DataType_S32, (int32_t)ilo);
  CPU_TRY(run_sub(c, &s, hlt_cpu_gehrd));
  zero_ret(c, 3);
  return NULL;
}

/* lapack_{s,d}sytrd, lapack_{c,z}hetrd: (n, lower, lda, b, lwork, a) ->
 * (a, d, e, tau, info, work) */
XLA_FFI_Error *hlt_cpu_legacy_sytrd(CpuCall *c) {
  CPU_TRY(hlt_cpu_arity(c, 6, 6, 6, "(n, lower, lda, b, lwork, a) -> (a_out, d, e, tau, info, work)"));
  int64_t n, lower, lda, b, lwork;
  CPU_TRY(descs(c, "n, lower, lda, b, lwork", &n, &lower, &lda, &b, &lwork));
  CPU_TRY(agree(c, 5, b, lda, n));
  Sub s;
  sub_init(&s, c->f);
  sub_buffers(&s, c->f, (const int[]){5, END}, (const int[]){0, 1, 2, 3, 4, END});
  sub_char(&s, "uplo", lower ? 'L' : 'U');
  CPU_TRY(run_sub(c, &s, hlt_cpu_sytrd));
  zero_ret(c, 5);
  return NULL;
}

/* blas_Ptrsm: (left_side, lower, trans_a (0 N, 1 T, 2 C), diag (unit), m,
 * n, batch, alpha, a, b) -> x */
XLA_FFI_Error *hlt_cpu_legacy_trsm(CpuCall *c) {
  CPU_TRY(hlt_cpu_arity(c, 10, 10, 1,
                        "(left_side, lower, trans_a, unit_diagonal, m, n, batch, alpha, a, b) -> (x)"));
  int64_t left, lower, trans, unit, m, n, batch;
  CPU_TRY(descs(c, "left_side, lower, trans_a, unit_diagonal, m, n, batch",
                    &left, &lower, &trans, &unit, &m, &n, &batch));
  CPU_TRY(agree(c, 9, batch, m, n));
  if (trans < 0 || trans > 2)
    return hlt_cpu_fail(c, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                        "operand 2 (trans_a) = %lld is not 0 (N), 1 (T) or 2 (C)", (long long)trans);
  Sub s;
  sub_init(&s, c->f);
  sub_buffers(&s, c->f, (const int[]){8, 9, 7, END}, (const int[]){0, END});
  sub_char(&s, "diag", unit ? 'U' : 'N');
  sub_char(&s, "side", left ? 'L' : 'R');
  sub_char(&s, "trans_x", "NTC"[trans]);
  sub_char(&s, "uplo", lower ? 'L' : 'U');
  return run_sub(c, &s, hlt_cpu_trsm);
}
