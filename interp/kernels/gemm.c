/* gemm.c: the blocked GEMM driver (GotoBLAS-style): splits C into tiles
 * that run in parallel, packs A and B blocks into micro-panels, and calls
 * the micro-kernel of the chosen instruction set for each register tile.
 * Also chooses that instruction set once per process.
 *
 * Blocking: KC values of the shared dimension per pass (a B sliver of
 * KC x NR stays in L1), MC rows of A per block (MC x KC in L2), up to NC
 * columns of B per tile. Each parallel task owns one column tile of one
 * batch element and a run of its MC row blocks, and packs its own panels
 * (each B panel once, for all its row blocks), so tasks never synchronise.
 * Stamped for f32, f64, u32, u64 and the int16-pair kernel (i16: two
 * shared-dim steps per packed 32-bit word, so its blocks start on even
 * steps).
 * Not here: the micro-kernels (gemm_ukr.c), dimension numbers (dot.c).
 */
#include "config.h"
#include "interp/kernels/gemm.h"
#include "interp/kernels/vectorize.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

enum {
  KC_MAX_4 = 256,   /* shared-dim block of 4-byte types */
  MR_MAX = 32       /* rows of a micro-kernel sliver, at most */
};

/* ---- Instruction-set choice -------------------------------------------- */

static const HlkUkrTable *active;
static pthread_once_t isa_once = PTHREAD_ONCE_INIT;

/* Without HLO_HAVE_X86_ISAS (configure: not x86-64) only the scalar
 * micro-kernels are built. */
static bool cpu_has(const char *isa) {
#if HLO_HAVE_X86_ISAS
  __builtin_cpu_init();
  if (strcmp(isa, "avx512") == 0)   /* DQ, BW: vpmullq, vpmaddwd (dot.mk) */
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512bw");
  if (strcmp(isa, "avx2") == 0) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (strcmp(isa, "sse4") == 0) return __builtin_cpu_supports("sse4.1");
#endif
  return strcmp(isa, "scalar") == 0;
}

static const HlkUkrTable *table_named(const char *name) {
#if HLO_HAVE_X86_ISAS
  if (strcmp(name, "avx512") == 0) return &hlk_ukr_avx512;
  if (strcmp(name, "avx2") == 0) return &hlk_ukr_avx2;
#endif
  /* SSE4 machines run the portable kernel (baseline x86-64 vector code) */
  if (strcmp(name, "scalar") == 0 || strcmp(name, "sse4") == 0) return &hlk_ukr_scalar;
  return NULL;
}

static void choose_isa(void) {
  /* HLORUN_ISA forces a path (each one gets tested); a request the CPU
   * cannot run falls back to the automatic choice. */
  const char *env = getenv("HLORUN_ISA");
  if (env && table_named(env) && cpu_has(env)) { active = table_named(env); return; }
  if (cpu_has("avx512")) active = table_named("avx512");
  else if (cpu_has("avx2")) active = table_named("avx2");
  else active = &hlk_ukr_scalar;
}

static const HlkUkrTable *ukr(void) {
  pthread_once(&isa_once, choose_isa);
  return active;
}

const char *hlk_gemm_isa(void) { return ukr()->isa; }
const HlkUkrTable *hlk_gemm_ukr(void) { return ukr(); }
int hlk_gemm_mr_f32(void) { return ukr()->mr_f32; }
int hlk_gemm_mr_f64(void) { return ukr()->mr_f64; }
int hlk_gemm_mr_u32(void) { return ukr()->mr_u32; }
int hlk_gemm_mr_u64(void) { return ukr()->mr_u64; }
int hlk_gemm_mr_i16(void) { return ukr()->mr_i16; }

bool hlk_gemm_force_isa(const char *name) {
  ukr();
  const HlkUkrTable *t = name ? table_named(name) : NULL;
  if (!t || !cpu_has(name)) return false;
  active = t;
  return true;
}

/* ---- Per-thread panel memory ------------------------------------------ */

/* Packing panels are a few MB; allocating them per call would cost a page
 * fault (and the kernel zeroing a page) every 4 KB, which measured as a third
 * of a 1024^3 matmul. So each thread keeps its largest panel buffer, freed
 * when the thread exits (pool workers) or with the process (main thread). */
typedef struct Scratch { void *p; size_t n; } Scratch;
static _Thread_local Scratch scratch;
static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

static void scratch_free(void *p) { free(p); }
static void scratch_init(void) { pthread_key_create(&scratch_key, scratch_free); }

