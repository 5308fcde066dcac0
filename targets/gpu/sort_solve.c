/* sort_solve.c: the GPU targets that are one standard HLO op each.
 *   __cublas$triangularSolve: (a, b) -> (x, s8[temp]); the config is a bare
 *     TriangularSolveOptions {left_side, lower, unit_diagonal, transpose_a}:
 *     exactly HLO triangular-solve (f32 for bf16/f16 operands).
 *   __gpu$TopK: x[..., n] -> (values[..., k], s32 indices[..., k]), k from
 *     the result: a stable descending sort of (x, iota) sliced to k (XLA's
 *     TopK tests compare with exactly that); floats in the total order, so
 *     NaNs come first and +0 before -0.
 *   xla.gpu.ext.cub_sort_keys / cub_sort_pairs: keys[, values] ->
 *     (keys[, values], u8 scratch), attributes descending (bool) and
 *     batch_size (i64): each of the batch_size rows sorted stably by key in
 *     CUB's radix order (floats: the total order, -NaN < -inf < -0 < +0 <
 *     +inf < +NaN), values following their keys.
 * Not here: the gemm and convolution targets. */
#include "targets/gpu/gpu.h"
#include <stdlib.h>
#include <string.h>

enum { TRANSPOSE_INVALID, NO_TRANSPOSE, TRANSPOSE, ADJOINT, TRANSPOSE_COUNT };
static const char *const transpose_names[TRANSPOSE_COUNT] = {NULL, "NO_TRANSPOSE", "TRANSPOSE",
                                                             "ADJOINT"};

char *hlt_gpu_build_trsm(GpuCall *c) {
  if (!c->config) {
    hlt_gpu_fail(c, "backend_config: missing (TriangularSolveOptions)");
    return NULL;
  }
  json_t *o = c->config;
  bool left, lower, unit;
  int tr;
  if (hlt_gpu_json_bool(c, o, "left_side", "left_side", false, &left) ||
      hlt_gpu_json_bool(c, o, "lower", "lower", false, &lower) ||
      hlt_gpu_json_bool(c, o, "unit_diagonal", "unit_diagonal", false, &unit))
    return NULL;
  if (!json_object_get(o, "transpose_a")) {
    hlt_gpu_fail(c,
                 "backend_config: missing required field transpose_a (NO_TRANSPOSE, TRANSPOSE "
                 "or ADJOINT)");
    return NULL;
  }
  if (hlt_gpu_json_enum(c, o, "transpose_a", "transpose_a", transpose_names, TRANSPOSE_COUNT,
                        NO_TRANSPOSE, &tr))
    return NULL;
  if (c->nops != 2 || c->nres < 1 || c->nres > 2) {
    hlt_gpu_fail(c, "has %d operands and %d results; it takes (a, b) and gives (x[, s8 temp])",
                 c->nops, c->nres);
    return NULL;
  }
  const GpuLeaf *a = &c->ops[0], *b = &c->ops[1], *x = &c->res[0];
  if (!hlc_dtype_is_float(a->dtype) || a->dtype != b->dtype || x->dtype != b->dtype) {
    hlt_gpu_fail(c, "operands and result must share one real floating type");
    return NULL;
  }
  GpuMod m = {0};
  m.ct = a->dtype == HLO_F64 ? HLO_F64 : HLO_F32;
  m.rank = x->rank;
  memcpy(m.dims, x->dims, sizeof m.dims);
  hlc_text_printf(&m.t, "HloModule gpu_equivalent\n\nENTRY e {\n");
  int va = hlt_gpu_operand(&m, a, 0, GPU_ROUND_NONE),
      vb = hlt_gpu_operand(&m, b, 1, GPU_ROUND_NONE);
  int y = hlt_gpu_emit(&m, m.ct, x->dims, x->rank, "triangular-solve(");
  hlc_text_printf(&m.t, "v%d, v%d), left_side=%s, lower=%s, unit_diagonal=%s, transpose_a=%s\n", va,
               vb, left ? "true" : "false", lower ? "true" : "false", unit ? "true" : "false",
               transpose_names[tr]);
  if (hlt_gpu_finish(&m, c->res, &y, 1)) {
    free(m.t.p);
    hlt_gpu_fail(c, "out of memory");
    return NULL;
  }
  return m.t.p;
}

