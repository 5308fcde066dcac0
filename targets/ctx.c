/* ctx.c: the public hlo_ctx_new: the interpreter's context (interp/context.c)
 * with the built-in target families of targets/ registered in its
 * custom-call registry. It lives here, above interp/, so that the lower
 * layers never name the families above them. */
#include "hlorun.h"
#include "interp/context.h"
#include "targets/targets.h"

HloStatus hlo_ctx_new(const HloCtxOptions *opts, HloCtx **out) {
  HloStatus st = hli_ctx_create(opts, out);
  if (st != HLO_OK) return st;
  if (hlt_register_all(hli_ctx_registry(*out)) != 0) {
    hlo_ctx_free(*out);
    *out = NULL;
    return HLO_NOMEM;
  }
  return HLO_OK;
}

HloStatus hlo_ctx_set_callback_output(HloCtx *ctx, HloTextSink *write, void *user) {
  if (!ctx) return HLO_INVALID_ARGUMENT;
  return hlt_set_callback_output(hli_ctx_registry(ctx), write, user) == 0 ? HLO_OK : HLO_NOMEM;
}
