/* stream.h: writing a large result past the cache.
 *
 * A plain store first reads the line it writes into the cache; a
 * non-temporal store writes whole lines straight to memory, which halves
 * the traffic of a result written once. The result is then not in the
 * cache, so only results of HLK_STREAM_BYTES or more go this way (a
 * quarter of a typical last-level cache: they would not stay there
 * anyway). x86-64 with GCC only; elsewhere the copies are plain. Used by the
 * fused tiles (fuse_run.c) and the copy engine (strided.c). */
#ifndef HLORUN_INTERP_KERNELS_STREAM_H
#define HLORUN_INTERP_KERNELS_STREAM_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <emmintrin.h>
#define HLK_STREAM_NT 1
/* nlines whole lines from s to the 64-byte aligned d (stream.c), with the
 * widest stores this CPU has. */
void hlk_stream_lines(char *d, const char *s, size_t nlines);
/* The copy with stores of at most 16 (widest 0), 32 (1) or 64 bytes (2)
 * that this CPU supports: for tests. */
typedef void HlkStreamLinesFn(char *d, const char *s, size_t nlines);
HlkStreamLinesFn *hlk_stream_lines_variant(int widest);
#endif

enum { HLK_STREAM_BYTES = 8 << 20 };

/* n bytes from src to dst, whole aligned lines of dst with non-temporal
 * stores; the writer ends with hlk_stream_fence() before others read dst. */
static inline void hlk_stream_copy(void *dst, const void *src, size_t n) {
  char *d = dst;
  const char *s = src;
#if defined(HLK_STREAM_NT)
  size_t head = (64 - ((uintptr_t)d & 63)) & 63;
  if (head > n) head = n;
  memcpy(d, s, head);
  d += head, s += head, n -= head;
  hlk_stream_lines(d, s, n / 64);
  d += n & ~(size_t)63, s += n & ~(size_t)63, n &= 63;
#endif
  memcpy(d, s, n);
}

/* Non-temporal stores are weakly ordered: this orders them before what the
 * thread does next (signalling that its part is done). */
static inline void hlk_stream_fence(void) {
#if defined(HLK_STREAM_NT)
  _mm_sfence();
#endif
}
#endif
