/* fuse_chain.h: a dot, the row group over its result and the dot that
 * consumes the group's rows, run as one plan step a block of rows at a time
 * (internal to the executor).
 *
 * The chain is attention's scores = Q.K^T -> softmax -> probs.V, and any
 * other with its shape: D1 = dot whose result R1 [batch..., m..., n] is read
 * only by a row group G (fuse.h) with rows of n elements; G's result is
 * read only by D2 = dot contracting exactly its last dimension, with D1's
 * batch dimensions as its batch dimensions, in order. Unfused, R1 and G's
 * result are whole arrays written to memory and read back (attention:
 * 64 MiB each); chained, each block of rows of them lives in the cache:
 * D1's rows of the block (the GEMM), G over those rows, then D2's rows.
 *
 * D1, G and D2 may each have an f32, bf16 or f16 result (a bf16 attention):
 * a narrow D1 or D2 block is rounded once from the f32 GEMM, as the unfused
 * dot stores it, and G reads and writes its blocks in their own types.
 *
 * Bits: every row of D1 and D2 is the same GEMM sum as unfused (its order
 * depends on the contraction length alone, gemm.h), rounded the same way,
 * and G's rows are run by G's own tile program, so results are
 * bit-identical to the unfused run (tests/fusion-diff.sh checks it).
 * Not here: finding row groups (fuse.c), the GEMM (kernels/gemm.c). */
#ifndef HLORUN_INTERP_FUSE_CHAIN_H
#define HLORUN_INTERP_FUSE_CHAIN_H
#include "interp/fuse.h"

typedef struct HliChain HliChain;

/* Find the chains of computation c among its live instructions, given the
 * fused groups fu: chain[i] is the chain ending at D2 = instruction i, or
 * NULL; absorbed[i] is set for the D1 and group root of every chain (no step
 * of their own). Arrays from A. 0, or -1 out of memory. */
int hli_chain_plan(HliExec *x, const HloComputation *c, const bool *live, const HliFusion *fu,
                   HlcArena *A, const HliChain **chain, bool *absorbed);
/* The chain's inputs: instruction indices (slots) in the order
 * hli_chain_run expects their values. */
int32_t hli_chain_ninputs(const HliChain *ch);
const int32_t *hli_chain_inputs(const HliChain *ch);
/* D2's value into out (allocated with D2's shape). 0, or -1 with an error
 * on x. */
int hli_chain_run(HliExec *x, const HliChain *ch, HliValue *const *in, HliValue *out);
#endif
