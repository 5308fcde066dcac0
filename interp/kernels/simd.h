/* simd.h: the few vector primitives vmath.c needs, for the ISA this copy of
 * vmath.c is compiled for (HLK_BUILD_AVX512, HLK_BUILD_AVX2, or none = scalar
 * reference). Each ISA build defines:
 *   HlkVF / HlkVD         vector of float / double
 *   HLK_VLF / HLK_VLD     lanes
 *   hlk_ldf/hlk_stf, hlk_ldd/hlk_std   unaligned load / store
 *   hlk_{add,div,sub}{f,d}, hlk_set1{f,d}
 *   HLK_SLEEF_F(name, acc) / HLK_SLEEF_D(name, acc)   the SLEEF function
 *   HLK_VMATH_TABLE       the name of the table this build exports
 * Not here: any math (that is SLEEF's job) or dispatch (dispatch.c). */
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
#define HLK_SLEEF_F(name, acc) Sleef_##name##f8_##acc##avx2
#define HLK_SLEEF_D(name, acc) Sleef_##name##d4_##acc##avx2
#define HLK_VMATH_TABLE hlk_vmath_avx2
#define HLK_VMATH_NAME "avx2"

#else
/* Scalar reference: plain libm, one element at a time. */
#define HLK_ISA_SCALAR_BUILD 1
#define HLK_VMATH_TABLE hlk_vmath_scalar
#define HLK_VMATH_NAME "scalar"
#endif

#endif
