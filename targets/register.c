/* register.c: the list of built-in target families (targets.h). A family
 * adds one line here and its own folder (targets/cpu/, targets/gpu/). */
#include "targets/targets.h"
#include "targets/gpu/gpu.h"

int hlt_register_all(HlfRegistry *r) {
  (void)r;
  if (hlt_register_gpu(r)) return -1;
  return 0;
}
