/* fuse_table.c: runs a fused group whose every result element is a
 * function of one input element at most 16 bits wide (fuse_prog.h:
 * table_input) through a table: the tile program runs once over every bit
 * pattern of that input (256 or 65536 elements), then each result element
 * is looked up by its input's bits. A bf16 activation chain costs about
 * 1.6 ns per element run directly and 0.28 ns looked up (AVX-512, one
 * core). 16-bit lookups use AVX-512 gathers where they are the faster
 * (timed at the first large lookup); a large 16-bit result is written with
 * non-temporal stores.
 *
 * Bit-identical to running the tiles over the data: the table is computed
 * by the same loops, and their results do not depend on an element's
 * position (vector loops finish a tail as one padded vector, vmath.c).
 * Not here: the tile program (fuse.c, fuse_run.c). */
#include "interp/fuse_prog.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

enum {
  TABLE_MIN_RATIO = 16,   /* result elements per table entry, at least */
  LOOKUP_CHUNK = 1 << 16  /* elements per parallel chunk of lookups */
};

/* Bytes of the patterns and the results of the table. */
static size_t table_bytes(const HliFused *f, size_t oes, const size_t *ies) {
  return ((size_t)1 << f->table_bits) * (ies[f->table_input] + oes);
}

bool hli_fused_table_pays(const HliExec *x, const HliFused *f, int64_t n, size_t oes,
                          const size_t *ies) {
  if (f->table_input < 0 || n / TABLE_MIN_RATIO < (int64_t)1 << f->table_bits) return false;
  const char *env = getenv("HLORUN_TABLE");
  if (env && strcmp(env, "0") == 0) return false;
  return !x || !x->mem_limit || x->mem_used + table_bytes(f, oes, ies) <= x->mem_limit;
}

typedef struct Lookup {
  const char *idx;    /* the input's elements: table indices */
  size_t ies;         /* 1 or 2 */
  const char *table;
  size_t oes;
  char *out;
  bool stream;        /* a large result: non-temporal stores (16-bit lookups) */
} Lookup;

/* 16-bit entries of 16-bit indices, eight at a time, written past the cache
 * (the stores, not the lookups, bound this loop): 12% faster on one core
 * than plain stores. Four indices per 64-bit load, lowest address in the
 * low bits (x86, the only place SSE2 exists, is little-endian). */
static void lookup16_stream(const uint16_t *ix, const uint16_t *tab, uint16_t *o, int64_t n) {
  int64_t i = 0;
#if defined(__SSE2__)
  for (; i < n && ((uintptr_t)(o + i) & 15); i++) o[i] = tab[ix[i]];
  for (; i + 8 <= n; i += 8) {
    uint64_t a, b;
    memcpy(&a, ix + i, 8);
    memcpy(&b, ix + i + 4, 8);
    uint64_t ra = (uint64_t)tab[a & 0xffff] | (uint64_t)tab[(a >> 16) & 0xffff] << 16 |
                  (uint64_t)tab[(a >> 32) & 0xffff] << 32 | (uint64_t)tab[a >> 48] << 48;
    uint64_t rb = (uint64_t)tab[b & 0xffff] | (uint64_t)tab[(b >> 16) & 0xffff] << 16 |
                  (uint64_t)tab[(b >> 32) & 0xffff] << 32 | (uint64_t)tab[b >> 48] << 48;
    _mm_stream_si128((__m128i *)(void *)(o + i), _mm_set_epi64x((long long)rb, (long long)ra));
  }
  _mm_sfence();   /* non-temporal stores are weakly ordered */
#endif
  for (; i < n; i++) o[i] = tab[ix[i]];
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define HAVE_GATHER16 1
/* 16-bit entries of 16-bit indices with AVX-512 gathers, 32 at a time: each
 * lane gathers the 4 bytes at its entry (the table has 2 bytes of padding
 * past its end) and one word permute keeps the entries' low halves; written
 * past the cache after an aligned head if stream. bf16 j_bf16_elementwise on
 * an Intel Xeon (2 cores): 4.9-6.5 ms with lookup16_stream, 3.2-3.5 ms so. */
__attribute__((target("avx512f,avx512bw"))) static void lookup16_gather(
    const uint16_t *ix, const uint16_t *tab, uint16_t *o, int64_t n, bool stream) {
  int64_t i = 0;
  if (stream)
    for (; i < n && ((uintptr_t)(o + i) & 63); i++) o[i] = tab[ix[i]];
  const __m512i even = _mm512_set_epi16(62, 60, 58, 56, 54, 52, 50, 48, 46, 44, 42, 40, 38, 36,
                                        34, 32, 30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6,
                                        4, 2, 0);
  for (; i + 32 <= n; i += 32) {
    __m512i v = _mm512_loadu_si512((const void *)(ix + i));
    __m512i lo = _mm512_cvtepu16_epi32(_mm512_castsi512_si256(v));
    __m512i hi = _mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(v, 1));
    __m512i g0 = _mm512_i32gather_epi32(lo, (const void *)tab, 2);
    __m512i g1 = _mm512_i32gather_epi32(hi, (const void *)tab, 2);
    __m512i r = _mm512_permutex2var_epi16(g0, even, g1);
    if (stream) _mm512_stream_si512((void *)(o + i), r);
    else _mm512_storeu_si512((void *)(o + i), r);
  }
  if (stream) _mm_sfence();
  for (; i < n; i++) o[i] = tab[ix[i]];
}
#endif

