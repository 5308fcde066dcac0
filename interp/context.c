/* context.c: the context of the public API (HloCtx): its options, its
 * diagnostics and how errors are recorded on it (hli_api_fail).
 * Not here: custom-call bindings (bind.c), files (files.c). */
#include "config.h"
#include "hlorun.h"
#include "interp/api.h"
#include "interp/valio.h"
#include "ffi/ffi.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void hlo_free(void *p) { free(p); }

uint64_t hlo_default_max_memory(void) {
  long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
  uint64_t cap = (uint64_t)16 << 30;
  if (pages <= 0 || psz <= 0) return cap;
  uint64_t ram = (uint64_t)pages * (uint64_t)psz / 4 * 3;
  return ram < cap ? ram : cap;
}

HloStatus hli_ctx_create(const HloCtxOptions *opts, HloCtx **out) {
  if (!out) return HLO_INVALID_ARGUMENT;
  *out = NULL;
  HloCtxOptions o = {sizeof o, 0, 0, 0, 0, 0, NULL};
  if (opts) {
    size_t n = opts->struct_size < sizeof o ? opts->struct_size : sizeof o;
    memcpy(&o, opts, n);
  }
  if (o.threads < 0 || !(o.custom_call_timeout >= 0)) return HLO_INVALID_ARGUMENT;
  HloCtx *c = calloc(1, sizeof *c);
  if (!c) return HLO_NOMEM;
  c->threads = o.threads ? o.threads : hli_cpu_count();
  c->max_memory = o.max_memory ? o.max_memory : hlo_default_max_memory();
  c->diags.max_errors = o.max_errors;
  c->ffi = hlf_registry_new();
  if (!c->ffi) { free(c); return HLO_NOMEM; }
  hlf_set_num_threads(c->ffi, c->threads);
  c->isolate = o.isolate_custom_calls != 0;
  c->cc_timeout = o.custom_call_timeout > 0 ? o.custom_call_timeout : 60;
  if (o.crash_dir && !(c->crash_dir = strdup(o.crash_dir))) { hlo_ctx_free(c); return HLO_NOMEM; }
  *out = c;
  return HLO_OK;
}

struct HlfRegistry *hli_ctx_registry(HloCtx *ctx) { return ctx ? ctx->ffi : NULL; }

void hlo_ctx_free(HloCtx *ctx) {
  if (!ctx) return;
  hlf_registry_free(ctx->ffi);
  hli_pool_free(ctx->pool);
  hlc_diags_clear(&ctx->diags);
  free(ctx->diag_text);
  free(ctx->crash_dir);
  free(ctx);
}

const char *hlo_ctx_diagnostics(HloCtx *ctx) {
  if (!ctx) return "";
  HlcText b = {0};
  hlc_text_puts(&b, "");
  for (int i = 0; i < ctx->diags.n; i++) hlc_text_puts(&b, ctx->diags.v[i].text);
  free(ctx->diag_text);
  ctx->diag_text = b.p;
  return ctx->diag_text ? ctx->diag_text : "";
}

int hlo_ctx_error_count(const HloCtx *ctx) { return ctx ? ctx->diags.nerrors : 0; }
int hlo_ctx_warning_count(const HloCtx *ctx) { return ctx ? ctx->diags.nwarnings : 0; }
void hlo_ctx_clear_diagnostics(HloCtx *ctx) { if (ctx) hlc_diags_clear(&ctx->diags); }
int hlo_ctx_threads(const HloCtx *ctx) { return ctx ? ctx->threads : 1; }


HloStatus hli_api_fail(HloCtx *ctx, HloStatus st, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (ctx) hlc_diag(&ctx->diags, HLC_ERROR, "%s", msg);
  return st;
}
