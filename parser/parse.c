/* parse.c: the helpers every file of the parser calls (errors and warnings
 * with their lines, the arena, lists) and those the grammar actions call to
 * build items. The shapes the grammar builds are shape.c's; hlp_parse, which
 * runs it all, is text.c's. Does not interpret attributes or operands.
 */
#include "parser/parser.h"
#include "parser/syntax.h"
#include "hlo.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hlp_error(HlpParser *P, size_t off, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  P->stop = true;
  if (P->nerr++) return;   /* first error only: later ones are usually fallout */
  hlc_diag_at(P->diags, HLC_ERROR, P->file, P->src, P->len, off, "%s", buf);
}

void hlp_warning(HlpParser *P, size_t off, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  hlc_diag_at(P->diags, HLC_WARNING, P->file, P->src, P->len, off, "%s", buf);
}

int32_t hlp_line_of(HlpParser *P, size_t off) {
  if (!P->line_starts) {
    size_t n = 1;
    for (size_t i = 0; i < P->len; i++) n += P->src[i] == '\n';
    P->line_starts = malloc(n * sizeof *P->line_starts);
    if (!P->line_starts) longjmp(P->oom, 1);
    P->line_starts[0] = 0;
    P->nlines = 1;
    for (size_t i = 0; i < P->len; i++)
      if (P->src[i] == '\n') P->line_starts[P->nlines++] = (uint32_t)(i + 1);
  }
  size_t lo = 0, hi = P->nlines;   /* last start <= off */
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if (P->line_starts[mid] <= off) lo = mid;
    else hi = mid;
  }
  return (int32_t)(lo + 1);
}

bool hlp_first_warning(HlpParser *P, const char *key) {
  for (HlpNode *n = P->warned.head; n; n = n->next)
    if (strcmp(n->p, key) == 0) return false;
  hlp_list_push(P, &P->warned, hlp_strndup(P, key, strlen(key)));
  return true;
}

void *hlp_alloc(HlpParser *P, size_t n) {
  void *p = hlc_arena_alloc(P->A, n);
  if (!p) longjmp(P->oom, 1);
  return p;
}

char *hlp_strndup(HlpParser *P, const char *s, size_t n) {
  char *p = hlp_alloc(P, n + 1);
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

void hlp_list_push(HlpParser *P, HlpList *l, void *p) {
  HlpNode *n = hlp_alloc(P, sizeof *n);
  n->p = p;
  if (l->tail) l->tail->next = n;
  else l->head = n;
  l->tail = n;
  l->n++;
}

void **hlp_list_array(HlpParser *P, const HlpList *l) {
  void **a = hlp_alloc(P, (size_t)(l->n ? l->n : 1) * sizeof *a);
  int i = 0;
  for (HlpNode *n = l->head; n; n = n->next) a[i++] = n->p;
  return a;
}

void hlp_items_push(HlpParser *P, HlpList *l, HloVal *v) {
  if (!v) return;
  if (l->comma) v->sep = 2;
  l->comma = false;
  hlp_list_push(P, l, v);
}

int64_t hlp_tok_i64(HlpParser *P, HlxToken t) {
  const char *s = P->src + t.off;
  bool neg = t.len > 0 && s[0] == '-';
  uint64_t v = 0;
  for (uint32_t i = neg; i < t.len; i++) v = v * 10 + (uint64_t)(s[i] - '0');
  return neg ? (int64_t)(0 - v) : (int64_t)v;
}

HloVal *hlp_val_tok(HlpParser *P, HlxToken t) {
  HloVal *v = hlp_alloc(P, sizeof *v);
  v->off = t.off;
  v->sep = t.ws;
  v->tok = (uint8_t)t.kind;
  v->word = t.kind == TK_NAME || t.kind == TK_IDENT;
  if (t.kind == TK_STRING) {
    size_t bad;
    char *out = hlp_alloc(P, t.len);
    long n = hlx_unescape(P->src + t.off + 1, t.len - 2, out, &bad);
    v->kind = HLO_VAL_STRING;
    v->tok = (uint8_t)P->src[t.off];
    v->text = out;
    v->len = n < 0 ? 0 : (size_t)n;
    out[v->len] = 0;
  } else {
    v->kind = t.kind == TK_RAWDICT ? HLO_VAL_RAW : HLO_VAL_TOKEN;
    v->text = hlp_strndup(P, P->src + t.off, t.len);
    v->len = t.len;
  }
  return v;
}

HloVal *hlp_val_group(HlpParser *P, HloValKind k, HlxToken open, HlpList *items) {
  HloVal *v = hlp_alloc(P, sizeof *v);
  v->kind = k;
  v->off = open.off;
  v->sep = open.ws;
  v->nitems = items->n;
  v->items = (HloVal **)hlp_list_array(P, items);
  uint32_t stray = hlp_list_stray_comma(items);
  if ((k == HLO_VAL_PAREN || k == HLO_VAL_BRACE) && stray) {
    /* Kept for nested operand lists, where lower.c rejects it, and for
     * integer lists (attrs.c), which XLA writes without stray commas. */
    uint32_t *o = hlp_alloc(P, sizeof *o);
    *o = stray;
    v->syn = o;
  }
  return v;
}

HloVal *hlp_val_attr(HlpParser *P, HlxToken name, HloVal *val) {
  HloVal *v = hlp_alloc(P, sizeof *v);
  v->kind = HLO_VAL_ATTR;
  v->off = name.off;
  v->sep = name.ws;
  v->text = hlp_strndup(P, P->src + name.off, name.len - 1);
  v->len = name.len - 1;
  v->nitems = 1;
  v->items = hlp_alloc(P, sizeof *v->items);
  val->sep = 0;
  v->items[0] = val;
  return v;
}

HloVal *hlp_val_shape(HlpParser *P, HloShape *s, HlxToken first) {
  HloVal *v = hlp_alloc(P, sizeof *v);
  v->kind = HLO_VAL_SHAPE;
  v->off = first.off;
  v->sep = first.ws;
  v->shape = s;
  return v;
}

HloVal *hlp_val_comp(HlpParser *P, HlxToken open, HlpList *instrs) {
  HloVal *v = hlp_val_group(P, HLO_VAL_COMP, open, &(HlpList){0});
  SynComp *c = hlp_alloc(P, sizeof *c);
  c->instrs = *instrs;
  c->lbrace = open.off;
  c->name = open;
  v->syn = c;
  return v;
}
