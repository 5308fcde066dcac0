/* repeat_v3.c: a legacy custom call (api_version
 * API_VERSION_STATUS_RETURNING_UNIFIED, XLA:CPU's signature) that reads its
 * parameter from the opaque backend_config string "k=N" and reports errors
 * through the status functions the host exports.
 *
 *   out (tuple): (f32[n] x * k, s32[] k)
 * Bind: hlorun --custom-call repeat=librepeat_v3.so:sample_repeat_v3 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hlorun/custom_call_status.h"

void sample_repeat_v3(void *out, const void **in, const char *opaque, size_t opaque_len,
                      XlaCustomCallStatus *status) {
  char buf[32];
  if (opaque_len < 3 || opaque_len >= sizeof buf || memcmp(opaque, "k=", 2) != 0) {
    static const char msg[] = "repeat: backend_config must be \"k=N\"";
    XlaCustomCallStatusSetFailure(status, msg, sizeof msg - 1);
    return;
  }
  memcpy(buf, opaque + 2, opaque_len - 2);
  buf[opaque_len - 2] = 0;
  int k = atoi(buf);
  void **leaves = out;              /* a tuple result: one pointer per leaf */
  const float *x = in[0];
  float *y = leaves[0];
  for (int i = 0; i < 4; i++) y[i] = x[i] * (float)k;   /* the module's f32[4] */
  *(int32_t *)leaves[1] = k;
  XlaCustomCallStatusSetSuccess(status);
}
