/* members.c: the custom call's own members as one nested dictionary
 * attribute, "hlorun.instruction", for handlers that opt in
 * (hlf_set_members_opt_in). Handlers that bind attributes strictly never see
 * it unless their binding opts in. Layout (doc/custom-calls.md):
 *   name, target: string; api_version: i32; has_side_effect: i1 (pred)
 *   feature_group_count, batch_group_count: i64
 *   dim_labels: string (when written)
 *   window: {size, stride, pad_low, pad_high, lhs_dilation, rhs_dilation:
 *            array<i64>, window_reversal: array<i8>} (when written)
 *   operands, results: {"0": {dtype: string, dims: array<i64>,
 *            layout: array<i64> (minor to major)}, "1": ...}, one entry per
 *            leaf buffer, in the order of the frame's args / rets
 *   literal: {dtype: string, dims: array<i64>, bytes: string} (when written)
 *   operand_precision, schedule, padding_type, output_to_operand_aliasing:
 *            string, the attribute's text as written (when written)
 *   backend_config: string, verbatim (only for HLORUN_FFI_TRAIT_JSON_CONFIG
 *            handlers, whose backend_config is not decoded as attributes)
 * Not here: parsing backend_config (attrs.c). */
#include "ffi/internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static HlfAttr named(const char *name) {
  HlfAttr e;
  memset(&e, 0, sizeof e);
  e.name = name;
  e.name_len = strlen(name);
  return e;
}

static int add(HlcArena *a, HlfAttr *d, HlfAttr e) { return hlf_attrs_insert(a, d, &e); }

static int add_string(HlcArena *a, HlfAttr *d, const char *name, const char *s, size_t n) {
  HlfAttr e = named(name);
  e.type = XLA_FFI_AttrType_STRING;
  if (!s) n = 0;
  char *c = hlc_arena_alloc(a, n + 1);   /* bytes may include NULs */
  if (!c) return -1;
  if (n) memcpy(c, s, n);
  e.str = c;
  e.count = n;
  return add(a, d, e);
}

static int add_scalar(HlcArena *a, HlfAttr *d, const char *name, XLA_FFI_DataType t,
                      const void *v, size_t size) {
  HlfAttr e = named(name);
  e.type = XLA_FFI_AttrType_SCALAR;
  e.dtype = t;
  e.data = hlc_arena_memdup(a, v, size);
  return e.data ? add(a, d, e) : -1;
}

static int add_i64s(HlcArena *a, HlfAttr *d, const char *name, const int64_t *v, size_t n) {
  HlfAttr e = named(name);
  e.type = XLA_FFI_AttrType_ARRAY;
  e.dtype = XLA_FFI_DataType_S64;
  e.count = n;
  e.data = hlc_arena_alloc(a, n * sizeof(int64_t) + 1);
  if (!e.data) return -1;
  if (n) memcpy(e.data, v, n * sizeof(int64_t));
  return add(a, d, e);
}

static HlfAttr dict(const char *name) {
  HlfAttr e = named(name);
  e.type = XLA_FFI_AttrType_DICTIONARY;
  return e;
}

static int add_window(HlcArena *a, HlfAttr *d, const HloWindow *w) {
  HlfAttr e = dict("window");
  int n = w->rank;
  int64_t *v = hlc_arena_alloc(a, (size_t)(6 * n + 1) * sizeof *v);
  int8_t *rev = hlc_arena_alloc(a, (size_t)n + 1);
  if (!v || !rev) return -1;
  for (int i = 0; i < n; i++) {
    v[i] = w->dims[i].size;
    v[n + i] = w->dims[i].stride;
    v[2 * n + i] = w->dims[i].pad_lo;
    v[3 * n + i] = w->dims[i].pad_hi;
    v[4 * n + i] = w->dims[i].lhs_dilate;
    v[5 * n + i] = w->dims[i].rhs_dilate;
    rev[i] = w->dims[i].reversal;
  }
  static const char *const names[] = {"size", "stride", "pad_low", "pad_high", "lhs_dilation",
                                      "rhs_dilation"};
  for (int k = 0; k < 6; k++)
    if (add_i64s(a, &e, names[k], v + k * n, (size_t)n)) return -1;
  HlfAttr r = named("window_reversal");
  r.type = XLA_FFI_AttrType_ARRAY;
  r.dtype = XLA_FFI_DataType_S8;
  r.count = (size_t)n;
  r.data = rev;
  if (add(a, &e, r)) return -1;
  return add(a, d, e);
}

/* One leaf's description. */
static int add_leaf(HlcArena *a, HlfAttr *d, int idx, const HloShape *s, const HloShape *layout) {
  char key[16];
  snprintf(key, sizeof key, "%d", idx);
  HlfAttr e = dict(hlc_arena_strndup(a, key, strlen(key)));
  if (!e.name) return -1;
  const char *dt = hlc_dtype_name(s->dtype);
  if (add_string(a, &e, "dtype", dt, strlen(dt))) return -1;
  int32_t rank = s->dtype == HLO_TOKEN ? 0 : s->rank;
  if (add_i64s(a, &e, "dims", s->dims, (size_t)rank)) return -1;
  const HloShape *ls = layout && layout->minor_to_major ? layout : s;
  int64_t *m2m = hlc_arena_alloc(a, (size_t)rank * sizeof *m2m + 1);
  if (!m2m) return -1;
  for (int32_t i = 0; i < rank; i++)
    m2m[i] = ls->minor_to_major && ls->rank == rank ? ls->minor_to_major[i] : rank - 1 - i;
  if (add_i64s(a, &e, "layout", m2m, (size_t)rank)) return -1;
  return add(a, d, e);
}