/* "cmp" comparing the first operand pair of a sort of types[0..n) in the
 * total order, direction dir. */
static void comparator(HlcText *t, const HloDtype *types, int n, const char *dir) {
  hlc_text_printf(t, "cmp {\n");
  for (int i = 0; i < 2 * n; i++)
    hlc_text_printf(t, "  p%d = %s[] parameter(%d)\n", i, hlc_dtype_name(types[i / 2]), i);
  hlc_text_printf(t, "  ROOT c = pred[] compare(p0, p1), direction=%s%s\n}\n\n", dir,
               hlc_dtype_is_float(types[0]) ? ", type=TOTALORDER" : "");
}

/* Sort of values vals[0..n) along the last dimension of dims; returns the
 * sort's number (a tuple when n > 1, whose elements the caller takes). */
static int sort_rows(GpuMod *m, const HloDtype *types, const int *vals, int n,
                     const int64_t *dims, int rank) {
  int v = m->next++;
  hlc_text_printf(&m->t, "  v%d = %s", v, n > 1 ? "(" : "");
  for (int i = 0; i < n; i++) {
    if (i) hlc_text_printf(&m->t, ", ");
    hlt_gpu_text_shape(&m->t, types[i], dims, rank);
  }
  hlc_text_printf(&m->t, "%s sort(", n > 1 ? ")" : "");
  for (int i = 0; i < n; i++) hlc_text_printf(&m->t, "%sv%d", i ? ", " : "", vals[i]);
  hlc_text_printf(&m->t, "), dimensions={%d}, is_stable=true, to_apply=cmp\n", rank - 1);
  return v;
}

static int element(GpuMod *m, int tuple, int i, HloDtype dt, const int64_t *dims, int rank) {
  int v = hlt_gpu_emit(m, dt, dims, rank, "get-tuple-element(");
  hlc_text_printf(&m->t, "v%d), index=%d\n", tuple, i);
  return v;
}

char *hlt_gpu_build_topk(GpuCall *c) {
  if (c->nops != 1 || c->nres < 2 || c->nres > 3) {
    hlt_gpu_fail(c,
                 "has %d operands and %d results; __gpu$TopK takes x and gives (values, "
                 "indices)",
                 c->nops, c->nres);
    return NULL;
  }
  const GpuLeaf *x = &c->ops[0], *v = &c->res[0], *ix = &c->res[1];
  bool ok = x->rank >= 1 && v->rank == x->rank && ix->rank == x->rank && v->dtype == x->dtype &&
            ix->dtype == HLO_S32;
  for (int i = 0; ok && i < x->rank; i++)
    ok = v->dims[i] == ix->dims[i] &&
         (i == x->rank - 1 ? v->dims[i] <= x->dims[i] : v->dims[i] == x->dims[i]);
  if (!ok) {
    hlt_gpu_fail(c,
                 "results must be (%s[..., k], s32[..., k]) for x %s[...] with k at most the "
                 "last dimension",
                 hlc_dtype_name(x->dtype), hlc_dtype_name(x->dtype));
    return NULL;
  }
  GpuMod m = {0};
  m.ct = x->dtype;
  HloDtype types[2] = {x->dtype, HLO_S32};
  hlc_text_printf(&m.t, "HloModule gpu_equivalent\n\n");
  comparator(&m.t, types, 2, "GT");
  hlc_text_printf(&m.t, "ENTRY e {\n");
  int vals[2];
  vals[0] = hlt_gpu_emit(&m, x->dtype, x->dims, x->rank, "parameter(0)\n");
  vals[1] = hlt_gpu_emit(&m, HLO_S32, x->dims, x->rank, "iota(), ");
  hlc_text_printf(&m.t, "iota_dimension=%d\n", x->rank - 1);
  int s = sort_rows(&m, types, vals, 2, x->dims, x->rank);
  int out[2];
  for (int i = 0; i < 2; i++) {
    int e = element(&m, s, i, types[i], x->dims, x->rank);
    out[i] = hlt_gpu_emit(&m, types[i], v->dims, v->rank, "slice(");
    hlc_text_printf(&m.t, "v%d), slice={", e);
    for (int d = 0; d < x->rank; d++)
      hlc_text_printf(&m.t, "%s[0:%lld]", d ? ", " : "", (long long)v->dims[d]);
    hlc_text_printf(&m.t, "}\n");
  }
  if (hlt_gpu_finish(&m, c->res, out, 2)) {
    free(m.t.p);
    hlt_gpu_fail(c, "out of memory");
    return NULL;
  }
  return m.t.p;
}

