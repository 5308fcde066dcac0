/* mxgemm.c: __cublas$lt$matmul$mx (hipBLASLt's block-scaled MX gemm) as
 * standard HLO.
 *
 * XLA's hipBLASLt autotuner backend (xla/backends/gpu/autotuner/
 * hipblaslt.cc, ApplyConfig) replaces a __triton_gemm fusion holding a
 * scaled-dot by
 *   (out, s8 workspace) custom-call(lhs, rhs, lhs_scale, rhs_scale)
 * with the scaled-dot's dot_dimension_numbers, alpha 1, beta 0 and
 * scale_mode 2; ThunkEmitter::EmitCublasLtMatmulThunkMx reads exactly these
 * four operands. mx_scaled_dot_execution_test.cc checks the call against
 * the scaled-dot run through XLA's reference path, so the call computes the
 * scaled-dot: its equivalent module is that scaled-dot (f32 result), then
 * alpha, rounded once to the result type, so the arithmetic is the
 * scaled-dot kernel's (interp/kernels/scaled_dot.c). XLA only emits it for
 * f8e4m3fn/f8e5m2/f4e2m1fn operands with f8e8m0fnu scales in blocks of 32
 * along K and an f32/f16/bf16 result (IsValidMxScaledDot).
 * Not here: __cudnn$blockScaledDot (cuDNN's swizzled scales, blockscaled.c). */
#include "targets/gpu/gpu.h"
#include <stdlib.h>
#include <string.h>

/* Operand i as the parameter it is, in its own type. */
static int raw_operand(GpuMod *m, const GpuCall *c, int i) {
  const GpuLeaf *l = &c->ops[i];
  int v = hlt_gpu_emit(m, l->dtype, l->dims, l->rank, "parameter(");
  hlc_text_printf(&m->t, "%d)\n", i);
  return v;
}

