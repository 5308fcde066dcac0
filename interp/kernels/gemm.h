/* gemm.h: the dense matrix-multiply engine behind dot and convolution, and
 * the element conversions both kernels use around it.
 *
 * The GEMM computes C[m][n] = sum_k A[m][k] * B[k][n] for a batch of
 * matrices, in f32 or f64. A and B are read through arbitrary element
 * strides (so transposed or permuted operands need no copy); C is written
 * row-major (ldc) and overwritten. Work is cache-blocked, packed into
 * panels and run by a register-tiled micro-kernel chosen once per process
 * for the CPU (AVX-512, AVX2+FMA, or a portable one); HLORUN_ISA=
 * scalar|avx2|avx512 forces a choice. Tiles of C are spread over the
 * executor's threads.
 *
 * Summation order (f32, f64), the same on any number of threads and for
 * any tiling:  k is cut into blocks (a function of k
 * alone; hlk_gemm_kc_f32 for f32); within a block each element of C sums its products in step
 * order into a register that starts at zero (fused multiply-adds in the
 * AVX2 and AVX-512 kernels), and the block sums are added to C in block
 * order (the first block overwrites C unless accumulate is set).
 *
 * Integer products run on the same driver in 32-bit or 64-bit unsigned
 * lanes (hlk_gemm_u32/u64), or as int16 pairs into 32-bit lanes when the
 * operands fit (hlk_gemm_i16, pmaddwd): multiply-add modulo 2^w is
 * associative and commutative, so any blocking gives bit-identical results,
 * and a result type of at most 32 bits only needs the low 32 bits of every
 * product.
 *
 * Not here: dimension-number handling (dot.c), patches (conv.c), complex
 * products (those run the exact reference loops of dot.c/conv.c).
 */
#ifndef HLORUN_INTERP_KERNELS_GEMM_H
#define HLORUN_INTERP_KERNELS_GEMM_H
#include <stdint.h>
#include <stdbool.h>
#include <complex.h>
#include "interp/interp.h"
#include "interp/kernels/narrow.h"

/* Largest operand rank dot and convolution accept (index arrays live on the
 * stack); checked at plan time. */
#define HLK_MAX_RANK 64

/* ---- GEMM ------------------------------------------------------------- */

/* One batched product. Strides are in elements. */
typedef struct HlkGemm {
  int64_t batch, m, n, k;
  const void *a;                 /* borrowed */
  int64_t a_bs, a_rs, a_cs;      /* A[b][i][p] at a + b*a_bs + i*a_rs + p*a_cs */
  const void *b;                 /* borrowed */
  int64_t b_bs, b_rs, b_cs;      /* B[b][p][j] at b + b*b_bs + p*b_rs + j*b_cs */
  void *c;                       /* borrowed; overwritten */
  int64_t c_bs, ldc;             /* C[b][i][j] at c + b*c_bs + i*ldc + j */
  /* Optional (NULL = b * a_bs / b * b_bs): element offset of each batch
   * matrix, for batch dims that do not flatten to one stride. */
  const int64_t *a_boff, *b_boff;
  /* Element format of A and B for hlk_gemm_f32 (HLK_SRC_*): bf16 and f16
   * operands are widened while packing, so they need no converted copy. */
  uint8_t a_src, b_src;
  /* A is already packed (a_rs, a_cs unused): ceil(m / MR) slivers one after
   * another, sliver s holding k steps of MR values (rows s*MR.. , zero past
   * m), MR = hlk_gemm_mr_f32/f64(). Convolution writes its patches so. */
  bool a_packed;
  /* C += A B instead of C = A B (a convolution summing its shared
   * dimension in parts). */
  bool accumulate;
  /* The instruction this product runs for (messages, memory accounting). */
  const HloInstr *ins;
} HlkGemm;

enum { HLK_SRC_NATIVE = 0, HLK_SRC_BF16 = 1, HLK_SRC_F16 = 2 };

/* d[t*mr + lane] = src[lane][t] for t < n, lane < mr: mr rows of 4-byte
 * values interleaved into a packed panel (convolution patches, row-major A). */
void hlk_interleave32(const uint32_t *const *src, int64_t mr, int64_t n, uint32_t *d);

/* 0 on success; -1 if scratch memory could not be allocated (error
 * recorded on x). */
int hlk_gemm_f32(HliExec *x, const HlkGemm *g);
/* f32 products with one result column (n == 1: rows of A contiguous, B's
 * column contiguous) or one result row (m == 1: A's row and B's rows
 * contiguous), both operands f32 or both bf16, A not packed: whether
 * hlk_gemv_f32 takes g, and the product itself (gemv.c), streaming the
 * matrix once. */
