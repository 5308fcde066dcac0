/* crash_when.c: a custom-call handler that crashes only for some operand
 * values, for tests/repro/reduce.sh (--reduce crash). Legacy convention
 * (api_version 1), f32[4] -> f32[4]:
 *   neg_crash  out[i] = 2 * in[i], but a real SIGSEGV when any in[i] < -10
 *   neg_fail   the same, but a failure through the status instead (api_version 2)
 *   neg_triple out[i] = 3 * in[i] (a reference for neg_crash)
 * Only ever run isolated (--isolate-custom-calls) when it crashes. */
#include <stdint.h>
#include <stdio.h>
#include "hlorun/custom_call_status.h"

void neg_crash(void *out, const void **in) {
  const float *x = in[0];
  float *y = out;
  for (int i = 0; i < 4; i++)
    if (x[i] < -10) {
      /* An unmapped address that is not NULL: a real SIGSEGV. */
      volatile uintptr_t addr = 16;
      volatile int *p = (volatile int *)addr;
      *p = 42;
    }
  for (int i = 0; i < 4; i++) y[i] = 2 * x[i];
}

/* A handler that does not crash: out = 3 * in (a reference handler for
 * neg_crash, --reference-custom-call neg_crash=LIB:neg_triple). */
void neg_triple(void *out, const void **in) {
  const float *x = in[0];
  float *y = out;
  for (int i = 0; i < 4; i++) y[i] = 3 * x[i];
}

/* api_version 2: out = 2 * in, or a failure naming the first element
 * below -10. */
void neg_fail(void *out, const void **in, XlaCustomCallStatus *status) {
  const float *x = in[0];
  float *y = out;
  for (int i = 0; i < 4; i++)
    if (x[i] < -10) {
      char msg[80];
      int n = snprintf(msg, sizeof msg, "neg_fail: element %d is %g, below -10", i, (double)x[i]);
      XlaCustomCallStatusSetFailure(status, msg, (size_t)n);
      return;
    }
  for (int i = 0; i < 4; i++) y[i] = 2 * x[i];
}
