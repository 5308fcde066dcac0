/* simd.h: the few vector primitives vmath.c needs, for the ISA this copy of
 * vmath.c is compiled for (HLK_BUILD_AVX512, HLK_BUILD_AVX2, HLK_BUILD_SSE4,
 * or none = scalar
 * reference; HLK_BUILD_SSE4 defines only what the SLEEF paths need and
 * HLK_NO_FMA). Each ISA build defines:
 *   HlkVF / HlkVD         vector of float / double
 *   HLK_VLF / HLK_VLD     lanes
 *   hlk_ldf/hlk_stf, hlk_ldd/hlk_std   unaligned load / store
 *   hlk_{add,div,sub}{f,d}, hlk_set1{f,d}
 *   hlk_mulf, hlk_fmaf(a, b, c) = a*b+c and hlk_fnmaf(a, b, c) = c-a*b
 *   rounded once, hlk_absf, hlk_minf(a, b) and hlk_maxf(a, b) (b if either
 *   is NaN), hlk_floorf, hlk_pow2f(n) = 2^n from its bits (n a whole float
 *   in [-127, 127]; 0 for -127), hlk_expof(x) = the unbiased exponent
 *   field of positive x as a float, hlk_mantf(x) = x's mantissa with the
 *   exponent of 0.5 (in [0.5, 1)), hlk_selltf(a, b, x, y) = lanewise
 *   a < b ? x : y, with x also where a or b is NaN
 *   HLK_SLEEF_F(name, acc) / HLK_SLEEF_D(name, acc)   the SLEEF function
 *   HLK_VMATH_TABLE       the name of the table this build exports
 * Not here: math functions (SLEEF's and vmath.c's) or dispatch (dispatch.c). */
#ifndef HLORUN_INTERP_KERNELS_SIMD_H
#define HLORUN_INTERP_KERNELS_SIMD_H

#if defined(HLK_BUILD_AVX512)
#include <immintrin.h>
#include <sleef.h>
typedef __m512 HlkVF;
typedef __m512d HlkVD;
#define HLK_VLF 16
#define HLK_VLD 8
#define hlk_ldf _mm512_loadu_ps
#define hlk_stf _mm512_storeu_ps
#define hlk_ldd _mm512_loadu_pd
#define hlk_std _mm512_storeu_pd
#define hlk_addf _mm512_add_ps
#define hlk_subf _mm512_sub_ps
#define hlk_divf _mm512_div_ps
#define hlk_set1f _mm512_set1_ps
#define hlk_addd _mm512_add_pd
#define hlk_subd _mm512_sub_pd
#define hlk_divd _mm512_div_pd
#define hlk_set1d _mm512_set1_pd
#define hlk_mulf _mm512_mul_ps
#define hlk_fmaf _mm512_fmadd_ps
#define hlk_fnmaf _mm512_fnmadd_ps
#define hlk_absf _mm512_abs_ps
#define hlk_minf _mm512_min_ps
#define hlk_maxf _mm512_max_ps
#define hlk_floorf(x) _mm512_roundscale_ps((x), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)
#define hlk_pow2f(n) \
  _mm512_castsi512_ps(_mm512_slli_epi32( \
      _mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23))
#define hlk_expof(x) \
  _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_srli_epi32(_mm512_castps_si512(x), 23), \
                                      _mm512_set1_epi32(127)))
#define hlk_mantf(x) \
  _mm512_castsi512_ps(_mm512_or_si512( \
      _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(~0x7f800000)), \
      _mm512_set1_epi32(0x3f000000)))
#define hlk_selltf(a, b, x, y) \
  _mm512_mask_blend_ps(_mm512_cmp_ps_mask((a), (b), _CMP_NGE_UQ), (y), (x))
#define HLK_SLEEF_F(name, acc) Sleef_##name##f16_##acc##avx512f
#define HLK_SLEEF_D(name, acc) Sleef_##name##d8_##acc##avx512f
#define HLK_VMATH_TABLE hlk_vmath_avx512
#define HLK_VMATH_NAME "avx512"

