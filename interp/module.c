/* module.c: modules in the public API: parsing (HLO text or a protocol
 * buffer), verifying, printing, writing as HloModuleProto, parameters'
 * shapes, custom-call checks. */
#include "config.h"
#include "hlorun.h"
#include "interp/api.h"
#include "interp/valio.h"
#include "parser/parser.h"
#include "proto/proto.h"
#include "stablehlo/stablehlo.h"
#include "ffi/ffi.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

HloStatus hlo_module_parse(HloCtx *ctx, const char *text, size_t len, const char *filename,
                           HloModule **out) {
  if (!ctx || !text || !out) return HLO_INVALID_ARGUMENT;
  HpbKind kind = hpb_sniff(text, len);
  if (kind == HPB_NOT_PROTO && hpb_looks_binary(text, len)) {
    char why[256];
    hpb_wire_explain(text, len, why, sizeof why);
    *out = NULL;
    return hli_api_fail(ctx, HLO_PARSE_ERROR, "%s: neither HLO text nor a well-formed protocol buffer: %s",
                filename ? filename : "<input>", why);
  }
  *out = kind == HPB_NOT_PROTO && shlo_looks_like_mlir(text, len)
             ? shlo_parse_module(text, len, filename ? filename : "<input>", &ctx->diags)
         : kind != HPB_NOT_PROTO && kind != HPB_LITERAL
             ? hpb_parse_module(text, len, filename ? filename : "<input>", &ctx->diags)
             : hlp_parse(text, len, filename ? filename : "<input>", &ctx->diags);
  if (!*out) {
    if (ctx->diags.nerrors == 0) hli_api_fail(ctx, HLO_PARSE_ERROR, "%s: cannot parse", filename);
    return HLO_PARSE_ERROR;
  }
  if (!(*out)->entry) {
    hlp_module_free(*out);
    *out = NULL;
    return hli_api_fail(ctx, HLO_PARSE_ERROR, "%s: the module has no ENTRY computation", filename);
  }
  return HLO_OK;
}

HloStatus hlo_module_load(HloCtx *ctx, const char *path, HloModule **out) {
  if (!ctx || !path || !out) return HLO_INVALID_ARGUMENT;
  HliFile f;
  HloStatus st = hli_file_open(ctx, path, &f);   /* a snapshot's arguments are not read */
  if (st != HLO_OK) return st;
  size_t off, n;
  if (hli_file_pager(&f) && hpb_module_range(f.data, f.len, &off, &n) == 0)
    hlc_need(hli_file_pager(&f), f.data + off, n);   /* the module's bytes, whole */
  st = hlo_module_parse(ctx, f.data, f.len, strcmp(path, "-") == 0 ? "<stdin>" : path, out);
  st = hli_file_done(ctx, &f, path, st);
  if (st != HLO_OK && *out) { hlp_module_free(*out); *out = NULL; }
  return st;
}

void hlo_module_free(HloModule *m) { if (m) hlp_module_free(m); }

HloStatus hlo_module_verify(HloCtx *ctx, const HloModule *m) {
  if (!ctx || !m) return HLO_INVALID_ARGUMENT;
  return hlp_verify(m, &ctx->diags) == 0 ? HLO_OK : HLO_PARSE_ERROR;
}

HloStatus hlo_module_verify_warn(HloCtx *ctx, const HloModule *m, int *problems) {
  if (!ctx || !m) return HLO_INVALID_ARGUMENT;
  HlcDiags d = {0};
  hlp_verify(m, &d);
  if (problems) *problems = d.nerrors;
  hlc_diags_move_as_warnings(&ctx->diags, &d);
  return HLO_OK;
}

HloStatus hlo_module_print(HloCtx *ctx, const HloModule *m, char **text, size_t *len) {
  if (!ctx || !m || !text) return HLO_INVALID_ARGUMENT;
  *text = hlp_print(m, len);
  return *text ? HLO_OK : hli_api_fail(ctx, HLO_NOMEM, "out of memory printing the module");
}

HloStatus hlo_module_to_proto(HloCtx *ctx, const HloModule *m, void **bytes, size_t *len) {
  if (!ctx || !m || !bytes || !len) return HLO_INVALID_ARGUMENT;
  char err[600], note[600];
  uint8_t *out = NULL;
  if (hpb_write_module(m, &out, len, err, sizeof err, note, sizeof note) != 0)
    return hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "cannot write the module as xla.HloModuleProto: %s", err);
  if (note[0])
    hlc_diag(&ctx->diags, HLC_WARNING, "xla.HloModuleProto has no field for %s (XLA keeps them in "
             "HloModuleConfig): the proto leaves them out", note);
  *bytes = out;
  return HLO_OK;
}

int hlo_module_num_params(const HloModule *m) { return m && m->entry ? m->entry->nparams : 0; }

const HloShape *hli_param_shape(const HloModule *m, int index) {
  if (!m || !m->entry) return NULL;
  if (index == -1) return m->entry->root ? &m->entry->root->shape : NULL;
  if (index < 0 || index >= m->entry->nparams || !m->entry->params[index]) return NULL;
  return &m->entry->params[index]->shape;
}

HloStatus hlo_module_param_shape(HloCtx *ctx, const HloModule *m, int index, char **text) {
  const HloShape *s = hli_param_shape(m, index);
  if (!s || !text) return hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "no parameter %d", index);
  HlcText b = {0};
  hlp_print_shape(&b, s, false);
  if (b.oom) { hlc_text_free(&b); return hli_api_fail(ctx, HLO_NOMEM, "out of memory"); }
  *text = b.p;
  return HLO_OK;
}

int hlo_module_is_tuple(const HloModule *m, int index) {
  const HloShape *s = hli_param_shape(m, index);
  return s && s->dtype == HLO_TUPLE;
}

HloStatus hlo_module_check_custom_calls(HloCtx *ctx, const HloModule *m) {
  if (!ctx || !m) return HLO_INVALID_ARGUMENT;
  return hlf_check_module(ctx->ffi, m, &ctx->diags) == 0 ? HLO_OK : HLO_ERROR;
}

HloStatus hlo_module_explain_custom_calls(HloCtx *ctx, const HloModule *m, char **text) {
  if (!ctx || !m || !text) return HLO_INVALID_ARGUMENT;
  *text = hlf_explain(ctx->ffi, m, &ctx->diags);
  return *text ? HLO_OK : hli_api_fail(ctx, HLO_NOMEM, "out of memory");
}