static void *scratch_get(size_t n) {
  if (scratch.n >= n) return scratch.p;
  pthread_once(&scratch_once, scratch_init);
  void *p = aligned_alloc(64, (n + 63) & ~(size_t)63);
  if (!p) return NULL;
  free(scratch.p);
  scratch.p = p;
  scratch.n = n;
  pthread_setspecific(scratch_key, p);
  return p;
}

/* ---- Blocking ----------------------------------------------------------- */

typedef struct Plan {
  const HlkGemm *g;
  int mr, nr;
  int64_t mc, nc, kc;          /* block sizes (mc multiple of mr, nc of nr) */
  int64_t mtiles, ntiles;      /* row blocks and column tiles of C per batch element */
  int64_t mgroups;             /* tasks per column tile: each runs a run of row blocks */
  bool a_rows;                 /* A is read in place by the f32 rows kernel (full slivers) */
  int failed;                  /* a task could not allocate scratch */
} Plan;

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

/* Shared-dim block for k steps: k itself up to kc_max, else k cut into
 * equal blocks of at most kc_max. A function of k alone, never of the
 * thread count or the tiling: it fixes the summation order (gemm.h). */
static int64_t kblock(int64_t k, int64_t kc_max) {
  return k < kc_max ? (k > 0 ? k : 1) : ceil_div(k, ceil_div(k, kc_max));
}
int64_t hlk_gemm_kc_f32(int64_t k) { return kblock(k, KC_MAX_4); }

/* Choose block sizes: KC and MC from the cache budget of the element size,
 * NC up to 2048 columns. A task is one column tile of one batch element and
 * a run of its row blocks: it packs each KC x NC panel of B once and reuses
 * it for all its row blocks. With several threads the product is cut into
 * at least two tasks per thread (so a thread slowed by another process
 * does not hold up the rest), in the way that packs least: every column
 * tile packs all of A (m x k) again, every run of row blocks all of B
 * (k x n) again, so the cut minimises m * column tiles + n * row runs.
 * Column tiles stay at least 8 slivers wide, row runs 4 slivers tall; runs
 * of more rows than the cache needs get row blocks of their own. Tiles and
 * runs are split evenly so the last is not a sliver. Ties go to columns. */
static void plan_blocks(Plan *pl, const HlkGemm *g, int mr, int nr, size_t esize, int kp,
                        int threads) {
  pl->g = g;
  pl->mr = mr;
  pl->nr = nr;
  pl->failed = 0;
  int64_t kc_max = esize == 4 ? KC_MAX_4 : 192;
  int64_t mc_max = esize == 4 ? 264 : 168;
  int64_t nc_max = 2048;
  pl->kc = kblock(g->k, kc_max);
  /* Blocks of the pair kernel start on even steps (the pairs of a packed A
   * never straddle two blocks). */
  if (pl->kc < g->k) pl->kc = round_up(pl->kc, kp);
  int64_t nt0 = ceil_div(g->n, nc_max), nt_max = nt0, runs_max = 1;
  if (threads > 1) {
    while (ceil_div(g->n, nt_max + 1) >= 8 * nr) nt_max++;
    while (ceil_div(g->m, runs_max + 1) >= 4 * mr) runs_max++;
  }
  int64_t want = threads > 1 ? 2 * threads : 1, best_nt = nt0, best_runs = 1;
  int64_t best_tasks = 0, best_cost = 0;
  for (int64_t nt = nt0; nt <= nt_max; nt++) {
    int64_t runs = ceil_div(want, g->batch * nt);
    if (runs > runs_max) runs = runs_max;
    if (runs < 1) runs = 1;
    int64_t tasks = g->batch * nt * runs, cost = g->m * nt + g->n * runs;
    if (tasks > want) tasks = want;
    if (tasks > best_tasks || (tasks == best_tasks && cost <= best_cost)) {
      best_tasks = tasks;
      best_cost = cost;
      best_nt = nt;
      best_runs = runs;
    }
  }
  pl->mtiles = ceil_div(g->m, mc_max);
  if (pl->mtiles < best_runs) pl->mtiles = best_runs;
  pl->mc = round_up(ceil_div(g->m, pl->mtiles), mr);
  pl->nc = round_up(ceil_div(g->n, best_nt), nr);
  pl->mtiles = ceil_div(g->m, pl->mc);
  pl->ntiles = ceil_div(g->n, pl->nc);
  pl->mgroups = best_runs < pl->mtiles ? best_runs : pl->mtiles;
}

