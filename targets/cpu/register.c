/* register.c: one typed FFI handler per row of targets.def (a handler is
 * told nothing of the target it was bound to) and their registration as
 * built-ins of the family "LAPACK". A handler answers the metadata query,
 * runs only at the execute stage, and frees the kernel's scratch memory.
 * Without LAPACK (not built, or not loadable), every target still exists
 * and fails at the call, naming the Debian package that provides it. */
#include "targets/cpu/cpu.h"
#include <stdlib.h>
#include <string.h>

static XLA_FFI_Error *run(XLA_FFI_CallFrame *f, CpuKernel *kernel, CpuTypeId type,
                          const char *target) {
  if (hlorun_ffi_metadata(f, 0)) return NULL;
  if (f->stage != XLA_FFI_ExecutionStage_EXECUTE) return NULL;
  const char *why = NULL;
  CpuCall c = {.f = f, .target = target, .t = &hlt_cpu_types[type],
               .la = hlt_cpu_lapack(type, &why)};
  if (!c.la) return hlt_cpu_fail(&c, XLA_FFI_Error_Code_UNIMPLEMENTED, "%s", why);
  XLA_FFI_Error *err = kernel(&c);
  for (int i = 0; i < c.nscratch; i++) free(c.scratch[i]);
  return err;
}

/* The number of rows. */
enum {
#define CPU_TARGET(NAME, KERNEL, TYPE) CPU_ROW_##KERNEL##_##TYPE,
#include "targets/cpu/targets.def"
#undef CPU_TARGET
  CPU_NROWS
};

#define CPU_TARGET(NAME, KERNEL, TYPE)                                        \
  static XLA_FFI_Error *handler_##KERNEL##_##TYPE(XLA_FFI_CallFrame *f) {    \
    return run(f, KERNEL, TYPE, NAME);                                       \
  }
#include "targets/cpu/targets.def"
#undef CPU_TARGET

static const struct {
  const char *name;
  XLA_FFI_Handler *handler;
} rows[CPU_NROWS] = {
#define CPU_TARGET(NAME, KERNEL, TYPE) {NAME, handler_##KERNEL##_##TYPE},
#include "targets/cpu/targets.def"
#undef CPU_TARGET
};

/* jaxlib's own kernels (cpu_kernels.cc, not LAPACK): one target for every
 * element type, which the call's operand type_arg says (-1: the kernel
 * checks types itself). */
static XLA_FFI_Error *run_own(XLA_FFI_CallFrame *f, CpuKernel *kernel, const char *target,
                              int type_arg) {
  if (hlorun_ffi_metadata(f, 0)) return NULL;
  if (f->stage != XLA_FFI_ExecutionStage_EXECUTE) return NULL;
  CpuCall c = {.f = f, .target = target, .t = &hlt_cpu_types[CPU_S]};
  if (type_arg >= 0) {
    XLA_FFI_DataType t = f->args.size > type_arg
                             ? ((XLA_FFI_Buffer *)f->args.args[type_arg])->dtype
                             : XLA_FFI_DataType_INVALID;
    int k = 0;
    while (k < 4 && hlt_cpu_types[k].dtype != t) k++;
    if (k == 4)
      return hlt_cpu_fail(&c, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                          "operand %d must be f32, f64, c64 or c128", type_arg);
    c.t = &hlt_cpu_types[k];
  }
  XLA_FFI_Error *err = kernel(&c);
  for (int i = 0; i < c.nscratch; i++) free(c.scratch[i]);
  return err;
}
static XLA_FFI_Error *tridiagonal_handler(XLA_FFI_CallFrame *f) {
  return run_own(f, hlt_cpu_tridiagonal_solve_perturbed, "tridiagonal_solve_perturbed_ffi", 1);
}
static XLA_FFI_Error *csr_handler(XLA_FFI_CallFrame *f) {
  return run_own(f, hlt_cpu_csr_sparse_dense, "cpu_csr_sparse_dense_ffi", -1);
}

/* jaxlib registers its "*_ffi" targets with XLA's FFI (api_version 4 only)
 * and the older generation as legacy functions (api_version 1 to 3). */
static unsigned api_mask(const char *name) {
  size_t n = strlen(name);
  if (n > 4 && strcmp(name + n - 4, "_ffi") == 0) return 1u << HLO_API_TYPED_FFI;
  return 1u << HLO_API_ORIGINAL | 1u << HLO_API_STATUS_RETURNING | 1u << HLO_API_STATUS_RETURNING_UNIFIED;
}

int hlt_cpu_register(HlfRegistry *r) {
  for (int i = 0; i < CPU_NROWS; i++) {
    XLA_FFI_Handler_Bundle b = {NULL, NULL, NULL, rows[i].handler};
    if (hlf_register_builtin(r, rows[i].name, &b, "built-in: LAPACK") != 0) return -1;
    hlf_builtin_api_versions(r, rows[i].name, api_mask(rows[i].name));
  }
  XLA_FFI_Handler_Bundle td = {NULL, NULL, NULL, tridiagonal_handler};
  XLA_FFI_Handler_Bundle csr = {NULL, NULL, NULL, csr_handler};
  if (hlf_register_builtin(r, "tridiagonal_solve_perturbed_ffi", &td, "built-in: jaxlib") != 0 ||
      hlf_register_builtin(r, "cpu_csr_sparse_dense_ffi", &csr, "built-in: jaxlib") != 0)
    return -1;
  hlf_builtin_api_versions(r, "tridiagonal_solve_perturbed_ffi", api_mask("tridiagonal_solve_perturbed_ffi"));
  hlf_builtin_api_versions(r, "cpu_csr_sparse_dense_ffi", api_mask("cpu_csr_sparse_dense_ffi"));
  return 0;
}
