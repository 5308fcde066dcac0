/* gemm_ukr.c: the GEMM micro-kernels, written once with GCC vector
 * extensions and compiled once per instruction set (dot.mk builds this file
 * three times with different -m flags and HLK_UKR_ISA), each build exporting
 * one HlkUkrTable. The driver (gemm.c) picks the table at run time.
 *
 * A micro-kernel multiplies an MR-row sliver of packed A by an NR-column
 * sliver of packed B, keeping the MR x NR block of C in registers:
 *   scalar  (16-byte vectors) f32 4x8,   f64 4x4
 *   avx2    (32-byte, FMA)    f32 6x16,  f64 6x8
 *   avx512  (64-byte)         f32 12x32, f64 12x16
 * and the same for the integer kernels (unsigned 32- and 64-bit lanes,
 * wrapping), whose multiply is a separate instruction from the add so they
 * need a register more: u32 and u64 use MR_U32 / MR_U64 rows.
 * Not here: packing, blocking, edges (gemm.c).
 */
#include "interp/kernels/gemm.h"

#if HLK_UKR_ISA == 2
#define VBYTES 64
#define MR_F32 12
#define MR_F64 12
#define MR_U32 12
#define MR_U64 12
#define ISA_NAME "avx512"
#define TABLE hlk_ukr_avx512
#elif HLK_UKR_ISA == 1
#define VBYTES 32
#define MR_F32 6
#define MR_F64 6
#define MR_U32 6
#define MR_U64 4
#define ISA_NAME "avx2"
#define TABLE hlk_ukr_avx2
#else
#define VBYTES 16
#define MR_F32 4
#define MR_F64 4
#define MR_U32 4
#define MR_U64 4
#define ISA_NAME "scalar"
#define TABLE hlk_ukr_scalar
#endif

/* Every kernel holds two vectors of C per row. */
#define NV 2

/* Stamp one kernel for element type T. Fully unrolled so the MR x NV
 * accumulators stay in registers; the broadcast of one A value times NV
 * vectors of B is the whole inner step. Unaligned access to C, aligned to
 * the packed panels. ROWS (<= MR) rows of C are computed and stored: the
 * full kernel has ROWS = MR, the edge variants fewer, so a last partial
 * sliver of A needs no scratch tile (its padding rows are never read).
 * C's rows are prefetched for writing first: the tile is touched only after
 * kc steps, and a miss there stalled every call (C rows are far apart). */
