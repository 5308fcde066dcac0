/* custom_call.c: the kernel of HLO_OP_CUSTOM_CALL. It flattens the operand
 * values and the preallocated result value into leaf buffers (depth-first,
 * operands in order, tokens as data-less leaves) and hands them to the FFI
 * layer (ffi/), which finds the target's handler and calls it with the
 * convention the instruction's api_version asks for. The plan-time check
 * makes unbound targets and malformed backend_configs fail before any work.
 * Memory a typed handler allocates through the FFI counts against the run's
 * memory limit through the hook below.
 * A manual region's edges (SPMDFullToShardShape, SPMDShardToFullShape)
 * depend on the device, which no handler sees: kernels/manual.c runs them.
 * Not here: handlers, attributes, the XLA FFI ABI (all in ffi/). */
#include "interp/exec.h"
#include "interp/isolate.h"
#include "interp/kernels/manual.h"
#include "ir/collective.h"
#include "ffi/ffi.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/* A registry with only the built-in targets, for executors without one
 * (kernel unit tests). Lives until the process ends. */
static HlfRegistry *fallback;
static pthread_once_t fallback_once = PTHREAD_ONCE_INIT;
static void make_fallback(void) { fallback = hlf_registry_new(); }

static HlfRegistry *registry(HliExec *x) {
  HlfRegistry *r = x ? hli_ffi_registry(x) : NULL;
  if (r) return r;
  pthread_once(&fallback_once, make_fallback);
  return fallback;
}

static int32_t count_leaves(const HliValue *v) {
  if (v->dtype != HLO_TUPLE) return 1;
  int32_t n = 0;
  for (int32_t i = 0; i < v->ntuple; i++) n += count_leaves(v->tuple[i]);
  return n;
}

static void flatten(const HliValue *v, HlfBuf *out, int32_t *n) {
  if (v->dtype == HLO_TUPLE) {
    for (int32_t i = 0; i < v->ntuple; i++) flatten(v->tuple[i], out, n);
    return;
  }
  HlfBuf *b = &out[(*n)++];
  b->dtype = v->dtype;
  b->data = v->dtype == HLO_TOKEN ? NULL : v->data;
  b->rank = v->dtype == HLO_TOKEN ? 0 : v->rank;
  b->dims = v->dims;
}

typedef struct CheckJob { HlfRegistry *r; const HloModule *m; const HloInstr *ins; } CheckJob;

static int check_in_child(void *arg) {
  CheckJob *j = arg;
  char *err = NULL;
  hlf_registry_after_fork(j->r);
  return hlf_check(j->r, j->m, j->ins, &err);
}

static int cc_check(HliExec *x, const HloInstr *ins) {
  if (hlp_manual_edge(ins) != HLP_NOT_MANUAL_EDGE) return hlk_manual_check(x, ins);
  HlfRegistry *r = registry(x);
  if (!r) return hli_fail_nomem(x, ins, "out of memory");
  char *err = NULL;
  if (hli_isolating(x)) {
    /* The check asks a typed handler its metadata: plugin code, so it is
     * first tried in a worker process (isolate.c). */
    CheckJob j = {r, hli_module(x), ins};
    char *why = NULL;
    if (hli_isolated_probe(check_in_child, &j, 60, &why) < 0) {
      int rc = hli_fail(x, ins, "the handler of custom-call target \"%s\" %s in its isolated "
                        "worker process while answering the metadata query",
                        ins->custom_call_target ? ins->custom_call_target : "",
                        why ? why : "failed");
      free(why);
      return rc;
    }
  }
  if (hlf_check(r, hli_module(x), ins, &err) == 0) return 0;
  int rc = err ? hli_fail(x, ins, "%s", err) : hli_fail_nomem(x, ins, "out of memory");
  free(err);
  return rc;
}

/* ---- Memory a typed handler allocates ----------------------------------- */

