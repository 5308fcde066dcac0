/* shape.c: shape helpers of the parser: the shapes the grammar builds
 * (arrays, tuples, layouts), default layouts, copies, and shapes written
 * inside attribute values (item trees: SHAPE items and PAREN groups of them
 * for tuples). Shape comparison lives in ir/.
 */
#include "parser/syntax.h"
#include "hlo.h"
#include <stdlib.h>
#include <string.h>

void hlp_fill_layout(HlpParser *P, HloShape *s) {
  if (s->dtype == HLO_TUPLE) {
    for (int32_t i = 0; i < s->ntuple; i++) hlp_fill_layout(P, &s->tuple[i]);
    return;
  }
  if (!hlc_dtype_is_array(s->dtype) || s->minor_to_major) return;
  s->minor_to_major = hlp_alloc(P, (size_t)(s->rank ? s->rank : 1) * sizeof(int64_t));
  for (int32_t i = 0; i < s->rank; i++) s->minor_to_major[i] = s->rank - 1 - i;
  s->layout_written = false;
}

HloShape *hlp_shape_copy(HlpParser *P, const HloShape *s) {
  HloShape *c = hlp_alloc(P, sizeof *c);
  *c = *s;
  return c;
}

HloShape *hlp_shape_make(HlpParser *P, HloDtype t, int32_t rank, const int64_t *dims) {
  HloShape *s = hlp_alloc(P, sizeof *s);
  s->dtype = t;
  s->rank = rank;
  s->dims = hlp_alloc(P, (size_t)(rank ? rank : 1) * sizeof *s->dims);
  if (rank) memcpy(s->dims, dims, (size_t)rank * sizeof *dims);
  hlp_fill_layout(P, s);
  return s;
}

static HloShape *from_item(HlpParser *P, HloVal *v, int depth) {
  if (v->kind == HLO_VAL_SHAPE) return v->shape;
  if (v->kind != HLO_VAL_PAREN || depth > HLX_MAX_DEPTH) {
    hlp_error(P, v->off, "expected a shape");
    return NULL;
  }
  HloShape *s = hlp_alloc(P, sizeof *s);
  s->dtype = HLO_TUPLE;
  s->ntuple = v->nitems;
  s->tuple = hlp_alloc(P, (size_t)(v->nitems ? v->nitems : 1) * sizeof *s->tuple);
  for (int32_t i = 0; i < v->nitems; i++) {
    if (i && v->items[i]->sep != 2) {
      hlp_error(P, v->items[i]->off, "expected ',' between tuple elements");
      return NULL;
    }
    HloShape *e = from_item(P, v->items[i], depth + 1);
    if (!e) return NULL;
    s->tuple[i] = *e;
  }
  return s;
}

HloShape *hlp_shape_from_items(HlpParser *P, HloVal **items, int32_t n, int32_t *i) {
  if (*i >= n) {
    hlp_error(P, n ? items[n - 1]->off : 0, "expected a shape");
    return NULL;
  }
  HloShape *s = from_item(P, items[*i], 0);
  if (s) (*i)++;
  return s;
}

/* ---- Shapes built by the grammar -------------------------------------------- */

HloShape *hlp_shape_array(HlpParser *P, HlxToken type, HlpList *dims, HloShape *layout) {
  HloShape *s = hlp_alloc(P, sizeof *s);
  s->dtype = hlc_dtype_from_name(P->src + type.off, type.len);
  s->rank = dims->n;
  s->dims = hlp_alloc(P, (size_t)(dims->n ? dims->n : 1) * sizeof *s->dims);
  int i = 0;
  for (HlpNode *n = dims->head; n; n = n->next, i++) {
    int64_t *d = n->p;
    s->dims[i] = d[0];
    if (d[1] != HLO_DIM_STATIC) {
      if (!s->dynamic) s->dynamic = hlp_alloc(P, (size_t)dims->n);
      s->dynamic[i] = (uint8_t)d[1];
    }
    if (d[1] != HLO_DIM_UNBOUNDED && d[0] < 0)
      hlp_error(P, (size_t)d[2], "negative dimension size");
  }
  /* Element counts must fit comfortably in int64 for every consumer. */
  int64_t count = 1;
  for (i = 0; i < s->rank; i++) {
    int64_t d = s->dims[i] < 0 ? 0 : s->dims[i];
    if (d && count > ((int64_t)1 << 62) / d) {
      hlp_error(P, type.off, "shape has too many elements");
      break;
    }
    count *= d;
  }
  if (!hlc_dtype_is_array(s->dtype)) {
    if (s->rank != 0) hlp_error(P, type.off, "%s shapes take no dimensions", hlc_dtype_name(s->dtype));
    if (layout) hlp_error(P, type.off, "%s shapes take no layout", hlc_dtype_name(s->dtype));
    return s;
  }
  if (layout) {
    if (layout->rank != s->rank)
      hlp_error(P, type.off, "layout has %d minor-to-major entries for a rank-%d shape",
                (int)layout->rank, (int)s->rank);
    else {
      uint8_t seen[HLX_MAX_DEPTH + 1] = {0};
      for (i = 0; i < s->rank; i++) {
        int64_t d = layout->minor_to_major[i];
        if (d < 0 || d >= s->rank || s->rank > HLX_MAX_DEPTH || seen[d]++) {
          hlp_error(P, type.off, "layout {...} is not a permutation of the dimensions");
          break;
        }
      }
    }
    s->minor_to_major = layout->minor_to_major;
    s->layout_tail = layout->layout_tail;
    s->layout_written = true;
  } else {
    hlp_fill_layout(P, s);
  }
  return s;
}