#define UKR_BODY(T, SUF, MR, ROWS)                                                        \
  {                                                                                       \
    SUF##_v acc[ROWS][NV];                                                                \
    _Pragma("GCC unroll 16") for (int i = 0; i < ROWS; i++) {                             \
      __builtin_prefetch(c + i * ldc, 1, 3);                                              \
      __builtin_prefetch(c + i * ldc + NV * SUF##_VL - 1, 1, 3);                          \
      _Pragma("GCC unroll 4") for (int j = 0; j < NV; j++) acc[i][j] = (SUF##_v){0};      \
    }                                                                                     \
    for (int64_t p = 0; p < kc; p++) {                                                    \
      SUF##_v b[NV];                                                                      \
      _Pragma("GCC unroll 4") for (int j = 0; j < NV; j++)                                \
        b[j] = *(const SUF##_v *)(bp + j * SUF##_VL);                                     \
      _Pragma("GCC unroll 16") for (int i = 0; i < ROWS; i++) {                           \
        SUF##_v a = splat_##SUF(ap[i]);                                                   \
        _Pragma("GCC unroll 4") for (int j = 0; j < NV; j++) acc[i][j] += a * b[j];       \
      }                                                                                   \
      ap += MR;                                                                           \
      bp += NV * SUF##_VL;                                                                \
    }                                                                                     \
    _Pragma("GCC unroll 16") for (int i = 0; i < ROWS; i++)                               \
      _Pragma("GCC unroll 4") for (int j = 0; j < NV; j++) {                              \
        SUF##_vu *cp = (SUF##_vu *)(c + i * ldc + j * SUF##_VL);                          \
        if (accumulate) *cp += acc[i][j];                                                 \
        else *cp = acc[i][j];                                                             \
      }                                                                                   \
  }
#define DEFINE_UKR(T, SUF, MR)                                                            \
  typedef T SUF##_v __attribute__((vector_size(VBYTES)));                                 \
  typedef T SUF##_vu __attribute__((vector_size(VBYTES), aligned(sizeof(T))));            \
  enum { SUF##_VL = VBYTES / (int)sizeof(T) };                                            \
  /* A value in every lane, as one broadcast (from memory): x - 0 is x for    \
   * every x, so it folds away, where {0} + x costs an add (-0 + 0 = +0). */    \
  static inline SUF##_v splat_##SUF(T x) { return x - (SUF##_v){0}; }                     \
  static void ukr_##SUF(int64_t kc, const T *ap, const T *bp, T *c, int64_t ldc,          \
                        int accumulate) UKR_BODY(T, SUF, MR, MR)

DEFINE_UKR(float, f32, MR_F32)

/* The f32 kernel for the first `rows` (< MR) rows of a sliver: one
 * instantiation per row count, the same products and sums per element as
 * ukr_f32, so an edge row gets the bits a full tile would give it. */
#define EDGE_F32(R)                                                                       \
  static void ukr_f32_r##R(int64_t kc, const float *ap, const float *bp, float *c,        \
                           int64_t ldc, int accumulate) UKR_BODY(float, f32, MR_F32, R)
EDGE_F32(1) EDGE_F32(2) EDGE_F32(3)
#if MR_F32 > 4
EDGE_F32(4) EDGE_F32(5)
#endif
#if MR_F32 > 6
EDGE_F32(6) EDGE_F32(7) EDGE_F32(8) EDGE_F32(9) EDGE_F32(10) EDGE_F32(11)
#endif
DEFINE_UKR(double, f64, MR_F64)

/* The f32 kernel with A read in place from ROWS rows lda apart (a
 * row-major A need not be packed when few column slivers would reuse the
 * packing): the same products and sums, in the same order, as ukr_f32.
 * ROWS = MR_F32 is the full kernel; fewer rows serve a short last tile
 * (conv_rows.c), which would otherwise compute a whole tile through a
 * scratch copy and throw rows away. */
#define ROWS_BODY(ROWS)                                                                   \
  {                                                                                       \
    f32_v acc[ROWS][NV];                                                                  \
    const float *row[ROWS];                                                               \
    _Pragma("GCC unroll 16") for (int i = 0; i < ROWS; i++) {                             \
      row[i] = ap + i * lda;                                                              \
      __builtin_prefetch(c + i * ldc, 1, 3);                                              \
      __builtin_prefetch(c + i * ldc + NV * f32_VL - 1, 1, 3);                            \
      _Pragma("GCC unroll 4") for (int j = 0; j < NV; j++) acc[i][j] = (f32_v){0};        \
    }                                                                                     \
    for (int64_t p = 0; p < kc; p++) {                                                    \
      f32_v b[NV];                                                                        \
      _Pragma("GCC unroll 4") for (int j = 0; j < NV; j++)                                \
        b[j] = *(const f32_v *)(bp + j * f32_VL);                                         \
      _Pragma("GCC unroll 16") for (int i = 0; i < ROWS; i++) {                           \
        f32_v a = splat_f32(row[i][p]);                                                   \
        _Pragma("GCC unroll 4") for (int j = 0; j < NV; j++) acc[i][j] += a * b[j];       \
      }                                                                                   \
      bp += NV * f32_VL;                                                                  \
    }                                                                                     \
    _Pragma("GCC unroll 16") for (int i = 0; i < ROWS; i++)                               \
      _Pragma("GCC unroll 4") for (int j = 0; j < NV; j++) {                              \
        f32_vu *cp = (f32_vu *)(c + i * ldc + j * f32_VL);                                \
        if (accumulate) *cp += acc[i][j];                                                 \
        else *cp = acc[i][j];                                                             \
      }                                                                                   \
  }
#define ROWS_F32(NAME, ROWS)                                                              \
  static void NAME(int64_t kc, const float *ap, int64_t lda, const float *bp, float *c,  \
                   int64_t ldc, int accumulate) ROWS_BODY(ROWS)
ROWS_F32(ukr_rows_f32, MR_F32)
ROWS_F32(ukr_rows_f32_r1, 1) ROWS_F32(ukr_rows_f32_r2, 2) ROWS_F32(ukr_rows_f32_r3, 3)
#if MR_F32 > 4
ROWS_F32(ukr_rows_f32_r4, 4) ROWS_F32(ukr_rows_f32_r5, 5)
#endif
#if MR_F32 > 6
ROWS_F32(ukr_rows_f32_r6, 6) ROWS_F32(ukr_rows_f32_r7, 7) ROWS_F32(ukr_rows_f32_r8, 8)
ROWS_F32(ukr_rows_f32_r9, 9) ROWS_F32(ukr_rows_f32_r10, 10) ROWS_F32(ukr_rows_f32_r11, 11)
#endif
DEFINE_UKR(uint32_t, u32, MR_U32)
DEFINE_UKR(uint64_t, u64, MR_U64)

/* The 16-bit pair kernel: products of integers that fit in int16 (s8, u8,
 * s16, sub-byte, pred operands of a result of at most 32 bits), two shared-
 * dim steps per 32-bit lane: A holds, per pair step, one 32-bit word per row
 * (lo = step 2q, hi = step 2q+1), B one word per column; each lane adds
 * lo_a*lo_b + hi_a*hi_b to its 32-bit sum. On x86 that is one pmaddwd (the
 * pair sum wraps modulo 2^32 like everything else), elsewhere two
 * multiplies of sign-extended halves. */
typedef uint32_t i16_v __attribute__((vector_size(VBYTES)));
typedef uint32_t i16_vu __attribute__((vector_size(VBYTES), aligned(4)));
enum { i16_VL = VBYTES / 4 };
#if HLK_UKR_ISA == 2
#include <immintrin.h>
#define MADD(a, b) ((i16_v)_mm512_madd_epi16((__m512i)(a), (__m512i)(b)))
#elif HLK_UKR_ISA == 1
#include <immintrin.h>
#define MADD(a, b) ((i16_v)_mm256_madd_epi16((__m256i)(a), (__m256i)(b)))
#elif defined(__SSE2__)
#include <emmintrin.h>
#define MADD(a, b) ((i16_v)_mm_madd_epi16((__m128i)(a), (__m128i)(b)))
#else
static inline i16_v madd_generic(i16_v a, i16_v b) {
  typedef int32_t s_v __attribute__((vector_size(VBYTES)));
  i16_v alo = (i16_v)(((s_v)(a << 16)) >> 16), ahi = (i16_v)(((s_v)a) >> 16);
  i16_v blo = (i16_v)(((s_v)(b << 16)) >> 16), bhi = (i16_v)(((s_v)b) >> 16);
  return alo * blo + ahi * bhi;
}
#define MADD(a, b) madd_generic(a, b)
#endif

static void ukr_i16(int64_t kp, const uint32_t *ap, const uint32_t *bp, uint32_t *c,
                    int64_t ldc, int accumulate) {
  i16_v acc[MR_U32][NV];
  _Pragma("GCC unroll 16") for (int i = 0; i < MR_U32; i++)
    _Pragma("GCC unroll 4") for (int j = 0; j < NV; j++) acc[i][j] = (i16_v){0};
  for (int64_t p = 0; p < kp; p++) {
    i16_v b[NV];
    _Pragma("GCC unroll 4") for (int j = 0; j < NV; j++) b[j] = *(const i16_v *)(bp + j * i16_VL);
    _Pragma("GCC unroll 16") for (int i = 0; i < MR_U32; i++) {
      i16_v a = (i16_v){0} + ap[i];
      _Pragma("GCC unroll 4") for (int j = 0; j < NV; j++) acc[i][j] += MADD(a, b[j]);
    }
    ap += MR_U32;
    bp += NV * i16_VL;
  }
  _Pragma("GCC unroll 16") for (int i = 0; i < MR_U32; i++)
    _Pragma("GCC unroll 4") for (int j = 0; j < NV; j++) {
      i16_vu *cp = (i16_vu *)(c + i * ldc + j * i16_VL);
      if (accumulate) *cp += acc[i][j];
      else *cp = acc[i][j];
    }
}

const HlkUkrTable TABLE = {
  .isa = ISA_NAME,
  .mr_f32 = MR_F32, .nr_f32 = NV * f32_VL, .f32 = ukr_f32, .f32_rows = ukr_rows_f32,
#if MR_F32 > 6
  .f32_edge = {0, ukr_f32_r1, ukr_f32_r2, ukr_f32_r3, ukr_f32_r4, ukr_f32_r5, ukr_f32_r6,
               ukr_f32_r7, ukr_f32_r8, ukr_f32_r9, ukr_f32_r10, ukr_f32_r11},
#elif MR_F32 > 4
  .f32_edge = {0, ukr_f32_r1, ukr_f32_r2, ukr_f32_r3, ukr_f32_r4, ukr_f32_r5},
#else
  .f32_edge = {0, ukr_f32_r1, ukr_f32_r2, ukr_f32_r3},
#endif
#if MR_F32 > 6
  .f32_rows_edge = {0, ukr_rows_f32_r1, ukr_rows_f32_r2, ukr_rows_f32_r3, ukr_rows_f32_r4,
                    ukr_rows_f32_r5, ukr_rows_f32_r6, ukr_rows_f32_r7, ukr_rows_f32_r8,
                    ukr_rows_f32_r9, ukr_rows_f32_r10, ukr_rows_f32_r11},
#elif MR_F32 > 4
  .f32_rows_edge = {0, ukr_rows_f32_r1, ukr_rows_f32_r2, ukr_rows_f32_r3, ukr_rows_f32_r4,
                    ukr_rows_f32_r5},
#else
  .f32_rows_edge = {0, ukr_rows_f32_r1, ukr_rows_f32_r2, ukr_rows_f32_r3},
#endif
  .mr_f64 = MR_F64, .nr_f64 = NV * f64_VL, .f64 = ukr_f64,
  .mr_u32 = MR_U32, .nr_u32 = NV * u32_VL, .u32 = ukr_u32,
  .mr_u64 = MR_U64, .nr_u64 = NV * u64_VL, .u64 = ukr_u64,
  .mr_i16 = MR_U32, .nr_i16 = NV * i16_VL, .i16 = ukr_i16,
};
