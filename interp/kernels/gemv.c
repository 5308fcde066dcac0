/* gemv.c: f32 products with one result row or one result column (a vector
 * times a matrix, a matrix times a vector: batch-1 inference, attention for
 * one query). The packed GEMM would pad all but one row or column of every
 * micro-kernel block; these stream the matrix once instead, split over the
 * threads, and are bound by memory.
 *
 * Each result element is summed in a fixed order, whatever the thread
 * count: matrix times vector keeps 16 lanes of partial sums (lane l adds the
 * products of k = l, l + 16, ... in order), then adds the lanes pairwise;
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

/* sum over p < k of a[p] * y[p], in the lane order above. */
HLK_VECTORIZE static float dot_lanes(const float *a, const float *y, int64_t k) {
  Lanes acc = {0};
  int64_t p = 0;
  for (; p + LANES <= k; p += LANES) {
    Lanes va, vy;
    memcpy(&va, a + p, sizeof va);
    memcpy(&vy, y + p, sizeof vy);
    acc += va * vy;
  }
  float t[LANES];
  memcpy(t, &acc, sizeof t);
  for (; p < k; p++) t[p % LANES] += a[p] * y[p];
  for (int w = LANES / 2; w >= 1; w /= 2)
    for (int l = 0; l < w; l++) t[l] += t[l + w];
  return t[0];
}

/* out[j] = sum over p < k of x[p] * b[p * rs + j], j < n, in p order; four
 * rows of b per pass over out (the same additions in the same order). */
HLK_VECTORIZE static void axpy_rows(float *restrict out, const float *restrict x,
                                    const float *restrict b, int64_t rs, int64_t k, int64_t n) {
  for (int64_t j = 0; j < n; j++) out[j] = 0;
  int64_t p = 0;
  for (; p + 4 <= k; p += 4) {
    float s0 = x[p], s1 = x[p + 1], s2 = x[p + 2], s3 = x[p + 3];
    const float *r0 = b + p * rs, *r1 = r0 + rs, *r2 = r1 + rs, *r3 = r2 + rs;
    for (int64_t j = 0; j < n; j++)
      out[j] = (((out[j] + s0 * r0[j]) + s1 * r1[j]) + s2 * r2[j]) + s3 * r3[j];
  }
  for (; p < k; p++) {
    float s = x[p];
    const float *row = b + p * rs;
    for (int64_t j = 0; j < n; j++) out[j] += s * row[j];
  }
}

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

/* Units of ROWS_PER_UNIT result rows of one batch matrix. */
static void matvec_units(void *arg, int64_t lo, int64_t hi) {
  const Job *j = arg;
  const HlkGemm *g = j->g;
  for (int64_t u = lo; u < hi; u++) {
    int64_t bi = u / j->units, i0 = u % j->units * ROWS_PER_UNIT;
    int64_t i1 = i0 + ROWS_PER_UNIT < g->m ? i0 + ROWS_PER_UNIT : g->m;
    const float *a = (const float *)g->a + a_at(g, bi);
    const float *y = (const float *)g->b + b_at(g, bi);
    float *c = (float *)g->c + bi * g->c_bs;
    for (int64_t i = i0; i < i1; i++) {
      float v = dot_lanes(a + i * g->a_rs, y, g->k);
      c[i * g->ldc] = g->accumulate ? c[i * g->ldc] + v : v;
    }
  }
}

/* Units of COLS_PER_UNIT result columns of one batch matrix. */
static void vecmat_units(void *arg, int64_t lo, int64_t hi) {
  const Job *j = arg;
  const HlkGemm *g = j->g;
  float part[COLS_PER_UNIT];
  for (int64_t u = lo; u < hi; u++) {
    int64_t bi = u / j->units, j0 = u % j->units * COLS_PER_UNIT;
    int64_t n = g->n - j0 < COLS_PER_UNIT ? g->n - j0 : COLS_PER_UNIT;
    const float *x = (const float *)g->a + a_at(g, bi);
    const float *b = (const float *)g->b + b_at(g, bi) + j0;
    float *c = (float *)g->c + bi * g->c_bs + j0;
    axpy_rows(g->accumulate ? part : c, x, b, g->b_rs, g->k, n);
    if (g->accumulate)
      for (int64_t jj = 0; jj < n; jj++) c[jj] += part[jj];
  }
}

bool hlk_gemv_f32_applies(const HlkGemm *g) {
  if (g->a_packed || g->a_src != HLK_SRC_NATIVE || g->b_src != HLK_SRC_NATIVE || g->k <= 0)
    return false;
  if (g->n == 1) return g->a_cs == 1 && g->b_rs == 1;    /* rows of A, B's column */
  if (g->m == 1) return g->a_cs == 1 && g->b_cs == 1;    /* A's row, rows of B */
  return false;
}

void hlk_gemv_f32(HliExec *x, const HlkGemm *g) {
  bool matvec = g->n == 1;
  int64_t per = matvec ? ROWS_PER_UNIT : COLS_PER_UNIT, len = matvec ? g->m : g->n;
  Job j = {g, (len + per - 1) / per};
  /* about 256 KB of the matrix per unit of parallel work, at least */
  int64_t unit_bytes = per * g->k * (int64_t)sizeof(float);
  int64_t min_units = unit_bytes >= (256 << 10) ? 1 : (256 << 10) / unit_bytes + 1;
  hli_parallel_for(x, g->batch * j.units, min_units, matvec ? matvec_units : vecmat_units, &j);
}
