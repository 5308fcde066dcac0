/* verify.h: internal interface of the verifier (verify*.c). One context per
 * hlp_verify call; helpers for shape arithmetic, comparisons and messages;
 * one checker per opcode family. Not part of the IR contract: nothing
 * outside ir/verify*.c includes this.
 *
 * Every checker infers the result shape of one instruction from its operand
 * shapes and typed attributes (the rules of XLA's shape inference and HLO
 * verifier), compares it with the declared shape, and reports the first
 * problem it finds as a positioned error at the instruction's name.
 */
#ifndef HLORUN_IR_VERIFY_H
#define HLORUN_IR_VERIFY_H
#include <setjmp.h>
#include <stdbool.h>
#include "common/arena.h"
#include "common/diag.h"
#include "ir/ir.h"

typedef struct HlvCtx {
  const HloModule *m;  /* borrowed */
  HlcDiags *diags;     /* borrowed: where errors go */
  HlcArena arena;      /* owned: inferred shapes and message strings */
  jmp_buf oom;         /* taken when the arena cannot grow */
  int errors;          /* errors reported so far */
} HlvCtx;

/* Result of a family checker. */
typedef enum { HLV_OK = 0, HLV_ERR = 1, HLV_NOT_MINE = 2 } HlvResult;

/* ---- Reporting ----------------------------------------------------------- */

/* "<opcode> '<name>': MSG" at the instruction's name. Returns HLV_ERR. */
HlvResult hlv_fail(HlvCtx *V, const HloInstr *ins, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Shape as text without layouts ("f32[2,3]", "(s32[], f32[2])"); arena-owned. */
const char *hlv_str(HlvCtx *V, const HloShape *s);
/* "{1,2}" for a dimension list; arena-owned. */
const char *hlv_list_str(HlvCtx *V, const HloI64s *d);

/* ---- Shapes -------------------------------------------------------------- */

HloShape *hlv_array(HlvCtx *V, HloDtype t, int32_t rank, const int64_t *dims);
HloShape *hlv_scalar(HlvCtx *V, HloDtype t);
/* A tuple of n elements (filled by the caller). */
HloShape *hlv_tuple(HlvCtx *V, int32_t n);
HloShape *hlv_copy(HlvCtx *V, const HloShape *s);
void *hlv_alloc(HlvCtx *V, size_t n);

static inline bool hlv_is_array(const HloShape *s) { return hlc_dtype_is_array(s->dtype); }
static inline bool hlv_is_scalar(const HloShape *s) { return hlv_is_array(s) && s->rank == 0; }
/* Same element type, or both floating point (XLA's "ignoring fp precision"). */
bool hlv_same_type_fp(HloDtype a, HloDtype b);
/* Same dims (unbounded '?' dims match anything); element types ignored. */
bool hlv_same_dims(const HloShape *a, const HloShape *b);
/* Same dims and element type; ignore_fp: float types may differ in width.
 * Layouts are ignored. Tuples recursively. */
bool hlv_compatible(const HloShape *a, const HloShape *b, bool ignore_fp);

/* ---- Checks shared by the families --------------------------------------- */

/* Declared result vs inferred. ignore_fp (XLA's mixed-precision leniency)
 * only where XLA's own tests rely on it and the kernels convert: the
 * accumulator type of reductions, copy, map and fusion results. */
HlvResult hlv_expect(HlvCtx *V, const HloInstr *ins, const HloShape *inferred, bool ignore_fp);
/* Operand k is an array (not a tuple or token). */
bool hlv_need_array(HlvCtx *V, const HloInstr *ins, int k);
/* Every entry of d (named what) is in [0, rank) and none repeats; sorted
 * additionally requires increasing order. */
bool hlv_dims_ok(HlvCtx *V, const HloInstr *ins, const char *what, const HloI64s *d, int64_t rank,
                 bool sorted);
/* The called computation of the given role (first one), or NULL. */
HloComputation *hlv_called(const HloInstr *ins, HloCallRole role);
/* Computation comp (called as role) takes exactly n parameters; param_shapes
 * (n entries, may be NULL or hold NULL entries to skip) are compared with the
 * parameters exactly; want_root (may be NULL) with the root. */
bool hlv_signature(HlvCtx *V, const HloInstr *ins, const char *role, const HloComputation *comp,
                   int32_t n, const HloShape *const *param_shapes, const HloShape *want_root,
                   bool ignore_fp);
/* A k-input reducer (reduce, reduce-window, scatter, all-reduce...): 2k scalar
 * parameters, a scalar (k = 1) or k-tuple of scalars result; accumulator i
 * matches init_types[i] and input_types[i] ignoring fp precision, parameters
 * i and k+i match accumulator i exactly. acc (k entries, may be NULL) gets
 * the accumulator element types. */
bool hlv_reducer(HlvCtx *V, const HloInstr *ins, const char *role, const HloComputation *comp,
                 int32_t k, const HloDtype *init_types, const HloDtype *input_types, HloDtype *acc);
/* Overflow-checked int64 arithmetic: false if the result does not fit
 * (attribute values are arbitrary 64-bit integers). */
static inline bool hlv_add(int64_t a, int64_t b, int64_t *r) { return !__builtin_add_overflow(a, b, r); }
static inline bool hlv_mul(int64_t a, int64_t b, int64_t *r) { return !__builtin_mul_overflow(a, b, r); }
/* Output size of one window dimension (XLA's window shape rule); -1 if the
 * arithmetic overflows. */
int64_t hlv_window_out(int64_t in, const HloWindowDim *w);

/* ---- Families (verify_*.c) ----------------------------------------------- */

HlvResult hlv_elementwise(HlvCtx *V, const HloInstr *ins);  /* verify_elem.c */
HlvResult hlv_data(HlvCtx *V, const HloInstr *ins);         /* verify_data.c */
HlvResult hlv_index(HlvCtx *V, const HloInstr *ins);        /* verify_index.c */
HlvResult hlv_reduce(HlvCtx *V, const HloInstr *ins);       /* verify_reduce.c */
HlvResult hlv_linalg(HlvCtx *V, const HloInstr *ins);       /* verify_linalg.c */
HlvResult hlv_control(HlvCtx *V, const HloInstr *ins);      /* verify_control.c */
#endif
