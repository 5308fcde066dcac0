/* strided.c: the copy engine of the movement kernels (see movement.h):
 * strided copy plans with contiguous runs as memcpy, zero-stride fills, a
 * cache-blocked path for transposes, and the threaded drivers; also index
 * loading and the shape checks the movement kernels share. Results of
 * HLK_STREAM_BYTES or more are written past the cache (stream.h).
 * It knows nothing about opcodes; the kernels build the plans. */
#include "interp/kernels/movement.h"
#include "interp/kernels/stream.h"
#include "interp/kernels/vectorize.h"
#include <stdio.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* 16-byte elements (c128) move as a pair of words. */
typedef struct HlkU128 { uint64_t lo, hi; } HlkU128;

/* Work below this many bytes stays on the calling thread. */
enum { PAR_BYTES = 1 << 20, PAR_CHUNK_BYTES = 1 << 16 };
/* Bytes of the next contiguous run a large copy prefetches, at most. */
enum { AHEAD_BYTES = 8192 };

void hlk_byte_strides(const int64_t *dims, int rank, size_t es, int64_t *strides) {
  int64_t s = (int64_t)es;
  for (int i = rank - 1; i >= 0; i--) {
    strides[i] = s;
    s *= dims[i];
  }
}

void hlk_plan_init(HlkPlan *p, int rank, const int64_t *dims, const int64_t *ds,
                   const int64_t *ss, size_t es) {
  p->es = es;
  p->rank = 0;
  p->empty = false;
  p->tile = -1;
  int64_t total = 1;
  for (int i = 0; i < rank; i++) {
    if (dims[i] == 0) p->empty = true;
    total *= dims[i];
    if (dims[i] == 1) continue;
    int r = p->rank;
    /* Merge into the previous (outer) dim when stepping the outer dim once is
     * the same as stepping this one n times, on both sides. */
    if (r > 0 && p->ds[r - 1] == ds[i] * dims[i] && p->ss[r - 1] == ss[i] * dims[i]) {
      p->n[r - 1] *= dims[i];
      p->ds[r - 1] = ds[i];
      p->ss[r - 1] = ss[i];
      continue;
    }
    p->n[r] = dims[i];
    p->ds[r] = ds[i];
    p->ss[r] = ss[i];
    p->rank = r + 1;
  }
  p->bytes = p->empty ? 0 : total * (int64_t)es;
  p->stream = p->bytes >= HLK_STREAM_BYTES;
  int r = p->rank;
  int64_t e = (int64_t)es;
  /* Transpose-like: the destination runs along the last dim but the source
   * jumps; some other dim reads the source contiguously. Walk both in tiles. */
  if (r >= 2 && p->ds[r - 1] == e && p->ss[r - 1] != e && p->ss[r - 1] != 0 &&
      p->n[r - 1] >= 4) {
    for (int i = r - 2; i >= 0; i--)
      if (p->ss[i] == e && p->n[i] >= 4) { p->tile = i; break; }
  }
  int64_t outer = 1;
  for (int i = 0; i < r - 1; i++)
    if (i != p->tile) outer *= p->n[i];
  p->outer = p->empty ? 0 : outer;
}

/* ---- innermost kernels, stamped per element size ------------------------ */

#define DEF_RUN1(NAME, T)                                                                \
  HLK_VECTORIZE static void NAME(char *d, const char *s, int64_t n, int64_t ds, int64_t ss) {         \
    if (ss == 0) {                                                                       \
      T v;                                                                               \
      memcpy(&v, s, sizeof v);                                                           \
      if (ds == (int64_t)sizeof(T)) {                                                    \
        T *dp = (T *)(void *)d;                                                          \
        for (int64_t i = 0; i < n; i++) dp[i] = v;                                       \
      } else {                                                                           \
        for (int64_t i = 0; i < n; i++) *(T *)(void *)(d + i * ds) = v;                 \
      }                                                                                  \
    } else if (ds == (int64_t)sizeof(T) && ss == -(int64_t)sizeof(T)) {                  \
      T *dp = (T *)(void *)d;   /* a reversed run: vector loads, lanes permuted */       \
      const T *sp = (const T *)(const void *)s;                                          \
      for (int64_t i = 0; i < n; i++) dp[i] = sp[-i];                                    \
    } else if (ds == (int64_t)sizeof(T)) {                                               \
      T *dp = (T *)(void *)d;                                                            \
      for (int64_t i = 0; i < n; i++) dp[i] = *(const T *)(const void *)(s + i * ss);    \
    } else {                                                                             \
      for (int64_t i = 0; i < n; i++)                                                    \
        *(T *)(void *)(d + i * ds) = *(const T *)(const void *)(s + i * ss);             \
    }                                                                                    \
  }
