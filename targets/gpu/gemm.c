/* gemm.c: __cublas$gemm and __cublas$lt$matmul as standard HLO.
 *
 * GemmBackendConfig (under "gemm_backend_config", or bare in older dumps):
 *   t = alpha * dot(a, b; dot_dimension_numbers) + beta * C + bias
 *   D = act(t); aux = t (the *_AUX epilogues)
 * Operands (a, b, [C when beta != 0], [bias when the epilogue has BIAS]), as
 * XLA's thunk emitter reads them; results (D, [aux], [workspace]). The
 * vector bias runs along D's physically minor dimension (XLA's
 * gemm_rewriter_test, VectorBias with a column-major output). Floats are
 * computed in f32 (f64 for f64) and rounded once to the result types;
 * precision_config.algorithm rounds the operands first (BF16_BF16_F32: to
 * bf16, F16_F16_F32: to f16, TF32_TF32_F32: to 10 mantissa bits). GELU is
 * the tanh form cuBLASLt uses (the pattern XLA's rewriter matches).
 * Integer gemms (s8 x s8 -> s32) take no alpha, beta or epilogue, as XLA's
 * rewriter never makes them; s8 x s8 -> f32 is a float gemm (cuBLAS's
 * kF32 compute type: TYPED_GEMM(F32, S8, S8, F32) in matmul_utils.cc).
 * Complex gemms (c64 and c128, every operand and the result of one type:
 * TYPED_GEMM_COMPLEX in matmul_utils.cc) take a complex alpha
 * (alpha_real + i alpha_imag, what HandleMultiply folds in) and a real beta,
 * no epilogue (gemm_rewriter.cc SupportsEpilogueFusion has no complex type)
 * and no conjugation (XLA only asks cuBLAS for N/T operands); c64 is
 * computed in c64, c128 in c128. A real gemm's alpha_imag must be 0
 * (GemmConfig::For checks it).
 * __cublas$gemm with alpha = beta = 0 is all zeros, NaN operands or not:
 * XLA's RunGemm (matmul_utils.cc) zero-fills instead of calling cuBLAS.
 * The multi-pass algorithms (BF16_BF16_F32_X3/X6/X9) give cuBLAS the plain
 * kF32 compute type with TF32 off (algorithm_util.cc GetBlasComputationType,
 * matmul_utils.cc IsTf32Allowed): an f32 gemm.
 * __cublas$lt$matmul$f8: operands (a, b, [C], a_scale, b_scale, [bias],
 * [d_scale]), f32 scalar scales multiplying the product; results (D,
 * [damax = max |act(t)|, f32[]], workspace); an f8 D is d_scale * act(t)
 * clamped to the type's finite range, then rounded.
 * Not here: the grouped variant. */
#include "targets/gpu/gpu.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { EPI_DEFAULT, EPI_BIAS, EPI_RELU, EPI_BIAS_RELU, EPI_GELU, EPI_GELU_AUX, EPI_BIAS_GELU,
       EPI_BIAS_GELU_AUX, EPI_SILU, EPI_BIAS_SILU, EPI_COUNT };
/* Numbers as in backend_configs.proto (SILU, BIAS_SILU: the newer ones). */
static const char *const epilogue_names[EPI_COUNT] = {
    "DEFAULT", "BIAS", "RELU", "BIAS_RELU", "GELU", "GELU_AUX", "BIAS_GELU", "BIAS_GELU_AUX",
    "SILU", "BIAS_SILU"};

static bool epi_bias(int e) {
  return e == EPI_BIAS || e == EPI_BIAS_RELU || e == EPI_BIAS_GELU || e == EPI_BIAS_GELU_AUX ||
         e == EPI_BIAS_SILU;
}
static bool epi_aux(int e) { return e == EPI_GELU_AUX || e == EPI_BIAS_GELU_AUX; }

/* precision_config.algorithm (xla_data.proto PrecisionConfig.Algorithm). */
enum { ALG_UNSET, ALG_ANY_F8_F8_F32, ALG_ANY_F8_F8_F32_FAST, ALG_F16_F16_F16, ALG_F16_F16_F32,
       ALG_BF16_BF16_BF16, ALG_BF16_BF16_F32, ALG_BF16_BF16_F32_X3, ALG_BF16_BF16_F32_X6,
       ALG_TF32_TF32_F32, ALG_TF32_TF32_F32_X3, ALG_F32_F32_F32, ALG_F64_F64_F64,
       ALG_BF16_BF16_F32_X9, ALG_COUNT };
