/* widen.c: a module with its floating-point values carried in f64 (hlorun
 * --reference-precision f64; doc/divergence.md, "Carried in f64").
 *
 * A copy of the module (printed and parsed again, so the original stays
 * untouched) where every float type becomes f64 and every complex type
 * c128: instruction shapes, parameters of called computations, constants
 * (their values converted exactly). What keeps its own type, with converts
 * around it (operands rounded to their original type first, the result
 * carried up to f64 after), is what depends on the bits or the type:
 * ENTRY parameters (the inputs are given in the module's types), bitcast,
 * bitcast-convert, reduce-precision, stochastic-convert and custom-call.
 * A convert to a narrower float keeps its result type too, but takes the
 * unrounded operand: the module's own explicit roundings are the only ones
 * the reference makes. The instructions added are named NAME~TYPE (no HLO
 * name holds '~', so none is taken for a counterpart of the module's). */
#include "interp/diverge.h"
#include "common/numeric.h"
#include "ir/print.h"
#include "parser/parser.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static HloDtype wide_of(HloDtype t) {
  if (hlc_dtype_is_float(t)) return HLO_F64;
  if (hlc_dtype_is_complex(t)) return HLO_C128;
  return t;
}

/* Does widening change the shape? */
static bool narrow(const HloShape *s) {
  if (s->dtype != HLO_TUPLE) return wide_of(s->dtype) != s->dtype;
  for (int32_t i = 0; i < s->ntuple; i++)
    if (narrow(&s->tuple[i])) return true;
  return false;
}

bool hli_shape_widens(const HloShape *low, const HloShape *wide) {
  if (low->dtype == HLO_TUPLE || wide->dtype == HLO_TUPLE) {
    if (low->dtype != wide->dtype || low->ntuple != wide->ntuple) return false;
    for (int32_t i = 0; i < low->ntuple; i++)
      if (!hli_shape_widens(&low->tuple[i], &wide->tuple[i])) return false;
    return true;
  }
  /* What keeps its own type pairs with the same type. */
  if ((wide->dtype != low->dtype && wide->dtype != wide_of(low->dtype)) || low->rank != wide->rank)
    return false;
  for (int32_t i = 0; i < low->rank; i++)
    if (low->dims[i] != wide->dims[i]) return false;
  return true;
}

typedef struct W {
  HloModule *m;
  HloInstr **out;            /* malloc'd: the computation's new instruction list */
  int32_t n, cap;
  bool nomem;
} W;

/* s in f64/c128 (tuple arrays copied; dims shared, never changed). */
static HloShape widened(W *w, const HloShape *s) {
  HloShape r = *s;
  if (s->dtype == HLO_TUPLE) {
    r.tuple = s->ntuple ? hlc_arena_alloc(&w->m->arena, (size_t)s->ntuple * sizeof *r.tuple) : NULL;
    if (s->ntuple && !r.tuple) { w->nomem = true; return *s; }
    for (int32_t i = 0; i < s->ntuple; i++) r.tuple[i] = widened(w, &s->tuple[i]);
  } else if (wide_of(s->dtype) != s->dtype) {
    r.dtype = wide_of(s->dtype);
    r.layout_tail = NULL;    /* tiles and element sizes were for the narrow type */
  }
  return r;
}

static double load_real(HloDtype t, const void *p) {
  if (t == HLO_F32) return *(const float *)p;
  if (t == HLO_F64) return *(const double *)p;
  uint64_t bits = hlc_dtype_size(t) == 2 ? *(const uint16_t *)p : *(const uint8_t *)p;
  return hlc_float_bits_to_f64(t, bits);
}

/* A constant's values in the widened type ws (exact: f64 holds every
 * narrower float). */