char *hlt_gpu_build_cub_sort(GpuCall *c) {
  bool pairs = strstr(c->target, "pairs") != NULL;
  int n = pairs ? 2 : 1;
  if (c->nops != n || c->nres != n + 1) {
    hlt_gpu_fail(c, "has %d operands and %d results; %s takes %s and gives (%s, u8 scratch)",
                 c->nops, c->nres, c->target, pairs ? "(keys, values)" : "keys",
                 pairs ? "keys, values" : "keys");
    return NULL;
  }
  XLA_FFI_Scalar *desc = hlorun_ffi_attr(c->attrs, "descending", XLA_FFI_AttrType_SCALAR);
  XLA_FFI_Scalar *bs = hlorun_ffi_attr(c->attrs, "batch_size", XLA_FFI_AttrType_SCALAR);
  if (!desc || desc->dtype != XLA_FFI_DataType_PRED || !bs || bs->dtype != XLA_FFI_DataType_S64) {
    hlt_gpu_fail(c,
                 "backend_config must give descending (a bool: true or false) and batch_size "
                 "(an i64: N : i64)");
    return NULL;
  }
  bool descending = *(uint8_t *)desc->value != 0;
  int64_t batch = *(int64_t *)bs->value;
  const GpuLeaf *k = &c->ops[0];
  int64_t count = 1;
  for (int i = 0; i < k->rank; i++) count *= k->dims[i];
  if (batch < 1 || count % batch) {
    hlt_gpu_fail(c, "backend_config field batch_size=%lld does not divide the %lld keys",
                 (long long)batch, (long long)count);
    return NULL;
  }
  HloDtype types[2] = {k->dtype, pairs ? c->ops[1].dtype : HLO_S32};
  for (int i = 0; i < n; i++) {
    const GpuLeaf *o = &c->ops[i], *r = &c->res[i];
    bool same = o->rank == k->rank && r->rank == k->rank && r->dtype == o->dtype;
    for (int d = 0; same && d < k->rank; d++) same = o->dims[d] == k->dims[d] && r->dims[d] == k->dims[d];
    if (!same) {
      hlt_gpu_fail(c, "operand %d and result %d must have the keys' shape", i, i);
      return NULL;
    }
  }
  int64_t rows[2] = {batch, count / batch};
  GpuMod m = {0};
  m.ct = k->dtype;
  hlc_text_printf(&m.t, "HloModule gpu_equivalent\n\n");
  comparator(&m.t, types, n, descending ? "GT" : "LT");
  hlc_text_printf(&m.t, "ENTRY e {\n");
  int vals[2], out[2];
  for (int i = 0; i < n; i++) {
    int p = hlt_gpu_emit(&m, types[i], k->dims, k->rank, "parameter(");
    hlc_text_printf(&m.t, "%d)\n", i);
    vals[i] = hlt_gpu_emit(&m, types[i], rows, 2, "reshape(");
    hlc_text_printf(&m.t, "v%d)\n", p);
  }
  int s = sort_rows(&m, types, vals, n, rows, 2);
  for (int i = 0; i < n; i++) {
    int e = n > 1 ? element(&m, s, i, types[i], rows, 2) : s;
    out[i] = hlt_gpu_emit(&m, types[i], k->dims, k->rank, "reshape(");
    hlc_text_printf(&m.t, "v%d)\n", e);
  }
  if (hlt_gpu_finish(&m, c->res, out, n)) {
    free(m.t.p);
    hlt_gpu_fail(c, "out of memory");
    return NULL;
  }
  return m.t.p;
}