static const char *const algorithm_names[ALG_COUNT] = {
    "ALG_UNSET", "ALG_DOT_ANY_F8_ANY_F8_F32", "ALG_DOT_ANY_F8_ANY_F8_F32_FAST_ACCUM",
    "ALG_DOT_F16_F16_F16", "ALG_DOT_F16_F16_F32", "ALG_DOT_BF16_BF16_BF16",
    "ALG_DOT_BF16_BF16_F32", "ALG_DOT_BF16_BF16_F32_X3", "ALG_DOT_BF16_BF16_F32_X6",
    "ALG_DOT_TF32_TF32_F32", "ALG_DOT_TF32_TF32_F32_X3", "ALG_DOT_F32_F32_F32",
    "ALG_DOT_F64_F64_F64", "ALG_DOT_BF16_BF16_F32_X9"};


static bool listed(const int64_t *v, int n, int64_t x) {
  for (int i = 0; i < n; i++)
    if (v[i] == x) return true;
  return false;
}

int hlt_gpu_gemm_dnums(GpuCall *c, json_t *g, GpuDnums *d) {
  json_t *o = json_object_get(g, "dot_dimension_numbers");
  if (!json_is_object(o))
    return hlt_gpu_fail(c,
                        "backend_config: missing required field "
                        "gemm_backend_config.dot_dimension_numbers (an object)");
  const char *p = "gemm_backend_config.dot_dimension_numbers.";
  char path[4][128];
  static const char *const keys[4] = {"lhs_batch_dimensions", "rhs_batch_dimensions",
                                      "lhs_contracting_dimensions",
                                      "rhs_contracting_dimensions"};
  int64_t *dst[4] = {d->lb, d->rb, d->lc, d->rc};
  int *cnt[4] = {&d->nlb, &d->nrb, &d->nlc, &d->nrc};
  for (int i = 0; i < 4; i++) {
    snprintf(path[i], sizeof path[i], "%s%s", p, keys[i]);
    if (hlt_gpu_json_ints(c, o, keys[i], path[i], dst[i], GPU_MAX_RANK, cnt[i])) return -1;
  }
  const GpuLeaf *a = &c->ops[0], *b = &c->ops[1];
  if (d->nlb != d->nrb || d->nlc != d->nrc)
    return hlt_gpu_fail(c,
                        "backend_config field %s: batch and contracting lists must pair up "
                        "(lhs %d+%d, rhs %d+%d)",
                        "gemm_backend_config.dot_dimension_numbers", d->nlb, d->nlc, d->nrb,
                        d->nrc);
  for (int i = 0; i < 4; i++) {
    const GpuLeaf *l = i % 2 ? b : a;
    for (int k = 0; k < *cnt[i]; k++)
      if (dst[i][k] < 0 || dst[i][k] >= l->rank)
        return hlt_gpu_fail(c,
                            "backend_config field %s: dimension %lld is out of range for "
                            "operand %d of rank %d",
                            path[i], (long long)dst[i][k], i % 2, l->rank);
  }
  for (int k = 0; k < d->nlb; k++)
    if (a->dims[d->lb[k]] != b->dims[d->rb[k]])
      return hlt_gpu_fail(c, "backend_config field %s: batch dimension sizes differ (%lld vs %lld)",
                          path[0], (long long)a->dims[d->lb[k]], (long long)b->dims[d->rb[k]]);
  for (int k = 0; k < d->nlc; k++)
    if (a->dims[d->lc[k]] != b->dims[d->rc[k]])
      return hlt_gpu_fail(c,
                          "backend_config field %s: contracting dimension sizes differ "
                          "(%lld vs %lld)",
                          path[2], (long long)a->dims[d->lc[k]], (long long)b->dims[d->rc[k]]);
  return 0;
}

int hlt_gpu_gemm_dot_dims(const GpuCall *c, const GpuDnums *d, int64_t *out) {
  int n = 0;
  for (int k = 0; k < d->nlb; k++) out[n++] = c->ops[0].dims[d->lb[k]];
  for (int i = 0; i < c->ops[0].rank; i++)
    if (!listed(d->lb, d->nlb, i) && !listed(d->lc, d->nlc, i)) out[n++] = c->ops[0].dims[i];
  for (int i = 0; i < c->ops[1].rank; i++)
    if (!listed(d->rb, d->nrb, i) && !listed(d->rc, d->nrc, i)) out[n++] = c->ops[1].dims[i];
  return n;
}