DEF_RUN1(run1_1, uint8_t)
DEF_RUN1(run1_2, uint16_t)
DEF_RUN1(run1_4, uint32_t)
DEF_RUN1(run1_8, uint64_t)
DEF_RUN1(run1_16, HlkU128)

/* stream: a large result, whose contiguous runs go past the cache (the
 * caller fences). */
static void run1(size_t es, char *d, const char *s, int64_t n, int64_t ds, int64_t ss,
                 bool stream) {
  if (ds == (int64_t)es && ss == (int64_t)es) {
    if (stream) hlk_stream_copy(d, s, (size_t)n * es);
    else memcpy(d, s, (size_t)n * es);
    return;
  }
  switch (es) {
  case 1: run1_1(d, s, n, ds, ss); break;
  case 2: run1_2(d, s, n, ds, ss); break;
  case 4: run1_4(d, s, n, ds, ss); break;
  case 8: run1_8(d, s, n, ds, ss); break;
  case 16: run1_16(d, s, n, ds, ss); break;
  default:
    for (int64_t i = 0; i < n; i++) memcpy(d + i * ds, s + i * ss, es);
  }
}

/* Blocked transpose: dst rows run along b, the source is contiguous along
 * a. A B x B block of source rows is first copied into a buffer (sequential
 * reads, no cache-set conflicts even when the row stride is a power of two),
 * then written out row by row (sequential writes). */
#define DEF_TILE(NAME, T, B)                                                              \
  static void NAME(char *d, const char *s, int64_t na, int64_t dsa, int64_t nb,            \
                   int64_t ssb) {                                                          \
    T buf[B][B];                                                                           \
    for (int64_t j0 = 0; j0 < nb; j0 += B) {                                               \
      int64_t j1 = j0 + B < nb ? j0 + B : nb;                                              \
      for (int64_t i0 = 0; i0 < na; i0 += B) {                                             \
        int64_t i1 = i0 + B < na ? i0 + B : na;                                            \
        for (int64_t j = j0; j < j1; j++)                                                  \
          memcpy(buf[j - j0], s + j * ssb + i0 * (int64_t)sizeof(T),                       \
                 (size_t)(i1 - i0) * sizeof(T));                                           \
        for (int64_t i = i0; i < i1; i++) {                                                \
          T *dp = (T *)(void *)(d + i * dsa);                                              \
          for (int64_t j = j0; j < j1; j++) dp[j] = buf[j - j0][i - i0];                   \
        }                                                                                  \
      }                                                                                    \
    }                                                                                      \
  }
DEF_TILE(tile_1, uint8_t, 64)
DEF_TILE(tile_2, uint16_t, 64)
DEF_TILE(tile_4, uint32_t, 64)
DEF_TILE(tile_8, uint64_t, 32)
DEF_TILE(tile_16, HlkU128, 16)

/* SSE2 paths for 4- and 8-byte elements: whole B x B blocks go from the
 * buffer to the destination a 4 x 4 (2 x 2) square at a time, transposed
 * in registers (shuffles move bits only: NaN payloads pass unchanged), a few
 * destination rows filled in order. While a block is written, the next
 * block's source rows are prefetched: short runs far apart, which the
 * hardware does not follow. A large result (stream) is written with
 * non-temporal stores, whole lines at a time per row: without them every
 * destination line is read before it is overwritten, and the transpose runs
 * at half the copy bandwidth. Partial blocks go through DEF_TILE. */
#if defined(__SSE2__)
enum { BLOCK_BYTES = 256 };   /* a block's row: 64 f32 or 32 f64 */

static inline void prefetch_rows(const char *s, int64_t ssb, int64_t r0, int64_t nr,
                                 size_t bytes) {
  for (int64_t r = r0; r < r0 + nr; r++)
    for (size_t c = 0; c < bytes; c += 64) __builtin_prefetch(s + r * ssb + c);
}

static inline void store_lane(char *d, __m128i v, bool stream) {
  if (stream) _mm_stream_si128((__m128i *)(void *)d, v);
  else _mm_storeu_si128((__m128i *)(void *)d, v);
}

/* Destination rows i.. of a block (the next 16 bytes' worth of elements:
 * 4 f32 or 2 f64 rows) from the buffered source rows buf (row stride
 * BLOCK_BYTES), 16 bytes per row and step, d0 at the first row's start. */
