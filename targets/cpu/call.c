/* call.c: what every LAPACK handler does around its routine: check operand
 * and result buffers against jaxlib's binding (messages name the target,
 * the buffer and what was expected), decode jaxlib's attribute encodings,
 * hand out scratch memory, and copy matrices to and from column-major
 * storage. Not here: the routines themselves (routines.c). */
#include "targets/cpu/cpu.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/dtype.h"

const CpuType hlt_cpu_types[4] = {
  [CPU_S] = {XLA_FFI_DataType_F32, XLA_FFI_DataType_F32, XLA_FFI_DataType_C64, 4, false},
  [CPU_D] = {XLA_FFI_DataType_F64, XLA_FFI_DataType_F64, XLA_FFI_DataType_C128, 8, false},
  [CPU_C] = {XLA_FFI_DataType_C64, XLA_FFI_DataType_F32, XLA_FFI_DataType_C64, 8, true},
  [CPU_Z] = {XLA_FFI_DataType_C128, XLA_FFI_DataType_F64, XLA_FFI_DataType_C128, 16, true},
};

XLA_FFI_Error *hlt_cpu_fail(CpuCall *c, XLA_FFI_Error_Code code, const char *fmt, ...) {
  char msg[768];
  int k = snprintf(msg, sizeof msg, "%s: ", c->target);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg + k, sizeof msg - (size_t)k, fmt, ap);
  va_end(ap);
  return hlorun_ffi_error(c->f->api, code, msg);
}

static const char *dtype_name(XLA_FFI_DataType t) {
  HloDtype d = hlc_dtype_from_xla_code((int)t);
  return d == HLO_DTYPE_INVALID ? "?" : hlc_dtype_name(d);
}

void hlt_cpu_shape_text(XLA_FFI_DataType t, int64_t rank, const int64_t *dims, char *buf,
                        size_t n) {
  int k = snprintf(buf, n, "%s[", dtype_name(t));
  for (int64_t i = 0; i < rank && k > 0 && (size_t)k < n; i++)
    k += snprintf(buf + k, n - (size_t)k, "%s%lld", i ? "," : "", (long long)dims[i]);
  if (k > 0 && (size_t)k < n) snprintf(buf + k, n - (size_t)k, "]");
}

XLA_FFI_Error *hlt_cpu_arity(CpuCall *c, int nargs_min, int nargs_max, int nrets,
                             const char *sig) {
  XLA_FFI_CallFrame *f = c->f;
  if (f->args.size < nargs_min || f->args.size > nargs_max || f->rets.size != nrets)
    return hlt_cpu_fail(c, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                        "expected %s: %d operand%s and %d result%s, got %lld and %lld", sig,
                        nargs_min, nargs_min == 1 ? "" : "s", nrets, nrets == 1 ? "" : "s",
                        (long long)f->args.size, (long long)f->rets.size);
  for (int64_t i = 0; i < f->args.size; i++)
    if (f->args.types[i] != XLA_FFI_ArgType_BUFFER)
      return hlt_cpu_fail(c, XLA_FFI_Error_Code_INVALID_ARGUMENT, "operand %lld is not a buffer",
                          (long long)i);
  for (int64_t i = 0; i < f->rets.size; i++)
    if (f->rets.types[i] != XLA_FFI_RetType_BUFFER)
      return hlt_cpu_fail(c, XLA_FFI_Error_Code_INVALID_ARGUMENT, "result %lld is not a buffer",
                          (long long)i);
  return NULL;
}

XLA_FFI_Buffer *hlt_cpu_arg(CpuCall *c, int i) { return c->f->args.args[i]; }
XLA_FFI_Buffer *hlt_cpu_ret(CpuCall *c, int i) { return c->f->rets.rets[i]; }

XLA_FFI_Error *hlt_cpu_fits(CpuCall *c, int64_t n) {
  if (n > INT32_MAX)
    return hlt_cpu_fail(c, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                        "dimension %lld exceeds LAPACK's 32-bit integers", (long long)n);
  return NULL;
}