bool hlk_gemv_f32_applies(const HlkGemm *g);
void hlk_gemv_f32(HliExec *x, const HlkGemm *g);
int hlk_gemm_f64(HliExec *x, const HlkGemm *g);
/* Integer products modulo 2^32 and 2^64 (a_src/b_src must be native). */
int hlk_gemm_u32(HliExec *x, const HlkGemm *g);
int hlk_gemm_u64(HliExec *x, const HlkGemm *g);
/* The same modulo 2^32 for operands whose values fit in int16 (a and b are
 * int16_t, C is uint32_t), two shared-dim steps per 32-bit multiply-add
 * (pmaddwd). A packed (a_packed) holds per sliver ceil(k/2) pair steps of
 * MR pairs: element (row, p) at sliver*KP*MR*2 + (p/2)*MR*2 + (row%MR)*2 +
 * p%2 int16s, KP = ceil(k/2), zero past k. */
int hlk_gemm_i16(HliExec *x, const HlkGemm *g);

/* Steps per shared-dim block of an f32 product of k steps (the summation
 * order above). */
int64_t hlk_gemm_kc_f32(int64_t k);
/* Instruction set of the micro-kernels in use ("avx512", "avx2", "scalar"). */
const char *hlk_gemm_isa(void);
/* The micro-kernels in use (the table below), for kernels that drive them
 * themselves (conv_rows.c). */
const struct HlkUkrTable *hlk_gemm_ukr(void);
/* Register-tile rows of the micro-kernels in use (layout of a_packed). */
int hlk_gemm_mr_f32(void);
int hlk_gemm_mr_f64(void);
int hlk_gemm_mr_u32(void);
int hlk_gemm_mr_u64(void);
int hlk_gemm_mr_i16(void);
/* Tests: the patch matrix size above which a convolution sums its window in
 * parts (0: the default, 8 MiB). */
void hlk_conv_patch_max(size_t bytes);
/* Tests: force an instruction set ("scalar", "avx2", "avx512"); returns false
 * (and changes nothing) if the CPU lacks it or the name is unknown. */
bool hlk_gemm_force_isa(const char *name);

/* ---- Micro-kernels (gemm_ukr.c, built once per instruction set) ------- */

/* C[0..mr)[0..nr) (+)= Apanel * Bpanel over kc steps, where Apanel holds
 * mr values per step and Bpanel nr values per step. accumulate=0 overwrites
 * C. Only full mr x nr tiles; edges go through a scratch tile. */
typedef void (*HlkUkrF32)(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc,
                          int accumulate);
typedef void (*HlkUkrF64)(int64_t kc, const double *ap, const double *bp, double *c,
                          int64_t ldc, int accumulate);
typedef void (*HlkUkrU32)(int64_t kc, const uint32_t *ap, const uint32_t *bp, uint32_t *c,
                          int64_t ldc, int accumulate);
typedef void (*HlkUkrU64)(int64_t kc, const uint64_t *ap, const uint64_t *bp, uint64_t *c,
                          int64_t ldc, int accumulate);

/* The f32 kernel reading A in place: value (row i, step p) at ap[i*lda + p]
 * (a row-major A, unpacked). */
typedef void (*HlkUkrF32Rows)(int64_t kc, const float *ap, int64_t lda, const float *bp,
                              float *c, int64_t ldc, int accumulate);

typedef struct HlkUkrTable {
  const char *isa;
  int mr_f32, nr_f32;  /* register tile of the f32 kernel */
  HlkUkrF32 f32;
  HlkUkrF32Rows f32_rows;
  /* f32_edge[r] (0 < r < mr_f32): the f32 kernel for the first r rows of a
   * sliver (C rows past r are not touched); NULL past mr_f32 - 1. */
  HlkUkrF32 f32_edge[16];
  /* f32_rows_edge[r] (0 < r < mr_f32): f32_rows for the first r rows (A
   * rows and C rows past r are not touched); NULL past mr_f32 - 1. */
  HlkUkrF32Rows f32_rows_edge[16];
  int mr_f64, nr_f64;
  HlkUkrF64 f64;
  int mr_u32, nr_u32;
  HlkUkrU32 u32;
  int mr_u64, nr_u64;
  HlkUkrU64 u64;
  int mr_i16, nr_i16;   /* kc counts pair steps; see hlk_gemm_i16 */
  HlkUkrU32 i16;
} HlkUkrTable;

extern const HlkUkrTable hlk_ukr_scalar;
extern const HlkUkrTable hlk_ukr_avx2;
extern const HlkUkrTable hlk_ukr_avx512;

/* ---- Compute types and conversions (gemm_cvt.c) ------------------------ */

/* The type products are accumulated in, chosen from the result type the way
 * XLA's evaluator does: narrow floats accumulate in f32, integers wrap in
 * their own width (HLK_CT_I64: 64 bits truncated by the store; the GEMM
 * paths use 32-bit lanes when the result is that narrow, hlk_int_lanes),
 * pred is OR of ANDs (a count of true products, != 0). */
typedef enum HlkCType {
  HLK_CT_F32, HLK_CT_F64, HLK_CT_C64, HLK_CT_C128, HLK_CT_I64, HLK_CT_PRED,
  HLK_CT_NONE
} HlkCType;

/* The compute type for a result dtype, or HLK_CT_NONE if unsupported. */
HlkCType hlk_ctype_for(HloDtype result);
size_t hlk_ctype_size(HlkCType c);
/* Can an operand of dtype `from` feed a result of dtype `to`? XLA converts
 * each operand to the result type first; we support every conversion
 * between the numeric kinds except complex -> real. */