static bool same_dims(const GpuLeaf *l, const int64_t *dims, int rank) {
  if (l->rank != rank) return false;
  for (int i = 0; i < rank; i++)
    if (l->dims[i] != dims[i]) return false;
  return true;
}

static const char *dims_str(char *buf, size_t n, HloDtype dt, const int64_t *dims, int rank) {
  HlcText t = {0};
  hlt_gpu_text_shape(&t, dt, dims, rank);
  snprintf(buf, n, "%s", t.p ? t.p : "?");
  free(t.p);
  return buf;
}

/* Scalar operand k broadcast to the result's shape (the f8 scales). */
static int scalar_operand(GpuMod *m, const GpuCall *c, int k) {
  int s = hlt_gpu_operand(m, &c->ops[k], k, GPU_ROUND_NONE);
  int b = hlt_gpu_emit(m, m->ct, m->dims, m->rank, "broadcast(");
  hlc_text_printf(&m->t, "v%d), dimensions={}\n", s);
  return b;
}

/* A complex scalar (re, im) broadcast to the result's shape, in the
 * compute type (c64 or c128). */
static int splat_complex(GpuMod *m, double re, double im) {
  int k = hlt_gpu_emit(m, m->ct, NULL, 0, "constant((");
  hlt_gpu_text_double(&m->t, re);
  hlc_text_printf(&m->t, ", ");
  hlt_gpu_text_double(&m->t, im);
  hlc_text_printf(&m->t, "))\n");
  int v = hlt_gpu_emit(m, m->ct, m->dims, m->rank, "broadcast(");
  hlc_text_printf(&m->t, "v%d), dimensions={}\n", k);
  return v;
}