XLA_FFI_Error *hlt_cpu_matrix(CpuCall *c, const XLA_FFI_Buffer *b, const char *what,
                              int64_t *rows, int64_t *cols) {
  if (b->dtype != c->t->dtype || b->rank < 2 || b->rank > CPU_MAX_RANK) {
    char got[256];
    hlt_cpu_shape_text(b->dtype, b->rank, b->dims, got, sizeof got);
    return hlt_cpu_fail(c, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                        "%s must be a matrix or batch of matrices (rank >= 2) of %s, got %s", what,
                        dtype_name(c->t->dtype), got);
  }
  c->nbatch = (int)b->rank - 2;
  c->batch = 1;
  for (int i = 0; i < c->nbatch; i++) {
    c->bdims[i] = b->dims[i];
    c->batch *= b->dims[i];
  }
  *rows = b->dims[b->rank - 2];
  *cols = b->dims[b->rank - 1];
  CPU_TRY(hlt_cpu_fits(c, *rows));
  return hlt_cpu_fits(c, *cols);
}

XLA_FFI_Error *hlt_cpu_shape(CpuCall *c, const XLA_FFI_Buffer *b, const char *what,
                             XLA_FFI_DataType dt, int ntrail, int64_t d0, int64_t d1) {
  int64_t want[CPU_MAX_RANK + 2];
  int rank = c->nbatch + ntrail;
  memcpy(want, c->bdims, (size_t)c->nbatch * sizeof *want);
  if (ntrail > 0) want[c->nbatch] = d0;
  if (ntrail > 1) want[c->nbatch + 1] = d1;
  bool same = b->dtype == dt && b->rank == rank;
  for (int i = 0; same && i < rank; i++) same = b->dims[i] == want[i];
  if (same) return NULL;
  char w[256], got[256];
  hlt_cpu_shape_text(dt, rank, want, w, sizeof w);
  hlt_cpu_shape_text(b->dtype, b->rank, b->dims, got, sizeof got);
  return hlt_cpu_fail(c, XLA_FFI_Error_Code_INVALID_ARGUMENT, "%s must be %s, got %s", what, w,
                      got);
}

/* MLIR's name of a scalar attribute's type, as backend_config spells it. */
static const char *mlir_type_name(XLA_FFI_DataType t) {
  switch (t) {
  case XLA_FFI_DataType_PRED: return "i1";
  case XLA_FFI_DataType_S8: return "i8";
  case XLA_FFI_DataType_S16: return "i16";
  case XLA_FFI_DataType_S32: return "i32";
  case XLA_FFI_DataType_S64: return "i64";
  case XLA_FFI_DataType_U8: return "ui8";
  case XLA_FFI_DataType_U16: return "ui16";
  case XLA_FFI_DataType_U32: return "ui32";
  case XLA_FFI_DataType_U64: return "ui64";
  default: return dtype_name(t);
  }
}

/* The scalar attribute `name`, or an error naming what is wrong. */
static XLA_FFI_Error *scalar_attr(CpuCall *c, const char *name, XLA_FFI_DataType dt,
                                  const char *mlir_type, XLA_FFI_Scalar **out) {
  int64_t i = hlorun_ffi_attr_index(&c->f->attrs, name);
  if (i < 0)
    return hlt_cpu_fail(c, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                        "missing attribute '%s' (a %s scalar in backend_config)", name,
                        mlir_type);
  XLA_FFI_Scalar *s = c->f->attrs.attrs[i];
  if (c->f->attrs.types[i] != XLA_FFI_AttrType_SCALAR || s->dtype != dt)
    return hlt_cpu_fail(c, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                        "attribute '%s' must be a %s scalar (jaxlib's encoding), got %s", name,
                        mlir_type,
                        c->f->attrs.types[i] == XLA_FFI_AttrType_SCALAR ? mlir_type_name(s->dtype)
                                                                        : "a non-scalar");
  *out = s;
  return NULL;
}