static void widen_literal(W *w, HloLiteral *l, const HloShape *from, const HloShape *ws) {
  if (from->dtype == HLO_TUPLE) {
    for (int32_t i = 0; i < l->ntuple && i < ws->ntuple; i++)
      widen_literal(w, &l->tuple[i], &from->tuple[i], &ws->tuple[i]);
  } else if (l->data && !l->elided && narrow(from)) {
    HloDtype t = from->dtype;
    bool cx = hlc_dtype_is_complex(t);
    HloDtype part = t == HLO_C64 ? HLO_F32 : t;
    int64_t n = hlp_shape_elements(from) * (cx ? 2 : 1);
    size_t es = hlc_dtype_size(part);
    double *d = hlc_arena_alloc(&w->m->arena, (size_t)(n ? n : 1) * sizeof *d);
    if (!d) { w->nomem = true; return; }
    for (int64_t i = 0; i < n; i++) d[i] = load_real(part, (const char *)l->data + (size_t)i * es);
    l->data = d;
    l->nbytes = (size_t)n * sizeof *d;
  }
  l->shape = ws;
}

static void push(W *w, HloInstr *x) {
  if (w->n == w->cap) {
    int32_t cap = w->cap ? 2 * w->cap : 64;
    HloInstr **o = realloc(w->out, (size_t)cap * sizeof *o);
    if (!o) { w->nomem = true; return; }
    w->out = o;
    w->cap = cap;
  }
  w->out[w->n++] = x;
}

/* A new instruction NAME~TAG of like's computation and line. */
static HloInstr *added(W *w, const HloInstr *like, HloOpcode op, const char *tag,
                       const HloShape *shape, int32_t nops, HloInstr *const *ops) {
  HloInstr *x = hlc_arena_alloc(&w->m->arena, sizeof *x);
  HloInstr **o = hlc_arena_alloc(&w->m->arena, (size_t)(nops ? nops : 1) * sizeof *o);
  size_t len = strlen(like->name) + strlen(tag) + 2;
  char *name = hlc_arena_alloc(&w->m->arena, len);
  if (!x || !o || !name) { w->nomem = true; return (HloInstr *)like; }
  snprintf(name, len, "%s~%s", like->name, tag);
  x->op = op;
  x->name = name;
  x->off = like->off;
  x->line = like->line;
  x->parent = like->parent;
  x->shape = *shape;
  x->nops = nops;
  memcpy(o, ops, (size_t)nops * sizeof *o);
  x->ops = o;
  x->feature_group_count = x->batch_group_count = 1;
  push(w, x);
  return x;
}

static bool same_types(const HloShape *a, const HloShape *b) {
  if (a->dtype != HLO_TUPLE) return a->dtype == b->dtype;
  for (int32_t i = 0; i < a->ntuple; i++)
    if (!same_types(&a->tuple[i], &b->tuple[i])) return false;
  return true;
}

/* x (of shape from) as shape to (the same structure, other float types):
 * converts of the leaves that change, tuples taken apart and rebuilt. */
static HloInstr *convert_to(W *w, HloInstr *x, const HloShape *from, const HloShape *to) {
  if (w->nomem) return x;
  if (same_types(from, to)) return x;
  if (from->dtype != HLO_TUPLE)
    return added(w, x, HLO_OP_CONVERT, hlc_dtype_name(to->dtype), to, 1, &x);
  HloInstr **el = calloc((size_t)(from->ntuple ? from->ntuple : 1), sizeof *el);
  if (!el) { w->nomem = true; return x; }
  for (int32_t i = 0; i < from->ntuple; i++) {
    char tag[32];
    snprintf(tag, sizeof tag, "gte%d", (int)i);
    HloInstr *g = added(w, x, HLO_OP_GET_TUPLE_ELEMENT, tag, &from->tuple[i], 1, &x);
    g->tuple_index = i;
    el[i] = convert_to(w, g, &from->tuple[i], &to->tuple[i]);
  }
  HloInstr *t = added(w, x, HLO_OP_TUPLE, narrow(to) ? "tuple" : "f64", to, from->ntuple, el);
  free(el);
  return t;
}

