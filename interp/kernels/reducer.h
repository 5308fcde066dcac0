/* reducer.h: what the reduction kernels (reduce, reduce-window,
 * select-and-scatter, sort, topk) share: typed fold loops for the reducers
 * hli_match_binop recognises, the per-element fallback that runs a scalar
 * computation through hli_call, and the matchers for the argmax/argmin
 * reducer and for sort comparators.
 *
 * Internal to interp/kernels/{reduce,reduce_window,select_scatter,sort}.c.
 * Does not cover computations it does not recognise: those go through
 * HlkScalarCall. */
#ifndef HLORUN_INTERP_KERNELS_REDUCER_H
#define HLORUN_INTERP_KERNELS_REDUCER_H
#include "interp/interp.h"
#include "common/numeric.h"
#include "interp/kernels/narrow.h"

/* Operand limit for variadic reduce / reduce-window / sort (arguments of the
 * applied computation are twice this). */
enum { HLK_MAX_VARIADIC = 16 };

/* ---- Typed folds ------------------------------------------------------- */

/* The loops of one (reducer, element type). The accumulator type may be wider
 * than the element (f16 and bf16 accumulate in float, rounded to the element
 * type after every step so results equal step-by-step evaluation; a "wide"
 * float add accumulates in double, as XLA's evaluator does for reduce).
 * Pointers to elements are in the element's memory format. */
typedef struct HlkFold {
  size_t acc_size;                        /* bytes of one accumulator */
  /* acc[0..n) = init (one element) */
  void (*init)(void *acc, const void *init, int64_t n);
  /* *acc = op(... op(op(*acc, src[0]), src[s]) ..., src[(n-1)s]) (s in elements) */
  void (*run)(void *acc, const void *src, int64_t n, int64_t s);
  /* acc[i] = op(acc[i], src[i*s]) for i < n */
  void (*vec)(void *acc, const void *src, int64_t n, int64_t s);
  /* dst[i] = acc[i] converted to the element type, for i < n */
  void (*store)(void *dst, const void *acc, int64_t n);
  /* Optional (NULL): run() on a contiguous run is split into blocks of
   * `block` elements whose partial results (`part_size` bytes each) are
   * independent and then folded in order by fold_parts(); blocks() computes
   * the partials of nb whole blocks. A long single run can then be spread
   * over threads with exactly run()'s result. */
  int64_t block;
  size_t part_size;
  void (*blocks)(void *parts, const void *src, int64_t nb);
  void (*fold_parts)(void *acc, const void *parts, int64_t nb);
  /* Optional (NULL: vec() per row): vec() over `rows` contiguous rows of n
   * elements, `stride` elements apart, in row order; the accumulators stay
   * in registers across a few rows (a sum over a leading dimension). */
  void (*vec_rows)(void *acc, const void *src, int64_t n, int64_t rows, int64_t stride);
  /* Optional (NULL: run() and store() per element): a running fold, dst[i]
   * = the accumulator after folding src[0..i] into *acc, for i < n
   * (a cumulative sum written as a reduce-window). */
  void (*scan)(void *acc, const void *src, void *dst, int64_t n);
} HlkFold;

/* Typed loops for reducer op on element type t, or NULL when there are none
 * (then the caller uses the computation). wide_add: float add accumulates
 * in double and rounds once (reduce); otherwise every step rounds to the
 * element type (reduce-window, select-and-scatter's scatter). */
const HlkFold *hlk_fold(HliBinop op, HloDtype t, bool wide_add);

/* The fold of reducer op for bf16/f16 (t) values held widened to f32 (fused
 * tiles): hlk_fold(op, t, true)'s steps on f32 input, its result left in f32
 * for the caller to round once to t. NULL for other types and ops. */
const HlkFold *hlk_fold_widened(HliBinop op, HloDtype t);

/* hli_match_binop, restricted to what the folds compute exactly: the folds
 * apply op(accumulator, element), so maximum/minimum written with the
 * parameters swapped (which keep the element on ties: -0 vs +0, NaN
 * payloads) are not accepted, nor is SELECT_RHS. */
HliBinop hlk_match_reducer(const HloComputation *c);

/* ---- Computations run per element ------------------------------------ */

/* Calls a scalar computation repeatedly: argument values are allocated once
 * from the parameters' shapes and refilled before each call. Not for use
 * inside hli_parallel_for (the executor is single-threaded). */
typedef struct HlkScalarCall {
  HliExec *x;
  const HloInstr *ins;                 /* for error messages */
  const HloComputation *comp;
  int32_t nargs;
  HliValue *args[2 * HLK_MAX_VARIADIC];/* owned: one scalar per parameter */
  int32_t nres;                        /* number of scalar results (tuple size, or 1) */
  HloDtype res_dtype[HLK_MAX_VARIADIC];
} HlkScalarCall;

/* Checks that comp takes nargs scalar parameters of the given types and
 * returns nres scalars (a tuple when nres > 1, or a bare scalar when
 * tuple_ok and nres == 1) of the given types; allocates the arguments. */
int hlk_scall_init(HlkScalarCall *sc, HliExec *x, const HloInstr *ins,
                   const HloComputation *comp, int32_t nargs, const HloDtype *arg_types,
                   int32_t nres, const HloDtype *res_types);
