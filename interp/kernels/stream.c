/* stream.c: the line loop of hlk_stream_copy (stream.h), out of line so it
 * can use the widest stores the CPU has: a 64-byte line is one AVX-512
 * store, two AVX or four SSE2 ones, the copy for this CPU chosen once. */
#include "interp/kernels/stream.h"

#if defined(HLK_STREAM_NT)
#include <immintrin.h>

__attribute__((target("avx512f"))) static void lines_avx512(char *d, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    __m512 v = _mm512_loadu_ps((const float *)(const void *)(s + 64 * i));
    _mm512_stream_ps((float *)(void *)(d + 64 * i), v);
  }
}

__attribute__((target("avx"))) static void lines_avx(char *d, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const float *p = (const float *)(const void *)(s + 64 * i);
    float *q = (float *)(void *)(d + 64 * i);
    __m256 v0 = _mm256_loadu_ps(p), v1 = _mm256_loadu_ps(p + 8);
    _mm256_stream_ps(q, v0);
    _mm256_stream_ps(q + 8, v1);
  }
}

static void lines_sse2(char *d, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const __m128i *p = (const __m128i *)(const void *)(s + 64 * i);
    __m128i *q = (__m128i *)(void *)(d + 64 * i);
    __m128i v0 = _mm_loadu_si128(p), v1 = _mm_loadu_si128(p + 1);
    __m128i v2 = _mm_loadu_si128(p + 2), v3 = _mm_loadu_si128(p + 3);
    _mm_stream_si128(q, v0);
    _mm_stream_si128(q + 1, v1);
    _mm_stream_si128(q + 2, v2);
    _mm_stream_si128(q + 3, v3);
  }
}

HlkStreamLinesFn *hlk_stream_lines_variant(int widest) {
  if (widest >= 2 && __builtin_cpu_supports("avx512f")) return lines_avx512;
  if (widest >= 1 && __builtin_cpu_supports("avx")) return lines_avx;
  return lines_sse2;
}

/* Chosen at the first call (not by an ifunc: its resolver would run before
 * AddressSanitizer is set up, and the sanitizer build crashed in it). */
void hlk_stream_lines(char *d, const char *s, size_t nlines) {
  static HlkStreamLinesFn *chosen;   /* a race stores the same pointer twice */
  HlkStreamLinesFn *fn = __atomic_load_n(&chosen, __ATOMIC_RELAXED);
  if (!fn) {
    fn = hlk_stream_lines_variant(2);
    __atomic_store_n(&chosen, fn, __ATOMIC_RELAXED);
  }
  fn(d, s, nlines);
}
#endif