/* ---- The typed driver, stamped for f32, f64, u32 and u64 --------------- */

/* One packed row of B: the whole-sliver sizes the micro-kernels use are
 * copied with constant sizes, which the compiler inlines as a few vector
 * moves instead of a memcpy call per row (about 2% of an MLP's time). */
static inline void copy_row(void *dst, const void *src, size_t n) {
  switch (n) {
  case 32: memcpy(dst, src, 32); return;
  case 64: memcpy(dst, src, 64); return;
  case 128: memcpy(dst, src, 128); return;
  default: memcpy(dst, src, n); return;
  }
}

/* Packing: rows [i0, i0+mc) x shared [p0, p0+kc) of A into MR-row slivers
 * (zero-padded past the last row), and shared x columns of B into NR-column
 * slivers, widening bf16/f16 sources on the way. */
#define DEFINE_PACK(T, S, NAME, LOAD)                                                        \
  static void pack_a_##NAME(const S *a, int64_t rs, int64_t cs, int64_t mc, int64_t kc,      \
                            int mr, T *dst) {                                                \
    for (int64_t i0 = 0; i0 < mc; i0 += mr) {                                                \
      int64_t rows = mc - i0 < mr ? mc - i0 : mr;                                            \
      for (int64_t p = 0; p < kc; p++) {                                                     \
        const S *src = a + i0 * rs + p * cs;                                                 \
        int64_t i = 0;                                                                       \
        for (; i < rows; i++) dst[i] = LOAD(src[i * rs]);                                    \
        for (; i < mr; i++) dst[i] = 0;                                                      \
        dst += mr;                                                                           \
      }                                                                                      \
    }                                                                                        \
  }                                                                                          \
  static void pack_b_##NAME(const S *b, int64_t rs, int64_t cs, int64_t kc, int64_t nc,      \
                            int nr, T *dst) {                                                \
    for (int64_t j0 = 0; j0 < nc; j0 += nr) {                                                \
      int64_t cols = nc - j0 < nr ? nc - j0 : nr;                                            \
      for (int64_t p = 0; p < kc; p++) {                                                     \
        const S *src = b + p * rs + j0 * cs;                                                 \
        int64_t j = 0;                                                                       \
        if (cs == 1 && sizeof(S) == sizeof(T)) {                                             \
          copy_row(dst, src, (size_t)cols * sizeof(T));                                      \
          j = cols;                                                                          \
        } else if (cs == 1) {                                                                \
          widen_##NAME(src, dst, cols);                                                      \
          j = cols;                                                                          \
        } else if (cs == 1 || rs != 1) {                                                     \
          for (; j < cols; j++) dst[j] = LOAD(src[j * cs]);                                 \
        } else {                                                                             \
          j = cols;   /* filled column by column below */                                    \
        }                                                                                    \
        for (; j < nr; j++) dst[j] = 0;                                                      \
        dst += nr;                                                                           \
      }                                                                                      \
      if (cs != 1 && rs == 1) {                                                              \
        /* B stored transposed: walk each column along its contiguous run. */               \
        T *sl = dst - kc * nr;                                                               \
        for (int64_t j = 0; j < cols; j++) {                                                 \
          const S *src = b + (j0 + j) * cs;                                                  \
          for (int64_t p = 0; p < kc; p++) sl[p * nr + j] = LOAD(src[p]);                    \
        }                                                                                    \
      }                                                                                      \
    }                                                                                        \
  }

/* Contiguous runs of B widen in vector code (exact: a shift for bf16). */
HLK_VECTORIZE static void widen_f32_bf16(const uint16_t *restrict s, float *restrict d, int64_t n) {
  for (int64_t i = 0; i < n; i++) d[i] = hlk_bf16_to_f32(s[i]);
}
static void widen_f32_f16(const uint16_t *s, float *d, int64_t n) {
  for (int64_t i = 0; i < n; i++) d[i] = hlk_f16_to_f32(s[i]);
}
#define widen_f32(s, d, n) memcpy(d, s, (size_t)(n) * sizeof(float))
#define widen_f64(s, d, n) memcpy(d, s, (size_t)(n) * sizeof(double))
#define widen_u32(s, d, n) memcpy(d, s, (size_t)(n) * sizeof(uint32_t))
#define widen_u64(s, d, n) memcpy(d, s, (size_t)(n) * sizeof(uint64_t))

