/* snapshot_write.c: a run as an xla.HloSnapshot (hlo_snapshot_encode), the
 * file XLA's run_hlo_module and hlorun both replay: field 1 an HloProto
 * holding the HloModuleProto, field 2 one LiteralProto per argument, field
 * 3 the result.
 *
 * The module and each literal are packed by proto/write.c; this file only
 * frames them (tag, length) in the snapshot, so no value is copied into a
 * second message tree. Each value is written with its parameter's (or the
 * ROOT's) shape, layout included, as XLA writes literals in their layout's
 * physical order.
 *
 * Not here: reading snapshots (proto/read.c), the file itself (the caller). */
#include "interp/api.h"
#include "common/text.h"
#include "proto/proto.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void varint(HlcText *o, uint64_t v) {
  uint8_t b[10];
  size_t k = 0;
  do {
    b[k] = (uint8_t)(v & 0x7f);
    v >>= 7;
    if (v) b[k] |= 0x80;
    k++;
  } while (v);
  hlc_text_put(o, b, k);
}

/* Field number f, wire type 2 (length-delimited), then n bytes. */
static void field(HlcText *o, uint32_t f, const void *d, size_t n) {
  varint(o, (uint64_t)f << 3 | 2);
  varint(o, n);
  hlc_text_put(o, d, n);
}

/* A literal view of v with shape s (v's dims; s's layout): nothing copied.
 * The views live in *pool (one block per value tree). */
static bool view(const HliValue *v, const HloShape *s, HloLiteral *lit, HloLiteral **pool,
                 int32_t *used, int32_t cap) {
  lit->shape = s;
  lit->data = v->data;
  lit->nbytes = v->nbytes;
  lit->elided = false;
  lit->ntuple = 0;
  lit->tuple = NULL;
  if (v->dtype != HLO_TUPLE) return true;
  if (s->dtype != HLO_TUPLE || s->ntuple != v->ntuple || *used + v->ntuple > cap) return false;
  lit->ntuple = v->ntuple;
  lit->tuple = *pool + *used;
  *used += v->ntuple;
  for (int32_t i = 0; i < v->ntuple; i++)
    if (!view(v->tuple[i], &s->tuple[i], &lit->tuple[i], pool, used, cap)) return false;
  return true;
}

static int32_t count_leaves(const HliValue *v) {
  int32_t n = 1;
  if (v->dtype == HLO_TUPLE)
    for (int32_t i = 0; i < v->ntuple; i++) n += count_leaves(v->tuple[i]);
  return n;
}

/* v as a LiteralProto with shape s (or v's own when s does not fit),
 * framed as field f of o. */
static HloStatus put_value(HloCtx *ctx, HlcText *o, uint32_t f, const HliValue *v, const HloShape *s,
                           const char *what) {
  if (!s || !hlp_shape_compatible(s, v->shape)) s = v->shape;
  int32_t cap = count_leaves(v), used = 0;
  HloLiteral *pool = calloc((size_t)cap, sizeof *pool), top;
  if (!pool) return hli_api_fail(ctx, HLO_NOMEM, "out of memory");
  if (!view(v, s, &top, &pool, &used, cap)) {
    free(pool);
    return hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "%s does not have its parameter's shape", what);
  }
  uint8_t *bytes = NULL;
  size_t len = 0;
  char err[400];
  int rc = hpb_write_literal(&top, &bytes, &len, err, sizeof err);
  free(pool);
  if (rc != 0)
    return hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "cannot write %s as xla.LiteralProto: %s", what, err);
  field(o, f, bytes, len);
  free(bytes);
  return HLO_OK;
}

HloStatus hlo_snapshot_encode(HloCtx *ctx, const HloModule *m, HloBuffer *const *args, int n,
                              const HloBuffer *result, void **bytes, size_t *len) {
  if (!ctx || !m || !m->entry || (n && !args) || !bytes || !len) return HLO_INVALID_ARGUMENT;
  *bytes = NULL;
  *len = 0;
  if (n != m->entry->nparams)
    return hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "the snapshot needs %d argument%s, not %d",
                        (int)m->entry->nparams, m->entry->nparams == 1 ? "" : "s", n);
  void *mod = NULL;
  size_t mod_len = 0;
  HloStatus st = hlo_module_to_proto(ctx, m, &mod, &mod_len);
  if (st != HLO_OK) return st;
  HlcText hlo = {0}, o = {0};
  field(&hlo, 1, mod, mod_len);   /* HloProto.hlo_module */
  free(mod);
  field(&o, 1, hlo.p, hlo.n);     /* HloSnapshot.hlo */
  free(hlo.p);
  if (hlo.oom) o.oom = true;
  for (int i = 0; i < n && st == HLO_OK; i++) {
    char what[64];
    snprintf(what, sizeof what, "argument %d", i);
    if (!args[i]) st = hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "%s is missing", what);
    else st = put_value(ctx, &o, 2, args[i]->v, &m->entry->params[i]->shape, what);
  }
  if (st == HLO_OK && result)
    st = put_value(ctx, &o, 3, result->v, m->entry->root ? &m->entry->root->shape : NULL, "the result");
  if (st == HLO_OK && o.oom) st = hli_api_fail(ctx, HLO_NOMEM, "out of memory");
  if (st != HLO_OK) { free(o.p); return st; }
  *bytes = o.p ? o.p : malloc(1);
  *len = o.n;
  return *bytes ? HLO_OK : hli_api_fail(ctx, HLO_NOMEM, "out of memory");
}