static int act_gelu_tanh(GpuMod *m, int x) {
  /* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
  int x2 = hlt_gpu_binary(m, "multiply", x, x), x3 = hlt_gpu_binary(m, "multiply", x2, x);
  int inner =
      hlt_gpu_binary(m, "add", x, hlt_gpu_binary(m, "multiply", x3, hlt_gpu_splat(m, 0.044715)));
  int th = hlt_gpu_unary(m, "tanh",
                         hlt_gpu_binary(m, "multiply", inner, hlt_gpu_splat(m, sqrt(2.0 / M_PI))));
  int one_p = hlt_gpu_binary(m, "add", th, hlt_gpu_splat(m, 1.0));
  return hlt_gpu_binary(m, "multiply", hlt_gpu_binary(m, "multiply", x, hlt_gpu_splat(m, 0.5)),
                        one_p);
}

char *hlt_gpu_build_gemm(GpuCall *c) {
  bool lt = strcmp(c->target, "__cublas$gemm") != 0;
  bool f8 = strcmp(c->target, "__cublas$lt$matmul$f8") == 0;
  json_t *g = hlt_gpu_config_section(c, "gemm_backend_config", "dot_dimension_numbers");
  if (!g) return NULL;
  double alpha, alpha_imag, beta;
  int epi, alg;
  int64_t scale_mode;
  bool damax;
  GpuDnums d;
  if (c->nops < 2) {
    hlt_gpu_fail(c, "needs at least 2 operands (a, b), has %d", c->nops);
    return NULL;
  }
  if (hlt_gpu_json_double_req(c, g, "alpha_real", "gemm_backend_config.alpha_real", &alpha) ||
      hlt_gpu_json_double(c, g, "alpha_imag", "gemm_backend_config.alpha_imag", 0, &alpha_imag) ||
      hlt_gpu_json_double(c, g, "beta", "gemm_backend_config.beta", 0, &beta) ||
      hlt_gpu_json_enum(c, g, "epilogue", "gemm_backend_config.epilogue", epilogue_names, EPI_COUNT,
                        EPI_DEFAULT, &epi) ||
      hlt_gpu_json_bool(c, g, "damax_output", "gemm_backend_config.damax_output", false, &damax) ||
      hlt_gpu_json_int(c, g, "scale_mode", "gemm_backend_config.scale_mode", 0, &scale_mode) ||
      hlt_gpu_gemm_dnums(c, g, &d))
    return NULL;
  json_t *pc = json_object_get(g, "precision_config");
  alg = ALG_UNSET;
  if (pc && (!json_is_object(pc) ||
             hlt_gpu_json_enum(c, pc, "algorithm", "gemm_backend_config.precision_config.algorithm",
                               algorithm_names, ALG_COUNT, ALG_UNSET, &alg))) {
    if (!json_is_object(pc))
      hlt_gpu_fail(c,
                   "backend_config field gemm_backend_config.precision_config: expected an object");
    return NULL;
  }
  /* Algorithms whose numerics are not established for a cuBLAS call:
   * F16_F16_F16 accumulates in f16 in an order cuBLAS does not specify;
   * TF32_X3 keeps TF32 allowed, so whether cuBLAS rounds the operands
   * depends on its math mode and the selected algorithm (cuda_blas.cc);
   * BF16_BF16_BF16 has no cuBLAS compute type at all; F8 algorithms belong
   * to __cublas$lt$matmul$f8, and FAST_ACCUM's reduced accumulation is
   * cuBLASLt's own. */
  if (alg == ALG_TF32_TF32_F32_X3 || alg == ALG_F16_F16_F16 || alg == ALG_BF16_BF16_BF16 ||
      (alg == ALG_ANY_F8_F8_F32 && !f8) || alg == ALG_ANY_F8_F8_F32_FAST) {
    hlt_gpu_fail(c,
                 "backend_config field gemm_backend_config.precision_config.algorithm: %s is not "
                 "supported (ALG_UNSET, ALG_DOT_F32_F32_F32, ALG_DOT_F64_F64_F64, "
                 "ALG_DOT_BF16_BF16_F32, ALG_DOT_BF16_BF16_F32_X3/X6/X9, ALG_DOT_F16_F16_F32, "
                 "ALG_DOT_TF32_TF32_F32 are): %s",
                 algorithm_names[alg],
                 alg == ALG_F16_F16_F16 ? "cuBLAS accumulates it in f16 in an unspecified order"
                 : alg == ALG_TF32_TF32_F32_X3
                     ? "whether cuBLAS rounds its operands to TF32 depends "
                       "on its math mode and the selected algorithm"
                 : alg == ALG_BF16_BF16_BF16 ? "XLA has no cuBLAS compute type for it"
                                             : "cuBLASLt's f8 accumulation is its own");
    return NULL;
  }
  bool multipass = alg == ALG_BF16_BF16_F32_X3 || alg == ALG_BF16_BF16_F32_X6 ||
                   alg == ALG_BF16_BF16_F32_X9;
  if (multipass && (c->ops[0].dtype != HLO_F32 || c->ops[1].dtype != HLO_F32)) {
    hlt_gpu_fail(c,
                 "backend_config field gemm_backend_config.precision_config.algorithm: %s takes "
                 "f32 operands (algorithm_util.cc GetAllowedOperandsTypeForAlgorithm), not %s x %s",
                 algorithm_names[alg], hlc_dtype_name(c->ops[0].dtype),
                 hlc_dtype_name(c->ops[1].dtype));
    return NULL;
  }
  if (!lt && epi != EPI_DEFAULT) {
    hlt_gpu_fail(c,
                 "backend_config field gemm_backend_config.epilogue: __cublas$gemm has no "
                 "epilogue (got %s; __cublas$lt$matmul has them)",
                 epilogue_names[epi]);
    return NULL;
  }
  if ((damax || scale_mode) && !f8) {
    hlt_gpu_fail(c,
                 "backend_config field gemm_backend_config.%s: only __cublas$lt$matmul$f8 "
                 "takes scales and an amax output",
                 damax ? "damax_output" : "scale_mode");
    return NULL;
  }
  if (f8 && (scale_mode > 1 || epi_aux(epi))) {
    hlt_gpu_fail(c,
                 "backend_config field gemm_backend_config.%s: __cublas$lt$matmul$f8 takes "
                 "tensor scaling (scale_mode 0 or 1) and no _AUX epilogue",
                 scale_mode > 1 ? "scale_mode" : "epilogue");
    return NULL;
  }
  const GpuLeaf *a = &c->ops[0], *b = &c->ops[1];
  bool has_c = beta != 0, has_bias = epi_bias(epi), aux = epi_aux(epi);
  /* f8: (a, b, [C], a_scale, b_scale, [bias], [d_scale]) (thunk_emitter.cc). */
  int want_ops = 2 + has_c + has_bias + (f8 ? 2 : 0);
  bool has_dscale = f8 && c->nops == want_ops + 1;
  want_ops += has_dscale;
  if (c->nops != want_ops) {
    hlt_gpu_fail(c, "has %d operands; beta=%g and epilogue %s need %d (a, b%s%s%s)", c->nops, beta,
                 epilogue_names[epi], want_ops, has_c ? ", C" : "", f8 ? ", a_scale, b_scale" : "",
                 has_bias ? ", bias" : "");
    return NULL;
  }
  for (int i = 0; f8 && i < 3; i++) {
    int k = i < 2 ? 2 + has_c + i : want_ops - 1;
    if (i == 2 && !has_dscale) break;
    if (c->ops[k].rank != 0 || c->ops[k].dtype != HLO_F32) {
      hlt_gpu_fail(c, "operand %d (%s) must be an f32 scalar", k,
                   i == 0   ? "a_scale"
                   : i == 1 ? "b_scale"
                            : "d_scale");
      return NULL;
    }
  }
  int want_res = 1 + aux + damax;
  if (c->nres < want_res || c->nres > want_res + 1) {
    hlt_gpu_fail(c, "has %d results; epilogue %s gives %d (D%s) and an optional s8 workspace",
                 c->nres, epilogue_names[epi], want_res, aux ? ", aux" : "");
    return NULL;
  }
  if (c->nres == want_res + 1 && c->res[want_res].rank != 1) {
    hlt_gpu_fail(c, "result %d (the workspace) must be 1-D", want_res);
    return NULL;
  }
  const GpuLeaf *D = &c->res[0];
  GpuMod m = {0};
  m.rank = hlt_gpu_gemm_dot_dims(c, &d, m.dims);
  char want[160], got[160];
  if (!same_dims(D, m.dims, m.rank)) {
    hlt_gpu_fail(c,
                 "backend_config field gemm_backend_config.dot_dimension_numbers gives a result "
                 "of shape %s, but the instruction's result is %s",
                 dims_str(want, sizeof want, D->dtype, m.dims, m.rank),
                 dims_str(got, sizeof got, D->dtype, D->dims, D->rank));
    return NULL;
  }
  /* Integer accumulation only for an s32 result; s8 x s8 -> f32 is a
   * float gemm. */
  bool integer = hlc_dtype_is_int(D->dtype);
  bool cplx = hlc_dtype_is_complex(a->dtype) || hlc_dtype_is_complex(b->dtype) ||
              hlc_dtype_is_complex(D->dtype);
  if ((integer || hlc_dtype_is_int(a->dtype) || hlc_dtype_is_int(b->dtype)) &&
      (a->dtype != HLO_S8 || b->dtype != HLO_S8 || (D->dtype != HLO_S32 && D->dtype != HLO_F32))) {
    hlt_gpu_fail(c,
                 "an integer gemm is s8 x s8 -> s32 or f32 (matmul_utils.cc RunGemm), not "
                 "%s x %s -> %s",
                 hlc_dtype_name(a->dtype), hlc_dtype_name(b->dtype), hlc_dtype_name(D->dtype));
    return NULL;
  }
  double f8_max = !f8 ? 0
                  : D->dtype == HLO_F8E4M3FN ? 448 : D->dtype == HLO_F8E5M2 ? 57344
                  : D->dtype == HLO_F8E4M3FNUZ ? 240 : D->dtype == HLO_F8E5M2FNUZ ? 57344 : 0;
  if (has_dscale && f8_max == 0) {
    hlt_gpu_fail(c, "operand %d (d_scale) is given but the result %s is not an f8 type",
                 want_ops - 1, hlc_dtype_name(D->dtype));
    return NULL;
  }
  if (damax && (c->res[1].rank != 0 || c->res[1].dtype != HLO_F32)) {
    hlt_gpu_fail(c, "result 1 (damax, damax_output is true) must be f32[]");
    return NULL;
  }
  if (integer && (alpha != 1 || has_c || epi != EPI_DEFAULT || alg != ALG_UNSET)) {
    hlt_gpu_fail(c, "an integer gemm takes no alpha (here %g), beta, epilogue or algorithm", alpha);
    return NULL;
  }
  if (!cplx && alpha_imag != 0) {
    hlt_gpu_fail(c,
                 "backend_config field gemm_backend_config.alpha_imag is %g: a %s gemm takes a "
                 "real alpha (expected 0; GemmConfig::For checks it)",
                 alpha_imag, hlc_dtype_name(D->dtype));
    return NULL;
  }
  if (cplx) {
    /* One complex type throughout (TYPED_GEMM_COMPLEX(C64, C64, C64, C64),
     * likewise C128); no epilogue, no f8 scaling, no rounding algorithm. */
    for (int i = 0; i < c->nops; i++)
      if (c->ops[i].dtype != D->dtype || !hlc_dtype_is_complex(D->dtype)) {
        hlt_gpu_fail(c,
                     "a complex gemm takes operands and a result of one complex type "
                     "(c64 or c128); operand %d is %s and the result %s",
                     i, hlc_dtype_name(c->ops[i].dtype), hlc_dtype_name(D->dtype));
        return NULL;
      }
    if (f8 || epi != EPI_DEFAULT || (alg != ALG_UNSET && alg != ALG_F32_F32_F32 &&
                                     alg != ALG_F64_F64_F64)) {
      hlt_gpu_fail(c,
                   "backend_config field gemm_backend_config.%s: a complex gemm has no %s "
                   "(cuBLASLt's epilogues take real types only, gemm_rewriter.cc "
                   "SupportsEpilogueFusion)",
                   epi != EPI_DEFAULT ? "epilogue" : "precision_config.algorithm",
                   epi != EPI_DEFAULT ? "epilogue" : "rounding algorithm");
      return NULL;
    }
  }
  m.ct = integer || cplx ? D->dtype
         : (a->dtype == HLO_F64 || b->dtype == HLO_F64 || D->dtype == HLO_F64) ? HLO_F64
                                                                               : HLO_F32;
  GpuRound rnd = alg == ALG_BF16_BF16_F32 ? GPU_ROUND_BF16
                 : alg == ALG_F16_F16_F32 ? GPU_ROUND_F16
                 : alg == ALG_TF32_TF32_F32 ? GPU_ROUND_TF32 : GPU_ROUND_NONE;
  hlc_text_printf(&m.t, "HloModule gpu_equivalent\n\n");
  if (damax)
    hlc_text_printf(&m.t,
                 "max {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n"
                 "  ROOT r = %s[] maximum(a, b)\n}\n\n",
                 hlc_dtype_name(m.ct), hlc_dtype_name(m.ct), hlc_dtype_name(m.ct));
  hlc_text_printf(&m.t, "ENTRY e {\n");
  int va = integer ? hlt_gpu_emit(&m, a->dtype, a->dims, a->rank, "parameter(")
                   : hlt_gpu_operand(&m, a, 0, rnd);
  if (integer) hlc_text_printf(&m.t, "0)\n");
  int vb = integer ? hlt_gpu_emit(&m, b->dtype, b->dims, b->rank, "parameter(")
                   : hlt_gpu_operand(&m, b, 1, rnd);
  if (integer) hlc_text_printf(&m.t, "1)\n");
  int t = hlt_gpu_emit(&m, m.ct, m.dims, m.rank, "dot(");
  hlc_text_printf(&m.t, "v%d, v%d)", va, vb);
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
  if (alpha != 1 || alpha_imag != 0)
    t = hlt_gpu_binary(&m, "multiply", t,
                       cplx ? splat_complex(&m, alpha, alpha_imag) : hlt_gpu_splat(&m, alpha));
  int next_param = 2;
  if (f8) {
    /* The scales multiply the product (the rewriter made dividing scales
     * multiplicative); C and the bias come after them. */
    int k = 2 + has_c;
    t = hlt_gpu_binary(&m, "multiply", t, scalar_operand(&m, c, k));
    t = hlt_gpu_binary(&m, "multiply", t, scalar_operand(&m, c, k + 1));
  }
  if (has_c) {
    const GpuLeaf *C = &c->ops[next_param];
    if (!same_dims(C, m.dims, m.rank)) {
      hlt_gpu_fail(c,
                   "operand 2 (C, present because beta=%g) is %s; it must have the result's "
                   "shape %s",
                   beta, dims_str(got, sizeof got, C->dtype, C->dims, C->rank),
                   dims_str(want, sizeof want, C->dtype, m.dims, m.rank));
      free(m.t.p);
      return NULL;
    }
    int vc = hlt_gpu_operand(&m, C, next_param++, GPU_ROUND_NONE);
    if (beta != 1)
      vc = hlt_gpu_binary(&m, "multiply", vc,
                          cplx ? splat_complex(&m, beta, 0) : hlt_gpu_splat(&m, beta));
    t = hlt_gpu_binary(&m, "add", t, vc);
  }
  if (f8) next_param += 2;   /* the scales */
  if (has_bias) {
    const GpuLeaf *B = &c->ops[next_param];
    int64_t minor = m.rank ? D->layout[0] : 0;
    if (B->rank != 1 || m.rank == 0 || B->dims[0] != m.dims[minor]) {
      int64_t len = m.rank ? m.dims[minor] : 0;
      hlt_gpu_fail(c,
                   "operand %d (the bias of epilogue %s) is %s; it must be 1-D of length %lld, "
                   "the result's physically minor dimension %lld",
                   next_param, epilogue_names[epi],
                   dims_str(got, sizeof got, B->dtype, B->dims, B->rank), (long long)len,
                   (long long)minor);
      free(m.t.p);
      return NULL;
    }
    int vbias = hlt_gpu_operand(&m, B, next_param++, GPU_ROUND_NONE);
    int bb = hlt_gpu_emit(&m, m.ct, m.dims, m.rank, "broadcast(");
    hlc_text_printf(&m.t, "v%d), dimensions={%lld}\n", vbias, (long long)minor);
    t = hlt_gpu_binary(&m, "add", t, bb);
  }
  if (!lt && alpha == 0 && alpha_imag == 0 && beta == 0)
    t = cplx ? splat_complex(&m, 0, 0) : hlt_gpu_splat(&m, 0); /* RunGemm's MemZero */
  int y = t;
  if (epi == EPI_RELU || epi == EPI_BIAS_RELU)
    y = hlt_gpu_binary(&m, "maximum", t, hlt_gpu_splat(&m, 0));
  else if (epi == EPI_GELU || epi == EPI_GELU_AUX || epi == EPI_BIAS_GELU ||
           epi == EPI_BIAS_GELU_AUX)
    y = act_gelu_tanh(&m, t);
  else if (epi == EPI_SILU || epi == EPI_BIAS_SILU)
    y = hlt_gpu_binary(&m, "multiply", t, hlt_gpu_unary(&m, "logistic", t));
  if (aux && !same_dims(&c->res[1], m.dims, m.rank)) {
    hlt_gpu_fail(c, "result 1 (the pre-activation aux output of %s) must have the result's shape",
                 epilogue_names[epi]);
    free(m.t.p);
    return NULL;
  }
  int outs[2] = {y, t};
  if (damax) {
    /* max |y| over every element, before d_scale (thunk_emitter.cc). */
    int ab = hlt_gpu_unary(&m, "abs", y);
    int k = hlt_gpu_emit(&m, m.ct, NULL, 0, "constant(0)\n");
    int64_t all[GPU_MAX_RANK];
    for (int i = 0; i < m.rank; i++) all[i] = i;
    outs[1] = hlt_gpu_emit(&m, m.ct, NULL, 0, "reduce(");
    hlc_text_printf(&m.t, "v%d, v%d), dimensions=", ab, k);
    hlt_gpu_text_list(&m.t, all, m.rank);
    hlc_text_printf(&m.t, ", to_apply=max\n");
  }
  if (f8_max > 0) {
    /* An f8 result saturates to its finite range (the rewriter only fuses
     * a clamp to it); d_scale multiplies first. */
    int v = y;
    if (has_dscale) v = hlt_gpu_binary(&m, "multiply", v, scalar_operand(&m, c, want_ops - 1));
    int lo = hlt_gpu_splat(&m, -f8_max), hi = hlt_gpu_splat(&m, f8_max);
    outs[0] = hlt_gpu_emit(&m, m.ct, m.dims, m.rank, "clamp(");
    hlc_text_printf(&m.t, "v%d, v%d, v%d)\n", lo, v, hi);
  }
  if (hlt_gpu_finish(&m, c->res, outs, want_res)) {
    free(m.t.p);
    hlt_gpu_fail(c, "out of memory");
    return NULL;
  }
  return m.t.p;
}