static inline void rows_4(const char *buf, int64_t i, char *d0, int64_t dsa, bool stream) {
  enum { W = BLOCK_BYTES / 4 };   /* elements per buffered row */
  for (int64_t j = 0; j < W; j += 4) {
    const float *b = (const float *)(const void *)(buf + j * BLOCK_BYTES) + i;
    __m128 r0 = _mm_load_ps(b), r1 = _mm_load_ps(b + W);
    __m128 r2 = _mm_load_ps(b + 2 * W), r3 = _mm_load_ps(b + 3 * W);
    _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
    store_lane(d0 + j * 4, _mm_castps_si128(r0), stream);
    store_lane(d0 + dsa + j * 4, _mm_castps_si128(r1), stream);
    store_lane(d0 + 2 * dsa + j * 4, _mm_castps_si128(r2), stream);
    store_lane(d0 + 3 * dsa + j * 4, _mm_castps_si128(r3), stream);
  }
}
static inline void rows_8(const char *buf, int64_t i, char *d0, int64_t dsa, bool stream) {
  enum { W = BLOCK_BYTES / 8 };
  for (int64_t j = 0; j < W; j += 2) {
    const double *b = (const double *)(const void *)(buf + j * BLOCK_BYTES) + i;
    __m128d r0 = _mm_load_pd(b), r1 = _mm_load_pd(b + W);
    store_lane(d0 + j * 8, _mm_castpd_si128(_mm_unpacklo_pd(r0, r1)), stream);
    store_lane(d0 + dsa + j * 8, _mm_castpd_si128(_mm_unpackhi_pd(r0, r1)), stream);
  }
}

/* The whole blocks (fa x fb elements of es = 4 or 8 bytes): B source rows
 * of B elements (BLOCK_BYTES each) into the buffer, then out by rows_4 or
 * rows_8, the next block's rows prefetched meanwhile. */
static inline void tile_sse(size_t es, char *d, const char *s, int64_t fa, int64_t dsa,
                            int64_t fb, int64_t ssb, bool stream) {
  int64_t B = BLOCK_BYTES / (int64_t)es, step = 16 / (int64_t)es;
  _Alignas(16) char buf[BLOCK_BYTES / 4 * BLOCK_BYTES];   /* B rows, at most 64 */
  for (int64_t j0 = 0; j0 < fb; j0 += B) {
    for (int64_t i0 = 0; i0 < fa; i0 += B) {
      for (int64_t j = 0; j < B; j++)
        memcpy(buf + j * BLOCK_BYTES, s + (j0 + j) * ssb + i0 * (int64_t)es, BLOCK_BYTES);
      bool more = i0 + B < fa;
      for (int64_t i = 0; i < B; i += step) {
        if (more) prefetch_rows(s + (i0 + B) * (int64_t)es, ssb, j0 + i, step, BLOCK_BYTES);
        char *d0 = d + (i0 + i) * dsa + j0 * (int64_t)es;
        if (es == 4) rows_4(buf, i, d0, dsa, stream);
        else rows_8(buf, i, d0, dsa, stream);
      }
    }
  }
}
#endif

/* es = 4 or 8: the SSE2 path over the whole blocks, DEF_TILE's on the
 * ragged edges (the last rows of the blocks' columns, then the last
 * columns). */
static void tile_wide(size_t es, char *d, const char *s, int64_t na, int64_t dsa, int64_t nb,
                      int64_t ssb, bool stream) {
  int64_t B = es == 4 ? 64 : 32, fa = na / B * B, fb = nb / B * B;
  void (*any)(char *, const char *, int64_t, int64_t, int64_t, int64_t) =
      es == 4 ? tile_4 : tile_8;
#if defined(__SSE2__)
  stream = stream && ((uintptr_t)d & 15) == 0 && dsa % 16 == 0;
  if (es == 4) tile_sse(4, d, s, fa, dsa, fb, ssb, stream);
  else tile_sse(8, d, s, fa, dsa, fb, ssb, stream);
#else
  (void)stream;
  fa = fb = 0;
#endif
  if (fa < na) any(d + fa * dsa, s + fa * (int64_t)es, na - fa, dsa, fb, ssb);
  if (fb < nb) any(d + fb * (int64_t)es, s + fb * ssb, na, dsa, nb - fb, ssb);
}

