/* sparse.c: jaxlib's cpu_csr_sparse_dense_ffi (jax.experimental.sparse's
 * BCSR dot_general on the CPU: bcsr.py _bcsr_dot_general_cpu_lowering).
 *
 * (data[nnz], indptr[rows + 1], indices[nnz], rhs[K] or [K, N]) -> out[rows]
 * or [rows, N]: a CSR matrix of `rows` rows and K columns times a dense
 * one. jaxlib/cpu/sparse_kernels.cc (jax-ml/jax @ cec06d116c05) maps the
 * buffers as an Eigen row-major SparseMatrix and computes lhs * rhs, which
 * Eigen does row by row (sparse_time_dense_product, RowMajor): for each
 * result element a sum starting at 0 over the row's stored entries in
 * storage order, tmp += data[p] * rhs[indices[p], j], then out = 0 + 1 *
 * tmp; hlorun does the same, in that order (integers wrap). Element types
 * s32, s64, f32, f64, c64, c128 (data, rhs and out the same); indptr and
 * indices s32 or s64 (the same). Indices outside the matrix, a decreasing
 * indptr or mismatched lengths are an error naming the operand (Eigen
 * would read outside the buffers). */
#include "targets/cpu/cpu.h"
#include <complex.h>
#include <stdio.h>
#include <string.h>

/* Index p of an s32 or s64 index buffer. */
static int64_t at(const XLA_FFI_Buffer *b, int64_t p) {
  return b->dtype == XLA_FFI_DataType_S32 ? ((const int32_t *)b->data)[p]
                                          : ((const int64_t *)b->data)[p];
}

#define CSR(NAME, T, ZERO_PLUS_ONE_TIMES)                                                       \
  static void NAME(int64_t rows, int64_t n, const T *data, const XLA_FFI_Buffer *indptr,        \
                   const XLA_FFI_Buffer *indices, const T *rhs, T *out) {                       \
    for (int64_t r = 0; r < rows; r++)                                                          \
      for (int64_t j = 0; j < n; j++) {                                                         \
        T tmp = 0;                                                                              \
        for (int64_t p = at(indptr, r); p < at(indptr, r + 1); p++)                             \
          tmp += data[p] * rhs[at(indices, p) * n + j];                                         \
        out[r * n + j] = ZERO_PLUS_ONE_TIMES(tmp);                                              \
      }                                                                                         \
  }
/* out = 0 + alpha * tmp with Eigen's alpha = Scalar(1): for complex types
 * (1 + 0i) * tmp, whose zero parts can flip the sign of a zero. */
#define FLOAT_RES(t) (0 + (t))
#define INT_RES(t) (t)
static float complex cres(float complex t) {
  float a = crealf(t), b = cimagf(t);
  return CMPLXF(0 + (1 * a - 0 * b), 0 + (1 * b + 0 * a));
}
static double complex zres(double complex t) {
  double a = creal(t), b = cimag(t);
  return CMPLX(0 + (1 * a - 0 * b), 0 + (1 * b + 0 * a));
}
CSR(csr_f, float, FLOAT_RES)
CSR(csr_d, double, FLOAT_RES)
CSR(csr_c, float complex, cres)
CSR(csr_z, double complex, zres)
CSR(csr_u32, uint32_t, INT_RES)   /* s32 and s64 in unsigned arithmetic: wrapping */
CSR(csr_u64, uint64_t, INT_RES)

static const char *name_of(XLA_FFI_DataType t) {
  HloDtype d = hlc_dtype_from_xla_code((int)t);
  return d == HLO_DTYPE_INVALID ? "?" : hlc_dtype_name(d);
}

