/* narrow.h: exact widening of bf16 and f16 bit patterns to f32, inline for
 * the loops that widen as they go (GEMM packing, reducer folds). The same
 * values as common/numeric.c's hlc_bf16_to_f32 / hlc_f16_to_f32: every
 * narrow value is an f32 value, NaN payloads are kept. */
#ifndef HLORUN_INTERP_KERNELS_NARROW_H
#define HLORUN_INTERP_KERNELS_NARROW_H
#include <stdint.h>

static inline float hlk_bf16_to_f32(uint16_t b) {
  union { uint32_t u; float f; } v = { (uint32_t)b << 16 };
  return v.f;
}
static inline float hlk_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  union { uint32_t u; float f; } v;
  if (e == 0) {                                   /* zero or subnormal: m * 2^-24 */
    float f = (float)m * (1.0f / 16777216.0f);
    return sign ? -f : f;
  }
  v.u = e == 31 ? sign | 0x7f800000u | (m << 13) : sign | ((e + 112u) << 23) | (m << 13);
  return v.f;
}
#endif
