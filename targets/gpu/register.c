/* register.c: the XLA:GPU target family's names and bundles. Every target
 * decodes its JSON backend_config at instantiate time (when the module is
 * checked) and runs an equivalent standard-HLO module (gpu.h).
 * Refused targets are registered too, so the error (and
 * --explain-custom-calls) says why they cannot run on a CPU. */
#include "targets/gpu/gpu.h"
#include "targets/targets.h"
#include <string.h>

#define GPU_TARGET(fn, build)                                    \
  static XLA_FFI_Error *fn##_instantiate(XLA_FFI_CallFrame *f) { \
    return hlt_gpu_instantiate(f, build);                        \
  }

GPU_TARGET(gemm, hlt_gpu_build_gemm)
GPU_TARGET(conv, hlt_gpu_build_conv)
GPU_TARGET(trsm, hlt_gpu_build_trsm)
GPU_TARGET(topk, hlt_gpu_build_topk)
GPU_TARGET(cub_sort, hlt_gpu_build_cub_sort)
GPU_TARGET(fmha, hlt_gpu_build_fmha)
GPU_TARGET(norm, hlt_gpu_build_norm)
GPU_TARGET(grouped, hlt_gpu_build_grouped)
GPU_TARGET(block_scaled, hlt_gpu_build_block_scaled)
GPU_TARGET(mx_gemm, hlt_gpu_build_mx_gemm)

/* JSON backend_configs (most targets). */
static XLA_FFI_Error *json_execute(XLA_FFI_CallFrame *f) {
  return hlt_gpu_execute(f, HLORUN_FFI_TRAIT_JSON_CONFIG);
}
/* Attribute-dictionary backend_configs (the CUB sorts are typed FFI calls). */
static XLA_FFI_Error *attrs_execute(XLA_FFI_CallFrame *f) {
  return hlt_gpu_execute(f, HLORUN_FFI_TRAIT_INSTRUCTION_MEMBERS);
}

/* __nop (in __cudnn$fusion bodies) only allocates cuDNN's workspace: its
 * result is that workspace, zero-filled. */
static XLA_FFI_Error *nop_execute(XLA_FFI_CallFrame *f) {
  if (hlorun_ffi_metadata(f, HLORUN_FFI_TRAIT_JSON_CONFIG)) return NULL;
  if (f->stage != XLA_FFI_ExecutionStage_EXECUTE) return NULL;
  for (int64_t i = 0; i < f->rets.size; i++) {
    XLA_FFI_Buffer *r = f->rets.rets[i];
    HloDtype d = hlc_dtype_from_xla_code((int)r->dtype);
    if (d != HLO_DTYPE_INVALID && r->data)
      memset(r->data, 0, (size_t)hlorun_ffi_elements(r) * hlc_dtype_size(d));
  }
  return NULL;
}

static XLA_FFI_Error *triton_refuse(XLA_FFI_CallFrame *f) {
  return hlt_gpu_refuse(f,
                        "__gpu$xla.gpu.triton holds a Triton kernel (Triton IR or PTX text) "
                        "compiled for an NVIDIA GPU; it cannot run on a CPU (a Triton fusion, "
                        "fusion kind=kCustom with an HLO body, can)");
}

static XLA_FFI_Error *reorder_refuse(XLA_FFI_CallFrame *f) {
  return hlt_gpu_refuse(f,
                        "cuDNN's int8x32 filter reordering permutes bytes for the GPU's "
                        "NCHW_VECT_C layout; hlorun runs logical values and does not model it");
}

static XLA_FFI_Error *refused_execute(XLA_FFI_CallFrame *f) {
  if (hlorun_ffi_metadata(f, HLORUN_FFI_TRAIT_JSON_CONFIG)) return NULL;
  return hlorun_ffi_error(f->api, XLA_FFI_Error_Code_UNIMPLEMENTED, "refused target");
}

int hlt_register_gpu(HlfRegistry *r) {
  static const struct {
    const char *name;
    XLA_FFI_Handler *inst, *exec;
  } targets[] = {
      {"__cublas$gemm", gemm_instantiate, json_execute},
      {"__cublas$lt$matmul", gemm_instantiate, json_execute},
      {"__cublas$lt$matmul$f8", gemm_instantiate, json_execute},
      {"__cublas$lt$matmul$mx", mx_gemm_instantiate, json_execute},
      {"__cudnn$convForward", conv_instantiate, json_execute},
      {"__cudnn$convBackwardInput", conv_instantiate, json_execute},
      {"__cudnn$convBackwardFilter", conv_instantiate, json_execute},
      {"__cudnn$convBiasActivationForward", conv_instantiate, json_execute},
      {"__cudnn$convForwardGraph", conv_instantiate, json_execute},
      {"__cublas$triangularSolve", trsm_instantiate, json_execute},
      {"__gpu$TopK", topk_instantiate, json_execute},
      {"xla.gpu.ext.cub_sort_keys", cub_sort_instantiate, attrs_execute},
      {"xla.gpu.ext.cub_sort_pairs", cub_sort_instantiate, attrs_execute},
      {"__cudnn$fmhaSoftmax", fmha_instantiate, json_execute},
      {"__cudnn$fmhaScaleBiasSoftmax", fmha_instantiate, json_execute},
      {"__cudnn$fmhaSoftmaxF8", fmha_instantiate, json_execute},
      {"__cudnn$fmhaSoftmaxBackwardF8", fmha_instantiate, json_execute},
      {"__cudnn$fmhaSoftmaxDropout", fmha_instantiate, json_execute},
      {"__cudnn$fmhaScaleBiasSoftmaxDropout", fmha_instantiate, json_execute},
      {"__cudnn$fmhaSoftmaxBackward", fmha_instantiate, json_execute},
      {"__cudnn$fmhaScaleBiasSoftmaxBackward", fmha_instantiate, json_execute},
      {"__cudnn$fmhaSoftmaxDropoutBackward", fmha_instantiate, json_execute},
      {"__cudnn$fmhaScaleBiasSoftmaxDropoutBackward", fmha_instantiate, json_execute},
      {"__cudnn$norm", norm_instantiate, json_execute},
      {"__cublas$lt$groupedMatmul", grouped_instantiate, json_execute},
      {"__cudnn$blockScaledDot", block_scaled_instantiate, json_execute},
      {"__nop", NULL, nop_execute},
  };
  for (size_t i = 0; i < sizeof targets / sizeof *targets; i++) {
    XLA_FFI_Handler_Bundle b = {targets[i].inst, NULL, NULL, targets[i].exec};
    if (hlf_register_builtin(r, targets[i].name, &b, "built-in: XLA:GPU")) return -1;
  }
  static const char *const reorder[] = {"__cudnn$convReorderFilter",
                                        "__cudnn$convReorderFilterAndBias"};
  for (size_t i = 0; i < 2; i++) {
    XLA_FFI_Handler_Bundle b = {reorder_refuse, NULL, NULL, refused_execute};
    if (hlf_register_builtin(r, reorder[i], &b, "built-in: XLA:GPU (refused on a CPU)")) return -1;
  }
  XLA_FFI_Handler_Bundle refused = {triton_refuse, NULL, NULL, refused_execute};
  return hlf_register_builtin(r, "__gpu$xla.gpu.triton", &refused,
                              "built-in: XLA:GPU (refused on a CPU)");
}
