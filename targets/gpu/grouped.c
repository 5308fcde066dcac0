/* grouped.c: __cublas$lt$groupedMatmul as standard HLO.
 *
 * XLA's grouped-GEMM rewriter (the ROCm/hipBLASLt route that keeps the
 * cuBLASLt name) turns a ragged-dot into this call: operands (lhs, rhs,
 * group_sizes), results (out, workspace); backend_config
 * grouped_gemm_backend_config = {gemm_backend_config: GemmBackendConfig,
 * ragged_dot_dimension_numbers: {dot_dimension_numbers,
 * lhs_ragged_dimensions, rhs_group_dimensions}} (XLA's
 * grouped_gemm_rewriter tests). The value is
 *   out = alpha_real * ragged-dot(lhs, rhs, group_sizes; ragged dnums)
 * with HLO's ragged-dot semantics (ragged non-contracting, contracting or
 * batch dimension, as lhs_ragged_dimensions says). Computed in f32 (f64 for
 * f64 operands) and rounded once. beta != 0 (there is no C operand),
 * epilogues, alpha_imag and precision algorithms are refused with the field.
 * Not here: the plain gemms (gemm.c). */
#include "targets/gpu/gpu.h"
#include <stdlib.h>
#include <string.h>

char *hlt_gpu_build_grouped(GpuCall *c) {
  json_t *g =
      hlt_gpu_config_section(c, "grouped_gemm_backend_config", "ragged_dot_dimension_numbers");
  if (!g) return NULL;
  json_t *gb = json_object_get(g, "gemm_backend_config");
  json_t *rd = json_object_get(g, "ragged_dot_dimension_numbers");
  if (!json_is_object(gb)) {
    hlt_gpu_fail(
        c,
        "backend_config: missing required field grouped_gemm_backend_config.gemm_backend_config");
    return NULL;
  }
  if (!json_is_object(rd)) {
    hlt_gpu_fail(c,
                 "backend_config: missing required field "
                 "grouped_gemm_backend_config.ragged_dot_dimension_numbers");
    return NULL;
  }
  json_t *dn = json_object_get(rd, "dot_dimension_numbers");
  if (!json_is_object(dn)) {
    hlt_gpu_fail(c,
                 "backend_config: missing required field grouped_gemm_backend_config."
                 "ragged_dot_dimension_numbers.dot_dimension_numbers");
    return NULL;
  }
  double alpha, alpha_imag, beta;
  static const char *const epi[1] = {"DEFAULT"};
  int e;
  int64_t lb[GPU_MAX_RANK], rb[GPU_MAX_RANK], lc[GPU_MAX_RANK], rc[GPU_MAX_RANK],
      lr[GPU_MAX_RANK], rg[GPU_MAX_RANK];
  int nlb, nrb, nlc, nrc, nlr, nrg;
  const char *P = "grouped_gemm_backend_config.ragged_dot_dimension_numbers";
  char p[6][200];
  static const char *const keys[4] = {"lhs_batch_dimensions", "rhs_batch_dimensions",
                                      "lhs_contracting_dimensions", "rhs_contracting_dimensions"};
  for (int i = 0; i < 4; i++) snprintf(p[i], sizeof p[i], "%s.dot_dimension_numbers.%s", P, keys[i]);
  snprintf(p[4], sizeof p[4], "%s.lhs_ragged_dimensions", P);
  snprintf(p[5], sizeof p[5], "%s.rhs_group_dimensions", P);
  if (hlt_gpu_json_double_req(c, gb, "alpha_real",
                              "grouped_gemm_backend_config.gemm_backend_config.alpha_real",
                              &alpha) ||
      hlt_gpu_json_double(c, gb, "alpha_imag",
                          "grouped_gemm_backend_config.gemm_backend_config.alpha_imag", 0,
                          &alpha_imag) ||
      hlt_gpu_json_double(c, gb, "beta", "grouped_gemm_backend_config.gemm_backend_config.beta", 0,
                          &beta) ||
      hlt_gpu_json_enum(c, gb, "epilogue",
                        "grouped_gemm_backend_config.gemm_backend_config.epilogue", epi, 1, 0,
                        &e) ||
      hlt_gpu_json_ints(c, dn, keys[0], p[0], lb, GPU_MAX_RANK, &nlb) ||
      hlt_gpu_json_ints(c, dn, keys[1], p[1], rb, GPU_MAX_RANK, &nrb) ||
      hlt_gpu_json_ints(c, dn, keys[2], p[2], lc, GPU_MAX_RANK, &nlc) ||
      hlt_gpu_json_ints(c, dn, keys[3], p[3], rc, GPU_MAX_RANK, &nrc) ||
      hlt_gpu_json_ints(c, rd, "lhs_ragged_dimensions", p[4], lr, GPU_MAX_RANK, &nlr) ||
      hlt_gpu_json_ints(c, rd, "rhs_group_dimensions", p[5], rg, GPU_MAX_RANK, &nrg))
    return NULL;
  if (beta != 0 || alpha_imag != 0) {
    hlt_gpu_fail(c,
                 "backend_config field grouped_gemm_backend_config.gemm_backend_config.%s is %g: "
                 "a grouped matmul has no C operand and no complex alpha (expected 0)",
                 beta != 0 ? "beta" : "alpha_imag", beta != 0 ? beta : alpha_imag);
    return NULL;
  }
  json_t *pc = json_object_get(gb, "precision_config");
  json_t *alg = pc ? json_object_get(pc, "algorithm") : NULL;
  if (alg && !(json_is_string(alg) && !strcmp(json_string_value(alg), "ALG_UNSET")) &&
      !(json_is_integer(alg) && json_integer_value(alg) == 0)) {
    hlt_gpu_fail(c,
                 "backend_config field grouped_gemm_backend_config.gemm_backend_config."
                 "precision_config.algorithm: only ALG_UNSET is supported for a grouped matmul");
    return NULL;
  }
  if (c->nops != 3 || c->nres < 1 || c->nres > 2) {
    hlt_gpu_fail(c,
                 "has %d operands and %d results; __cublas$lt$groupedMatmul takes (lhs, rhs, "
                 "group_sizes) and gives (out, workspace)",
                 c->nops, c->nres);
    return NULL;
  }
  const GpuLeaf *a = &c->ops[0], *b = &c->ops[1], *gs = &c->ops[2], *r = &c->res[0];
  if (!hlc_dtype_is_float(a->dtype) || !hlc_dtype_is_float(b->dtype) ||
      !hlc_dtype_is_float(r->dtype)) {
    hlt_gpu_fail(c,
                 "operands %s, %s and result %s: only floating-point grouped matmuls are supported",
                 hlc_dtype_name(a->dtype), hlc_dtype_name(b->dtype), hlc_dtype_name(r->dtype));
    return NULL;
  }
  if (gs->dtype != HLO_S32 && gs->dtype != HLO_S64) {
    hlt_gpu_fail(c, "operand 2 (group_sizes) is %s; it must be s32 or s64",
                 hlc_dtype_name(gs->dtype));
    return NULL;
  }
  if (nlr != 1 || lr[0] < 0 || lr[0] >= a->rank) {
    hlt_gpu_fail(c, "backend_config field %s: expected one dimension of lhs (rank %d)", p[4],
                 a->rank);
    return NULL;
  }
  if (nrg > 1 || (nrg == 1 && (rg[0] < 0 || rg[0] >= b->rank))) {
    hlt_gpu_fail(c, "backend_config field %s: expected at most one dimension of rhs (rank %d)",
                 p[5], b->rank);
    return NULL;
  }
  for (int i = 0; i < nlb + nlc; i++) {
    int64_t d = i < nlb ? lb[i] : lc[i - nlb];
    if (d < 0 || d >= a->rank) {
      hlt_gpu_fail(c, "backend_config field %s: dimension %lld is not one of lhs's %d",
                   p[i < nlb ? 0 : 2], (long long)d, a->rank);
      return NULL;
    }
  }
  for (int i = 0; i < nrb + nrc; i++) {
    int64_t d = i < nrb ? rb[i] : rc[i - nrb];
    if (d < 0 || d >= b->rank || (nrg && d == rg[0])) {
      hlt_gpu_fail(c,
                   "backend_config field %s: dimension %lld is not one of rhs's %d non-group ones",
                   p[i < nrb ? 1 : 3], (long long)d, b->rank);
      return NULL;
    }
  }
  GpuMod m = {0};
  m.ct = (a->dtype == HLO_F64 || b->dtype == HLO_F64) ? HLO_F64 : HLO_F32;
  m.rank = r->rank;
  memcpy(m.dims, r->dims, sizeof m.dims);
  hlc_text_printf(&m.t, "HloModule gpu_equivalent\n\nENTRY e {\n");
  int va = hlt_gpu_operand(&m, a, 0, GPU_ROUND_NONE),
      vb = hlt_gpu_operand(&m, b, 1, GPU_ROUND_NONE);
  int vg = hlt_gpu_emit(&m, gs->dtype, gs->dims, gs->rank, "parameter(2)\n");
  int y = hlt_gpu_emit(&m, m.ct, r->dims, r->rank, "ragged-dot(");
  hlc_text_printf(&m.t, "v%d, v%d, v%d)", va, vb, vg);
  if (nlb) {
    hlc_text_printf(&m.t, ", lhs_batch_dims=");
    hlt_gpu_text_list(&m.t, lb, nlb);
  }
  if (nlc) {
    hlc_text_printf(&m.t, ", lhs_contracting_dims=");
    hlt_gpu_text_list(&m.t, lc, nlc);
  }
  if (nrb) {
    hlc_text_printf(&m.t, ", rhs_batch_dims=");
    hlt_gpu_text_list(&m.t, rb, nrb);
  }
  if (nrc) {
    hlc_text_printf(&m.t, ", rhs_contracting_dims=");
    hlt_gpu_text_list(&m.t, rc, nrc);
  }
  hlc_text_printf(&m.t, ", lhs_ragged_dims=");
  hlt_gpu_text_list(&m.t, lr, nlr);
  if (nrg) {
    hlc_text_printf(&m.t, ", rhs_group_dims=");
    hlt_gpu_text_list(&m.t, rg, nrg);
  }
  hlc_text_printf(&m.t, "\n");
  if (alpha != 1) y = hlt_gpu_binary(&m, "multiply", y, hlt_gpu_splat(&m, alpha));
  if (hlt_gpu_finish(&m, c->res, &y, 1)) {
    free(m.t.p);
    hlt_gpu_fail(c, "out of memory");
    return NULL;
  }
  return m.t.p;
}