static void run_tile(size_t es, char *d, const char *s, int64_t na, int64_t dsa, int64_t nb,
                     int64_t ssb, bool stream) {
  switch (es) {
  case 1: tile_1(d, s, na, dsa, nb, ssb); break;
  case 2: tile_2(d, s, na, dsa, nb, ssb); break;
  case 4: case 8: tile_wide(es, d, s, na, dsa, nb, ssb, stream); break;
  case 16: tile_16(d, s, na, dsa, nb, ssb); break;
  default:
    for (int64_t i = 0; i < na; i++)
      run1(es, d + i * dsa, s + i * (int64_t)es, nb, (int64_t)es, ssb, false);
  }
}

/* ---- outer loop ---------------------------------------------------------- */

/* Run outer positions [lo, hi) of the plan (row-major over the dims that
 * are not handled by the innermost kernel). */
static void plan_range(const HlkPlan *p, char *dst, const char *src, int64_t lo, int64_t hi,
                       HlkRowFn fn) {
  if (p->empty || lo >= hi) return;
  if (p->rank == 0) {
    if (fn)
      fn(dst, src, 1, (int64_t)p->es, (int64_t)p->es);
    else
      memcpy(dst, src, p->es);
    return;
  }
  int last = p->rank - 1;
  /* The outer dims, outermost first. */
  int od[HLK_MAX_RANK];
  int no = 0;
  for (int i = 0; i < last; i++)
    if (i != p->tile) od[no++] = i;
  int64_t idx[HLK_MAX_RANK];
  int64_t doff = 0, soff = 0, rest = lo;
  for (int k = no - 1; k >= 0; k--) {
    int64_t n = p->n[od[k]];
    idx[k] = rest % n;
    rest /= n;
    doff += idx[k] * p->ds[od[k]];
    soff += idx[k] * p->ss[od[k]];
  }
  for (int64_t pos = lo; pos < hi; pos++) {
    if (fn)
      fn(dst + doff, src + soff, p->n[last], p->ds[last], p->ss[last]);
    else if (p->tile >= 0)
      run_tile(p->es, dst + doff, src + soff, p->n[p->tile], p->ds[p->tile], p->n[last],
               p->ss[last], p->stream);
    else
      run1(p->es, dst + doff, src + soff, p->n[last], p->ds[last], p->ss[last], p->stream);
    for (int k = no - 1; k >= 0; k--) {   /* odometer */
      int d = od[k];
      doff += p->ds[d];
      soff += p->ss[d];
      if (++idx[k] < p->n[d]) break;
      doff -= p->ds[d] * p->n[d];
      soff -= p->ss[d] * p->n[d];
      idx[k] = 0;
    }
  }
  if (p->stream) hlk_stream_fence();
}

void hlk_plan_run(const HlkPlan *p, char *dst, const char *src) {
  plan_range(p, dst, src, 0, p->outer, NULL);
}

void hlk_plan_untile(HlkPlan *p) {
  if (p->tile < 0) return;
  p->tile = -1;
  int64_t outer = 1;
  for (int i = 0; i < p->rank - 1; i++) outer *= p->n[i];
  p->outer = p->empty ? 0 : outer;
}

void hlk_plan_apply(const HlkPlan *p, char *dst, const char *src, HlkRowFn fn) {
  plan_range(p, dst, src, 0, p->outer, fn);
}

/* Threaded runs split the plan into units: one outer position times one
 * piece of the kernel's main dim (the blocked dim for transposes, else the
 * innermost dim), so even a single huge row or a 2-D transpose (no outer
 * dims) spreads over the threads. */
typedef struct UnitJob {
  const HlkPlan *p;
  char *dst;
  const char *src;
  int64_t piece;    /* elements of the split dim per unit */
  int64_t npieces;  /* units per outer position */
} UnitJob;

/* Where unit u starts (byte offsets) and how many elements of the split
 * dim it covers. */
static int64_t unit_at(const UnitJob *j, int64_t u, int64_t *doff, int64_t *soff) {
  const HlkPlan *p = j->p;
  int last = p->rank - 1, k = p->tile >= 0 ? p->tile : last;
  int64_t o = u / j->npieces, c = u % j->npieces;
  *doff = *soff = 0;
  for (int d = last - 1; d >= 0; d--) {   /* unravel the outer position */
    if (d == p->tile) continue;
    int64_t i = o % p->n[d];
    o /= p->n[d];
    *doff += i * p->ds[d];
    *soff += i * p->ss[d];
  }
  int64_t start = c * j->piece;
  *doff += start * p->ds[k];
  *soff += start * p->ss[k];
  return p->n[k] - start < j->piece ? p->n[k] - start : j->piece;
}