XLA_FFI_Error *hlt_cpu_csr_sparse_dense(CpuCall *c) {
  CPU_TRY(hlt_cpu_arity(c, 4, 4, 1, "(data, indptr, indices, rhs) -> (out)"));
  XLA_FFI_Buffer *data = hlt_cpu_arg(c, 0), *indptr = hlt_cpu_arg(c, 1),
                 *indices = hlt_cpu_arg(c, 2), *rhs = hlt_cpu_arg(c, 3), *out = hlt_cpu_ret(c, 0);
  XLA_FFI_DataType t = data->dtype;
  if (t != XLA_FFI_DataType_S32 && t != XLA_FFI_DataType_S64 && t != XLA_FFI_DataType_F32 &&
      t != XLA_FFI_DataType_F64 && t != XLA_FFI_DataType_C64 && t != XLA_FFI_DataType_C128)
    return hlt_cpu_fail(c, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                        "operand 0 (data) is %s; the kernel takes s32, s64, f32, f64, c64 or c128",
                        name_of(t));
  if (rhs->dtype != t || out->dtype != t)
    return hlt_cpu_fail(c, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                        "data, rhs and out must have one element type; got %s, %s and %s",
                        name_of(t), name_of(rhs->dtype), name_of(out->dtype));
  if ((indptr->dtype != XLA_FFI_DataType_S32 && indptr->dtype != XLA_FFI_DataType_S64) ||
      indices->dtype != indptr->dtype)
    return hlt_cpu_fail(c, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                        "operands 1 (indptr) and 2 (indices) must both be s32 or both s64; got "
                        "%s and %s", name_of(indptr->dtype), name_of(indices->dtype));
  int64_t nnz = hlorun_ffi_elements(data);
  if (data->rank != 1 || indices->rank != 1 || indptr->rank != 1 || indices->dims[0] != nnz)
    return hlt_cpu_fail(c, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                        "data, indptr and indices must be vectors, data and indices of one "
                        "length; got ranks %lld, %lld, %lld and lengths %lld, %lld",
                        (long long)data->rank, (long long)indptr->rank, (long long)indices->rank,
                        (long long)nnz, (long long)hlorun_ffi_elements(indices));
  if ((rhs->rank != 1 && rhs->rank != 2) || out->rank != rhs->rank)
    return hlt_cpu_fail(c, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                        "rhs must be a vector or a matrix and out of its rank; got ranks %lld and "
                        "%lld", (long long)rhs->rank, (long long)out->rank);
  int64_t rows = out->dims[0], k = rhs->dims[0], n = rhs->rank == 2 ? rhs->dims[1] : 1;
  if (rhs->rank == 2 && out->dims[1] != n)
    return hlt_cpu_fail(c, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                        "out has %lld columns but rhs has %lld", (long long)out->dims[1],
                        (long long)n);
  if (indptr->dims[0] != rows + 1)
    return hlt_cpu_fail(c, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                        "operand 1 (indptr) has %lld entries; out's %lld rows need %lld",
                        (long long)indptr->dims[0], (long long)rows, (long long)(rows + 1));
  for (int64_t r = 0; r <= rows; r++) {
    int64_t p = at(indptr, r);
    if (p < 0 || p > nnz || (r > 0 && p < at(indptr, r - 1)))
      return hlt_cpu_fail(c, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                          "operand 1 (indptr) entry %lld is %lld: entries must rise from 0 to at "
                          "most nnz = %lld", (long long)r, (long long)p, (long long)nnz);
  }
  for (int64_t p = 0; p < at(indptr, rows); p++)
    if (at(indices, p) < 0 || at(indices, p) >= k)
      return hlt_cpu_fail(c, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                          "operand 2 (indices) entry %lld is column %lld, outside the %lld "
                          "columns (rhs's rows)", (long long)p, (long long)at(indices, p),
                          (long long)k);
  switch (t) {
  case XLA_FFI_DataType_F32: csr_f(rows, n, data->data, indptr, indices, rhs->data, out->data); break;
  case XLA_FFI_DataType_F64: csr_d(rows, n, data->data, indptr, indices, rhs->data, out->data); break;
  case XLA_FFI_DataType_C64: csr_c(rows, n, data->data, indptr, indices, rhs->data, out->data); break;
  case XLA_FFI_DataType_C128: csr_z(rows, n, data->data, indptr, indices, rhs->data, out->data); break;
  case XLA_FFI_DataType_S32: csr_u32(rows, n, data->data, indptr, indices, rhs->data, out->data); break;
  default: csr_u64(rows, n, data->data, indptr, indices, rhs->data, out->data); break;
  }
  return NULL;
}