static int add_leaves(HlcArena *a, HlfAttr *d, int *idx, const HloShape *s, const HloShape *layout) {
  if (s->dtype == HLO_TUPLE) {
    for (int32_t i = 0; i < s->ntuple; i++)
      if (add_leaves(a, d, idx, &s->tuple[i],
                     layout && layout->dtype == HLO_TUPLE && i < layout->ntuple ? &layout->tuple[i]
                                                                                 : NULL))
        return -1;
    return 0;
  }
  return add_leaf(a, d, (*idx)++, s, layout);
}

/* Text of a generic attribute value as written. */
static void val_text(HlcText *t, const HloVal *v) {
  switch (v->kind) {
  case HLO_VAL_TOKEN: case HLO_VAL_RAW: hlc_text_put(t, v->text, v->len); return;
  case HLO_VAL_STRING:
    hlc_text_put(t, "\"", 1);
    hlc_text_put(t, v->text, v->len);
    hlc_text_put(t, "\"", 1);
    return;
  case HLO_VAL_ATTR:
    hlc_text_printf(t, "%.*s=", (int)v->len, v->text ? v->text : "");
    if (v->nitems) val_text(t, v->items[0]);
    return;
  default: break;
  }
  const char *open = v->kind == HLO_VAL_BRACE ? "{" : v->kind == HLO_VAL_BRACKET ? "[" : "(";
  const char *close = v->kind == HLO_VAL_BRACE ? "}" : v->kind == HLO_VAL_BRACKET ? "]" : ")";
  hlc_text_put(t, open, 1);
  for (int32_t i = 0; i < v->nitems; i++) {
    if (i) hlc_text_put(t, v->items[i]->sep == 2 ? "," : " ", 1);
    val_text(t, v->items[i]);
  }
  hlc_text_put(t, close, 1);
}

static int add_written(HlcArena *a, HlfAttr *d, const HloInstr *ins, const char *name) {
  for (int32_t i = 0; i < ins->nattrs; i++) {
    const HloAttr *at = &ins->attrs[i];
    if (!at->name || strcmp(at->name, name) != 0) continue;
    HlcText t = {0};
    for (int32_t k = 0; k < at->nvalues; k++) {
      if (k) hlc_text_put(&t, " ", 1);
      val_text(&t, at->values[k]);
    }
    char *s = hlc_text_take(&t);
    if (!s) return -1;
    int rc = add_string(a, d, name, s, strlen(s));
    free(s);
    return rc;
  }
  return 0;
}

int hlf_members_add_config(HlcArena *a, HlfAttr *members, const HloInstr *ins) {
  const char *c = ins->backend_config ? ins->backend_config : "";
  return add_string(a, members, "backend_config", c, ins->backend_config ? ins->backend_config_len : 0);
}

int hlf_members_attr(HlcArena *a, const HloInstr *ins, HlfAttr *out) {
  HlfAttr d = dict(HLORUN_FFI_INSTRUCTION_ATTR);
  const char *nm = ins->name ? ins->name : "";
  const char *tg = ins->custom_call_target ? ins->custom_call_target : "";
  int32_t api = ins->api_version;
  uint8_t se = ins->has_side_effect;
  int64_t fg = ins->feature_group_count ? ins->feature_group_count : 1;
  int64_t bg = ins->batch_group_count ? ins->batch_group_count : 1;
  if (add_string(a, &d, "name", nm, strlen(nm)) || add_string(a, &d, "target", tg, strlen(tg)) ||
      add_scalar(a, &d, "api_version", XLA_FFI_DataType_S32, &api, 4) ||
      add_scalar(a, &d, "has_side_effect", XLA_FFI_DataType_PRED, &se, 1) ||
      add_scalar(a, &d, "feature_group_count", XLA_FFI_DataType_S64, &fg, 8) ||
      add_scalar(a, &d, "batch_group_count", XLA_FFI_DataType_S64, &bg, 8))
    return -1;
  if (ins->dim_labels_text &&
      add_string(a, &d, "dim_labels", ins->dim_labels_text, strlen(ins->dim_labels_text)))
    return -1;
  if (ins->window.present && add_window(a, &d, &ins->window)) return -1;
  HlfAttr ops = dict("operands"), res = dict("results");
  int idx = 0;
  for (int32_t i = 0; i < ins->nops; i++)
    if (add_leaves(a, &ops, &idx, &ins->ops[i]->shape,
                   i < ins->noperand_layouts ? &ins->operand_layouts[i] : NULL))
      return -1;
  idx = 0;
  if (add_leaves(a, &res, &idx, &ins->shape, NULL) || add(a, &d, ops) || add(a, &d, res)) return -1;
  if (ins->literal && ins->literal->shape && ins->literal->shape->dtype != HLO_TUPLE) {
    HlfAttr lit = dict("literal");
    const HloShape *ls = ins->literal->shape;
    const char *dt = hlc_dtype_name(ls->dtype);
    if (add_string(a, &lit, "dtype", dt, strlen(dt)) ||
        add_i64s(a, &lit, "dims", ls->dims, (size_t)ls->rank) ||
        add_string(a, &lit, "bytes", ins->literal->data, ins->literal->nbytes) || add(a, &d, lit))
      return -1;
  }
  static const char *const written[] = {"operand_precision", "schedule", "padding_type",
                                        "output_to_operand_aliasing"};
  for (size_t i = 0; i < sizeof written / sizeof *written; i++)
    if (add_written(a, &d, ins, written[i])) return -1;
  *out = d;
  return 0;
}
