/* parse.c: the driver between the lexer (lexer.re) and the grammar (mlir.y).
 *
 * MLIR separates operations by nothing but their syntax, which differs per
 * op; the driver finds where one starts so the grammar need not know any op:
 * at the level of a region (not inside brackets or a dictionary) a result
 * list ("%0 =", "%a, %b =", "%0:2 ="), an alias definition ("#loc1 = ...")
 * or, first on its line or first in a block, an operation name (a dotted word,
 * "return", "call", "module", or a quoted generic name); later on a line a
 * dotted word or "return" still starts one ("... : tensor<f32> return %0"),
 * except after "applies" (reduce's pretty form names its body op so). It also tells a
 * region's '{' from a dictionary's (by the token after it) and a block
 * header's closing ':' from a type's.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stablehlo/syntax.h"
#include "stablehlo/mlir.h"

void *shp_ParseAlloc(void *(*)(size_t));
void shp_Parse(void *, int, ShToken, ShParser *);
void shp_ParseFree(void *, void (*)(void *));

ShNode *shn_new(ShParser *P, int kind, const ShToken *t) {
  ShNode *n = hlc_arena_alloc(P->arena, sizeof *n);
  memset(n, 0, sizeof *n);
  n->kind = kind;
  if (t) n->tok = *t;
  return n;
}

ShNode *shn_append(ShNode *list, ShNode *kid) {
  kid->next = NULL;
  if (list->last) list->last->next = kid; else list->kids = kid;
  list->last = kid;
  list->nkids++;
  return list;
}

void shp_error(ShParser *P, size_t off, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  hlc_diag_at(P->diags, HLC_ERROR, P->file, P->src, P->len, off, "%s", msg);
}

enum { F_REGION, F_DICT, F_PAREN, F_BRACKET, F_ANGLE };

static bool word_is(const ShParser *P, const ShToken *t, const char *w) {
  return t->len == strlen(w) && memcmp(P->src + t->off, w, t->len) == 0;
}

/* A bare word that names an operation when it starts one. */
static bool op_word(const ShParser *P, const ShToken *t) {
  if (t->kind != SH_BAREID) return false;
  return memchr(P->src + t->off, '.', t->len) != NULL || word_is(P, t, "return") || word_is(P, t, "call") ||
         word_is(P, t, "module");
}

/* A word that starts an operation even in the middle of a line. */
static bool midline_op_word(const ShParser *P, const ShToken *t, const ShToken *prev) {
  if (t->kind != SH_BAREID || (prev->kind == SH_BAREID && word_is(P, prev, "applies"))) return false;
  return memchr(P->src + t->off, '.', t->len) != NULL || word_is(P, t, "return");
}

static bool eq_after(const ShParser *P, const ShToken *t) {
  size_t p = t->off + t->len;
  while (p < P->len && (P->src[p] == ' ' || P->src[p] == '\t' || P->src[p] == '\n' || P->src[p] == '\r')) p++;
  return p < P->len && P->src[p] == '=' && P->src[p + 1] != '=';
}

typedef struct Driver {
  ShParser *P;
  ShLexer L;
  ShToken la;          /* the lookahead token */
  bool have_la;
  int lex_failed;
} Driver;

static int lex(Driver *d, ShToken *t) {
  if (d->have_la) { *t = d->la; d->have_la = false; return t->kind; }
  const char *msg = NULL;
  int k = shx_next(&d->L, t, &msg);
  if (k < 0) {
    shp_error(d->P, t->off, "%s", msg ? msg : "cannot read this");
    d->lex_failed = 1;
    t->kind = 0;
    return -1;
  }
  return k;
}

static int peek(Driver *d, ShToken *t) {
  if (!d->have_la) {
    if (lex(d, &d->la) < 0) { d->la.kind = 0; }
    d->have_la = true;
  }
  *t = d->la;
  return t->kind;
}