#elif defined(HLK_BUILD_AVX2)
#include <immintrin.h>
#include <sleef.h>
typedef __m256 HlkVF;
typedef __m256d HlkVD;
#define HLK_VLF 8
#define HLK_VLD 4
#define hlk_ldf _mm256_loadu_ps
#define hlk_stf _mm256_storeu_ps
#define hlk_ldd _mm256_loadu_pd
#define hlk_std _mm256_storeu_pd
#define hlk_addf _mm256_add_ps
#define hlk_subf _mm256_sub_ps
#define hlk_divf _mm256_div_ps
#define hlk_set1f _mm256_set1_ps
#define hlk_addd _mm256_add_pd
#define hlk_subd _mm256_sub_pd
#define hlk_divd _mm256_div_pd
#define hlk_set1d _mm256_set1_pd
#define hlk_mulf _mm256_mul_ps
#define hlk_fmaf _mm256_fmadd_ps
#define hlk_fnmaf _mm256_fnmadd_ps
#define hlk_absf(x) _mm256_andnot_ps(_mm256_set1_ps(-0.0f), (x))
#define hlk_minf _mm256_min_ps
#define hlk_maxf _mm256_max_ps
#define hlk_floorf _mm256_floor_ps
#define hlk_pow2f(n) \
  _mm256_castsi256_ps(_mm256_slli_epi32( \
      _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23))
#define hlk_expof(x) \
  _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(_mm256_castps_si256(x), 23), \
                                      _mm256_set1_epi32(127)))
#define hlk_mantf(x) \
  _mm256_castsi256_ps(_mm256_or_si256( \
      _mm256_and_si256(_mm256_castps_si256(x), _mm256_set1_epi32(~0x7f800000)), \
      _mm256_set1_epi32(0x3f000000)))
#define hlk_selltf(a, b, x, y) _mm256_blendv_ps((y), (x), _mm256_cmp_ps((a), (b), _CMP_NGE_UQ))
#define HLK_SLEEF_F(name, acc) Sleef_##name##f8_##acc##avx2
#define HLK_SLEEF_D(name, acc) Sleef_##name##d4_##acc##avx2
#define HLK_VMATH_TABLE hlk_vmath_avx2
#define HLK_VMATH_NAME "avx2"

#elif defined(HLK_BUILD_SSE4)
/* SSE4.1, for x86-64 CPUs without AVX2: four f32 or two f64 lanes, and no
 * FMA (HLK_NO_FMA), so XLA's f32 exp and tanh, built on fused products,
 * run element by element (vmath.c). */
#include <smmintrin.h>
#include <sleef.h>
typedef __m128 HlkVF;
typedef __m128d HlkVD;
#define HLK_NO_FMA 1
#define HLK_VLF 4
#define HLK_VLD 2
#define hlk_ldf _mm_loadu_ps
#define hlk_stf _mm_storeu_ps
#define hlk_ldd _mm_loadu_pd
#define hlk_std _mm_storeu_pd
#define hlk_addf _mm_add_ps
#define hlk_subf _mm_sub_ps
#define hlk_divf _mm_div_ps
#define hlk_set1f _mm_set1_ps
#define hlk_addd _mm_add_pd
#define hlk_subd _mm_sub_pd
#define hlk_divd _mm_div_pd
#define hlk_set1d _mm_set1_pd
#define HLK_SLEEF_F(name, acc) Sleef_##name##f4_##acc##sse4
#define HLK_SLEEF_D(name, acc) Sleef_##name##d2_##acc##sse4
#define HLK_VMATH_TABLE hlk_vmath_sse4
#define HLK_VMATH_NAME "sse4"

#else
/* Scalar reference: plain libm, one element at a time. */
#define HLK_ISA_SCALAR_BUILD 1
#define HLK_VMATH_TABLE hlk_vmath_scalar
#define HLK_VMATH_NAME "scalar"
#endif

#endif