XLA_FFI_Error *hlt_cpu_char_attr(CpuCall *c, const char *name, const char *allowed, char *out) {
  XLA_FFI_Scalar *s;
  CPU_TRY(scalar_attr(c, name, XLA_FFI_DataType_U8, "ui8", &s));
  unsigned char v = *(const unsigned char *)s->value;
  if (v && strchr(allowed, v)) {
    *out = (char)v;
    return NULL;
  }
  char list[128];
  int k = 0;
  for (const char *a = allowed; *a && k < (int)sizeof list - 16; a++)
    k += snprintf(list + k, sizeof list - (size_t)k, "%s%d ('%c')", a == allowed ? "" : ", ",
                  *a, *a);
  return hlt_cpu_fail(c, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                      "attribute '%s' = %u is not one of jaxlib's values %s", name, v, list);
}

XLA_FFI_Error *hlt_cpu_i32_attr(CpuCall *c, const char *name, int32_t *out) {
  XLA_FFI_Scalar *s;
  CPU_TRY(scalar_attr(c, name, XLA_FFI_DataType_S32, "i32", &s));
  memcpy(out, s->value, sizeof *out);
  return NULL;
}

XLA_FFI_Error *hlt_cpu_bool_attr(CpuCall *c, const char *name, bool *out) {
  XLA_FFI_Scalar *s;
  CPU_TRY(scalar_attr(c, name, XLA_FFI_DataType_PRED, "i1 (true/false)", &s));
  *out = *(const unsigned char *)s->value != 0;
  return NULL;
}

void *hlt_cpu_alloc(CpuCall *c, size_t bytes, XLA_FFI_Error **err) {
  /* 64 bytes of slack: OpenBLAS's vector kernels (cgemv_n_HASWELL under
   * cgesdd, seen by valgrind) read a few bytes past the last element of a
   * matrix; XLA's padded buffers absorb that under jaxlib. */
  void *p = c->nscratch < CPU_MAX_SCRATCH ? calloc(1, bytes + 64) : NULL;
  if (!p) {
    *err = hlt_cpu_fail(c, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED,
                        "out of memory (%zu bytes of LAPACK workspace)", bytes);
    return NULL;
  }
  c->scratch[c->nscratch++] = p;
  return p;
}

int hlt_cpu_lwork(const CpuType *t, const void *work0) {
  double v = t->real == XLA_FFI_DataType_F32 ? *(const float *)work0 : *(const double *)work0;
  return v >= 1 && v < (double)INT32_MAX ? (int)v : 1;
}

/* Copy a rows x cols matrix from src (element (i,j) at si*i + sj*j) to dst
 * (at di*i + dj*j), elements of esize bytes. */
static void copy_strided(size_t esize, char *dst, int64_t di, int64_t dj, const char *src,
                         int64_t si, int64_t sj, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++)
      memcpy(dst + (size_t)(di * i + dj * j) * esize, src + (size_t)(si * i + sj * j) * esize,
             esize);
}

void hlt_cpu_to_cm(size_t esize, void *dst, const void *src, int64_t rows, int64_t cols) {
  copy_strided(esize, dst, 1, rows, src, cols, 1, rows, cols);
}

void hlt_cpu_from_cm(size_t esize, void *dst, const void *src, int64_t rows, int64_t cols) {
  copy_strided(esize, dst, cols, 1, src, 1, rows, rows, cols);
}

void hlt_cpu_load(const CpuCall *c, const XLA_FFI_Buffer *b, int64_t k, void *cm, int64_t rows,
                  int64_t cols) {
  hlt_cpu_to_cm(c->t->size, cm, hlt_cpu_at(b, c->t->size, k, rows * cols), rows, cols);
}

void hlt_cpu_store(const CpuCall *c, XLA_FFI_Buffer *b, int64_t k, const void *cm,
                   int64_t rows, int64_t cols) {
  hlt_cpu_from_cm(c->t->size, hlt_cpu_at(b, c->t->size, k, rows * cols), cm, rows, cols);
}
