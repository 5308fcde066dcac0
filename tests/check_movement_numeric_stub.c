/* check_movement_numeric_stub.c: TEMPORARY weak stand-ins for the few
 * common/numeric.h functions the movement kernels call, so this area's
 * suites link before common/numeric.c (elementwise helper) is merged. Weak:
 * the real definitions win as soon as they exist. Remove after the merge.
 * Covers only what the suites use: integers, f16, bf16, f32, f64, c64. */
#include "common/numeric.h"
#include <math.h>
#include <string.h>

__attribute__((weak)) float hlc_f16_to_f32(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY)
                                                     : ldexpf((float)(m | 1024), e - 25);
  return (h & 0x8000) ? -v : v;
}

__attribute__((weak)) uint16_t hlc_f32_to_f16(float f) {
  uint16_t sign = signbit(f) ? 0x8000 : 0;
  float a = fabsf(f);
  if (isnan(f)) return sign | 0x7e00;
  if (a >= 65520.0f) return sign | 0x7c00;
  if (a < ldexpf(1, -14)) return sign | (uint16_t)nearbyintf(ldexpf(a, 24));
  int e;
  frexpf(a, &e);                                   /* a = m * 2^e, m in [0.5, 1) */
  float m = nearbyintf(ldexpf(a, 11 - e));         /* 11 significant bits */
  if (m >= 2048.0f) { m /= 2; e++; }
  return sign | (uint16_t)((e + 14) << 10) | ((uint16_t)m & 1023);
}

__attribute__((weak)) uint16_t hlc_f32_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if (isnan(f)) return (uint16_t)((u >> 16) | 0x40);
  u += 0x7fff + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}

__attribute__((weak)) void hlc_store_i64(HloDtype t, void *p, int64_t v) {
  switch (t) {
  case HLO_PRED: *(uint8_t *)p = v != 0; break;
  case HLO_S8: case HLO_U8: *(uint8_t *)p = (uint8_t)v; break;
  case HLO_S16: case HLO_U16: *(uint16_t *)p = (uint16_t)v; break;
  case HLO_S32: case HLO_U32: *(uint32_t *)p = (uint32_t)v; break;
  case HLO_S64: case HLO_U64: *(uint64_t *)p = (uint64_t)v; break;
  case HLO_F16: *(uint16_t *)p = hlc_f32_to_f16((float)v); break;
  case HLO_BF16: *(uint16_t *)p = hlc_f32_to_bf16((float)v); break;
  case HLO_F32: *(float *)p = (float)v; break;
  case HLO_F64: *(double *)p = (double)v; break;
  case HLO_C64: ((float *)p)[0] = (float)v; ((float *)p)[1] = 0; break;
  case HLO_C128: ((double *)p)[0] = (double)v; ((double *)p)[1] = 0; break;
  default: break;
  }
}