bool hlk_operand_convertible(HloDtype from, HloDtype to);
/* Plan-time type check shared by dot and convolution: both operands and the
 * result are arrays, and each operand converts to the result type. 0, or -1
 * with an error naming what ("dot", "convolution") and the types. */
int hlk_check_operand_types(HliExec *x, const HloInstr *ins, const char *what);

/* Convert n operand elements into compute-type elements, going through the
 * result type `to` (so an f32 operand of a bf16 dot is rounded to bf16
 * first, as XLA's evaluator does). */
void hlk_load_ctype(HloDtype from, HloDtype to, const void *src, int64_t n, void *dst);
/* Store n compute-type values into elements of dtype `to` (rounding once). */
void hlk_store_ctype(HloDtype to, const void *src, int64_t n, void *dst);

/* Integer results of at most 32 bits (and pred) computed in 32-bit lanes.
 * hlk_int_lanes gives the lane width (32 or 64) for an HLK_CT_I64 result
 * type and a contraction length k (pred needs the count of true products,
 * which must not wrap to zero: 64 bits when k >= 2^32). */
int hlk_int_lanes(HloDtype to, int64_t k);
/* n operand elements of dtype `from` as 32-bit lanes of a result of dtype
 * `to`: the value modulo 2^32 (for `to` of 32 bits or fewer, what the
 * product needs; the store truncates further), or 0/1 for a pred result. */
void hlk_load_u32(HloDtype from, HloDtype to, const void *src, int64_t n, uint32_t *dst);
/* Can operands of dtype `from` feed a result of dtype `to` as int16 values
 * (hlk_gemm_i16)? Integers of at most 8 bits and s16, pred, and any integer
 * or pred operand of a pred result (0/1); `to` must use 32-bit lanes. */
bool hlk_fits_i16(HloDtype from, HloDtype to);
/* n operand elements as int16 values (only where hlk_fits_i16): the value,
 * or 0/1 for a pred result. */
void hlk_load_i16(HloDtype from, HloDtype to, const void *src, int64_t n, int16_t *dst);
/* Store n 32-bit lanes into elements of dtype `to` (truncated, or != 0 for
 * pred). */
void hlk_store_u32(HloDtype to, const uint32_t *src, int64_t n, void *dst);


/* ---- Kernels (dot.c, conv.c) ------------------------------------------- */

/* Plan-time checks and runs of dot and convolution. force_ref makes the run
 * use the exact reference loop even where the GEMM path applies (tests
 * cross-check the two). */
int hlk_dot_check(HliExec *x, const HloInstr *ins);
/* scaled-dot: its operands dequantized, then hlk_dot_run (scaled_dot.c). */
int hlk_dot_run(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out,
                bool force_ref);
int hlk_conv_check(HliExec *x, const HloInstr *ins);
int hlk_conv_run(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out,
                 bool force_ref);

/* An f32 dot as the GEMM runs it, for kernels that compute parts of one
 * (fuse_chain.c: a block of rows at a time). Computing any rows of it with
 * hlk_gemm_f32 gives them the bits the whole dot gives them: the summation
 * order (above) depends on k alone. */
typedef struct HlkDotGemm {
  HlkGemm g;        /* dims, operand views, C as [batch][m][n] (c unset) */
  void *owned[2];   /* converted or permuted operand copies, or NULL */
} HlkDotGemm;
/* Plan time: a dot of f32/bf16/f16 operands whose kernel runs the f32 GEMM
 * (not the one-row or one-column loops of gemv.c), with an f32 result or a
 * bf16/f16 one rounded once from the GEMM's (hlk_store_ctype). */
bool hlk_dot_gemm_f32_applies(const HloInstr *ins);
/* The product of dot ins on these operand values (lhs or rhs may be NULL:
 * that side's view is left unset, for an operand the caller supplies). 0,
 * or -1 with an error on x; release with hlk_dot_gemm_free. */
int hlk_dot_gemm(HliExec *x, const HloInstr *ins, const HliValue *lhs, const HliValue *rhs,
                 HlkDotGemm *d);
void hlk_dot_gemm_free(HliExec *x, HlkDotGemm *d);

/* ---- Layout helpers (gemm_cvt.c) --------------------------------------- */

/* dst = src (a row-major array of `rank` dims, elements of esize bytes, esize
 * one of 1, 2, 4, 8, 16) with its dimensions reordered: dst dimension i is
 * src dimension perm[i]. */
void hlk_permute_copy(const void *src, const int64_t *dims, int rank, const int *perm,
                      size_t esize, void *dst);

/* Can dimensions d[0..n) of an array with element strides `strides` and
 * extents `dims` be walked as one flat index with a single stride (the
 * combined index row-major over d in the given order)? If so *stride gets it
 * (0 when the combined extent is 1). */
bool hlk_collapse_dims(const int64_t *dims, const int64_t *strides, const int64_t *d, int n,
                       int64_t *stride);
#endif
