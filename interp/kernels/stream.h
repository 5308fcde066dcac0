/* stream.h: writing a large result past the cache.
 *
 * A plain store first reads the line it writes into the cache; a
 * non-temporal store writes whole lines straight to memory, which halves
 * the traffic of a result written once. The result is then not in the
 * cache, so only results of HLK_STREAM_BYTES or more go this way (a
 * quarter of a typical last-level cache: they would not stay there
 * anyway). x86 (SSE2) only; elsewhere the copies are plain. Used by the
 * fused tiles (fuse_run.c) and the copy engine (strided.c). */
#ifndef HLORUN_INTERP_KERNELS_STREAM_H
#define HLORUN_INTERP_KERNELS_STREAM_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

enum { HLK_STREAM_BYTES = 8 << 20 };

/* n bytes from src to dst, whole aligned lines of dst with non-temporal
 * stores; the writer ends with hlk_stream_fence() before others read dst. */
static inline void hlk_stream_copy(void *dst, const void *src, size_t n) {
  char *d = dst;
  const char *s = src;
#if defined(__SSE2__)
  size_t head = (64 - ((uintptr_t)d & 63)) & 63;
  if (head > n) head = n;
  memcpy(d, s, head);
  d += head, s += head, n -= head;
  for (; n >= 64; n -= 64, d += 64, s += 64) {
    __m128i v0 = _mm_loadu_si128((const __m128i *)(const void *)s);
    __m128i v1 = _mm_loadu_si128((const __m128i *)(const void *)(s + 16));
    __m128i v2 = _mm_loadu_si128((const __m128i *)(const void *)(s + 32));
    __m128i v3 = _mm_loadu_si128((const __m128i *)(const void *)(s + 48));
    _mm_stream_si128((__m128i *)(void *)d, v0);
    _mm_stream_si128((__m128i *)(void *)(d + 16), v1);
    _mm_stream_si128((__m128i *)(void *)(d + 32), v2);
    _mm_stream_si128((__m128i *)(void *)(d + 48), v3);
  }
#endif
  memcpy(d, s, n);
}

/* Non-temporal stores are weakly ordered: this orders them before what the
 * thread does next (signalling that its part is done). */
static inline void hlk_stream_fence(void) {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}
#endif