/* Instructions whose result keeps the module's type (converted to f64
 * after); *narrow_ops: their operands are converted back to their own
 * types first. */
static bool keeps_type(const HloInstr *x, bool *narrow_ops) {
  *narrow_ops = true;
  switch (x->op) {
  case HLO_OP_PARAMETER: return x->parent->is_entry;
  case HLO_OP_BITCAST: case HLO_OP_BITCAST_CONVERT: case HLO_OP_REDUCE_PRECISION:
  case HLO_OP_STOCHASTIC_CONVERT: case HLO_OP_CUSTOM_CALL: return true;
  case HLO_OP_CONVERT:
    *narrow_ops = false;     /* one rounding, from the unrounded value */
    return narrow(&x->shape);
  default: return false;
  }
}

static void widen_computation(W *w, HloComputation *c) {
  int32_t n = c->ninstrs;
  HloInstr **prod = calloc((size_t)(n ? n : 1), sizeof *prod);   /* what users take */
  HloShape *orig = malloc((size_t)(n ? n : 1) * sizeof *orig);
  if (!prod || !orig) { free(prod); free(orig); w->nomem = true; return; }
  w->n = 0;
  for (int32_t i = 0; i < n && !w->nomem; i++) {
    HloInstr *x = c->instrs[i];
    orig[i] = x->shape;
    bool narrow_ops, keep = keeps_type(x, &narrow_ops);
    for (int32_t j = 0; j < x->nops; j++) {
      int32_t k = x->ops[j]->index;
      HloInstr *p = prod[k];
      x->ops[j] = keep && narrow_ops ? convert_to(w, p, &p->shape, &orig[k]) : p;
    }
    push(w, x);
    if (keep) {
      HloShape ws = widened(w, &orig[i]);
      prod[i] = narrow(&orig[i]) ? convert_to(w, x, &orig[i], &ws) : x;
    } else {
      x->shape = widened(w, &orig[i]);
      if (x->literal) widen_literal(w, x->literal, &orig[i], &x->shape);
      prod[i] = x;
    }
  }
  if (!w->nomem && c->root) {
    c->root->is_root = false;
    c->root = prod[c->root->index];
    c->root->is_root = true;
  }
  HloInstr **list = w->nomem ? NULL : hlc_arena_memdup(&w->m->arena, w->out,
                                                       (size_t)(w->n ? w->n : 1) * sizeof *list);
  if (list) {
    for (int32_t i = 0; i < w->n; i++) list[i]->index = i;
    c->instrs = list;
    c->ninstrs = w->n;
  } else {
    w->nomem = true;
  }
  free(prod);
  free(orig);
}

HloModule *hli_widen_module(const HloModule *m, HlcDiags *diags) {
  size_t len = 0;
  char *text = hlp_print(m, &len);
  if (!text) return NULL;
  HloModule *c = hlp_parse(text, len, m->filename ? m->filename : "<input>", diags);
  free(text);
  if (!c) return NULL;
  /* Lines as in the module's own file (the printed text has its own). */
  for (int32_t k = 0; k < c->ncomps && k < m->ncomps; k++) {
    HloComputation *a = c->comps[k];
    const HloComputation *b = m->comps[k];
    for (int32_t i = 0; i < a->ninstrs && i < b->ninstrs; i++)
      if (strcmp(a->instrs[i]->name, b->instrs[i]->name) == 0) a->instrs[i]->line = b->instrs[i]->line;
  }
  W w = {.m = c};
  for (int32_t k = 0; k < c->ncomps && !w.nomem; k++) widen_computation(&w, c->comps[k]);
  if (!w.nomem && c->entry_result_layout) {
    HloShape *r = hlc_arena_alloc(&c->arena, sizeof *r);
    if (r) *r = widened(&w, c->entry_result_layout);
    c->entry_result_layout = r;
  }
  free(w.out);
  if (w.nomem || !c->entry_result_layout != !m->entry_result_layout) {
    hlp_module_free(c);
    return NULL;
  }
  return c;
}
