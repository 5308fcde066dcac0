/* exec.h: the executor's state for one run (internal to interp/). Kernels
 * use only the services declared in interp.h.
 *
 * An HliExec runs the computations of one module. Each computation is
 * compiled once into an HliPlan (plan.c) and cached here, so a while body
 * that runs a million times is planned once. The executor runs on one thread
 * at a time; kernels may fan work out with hli_parallel_for (pool.c). */
#ifndef HLORUN_INTERP_EXEC_H
#define HLORUN_INTERP_EXEC_H
#include "interp/interp.h"
#include "common/arena.h"
#include "hlorun.h"

typedef struct HliPlan HliPlan;
/* Buffer size classes recycled by the executor: 64, 128, ..., 4096 bytes. */
enum { HLI_BUF_CLASSES = 7, HLI_BUF_MAX_CACHED = 4096 };

typedef struct HliPool HliPool;
/* Why the executor failed, as far as the public status tells it apart. */
typedef enum { HLI_ERR_RUNTIME = 0, HLI_ERR_UNSUPPORTED, HLI_ERR_NOMEM } HliErrKind;
typedef struct HliObs HliObs;

struct HliExec {
  const HloModule *module;     /* borrowed */
  HlcDiags *diags;             /* borrowed: where errors go */
  size_t mem_used, mem_peak;   /* bytes of live value buffers */
  size_t mem_limit;            /* 0 = unlimited */
  int nthreads;                /* >= 1 */
  struct HliPool *pool;        /* borrowed (the context owns it), or NULL:
                                  hli_parallel_for then runs inline */
  uint64_t rng_state;          /* hli_random_u64 */
  struct HlfRegistry *ffi;     /* borrowed: custom-call bindings */

  /* Plans, one per computation, built on first use and kept until
   * hli_exec_free. Open addressing on the computation pointer. */
  HlcArena plan_arena;         /* owned: plans, their steps and slot arrays */
  HliPlan **plans;             /* owned: table of nplans_cap entries */
  int32_t nplans, nplans_cap;

  bool random_constants;       /* elided constants {...} get deterministic
                                  pseudo-random values instead of an error */
  uint64_t random_seed;        /* seed for those values */
  bool warned_elided;          /* the warning about elided constants was given */
  bool no_fusion;              /* plan every instruction as its own step (tracing
                                  sees each value); also HLORUN_FUSION=0 */
  bool no_inplace;             /* never let a result take over a dying operand's
                                  buffer (tracing keeps every value intact) */

  /* Recycled memory (value.c): a while body running a million times would
   * otherwise spend most of its time in malloc/free for small values. Only
   * the executor's thread touches these. */
  void *free_values;           /* owned: list of value headers */
  int32_t nfree_values;
  void *free_bufs[HLI_BUF_CLASSES];     /* owned: lists of small buffers, by size class */
  int32_t nfree_bufs[HLI_BUF_CLASSES];

  /* Observation for the debugging tools (observe.c): when non-NULL, the run
   * loop calls hli_observe before and after every step of every plan. NULL
   * costs one branch per step. */
  struct HliObs *obs;          /* borrowed (the executable owns it), or NULL */
  /* Limits and isolation (limits.c, isolate.c). */
  const HloInstr *cur;         /* borrowed: innermost instruction running, for
                                  messages (memory and time limits) */
  int64_t max_iterations;      /* per while loop; 0 = unlimited */
  double deadline;             /* CLOCK_MONOTONIC seconds; 0 = none */
  double timeout;              /* the limit the deadline came from, for messages */
  bool isolate;                /* custom calls run in child processes */
  double cc_timeout;           /* seconds per isolated custom call */
  const char *crash_dir;       /* borrowed: where isolated crashes save inputs */
  /* Multi-device runs (comm.h): this executor's device and its
   * communicator; NULL for a run on one device. */
  const struct HliDevice *device;
  /* Memory shared by the devices of a run (--max-memory counts them
   * together): when set, value buffers are counted here under its lock
   * instead of in mem_used alone. */
  struct HliMemShare *mem_share;
  /* The kind of the first error since the run began that is not a plain
   * runtime error (hli_unsupported, hli_fail_nomem): the status of a failed
   * run, without reading its messages. hli_exec_status reads it. */
  HliErrKind err_kind;
  bool ffi_mem_refused;        /* a custom call's memory request was refused
                                  during the call running now (custom_call.c) */
};

/* The status of a run (or a plan) that failed on x, from err_kind:
 * HLO_UNSUPPORTED, HLO_NOMEM or HLO_RUNTIME_ERROR. */
HloStatus hli_exec_status(const HliExec *x);

/* The observation hook (observe.c). result NULL: step s of p is about to
 * run; else it just ran and produced result. Operand values are gathered
 * from slots into in (p's operand buffer). 0 to go on; -1 stops the run
 * (an error naming the instruction is recorded). */
int hli_observe(HliExec *x, const HliPlan *p, int32_t s, HliValue *const *slots, HliValue **in,
                HliValue *result);
/* Whether the observer reads operands after a step (then no step updates
 * an operand in place while observed). */
bool hli_obs_keeps_operands(const HliObs *o);


/* ---- Limits (limits.c) ---- */

/* Reject computations that call themselves (directly or through others)
 * and call chains deeper than HLI_MAX_CALL_DEPTH, before anything runs:
 * either would exhaust the stack. 0, or -1 with an error on x. */
enum { HLI_MAX_CALL_DEPTH = 256 };
int hli_check_call_graph(HliExec *x, const HloComputation *entry);
/* The run's deadline passed? -1 with an error naming ins, else 0. */
int hli_check_deadline(HliExec *x, const HloInstr *ins);

/* Release the recycled memory (hli_exec_free does it). */
void hli_value_cache_free(HliExec *x);

/* Set up x for module m (x is caller memory). diags is where errors go. */
void hli_exec_init(HliExec *x, const HloModule *m, HlcDiags *diags);
/* Free the plans and their cached constants. */
void hli_exec_free(HliExec *x);

/* Plan computation c and every computation it calls (recursively), checking
 * every live instruction's kernel. 0 on success, else -1 with errors on x. */
int hli_exec_prepare(HliExec *x, const HloComputation *c);
/* The plan of c, building it if needed; NULL with an error on failure. */
HliPlan *hli_plan_get(HliExec *x, const HloComputation *c);
/* Run a plan: args are borrowed, *result gets a new reference. */
int hli_plan_run(HliExec *x, HliPlan *p, HliValue *const *args, HliValue **result);

/* Memory accounting for value buffers: 0 if n more bytes fit the limit. */
int hli_mem_reserve(HliExec *x, size_t n);
void hli_mem_release(HliExec *x, size_t n);

/* Fill an array value with deterministic pseudo-random elements drawn from
 * seed: floats uniform in [-1, 1), signed integers in [-8, 8), unsigned in
 * [0, 16), pred true/false, complex parts like floats. Tuples: each leaf
 * with a seed derived from its position. */
void hli_fill_random(HliValue *v, uint64_t seed);

/* Thread pool (pool.c). nthreads counts the calling thread: a pool of n
 * threads starts n-1 workers. NULL if n <= 1 or threads cannot start. */
HliPool *hli_pool_new(int nthreads);
void hli_pool_free(HliPool *p);
int hli_pool_threads(const HliPool *p);
/* Number of hardware threads (sysconf), at least 1. */
int hli_cpu_count(void);
#endif
