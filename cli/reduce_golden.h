/* reduce_golden.h: the goldens of --reduce mismatch (reduce_golden.c). */
#ifndef HLORUN_CLI_REDUCE_GOLDEN_H
#define HLORUN_CLI_REDUCE_GOLDEN_H
#include "cli.h"

/* An instruction of the original module whose value has a golden: its
 * name, its operands' names when it is a tuple (nops 0 otherwise), the
 * golden as a value (owned; may be NULL) and/or a file. */
typedef struct GoldenBase {
  char *name;
  char **ops;
  int nops;
  HloBuffer *value;
  char *file;
} GoldenBase;

/* b[0]: the first divergence (found), b[1]: ENTRY's ROOT. */
typedef struct Goldens {
  GoldenBase b[2];
  int n;
  bool found;
  int64_t run;               /* found: the diverging value's run (loop iteration, call) */
} Goldens;

const HloInstruction *golden_entry_root(const HloModule *m);
/* --reference REF, --reference-custom-call, --reference-precision f64: the
 * reference's result and its first divergence (dir: scratch files). */
int goldens_reference(HloCtx *ctx, const Opts *o, const HloModule *m, HloBuffer *const *in, int np,
                      double timeout, const char *dir, Goldens *g);
/* --expect FILE: ENTRY's ROOT only (a tuple's golden is read to split it). */
int goldens_expect(HloCtx *ctx, const Opts *o, const HloModule *m, HloBuffer *const *in, int np,
                   double timeout, Goldens *g);
/* The golden file of cand's result (dir/stem.npy or .npz, or --expect's
 * file; free it), NULL when none applies; *base: which, *kept: outputs of
 * a tuple base it keeps (0: not a tuple). */
char *golden_for(HloCtx *ctx, const Goldens *g, const HloModule *cand, const char *dir,
                 const char *stem, int *base, int *kept);
void goldens_free(Goldens *g);
#endif
