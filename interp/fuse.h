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
/* The group's inputs: instruction indices (slots), in the order
 * hli_fused_run expects their values. */
int32_t hli_fused_ninputs(const HliFused *f);
const int32_t *hli_fused_inputs(const HliFused *f);
/* Compute the group's root value into out (allocated with the root's shape)
 * from the input values. 0, or -1 with an error on x. */
int hli_fused_run(HliExec *x, const HliFused *f, HliValue *const *in, HliValue *out);
#endif
