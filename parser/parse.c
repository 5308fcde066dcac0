/* parse.c: hlp_parse (text -> IR) and the helpers the grammar actions call
 * to build items, shapes and lists in the module arena.
 *
 * Runs the lexer into the lemon parser, then hands the syntax tree to the
 * lowering (lower.c). Does not interpret attributes or operands itself.
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

HloModule *hlp_parse(const char *text, size_t len, const char *filename, HlcDiags *diags) {
  HloModule *volatile m = calloc(1, sizeof *m);
  if (!m) return NULL;
  hlc_arena_init(&m->arena);
  HlpParser *volatile P = calloc(1, sizeof *P);
  if (!P) { free(m); return NULL; }
  P->m = m;
  P->A = &m->arena;
  P->diags = diags;
  P->file = filename ? filename : "<input>";
  volatile bool ok = false;
  if (setjmp(P->oom)) {
    hlc_diag(diags, HLC_ERROR, "out of memory while parsing");
    goto done;
  }
  char *src = hlp_alloc(P, len + 1);
  memcpy(src, text, len);
  src[len] = 0;
  m->source = src;
  m->source_len = len;
  m->filename = hlp_strndup(P, P->file, strlen(P->file));
  m->replica_count = m->num_partitions = 1;
  P->src = src;
  P->len = len;
  if (len >= UINT32_MAX) {
    hlc_diag(diags, HLC_ERROR, "%s: input larger than 4 GiB", P->file);
    goto done;
  }
  const char *nul = memchr(src, 0, len);
  if (nul) {
    hlp_error(P, (size_t)(nul - src), "NUL byte in input");
    goto done;
  }
  P->lemon = hlp_ParseAlloc(malloc);
  if (!P->lemon) longjmp(P->oom, 1);
  HlxLexer L;
  hlx_init(&L, P, src, len);
  HlxToken t;
  for (;;) {
    int k = hlx_next(&L, &t);
    if (k < 0 || P->stop) break;
    hlp_Parse(P->lemon, k, t, P);
    if (P->stop || k == 0) break;
  }
  if (P->nerr) goto done;
  if (hlp_lower(P) != 0 || P->nerr) goto done;
  ok = true;
done:
  if (P->lemon) hlp_ParseFree(P->lemon, free);
  free(P->line_starts);
  free(P);
  if (!ok) { hlp_module_free(m); return NULL; }
  return m;
}