static void unit_job(void *arg, int64_t lo, int64_t hi) {
  const UnitJob *j = arg;
  const HlkPlan *p = j->p;
  int last = p->rank - 1, k = p->tile >= 0 ? p->tile : last;
  /* Contiguous runs of a large copy: the next run's source is fetched while
   * this one is copied (runs of a few KB far apart defeat the hardware,
   * which does not prefetch across pages). */
  bool ahead = p->stream && p->tile < 0 && p->ss[last] == (int64_t)p->es;
  int64_t doff, soff, cnt = unit_at(j, lo, &doff, &soff);
  for (int64_t u = lo; u < hi; u++) {
    int64_t ndoff = 0, nsoff = 0, ncnt = u + 1 < hi ? unit_at(j, u + 1, &ndoff, &nsoff) : 0;
    if (ahead && ncnt) {
      size_t bytes = (size_t)ncnt * p->es;
      for (size_t b = 0; b < bytes && b < AHEAD_BYTES; b += 64)
        __builtin_prefetch(j->src + nsoff + b);
    }
    if (p->tile >= 0)
      run_tile(p->es, j->dst + doff, j->src + soff, cnt, p->ds[k], p->n[last], p->ss[last],
               p->stream);
    else
      run1(p->es, j->dst + doff, j->src + soff, cnt, p->ds[last], p->ss[last], p->stream);
    doff = ndoff, soff = nsoff, cnt = ncnt;
  }
  if (p->stream) hlk_stream_fence();
}

typedef struct CopyJob { char *dst; const char *src; bool stream; } CopyJob;

static void copy_job(void *arg, int64_t lo, int64_t hi) {
  CopyJob *j = arg;
  if (!j->stream) {
    memcpy(j->dst + lo, j->src + lo, (size_t)(hi - lo));
    return;
  }
  hlk_stream_copy(j->dst + lo, j->src + lo, (size_t)(hi - lo));
  hlk_stream_fence();
}

/* n bytes, over the threads if that pays; stream: past the cache. */
static void copy_par(HliExec *x, void *dst, const void *src, size_t n, bool stream) {
  if (n == 0 || dst == src) return;
  if (n < PAR_BYTES || hli_num_threads(x) <= 1) {
    memcpy(dst, src, n);
    return;
  }
  CopyJob j = { dst, src, stream };
  hli_parallel_for(x, (int64_t)n, PAR_BYTES / 2, copy_job, &j);
}

void hlk_plan_run_par(HliExec *x, const HlkPlan *p, char *dst, const char *src) {
  if (p->empty) return;
  if (p->bytes < PAR_BYTES || hli_num_threads(x) <= 1 || p->rank == 0) {
    hlk_plan_run(p, dst, src);
    return;
  }
  if (p->rank == 1 && p->ds[0] == (int64_t)p->es && p->ss[0] == (int64_t)p->es) {
    copy_par(x, dst, src, (size_t)p->bytes, p->stream);
    return;
  }
  int last = p->rank - 1, k = p->tile >= 0 ? p->tile : last;
  /* Bytes written per element of the split dim. */
  int64_t per = (int64_t)p->es * (p->tile >= 0 ? p->n[last] : 1);
  int64_t piece = PAR_CHUNK_BYTES / per;
  if (p->tile >= 0) piece = (piece + 63) & ~(int64_t)63;   /* whole tiles */
  if (piece < 1) piece = 1;
  if (piece > p->n[k]) piece = p->n[k];
  UnitJob j = { p, dst, src, piece, (p->n[k] + piece - 1) / piece };
  hli_parallel_for(x, p->outer * j.npieces, 1, unit_job, &j);
}

void hlk_memcpy_par(HliExec *x, void *dst, const void *src, size_t n) {
  copy_par(x, dst, src, n, n >= HLK_STREAM_BYTES);
}

void hlk_fill(void *dst, const void *val, int64_t n, size_t es) {
  if (n <= 0) return;
  run1(es, dst, val, n, (int64_t)es, 0, false);
}

/* ---- indices ------------------------------------------------------------- */

bool hlk_is_index_type(HloDtype t) {
  return t >= 0 && t < HLO_NUM_DTYPES && hlc_dtype_is_int(t);
}

int64_t hlk_load_index(HloDtype t, const void *p) {
  int64_t v;
  hlk_load_indices(t, p, 1, &v);
  return v;
}

