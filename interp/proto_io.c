/* proto_io.c: values from XLA's protocol buffers (proto/) as interpreter
 * values: a LiteralProto INPUT, an HloSnapshot's arguments and its recorded
 * result (for --expect). Shapes are checked against the parameter or result
 * they feed, as for .npy inputs. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "interp/api.h"
#include "interp/valio.h"
#include "proto/proto.h"

/* want is l's shape (recursively), or the error says what l is instead. */
static HloStatus check_shape(HloCtx *ctx, const HloLiteral *l, const HloShape *want, const char *what) {
  if (hlp_shape_compatible(l->shape, want)) return HLO_OK;
  HlcText got = {0}, wb = {0};
  hlp_print_shape(&got, l->shape, false);
  hlp_print_shape(&wb, want, false);
  HloStatus st = hli_api_fail(ctx, HLO_TYPE_MISMATCH, "%s: the literal is %s, expected %s", what,
                              got.p ? got.p : "?", wb.p ? wb.p : "?");
  hlc_text_free(&got);
  hlc_text_free(&wb);
  return st;
}

/* Decode (or copy) the literal's leaves into v's: a deferred leaf goes from
 * the file's bytes straight into v's buffer. */
static HloStatus fill(HloCtx *ctx, HpbValues *pv, const HloLiteral *l, HliValue *v, const char *what) {
  if (v->shape->dtype == HLO_TUPLE) {
    for (int32_t i = 0; i < v->ntuple; i++) {
      HloStatus st = fill(ctx, pv, &l->tuple[i], v->tuple[i], what);
      if (st != HLO_OK) return st;
    }
    return HLO_OK;
  }
  if (v->nbytes != l->nbytes) return hli_api_fail(ctx, HLO_TYPE_MISMATCH, "%s: the literal's size differs", what);
  if (v->nbytes && hpb_values_fill(pv, l, v->data, &ctx->diags) != 0) return HLO_IO_ERROR;
  return HLO_OK;
}

static HloStatus to_value(HloCtx *ctx, HpbValues *pv, const HloLiteral *l, const HloShape *want,
                          const char *what, HliValue **out) {
  *out = NULL;
  HloStatus st = check_shape(ctx, l, want, what);   /* before the buffer is allocated */
  if (st != HLO_OK) return st;
  *out = hli_value_new(NULL, want);
  if (!*out) return hli_api_fail(ctx, HLO_NOMEM, "%s: out of memory", what);
  st = fill(ctx, pv, l, *out, what);
  if (st != HLO_OK) { hli_value_unref(NULL, *out); *out = NULL; }
  return st;
}

HloStatus hli_value_from_proto(HloCtx *ctx, const char *data, size_t len, HlcPager *pg,
                               const HloShape *want, const char *what, HliValue **out) {
  *out = NULL;
  HpbValues *pv = hpb_read(data, len, what, &ctx->diags, -1, HPB_READ_DEFER, pg);
  if (!pv) return HLO_IO_ERROR;
  HloStatus st;
  HpbKind k = hpb_sniff(data, len);
  if (k != HPB_LITERAL) {
    st = pv->result ? to_value(ctx, pv, pv->result, want, what, out)
                    : hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "%s: the %s holds no recorded result",
                                   what, hpb_kind_name(k));
  } else {
    st = to_value(ctx, pv, pv->values[0], want, what, out);
  }
  hpb_values_free(pv);
  return st;
}

int hlo_file_is_snapshot(HloCtx *ctx, const char *path) {
  HliFile f;
  if (!ctx || !path || hli_file_open(ctx, path, &f) != HLO_OK) return 0;
  HpbKind k = hpb_sniff(f.data, f.len);
  int yes = k == HPB_SNAPSHOT || k == HPB_ITERATION || k == HPB_RUN_LITERALS;
  hli_file_close(&f);
  return yes;
}

