/* xla.c: the custom-call targets that XLA's compiler itself puts into
 * modules, as typed FFI handlers against include/hlorun/ffi.h, registered
 * as built-ins of every context (a user binding of the same name replaces
 * them):
 *   Sharding, SPMDFullToShardShape, SPMDShardToFullShape,
 *     xla.sdy.GlobalToLocalShape, xla.sdy.LocalToGlobalShape: identity (the
 *     run path runs all but the first itself, by device:
 *     interp/kernels/manual.c);
 *   MoveToHost, MoveToDevice, PinToDevice, PinToDeviceSram,
 *     annotate_device_placement: memory-space annotations, identity;
 *   xla.sdy.FuncResultSharding, xla.sdy.Sharding, xla.sdy.PropagationBarrier:
 *     the Shardy round trip's notes of shardings and propagation, identity;
 *   xla.sdy.ShardingGroup: a note that returns nothing;
 *   TopK: operand x[..., n] -> (values[..., k], s32 indices[..., k]), the k
 *     largest along the last dimension, k from the result shape; ties keep
 *     the lower index first; floats in the total order -NaN < -inf < ... <
 *     -0 < +0 < ... < inf < NaN (as XLA:CPU's TopK runtime).
 * Built-ins are called through the FFI path whatever the instruction's
 * api_version (XLA treats them as part of the compiler, not as user code).
 * Not here: dispatch and the registry (ffi/). */
#include "targets/targets.h"
#include "common/dtype.h"
#include "hlorun/ffi.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static XLA_FFI_Error *fail(XLA_FFI_CallFrame *f, XLA_FFI_Error_Code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static XLA_FFI_Error *fail(XLA_FFI_CallFrame *f, XLA_FFI_Error_Code code, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return hlorun_ffi_error(f->api, code, msg);
}

static size_t ffi_elem_size(XLA_FFI_DataType t) {
  HloDtype d = hlc_dtype_from_xla_code((int)t);
  return d == HLO_DTYPE_INVALID ? 0 : hlc_dtype_size(d);
}

static void dims_text(const XLA_FFI_Buffer *b, char *buf, size_t n) {
  HloDtype d = hlc_dtype_from_xla_code((int)b->dtype);
  int k = snprintf(buf, n, "%s[", d == HLO_DTYPE_INVALID ? "?" : hlc_dtype_name(d));
  for (int64_t i = 0; i < b->rank && k > 0 && (size_t)k < n; i++)
    k += snprintf(buf + k, n - (size_t)k, "%s%lld", i ? "," : "", (long long)b->dims[i]);
  if (k > 0 && (size_t)k < n) snprintf(buf + k, n - (size_t)k, "]");
}

/* Copy every operand leaf to the result leaf of the same position. */
static XLA_FFI_Error *identity(XLA_FFI_CallFrame *f) {
  if (hlorun_ffi_metadata(f, 0)) return NULL;
  if (f->stage != XLA_FFI_ExecutionStage_EXECUTE) return NULL;
  if (f->args.size != f->rets.size)
    return fail(f, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                "identity annotation: %lld operand buffers but %lld result buffers",
                (long long)f->args.size, (long long)f->rets.size);
  for (int64_t i = 0; i < f->args.size; i++) {
    XLA_FFI_Buffer *a = f->args.args[i], *r = f->rets.rets[i];
    bool same = a->dtype == r->dtype && a->rank == r->rank;
    for (int64_t k = 0; same && k < a->rank; k++) same = a->dims[k] == r->dims[k];
    if (!same) {
      char x[128], y[128];
      dims_text(a, x, sizeof x);
      dims_text(r, y, sizeof y);
      return fail(f, XLA_FFI_Error_Code_UNIMPLEMENTED,
                  "this annotation changes the shape from %s to %s; hlorun runs one device, "
                  "where it must be an identity", x, y);
    }
    if (a->dtype == XLA_FFI_DataType_TOKEN || a->data == r->data) continue;
    size_t bytes = (size_t)hlorun_ffi_elements(a) * ffi_elem_size(a->dtype);
    if (bytes) memcpy(r->data, a->data, bytes);
  }
  return NULL;
}

/* xla.sdy.ShardingGroup: a note for Shardy's propagation that its operands
 * share a sharding; it returns nothing (an empty tuple). */
