/* crashy.c: custom-call handlers that misbehave, for the isolation tests
 * (tests/harden/isolate.sh). Legacy conventions (api_version 1 and 2):
 *   crash_segv   writes through a NULL pointer
 *   crash_abort  calls abort()
 *   crash_loop   never returns
 *   crash_exit   calls exit(3)
 *   crash_error  reports a failure through the status (a well-behaved error)
 *   crash_scribble  overwrites its input, then doubles it into the output
 *                (isolated, the caller's input must stay intact)
 *   twice        out[i] = 2 * in[i] for f32[4] (a well-behaved handler)
 * None of them is ever run in-process by the tests except twice. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hlorun/custom_call_status.h"

void crash_segv(void *out, const void **in) {
  (void)out;
  (void)in;
  /* An unmapped address that is not NULL: a real SIGSEGV, which UBSan's
   * null-pointer check would otherwise turn into an error exit. */
  volatile uintptr_t addr = 16;
  volatile int *p = (volatile int *)addr;
  *p = 42;
}

void crash_abort(void *out, const void **in) {
  (void)out;
  (void)in;
  abort();
}

void crash_loop(void *out, const void **in) {
  (void)out;
  (void)in;
  for (volatile unsigned long i = 0;; i++) {}
}

void crash_exit(void *out, const void **in) {
  (void)out;
  (void)in;
  exit(3);
}

void crash_error(void *out, const void **in, XlaCustomCallStatus *status) {
  (void)out;
  (void)in;
  static const char msg[] = "crash_error: refusing on purpose";
  XlaCustomCallStatusSetFailure(status, msg, sizeof msg - 1);
}

void twice(void *out, const void **in) {
  const float *x = in[0];
  float *y = out;
  for (int i = 0; i < 4; i++) y[i] = 2 * x[i];
}

void crash_scribble(void *out, const void **in) {
  float *x = (float *)in[0];
  float *y = out;
  for (int i = 0; i < 4; i++) { y[i] = 2 * x[i]; x[i] = -999; }
}
