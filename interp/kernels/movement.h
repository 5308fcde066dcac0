/* movement.h: internals shared by the data-movement kernels (movement.c,
 * slicing.c, dynamic_slice.c, gather_scatter.c): strided copy plans, index
 * loading and shape checks. Not a contract with other areas.
 *
 * A copy plan describes "for every position of an N-d box, copy one element
 * from src + position.src_strides to dst + position.dst_strides". Nearly
 * every movement op is one plan or a few (transpose: permuted source strides;
 * broadcast: zero source strides; reverse: negative ones; slice, pad,
 * concatenate, gather windows: offsets and multiplied strides). Plans move
 * bytes only, so they are specialised on the element size (1/2/4/8/16), never
 * on the element type. */
#ifndef HLORUN_INTERP_KERNELS_MOVEMENT_H
#define HLORUN_INTERP_KERNELS_MOVEMENT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "interp/interp.h"

/* Deepest array rank the movement kernels accept (plans live on the stack). */
enum { HLK_MAX_RANK = 64 };

typedef struct HlkPlan {
  int rank;                  /* dims left after dropping 1s and merging; 0 = one element */
  bool empty;                /* some extent is 0: nothing to copy */
  size_t es;                 /* element size in bytes */
  int tile;                  /* -1, or the dim read contiguously that is transposed
                                against the innermost dim in cache blocks */
  int64_t n[HLK_MAX_RANK];   /* extents, outermost first */
  int64_t ds[HLK_MAX_RANK];  /* destination byte strides */
  int64_t ss[HLK_MAX_RANK];  /* source byte strides (0 = repeat, < 0 = backwards) */
  int64_t outer;             /* number of positions of the dims outside the kernel */
  int64_t bytes;             /* bytes written by one run */
  bool stream;               /* a transpose this large writes past the cache */
} HlkPlan;

/* Build a plan over a box of rank dims (outermost first) with byte strides.
 * Size-1 dims are dropped and adjacent dims merged where both sides are
 * contiguous across them. rank <= HLK_MAX_RANK. */
void hlk_plan_init(HlkPlan *p, int rank, const int64_t *dims, const int64_t *dst_strides,
                   const int64_t *src_strides, size_t es);
/* Run the plan once on this thread. */
void hlk_plan_run(const HlkPlan *p, char *dst, const char *src);
/* A row kernel: combine n elements dst[i*ds] with src[i*ss] (byte strides). */
typedef void (*HlkRowFn)(char *dst, const char *src, int64_t n, int64_t ds, int64_t ss);
/* Drop the blocked-transpose path (needed before hlk_plan_apply). */
void hlk_plan_untile(HlkPlan *p);
/* Run the plan calling fn on each innermost row instead of copying. */
void hlk_plan_apply(const HlkPlan *p, char *dst, const char *src, HlkRowFn fn);
/* Run it, split over the executor's threads when it is large. */
void hlk_plan_run_par(HliExec *x, const HlkPlan *p, char *dst, const char *src);

/* memcpy of n bytes, split over threads when large. */
void hlk_memcpy_par(HliExec *x, void *dst, const void *src, size_t n);
/* Fill n elements of size es at dst with the element at val. */
void hlk_fill(void *dst, const void *val, int64_t n, size_t es);

/* Row-major byte strides of dims for elements of size es. */
void hlk_byte_strides(const int64_t *dims, int rank, size_t es, int64_t *strides);

/* Element types usable as indices (every integer type). */
bool hlk_is_index_type(HloDtype t);
/* One index element of type t as int64 (u64 above INT64_MAX wraps negative,
 * as XLA reads indices as s64). */
int64_t hlk_load_index(HloDtype t, const void *p);
/* n index elements of type t at src into dst. */
void hlk_load_indices(HloDtype t, const void *src, int64_t n, int64_t *dst);

/* Shape checks shared by the kernels' plan-time checks. Each returns 0, or -1
 * with an error naming ins. */
int hlk_check_array(HliExec *x, const HloInstr *ins, const HloShape *s, const char *what);
/* ins has exactly nops operands, and they and the result are arrays. */
int hlk_check_operands(HliExec *x, const HloInstr *ins, int nops);
int hlk_check_rank(HliExec *x, const HloInstr *ins, const HloShape *s, const char *what);
/* The result shape of ins must have element type t and dims (rank r). */
int hlk_check_result(HliExec *x, const HloInstr *ins, HloDtype t, int r, const int64_t *dims);
/* v (n entries) holds distinct dims in [0, rank); sorted if must_sort. */
int hlk_check_dim_list(HliExec *x, const HloInstr *ins, const HloI64s *v, int rank,
                       bool must_sort, const char *what);

/* scatter_combine.c: the row kernel computing dst = op(dst, src) for a
 * recognised scatter reducer on element type t, or NULL when there is no
 * typed loop for the pair (the caller then runs the computation). */
HlkRowFn hlk_combine_fn(HliBinop op, HloDtype t);

/* Kernels of dynamic_slice.c, registered by hli_register_gather_scatter. */
int hlk_dynamic_slice_check(HliExec *x, const HloInstr *ins);
int hlk_dynamic_slice(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out);
int hlk_dynamic_update_slice_check(HliExec *x, const HloInstr *ins);
int hlk_dynamic_update_slice(HliExec *x, const HloInstr *ins, HliValue *const *in,
                             HliValue *out);
/* Kernels of slicing.c, registered by hli_register_movement. */
int hlk_slice_check(HliExec *x, const HloInstr *ins);
int hlk_slice(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out);
int hlk_concatenate_check(HliExec *x, const HloInstr *ins);
int hlk_concatenate(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out);
int hlk_reverse_check(HliExec *x, const HloInstr *ins);
int hlk_reverse(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out);
int hlk_pad_check(HliExec *x, const HloInstr *ins);
int hlk_pad(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out);
#endif
