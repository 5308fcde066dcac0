/* isolate.h: crash-proof custom calls (internal to interp/). With
 * isolation on (--isolate-custom-calls, HloCtxOptions.isolate_custom_calls)
 * each custom call runs in a child process, so a handler that crashes,
 * aborts, exits or hangs fails the run with an error naming the target, the
 * instruction and what happened, and leaves its inputs in a directory for
 * replay. See isolate.c. */
#ifndef HLORUN_INTERP_ISOLATE_H
#define HLORUN_INTERP_ISOLATE_H
#include "interp/interp.h"
#include "ffi/ffi.h"

/* Is isolation on for this run? */
bool hli_isolating(HliExec *x);

/* Run custom call ins like hlf_call(r, ...) would, in a child process.
 * bufs: the nargs operand leaves then the nrets result leaves (the leaves of
 * out), flattened as custom_call.c does. 0, or -1 with an error on x. */
int hli_isolated_call(HliExec *x, HlfRegistry *r, const HloInstr *ins, HliValue *const *in,
                      const HlfBuf *bufs, int32_t nargs, int32_t nrets);

/* How a typed handler's XLA_FFI_DeviceMemory_Allocate is counted against
 * x's memory limit (custom_call.c); x must not be NULL. In a worker process
 * it counts against the child's copy of x, which holds what the parent had
 * in use when it forked. */
HlfMemHook hli_ffi_mem_hook(HliExec *x);

/* Run fn(arg) in a child process first: 0 if it returned 0 there (the
 * caller then runs it for real), 1 if it returned nonzero (the caller runs
 * it again to get its error), -1 if the child crashed, exited or ran longer
 * than timeout seconds: *why (malloc'd) says which. For plan-time steps
 * that call plugin code: loading a library, the metadata query. */
int hli_isolated_probe(int (*fn)(void *arg), void *arg, double timeout, char **why);
#endif