#define SAME(v) (v)
DEFINE_PACK(float, float, f32, SAME)
DEFINE_PACK(float, uint16_t, f32_bf16, hlk_bf16_to_f32)
DEFINE_PACK(float, uint16_t, f32_f16, hlk_f16_to_f32)
DEFINE_PACK(double, double, f64, SAME)
DEFINE_PACK(uint32_t, uint32_t, u32, SAME)
DEFINE_PACK(uint64_t, uint64_t, u64, SAME)

/* The pair kernel's packing (hlk_gemm_i16): int16 values, two shared-dim
 * steps to a 32-bit word (step 2q low, 2q+1 high, zero past kc). */
static inline uint32_t pair(int16_t lo, int16_t hi) {
  return (uint32_t)(uint16_t)lo | (uint32_t)(uint16_t)hi << 16;
}
HLK_VECTORIZE static void interleave_i16(const int16_t *restrict r0, const int16_t *restrict r1,
                                         int64_t n, uint32_t *restrict d) {
  for (int64_t j = 0; j < n; j++) d[j] = pair(r0[j], r1[j]);
}
static void pack_a_i16(const int16_t *a, int64_t rs, int64_t cs, int64_t mc, int64_t kc, int mr,
                       uint32_t *dst) {
  for (int64_t i0 = 0; i0 < mc; i0 += mr) {
    int64_t rows = mc - i0 < mr ? mc - i0 : mr;
    for (int64_t p = 0; p < kc; p += 2) {
      const int16_t *src = a + i0 * rs + p * cs;
      int64_t i = 0;
      if (p + 1 < kc) for (; i < rows; i++) dst[i] = pair(src[i * rs], src[i * rs + cs]);
      else for (; i < rows; i++) dst[i] = pair(src[i * rs], 0);
      for (; i < mr; i++) dst[i] = 0;
      dst += mr;
    }
  }
}
static void pack_b_i16(const int16_t *b, int64_t rs, int64_t cs, int64_t kc, int64_t nc, int nr,
                       uint32_t *dst) {
  static const int16_t zeros[64];
  for (int64_t j0 = 0; j0 < nc; j0 += nr) {
    int64_t cols = nc - j0 < nr ? nc - j0 : nr;
    for (int64_t p = 0; p < kc; p += 2) {
      const int16_t *r0 = b + p * rs + j0 * cs, *r1 = p + 1 < kc ? r0 + rs : NULL;
      int64_t j = 0;
      if (cs == 1) {
        interleave_i16(r0, r1 ? r1 : zeros, cols, dst);   /* cols <= nr <= 64 */
        j = cols;
      } else {
        for (; j < cols; j++) dst[j] = pair(r0[j * cs], r1 ? r1[j * cs] : 0);
      }
      for (; j < nr; j++) dst[j] = 0;
      dst += nr;
    }
  }
}
static void pack_a_i16_src(int src, const void *a, int64_t off, int64_t rs, int64_t cs,
                           int64_t mc, int64_t kc, int mr, uint32_t *dst) {
  (void)src;
  pack_a_i16((const int16_t *)a + off, rs, cs, mc, kc, mr, dst);
}
static void pack_b_i16_src(int src, const void *b, int64_t off, int64_t rs, int64_t cs,
                           int64_t kc, int64_t nc, int nr, uint32_t *dst) {
  (void)src;
  pack_b_i16((const int16_t *)b + off, rs, cs, kc, nc, nr, dst);
}

/* d[t*mr + lane] = src[lane][t] for t < n, lane < mr: mr rows of 4-byte
 * values interleaved into a packed panel, written in order. With SSE, 4x4
 * blocks are transposed in registers (shuffles move bits only, so f32
 * NaN payloads and u32 values pass unchanged). */
void hlk_interleave32(const uint32_t *const *src, int64_t mr, int64_t n, uint32_t *d) {
  int64_t t = 0;
#if defined(__SSE2__)
  int64_t g4 = mr / 4 * 4;
  for (; t + 4 <= n; t += 4) {
    for (int64_t l = 0; l < g4; l += 4) {
      __m128 r0 = _mm_loadu_ps((const float *)(const void *)(src[l] + t));
      __m128 r1 = _mm_loadu_ps((const float *)(const void *)(src[l + 1] + t));
      __m128 r2 = _mm_loadu_ps((const float *)(const void *)(src[l + 2] + t));
      __m128 r3 = _mm_loadu_ps((const float *)(const void *)(src[l + 3] + t));
      _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
      _mm_storeu_ps((float *)(void *)(d + t * mr + l), r0);
      _mm_storeu_ps((float *)(void *)(d + (t + 1) * mr + l), r1);
      _mm_storeu_ps((float *)(void *)(d + (t + 2) * mr + l), r2);
      _mm_storeu_ps((float *)(void *)(d + (t + 3) * mr + l), r3);
    }
    for (int64_t l = g4; l < mr; l++)
      for (int64_t k = 0; k < 4; k++) d[(t + k) * mr + l] = src[l][t + k];
  }
#endif
  for (; t < n; t++)
    for (int64_t l = 0; l < mr; l++) d[t * mr + l] = src[l][t];
}

