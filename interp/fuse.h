/* fuse.h: plan-time fusion of elementwise chains (internal to the executor).
 *
 * A fused group is a set of elementwise instructions of one computation
 * with the same dimensions (arithmetic, compare, select, convert, and
 * broadcasts that repeat their operand along leading and trailing
 * dimensions) whose values are used only inside the group, except one: the
 * group's root. The group runs as one plan step at the root's place,
 * streaming tiles of a few thousand elements through the instructions in
 * L1/L2-sized registers, so no intermediate array is materialised and the
 * inputs are read once. Every instruction runs the same array loop its own
 * kernel runs (elementwise.h), with the same per-step rounding of narrow
 * floats, so results are bit-identical to the unfused run.
 * Not here: which steps a plan has (plan.c) or running them (exec.c). */
#ifndef HLORUN_INTERP_FUSE_H
#define HLORUN_INTERP_FUSE_H
#include "interp/exec.h"

typedef struct HliFused HliFused;

/* What fusion decided for a computation's instructions. */
typedef struct HliFusion {
  /* per instruction (n = ninstrs): the fused group rooted here, or NULL */
  HliFused **group;
  /* per instruction: true if it runs inside groups only (no step of its own) */
  bool *internal;
} HliFusion;

/* Find the groups of computation c among its live instructions (live[i]).
 * Arrays come from A. 0 on success (possibly no groups), -1 out of memory. */
int hli_fuse_plan(HliExec *x, const HloComputation *c, const bool *live, HlcArena *A,
                  HliFusion *out);
/* Is ins a unary or binary elementwise op run by the shared array runner
 * (so its result may overwrite an operand of the same type in place)? */
bool hli_fuse_is_elementwise(const HloInstr *ins);
/* The group's inputs: instruction indices (slots), in the order
 * hli_fused_run expects their values. */
int32_t hli_fused_ninputs(const HliFused *f);
const int32_t *hli_fused_inputs(const HliFused *f);
/* Compute the group's root value into out (allocated with the root's shape)
 * from the input values. 0, or -1 with an error on x. */
int hli_fused_run(HliExec *x, const HliFused *f, HliValue *const *in, HliValue *out);
/* Row groups run a block of rows at a time (fuse_chain.c): rows [lo, hi)
 * of f's result into out on the calling thread, with input `local` (or -1)
 * and out holding only those rows (their first element is row lo's), every
 * other input whole. out may be the local input (each row is read before
 * it is written). 0, or -1 out of memory. hli_fused_rows_scratch: the heap
 * memory such a run takes (0: it runs on the stack). */
int hli_fused_run_rows(const HliFused *f, const char *const *in, const size_t *ies,
                       int32_t local, char *out, size_t oes, int64_t lo, int64_t hi);
size_t hli_fused_rows_scratch(const HliFused *f);
#endif
