/* run.c: compiling a module for one device and running it (the executor
 * behind hlo_compile and hlo_execute, which devices/run.c offers). */
#include "config.h"
#include "hlorun.h"
#include "interp/api.h"
#include "interp/plan.h"
#include "interp/comm.h"
#include "interp/valio.h"
#include "parser/parser.h"
#include "ffi/ffi.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

HloStatus hli_compile_device(HloCtx *ctx, const HloModule *m, const HloRunOptions *opts,
                             const HliDevice *dev, HloExecutable **out) {
  if (!ctx || !m || !out || !m->entry) return HLO_INVALID_ARGUMENT;
  *out = NULL;
  /* Shape-check the whole module before planning: kernels may then trust
   * the declared shapes (their own checks stay as a second line). Once for
   * the devices of a run. */
  if ((!dev || (dev->replica == 0 && dev->partition == 0)) && hlp_verify(m, &ctx->diags) != 0)
    return HLO_PARSE_ERROR;
  HloRunOptions o = {.struct_size = sizeof o};
  if (opts) memcpy(&o, opts, opts->struct_size < sizeof o ? opts->struct_size : sizeof o);
  if (o.max_iterations < 0 || !(o.timeout >= 0))
    return hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "negative max_iterations or timeout");
  HloExecutable *e = calloc(1, sizeof *e);
  if (!e) return hli_api_fail(ctx, HLO_NOMEM, "out of memory");
  e->ctx = ctx;
  e->m = m;
  hli_exec_init(&e->x, m, &ctx->diags);
  if (ctx->threads > 1 && !ctx->pool) ctx->pool = hli_pool_new(ctx->threads);
  e->x.pool = ctx->pool;
  e->x.nthreads = ctx->pool ? hli_pool_threads(ctx->pool) : 1;
  e->x.mem_limit = ctx->max_memory;
  e->x.ffi = ctx->ffi;   /* handlers live in the context's registry */
  e->x.random_constants = o.random_constants != 0;
  e->x.random_seed = o.seed;
  e->x.no_fusion = o.no_fusion != 0;
  e->x.rng_state ^= o.seed * 0x9e3779b97f4a7c15ull;
  e->x.max_iterations = o.max_iterations;   /* limits (limits.c, isolate.c) */
  e->timeout = e->x.timeout = o.timeout;
  e->x.isolate = ctx->isolate;
  e->x.cc_timeout = ctx->cc_timeout;
  e->x.crash_dir = ctx->crash_dir;
  e->x.device = dev;
  /* Custom calls first: their errors point into backend_config (a caret at
   * the bad attribute), which the plan-time check cannot do. */
  if (hlf_check_module(ctx->ffi, m, &ctx->diags) != 0) {
    hlo_executable_free(e);
    return HLO_ERROR;
  }
  if (hli_exec_prepare(&e->x, m->entry) != 0 || !(e->entry = hli_plan_get(&e->x, m->entry))) {
    HloStatus st = hli_exec_status(&e->x);
    hlo_executable_free(e);
    return st;
  }
  *out = e;
  return HLO_OK;
}

void hlo_executable_free(HloExecutable *e) {
  if (!e) return;
  /* Call-site state of custom calls dies with the executable (a later module
   * may reuse the same addresses). */
  if (e->ctx && e->ctx->ffi && !e->x.device) hlf_release_module(e->ctx->ffi, e->m);
  if (e->owner) e->owner_free(e->owner);
  hli_exec_free(&e->x);
  hli_obs_free(e->obs);
  free(e);
}

uint64_t hlo_executable_peak_memory(const HloExecutable *e) { return e ? e->x.mem_peak : 0; }

/* A run's arguments as executor values: the inputs' shapes checked against
 * the ENTRY parameters. */
HloStatus hli_entry_args(HloCtx *ctx, const HloModule *m, HloBuffer *const *inputs, int n,
                         HliValue **args) {
  const HloComputation *c = m->entry;
  if (n != c->nparams)
    return hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "the ENTRY computation %s takes %d "
                        "parameter%s, but %d input%s given", c->name, c->nparams,
                        c->nparams == 1 ? "" : "s", n, n == 1 ? " was" : "s were");
  for (int i = 0; i < n; i++) {
    const HloShape *want = &c->params[i]->shape;
    if (!inputs[i] || !hlp_shape_compatible(inputs[i]->v->shape, want)) {
      HlcText a = {0}, b = {0};
      if (inputs[i]) hlp_print_shape(&a, inputs[i]->v->shape, false);
      hlp_print_shape(&b, want, false);
      hli_api_fail(ctx, HLO_TYPE_MISMATCH, "input %d has shape %s, but parameter %d (%s) is %s",
                   i, a.p ? a.p : "(none)", i, c->params[i]->name, b.p ? b.p : "?");
      hlc_text_free(&a);
      hlc_text_free(&b);
      return HLO_TYPE_MISMATCH;
    }
    args[i] = inputs[i]->v;
  }
  return HLO_OK;
}

HloStatus hli_execute_args(HloExecutable *e, HliValue *const *args, HloBuffer **result) {
  *result = NULL;
  HliValue *res;
  hli_obs_reset(e->obs);
  e->x.deadline = e->timeout > 0 ? hli_now() + e->timeout : 0;
  e->x.cur = NULL;
  e->x.err_kind = HLI_ERR_RUNTIME;
  size_t held = e->x.mem_used;
  int rc = hli_plan_run(&e->x, e->entry, args, &res);
  /* The result now belongs to the caller, who frees it without the
   * executor: left counted, every run would add its result to the next
   * run's memory in use until the limit refuses a run that fits. */
  e->x.mem_used = held;
  if (rc != 0) return hli_obs_stopped(e->obs) ? HLO_STOPPED : hli_exec_status(&e->x);
  return hli_make_buffer(e->ctx, res, &e->m->entry->root->shape, result);
}
