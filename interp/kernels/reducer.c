/* reducer.c: typed fold loops for recognised reducers (one specialisation
 * per element type and reducer, stamped by macros), the per-element
 * computation fallback (HlkScalarCall), and the structural matchers for the
 * argmax/argmin reducer, sort comparators and select computations.
 *
 * Semantics follow XLA's evaluator: maximum/minimum return the first NaN
 * operand, else std::max/std::min (ties keep the left operand); integer
 * add/multiply wrap; pred add is OR and multiply AND; narrow floats compute
 * in float and round after every step. Not here: the loops over shapes
 * (each kernel file has its own). */
#include "interp/kernels/reducer.h"
#include "interp/kernels/vectorize.h"
#include <complex.h>
#include <math.h>
#include <string.h>

/* ---- Narrow float conversions ---------------------------------------- */

static inline float round_f16(float v) { return hlk_f16_to_f32(hlk_f32_to_f16(v)); }
static inline float round_bf16(float v) { return hlk_bf16_to_f32(hlk_f32_to_bf16(v)); }

/* ---- Element operations ---------------------------------------------- */

#define ID(x) (x)
#define OP_IMAX(a, b) ((a) < (b) ? (b) : (a))
#define OP_IMIN(a, b) ((b) < (a) ? (b) : (a))
#define OP_FMAX(a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : (a) < (b) ? (b) : (a))
#define OP_FMIN(a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : (b) < (a) ? (b) : (a))
#define OP_ADD(a, b) ((a) + (b))
#define OP_MUL(a, b) ((a) * (b))
#define OP_AND(a, b) ((a) & (b))
#define OP_OR(a, b) ((a) | (b))
#define OP_XOR(a, b) ((a) ^ (b))

/* vec_rows: four rows per pass over the accumulators, each element still
 * folded in row order. */
#define FOLD_ROWS(NAME, S, A, LOAD, OP)                                               \
  HLK_VECTORIZE static void NAME##_rows(void *acc, const void *src, int64_t n,        \
                                        int64_t rows, int64_t stride) {               \
    A *restrict a = acc;                                                              \
    const S *p = src;                                                                 \
    int64_t r = 0;                                                                    \
    for (; r + 4 <= rows; r += 4) {                                                   \
      const S *restrict p0 = p + r * stride, *restrict p1 = p0 + stride;              \
      const S *restrict p2 = p1 + stride, *restrict p3 = p2 + stride;                 \
      for (int64_t i = 0; i < n; i++)                                                 \
        a[i] = OP(OP(OP(OP(a[i], LOAD(p0[i])), LOAD(p1[i])), LOAD(p2[i])), LOAD(p3[i])); \
    }                                                                                 \
    for (; r < rows; r++) {                                                           \
      const S *restrict q = p + r * stride;                                           \
      for (int64_t i = 0; i < n; i++) a[i] = OP(a[i], LOAD(q[i]));                    \
    }                                                                                 \
  }

/* One fold: S element type, A accumulator type, LOAD: S -> A, STORE: A -> S,
 * OP(A, A) -> A. */
/* RUN_ATTR: HLK_VECTORIZE for the integer folds, whose operations
 * reassociate exactly (wrapping add and multiply, max, min, bit ops), so
 * the compiler may run a contiguous fold in vector lanes; nothing for
 * float folds, whose order is part of the result. */
