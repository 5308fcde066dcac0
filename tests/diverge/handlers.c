/* handlers.c: custom-call handlers for tests/diverge/run.sh, XLA:CPU's
 * legacy signature (void f(void *out, const void **in)) on f32[4] values.
 *
 *   times2         y = 2x                     (the reference)
 *   times2_buggy   y = 2x, but 3x when x[0] == 4 (wrong on one call only)
 *   identity_buggy y = x, but y[1] = x[1] + 1 when x[0] == 4 (against the
 *                  built-in MoveToHost, an identity)
 */
#include <stddef.h>

void times2(void *out, const void **in) {
  const float *x = in[0];
  float *y = out;
  for (int i = 0; i < 4; i++) y[i] = 2 * x[i];
}

void times2_buggy(void *out, const void **in) {
  const float *x = in[0];
  float *y = out;
  float k = x[0] == 4 ? 3 : 2;
  for (int i = 0; i < 4; i++) y[i] = k * x[i];
}

void identity_buggy(void *out, const void **in) {
  const float *x = in[0];
  float *y = out;
  for (int i = 0; i < 4; i++) y[i] = x[i];
  if (x[0] == 4) y[1] += 1;
}

/* unstable: y = 2x, plus 1 from its fifth call on: a handler whose result
 * depends on shared state (what earlier calls left behind), as a racy one
 * depends on timing. In one process, a second run of a module that calls it
 * four times sees different bits at its first call. */
static int unstable_calls;
void unstable(void *out, const void **in) {
  const float *x = in[0];
  float *y = out;
  float extra = unstable_calls++ >= 4 ? 1 : 0;
  for (int i = 0; i < 4; i++) y[i] = 2 * x[i] + extra;
}