static XLA_FFI_Error *note_only(XLA_FFI_CallFrame *f) {
  if (hlorun_ffi_metadata(f, 0)) return NULL;
  if (f->stage != XLA_FFI_ExecutionStage_EXECUTE) return NULL;
  if (f->rets.size != 0)
    return fail(f, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                "xla.sdy.ShardingGroup returns nothing, but this one has %lld result buffers",
                (long long)f->rets.size);
  return NULL;
}

/* ---- TopK ---------------------------------------------------------------- */

/* Order-preserving int64 keys per element type (no per-element switch). */
#define FLOAT_KEYS(NAME, T, ST, MASK)                                        \
  static void NAME(const void *src, int64_t n, int64_t *key) {              \
    const T *s = src;                                                       \
    for (int64_t i = 0; i < n; i++) {                                       \
      ST b = (ST)s[i];                                                      \
      key[i] = b < 0 ? (int64_t)(b ^ (ST)MASK) : (int64_t)b;                \
    }                                                                       \
  }
FLOAT_KEYS(keys_f16, uint16_t, int16_t, 0x7fff)
FLOAT_KEYS(keys_f32, uint32_t, int32_t, 0x7fffffff)
FLOAT_KEYS(keys_f64, uint64_t, int64_t, 0x7fffffffffffffffll)
#define INT_KEYS(NAME, T, BIAS)                                              \
  static void NAME(const void *src, int64_t n, int64_t *key) {              \
    const T *s = src;                                                       \
    for (int64_t i = 0; i < n; i++) key[i] = (int64_t)((uint64_t)s[i] ^ (BIAS)); \
  }
INT_KEYS(keys_s8, int8_t, 0)
INT_KEYS(keys_s16, int16_t, 0)
INT_KEYS(keys_s32, int32_t, 0)
INT_KEYS(keys_s64, int64_t, 0)
INT_KEYS(keys_u8, uint8_t, 0)
INT_KEYS(keys_u16, uint16_t, 0)
INT_KEYS(keys_u32, uint32_t, 0)
INT_KEYS(keys_u64, uint64_t, 0x8000000000000000ull)

typedef void KeyFn(const void *, int64_t, int64_t *);
static KeyFn *key_fn(XLA_FFI_DataType t) {
  switch (t) {
  case XLA_FFI_DataType_F16: case XLA_FFI_DataType_BF16: return keys_f16;
  case XLA_FFI_DataType_F32: return keys_f32;
  case XLA_FFI_DataType_F64: return keys_f64;
  case XLA_FFI_DataType_S8: return keys_s8;
  case XLA_FFI_DataType_S16: return keys_s16;
  case XLA_FFI_DataType_S32: return keys_s32;
  case XLA_FFI_DataType_S64: return keys_s64;
  case XLA_FFI_DataType_PRED: case XLA_FFI_DataType_U8: return keys_u8;
  case XLA_FFI_DataType_U16: return keys_u16;
  case XLA_FFI_DataType_U32: return keys_u32;
  case XLA_FFI_DataType_U64: return keys_u64;
  default: return NULL;
  }
}

/* Stable merge sort of idx[0..n) by key descending (ties: original order,
 * which is ascending index). */
static void sort_desc(int32_t *idx, int32_t *tmp, const int64_t *key, int64_t n) {
  for (int64_t w = 1; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      int64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) tmp[k++] = key[idx[j]] > key[idx[i]] ? idx[j++] : idx[i++];
      while (i < mid) tmp[k++] = idx[i++];
      while (j < hi) tmp[k++] = idx[j++];
    }
    memcpy(idx, tmp, (size_t)n * sizeof *idx);
  }
}

/* TopK's working memory while it runs: the keys (int64) and two index
 * arrays (int32) of one row. */
static size_t topk_scratch(int64_t n) {
  return (size_t)(n ? n : 1) * (sizeof(int64_t) + 2 * sizeof(int32_t));
}