HloStatus hlo_load_snapshot_arguments(HloCtx *ctx, const HloModule *m, const char *path,
                                      HloBuffer **out, int *n) {
  if (!ctx || !m || !path || !out || !n) return HLO_INVALID_ARGUMENT;
  int cap = *n;
  *n = 0;
  HliFile f;
  HloStatus st = hli_file_open(ctx, path, &f);
  if (st != HLO_OK) return st;
  /* Deferred: each argument is decoded from the file's bytes straight into
   * its buffer, once its shape has been checked against its parameter. */
  HpbValues *pv = hpb_read(f.data, f.len, path, &ctx->diags, -1,
                           HPB_READ_ARGS | HPB_READ_DEFER, hli_file_pager(&f));
  if (!pv) return hli_file_done(ctx, &f, path, HLO_IO_ERROR);
  int np = hlo_module_num_params(m);
  if (pv->n != np || pv->n > cap) {
    st = hli_api_fail(ctx, HLO_TYPE_MISMATCH, "%s: the file holds %d arguments, the module takes %d "
                      "parameters", path, (int)pv->n, np);
    goto out;
  }
  for (int i = 0; i < np; i++) {
    char what[1024];
    const HloInstr *p = m->entry->params[i];
    snprintf(what, sizeof what, "%s: xla.HloSnapshot.arguments[%d] (parameter %s)", path, i,
             p && p->name ? p->name : "?");
    HliValue *v;
    if ((st = to_value(ctx, pv, pv->values[i], &p->shape, what, &v)) != HLO_OK ||
        (st = hli_make_buffer(ctx, v, &p->shape, &out[i])) != HLO_OK) {
      for (int k = 0; k < i; k++) { hlo_buffer_free(out[k]); out[k] = NULL; }
      *n = 0;
      goto out;
    }
    *n = i + 1;
  }
out:
  hpb_values_free(pv);
  if (st == HLO_OK && hli_file_truncated(&f)) {
    for (int k = 0; k < *n; k++) { hlo_buffer_free(out[k]); out[k] = NULL; }
    *n = 0;
  }
  return hli_file_done(ctx, &f, path, st);
}

int hlo_file_partitions(HloCtx *ctx, const char *path) {
  HliFile f;
  if (!ctx || !path || hli_file_open(ctx, path, &f) != HLO_OK) return 0;
  int n = hpb_count_partitions(f.data, f.len);
  hli_file_close(&f);
  return n;
}

HloStatus hlo_load_partition_arguments(HloCtx *ctx, const char *path, int part, HloBuffer **out,
                                       int *n) {
  if (!ctx || !path || !out || !n || part < 0) return HLO_INVALID_ARGUMENT;
  int cap = *n;
  *n = 0;
  HliFile f;
  HloStatus st = hli_file_open(ctx, path, &f);
  if (st != HLO_OK) return st;
  HpbValues *pv = hpb_read(f.data, f.len, path, &ctx->diags, part,
                           HPB_READ_ARGS | HPB_READ_DEFER, hli_file_pager(&f));
  if (!pv) return hli_file_done(ctx, &f, path, HLO_IO_ERROR);
  if (pv->n > cap) {
    st = hli_api_fail(ctx, HLO_TYPE_MISMATCH, "%s: partition %d holds %d arguments, more than %d",
                      path, part, (int)pv->n, cap);
    goto out;
  }
  for (int i = 0; i < pv->n; i++) {
    char what[1024];
    snprintf(what, sizeof what, "%s: xla.HloUnoptimizedSnapshot.partitions[%d].arguments[%d]", path,
             part, i);
    HliValue *v;
    if ((st = to_value(ctx, pv, pv->values[i], pv->values[i]->shape, what, &v)) != HLO_OK ||
        (st = hli_make_buffer(ctx, v, pv->values[i]->shape, &out[i])) != HLO_OK) {
      for (int k = 0; k < i; k++) { hlo_buffer_free(out[k]); out[k] = NULL; }
      *n = 0;
      goto out;
    }
    *n = i + 1;
  }
out:
  hpb_values_free(pv);
  if (st == HLO_OK && hli_file_truncated(&f)) {
    for (int k = 0; k < *n; k++) { hlo_buffer_free(out[k]); out[k] = NULL; }
    *n = 0;
  }
  return hli_file_done(ctx, &f, path, st);
}

HloStatus hli_load_partition_argument(HloCtx *ctx, const char *path, int part, int index,
                                      HloBuffer **out, int *nargs) {
  *out = NULL;
  *nargs = 0;
  HliFile f;
  HloStatus st = hli_file_open(ctx, path, &f);
  if (st != HLO_OK) return st;
  /* Deferred: only this argument is decoded, straight into its buffer. */
  HpbValues *pv = hpb_read(f.data, f.len, path, &ctx->diags, part,
                           HPB_READ_ARGS | HPB_READ_DEFER, hli_file_pager(&f));
  if (!pv) return hli_file_done(ctx, &f, path, HLO_IO_ERROR);
  *nargs = pv->n;
  if (index < pv->n) {
    char what[1024];
    snprintf(what, sizeof what, "%s: xla.HloUnoptimizedSnapshot.partitions[%d].arguments[%d]", path,
             part, index);
    HliValue *v;
    if ((st = to_value(ctx, pv, pv->values[index], pv->values[index]->shape, what, &v)) == HLO_OK)
      st = hli_make_buffer(ctx, v, pv->values[index]->shape, out);
  }
  hpb_values_free(pv);
  if (st == HLO_OK && hli_file_truncated(&f)) { hlo_buffer_free(*out); *out = NULL; }
  return hli_file_done(ctx, &f, path, st);
}
