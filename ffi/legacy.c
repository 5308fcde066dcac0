/* legacy.c: custom calls with XLA:CPU's pre-FFI conventions (api_version 1,
 * 2 and 3), and the two status functions plugins call.
 *
 *   1: void f(void *out, const void **in)
 *   2: void f(void *out, const void **in, XlaCustomCallStatus *status)
 *   3: void f(void *out, const void **in, const char *opaque, size_t opaque_len,
 *             XlaCustomCallStatus *status)
 * `in` has one data pointer per operand leaf (tuple operands flattened
 * depth-first); `out` is the result's data pointer, or for a tuple result an
 * array of leaf data pointers. `opaque` is the HLO-unescaped backend_config.
 * XlaCustomCallStatusSetSuccess/SetFailure are exported from libhlorun (and
 * from the hlorun command) so plugins link against nothing.
 * Not here: typed FFI (callframe.c, call.c). */
#include "ffi/internal.h"
#include "hlorun/custom_call_status.h"
#include <stdlib.h>
#include <string.h>

struct XlaCustomCallStatus_ {
  bool failed;
  char *message;             /* owned, or NULL */
};

void XlaCustomCallStatusSetSuccess(XlaCustomCallStatus *status) {
  if (!status) return;
  status->failed = false;
  free(status->message);
  status->message = NULL;
}

void XlaCustomCallStatusSetFailure(XlaCustomCallStatus *status, const char *message,
                                   size_t message_len) {
  if (!status) return;
  free(status->message);
  status->message = message ? strndup(message, message_len) : strdup("");
  status->failed = true;
}

typedef void Legacy1(void *out, const void **in);
typedef void Legacy2(void *out, const void **in, XlaCustomCallStatus *status);
typedef void Legacy3(void *out, const void **in, const char *opaque, size_t opaque_len,
                     XlaCustomCallStatus *status);

int hlf_call_legacy(void *fn, int api_version, const HloInstr *ins, const HlfBuf *args,
                    int32_t nargs, const HlfBuf *rets, int32_t nrets, char **err) {
  const void **in = calloc((size_t)nargs + 1, sizeof *in);
  void **outs = calloc((size_t)nrets + 1, sizeof *outs);
  if (!in || !outs) {
    free(in);
    free(outs);
    *err = strdup("out of memory");
    return -1;
  }
  for (int32_t i = 0; i < nargs; i++) in[i] = args[i].data;
  for (int32_t i = 0; i < nrets; i++) outs[i] = rets[i].data;
  void *out = ins->shape.dtype == HLO_TUPLE ? (void *)outs : nrets ? outs[0] : NULL;
  XlaCustomCallStatus st = {false, NULL};
  const char *target = ins->custom_call_target ? ins->custom_call_target : "?";
  union { void *p; Legacy1 *f1; Legacy2 *f2; Legacy3 *f3; } u = {fn};
  switch (api_version) {
  case HLO_API_ORIGINAL: u.f1(out, in); break;
  case HLO_API_STATUS_RETURNING: u.f2(out, in, &st); break;
  default:
    u.f3(out, in, ins->backend_config ? ins->backend_config : "", ins->backend_config_len, &st);
    break;
  }
  free(in);
  free(outs);
  if (st.failed) {
    *err = hlf_strdup_printf("handler of custom-call target \"%s\" failed: %s", target,
                             st.message ? st.message : "");
    free(st.message);
    return -1;
  }
  free(st.message);
  return 0;
}
