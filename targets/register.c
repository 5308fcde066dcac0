/* register.c: the list of built-in target families (targets.h). A family
 * adds one line here and its own folder (targets/cpu/, targets/gpu/). */
#include "targets/targets.h"

int hlt_register_all(HlfRegistry *r) {
  if (hlt_register_xla(r) != 0) return -1;   /* XLA's own (annotations, TopK) */
  if (hlt_cpu_register(r) != 0) return -1;   /* jaxlib's LAPACK targets */
  if (hlt_register_gpu(r) != 0) return -1;   /* XLA:GPU's custom calls */
  if (hlt_register_callbacks(r) != 0) return -1;   /* JAX's host callbacks */
  return 0;
}
