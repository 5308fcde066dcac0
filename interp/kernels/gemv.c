/* gemv.c: products accumulated in f32 (f32 operands, or bf16 ones widened
 * exactly) with one result row or one result column (a vector times a
 * matrix, a matrix times a vector: batch-1 inference, attention for one
 * query). The packed GEMM would pad all but one row or column of every
 * micro-kernel block; these stream the matrix once instead, split over the
 * threads, and are bound by memory.
 *
 * Each result element is summed in a fixed order, whatever the thread
 * count: matrix times vector keeps 16 lanes of partial sums (lane l adds the
 * products of k = l, l + 16, ... in order), then adds the lanes pairwise
 * (four rows at a time, each on its own accumulators);
 * vector times matrix adds the products in k order. One rounding per
 * multiply and per add (no fused multiply-add) on every instruction set.
 * Not here: the GEMM (gemm.c), choosing between them (dot.c). */
#include "interp/kernels/gemm.h"
#include "interp/kernels/vectorize.h"
#include <string.h>

enum {
  LANES = 16,
  ROWS_PER_UNIT = 64,     /* matrix times vector: result rows per work unit */
  COLS_PER_UNIT = 1024    /* vector times matrix: result columns per unit (4 KB in L1) */
};

typedef float Lanes __attribute__((vector_size(LANES * sizeof(float))));

typedef struct Job {
  const HlkGemm *g;
  int64_t units;           /* per batch matrix */
} Job;

static int64_t a_at(const HlkGemm *g, int64_t bi) {
  return g->a_boff ? g->a_boff[bi] : bi * g->a_bs;
}
static int64_t b_at(const HlkGemm *g, int64_t bi) {
  return g->b_boff ? g->b_boff[bi] : bi * g->b_bs;
}

#define ID(x) (x)
typedef uint16_t Half16 __attribute__((vector_size(LANES * sizeof(uint16_t))));
typedef uint32_t Word16 __attribute__((vector_size(LANES * sizeof(uint32_t))));
/* LANES consecutive elements at p, widened into v */
#define LANES_f32(v, p) memcpy(&(v), (p), sizeof(v))
#define LANES_bf16(v, p)                                                                 \
  do {                                                                                   \
    Half16 h_;                                                                           \
    memcpy(&h_, (p), sizeof h_);                                                         \
    (v) = (Lanes)(__builtin_convertvector(h_, Word16) << 16);   /* bf16 bits, shifted */ \
  } while (0)

/* The loops for operands of element type S, widened to f32 by LOAD (exact).
 * dot_lanes: sum over p < k of a[p] * y[p], in the lane order above.
 * axpy_rows: out[j] = sum over p < k of x[p] * b[p * rs + j], j < n, in p
 * order, four rows of b per pass over out (the same additions in the same
 * order). The units: ROWS_PER_UNIT result rows, or COLS_PER_UNIT result
 * columns, of one batch matrix. */
