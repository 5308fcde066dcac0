/* buffers.c: buffers in the public API (HloBuffer): making them from
 * memory, reading their shape and data, encoding them as .npy, .npz or
 * literal text and saving them. Not here: reading them from files
 * (inputs.c). */
#include "config.h"
#include "hlorun.h"
#include "interp/api.h"
#include "interp/valio.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A value tree over v's data whose shapes live in arena (v keeps the data). */
static HliValue *rehome(HliValue *v, const HloShape *s) {
  if (s->dtype == HLO_TUPLE) {
    HliValue **el = calloc((size_t)(s->ntuple ? s->ntuple : 1), sizeof *el);
    if (!el) return NULL;
    int32_t k = 0;
    for (; k < s->ntuple && k < v->ntuple; k++)
      if (!(el[k] = rehome(v->tuple[k], &s->tuple[k]))) break;
    HliValue *t = k == s->ntuple ? hli_value_tuple(NULL, s, el, k) : NULL;
    for (int32_t i = 0; i < k; i++) hli_value_unref(NULL, el[i]);
    free(el);
    return t;
  }
  if (!hlc_dtype_is_array(s->dtype)) return hli_value_new(NULL, s);
  return hli_value_view(NULL, v, s);
}

/* Wrap v (consumes the reference) in a buffer with its own copy of shape s. */
HloStatus hli_make_buffer(HloCtx *ctx, HliValue *v, const HloShape *s, HloBuffer **out) {
  *out = NULL;
  HloBuffer *b = calloc(1, sizeof *b);
  if (!b) { hli_value_unref(NULL, v); return hli_api_fail(ctx, HLO_NOMEM, "out of memory"); }
  hlc_arena_init(&b->arena);
  HloShape *cs = hli_shape_clone(&b->arena, s);
  b->v = cs ? rehome(v, cs) : NULL;
  hli_value_unref(NULL, v);
  if (!b->v) {
    hlc_arena_free(&b->arena);
    free(b);
    return hli_api_fail(ctx, HLO_NOMEM, "out of memory");
  }
  *out = b;
  return HLO_OK;
}

void hlo_buffer_free(HloBuffer *b) {
  if (!b) return;
  hli_value_unref(NULL, b->v);
  hlc_arena_free(&b->arena);
  free(b);
}

HloStatus hlo_buffer_new_array(HloCtx *ctx, HloElementType type, const int64_t *dims, int rank,
                               const void *data, HloBuffer **out) {
  if (!out || rank < 0 || (rank > 0 && !dims)) return HLO_INVALID_ARGUMENT;
  *out = NULL;
  HloDtype t = hlc_dtype_from_xla_code((int)type);
  if ((int)t < 0 || !hlc_dtype_is_array(t))
    return hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "element type %d is not an array type", (int)type);
  for (int i = 0; i < rank; i++)
    if (dims[i] < 0) return hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "negative dimension %lld", (long long)dims[i]);
  HloShape s = {.dtype = t, .rank = rank, .dims = (int64_t *)(uintptr_t)dims};
  HliValue *v = hli_value_zeros(NULL, &s);
  if (!v) return hli_api_fail(ctx, HLO_NOMEM, "out of memory");
  if (data && v->nbytes) memcpy(v->data, data, v->nbytes);
  return hli_make_buffer(ctx, v, &s, out);
}

HloStatus hlo_buffer_new_tuple(HloCtx *ctx, HloBuffer *const *elems, int n, HloBuffer **out) {
  if (!out || n < 0 || (n > 0 && !elems)) return HLO_INVALID_ARGUMENT;
  *out = NULL;
  HloShape *ts = calloc((size_t)(n ? n : 1), sizeof *ts);
  HliValue **vs = calloc((size_t)(n ? n : 1), sizeof *vs);
  if (!ts || !vs) { free(ts); free(vs); return hli_api_fail(ctx, HLO_NOMEM, "out of memory"); }
  for (int i = 0; i < n; i++) {
    if (!elems[i]) { free(ts); free(vs); return HLO_INVALID_ARGUMENT; }
    ts[i] = *elems[i]->v->shape;
    vs[i] = elems[i]->v;
  }
  HloShape s = {.dtype = HLO_TUPLE, .ntuple = n, .tuple = ts};
  HliValue *t = hli_value_tuple(NULL, &s, vs, n);
  free(vs);
  HloStatus st = t ? hli_make_buffer(ctx, t, &s, out) : hli_api_fail(ctx, HLO_NOMEM, "out of memory");
  free(ts);
  return st;
}

HloElementType hlo_buffer_type(const HloBuffer *b) {
  return b ? (HloElementType)hlc_dtype_xla_code(b->v->dtype) : HLO_TYPE_INVALID;
}
int hlo_buffer_rank(const HloBuffer *b) { return b ? b->v->rank : 0; }
const int64_t *hlo_buffer_dims(const HloBuffer *b) { return b ? b->v->dims : NULL; }
int64_t hlo_buffer_num_elements(const HloBuffer *b) { return b ? b->v->nelem : 0; }
const void *hlo_buffer_data(const HloBuffer *b) { return b ? b->v->data : NULL; }
size_t hlo_buffer_nbytes(const HloBuffer *b) { return b ? b->v->nbytes : 0; }
int hlo_buffer_tuple_size(const HloBuffer *b) { return b && b->v->dtype == HLO_TUPLE ? b->v->ntuple : 0; }