/* XLA_FFI_DeviceMemory_Allocate counts against the run's memory limit like
 * values. No error is recorded here: the handler gets the refusal as an
 * XLA_FFI_Error carrying these numbers and decides (a handler that falls
 * back to a smaller workspace still succeeds); when it fails, its message
 * becomes the instruction's error. ffi/ serialises the calls of one handler
 * invocation, and the executor's thread waits in the call meanwhile. */
static int ffi_mem_reserve(void *opaque, size_t n, size_t *limit, size_t *used) {
  HliExec *x = opaque;
  if (x->mem_limit && (n > x->mem_limit || x->mem_used > x->mem_limit - n)) {
    *limit = x->mem_limit;
    *used = x->mem_used;
    x->ffi_mem_refused = true;
    return -1;
  }
  x->mem_used += n;
  if (x->mem_used > x->mem_peak) x->mem_peak = x->mem_used;
  return 0;
}

static void ffi_mem_release(void *opaque, size_t n) { hli_mem_release(opaque, n); }

HlfMemHook hli_ffi_mem_hook(HliExec *x) {
  return (HlfMemHook){ffi_mem_reserve, ffi_mem_release, x};
}

/* What runs now, for hlo_custom_call_in_progress: the note is written
 * before the handler is called, and published by one atomic store. */
static char running_note[512];
static const char *volatile running;

const char *hlo_custom_call_in_progress(void) { return running; }

static void note_running(HliExec *x, const HloInstr *ins) {
  const HloModule *m = x ? hli_module(x) : NULL;
  snprintf(running_note, sizeof running_note,
           "custom-call target \"%s\" (instruction %s, %s line %d)",
           ins->custom_call_target ? ins->custom_call_target : "", ins->name ? ins->name : "?",
           m && m->filename ? m->filename : "<input>", ins->line);
  __atomic_store_n(&running, running_note, __ATOMIC_RELEASE);
}

static int cc_run(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (hlp_manual_edge(ins) != HLP_NOT_MANUAL_EDGE) return hlk_manual_run(x, ins, in, out);
  HlfRegistry *r = registry(x);
  if (!r) return hli_fail_nomem(x, ins, "out of memory");
  int32_t nargs = 0, nrets = count_leaves(out);
  for (int32_t i = 0; i < ins->nops; i++) nargs += count_leaves(in[i]);
  HlfBuf *bufs = calloc((size_t)(nargs + nrets) + 1, sizeof *bufs);
  if (!bufs) return hli_fail_nomem(x, ins, "out of memory");
  int32_t k = 0;
  for (int32_t i = 0; i < ins->nops; i++) flatten(in[i], bufs, &k);
  flatten(out, bufs, &k);
  if (x) hlf_set_num_threads(r, hli_num_threads(x));
  /* A built-in handler's working memory counts against --max-memory. */
  size_t work = hlf_builtin_scratch(r, ins, bufs, nargs);
  if (hli_scratch_reserve(x, ins, work)) {
    free(bufs);
    return -1;
  }
  if (hli_isolating(x)) {   /* in a worker process (isolate.c) */
    int irc = hli_isolated_call(x, r, ins, in, bufs, nargs, nrets);
    free(bufs);
    hli_scratch_unreserve(x, work);
    return irc;
  }
  char *err = NULL;
  note_running(x, ins);
  HlfMemHook mem = hli_ffi_mem_hook(x);
  if (x) x->ffi_mem_refused = false;
  int rc = hlf_call_hooked(r, hli_module(x), ins, bufs, nargs, bufs + nargs, nrets,
                           x ? &mem : NULL, &err);
  __atomic_store_n(&running, NULL, __ATOMIC_RELEASE);
  free(bufs);
  hli_scratch_unreserve(x, work);
  if (rc) {
    /* A handler that fails after its allocation was refused ran out of memory. */
    rc = !err || (x && x->ffi_mem_refused) ? hli_fail_nomem(x, ins, "%s", err ? err : "out of memory")
                                           : hli_fail(x, ins, "%s", err);
    free(err);
  }
  return rc;
}

void hli_register_custom_call(HliOpTable t) {
  t[HLO_OP_CUSTOM_CALL].run = cc_run;
  t[HLO_OP_CUSTOM_CALL].check = cc_check;
}