/* Row-major A (unit column stride) of a 4-byte type: each sliver's rows
 * interleaved by hlk_interleave32, rows past mc read as zeros, instead of
 * one strided load per element (attention's probs.V product spent 45% of
 * its time packing A so). Bits move unchanged. */
static void pack_a_rows32(const uint32_t *a, int64_t rs, int64_t mc, int64_t kc, int mr,
                          uint32_t *dst) {
  static const uint32_t zeros[KC_MAX_4];
  const uint32_t *src[MR_MAX];
  for (int64_t i0 = 0; i0 < mc; i0 += mr) {
    for (int64_t i = 0; i < mr; i++) src[i] = i0 + i < mc ? a + (i0 + i) * rs : zeros;
    hlk_interleave32(src, mr, kc, dst);
    dst += mr * kc;
  }
}

/* Row-major bf16 A: each sliver's rows widened (exactly) into an f32 block
 * in L1, then interleaved like an f32 A, instead of one strided 2-byte load
 * per element (a fifth of a bf16 matmul's time). */
static void pack_a_rows_bf16(const uint16_t *a, int64_t rs, int64_t mc, int64_t kc, int mr,
                             float *dst) {
  float w[MR_MAX * KC_MAX_4] __attribute__((aligned(64)));
  static const uint32_t zeros[KC_MAX_4];
  const uint32_t *src[MR_MAX];
  for (int64_t i0 = 0; i0 < mc; i0 += mr) {
    for (int64_t i = 0; i < mr; i++) {
      if (i0 + i < mc) {
        widen_f32_bf16(a + (i0 + i) * rs, w + i * kc, kc);
        src[i] = (const uint32_t *)(const void *)(w + i * kc);
      } else {
        src[i] = zeros;
      }
    }
    hlk_interleave32(src, mr, kc, (uint32_t *)dst);
    dst += mr * kc;
  }
}

/* Row-major B (unit column stride), f32 or bf16: each source row is read
 * once, in order, and cut into the rows of the slivers. Walking one
 * sliver's column of 128-byte pieces instead strides a whole row per step,
 * which the prefetchers do not follow (the copy stalled on every piece,
 * ~10% of an MLP's time). Constant sliver widths, so the copies inline. */
#define DEFINE_PACK_B_ROWS(NAME, S, CONV)                                                   \
  static inline void rows_##NAME(const S *restrict src, int64_t kc, int64_t nsl, int64_t rem, \
                                 int nr, uint32_t *restrict d) {                            \
    for (int64_t sl = 0; sl < nsl; sl++, src += nr, d += kc * nr) {                         \
      if (sizeof(S) == 4) memcpy(d, src, (size_t)nr * 4);   /* inlined: nr is constant */ \
      else for (int j = 0; j < nr; j++) d[j] = CONV(src[j]);                                \
    }                                                                                       \
    if (rem) {                                                                              \
      for (int64_t j = 0; j < rem; j++) d[j] = CONV(src[j]);                                \
      for (int64_t j = rem; j < nr; j++) d[j] = 0;                                          \
    }                                                                                       \
  }                                                                                         \
  HLK_VECTORIZE static void pack_b_rows_##NAME(const S *b, int64_t rs, int64_t kc,           \
                                               int64_t nc, int nr, uint32_t *dst) {         \
    int64_t nsl = nc / nr, rem = nc % nr;                                                   \
    for (int64_t p = 0; p < kc; p++) {                                                      \
      const S *src = b + p * rs;                                                            \
      uint32_t *d = dst + p * nr;                                                           \
      if (nr == 32) rows_##NAME(src, kc, nsl, rem, 32, d);                                  \
      else if (nr == 16) rows_##NAME(src, kc, nsl, rem, 16, d);                             \
      else if (nr == 8) rows_##NAME(src, kc, nsl, rem, 8, d);                               \
      else rows_##NAME(src, kc, nsl, rem, nr, d);                                           \
    }                                                                                       \
  }
