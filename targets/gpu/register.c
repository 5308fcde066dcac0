/* register.c: the XLA:GPU target family's names and bundles. Every target
 * decodes its JSON backend_config at instantiate time (when the module is
 * checked) and runs an equivalent standard-HLO module (gpu.h).
 * Refused targets are registered too, so the error (and
 * --explain-custom-calls) says why they cannot run on a CPU. */
#include "targets/gpu/gpu.h"
#include "targets/targets.h"

#define GPU_TARGET(fn, build)                                                       \
  static XLA_FFI_Error *fn##_instantiate(XLA_FFI_CallFrame *f) {                    \
    return gpu_instantiate(f, build);                                               \
  }

GPU_TARGET(gemm, gpu_build_gemm)
GPU_TARGET(conv, gpu_build_conv)

static XLA_FFI_Error *triton_refuse(XLA_FFI_CallFrame *f) {
  return gpu_refuse(f, "__gpu$xla.gpu.triton holds a Triton kernel (Triton IR or PTX text) "
                       "compiled for an NVIDIA GPU; it cannot run on a CPU (a Triton fusion, "
                       "fusion kind=kCustom with an HLO body, can)");
}

static XLA_FFI_Error *refused_execute(XLA_FFI_CallFrame *f) {
  if (hlorun_ffi_metadata(f, HLORUN_FFI_TRAIT_JSON_CONFIG)) return NULL;
  return hlorun_ffi_error(f->api, XLA_FFI_Error_Code_UNIMPLEMENTED, "refused target");
}

int hlt_register_gpu(HlfRegistry *r) {
  static const struct { const char *name; XLA_FFI_Handler *inst; } targets[] = {
      {"__cublas$gemm", gemm_instantiate},
      {"__cublas$lt$matmul", gemm_instantiate},
      {"__cudnn$convForward", conv_instantiate},
      {"__cudnn$convBackwardInput", conv_instantiate},
      {"__cudnn$convBackwardFilter", conv_instantiate},
      {"__cudnn$convBiasActivationForward", conv_instantiate},
  };
  for (size_t i = 0; i < sizeof targets / sizeof *targets; i++) {
    XLA_FFI_Handler_Bundle b = {targets[i].inst, NULL, NULL, gpu_execute};
    if (hlf_register_builtin(r, targets[i].name, &b, "built-in: XLA:GPU")) return -1;
  }
  XLA_FFI_Handler_Bundle refused = {triton_refuse, NULL, NULL, refused_execute};
  return hlf_register_builtin(r, "__gpu$xla.gpu.triton", &refused,
                              "built-in: XLA:GPU (refused on a CPU)");
}