HloShape *hlp_shape_tuple(HlpParser *P, HlpList *elems) {
  HloShape *s = hlp_alloc(P, sizeof *s);
  s->dtype = HLO_TUPLE;
  s->ntuple = elems->n;
  s->tuple = hlp_alloc(P, (size_t)(elems->n ? elems->n : 1) * sizeof *s->tuple);
  int i = 0;
  for (HlpNode *n = elems->head; n; n = n->next) {
    HloShape *e = n->p;
    if (e) s->tuple[i] = *e;
    i++;
  }
  return s;
}

/* Layout fields after ':' (spec 2.1), each optional, in this order:
 * D(..) T(..)(..).. L(n) #(type) *(type) E(n) S(n) SC(..).. P(shape) M(n). */
/* D(...): dim level types D C S H, each optionally followed by + and ~.
 * Sets *sparse when some level is not D (dense). */
static bool dim_levels_ok(const HloVal *g, bool *sparse) {
  int32_t i = 0;
  while (i < g->nitems) {
    const HloVal *t = g->items[i];
    if (t->kind != HLO_VAL_TOKEN || t->tok != TK_IDENT || t->len != 1 || !strchr("DCSH", t->text[0]) ||
        (i && t->sep != 2))
      return false;
    *sparse |= t->text[0] != 'D';
    i++;
    if (i < g->nitems && g->items[i]->kind == HLO_VAL_TOKEN && g->items[i]->tok == TK_PLUS &&
        g->items[i]->sep == 0)
      i++;
    if (i < g->nitems && g->items[i]->kind == HLO_VAL_TOKEN && g->items[i]->tok == TK_TILDE &&
        g->items[i]->sep == 0)
      i++;
  }
  return g->nitems > 0;
}

static bool layout_tail_ok(HlpParser *P, HloVal **v, int32_t n) {
  static const char *const order[] = {"D", "T", "L", "#", "*", "E", "S", "SC", "P", "M"};
  int last = -1;
  bool sparse = false;
  for (int32_t i = 0; i < n;) {
    HloVal *f = v[i];
    const char *name = f->kind == HLO_VAL_TOKEN ? f->text : "";
    int k = -1;
    for (int j = 0; j < 10; j++)
      if (strcmp(name, order[j]) == 0) k = j;
    if (k < 0 || (i && f->sep == 2)) {
      hlp_error(P, f->off, "unknown layout field");
      return false;
    }
    if (k <= last) {
      hlp_error(P, f->off, "layout field %s out of order (expected D T L # * E S SC P M)", name);
      return false;
    }
    last = k;
    i++;
    int groups = 0;
    while (i < n && v[i]->kind == HLO_VAL_PAREN && v[i]->sep == 0) {
      HloVal *g = v[i];
      bool ok = true;
      if (k == 2 || k == 5 || k == 6 || k == 9)   /* L E S M: one integer */
        ok = g->nitems == 1 && g->items[0]->kind == HLO_VAL_TOKEN && g->items[0]->tok == TK_INT;
      else if (k == 3 || k == 4)                  /* # *: an unsigned type */
        ok = g->nitems == 1 && g->items[0]->kind == HLO_VAL_TOKEN && g->items[0]->text[0] == 'u' &&
             hlc_dtype_from_name(g->items[0]->text, g->items[0]->len) != HLO_DTYPE_INVALID;
      else if (k == 8)                            /* P: a shape */
        ok = g->nitems == 1 && g->items[0]->kind == HLO_VAL_SHAPE;
      else if (k == 0)
        ok = dim_levels_ok(g, &sparse);
      if (ok && k == 8 && !sparse) {
        hlp_error(P, f->off, "layout has a physical shape P(...), but is not for a sparse array");
        return false;
      }
      if (!ok) {
        hlp_error(P, g->off, "bad value for layout field %s", name);
        return false;
      }
      groups++;
      i++;
      if (k != 1 && k != 7) break;             /* only T and SC repeat */
    }
    if (!groups) {
      hlp_error(P, f->off, "layout field %s needs a (...) value", name);
      return false;
    }
  }
  return true;
}

HloShape *hlp_shape_layout(HlpParser *P, HlxToken open, HlpList *m2m, HlpList *tail) {
  HloShape *s = hlp_alloc(P, sizeof *s);
  (void)open;
  s->rank = m2m->n;
  s->minor_to_major = hlp_alloc(P, (size_t)(m2m->n ? m2m->n : 1) * sizeof(int64_t));
  int i = 0;
  for (HlpNode *n = m2m->head; n; n = n->next) {
    HloVal *v = n->p;
    s->minor_to_major[i++] = strtoll(v->text, NULL, 10);
  }
  if (tail && tail->n) {
    if (!layout_tail_ok(P, (HloVal **)hlp_list_array(P, tail), tail->n)) return s;
    HlcText b = {0};
    hlp_print_vals(&b, (HloVal **)hlp_list_array(P, tail), tail->n, false);
    /* Layout fields are written without blanks. */
    size_t o = 0;
    for (size_t k = 0; k < b.n; k++)
      if (b.p[k] != ' ') b.p[o++] = b.p[k];
    s->layout_tail = hlp_strndup(P, b.p ? b.p : "", o);
    free(b.p);
    if (b.oom) longjmp(P->oom, 1);
  }
  return s;
}

/* ---- Driver ----------------------------------------------------------------- */
