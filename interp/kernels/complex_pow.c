/* complex_pow.c: the complex power of pow and cbrt as XLA computes it
 * (ElementalIrEmitter::EmitComplexPower; cbrt is x^(1/3 + 0i)):
 *   (a+bi)^(c+di) = (a*a+b*b)^(c/2) * exp(-d*atan2(b,a)) * (cos q + i sin q),
 *   q = c*atan2(b,a) + d/2 * log(a*a+b*b),
 * except 0^(c+0i) with c >= 0, which is 1 for c = 0 and 0 otherwise (Kahan,
 * "Much Ado About Nothing's Sign Bit", section 10). Other zero bases take
 * the formula and its NaNs (0^(2+i): log 0 = -inf, cos(-inf) = NaN), not
 * C's cpow (which gives 0 there). In the component type: f32 exp and log
 * as XLA:CPU inlines them (xla_math.h), pow, atan2, cos and sin from libm. */
#include <complex.h>
#include <math.h>
#include "interp/kernels/elementwise.h"
#include "interp/kernels/xla_math.h"

float complex hlk_cpowf(float complex x, float complex y) {
  float a = crealf(x), b = cimagf(x), c = crealf(y), d = cimagf(y);
  float aa = a * a + b * b;
  if (aa == 0 && d == 0 && c >= 0) return CMPLXF(c == 0 ? 1.0f : 0.0f, 0.0f);
  float arg = atan2f(b, a);
  float coeff = powf(aa, 0.5f * c) * xla_expf(-d * arg);
  float q = c * arg + 0.5f * d * xla_logf(aa);
  return CMPLXF(coeff * cosf(q), coeff * sinf(q));
}

double complex hlk_cpow(double complex x, double complex y) {
  double a = creal(x), b = cimag(x), c = creal(y), d = cimag(y);
  double aa = a * a + b * b;
  if (aa == 0 && d == 0 && c >= 0) return CMPLX(c == 0 ? 1.0 : 0.0, 0.0);
  double arg = atan2(b, a);
  double coeff = pow(aa, 0.5 * c) * exp(-d * arg);
  double q = c * arg + 0.5 * d * log(aa);
  return CMPLX(coeff * cos(q), coeff * sin(q));
}
