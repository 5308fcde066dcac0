/* exec.h: the executor's state for one run (internal to interp/). Kernels
 * use only the services declared in interp.h. */
#ifndef HLORUN_INTERP_EXEC_H
#define HLORUN_INTERP_EXEC_H
#include "interp/interp.h"

struct HliExec {
  const HloModule *module;     /* borrowed */
  HlcDiags *diags;             /* borrowed: where errors go */
  size_t mem_used, mem_peak;   /* bytes of live value buffers */
  size_t mem_limit;            /* 0 = unlimited */
  int nthreads;                /* >= 1 */
  struct HliPool *pool;        /* owned: worker threads, or NULL */
  uint64_t rng_state;          /* hli_random_u64 */
  struct HlfRegistry *ffi;     /* borrowed: custom-call bindings */
};

/* Memory accounting for value buffers: 0 if n more bytes fit the limit. */
int hli_mem_reserve(HliExec *x, size_t n);
void hli_mem_release(HliExec *x, size_t n);
#endif