static XLA_FFI_Error *topk(XLA_FFI_CallFrame *f) {
  if (hlorun_ffi_metadata(f, 0)) return NULL;
  if (f->stage != XLA_FFI_ExecutionStage_EXECUTE) return NULL;
  if (f->args.size != 1 || f->rets.size != 2)
    return fail(f, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                "TopK takes one operand and returns a (values, indices) tuple; got %lld "
                "operand and %lld result buffers", (long long)f->args.size, (long long)f->rets.size);
  XLA_FFI_Buffer *x = f->args.args[0], *v = f->rets.rets[0], *ix = f->rets.rets[1];
  if (x->rank < 1 || v->rank != x->rank || ix->rank != x->rank)
    return fail(f, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                "TopK: operand and both results must have the same rank >= 1");
  for (int64_t d = 0; d + 1 < x->rank; d++)
    if (v->dims[d] != x->dims[d] || ix->dims[d] != x->dims[d])
      return fail(f, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                  "TopK: results must keep the operand's leading dimensions");
  int64_t n = x->dims[x->rank - 1], k = v->dims[v->rank - 1];
  if (ix->dims[ix->rank - 1] != k || k > n || k < 0)
    return fail(f, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                "TopK: k = %lld must match both results and not exceed %lld", (long long)k,
                (long long)n);
  if (v->dtype != x->dtype || ix->dtype != XLA_FFI_DataType_S32)
    return fail(f, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                "TopK: values must have the operand's type and indices must be s32");
  KeyFn *kf = key_fn(x->dtype);
  if (!kf) {
    char b[64];
    dims_text(x, b, sizeof b);
    return fail(f, XLA_FFI_Error_Code_UNIMPLEMENTED, "TopK of %s is not supported", b);
  }
  if (n > INT32_MAX)
    return fail(f, XLA_FFI_Error_Code_INVALID_ARGUMENT, "TopK: dimension too large for s32 indices");
  int64_t rows = n ? hlorun_ffi_elements(x) / n : 0;
  if (n == 0) rows = hlorun_ffi_elements(v) / (k ? k : 1);
  size_t es = ffi_elem_size(x->dtype);
  /* One block of topk_scratch(n) bytes: the executor counted it against
   * its memory limit (topk_call_scratch) before the call. */
  int64_t *key = malloc(topk_scratch(n));
  if (!key) return fail(f, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "TopK: out of memory");
  int32_t *idx = (int32_t *)(key + (n ? n : 1)), *tmp = idx + (n ? n : 1);
  for (int64_t r = 0; r < rows && k > 0; r++) {
    const char *row = (const char *)x->data + (size_t)(r * n) * es;
    kf(row, n, key);
    for (int64_t i = 0; i < n; i++) idx[i] = (int32_t)i;
    sort_desc(idx, tmp, key, n);
    char *vout = (char *)v->data + (size_t)(r * k) * es;
    int32_t *iout = (int32_t *)ix->data + r * k;
    for (int64_t i = 0; i < k; i++) {
      memcpy(vout + (size_t)i * es, row + (size_t)idx[i] * es, es);
      iout[i] = idx[i];
    }
  }
  free(key);
  return NULL;
}

/* TopK's working memory for one call, counted against the run's memory
 * limit before the call (hlf_builtin_scratch). */
static size_t topk_call_scratch(const HlfBuf *args, int32_t nargs) {
  if (nargs != 1 || args[0].rank < 1) return 0;
  return topk_scratch(args[0].dims[args[0].rank - 1]);
}

static const char *const identity_targets[] = {
  "Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "xla.sdy.GlobalToLocalShape",
  "xla.sdy.LocalToGlobalShape", "MoveToHost", "MoveToDevice",
  "PinToDevice", "PinToDeviceSram", "annotate_device_placement", "xla.sdy.FuncResultSharding",
  "xla.sdy.Sharding", "xla.sdy.PropagationBarrier",
};

int hlt_register_xla(HlfRegistry *r) {
  XLA_FFI_Handler_Bundle id = {NULL, NULL, NULL, identity};
  for (size_t i = 0; i < sizeof identity_targets / sizeof *identity_targets; i++)
    if (hlf_register_builtin(r, identity_targets[i], &id, "built-in") != 0) return -1;
  XLA_FFI_Handler_Bundle note = {NULL, NULL, NULL, note_only};
  if (hlf_register_builtin(r, "xla.sdy.ShardingGroup", &note, "built-in") != 0) return -1;
  XLA_FFI_Handler_Bundle tk = {NULL, NULL, NULL, topk};
  return hlf_register_builtin_scratch(r, "TopK", &tk, "built-in", topk_call_scratch);
}
