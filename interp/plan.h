/* plan.h: the compiled form of one computation (internal to the executor).
 *
 * A plan lists the live instructions in dependency order as steps. Every
 * instruction's value lives in a slot (its index in the computation);
 * operands are slot numbers; each step names the slots whose last use it is,
 * so those values are released as soon as it has run. Kernels are looked up
 * once, here, never while running. */
#ifndef HLORUN_INTERP_PLAN_H
#define HLORUN_INTERP_PLAN_H
#include "interp/exec.h"
#include "interp/fuse.h"
#include "interp/fuse_chain.h"

typedef enum HliStepKind {
  HLI_STEP_KERNEL,   /* out = new value of ins->shape; kernel fills it */
  HLI_STEP_PARAM,    /* slot = ref(args[param]) */
  HLI_STEP_CONST,    /* slot = ref(cached constant value) */
  HLI_STEP_TUPLE,    /* new tuple referencing the operands (no copy) */
  HLI_STEP_GTE,      /* ref to element `index` of the operand tuple */
  HLI_STEP_ALIAS,    /* slot = ref(operand 0): same logical value (copy of
                        the same type, optimization-barrier, add-dependency) */
  HLI_STEP_VIEW,     /* view of operand 0's buffer with ins->shape (reshape,
                        bitcast between default layouts) */
  HLI_STEP_TOKEN,    /* a new token (after-all without a kernel) */
  HLI_STEP_FUSED,    /* out = new value of ins->shape, computed by a fused
                        group of elementwise instructions ending at ins
                        (fuse.h); ops are the group's inputs */
  HLI_STEP_CHAIN     /* out = new value of ins->shape (a dot), computed by a
                        dot -> row group -> dot chain ending at ins
                        (fuse_chain.h); ops are the chain's inputs */
} HliStepKind;

typedef struct HliStep {
  const HloInstr *ins;   /* borrowed: the instruction */
  HliKernel run;         /* HLI_STEP_KERNEL only */
  HliStepKind kind;
  int32_t out;           /* slot of the result */
  int32_t nops;
  int32_t *ops;          /* arena: operand slots */
  int32_t nfree;
  int32_t *frees;        /* arena: slots released after this step */
  int64_t index;         /* PARAM: parameter number; GTE: tuple index */
  HliValue *constant;    /* CONST: owned by the plan (one reference) */
  const HliFused *fused; /* FUSED: the group (plan arena) */
  const HliChain *chain; /* CHAIN: the chain (plan arena) */
  bool lazy;             /* runs only when the run is observed: every user
                            makes this value itself (plan.c: mark_lazy) */
  uint32_t reuse;        /* KERNEL/FUSED: bit k set: operand k (k < 32) may
                            give its buffer to the result, as this step is
                            its last use, if nothing else references it at
                            run time (in-place update) */
} HliStep;

struct HliPlan {
  const HloComputation *comp;   /* borrowed */
  int32_t nsteps;
  HliStep *steps;               /* arena */
  int32_t nslots;               /* = comp->ninstrs */
  int32_t root;                 /* slot of the result */
  int32_t max_ops;              /* largest operand count of a step (inbuf size) */
  HliValue **slots;             /* arena: all NULL between runs */
  HliValue **inbuf;             /* arena: operand values of the current step */
  bool busy;                    /* slots/inbuf in use (re-entry gets fresh ones) */
};

/* Build the plan of c (does not plan callees). NULL with an error on x. */
HliPlan *hli_plan_build(HliExec *x, const HloComputation *c);
/* Release the cached constants of a plan (the arena holds the rest). */
void hli_plan_release(HliExec *x, HliPlan *p);
#endif