/* Sub-byte integers sit one per byte; only their low bits count. */
static int64_t sub_byte(HloDtype t, uint8_t b) {
  int bits = hlc_dtype_bits(t);
  uint8_t m = (uint8_t)((1u << bits) - 1u);
  if (hlc_dtype_kind(t) == HLO_KIND_UINT) return b & m;
  int64_t v = b & m;
  return v >= (1 << (bits - 1)) ? v - (1 << bits) : v;
}

void hlk_load_indices(HloDtype t, const void *src, int64_t n, int64_t *dst) {
#define LOAD(T)                                                                 \
  do {                                                                          \
    const T *s = src;                                                           \
    for (int64_t i = 0; i < n; i++) dst[i] = (int64_t)s[i];                     \
  } while (0)
  switch (t) {
  case HLO_S8: LOAD(int8_t); break;
  case HLO_S16: LOAD(int16_t); break;
  case HLO_S32: LOAD(int32_t); break;
  case HLO_S64: LOAD(int64_t); break;
  case HLO_U8: LOAD(uint8_t); break;
  case HLO_U16: LOAD(uint16_t); break;
  case HLO_U32: LOAD(uint32_t); break;
  case HLO_U64: LOAD(uint64_t); break;
  default: {
    const uint8_t *s = src;
    for (int64_t i = 0; i < n; i++) dst[i] = sub_byte(t, s[i]);
  }
  }
#undef LOAD
}

/* ---- shape checks ---------------------------------------------------------- */

int hlk_check_array(HliExec *x, const HloInstr *ins, const HloShape *s, const char *what) {
  if (!hlc_dtype_is_array(s->dtype))
    return hli_unsupported(x, ins, "%s must be an array, not %s", what,
                           hlc_dtype_name(s->dtype));
  return hlk_check_rank(x, ins, s, what);
}

int hlk_check_operands(HliExec *x, const HloInstr *ins, int nops) {
  if (ins->nops != nops)
    return hli_fail(x, ins, "expects %d operand%s, has %d", nops, nops == 1 ? "" : "s",
                    (int)ins->nops);
  for (int i = 0; i < nops; i++)
    if (hlk_check_array(x, ins, &ins->ops[i]->shape, "operand") != 0) return -1;
  return hlk_check_array(x, ins, &ins->shape, "result");
}

int hlk_check_rank(HliExec *x, const HloInstr *ins, const HloShape *s, const char *what) {
  if (s->rank < 0 || s->rank > HLK_MAX_RANK)
    return hli_unsupported(x, ins, "%s has rank %d (at most %d)", what, (int)s->rank,
                           HLK_MAX_RANK);
  for (int i = 0; i < s->rank; i++) {
    if (s->dynamic && s->dynamic[i] != HLO_DIM_STATIC)
      return hli_unsupported(x, ins, "%s has a dynamic dimension %d", what, i);
    if (s->dims[i] < 0) return hli_fail(x, ins, "%s has a negative dimension %d", what, i);
  }
  return 0;
}

int hlk_check_result(HliExec *x, const HloInstr *ins, HloDtype t, int r, const int64_t *dims) {
  const HloShape *s = &ins->shape;
  if (hlk_check_array(x, ins, s, "result") != 0) return -1;
  bool ok = s->dtype == t && s->rank == r;
  for (int i = 0; ok && i < r; i++) ok = s->dims[i] == dims[i];
  if (ok) return 0;
  char want[512];
  int n = snprintf(want, sizeof want, "%s[", hlc_dtype_name(t));
  for (int i = 0; i < r && n < (int)sizeof want - 24; i++)
    n += snprintf(want + n, sizeof want - (size_t)n, "%s%lld", i ? "," : "", (long long)dims[i]);
  snprintf(want + n, sizeof want - (size_t)n, "]");
  return hli_fail(x, ins, "result shape does not match the operands: expected %s", want);
}

int hlk_check_dim_list(HliExec *x, const HloInstr *ins, const HloI64s *v, int rank,
                       bool must_sort, const char *what) {
  for (int i = 0; i < v->n; i++) {
    if (v->v[i] < 0 || v->v[i] >= rank)
      return hli_fail(x, ins, "%s: dimension %lld out of range for rank %d", what,
                      (long long)v->v[i], rank);
    for (int j = 0; j < i; j++) {
      if (v->v[j] == v->v[i])
        return hli_fail(x, ins, "%s: dimension %lld repeated", what, (long long)v->v[i]);
      if (must_sort && v->v[j] > v->v[i])
        return hli_fail(x, ins, "%s must be sorted", what);
    }
  }
  return 0;
}
