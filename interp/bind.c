/* bind.c: binding custom-call targets and plugins to a context: the
 * libraries' code is first tried in a child process when isolation is on.
 * Not here: calling the handlers (custom_call.c, ffi/). */
#include "config.h"
#include "hlorun.h"
#include "interp/api.h"
#include "interp/isolate.h"
#include "ffi/ffi.h"
#include "hlorun/ffi.h"
#include <stdlib.h>


/* Loading a library runs its constructors, and a plugin's registration
 * function is plugin code: with isolation on, both are first tried in a
 * worker process (isolate.c), so a library that crashes there is reported
 * instead of taking the process down. */
typedef struct LoadJob {
  HloCtx *ctx;
  const char *target, *lib, *symbol;   /* target NULL: a --plugin */
} LoadJob;

static int load_in_child(void *arg) {
  LoadJob *j = arg;
  HlcDiags d = {0};
  hlf_registry_after_fork(j->ctx->ffi);
  return j->target ? hlf_bind(j->ctx->ffi, j->target, j->lib, j->symbol, &d)
                   : hlf_load_plugin(j->ctx->ffi, j->lib, j->symbol, &d);
}

static HloStatus probe_load(HloCtx *ctx, const char *target, const char *lib, const char *symbol) {
  if (!ctx->isolate) return HLO_OK;
  LoadJob j = {ctx, target, lib, symbol};
  char *why = NULL;
  if (hli_isolated_probe(load_in_child, &j, ctx->cc_timeout, &why) >= 0) return HLO_OK;
  HloStatus st = hli_api_fail(ctx, HLO_IO_ERROR, "%s %s: loading the library %s in an isolated worker "
                      "process", target ? "--custom-call" : "--plugin", target ? target : lib,
                      why ? why : "failed");
  free(why);
  return st;
}

HloStatus hlo_ctx_bind_custom_call(HloCtx *ctx, const char *target, const char *lib,
                                   const char *symbol) {
  if (!ctx || !target || !lib) return HLO_INVALID_ARGUMENT;
  if (probe_load(ctx, target, lib, symbol) != HLO_OK) return HLO_IO_ERROR;
  return hlf_bind(ctx->ffi, target, lib, symbol, &ctx->diags) ? HLO_IO_ERROR : HLO_OK;
}

HloStatus hlo_ctx_load_plugin(HloCtx *ctx, const char *lib, const char *function) {
  if (!ctx || !lib) return HLO_INVALID_ARGUMENT;
  if (probe_load(ctx, NULL, lib, function) != HLO_OK) return HLO_IO_ERROR;
  return hlf_load_plugin(ctx->ffi, lib, function, &ctx->diags) ? HLO_IO_ERROR : HLO_OK;
}

HloStatus hlo_ctx_register_ffi_handler(HloCtx *ctx, const char *target, HloFfiHandler *execute,
                                       const char *origin) {
  if (!ctx || !target || !*target || !execute) return HLO_INVALID_ARGUMENT;
  XLA_FFI_Handler_Bundle b = {.execute = (XLA_FFI_Handler *)execute};
  return hlf_register_handler(ctx->ffi, target, &b, origin) ? hli_api_fail(ctx, HLO_NOMEM, "out of memory")
                                                          : HLO_OK;
}

char *hlo_ctx_custom_call_binding(HloCtx *ctx, const char *target) {
  return ctx && target ? hlf_binding_text(ctx->ffi, target) : NULL;
}

HloStatus hlo_ctx_set_instruction_members(HloCtx *ctx, const char *target, int on) {
  if (!ctx) return HLO_INVALID_ARGUMENT;
  return hlf_set_members_opt_in(ctx->ffi, target, on != 0) ? hli_api_fail(ctx, HLO_NOMEM, "out of memory")
                                                           : HLO_OK;
}

HloStatus hlo_ctx_set_ffi_all_stages(HloCtx *ctx, int all) {
  if (!ctx) return HLO_INVALID_ARGUMENT;
  hlf_set_all_stages(ctx->ffi, all != 0);
  return HLO_OK;
}