#define BITS_F32(v) (v)
#define BITS_BF16(v) ((uint32_t)(v) << 16)
DEFINE_PACK_B_ROWS(f32, uint32_t, BITS_F32)
DEFINE_PACK_B_ROWS(bf16, uint16_t, BITS_BF16)

/* Pack from a source of format src at element offset off. */
static void pack_a_f32_src(int src, const void *a, int64_t off, int64_t rs, int64_t cs,
                           int64_t mc, int64_t kc, int mr, float *dst) {
  bool rows = cs == 1 && kc <= KC_MAX_4 && mr <= MR_MAX;
  if (src == HLK_SRC_BF16 && rows)
    pack_a_rows_bf16((const uint16_t *)a + off, rs, mc, kc, mr, dst);
  else if (src == HLK_SRC_BF16) pack_a_f32_bf16((const uint16_t *)a + off, rs, cs, mc, kc, mr, dst);
  else if (src == HLK_SRC_F16) pack_a_f32_f16((const uint16_t *)a + off, rs, cs, mc, kc, mr, dst);
  else if (rows) pack_a_rows32((const uint32_t *)a + off, rs, mc, kc, mr, (uint32_t *)dst);
  else pack_a_f32((const float *)a + off, rs, cs, mc, kc, mr, dst);
}
static void pack_b_f32_src(int src, const void *b, int64_t off, int64_t rs, int64_t cs,
                           int64_t kc, int64_t nc, int nr, float *dst) {
  if (src == HLK_SRC_BF16 && cs == 1)
    pack_b_rows_bf16((const uint16_t *)b + off, rs, kc, nc, nr, (uint32_t *)dst);
  else if (src == HLK_SRC_BF16 && rs == 1 && kc <= KC_MAX_4 && nr <= MR_MAX)
    /* Columns contiguous (a bf16 attention's K^T): widened and interleaved
     * like a row-major bf16 A's rows. */
    pack_a_rows_bf16((const uint16_t *)b + off, cs, nc, kc, nr, dst);
  else if (src == HLK_SRC_BF16) pack_b_f32_bf16((const uint16_t *)b + off, rs, cs, kc, nc, nr, dst);
  else if (src == HLK_SRC_F16) pack_b_f32_f16((const uint16_t *)b + off, rs, cs, kc, nc, nr, dst);
  else if (cs == 1) pack_b_rows_f32((const uint32_t *)b + off, rs, kc, nc, nr, (uint32_t *)dst);
  else if (rs == 1 && kc <= KC_MAX_4 && nr <= MR_MAX)
    /* Its columns are contiguous runs: interleaved like a row-major A's
     * rows (attention's Q.K^T), columns past nc read as zeros. */
    pack_a_rows32((const uint32_t *)b + off, cs, nc, kc, nr, (uint32_t *)dst);
  else pack_b_f32((const float *)b + off, rs, cs, kc, nc, nr, dst);
}
/* f64 and integer operands are always native. */
#define DEFINE_NATIVE_SRC(T, SUF)                                                            \
  static void pack_a_##SUF##_src(int src, const void *a, int64_t off, int64_t rs, int64_t cs, \
                                 int64_t mc, int64_t kc, int mr, T *dst) {                   \
    (void)src;                                                                               \
    pack_a_##SUF((const T *)a + off, rs, cs, mc, kc, mr, dst);                               \
  }                                                                                          \
  static void pack_b_##SUF##_src(int src, const void *b, int64_t off, int64_t rs, int64_t cs, \
                                 int64_t kc, int64_t nc, int nr, T *dst) {                   \
    (void)src;                                                                               \
    pack_b_##SUF((const T *)b + off, rs, cs, kc, nc, nr, dst);                               \
  }
DEFINE_NATIVE_SRC(double, f64)
DEFINE_NATIVE_SRC(uint32_t, u32)
DEFINE_NATIVE_SRC(uint64_t, u64)

/* For each sliver pair of the packed blocks run the micro-kernel, straight
 * into C for full tiles, through a scratch tile at the edges. T is the type
 * of C and of the packed panels; KP shared-dim steps share one packed value
 * (2 for the pair kernel, whose pre-packed A is in int16 units). */