void hlk_scall_free(HlkScalarCall *sc);
/* Pointer to argument i's element (fill it before hlk_scall_run). */
static inline void *hlk_scall_arg(HlkScalarCall *sc, int32_t i) { return sc->args[i]->data; }
/* Runs the computation; result j is copied to res[j]. */
int hlk_scall_run(HlkScalarCall *sc, void *const *res);
/* For predicates (sort comparators, select): runs and returns 0/1, or -1. */
int hlk_scall_pred(HlkScalarCall *sc);
/* Checks only the signature (plan time): same rules as hlk_scall_init. */
int hlk_check_signature(HliExec *x, const HloInstr *ins, const HloComputation *comp,
                        int32_t nargs, const HloDtype *arg_types, int32_t nres,
                        const HloDtype *res_types);

/* ---- Recognised computations ---------------------------------------- */

/* The argmax / argmin reducer JAX emits for a variadic reduce of
 * (values, indices) with parameters (v_acc, i_acc, v, i):
 *   pick  = compare(v_acc, v) GT (argmax) or LT (argmin)  OR  v_acc != v_acc
 *   ipick = pick OR (v_acc == v AND i_acc < i)
 *   ROOT tuple(select(pick, v_acc, v), select(ipick, i_acc, i))
 * (the NaN test is present for integers too and is then always false). */
typedef struct HlkArgReducer {
  bool is_max;        /* GT: argmax; LT: argmin */
  HloCmpType vtype;   /* compare type of the value comparisons */
} HlkArgReducer;
bool hlk_match_arg_reducer(const HloComputation *c, HlkArgReducer *out);

/* Sort comparators recognised for typed sorting. Parameters are
 * (a0, b0, a1, b1, ...); only operand 0's pair is compared. */
typedef enum HlkCmpKind {
  HLK_CMP_NONE = 0,
  HLK_CMP_PLAIN,      /* compare(a0, b0) with direction LT or GT and the given type */
  HLK_CMP_CANON       /* JAX's float pattern: -0 -> +0 and every NaN -> +NaN on both
                         sides, then compare TOTALORDER LT/GT */
} HlkCmpKind;
typedef struct HlkComparator {
  HlkCmpKind kind;
  bool descending;    /* GT */
  HloCmpType type;    /* FLOAT, TOTALORDER, SIGNED, UNSIGNED (DEFAULT resolved) */
} HlkComparator;
bool hlk_match_comparator(const HloComputation *c, int32_t nops, HlkComparator *out);

/* A select computation compare(p0, p1) with direction GE/GT/LE/LT: returns
 * the direction and its compare type (resolved), or false. */
bool hlk_match_select(const HloComputation *c, HloCmpDir *dir, HloCmpType *type);

/* Default compare type for an element type (FLOAT, SIGNED or UNSIGNED). */
HloCmpType hlk_default_cmp_type(HloDtype t);

/* Narrow-float conversions of the folds (round to nearest even): those of
 * common/numeric.c, so a reduction's NaN is the one an elementwise
 * operation gives (sign | 0x7E00 in f16, sign | 0x7FC0 in bf16; the
 * reducer's own copies had kept NaN payloads); widening: narrow.h. */
static inline uint16_t hlk_f32_to_f16(float f) { return hlc_f32_to_f16(f); }
static inline uint16_t hlk_f32_to_bf16(float f) { return hlc_f32_to_bf16(f); }

/* ---- Window iteration (reduce-window, select-and-scatter) ------------- */

/* Rank limit of the windowed kernels (their index arrays are this long). */
enum { HLK_WINDOW_MAX_RANK = 64 };

/* Advance a row-major odometer over dims [0, nd) of sizes lim; false at the
 * end (idx is back at all zeros). */
static inline bool hlk_odo_next(int64_t *idx, const int64_t *lim, int32_t nd) {
  for (int32_t d = nd - 1; d >= 0; d--) {
    if (++idx[d] < lim[d]) return true;
    idx[d] = 0;
  }
  return false;
}

/* Does the odometer over dims [0, nd) of sizes lim have no positions? */
static inline bool hlk_odo_empty(const int64_t *lim, int32_t nd) {
  for (int32_t d = 0; d < nd; d++)
    if (lim[d] <= 0) return true;
  return false;
}

/* ---- Kernels of this area (registered by hli_register_reduce) -------- */
int hlk_reduce(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out);
int hlk_reduce_check(HliExec *x, const HloInstr *ins);
/* Does the reduce read operand k (interp.h: hli_kernel_reads)? Not the
 * iota indices of an argmax/argmin along the iota's dimension. */
bool hlk_reduce_reads(const HloInstr *ins, int32_t k);
int hlk_reduce_window(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out);
int hlk_reduce_window_check(HliExec *x, const HloInstr *ins);
int hlk_select_and_scatter(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out);
int hlk_select_and_scatter_check(HliExec *x, const HloInstr *ins);
int hlk_sort(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out);
int hlk_sort_check(HliExec *x, const HloInstr *ins);
int hlk_topk(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out);
int hlk_topk_check(HliExec *x, const HloInstr *ins);

/* The called computation with a role, or NULL. */
const HloComputation *hlk_called(const HloInstr *ins, HloCallRole role);
#endif