char *hlt_gpu_build_mx_gemm(GpuCall *c) {
  json_t *g = hlt_gpu_config_section(c, "gemm_backend_config", "dot_dimension_numbers");
  if (!g) return NULL;
  double alpha, alpha_imag, beta;
  int64_t scale_mode;
  GpuDnums d;
  if (c->nops != 4 || c->nres < 1 || c->nres > 2) {
    hlt_gpu_fail(c,
                 "has %d operands and %d results; __cublas$lt$matmul$mx takes (lhs, rhs, "
                 "lhs_scale, rhs_scale) and gives (out[, s8 workspace])",
                 c->nops, c->nres);
    return NULL;
  }
  if (hlt_gpu_json_double_req(c, g, "alpha_real", "gemm_backend_config.alpha_real", &alpha) ||
      hlt_gpu_json_double(c, g, "alpha_imag", "gemm_backend_config.alpha_imag", 0, &alpha_imag) ||
      hlt_gpu_json_double(c, g, "beta", "gemm_backend_config.beta", 0, &beta) ||
      hlt_gpu_json_int(c, g, "scale_mode", "gemm_backend_config.scale_mode", 0, &scale_mode) ||
      hlt_gpu_gemm_dnums(c, g, &d))
    return NULL;
  if (scale_mode != 2) {
    hlt_gpu_fail(c,
                 "backend_config field gemm_backend_config.scale_mode is %lld: an MX gemm is "
                 "block-scaled (expected 2)",
                 (long long)scale_mode);
    return NULL;
  }
  /* The thunk passes the output as C: a nonzero beta would read it. */
  if (beta != 0 || alpha_imag != 0) {
    hlt_gpu_fail(c,
                 "backend_config field gemm_backend_config.%s is %g: an MX gemm has no C operand "
                 "and a real alpha (expected 0)",
                 beta != 0 ? "beta" : "alpha_imag", beta != 0 ? beta : alpha_imag);
    return NULL;
  }
  json_t *epi = json_object_get(g, "epilogue");
  if (epi && !(json_is_string(epi) && !strcmp(json_string_value(epi), "DEFAULT")) &&
      !(json_is_integer(epi) && json_integer_value(epi) == 0)) {
    hlt_gpu_fail(c,
                 "backend_config field gemm_backend_config.epilogue: an MX gemm takes DEFAULT "
                 "(XLA never fuses one into it, so hipBLASLt's MX epilogues are not established)");
    return NULL;
  }
  for (int i = 0; i < 2; i++) {
    const GpuLeaf *x = &c->ops[i], *s = &c->ops[2 + i];
    bool ok = s->rank == x->rank && hlc_dtype_is_float(s->dtype) && hlc_dtype_is_float(x->dtype);
    for (int k = 0; ok && k < x->rank; k++)
      ok = s->dims[k] > 0 && x->dims[k] % s->dims[k] == 0;
    if (!ok) {
      HlcText a = {0}, b = {0};
      hlt_gpu_text_shape(&a, x->dtype, x->dims, x->rank);
      hlt_gpu_text_shape(&b, s->dtype, s->dims, s->rank);
      hlt_gpu_fail(c,
                   "operand %d (%s scale) is %s for %s %s: a scale must be a float of the "
                   "operand's rank whose every dimension divides the operand's",
                   2 + i, i ? "rhs" : "lhs", b.p ? b.p : "?", i ? "rhs" : "lhs", a.p ? a.p : "?");
      free(a.p);
      free(b.p);
      return NULL;
    }
  }
  const GpuLeaf *out = &c->res[0];
  GpuMod m = {0};
  m.ct = HLO_F32;
  m.rank = hlt_gpu_gemm_dot_dims(c, &d, m.dims);
  bool ok = out->rank == m.rank && hlc_dtype_is_float(out->dtype);
  for (int k = 0; ok && k < m.rank; k++) ok = out->dims[k] == m.dims[k];
  if (!ok) {
    HlcText a = {0}, b = {0};
    hlt_gpu_text_shape(&a, out->dtype, m.dims, m.rank);
    hlt_gpu_text_shape(&b, out->dtype, out->dims, out->rank);
    hlt_gpu_fail(c,
                 "backend_config field gemm_backend_config.dot_dimension_numbers gives a result "
                 "of shape %s, but the instruction's result is %s",
                 a.p ? a.p : "?", b.p ? b.p : "?");
    free(a.p);
    free(b.p);
    return NULL;
  }
  hlc_text_printf(&m.t, "HloModule gpu_equivalent\n\nENTRY e {\n");
  int va = raw_operand(&m, c, 0), vb = raw_operand(&m, c, 1), vs = raw_operand(&m, c, 2),
      vt = raw_operand(&m, c, 3);
  int t = hlt_gpu_emit(&m, m.ct, m.dims, m.rank, "scaled-dot(");
  hlc_text_printf(&m.t, "v%d, v%d, v%d, v%d)", va, vb, vs, vt);
  if (d.nlb) {
    hlc_text_printf(&m.t, ", lhs_batch_dims=");
    hlt_gpu_text_list(&m.t, d.lb, d.nlb);
  }
  if (d.nlc) {
    hlc_text_printf(&m.t, ", lhs_contracting_dims=");
    hlt_gpu_text_list(&m.t, d.lc, d.nlc);
  }
  if (d.nrb) {
    hlc_text_printf(&m.t, ", rhs_batch_dims=");
    hlt_gpu_text_list(&m.t, d.rb, d.nrb);
  }
  if (d.nrc) {
    hlc_text_printf(&m.t, ", rhs_contracting_dims=");
    hlt_gpu_text_list(&m.t, d.rc, d.nrc);
  }
  hlc_text_printf(&m.t, "\n");
  if (alpha != 1) t = hlt_gpu_binary(&m, "multiply", t, hlt_gpu_splat(&m, alpha));
  if (hlt_gpu_finish(&m, c->res, &t, 1)) {
    free(m.t.p);
    hlt_gpu_fail(c, "out of memory");
    return NULL;
  }
  return m.t.p;
}