#define DEFINE_GEMM(T, SUF, KP, ROWS_OK, ROWS_KERNEL, EDGE_KERNEL)                                         \
  static void tile_##SUF(const Plan *pl, HlkUkr##SUF##Fn kern, int64_t bi, int64_t ni,      \
                         int64_t mb0, int64_t mb1, T *pa, T *pb) {                           \
    const HlkGemm *g = pl->g;                                                                \
    int64_t aoff = g->a_boff ? g->a_boff[bi] : bi * g->a_bs;                                 \
    int64_t boff = g->b_boff ? g->b_boff[bi] : bi * g->b_bs;                                 \
    T *C = (T *)g->c + bi * g->c_bs;                                                         \
    int64_t j0 = ni * pl->nc, nc = g->n - j0 < pl->nc ? g->n - j0 : pl->nc;                  \
    int mr = pl->mr, nr = pl->nr;                                                            \
    if (g->k == 0) {                                                                         \
      for (int64_t i = mb0 * pl->mc; i < g->m && i < mb1 * pl->mc && !g->accumulate; i++)    \
        memset(C + i * g->ldc + j0, 0, (size_t)nc * sizeof(T));                              \
      return;                                                                                \
    }                                                                                        \
    T edge[16 * 64] __attribute__((aligned(64)));                                            \
    int64_t kpt = (g->k + KP - 1) / KP;   /* packed steps of all of k */                    \
    for (int64_t p0 = 0; p0 < g->k; p0 += pl->kc) {                                          \
      int64_t kc = g->k - p0 < pl->kc ? g->k - p0 : pl->kc;                                  \
      int64_t kcp = (kc + KP - 1) / KP;                                                      \
      int acc = p0 > 0 || g->accumulate;                                                     \
      pack_b_##SUF##_src(g->b_src, g->b, boff + p0 * g->b_rs + j0 * g->b_cs, g->b_rs, g->b_cs, \
                         kc, nc, nr, pb);                                                    \
      for (int64_t mb = mb0; mb < mb1; mb++) {                                               \
        int64_t i0 = mb * pl->mc, mc = g->m - i0 < pl->mc ? g->m - i0 : pl->mc;              \
        /* In place, only a last partial sliver is packed (zero rows past m). */             \
        int64_t pack0 = pl->a_rows ? mc - mc % mr : 0;                                       \
        if (!g->a_packed && pack0 < mc)                                                      \
          pack_a_##SUF##_src(g->a_src, g->a, aoff + (i0 + pack0) * g->a_rs + p0 * g->a_cs,   \
                             g->a_rs, g->a_cs, mc - pack0, kc, mr, pa);                      \
        for (int64_t jr = 0; jr < nc; jr += nr) {                                            \
          int64_t cols = nc - jr < nr ? nc - jr : nr;                                        \
          const T *bp = pb + (jr / nr) * nr * kcp;                                           \
          for (int64_t ir = 0; ir < mc; ir += mr) {                                          \
            int64_t rows = mc - ir < mr ? mc - ir : mr;                                      \
            T *cp = C + (i0 + ir) * g->ldc + j0 + jr;                                        \
            if (ir < pack0) {   /* a full sliver of A, in place */                           \
              const T *ar = (const T *)g->a + aoff + (i0 + ir) * g->a_rs + p0;               \
              bool full = cols == nr;                                                        \
              ROWS_KERNEL(kc, ar, g->a_rs, bp, full ? cp : edge, full ? g->ldc : nr,         \
                          full ? acc : 0);                                                   \
              if (full) continue;                                                            \
            } else {                                                                         \
              const T *ap = g->a_packed                                                      \
                  ? (const T *)((const char *)g->a + (aoff * sizeof(T)) / KP) +              \
                        ((i0 + ir) / mr) * mr * kpt + (p0 / KP) * mr                          \
                  : pa + ((ir - pack0) / mr) * mr * kcp;                                     \
              if (rows == mr && cols == nr) {                                                \
                kern(kcp, ap, bp, cp, g->ldc, acc);                                          \
                continue;                                                                    \
              }                                                                              \
              if (cols == nr && EDGE_KERNEL(rows, kcp, ap, bp, cp, g->ldc, acc)) continue;   \
              kern(kcp, ap, bp, edge, nr, 0);                                                \
            }                                                                                \
            for (int64_t i = 0; i < rows; i++)                                               \
              for (int64_t j = 0; j < cols; j++)                                             \
                cp[i * g->ldc + j] = acc ? cp[i * g->ldc + j] + edge[i * nr + j] : edge[i * nr + j]; \
          }                                                                                  \
        }                                                                                    \
      }                                                                                      \
    }                                                                                        \
  }                                                                                          \
  static void tasks_##SUF(void *arg, int64_t lo, int64_t hi) {                               \
    Plan *pl = arg;                                                                          \
    const HlkUkrTable *u = ukr();                                                            \
    HlkUkr##SUF##Fn kern = u->SUF;                                                           \
    size_t na = (size_t)(pl->mc * pl->kc), nb = (size_t)(pl->nc * pl->kc);                   \
    size_t na16 = (size_t)round_up((int64_t)na, 16);                                         \
    T *pa = scratch_get((na16 + nb) * sizeof(T));                                            \
    if (!pa) { __atomic_store_n(&pl->failed, 1, __ATOMIC_RELAXED); return; }                 \
    T *pb = pa + na16;                                                                       \
    int64_t per = pl->ntiles * pl->mgroups;                                                  \
    for (int64_t t = lo; t < hi; t++) {                                                      \
      int64_t r = t % per, gi = r % pl->mgroups;                                             \
      tile_##SUF(pl, kern, t / per, r / pl->mgroups, gi * pl->mtiles / pl->mgroups,          \
                 (gi + 1) * pl->mtiles / pl->mgroups, pa, pb);                               \
    }                                                                                        \
  }                                                                                          \
  int hlk_gemm_##SUF(HliExec *x, const HlkGemm *g) {                                        \
    if (g->batch <= 0 || g->m <= 0 || g->n <= 0) return 0;                                  \
    const HlkUkrTable *u = ukr();                                                            \
    Plan pl;                                                                                 \
    plan_blocks(&pl, g, u->mr_##SUF, u->nr_##SUF, sizeof(T), KP, hli_num_threads(x));        \
    /* A row-major A used by few column slivers is cheaper read in place than \
     * packed (packing costs about what a 64-column product computes). */      \
    pl.a_rows = ROWS_OK && !g->a_packed && g->a_src == HLK_SRC_NATIVE && g->a_cs == 1 &&     \
                pl.nc <= 8 * pl.nr && !rows_off();                                           \
    /* Each working thread's panels count against the memory limit while the \
     * product runs (the threads keep them afterwards, as a cache). */       \
    int64_t tasks = g->batch * pl.ntiles * pl.mgroups, workers = hli_num_threads(x);         \
    if (workers > tasks) workers = tasks;                                                    \
    size_t panels = (size_t)(round_up(pl.mc * pl.kc, 16) + pl.nc * pl.kc) * sizeof(T) *      \
                    (size_t)workers;                                                         \
    if (hli_scratch_reserve(x, g->ins, panels) != 0) return -1;                              \
    hli_parallel_for(x, tasks, 1, tasks_##SUF, &pl);                                         \
    hli_scratch_unreserve(x, panels);                                                        \
    if (pl.failed) return hli_fail_nomem(x, g->ins, "out of memory for matrix-multiply panels");  \
    return 0;                                                                                \
  }

typedef HlkUkrF32 HlkUkrf32Fn;
typedef HlkUkrF64 HlkUkrf64Fn;
typedef HlkUkrU32 HlkUkru32Fn;
typedef HlkUkrU64 HlkUkru64Fn;
typedef HlkUkrU32 HlkUkri16Fn;
/* HLORUN_GEMM_ROWS=0: always pack A (tests compare both paths). */
static bool rows_off(void) {
  const char *e = getenv("HLORUN_GEMM_ROWS");
  return e && strcmp(e, "0") == 0;
}
#define F32_ROWS(kc, ar, lda, bp, c, ldc, acc) ukr()->f32_rows(kc, ar, lda, bp, c, ldc, acc)
#define NO_ROWS(kc, ar, lda, bp, c, ldc, acc) ((void)(ar), (void)(lda))
/* A partial sliver of full-width f32 columns runs a kernel for just its
 * rows, straight into C; other types go through the scratch tile. */
static inline bool f32_edge(int64_t rows, int64_t kc, const float *ap, const float *bp,
                            float *c, int64_t ldc, int acc) {
  HlkUkrF32 k = ukr()->f32_edge[rows];
  if (!k) return false;
  k(kc, ap, bp, c, ldc, acc);
  return true;
}
#define NO_EDGE(rows, kc, ap, bp, c, ldc, acc) false
DEFINE_GEMM(float, f32, 1, 1, F32_ROWS, f32_edge)
DEFINE_GEMM(double, f64, 1, 0, NO_ROWS, NO_EDGE)
DEFINE_GEMM(uint32_t, u32, 1, 0, NO_ROWS, NO_EDGE)
DEFINE_GEMM(uint64_t, u64, 1, 0, NO_ROWS, NO_EDGE)
DEFINE_GEMM(uint32_t, i16, 2, 0, NO_ROWS, NO_EDGE)