int shp_parse(ShParser *P) {
  Driver d = {.P = P};
  d.L.src = P->src;
  d.L.len = P->len;
  d.L.bol = true;
  void *lp = shp_ParseAlloc(malloc);
  if (!lp) { shp_error(P, 0, "out of memory"); return -1; }
  unsigned char stack[SH_MAX_DEPTH];
  int depth = 0;          /* stack[0..depth) of F_*; empty: the top level (a region) */
  bool start_ok = true;   /* an op may start here (first in a block) */
  bool want_opname = false, in_results = false, in_header = false;
  int header_depth = -1;
  ShToken t, prev = {0};
  for (;; prev = t) {
    if (lex(&d, &t) < 0) break;
    bool region_level = depth == 0 || stack[depth - 1] == F_REGION;
    int kind = t.kind;
    if (kind == 0) { shp_Parse(lp, 0, t, P); break; }
    if (kind == SH_RESULT && !region_level) kind = SH_VALUE;   /* "(%arg0 = %init)" */
    if (want_opname) {
      want_opname = false;
      if (kind == SH_BAREID || kind == SH_STRING) kind = SH_OPNAME;
    } else if (region_level && !in_results) {
      if (kind == SH_RESULT) {
        ShToken s = {SH_OPSTART, t.off, 0, t.bol};
        shp_Parse(lp, SH_OPSTART, s, P);
        in_results = true;
      } else if ((kind == SH_HASHID || kind == SH_BANGID) && t.bol && eq_after(P, &t)) {
        ShToken s = {SH_OPSTART, t.off, 0, t.bol};
        shp_Parse(lp, SH_OPSTART, s, P);
        kind = SH_ALIAS;
      } else if (((t.bol || start_ok) && (op_word(P, &t) || kind == SH_STRING)) || midline_op_word(P, &t, &prev)) {
        ShToken s = {SH_OPSTART, t.off, 0, t.bol};
        shp_Parse(lp, SH_OPSTART, s, P);
        kind = SH_OPNAME;
      } else if (kind == SH_BLOCKID) {
        in_header = true;
        header_depth = depth;
      } else if (kind == SH_COLON && in_header && header_depth == depth) {
        kind = SH_BLOCKCOLON;
        in_header = false;
      }
    } else if (in_results && kind == SH_EQ) {
      in_results = false;
      want_opname = true;
    }
    start_ok = false;
    switch (kind) {
    case SH_LPAREN: case SH_LBRACKET: case SH_LANGLE: case SH_DICTOPEN:
      if (depth >= SH_MAX_DEPTH) {
        shp_error(P, t.off, "nested too deeply (more than %d brackets)", SH_MAX_DEPTH);
        P->stop = true;
        break;
      }
      if (kind == SH_DICTOPEN) {
        ShToken n;
        peek(&d, &n);
        /* a region starts with an op, a result list or a block label */
        bool dict = !(n.kind == SH_RESULT || n.kind == SH_BLOCKID || op_word(P, &n) || n.kind == SH_STRING) ||
                    (depth > 0 && stack[depth - 1] == F_ANGLE);
        if (!dict) { kind = SH_REGIONOPEN; start_ok = true; }
        stack[depth++] = dict ? F_DICT : F_REGION;
      } else {
        stack[depth++] = kind == SH_LPAREN ? F_PAREN : kind == SH_LBRACKET ? F_BRACKET : F_ANGLE;
      }
      break;
    case SH_RPAREN: case SH_RBRACKET: case SH_RANGLE: case SH_RBRACE: {
      int want = kind == SH_RPAREN ? F_PAREN : kind == SH_RBRACKET ? F_BRACKET : kind == SH_RANGLE ? F_ANGLE : -1;
      bool ok = depth > 0 && (want >= 0 ? stack[depth - 1] == want
                                        : (stack[depth - 1] == F_DICT || stack[depth - 1] == F_REGION));
      if (!ok) {
        shp_error(P, t.off, "unbalanced '%.*s'", (int)t.len, P->src + t.off);
        P->stop = true;
        break;
      }
      depth--;
      break;
    }
    case SH_BLOCKCOLON: start_ok = true; break;
    default: break;
    }
    if (P->stop) break;
    t.kind = kind;
    shp_Parse(lp, kind, t, P);
    if (P->stop) break;
  }
  shp_ParseFree(lp, free);
  if (d.lex_failed) P->stop = true;
  return P->stop || !P->top ? -1 : 0;
}