#define DEFINE_GEMV(SUF, S, LOAD)                                                        \
  HLK_VECTORIZE static float dot_lanes_##SUF(const S *a, const S *y, int64_t k) {        \
    Lanes acc = {0};                                                                     \
    int64_t p = 0;                                                                       \
    for (; p + LANES <= k; p += LANES) {                                                 \
      Lanes va, vy;                                                                      \
      LANES_##SUF(va, a + p);                                                            \
      LANES_##SUF(vy, y + p);                                                            \
      acc += va * vy;                                                                    \
    }                                                                                    \
    float t[LANES];                                                                      \
    memcpy(t, &acc, sizeof t);                                                           \
    for (; p < k; p++) t[p % LANES] += LOAD(a[p]) * LOAD(y[p]);                           \
    for (int w = LANES / 2; w >= 1; w /= 2)                                              \
      for (int l = 0; l < w; l++) t[l] += t[l + w];                                      \
    return t[0];                                                                         \
  }                                                                                      \
  /* dot_lanes for four rows of A at once (rs apart), each the same sums in  \
   * the same order: four independent chains of adds, and four streams of A  \
   * in flight, where one row at a time waited on its one chain. */           \
  HLK_VECTORIZE static void dot_lanes4_##SUF(const S *a, int64_t rs, const S *y, int64_t k, \
                                             float out[4]) {                            \
    Lanes acc0 = {0}, acc1 = {0}, acc2 = {0}, acc3 = {0};                                \
    int64_t p = 0;                                                                       \
    for (; p + LANES <= k; p += LANES) {                                                 \
      Lanes vy, v0, v1, v2, v3;                                                          \
      LANES_##SUF(vy, y + p);                                                            \
      LANES_##SUF(v0, a + p);                                                            \
      LANES_##SUF(v1, a + rs + p);                                                       \
      LANES_##SUF(v2, a + 2 * rs + p);                                                   \
      LANES_##SUF(v3, a + 3 * rs + p);                                                   \
      acc0 += v0 * vy;                                                                   \
      acc1 += v1 * vy;                                                                   \
      acc2 += v2 * vy;                                                                   \
      acc3 += v3 * vy;                                                                   \
    }                                                                                    \
    Lanes accs[4] = {acc0, acc1, acc2, acc3};                                            \
    for (int r = 0; r < 4; r++) {                                                        \
      float t[LANES];                                                                    \
      memcpy(t, &accs[r], sizeof t);                                                     \
      for (int64_t q = p; q < k; q++) t[q % LANES] += LOAD(a[r * rs + q]) * LOAD(y[q]);  \
      for (int w = LANES / 2; w >= 1; w /= 2)                                            \
        for (int l = 0; l < w; l++) t[l] += t[l + w];                                    \
      out[r] = t[0];                                                                     \
    }                                                                                    \
  }                                                                                      \
  HLK_VECTORIZE static void axpy_rows_##SUF(float *restrict out, const S *restrict x,    \
                                            const S *restrict b, int64_t rs, int64_t k,  \
                                            int64_t n) {                                 \
    for (int64_t j = 0; j < n; j++) out[j] = 0;                                          \
    int64_t p = 0;                                                                       \
    for (; p + 4 <= k; p += 4) {                                                         \
      float s0 = LOAD(x[p]), s1 = LOAD(x[p + 1]), s2 = LOAD(x[p + 2]), s3 = LOAD(x[p + 3]); \
      const S *r0 = b + p * rs, *r1 = r0 + rs, *r2 = r1 + rs, *r3 = r2 + rs;              \
      for (int64_t j = 0; j < n; j++)                                                    \
        out[j] = (((out[j] + s0 * LOAD(r0[j])) + s1 * LOAD(r1[j])) + s2 * LOAD(r2[j])) +   \
                 s3 * LOAD(r3[j]);                                                       \
    }                                                                                    \
    for (; p < k; p++) {                                                                 \
      float s = LOAD(x[p]);                                                              \
      const S *row = b + p * rs;                                                         \
      for (int64_t j = 0; j < n; j++) out[j] += s * LOAD(row[j]);                         \
    }                                                                                    \
  }                                                                                      \
  static void matvec_units_##SUF(void *arg, int64_t lo, int64_t hi) {                    \
    const Job *j = arg;                                                                  \
    const HlkGemm *g = j->g;                                                             \
    for (int64_t u = lo; u < hi; u++) {                                                  \
      int64_t bi = u / j->units, i0 = u % j->units * ROWS_PER_UNIT;                      \
      int64_t i1 = i0 + ROWS_PER_UNIT < g->m ? i0 + ROWS_PER_UNIT : g->m;                \
      const S *a = (const S *)g->a + a_at(g, bi);                                        \
      const S *y = (const S *)g->b + b_at(g, bi);                                        \
      float *c = (float *)g->c + bi * g->c_bs;                                           \
      int64_t i = i0;                                                                    \
      for (; i + 4 <= i1; i += 4) {                                                      \
        float v[4];                                                                      \
        dot_lanes4_##SUF(a + i * g->a_rs, g->a_rs, y, g->k, v);                          \
        for (int r = 0; r < 4; r++)                                                      \
          c[(i + r) * g->ldc] = g->accumulate ? c[(i + r) * g->ldc] + v[r] : v[r];       \
      }                                                                                  \
      for (; i < i1; i++) {                                                              \
        float v = dot_lanes_##SUF(a + i * g->a_rs, y, g->k);                             \
        c[i * g->ldc] = g->accumulate ? c[i * g->ldc] + v : v;                           \
      }                                                                                  \
    }                                                                                    \
  }                                                                                      \
  static void vecmat_units_##SUF(void *arg, int64_t lo, int64_t hi) {                    \
    const Job *j = arg;                                                                  \
    const HlkGemm *g = j->g;                                                             \
    float part[COLS_PER_UNIT];                                                           \
    for (int64_t u = lo; u < hi; u++) {                                                  \
      int64_t bi = u / j->units, j0 = u % j->units * COLS_PER_UNIT;                      \
      int64_t n = g->n - j0 < COLS_PER_UNIT ? g->n - j0 : COLS_PER_UNIT;                 \
      const S *x = (const S *)g->a + a_at(g, bi);                                        \
      const S *b = (const S *)g->b + b_at(g, bi) + j0;                                   \
      float *c = (float *)g->c + bi * g->c_bs + j0;                                      \
      axpy_rows_##SUF(g->accumulate ? part : c, x, b, g->b_rs, g->k, n);                 \
      if (g->accumulate)                                                                 \
        for (int64_t jj = 0; jj < n; jj++) c[jj] += part[jj];                            \
    }                                                                                    \
  }
DEFINE_GEMV(f32, float, ID)
DEFINE_GEMV(bf16, uint16_t, hlk_bf16_to_f32)

bool hlk_gemv_f32_applies(const HlkGemm *g) {
  if (g->a_packed || g->a_src != g->b_src || g->a_src == HLK_SRC_F16 || g->k <= 0) return false;
  if (g->n == 1) return g->a_cs == 1 && g->b_rs == 1;    /* rows of A, B's column */
  if (g->m == 1) return g->a_cs == 1 && g->b_cs == 1;    /* A's row, rows of B */
  return false;
}

void hlk_gemv_f32(HliExec *x, const HlkGemm *g) {
  bool matvec = g->n == 1;
  int64_t per = matvec ? ROWS_PER_UNIT : COLS_PER_UNIT, len = matvec ? g->m : g->n;
  Job j = {g, (len + per - 1) / per};
  /* about 256 KB of the matrix per unit of parallel work, at least */
  int64_t unit_bytes = per * g->k * (g->a_src == HLK_SRC_BF16 ? 2 : 4);
  int64_t min_units = unit_bytes >= (256 << 10) ? 1 : (256 << 10) / unit_bytes + 1;
  bool bf16 = g->a_src == HLK_SRC_BF16;
  void (*fn)(void *, int64_t, int64_t) = matvec ? (bf16 ? matvec_units_bf16 : matvec_units_f32)
                                                : (bf16 ? vecmat_units_bf16 : vecmat_units_f32);
  hli_parallel_for(x, g->batch * j.units, min_units, fn, &j);
}