HloStatus hlo_buffer_tuple_element(HloCtx *ctx, const HloBuffer *b, int i, HloBuffer **out) {
  if (!b || !out || b->v->dtype != HLO_TUPLE || i < 0 || i >= b->v->ntuple)
    return hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "no tuple element %d", i);
  HliValue *e = hli_value_ref(b->v->tuple[i]);
  return hli_make_buffer(ctx, e, e->shape, out);
}

HloStatus hlo_buffer_shape_text(HloCtx *ctx, const HloBuffer *b, char **text) {
  if (!b || !text) return HLO_INVALID_ARGUMENT;
  HlcText s = {0};
  hlp_print_shape(&s, b->v->shape, false);
  if (s.oom) { hlc_text_free(&s); return hli_api_fail(ctx, HLO_NOMEM, "out of memory"); }
  *text = s.p;
  return HLO_OK;
}

static const char *const too_large_msg =
    "the value has no elements but more than a million empty rows: too large to print as "
    "literal text (write it to .npy or .npz)";

HloStatus hlo_buffer_encode(HloCtx *ctx, const HloBuffer *b, const char *format, char **data,
                            size_t *len) {
  if (!ctx || !b || !format || !data || !len) return HLO_INVALID_ARGUMENT;
  *data = NULL;
  *len = 0;
  HlcText out = {0};
  int rc;
  if (strcmp(format, "npy") == 0) {
    if (b->v->dtype == HLO_TUPLE)
      return hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "a tuple result cannot be written to .npy: use .npz");
    rc = hli_npy_write(b->v, &out, &ctx->diags);
  } else if (strcmp(format, "npz") == 0) {
    int32_t n;
    HliValue **leaves = hli_value_leaves(b->v, &n);
    if (!leaves) return hli_api_fail(ctx, HLO_NOMEM, "out of memory");
    rc = hli_npz_write(leaves, n, &out, &ctx->diags);
    free(leaves);
  } else if (strcmp(format, "txt") == 0) {
    if (hli_literal_too_large(b->v))
      return hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "%s", too_large_msg);
    rc = hli_literal_write(b->v, &out);
    hlc_text_put(&out, "\n", 1);
    if (out.oom) rc = -1;
  } else {
    return hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "unknown output format '%s'", format);
  }
  if (rc != 0) {
    hlc_text_free(&out);
    if (ctx->diags.nerrors == 0) hli_api_fail(ctx, HLO_NOMEM, "out of memory");
    return HLO_IO_ERROR;
  }
  if (!out.p) hlc_text_put(&out, "", 0);
  *data = out.p;
  *len = out.n;
  return HLO_OK;
}

HloStatus hlo_buffer_to_literal(HloCtx *ctx, const HloBuffer *b, char **text, size_t *len) {
  if (!ctx || !b || !text) return HLO_INVALID_ARGUMENT;
  HlcText out = {0};
  if (hli_literal_too_large(b->v)) return hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "%s", too_large_msg);
  if (hli_literal_write(b->v, &out) != 0 || !out.p) {
    hlc_text_free(&out);
    return hli_api_fail(ctx, HLO_NOMEM, "out of memory");
  }
  *text = out.p;
  if (len) *len = out.n;
  return HLO_OK;
}

static bool ends_with(const char *s, const char *suf) {
  size_t n = strlen(s), k = strlen(suf);
  return n >= k && strcmp(s + n - k, suf) == 0;
}

HloStatus hlo_buffers_save_npz(HloCtx *ctx, const char *const *names, HloBuffer *const *bufs,
                               int n, const char *path) {
  if (!ctx || !names || (n > 0 && !bufs) || !path || n < 0) return HLO_INVALID_ARGUMENT;
  HliValue **v = malloc((size_t)(n ? n : 1) * sizeof *v);
  if (!v) return hli_api_fail(ctx, HLO_NOMEM, "out of memory");
  for (int i = 0; i < n; i++) {
    v[i] = bufs[i]->v;
    if (v[i]->dtype == HLO_TUPLE || strlen(names[i]) > 27) {
      free(v);
      return hli_api_fail(ctx, HLO_INVALID_ARGUMENT, "%s: member %s must be an array with a name of at "
                  "most 27 characters", path, names[i]);
    }
  }
  HlcText b = {0};
  int rc = hli_npz_write_named(v, names, n, &b, &ctx->diags);
  free(v);
  HloStatus st = rc == 0 ? hli_write_file(ctx, path, b.p, b.n) : HLO_IO_ERROR;
  hlc_text_free(&b);
  return st;
}

HloStatus hlo_load_like_member(HloCtx *ctx, const HloBuffer *like, const char *path,
                               const char *member, HloBuffer **out) {
  if (!ctx || !like || !path || !member || !out) return HLO_INVALID_ARGUMENT;
  char what[1024];
  snprintf(what, sizeof what, "%s[%s]", path, member);
  return hli_load_shaped(ctx, like->v->shape, path, member, what, out);
}

HloStatus hlo_buffer_save(HloCtx *ctx, const HloBuffer *b, const char *path) {
  if (!ctx || !b || !path) return HLO_INVALID_ARGUMENT;
  const char *fmt = ends_with(path, ".npy") ? "npy" : ends_with(path, ".npz") ? "npz" : "txt";
  char *data;
  size_t len;
  HloStatus st = hlo_buffer_encode(ctx, b, fmt, &data, &len);
  if (st != HLO_OK) return st;
  st = hli_write_file(ctx, path, data, len);
  free(data);
  return st;
}
