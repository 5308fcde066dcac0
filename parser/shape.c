/* shape.c: shape helpers of the parser: default layouts, copies, and shapes
 * written inside attribute values (item trees: SHAPE items and PAREN groups
 * of them for tuples). Shape comparison lives in ir.c.
 */
#include "parser/syntax.h"
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