/* dst[0, hi - lo) = the table entries of input elements [lo, hi). */
static void lookup(const Lookup *L, int64_t lo, int64_t hi, char *dst) {
#define LOOKUP(TI, TO)                                                        \
  {                                                                           \
    const TI *ix = (const TI *)(const void *)L->idx + lo;                    \
    const TO *tab = (const TO *)(const void *)L->table;                      \
    TO *o = (TO *)(void *)dst;                                               \
    for (int64_t i = 0; i < hi - lo; i++) o[i] = tab[ix[i]];                  \
    return;                                                                   \
  }
  if (L->ies == 2) {
    switch (L->oes) {
    case 1: LOOKUP(uint16_t, uint8_t)
    case 2: LOOKUP(uint16_t, uint16_t)
    case 4: LOOKUP(uint16_t, uint32_t)
    case 8: LOOKUP(uint16_t, uint64_t)
    }
  } else {
    switch (L->oes) {
    case 1: LOOKUP(uint8_t, uint8_t)
    case 2: LOOKUP(uint8_t, uint16_t)
    case 4: LOOKUP(uint8_t, uint32_t)
    case 8: LOOKUP(uint8_t, uint64_t)
    }
  }
#undef LOOKUP
  for (int64_t i = lo; i < hi; i++) {   /* other widths (complex results) */
    size_t v = L->ies == 2 ? ((const uint16_t *)(const void *)L->idx)[i]
                           : ((const uint8_t *)L->idx)[i];
    memcpy(dst + (size_t)(i - lo) * L->oes, L->table + v * L->oes, L->oes);
  }
}

/* 16-bit lookups, streamed or not, without gathers. */
static void lookup16_plain(const uint16_t *ix, const uint16_t *tab, uint16_t *o, int64_t n,
                           bool stream) {
  if (stream) {
    lookup16_stream(ix, tab, o, n);
    return;
  }
  for (int64_t i = 0; i < n; i++) o[i] = tab[ix[i]];
}

#if defined(HAVE_GATHER16)
static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Whether the gathers are the faster lookup on this CPU: twice as fast as
 * lookup16_stream on an Intel Xeon (Emerald Rapids), no faster on an AMD
 * Zen 5, and slow where microcode mitigates Gather Data Sampling. So the
 * first lookup of CALIBRATE elements or more times both (they write the
 * same bits) and the rest take the faster; HLORUN_GATHER=0 or 1 forces the
 * choice. -1: not decided yet (a race decides twice, harmlessly). */
enum { CALIBRATE = 16384 };
static int gather_wins = -1;

static bool use_gather(const uint16_t *ix, const uint16_t *tab, uint16_t *o, int64_t n,
                       bool stream) {
  if (!__builtin_cpu_supports("avx512bw")) return false;
  const char *env = getenv("HLORUN_GATHER");   /* per call: tests switch it */
  if (env && *env) return strcmp(env, "0") != 0;
  int g = __atomic_load_n(&gather_wins, __ATOMIC_RELAXED);
  if (g < 0) {
    if (n < CALIBRATE) return false;
    double best[2] = {1e30, 1e30};
    for (int round = 0; round < 2; round++)
      for (int k = 0; k < 2; k++) {
        double t0 = seconds();
        if (k) lookup16_gather(ix, tab, o, CALIBRATE, stream);
        else lookup16_plain(ix, tab, o, CALIBRATE, stream);
        double t = seconds() - t0;
        if (t < best[k]) best[k] = t;
      }
    g = best[1] < best[0];
    __atomic_store_n(&gather_wins, g, __ATOMIC_RELAXED);
  }
  return g;
}
#endif

static void lookup_chunk(void *arg, int64_t lo, int64_t hi) {
  const Lookup *L = arg;
  if (L->ies == 2 && L->oes == 2) {
    const uint16_t *ix = (const uint16_t *)(const void *)L->idx + lo;
    const uint16_t *tab = (const uint16_t *)(const void *)L->table;
    uint16_t *o = (uint16_t *)(void *)L->out + lo;
#if defined(HAVE_GATHER16)
    if (use_gather(ix, tab, o, hi - lo, L->stream)) {
      lookup16_gather(ix, tab, o, hi - lo, L->stream);
      return;
    }
#endif
    lookup16_plain(ix, tab, o, hi - lo, L->stream);
    return;
  }
  lookup(L, lo, hi, L->out + (size_t)lo * L->oes);
}

int hli_fused_run_table(HliExec *x, const HliFused *f, const char *const *in, const size_t *ies,
                        char *out, size_t oes, int64_t n) {
  int32_t k = f->table_input;
  size_t kes = ies[k], entries = (size_t)1 << f->table_bits;
  size_t bytes = table_bytes(f, oes, ies);
  if (hli_scratch_reserve(x, f->root, bytes) != 0) return -1;
  char *mem = malloc(bytes + 2);   /* + padding: lookup16_gather reads 4 bytes an entry */
  const char **tin = malloc(sizeof(char *) * (size_t)f->ninputs);
  int rc = -1;
  if (!mem || !tin) {
    hli_fail_nomem(x, f->root, "out of memory");
    goto out;
  }
  /* Every bit pattern of the input, in order: entry v is the result for v. */
  char *patterns = mem, *table = mem + entries * kes;
  for (size_t v = 0; v < entries; v++) {
    if (kes == 2) ((uint16_t *)(void *)patterns)[v] = (uint16_t)v;
    else ((uint8_t *)patterns)[v] = (uint8_t)v;
  }
  memcpy(tin, in, sizeof(char *) * (size_t)f->ninputs);
  tin[k] = patterns;
  rc = hli_fused_run_tiles(x, f, tin, ies, table, oes, (int64_t)entries);
  if (rc == 0) {
    Lookup L = {in[k], kes, table, oes, out, hli_fused_streams((size_t)n * oes)};
    hli_parallel_for(x, n, LOOKUP_CHUNK, lookup_chunk, &L);
  }
out:
  free(mem);
  free(tin);
  hli_scratch_unreserve(x, bytes);
  return rc;
}