#define FOLD_DEFINE_RUN(RUN_ATTR, NAME, S, A, LOAD, STORE, OP, ...)                    \
  static void NAME##_init(void *acc, const void *init, int64_t n) {                   \
    A v = LOAD(*(const S *)init);                                                     \
    A *a = acc;                                                                       \
    for (int64_t i = 0; i < n; i++) a[i] = v;                                         \
  }                                                                                   \
  RUN_ATTR static void NAME##_run(void *acc, const void *src, int64_t n, int64_t s) { \
    A a = *(A *)acc;                                                                  \
    const S *p = src;                                                                 \
    if (s == 1)                                                                       \
      for (int64_t i = 0; i < n; i++) a = OP(a, LOAD(p[i]));                          \
    else                                                                              \
      for (int64_t i = 0; i < n; i++) a = OP(a, LOAD(p[i * s]));                      \
    *(A *)acc = a;                                                                    \
  }                                                                                   \
  HLK_VECTORIZE static void NAME##_vec(void *acc, const void *src, int64_t n, int64_t s) { \
    A *a = acc;                                                                       \
    const S *p = src;                                                                 \
    if (s == 1)                                                                       \
      for (int64_t i = 0; i < n; i++) a[i] = OP(a[i], LOAD(p[i]));                    \
    else                                                                              \
      for (int64_t i = 0; i < n; i++) a[i] = OP(a[i], LOAD(p[i * s]));                \
  }                                                                                   \
  static void NAME##_store(void *dst, const void *acc, int64_t n) {                   \
    S *d = dst;                                                                       \
    const A *a = acc;                                                                 \
    for (int64_t i = 0; i < n; i++) d[i] = STORE(a[i]);                               \
  }                                                                                   \
  static void NAME##_scan(void *acc, const void *src, void *dst, int64_t n) {         \
    A a = *(A *)acc;                                                                  \
    const S *p = src;                                                                 \
    S *d = dst;                                                                       \
    for (int64_t i = 0; i < n; i++) {                                                 \
      a = OP(a, LOAD(p[i]));                                                          \
      d[i] = STORE(a);                                                                \
    }                                                                                 \
    *(A *)acc = a;                                                                    \
  }                                                                                   \
  FOLD_ROWS(NAME, S, A, LOAD, OP)                                                     \
  static const HlkFold NAME __attribute__((unused)) = {sizeof(A), NAME##_init, NAME##_run, NAME##_vec, NAME##_store, __VA_ARGS__, NAME##_rows, NAME##_scan};
#define FOLD_DEFINE(NAME, S, A, LOAD, STORE, OP)                                      \
  FOLD_DEFINE_RUN(, NAME, S, A, LOAD, STORE, OP, 0, 0, NULL, NULL)
/* Exact reassociation also lets threads share one long run: the partial of
 * a block is its elements folded from the first one. */
enum { INT_BLOCK = 1024 };
#define FOLD_DEFINE_INT(NAME, S, A, LOAD, STORE, OP)                                  \
  HLK_VECTORIZE static void NAME##_blocks(void *parts, const void *src, int64_t nb) {  \
    const S *p = src;                                                                 \
    A *o = parts;                                                                     \
    for (int64_t b = 0; b < nb; b++, p += INT_BLOCK) {                                \
      A a = LOAD(p[0]);                                                               \
      for (int64_t i = 1; i < INT_BLOCK; i++) a = OP(a, LOAD(p[i]));                  \
      o[b] = a;                                                                       \
    }                                                                                 \
  }                                                                                   \
  static void NAME##_fold_parts(void *acc, const void *parts, int64_t nb) {           \
    A a = *(A *)acc;                                                                  \
    const A *q = parts;                                                               \
    for (int64_t b = 0; b < nb; b++) a = OP(a, q[b]);                                 \
    *(A *)acc = a;                                                                    \
  }                                                                                   \
  FOLD_DEFINE_RUN(HLK_VECTORIZE, NAME, S, A, LOAD, STORE, OP, INT_BLOCK, sizeof(A),   \
                  NAME##_blocks, NAME##_fold_parts)

/* Integers: add and multiply wrap (computed in an unsigned type at least as
 * wide as int, so no promotion to signed int can overflow). */
#define INT_TYPES(X)                                                                 \
  X(s8, S8, int8_t, uint32_t) X(s16, S16, int16_t, uint32_t)                           \
  X(s32, S32, int32_t, uint32_t) X(s64, S64, int64_t, uint64_t)                        \
  X(u8, U8, uint8_t, uint32_t) X(u16, U16, uint16_t, uint32_t)                         \
  X(u32, U32, uint32_t, uint32_t) X(u64, U64, uint64_t, uint64_t)

#define INT_FOLDS(N, UP, T, U)                                                           \
  static inline T N##_wadd(T a, T b) { return (T)((U)a + (U)b); }                    \
  static inline T N##_wmul(T a, T b) { return (T)((U)a * (U)b); }                    \
  FOLD_DEFINE_INT(fold_add_##N, T, T, ID, ID, N##_wadd)                              \
  FOLD_DEFINE_INT(fold_mul_##N, T, T, ID, ID, N##_wmul)                              \
  FOLD_DEFINE_INT(fold_max_##N, T, T, ID, ID, OP_IMAX)                               \
  FOLD_DEFINE_INT(fold_min_##N, T, T, ID, ID, OP_IMIN)                               \
  FOLD_DEFINE_INT(fold_and_##N, T, T, ID, ID, OP_AND)                                \
  FOLD_DEFINE_INT(fold_or_##N, T, T, ID, ID, OP_OR)                                  \
  FOLD_DEFINE_INT(fold_xor_##N, T, T, ID, ID, OP_XOR)
INT_TYPES(INT_FOLDS)

/* pred: values 0/1; add = OR, multiply = AND (bool arithmetic cast back). */
FOLD_DEFINE_INT(fold_or_pred, uint8_t, uint8_t, ID, ID, OP_OR)
FOLD_DEFINE_INT(fold_and_pred, uint8_t, uint8_t, ID, ID, OP_AND)
FOLD_DEFINE_INT(fold_xor_pred, uint8_t, uint8_t, ID, ID, OP_XOR)

/* f32 / f64 */
FOLD_DEFINE(fold_add_f32, float, float, ID, ID, OP_ADD)
FOLD_DEFINE(fold_mul_f32, float, float, ID, ID, OP_MUL)
FOLD_DEFINE(fold_max_f32, float, float, ID, ID, OP_FMAX)
FOLD_DEFINE(fold_min_f32, float, float, ID, ID, OP_FMIN)
FOLD_DEFINE(fold_add_f64, double, double, ID, ID, OP_ADD)
FOLD_DEFINE(fold_mul_f64, double, double, ID, ID, OP_MUL)
FOLD_DEFINE(fold_max_f64, double, double, ID, ID, OP_FMAX)
FOLD_DEFINE(fold_min_f64, double, double, ID, ID, OP_FMIN)

/* f16 / bf16: float accumulator holding an exactly representable value. */
#define F16_ADD(a, b) round_f16((a) + (b))
#define F16_MUL(a, b) round_f16((a) * (b))
#define BF16_ADD(a, b) round_bf16((a) + (b))
#define BF16_MUL(a, b) round_bf16((a) * (b))
FOLD_DEFINE(fold_add_f16, uint16_t, float, hlk_f16_to_f32, hlk_f32_to_f16, F16_ADD)
FOLD_DEFINE(fold_mul_f16, uint16_t, float, hlk_f16_to_f32, hlk_f32_to_f16, F16_MUL)
FOLD_DEFINE(fold_max_f16, uint16_t, float, hlk_f16_to_f32, hlk_f32_to_f16, OP_FMAX)
FOLD_DEFINE(fold_min_f16, uint16_t, float, hlk_f16_to_f32, hlk_f32_to_f16, OP_FMIN)
FOLD_DEFINE(fold_add_bf16, uint16_t, float, hlk_bf16_to_f32, hlk_f32_to_bf16, BF16_ADD)
FOLD_DEFINE(fold_mul_bf16, uint16_t, float, hlk_bf16_to_f32, hlk_f32_to_bf16, BF16_MUL)
FOLD_DEFINE(fold_max_bf16, uint16_t, float, hlk_bf16_to_f32, hlk_f32_to_bf16, OP_FMAX)
FOLD_DEFINE(fold_min_bf16, uint16_t, float, hlk_bf16_to_f32, hlk_f32_to_bf16, OP_FMIN)

/* Wide adds (reduce): accumulate in double, round once at the end. */
#define F16_FROM_D(d) hlk_f32_to_f16((float)(d))
#define BF16_FROM_D(d) hlk_f32_to_bf16((float)(d))
#define F16_TO_D(h) ((double)hlk_f16_to_f32(h))
#define BF16_TO_D(h) ((double)hlk_bf16_to_f32(h))
#define F32_TO_D(f) ((double)(f))
#define D_TO_F32(d) ((float)(d))
FOLD_DEFINE(fold_wadd_f16, uint16_t, double, F16_TO_D, F16_FROM_D, OP_ADD)
FOLD_DEFINE(fold_wadd_bf16, uint16_t, double, BF16_TO_D, BF16_FROM_D, OP_ADD)

/* bf16/f16 values held widened to f32 (a fused tile's registers): the same
 * steps as the bf16/f16 folds above on f32 input, the accumulator stored as
 * f32 for the caller to round once to the narrow type (as the narrow store
 * does). Maximum and minimum need no rounding: fold_max_f32, fold_min_f32. */
FOLD_DEFINE(fold_wadd_widened, float, double, F32_TO_D, D_TO_F32, OP_ADD)
FOLD_DEFINE(fold_mul_bf16_widened, float, float, ID, ID, BF16_MUL)
FOLD_DEFINE(fold_mul_f16_widened, float, float, ID, ID, F16_MUL)

const HlkFold *hlk_fold_widened(HliBinop op, HloDtype t) {
  if (t != HLO_BF16 && t != HLO_F16) return NULL;
  switch (op) {
  case HLI_BINOP_ADD: return &fold_wadd_widened;
  case HLI_BINOP_MUL: return t == HLO_BF16 ? &fold_mul_bf16_widened : &fold_mul_f16_widened;
  case HLI_BINOP_MAX: return &fold_max_f32;
  case HLI_BINOP_MIN: return &fold_min_f32;
  default: return NULL;
  }
}

/* f32 wide add: the bulk of real reductions. Long contiguous runs are cut
 * into blocks of 256 elements summed in 16 float lanes (a lane adds 16
 * values, so its rounding error stays near 16 ulp of the block's
 * magnitude), and block sums accumulate in double. Short or strided runs
 * accumulate in double directly. The order is fixed, so results do not
 * depend on threads. */
enum { WADD_BLOCK = 256, WADD_LANES = 16 };
static void fold_wadd_f32_init(void *acc, const void *init, int64_t n) {
  double v = *(const float *)init, *a = acc;
  for (int64_t i = 0; i < n; i++) a[i] = v;
}
/* The sum of each of nb whole blocks of T in WADD_LANES lanes (a lane adds
 * every WADD_LANES-th element, then lane k += lane k+w pairwise): fixed
 * order. */
#define LANE_BLOCKS(NAME, T)                                                          \
  HLK_VECTORIZE static void NAME(void *parts, const void *src, int64_t nb) {          \
    const T *p = src;                                                                 \
    T *out = parts;                                                                   \
    for (int64_t b = 0; b < nb; b++, p += WADD_BLOCK) {                               \
      T l[WADD_LANES] = {0};                                                          \
      for (int64_t j = 0; j < WADD_BLOCK; j += WADD_LANES)                            \
        for (int k = 0; k < WADD_LANES; k++) l[k] += p[j + k];                        \
      for (int w = WADD_LANES / 2; w > 0; w /= 2)                                     \
        for (int k = 0; k < w; k++) l[k] += l[k + w];                                 \
      out[b] = l[0];                                                                  \
    }                                                                                 \
  }
/* run() of a blocked sum with a double accumulator: whole blocks of a
 * contiguous run through BLOCKS and FOLD_PARTS, 64 at a time, the rest (and
 * strided runs) added one by one. */
#define BLOCKED_RUN(NAME, T, BLOCKS, FOLD_PARTS)                                      \
  static void NAME(void *acc, const void *src, int64_t n, int64_t s) {                \
    const T *p = src;                                                                 \
    int64_t i = 0;                                                                    \
    if (s == 1) {                                                                     \
      T parts[64];                                                                    \
      while (i + WADD_BLOCK <= n) {                                                   \
        int64_t nb = (n - i) / WADD_BLOCK < 64 ? (n - i) / WADD_BLOCK : 64;           \
        BLOCKS(parts, p + i, nb);                                                     \
        FOLD_PARTS(acc, parts, nb);                                                   \
        i += nb * WADD_BLOCK;                                                         \
      }                                                                               \
    }                                                                                 \
    double a = *(double *)acc;                                                        \
    for (; i < n; i++) a += p[i * s];                                                 \
    *(double *)acc = a;                                                               \
  }
LANE_BLOCKS(wadd_f32_blocks, float)
static void wadd_f32_fold_parts(void *acc, const void *parts, int64_t nb) {
  const float *q = parts;
  double a = *(double *)acc;
  for (int64_t b = 0; b < nb; b++) a += q[b];
  *(double *)acc = a;
}
BLOCKED_RUN(fold_wadd_f32_run, float, wadd_f32_blocks, wadd_f32_fold_parts)
/* A contiguous row into a row of accumulators (a sum over a leading
 * dimension): its own loop, so it vectorizes. */
HLK_VECTORIZE static void wadd_f32_row(double *restrict a, const float *restrict p, int64_t n) {
  for (int64_t i = 0; i < n; i++) a[i] += p[i];
}
static void fold_wadd_f32_vec(void *acc, const void *src, int64_t n, int64_t s) {
  double *a = acc;
  const float *p = src;
  if (s == 1) {
    wadd_f32_row(a, p, n);
    return;
  }
  for (int64_t i = 0; i < n; i++) a[i] += p[i * s];
}
static void fold_wadd_f32_store(void *dst, const void *acc, int64_t n) {
  float *d = dst;
  const double *a = acc;
  for (int64_t i = 0; i < n; i++) d[i] = (float)a[i];
}
FOLD_ROWS(wadd_f32, float, double, F32_TO_D, OP_ADD)
static const HlkFold fold_wadd_f32 = {sizeof(double), fold_wadd_f32_init, fold_wadd_f32_run,
                                      fold_wadd_f32_vec, fold_wadd_f32_store,
                                      WADD_BLOCK, sizeof(float), wadd_f32_blocks,
                                      wadd_f32_fold_parts, wadd_f32_rows, NULL};

/* f64 add (reduce): nothing wider to accumulate in, so long contiguous runs
 * are cut into blocks of 256 summed in 16 lanes (each lane adds 16 values,
 * then the lanes pairwise), and block sums accumulate in order: the error
 * grows with 16 + the number of blocks instead of the length, and the
 * order is fixed, so results do not depend on threads. */
LANE_BLOCKS(badd_f64_blocks, double)
static void badd_f64_fold_parts(void *acc, const void *parts, int64_t nb) {
  fold_add_f64_run(acc, parts, nb, 1);
}
BLOCKED_RUN(fold_badd_f64_run, double, badd_f64_blocks, badd_f64_fold_parts)
static const HlkFold fold_badd_f64 = {sizeof(double), fold_add_f64_init, fold_badd_f64_run,
                                      fold_add_f64_vec, fold_add_f64_store,
                                      WADD_BLOCK, sizeof(double), badd_f64_blocks,
                                      badd_f64_fold_parts, fold_add_f64_rows, NULL};

/* f32 / f64 maximum and minimum over a contiguous run: two 64-byte vectors
 * of lanes find the extreme value quickly; NaNs are noticed lane by lane
 * through sums of v - v, which stay 0 unless a NaN or an infinity passes
 * (the compiler had folded a `v != v` flag across the vector at every step,
 * and GCC 12 compares 64-byte vectors into a vector one lane at a time: a
 * row maximum of f32[4096,1024] took 1 ms on one core). When the run holds
 * a NaN or an infinity, or the extreme is zero (where -0/+0 order matters),
 * the sequential loop gives the exact answer. I is the integer type as
 * wide as T (what a vector comparison yields). */
enum { EXTREME_BYTES = 64 };   /* one vector of lanes (two accumulators of it) */
#define FAST_EXTREME(NAME, T, I, CMP, SEQ)                                            \
  typedef T NAME##_v __attribute__((vector_size(EXTREME_BYTES)));                     \
  typedef I NAME##_m __attribute__((vector_size(EXTREME_BYTES)));                     \
  HLK_VECTORIZE static void NAME(void *acc, const void *src, int64_t n, int64_t s) {  \
    enum { VL = EXTREME_BYTES / sizeof(T) };                                          \
    const T *p = src;                                                                 \
    T a = *(T *)acc;                                                                  \
    if (s == 1 && n >= 4 * VL && a == a) {                                            \
      NAME##_v l0, l1, v0, v1;                                                        \
      memcpy(&l0, p, sizeof l0);                                                      \
      memcpy(&l1, p + VL, sizeof l1);                                                 \
      NAME##_v z0 = l0 - l0, z1 = l1 - l1;   /* v - v: 0, or NaN for NaN and inf */  \
      int64_t i = 2 * VL;                                                             \
      NAME##_m g0, g1;                                                                \
      for (; i + 2 * VL <= n; i += 2 * VL) {                                          \
        memcpy(&v0, p + i, sizeof v0);                                                \
        memcpy(&v1, p + i + VL, sizeof v1);                                           \
        z0 += v0 - v0;                                                                \
        z1 += v1 - v1;                                                                \
        g0 = v0 CMP l0;                                                               \
        g1 = v1 CMP l1;                                                               \
        l0 = (NAME##_v)(((NAME##_m)v0 & g0) | ((NAME##_m)l0 & ~g0));                  \
        l1 = (NAME##_v)(((NAME##_m)v1 & g1) | ((NAME##_m)l1 & ~g1));                  \
      }                                                                               \
      g0 = l1 CMP l0;                                                                 \
      l0 = (NAME##_v)(((NAME##_m)l1 & g0) | ((NAME##_m)l0 & ~g0));                    \
      I any = 0;                                                                      \
      T m = l0[0];                                                                    \
      for (int k = 0; k < VL; k++) {                                                  \
        any |= z0[k] != 0 || z1[k] != 0;                                              \
        m = l0[k] CMP m ? l0[k] : m;                                                  \
      }                                                                               \
      for (; i < n; i++) {                                                            \
        any |= p[i] != p[i];                                                          \
        m = p[i] CMP m ? p[i] : m;                                                    \
      }                                                                               \
      if (!any && m != 0) {                                                           \
        *(T *)acc = m CMP a ? m : a;                                                  \
        return;                                                                       \
      }                                                                               \
    }                                                                                 \
    SEQ(acc, src, n, s);                                                              \
  }
FAST_EXTREME(fold_max_f32_fast_run, float, int32_t, >, fold_max_f32_run)
FAST_EXTREME(fold_min_f32_fast_run, float, int32_t, <, fold_min_f32_run)
FAST_EXTREME(fold_max_f64_fast_run, double, int64_t, >, fold_max_f64_run)
FAST_EXTREME(fold_min_f64_fast_run, double, int64_t, <, fold_min_f64_run)
/* The fold NAME with run() taking the lanes first. */
#define FAST_FOLD(NAME, T)                                                            \
  static const HlkFold NAME##_fast = {sizeof(T), NAME##_init, NAME##_fast_run, NAME##_vec, \
                                      NAME##_store, 0, 0, NULL, NULL, NAME##_rows,    \
                                      NAME##_scan};
FAST_FOLD(fold_max_f32, float)
FAST_FOLD(fold_min_f32, float)
FAST_FOLD(fold_max_f64, double)
FAST_FOLD(fold_min_f64, double)

/* Complex: add and multiply only (maximum/minimum are not defined). */
FOLD_DEFINE(fold_add_c64, float complex, float complex, ID, ID, OP_ADD)
FOLD_DEFINE(fold_mul_c64, float complex, float complex, ID, ID, OP_MUL)
FOLD_DEFINE(fold_add_c128, double complex, double complex, ID, ID, OP_ADD)
FOLD_DEFINE(fold_mul_c128, double complex, double complex, ID, ID, OP_MUL)

#define INT_PICK(N, UP, T, U)                                                        \
  case HLO_##UP:                                                                     \
    switch (op) {                                                                    \
    case HLI_BINOP_ADD: return &fold_add_##N;                                        \
    case HLI_BINOP_MUL: return &fold_mul_##N;                                        \
    case HLI_BINOP_MAX: return &fold_max_##N;                                        \
    case HLI_BINOP_MIN: return &fold_min_##N;                                        \
    case HLI_BINOP_AND: return &fold_and_##N;                                        \
    case HLI_BINOP_OR: return &fold_or_##N;                                          \
    case HLI_BINOP_XOR: return &fold_xor_##N;                                        \
    default: return NULL;                                                            \
    }

const HlkFold *hlk_fold(HliBinop op, HloDtype t, bool wide_add) {
  switch (t) {
  INT_TYPES(INT_PICK)
  case HLO_PRED:
    switch (op) {
    case HLI_BINOP_ADD: case HLI_BINOP_OR: case HLI_BINOP_MAX: return &fold_or_pred;
    case HLI_BINOP_MUL: case HLI_BINOP_AND: case HLI_BINOP_MIN: return &fold_and_pred;
    case HLI_BINOP_XOR: return &fold_xor_pred;
    default: return NULL;
    }
  case HLO_F32:
    switch (op) {
    case HLI_BINOP_ADD: return wide_add ? &fold_wadd_f32 : &fold_add_f32;
    case HLI_BINOP_MUL: return &fold_mul_f32;
    case HLI_BINOP_MAX: return &fold_max_f32_fast;
    case HLI_BINOP_MIN: return &fold_min_f32_fast;
    default: return NULL;
    }
  case HLO_F64:
    switch (op) {
    case HLI_BINOP_ADD: return wide_add ? &fold_badd_f64 : &fold_add_f64;
    case HLI_BINOP_MUL: return &fold_mul_f64;
    case HLI_BINOP_MAX: return &fold_max_f64_fast;
    case HLI_BINOP_MIN: return &fold_min_f64_fast;
    default: return NULL;
    }
  case HLO_F16:
    switch (op) {
    case HLI_BINOP_ADD: return wide_add ? &fold_wadd_f16 : &fold_add_f16;
    case HLI_BINOP_MUL: return &fold_mul_f16;
    case HLI_BINOP_MAX: return &fold_max_f16;
    case HLI_BINOP_MIN: return &fold_min_f16;
    default: return NULL;
    }
  case HLO_BF16:
    switch (op) {
    case HLI_BINOP_ADD: return wide_add ? &fold_wadd_bf16 : &fold_add_bf16;
    case HLI_BINOP_MUL: return &fold_mul_bf16;
    case HLI_BINOP_MAX: return &fold_max_bf16;
    case HLI_BINOP_MIN: return &fold_min_bf16;
    default: return NULL;
    }
  case HLO_C64:
    return op == HLI_BINOP_ADD ? &fold_add_c64 : op == HLI_BINOP_MUL ? &fold_mul_c64 : NULL;
  case HLO_C128:
    return op == HLI_BINOP_ADD ? &fold_add_c128 : op == HLI_BINOP_MUL ? &fold_mul_c128 : NULL;
  default:
    return NULL;
  }
}

HliBinop hlk_match_reducer(const HloComputation *c) {
  HliBinop op = hli_match_binop(c);
  if (op == HLI_BINOP_SELECT_RHS) return HLI_BINOP_NONE;
  if ((op == HLI_BINOP_MAX || op == HLI_BINOP_MIN) && c->root->ops[0]->parameter_number != 0)
    return HLI_BINOP_NONE;
  return op;
}

/* ---- Scalar computation calls --------------------------------------- */

static bool is_scalar_of(const HloShape *s, HloDtype t) {
  return s->dtype == t && s->rank == 0;
}

int hlk_check_signature(HliExec *x, const HloInstr *ins, const HloComputation *comp,
                        int32_t nargs, const HloDtype *arg_types, int32_t nres,
                        const HloDtype *res_types) {
  if (!comp || !comp->root)
    return hli_fail(x, ins, "missing called computation");
  if (comp->nparams != nargs)
    return hli_fail(x, ins, "computation %s takes %d parameters, expected %d", comp->name,
                    comp->nparams, nargs);
  for (int32_t i = 0; i < nargs; i++)
    if (!comp->params[i] || !is_scalar_of(&comp->params[i]->shape, arg_types[i]))
      return hli_fail(x, ins, "parameter %d of computation %s must be %s[]", i, comp->name,
                      hlc_dtype_name(arg_types[i]));
  const HloShape *r = &comp->root->shape;
  if (nres == 1 && is_scalar_of(r, res_types[0])) return 0;
  if (r->dtype == HLO_TUPLE && r->ntuple == nres) {
    bool ok = true;
    for (int32_t j = 0; j < nres; j++) ok = ok && is_scalar_of(&r->tuple[j], res_types[j]);
    if (ok) return 0;
  }
  return hli_fail(x, ins, "computation %s does not return the %d scalar(s) expected",
                  comp->name, nres);
}

int hlk_scall_init(HlkScalarCall *sc, HliExec *x, const HloInstr *ins,
                   const HloComputation *comp, int32_t nargs, const HloDtype *arg_types,
                   int32_t nres, const HloDtype *res_types) {
  memset(sc, 0, sizeof *sc);
  sc->x = x;
  sc->ins = ins;
  sc->comp = comp;
  if (nargs > 2 * HLK_MAX_VARIADIC || nres > HLK_MAX_VARIADIC)
    return hli_unsupported(x, ins, "more than %d operands", HLK_MAX_VARIADIC);
  if (hlk_check_signature(x, ins, comp, nargs, arg_types, nres, res_types) != 0) return -1;
  for (int32_t i = 0; i < nargs; i++) {
    sc->args[i] = hli_value_zeros(x, &comp->params[i]->shape);
    if (!sc->args[i]) {
      hlk_scall_free(sc);
      return hli_fail_nomem(x, ins, "out of memory");
    }
    sc->nargs = i + 1;
  }
  sc->nres = nres;
  for (int32_t j = 0; j < nres; j++) sc->res_dtype[j] = res_types[j];
  return 0;
}

void hlk_scall_free(HlkScalarCall *sc) {
  for (int32_t i = 0; i < sc->nargs; i++) hli_value_unref(sc->x, sc->args[i]);
  sc->nargs = 0;
}

int hlk_scall_run(HlkScalarCall *sc, void *const *res) {
  HliValue *r = NULL;
  if (hli_call(sc->x, sc->comp, sc->args, &r) != 0 || !r) {
    hli_value_unref(sc->x, r);
    return hli_fail(sc->x, sc->ins, "computation %s failed", sc->comp->name);
  }
  if (r->dtype == HLO_TUPLE) {
    for (int32_t j = 0; j < sc->nres && j < r->ntuple; j++)
      memcpy(res[j], r->tuple[j]->data, hlc_dtype_size(sc->res_dtype[j]));
  } else {
    memcpy(res[0], r->data, hlc_dtype_size(sc->res_dtype[0]));
  }
  hli_value_unref(sc->x, r);
  return 0;
}

int hlk_scall_pred(HlkScalarCall *sc) {
  uint8_t b = 0;
  void *res[1] = {&b};
  if (hlk_scall_run(sc, res) != 0) return -1;
  return b != 0;
}

/* ---- Matchers -------------------------------------------------------- */

const HloComputation *hlk_called(const HloInstr *ins, HloCallRole role) {
  for (int32_t i = 0; i < ins->ncalled; i++)
    if (ins->called[i].role == role) return ins->called[i].comp;
  return NULL;
}

HloCmpType hlk_default_cmp_type(HloDtype t) {
  switch (hlc_dtype_kind(t)) {
  case HLO_KIND_FLOAT: case HLO_KIND_COMPLEX: return HLO_CMPT_FLOAT;
  case HLO_KIND_SINT: return HLO_CMPT_SIGNED;
  default: return HLO_CMPT_UNSIGNED;
  }
}

static bool is_param(const HloInstr *i, int64_t n) {
  return i->op == HLO_OP_PARAMETER && i->parameter_number == n;
}

static HloCmpType cmp_type_of(const HloInstr *c) {
  return c->cmp_type == HLO_CMPT_DEFAULT ? hlk_default_cmp_type(c->ops[0]->shape.dtype)
                                         : c->cmp_type;
}

/* compare(P[a], P[b]) with direction dir; commutative directions (EQ, NE)
 * also match with the operands swapped. */
static bool is_cmp(const HloInstr *i, HloCmpDir dir, int64_t a, int64_t b) {
  if (i->op != HLO_OP_COMPARE || i->nops != 2 || i->cmp_dir != dir) return false;
  if (is_param(i->ops[0], a) && is_param(i->ops[1], b)) return true;
  return (dir == HLO_CMP_EQ || dir == HLO_CMP_NE) && is_param(i->ops[0], b) &&
         is_param(i->ops[1], a);
}

/* Binary commutative op of the two given instructions (either order). */
static bool is_pair(const HloInstr *i, HloOpcode op, const HloInstr **x, const HloInstr **y) {
  if (i->op != op || i->nops != 2) return false;
  *x = i->ops[0];
  *y = i->ops[1];
  return true;
}

/* pick = or(compare(p0, p2) DIR, compare(p0, p0) NE) */
static bool match_pick(const HloInstr *pick, HloCmpDir *dir, HloCmpType *vt) {
  const HloInstr *a, *b;
  if (!is_pair(pick, HLO_OP_OR, &a, &b)) return false;
  for (int swap = 0; swap < 2; swap++) {
    const HloInstr *c = swap ? b : a, *n = swap ? a : b;
    if (!is_cmp(n, HLO_CMP_NE, 0, 0)) continue;
    if (is_cmp(c, HLO_CMP_GT, 0, 2) || is_cmp(c, HLO_CMP_LT, 0, 2)) {
      *dir = c->cmp_dir;
      *vt = cmp_type_of(c);
      return cmp_type_of(n) == *vt;
    }
  }
  return false;
}

/* ipick = or(pick, and(compare(p0, p2) EQ, compare(p1, p3) LT)) */
static bool match_ipick(const HloInstr *ipick, const HloInstr *pick, HloCmpType vt,
                        HloCmpType it) {
  const HloInstr *a, *b, *c, *d;
  if (!is_pair(ipick, HLO_OP_OR, &a, &b)) return false;
  const HloInstr *tie = a == pick ? b : b == pick ? a : NULL;
  if (!tie || !is_pair(tie, HLO_OP_AND, &c, &d)) return false;
  for (int swap = 0; swap < 2; swap++) {
    const HloInstr *eq = swap ? d : c, *lt = swap ? c : d;
    if (is_cmp(eq, HLO_CMP_EQ, 0, 2) && cmp_type_of(eq) == vt && is_cmp(lt, HLO_CMP_LT, 1, 3) &&
        cmp_type_of(lt) == it)
      return true;
  }
  return false;
}

bool hlk_match_arg_reducer(const HloComputation *c, HlkArgReducer *out) {
  if (!c || c->nparams != 4 || !c->root) return false;
  for (int i = 0; i < 4; i++)
    if (!c->params[i] || c->params[i]->shape.rank != 0) return false;
  HloDtype vt = c->params[0]->shape.dtype, it = c->params[1]->shape.dtype;
  if (c->params[2]->shape.dtype != vt || c->params[3]->shape.dtype != it) return false;
  if (!hlc_dtype_is_int(it)) return false;
  const HloInstr *r = c->root;
  if (r->op != HLO_OP_TUPLE || r->nops != 2) return false;
  const HloInstr *sv = r->ops[0], *si = r->ops[1];
  if (sv->op != HLO_OP_SELECT || si->op != HLO_OP_SELECT) return false;
  if (!is_param(sv->ops[1], 0) || !is_param(sv->ops[2], 2)) return false;
  if (!is_param(si->ops[1], 1) || !is_param(si->ops[2], 3)) return false;
  HloCmpDir dir;
  HloCmpType vtype;
  if (!match_pick(sv->ops[0], &dir, &vtype)) return false;
  /* Value compares must be the element type's own order (not TOTALORDER). */
  if (vtype != hlk_default_cmp_type(vt) || hlc_dtype_is_complex(vt)) return false;
  if (!match_ipick(si->ops[0], sv->ops[0], vtype, hlk_default_cmp_type(it))) return false;
  out->is_max = dir == HLO_CMP_GT;
  out->vtype = vtype;
  return true;
}

/* A scalar constant whose value is +0 (is_nan false) or a NaN (true). */
static bool is_const(const HloInstr *i, bool want_nan) {
  if (i->op != HLO_OP_CONSTANT || !i->literal || !i->literal->data || i->shape.rank != 0)
    return false;
  double v;
  switch (i->shape.dtype) {
  case HLO_F32: { float f; memcpy(&f, i->literal->data, 4); v = f; break; }
  case HLO_F64: memcpy(&v, i->literal->data, 8); break;
  case HLO_F16: { uint16_t h; memcpy(&h, i->literal->data, 2); v = hlk_f16_to_f32(h); break; }
  case HLO_BF16: { uint16_t h; memcpy(&h, i->literal->data, 2); v = hlk_bf16_to_f32(h); break; }
  default: return false;
  }
  return want_nan ? v != v : (v == 0 && !signbit(v));
}

/* canon(p) = select(compare(p, p) NE, NaN, select(compare(p, 0) EQ, 0, p)) */
static bool is_canon_of(const HloInstr *s, int64_t p) {
  if (s->op != HLO_OP_SELECT || s->nops != 3) return false;
  if (!is_cmp(s->ops[0], HLO_CMP_NE, p, p) || cmp_type_of(s->ops[0]) != HLO_CMPT_FLOAT) return false;
  if (!is_const(s->ops[1], true)) return false;
  const HloInstr *z = s->ops[2];
  if (z->op != HLO_OP_SELECT || z->nops != 3 || !is_param(z->ops[2], p)) return false;
  const HloInstr *e = z->ops[0];
  if (e->op != HLO_OP_COMPARE || e->cmp_dir != HLO_CMP_EQ || cmp_type_of(e) != HLO_CMPT_FLOAT)
    return false;
  bool ok = (is_param(e->ops[0], p) && is_const(e->ops[1], false)) ||
            (is_param(e->ops[1], p) && is_const(e->ops[0], false));
  return ok && is_const(z->ops[1], false);
}

bool hlk_match_comparator(const HloComputation *c, int32_t nops, HlkComparator *out) {
  if (!c || !c->root || c->nparams != 2 * nops) return false;
  for (int32_t i = 0; i < c->nparams; i++)
    if (!c->params[i] || c->params[i]->shape.rank != 0) return false;
  const HloInstr *r = c->root;
  if (r->op != HLO_OP_COMPARE || r->nops != 2) return false;
  if (r->cmp_dir != HLO_CMP_LT && r->cmp_dir != HLO_CMP_GT) return false;
  HloDtype t = c->params[0]->shape.dtype;
  if (c->params[1]->shape.dtype != t) return false;
  HloCmpType ct = cmp_type_of(r);
  bool desc = r->cmp_dir == HLO_CMP_GT;
  if (is_param(r->ops[0], 0) && is_param(r->ops[1], 1)) {
    out->kind = HLK_CMP_PLAIN;
  } else if (is_param(r->ops[0], 1) && is_param(r->ops[1], 0)) {
    out->kind = HLK_CMP_PLAIN;
    desc = !desc;   /* compare(b, a) LT  ==  a > b */
  } else if (hlc_dtype_is_float(t) && ct == HLO_CMPT_TOTALORDER && is_canon_of(r->ops[0], 0) &&
             is_canon_of(r->ops[1], 1)) {
    out->kind = HLK_CMP_CANON;
  } else {
    return false;
  }
  out->descending = desc;
  out->type = ct;
  return true;
}

bool hlk_match_select(const HloComputation *c, HloCmpDir *dir, HloCmpType *type) {
  if (!c || !c->root || c->nparams != 2) return false;
  const HloInstr *r = c->root;
  if (r->op != HLO_OP_COMPARE || r->nops != 2) return false;
  HloCmpDir d = r->cmp_dir;
  if (d == HLO_CMP_EQ || d == HLO_CMP_NE) return false;
  if (is_param(r->ops[1], 0) && is_param(r->ops[0], 1)) {
    /* compare(p1, p0) GE  ==  p0 LE p1 */
    d = d == HLO_CMP_GE ? HLO_CMP_LE : d == HLO_CMP_GT ? HLO_CMP_LT
      : d == HLO_CMP_LE ? HLO_CMP_GE : HLO_CMP_GT;
  } else if (!(is_param(r->ops[0], 0) && is_param(r->ops[1], 1))) {
    return false;
  }
  *dir = d;
  *type = cmp_type_of(r);
  return true;
}
