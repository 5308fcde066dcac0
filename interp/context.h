/* context.h: what targets/ needs to make the public hlo_ctx_new (targets/
 * ctx.c), the one entry point above interp/ that builds a context: the
 * context without the built-in target families, and its custom-call
 * registry to register them in. */
#ifndef HLORUN_INTERP_CONTEXT_H
#define HLORUN_INTERP_CONTEXT_H
#include "hlorun.h"

struct HlfRegistry;

/* The context without the built-in targets above interp/ (targets/ctx.c's
 * hlo_ctx_new adds them): options as hlo_ctx_new's. */
HloStatus hli_ctx_create(const HloCtxOptions *opts, HloCtx **out);
/* The context's custom-call registry (ffi/), owned by the context. */
struct HlfRegistry *hli_ctx_registry(HloCtx *ctx);

#endif
