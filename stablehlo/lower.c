/* lower.c: the translation state: values and their HLO names, computations,
 * one operation's operands / attributes / result types in either syntax,
 * regions as computations, and functions (func.func) as computations.
 *
 * Every value gets an HLO instruction in the computation that uses it: a
 * region that reads a value of an enclosing one (MLIR allows it; HLO does
 * not) either copies it when it is a constant (XLA sinks constants into
 * control flow the same way) or, for while/if/case, receives it through its
 * parameter tuple (sh_region_lower's captures, as XLA's translation adds
 * implicit operands). Elsewhere it is an error naming the value.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stablehlo/lower.h"
#include "stablehlo/mlir.h"

void sh_fail_off(Lower *C, size_t off, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  shp_error(C->P, off, "%s", msg);
  longjmp(C->fail, 1);
}

void sh_fail(Lower *C, const ShNode *at, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  shp_error(C->P, at ? at->tok.off : C->P->len, "%s", msg);
  longjmp(C->fail, 1);
}

const char *sh_text(Lower *C, const ShNode *n, size_t *len) {
  *len = n->tok.len;
  return C->src + n->tok.off;
}

bool sh_is(Lower *C, const ShNode *n, int kind, const char *text) {
  if (!n || n->kind != SHN_TOKEN || n->tok.kind != kind) return false;
  if (!text) return true;
  return n->tok.len == strlen(text) && memcmp(C->src + n->tok.off, text, n->tok.len) == 0;
}

char *sh_strdup(Lower *C, const char *s, size_t n) { return hlc_arena_strndup(C->arena, s, n); }

char *sh_fmt(Lower *C, const char *fmt, ...) {
  char tmp[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) n = 0;
  if ((size_t)n < sizeof tmp) return sh_strdup(C, tmp, (size_t)n);
  char *big = hlc_arena_alloc(C->arena, (size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return big;
}

char *sh_string(Lower *C, const ShNode *n, size_t *len) {
  const char *s = C->src + n->tok.off + 1;
  size_t m = n->tok.len >= 2 ? n->tok.len - 2 : 0;
  char *out = hlc_arena_alloc(C->arena, m + 1);
  size_t o = 0;
  for (size_t i = 0; i < m; i++) {
    if (s[i] != '\\' || i + 1 >= m) { out[o++] = s[i]; continue; }
    char c = s[++i];
    if (c == 'n') out[o++] = '\n';
    else if (c == 't') out[o++] = '\t';
    else if (c == '"' || c == '\\') out[o++] = c;
    else if (i + 1 < m && strchr("0123456789abcdefABCDEF", c) && strchr("0123456789abcdefABCDEF", s[i + 1])) {
      char h[3] = {c, s[i + 1], 0};
      out[o++] = (char)strtol(h, NULL, 16);
      i++;
    } else {
      out[o++] = c;
    }
  }
  out[o] = 0;
  *len = o;
  return out;
}

/* ---- Bindings ---------------------------------------------------------------- */

static uint32_t hash(const char *s, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

static void table_grow(Lower *C) {
  uint32_t size = C->tmask ? (C->tmask + 1) * 2 : 1024;
  free(C->table);
  C->table = malloc(sizeof *C->table * size);
  if (!C->table) sh_fail_off(C, 0, "out of memory");
  memset(C->table, 0xff, sizeof *C->table * size);
  C->tmask = size - 1;
  /* re-insert the visible binding of each name: the newest one */
  for (int i = 0; i < C->nb; i++) {
    Binding *b = C->b[i];
    uint32_t h = hash(b->name, b->nlen) & C->tmask;
    while (C->table[h] >= 0 && !(C->b[C->table[h]]->nlen == b->nlen &&
                                 memcmp(C->b[C->table[h]]->name, b->name, b->nlen) == 0))
      h = (h + 1) & C->tmask;
    C->table[h] = i;
  }
}

static int32_t *slot(Lower *C, const char *name, size_t n) {
  uint32_t h = hash(name, n) & C->tmask;
  while (C->table[h] >= 0) {
    Binding *b = C->b[C->table[h]];
    if (b->nlen == n && memcmp(b->name, name, n) == 0) break;
    h = (h + 1) & C->tmask;
  }
  return &C->table[h];
}

Binding *sh_bind(Lower *C, const char *name, size_t n, const char *hlo, ShType *t) {
  if (C->nb + 1 > (int)(C->tmask + 1) / 2) table_grow(C);
  if (C->nb == C->capb) {
    int cap = C->capb ? C->capb * 2 : 256;
    Binding **nb = realloc(C->b, sizeof *nb * (size_t)cap);
    if (!nb) sh_fail_off(C, 0, "out of memory");
    C->b = nb;
    C->capb = cap;
  }
  int32_t *s = slot(C, name, n);
  Binding *b = hlc_arena_alloc(C->arena, sizeof *b);
  C->b[C->nb] = b;
  memset(b, 0, sizeof *b);
  b->name = name;
  b->nlen = (uint32_t)n;
  b->prev = *s;
  b->hlo = hlo;
  b->type = t;
  b->comp = C->cur ? C->cur->id : -1;
  b->line_off = C->cur ? C->cur->last_line : 0;
  *s = C->nb++;
  return b;
}

int sh_bind_mark(Lower *C) { return C->nb; }

void sh_bind_unwind(Lower *C, int mark) {
  while (C->nb > mark) {
    Binding *b = C->b[C->nb - 1];
    int32_t *s = slot(C, b->name, b->nlen);
    *s = b->prev;
    C->nb--;
  }
}

Binding *sh_find(Lower *C, const char *name, size_t n) {
  if (!C->tmask) return NULL;
  int32_t i = *slot(C, name, n);
  return i >= C->scope_floor ? C->b[i] : NULL;
}

Binding *sh_lookup(Lower *C, const ShNode *v) {
  size_t n;
  const char *s = sh_text(C, v, &n);
  Binding *b = sh_find(C, s, n);
  if (!b && !memchr(s, '#', n)) {
    /* "%0" of a one-result op bound as "%0" only; "%0#0" as its first result */
  }
  if (!b) sh_fail(C, v, "value %.*s is used but not defined (or defined later)", (int)n, s);
  if (C->cur && b->comp != C->cur->id) {
    if (b->const_rhs) {   /* copy the constant into this computation */
      const char *name = sh_fmt(C, "constant.%d", ++C->counter);
      sh_emit_line(C, name, b->const_rhs);
      Binding *nb = sh_bind(C, b->name, b->nlen, name, b->type);
      nb->const_rhs = b->const_rhs;
      nb->const_dense = b->const_dense;
      return nb;
    }
    sh_fail(C, v, "value %.*s of an enclosing region is used inside this region (not supported here)", (int)n, s);
  }
  return b;
}

/* ---- Emitting ---------------------------------------------------------------- */

Comp *sh_comp_open(Lower *C) {
  Comp *c = hlc_arena_alloc(C->arena, sizeof *c);
  memset(c, 0, sizeof *c);
  c->id = ++C->ncomp;
  c->all_next = C->all;
  C->all = c;
  return c;
}

void sh_emit_line(Lower *C, const char *name, const char *rhs) {
  Comp *c = C->cur;
  c->last_line = c->body.n;
  hlc_text_printf(&c->body, "  %s = ", name);
  hlc_text_puts(&c->body, rhs);
  hlc_text_puts(&c->body, "\n");
}

const char *sh_emit(Lower *C, const ShType *t, const char *opcode, const char *operands, const char *attrs,
                    const char *metadata) {
  const char *base = opcode;
  char tmp[64];
  size_t k = 0;
  for (; base[k] && k + 1 < sizeof tmp; k++) tmp[k] = base[k];
  tmp[k] = 0;
  const char *name = sh_fmt(C, "%s.%d", tmp, ++C->counter);
  HlcText rhs = {0};
  sh_put_type(&rhs, t);
  hlc_text_printf(&rhs, " %s(%s)%s%s", opcode, operands ? operands : "", attrs ? attrs : "", metadata ? metadata : "");
  if (rhs.oom) sh_fail_off(C, 0, "out of memory");
  sh_emit_line(C, name, rhs.p);
  hlc_text_free(&rhs);
  return name;
}

const char *sh_operand_list(Lower *C, ShOp *op, int from, int to) {
  HlcText b = {0};
  for (int i = from; i < to; i++) {
    if (i > from) hlc_text_puts(&b, ", ");
    hlc_text_puts(&b, op->operands[i]->hlo);
  }
  const char *r = b.p ? sh_strdup(C, b.p, b.n) : "";
  hlc_text_free(&b);
  return r;
}

/* The MLIR name of op's i-th result: "%0" (one result), "%0#i" for "%0:N",
 * or the i-th of "%a, %b". */
static const char *result_name(Lower *C, ShOp *op, int i, size_t *n) {
  int k = 0;
  for (ShNode *r = op->node->results ? op->node->results->kids : NULL; r; r = r->next) {
    size_t len;
    const char *s = sh_text(C, r, &len);
    const char *colon = memchr(s, ':', len);
    int count = colon ? atoi(colon + 1) : 1;
    if (i < k + count) {
      if (!colon) { *n = len; return s; }
      const char *full = sh_fmt(C, "%.*s#%d", (int)(colon - s), s, i - k);
      *n = strlen(full);
      return full;
    }
    k += count;
  }
  return NULL;
}

Binding *sh_bind_result(Lower *C, ShOp *op, int i, const char *hlo, ShType *t) {
  size_t n;
  const char *s = result_name(C, op, i, &n);
  return s ? sh_bind(C, s, n, hlo, t) : NULL;
}

int sh_const_ints(Lower *C, const Binding *b, int64_t *v, int max) {
  if (!b->const_dense || b->type->kind != SHT_TENSOR || !hlc_dtype_is_int(b->type->dt)) return -1;
  int64_t n = sh_type_elems(b->type);
  if (n > max) return -1;
  int got;
  sh_int_list(C, b->const_dense, v, max, &got);
  if (got == 1)
    for (int64_t i = 1; i < n; i++) v[i] = v[0];
  else if (got != n)
    return -1;
  return (int)n;
}

Binding *sh_result_binding(Lower *C, ShOp *op, int i) {
  size_t n;
  const char *s = result_name(C, op, i, &n);
  return s ? sh_find(C, s, n) : NULL;
}

void sh_bind_tuple_results(Lower *C, ShOp *op, const char *tuple, const ShType *tt) {
  for (int i = 0; i < op->nresults; i++) {
    const char *g = sh_emit(C, tt->elems[i], "get-tuple-element", tuple, sh_fmt(C, ", index=%d", i), NULL);
    sh_bind_result(C, op, i, g, tt->elems[i]);
  }
}

ShType *sh_tuple_type(Lower *C, ShType **elems, int n) {
  ShType *t = hlc_arena_alloc(C->arena, sizeof *t);
  memset(t, 0, sizeof *t);
  t->kind = SHT_TUPLE;
  t->n = n;
  t->elems = hlc_arena_alloc(C->arena, sizeof(ShType *) * (size_t)(n ? n : 1));
  for (int i = 0; i < n; i++) t->elems[i] = elems[i];
  return t;
}

/* Mark the line of binding b as its computation's ROOT. */
void sh_mark_root(Lower *C, Binding *b) {
  Comp *c = C->cur;
  const char *p = c->body.p + b->line_off;
  if (b->comp != c->id || strncmp(p + 2, b->hlo, strlen(b->hlo)) != 0) {   /* not a line of ours */
    const char *name = sh_emit(C, b->type, "copy", b->hlo, NULL, NULL);
    p = c->body.p + c->last_line;
    (void)name;
  }
  size_t at = (size_t)(p - c->body.p) + 2;
  hlc_text_put(&c->body, "     ", 5);   /* room */
  memmove(c->body.p + at + 5, c->body.p + at, c->body.n - 5 - at);
  memcpy(c->body.p + at, "ROOT ", 5);
}

/* ---- Attributes ---------------------------------------------------------------- */

ShAttr *sh_attr(ShOp *op, const char *key) {
  size_t n = strlen(key);
  for (int i = 0; i < op->nattrs; i++)
    if (op->attrs[i].klen == n && memcmp(op->attrs[i].key, key, n) == 0) return &op->attrs[i];
  return NULL;
}

int64_t sh_attr_int(Lower *C, ShOp *op, const char *key, int64_t dflt) {
  ShAttr *a = sh_attr(op, key);
  if (!a) return dflt;
  if (!sh_is(C, a->val, SH_INT, NULL)) sh_fail(C, a->val, "%.*s: attribute %s: expected an integer", (int)op->nlen, op->name, key);
  size_t n;
  return strtoll(sh_text(C, a->val, &n), NULL, 10);
}

bool sh_attr_bool(Lower *C, ShOp *op, const char *key, bool dflt) {
  ShAttr *a = sh_attr(op, key);
  if (!a) return dflt;
  if (!a->val) return true;   /* unit attribute */
  if (sh_is(C, a->val, SH_BAREID, "true")) return true;
  if (sh_is(C, a->val, SH_BAREID, "false")) return false;
  sh_fail(C, a->val, "%.*s: attribute %s: expected true or false", (int)op->nlen, op->name, key);
}

int sh_attr_ints(Lower *C, ShOp *op, const char *key, int64_t *v, int max) {
  ShAttr *a = sh_attr(op, key);
  if (!a) return -1;
  if (!a->val) sh_fail(C, op->node, "%.*s: attribute %s has no value", (int)op->nlen, op->name, key);
  int n;
  sh_int_list(C, a->val, v, max, &n);
  return n;
}

const char *sh_attr_word(Lower *C, ShOp *op, const char *key) {
  ShAttr *a = sh_attr(op, key);
  if (!a || !a->val) return NULL;
  ShNode *v = a->val;
  /* #stablehlo<comparison_direction LT> or #stablehlo.comparison_direction<LT>, or a bare word */
  if (v->kind == SHN_TOKEN && v->tok.kind == SH_HASHID && v->next && v->next->kind == SHN_ANGLE) {
    ShNode *k = v->next->kids;
    while (k && k->next) k = k->next;
    v = k;
  }
  if (!v || v->kind != SHN_TOKEN || (v->tok.kind != SH_BAREID && v->tok.kind != SH_STRING))
    sh_fail(C, a->val, "%.*s: attribute %s: expected a word", (int)op->nlen, op->name, key);
  size_t n;
  const char *s = sh_text(C, v, &n);
  if (v->tok.kind == SH_STRING) return sh_string(C, v, &n);
  return sh_strdup(C, s, n);
}

/* Entries of a dictionary group: "key = value, key, ...". */
void sh_dict_attrs(Lower *C, ShOp *op, ShNode *dict) {
  for (ShNode *k = dict->kids; k;) {
    if (sh_is(C, k, SH_COMMA, NULL)) { k = k->next; continue; }
    if (op->nattrs >= SH_MAX_ATTRS) sh_fail(C, k, "more than %d attributes", SH_MAX_ATTRS);
    ShAttr *a = &op->attrs[op->nattrs++];
    size_t n;
    const char *s = sh_text(C, k, &n);
    if (s[0] == '"') s = sh_string(C, k, &n);
    a->key = s;
    a->klen = n;
    a->val = NULL;
    k = k->next;
    if (k && sh_is(C, k, SH_EQ, NULL)) {
      a->val = k->next;
      k = k->next;
    }
    while (k && !sh_is(C, k, SH_COMMA, NULL)) k = k->next;
  }
}

/* ---- Operations ---------------------------------------------------------------- */

static bool is_loc(Lower *C, ShNode *n) {
  return sh_is(C, n, SH_BAREID, "loc") && n->next && n->next->kind == SHN_PAREN;
}

/* loc(...) as HLO metadata: the first "file":line:col, and a leading name. */
static void loc_info(Lower *C, ShNode *paren, const char **name, const char **file, int64_t *line, int depth) {
  if (depth > 8) return;
  for (ShNode *k = paren->kids; k; k = k->next) {
    if (sh_is(C, k, SH_STRING, NULL) && k->next && sh_is(C, k->next, SH_COLON, NULL) && k->next->next &&
        sh_is(C, k->next->next, SH_INT, NULL)) {
      if (!*file) {
        size_t n;
        *file = sh_string(C, k, &n);
        *line = strtoll(C->src + k->next->next->tok.off, NULL, 10);
      }
    } else if (sh_is(C, k, SH_STRING, NULL) && !*name) {
      size_t n;
      *name = sh_string(C, k, &n);
    } else if (k->kind == SHN_PAREN) {
      loc_info(C, k, name, file, line, depth + 1);
    } else if (sh_is(C, k, SH_HASHID, NULL)) {
      size_t n;
      const char *s = sh_text(C, k, &n);
      for (int ai = 0; ai < C->naliases; ai++) {
        ShNode *a = C->aliases[ai];
        if (a->name.len == n && memcmp(C->src + a->name.off, s, n) == 0) {
          for (ShNode *x = a->kids; x; x = x->next)
            if (is_loc(C, x)) loc_info(C, x->next, name, file, line, depth + 1);
          break;
        }
      }
    }
  }
}

static const char *metadata_of(Lower *C, ShNode *paren) {
  const char *name = NULL, *file = NULL;
  int64_t line = 0;
  loc_info(C, paren, &name, &file, &line, 0);
  if (!name && !file) return "";
  HlcText b = {0};
  hlc_text_puts(&b, ", metadata={");
  if (name) {
    hlc_text_puts(&b, "op_name=\"");
    for (const char *p = name; *p; p++) {
      if (*p == '"' || *p == '\\') hlc_text_put(&b, "\\", 1);
      if ((unsigned char)*p >= 0x20) hlc_text_put(&b, p, 1);
    }
    hlc_text_puts(&b, "\"");
  }
  if (file) {
    hlc_text_puts(&b, name ? " source_file=\"" : "source_file=\"");
    for (const char *p = file; *p; p++) {
      if (*p == '"' || *p == '\\') hlc_text_put(&b, "\\", 1);
      if ((unsigned char)*p >= 0x20) hlc_text_put(&b, p, 1);
    }
    hlc_text_printf(&b, "\" source_line=%lld", (long long)line);
  }
  hlc_text_puts(&b, "}");
  const char *r = sh_strdup(C, b.p, b.n);
  hlc_text_free(&b);
  return r;
}

const char *sh_frontend_attrs(Lower *C, const ShNode *dict) {
  if (!dict || dict->kind != SHN_DICT) return "";
  HlcText b = {0};
  int n = 0;
  for (const ShNode *k = dict->kids; k; k = k->next) {
    if (k->kind != SHN_TOKEN || k->tok.kind != SH_ATTRKEY || !k->next || !sh_is(C, k->next, SH_EQ, NULL)) continue;
    const ShNode *v = k->next->next;
    if (!v || !sh_is(C, v, SH_STRING, NULL))
      sh_fail(C, v ? v : k, "mhlo.frontend_attributes: expected key = \"value\" entries");
    size_t kl, vl;
    const char *key = sh_text(C, k, &kl);
    if (kl >= 2 && key[0] == '"') key = sh_string(C, k, &kl);
    const char *val = sh_string(C, v, &vl);
    hlc_text_puts(&b, n++ ? "," : ", frontend_attributes={");
    hlc_text_put(&b, key, kl);
    hlc_text_puts(&b, "=\"");
    for (size_t i = 0; i < vl; i++) {
      if (val[i] == '"' || val[i] == '\\') hlc_text_put(&b, "\\", 1);
      if (val[i] == '\n') hlc_text_puts(&b, "\\n");
      else hlc_text_put(&b, &val[i], 1);
    }
    hlc_text_puts(&b, "\"");
  }
  if (n) hlc_text_puts(&b, "}");
  if (b.oom) sh_fail_off(C, 0, "out of memory");
  const char *r = n ? sh_strdup(C, b.p, b.n) : "";
  hlc_text_free(&b);
  return r;
}

const char *sh_node_metadata(Lower *C, ShNode *node) {
  for (ShNode *k = node->kids; k; k = k->next)
    if (is_loc(C, k)) return metadata_of(C, k->next);
  return "";
}

static void add_operand(Lower *C, ShOp *op, ShNode *v) {
  if (op->noperands >= SH_MAX_OPERANDS) sh_fail(C, v, "more than %d operands", SH_MAX_OPERANDS);
  if (op->noperands == op->opcap) {
    Binding **nv = hlc_arena_alloc(C->arena, sizeof *nv * (size_t)op->opcap * 2);
    memcpy(nv, op->operands, sizeof *nv * (size_t)op->noperands);
    op->operands = nv;
    op->opcap *= 2;
  }
  op->operands[op->noperands++] = sh_lookup(C, v);
}

static void operands_in(Lower *C, ShOp *op, ShNode *group) {
  bool named = false;   /* "(%arg0 = %init, ...)" */
  for (ShNode *k = group->kids; k; k = k->next)
    if (sh_is(C, k, SH_EQ, NULL)) named = true;
  for (ShNode *k = group->kids; k; k = k->next) {
    if (!sh_is(C, k, SH_VALUE, NULL)) continue;
    if (named && k->next && sh_is(C, k->next, SH_EQ, NULL)) {
      if (op->niter_args >= 256) sh_fail(C, k, "more than 256 loop values");
      op->iter_args[op->niter_args++] = k;
      continue;
    }
    add_operand(C, op, k);
  }
}

int sh_result_count(Lower *C, ShNode *node) {
  int n = 0;
  for (ShNode *r = node->results ? node->results->kids : NULL; r; r = r->next) {
    size_t len;
    const char *s = sh_text(C, r, &len);
    const char *colon = memchr(s, ':', len);
    n += colon ? atoi(colon + 1) : 1;
  }
  return n;
}

/* Pretty reductions list "(%x init: %i), (%y init: %j)": inputs first, then
 * inits, as the generic form and the written signature have them. */
static void inputs_then_inits(Lower *C, ShOp *op) {
  bool pretty = false;
  for (ShNode *k = op->node->kids; k; k = k->next)
    if (k->kind == SHN_PAREN)
      for (ShNode *x = k->kids; x; x = x->next)
        if (sh_is(C, x, SH_BAREID, "init")) pretty = true;
  if (!pretty || op->noperands % 2) return;
  int n = op->noperands / 2;
  Binding **v = hlc_arena_alloc(C->arena, sizeof *v * (size_t)op->noperands);
  for (int i = 0; i < n; i++) {
    v[i] = op->operands[2 * i];
    v[n + i] = op->operands[2 * i + 1];
  }
  memcpy(op->operands, v, sizeof *v * (size_t)op->noperands);
}

/* The types after ':' at sig: "(T, T) -> T", "(T) -> (T, T)", "T -> (T, T)"
 * or "T, T". */
static void signature(Lower *C, ShOp *op, ShNode *sig) {
  ShType *tmp[SH_MAX_OPERANDS / 4];
  int n = 0;
  ShNode *k = sig;
  if (k && k->kind == SHN_PAREN && k->next && sh_is(C, k->next, SH_ARROW, NULL)) {
    /* the operand types as written must be the operands' */
    int i = 0;
    for (ShNode *in = k->kids; in;) {
      if (sh_is(C, in, SH_COMMA, NULL)) { in = in->next; continue; }
      ShNode *at = in;
      ShType *t = sh_parse_type(C, &in);
      if (i < op->noperands && !sh_type_eq(t, op->operands[i]->type)) {
        HlcText a = {0}, b = {0};
        sh_put_type(&a, op->operands[i]->type);
        sh_put_type(&b, t);
        char msg[300];
        snprintf(msg, sizeof msg, "%.*s: operand %d has type %s, not %s as written", (int)op->nlen, op->name, i,
                 a.p ? a.p : "?", b.p ? b.p : "?");
        hlc_text_free(&a);
        hlc_text_free(&b);
        sh_fail(C, at, "%s", msg);
      }
      i++;
    }
    k = k->next->next;
    if (k && k->kind == SHN_PAREN) {
      for (ShNode *in = k->kids; in;) {
        if (sh_is(C, in, SH_COMMA, NULL)) { in = in->next; continue; }
        if (in->kind == SHN_DICT) { in = in->next; continue; }
        if (n >= (int)(sizeof tmp / sizeof *tmp)) sh_fail(C, in, "too many result types");
        tmp[n++] = sh_parse_type(C, &in);
      }
    } else if (k) {
      tmp[n++] = sh_parse_type(C, &k);
    }
  } else {
    while (k && (k->kind == SHN_TOKEN || k->kind == SHN_PAREN)) {
      if (sh_is(C, k, SH_COMMA, NULL)) { k = k->next; continue; }
      if (!(sh_is(C, k, SH_BAREID, NULL) || sh_is(C, k, SH_BANGID, NULL) || k->kind == SHN_PAREN)) break;
      if (sh_is(C, k, SH_BAREID, NULL) && !(sh_is(C, k, SH_BAREID, "tensor") || sh_is(C, k, SH_BAREID, "tuple")))
        break;   /* "cond {", "reducer(...)" */
      if (n >= (int)(sizeof tmp / sizeof *tmp)) sh_fail(C, k, "too many types");
      tmp[n++] = sh_parse_type(C, &k);
    }
    if (k && sh_is(C, k, SH_ARROW, NULL)) {
      /* "T -> T" or "T -> (T, T)" (chlo.top_k): the operand types written
       * without parentheses, then the results. */
      for (int i = 0; i < n && i < op->noperands; i++)
        if (!sh_type_eq(tmp[i], op->operands[i]->type))
          sh_fail(C, sig, "%.*s: operand %d's type is not the one written", (int)op->nlen, op->name, i);
      n = 0;
      k = k->next;
      if (k && k->kind == SHN_PAREN) {
        for (ShNode *in = k->kids; in;) {
          if (sh_is(C, in, SH_COMMA, NULL)) { in = in->next; continue; }
          if (n >= (int)(sizeof tmp / sizeof *tmp)) sh_fail(C, in, "too many result types");
          tmp[n++] = sh_parse_type(C, &in);
        }
      } else if (k) {
        tmp[n++] = sh_parse_type(C, &k);
      }
    }
  }
  int r = op->nresults;
  if (r > 0 && n < r) sh_fail(C, sig, "%.*s: expected %d result types", (int)op->nlen, op->name, r);
  op->results = hlc_arena_alloc(C->arena, sizeof(ShType *) * (size_t)(r ? r : 1));
  for (int i = 0; i < r; i++) op->results[i] = tmp[n - r + i];
  op->sig_types = hlc_arena_memdup(C->arena, tmp, sizeof(ShType *) * (size_t)(n ? n : 1));
  op->nsig = n;
}

void sh_decompose(Lower *C, ShNode *node, ShOp *op) {
  memset(op, 0, sizeof *op);
  op->node = node;
  op->metadata = "";
  size_t n;
  const char *s = C->src + node->name.off;
  n = node->name.len;
  if (C->src[node->name.off] == '"') {
    ShNode tmp = {.kind = SHN_TOKEN, .tok = node->name};
    s = sh_string(C, &tmp, &n);
    op->generic = true;
  }
  op->name = s;
  op->nlen = n;
  op->nresults = sh_result_count(C, node);
  op->operands = hlc_arena_alloc(C->arena, sizeof(Binding *) * 64);
  op->opcap = 64;
  ShNode *sig = NULL;
  bool seen_colon = false;
  ShNode *prev = NULL;
  for (ShNode *k = node->kids; k; prev = k, k = k->next) {
    if (is_loc(C, k)) {
      op->metadata = metadata_of(C, k->next);
      k = k->next;
      continue;
    }
    switch (k->kind) {
    case SHN_TOKEN:
      if (k->tok.kind == SH_COLON) {
        seen_colon = true;
        sig = k->next;
      } else if (k->tok.kind == SH_VALUE && !seen_colon) {
        add_operand(C, op, k);
      } else if (k->tok.kind == SH_ATTRKEY && !seen_colon && k->next && sh_is(C, k->next, SH_EQ, NULL)) {
        if (op->nattrs >= SH_MAX_ATTRS) sh_fail(C, k, "more than %d attributes", SH_MAX_ATTRS);
        ShAttr *a = &op->attrs[op->nattrs++];
        a->key = C->src + k->tok.off;
        a->klen = k->tok.len;
        a->val = k->next->next;
        k = k->next;
      }
      break;
    case SHN_PAREN:
      if (seen_colon) break;
      if (op->generic && k->kids && k->kids->kind == SHN_REGION) {
        for (ShNode *r = k->kids; r; r = r->next)
          if (r->kind == SHN_REGION && op->nregions < 16) op->regions[op->nregions++] = r;
      } else {
        operands_in(C, op, k);
      }
      break;
    case SHN_DICT:
      sh_dict_attrs(C, op, k);
      break;
    case SHN_ANGLE:
      if (k->kids && k->kids->kind == SHN_DICT && !seen_colon) sh_dict_attrs(C, op, k->kids);
      break;
    case SHN_REGION:
      if (op->nregions < 16) {
        op->region_args[op->nregions] = prev && prev->kind == SHN_PAREN && seen_colon ? prev : NULL;
        op->regions[op->nregions++] = k;
      }
      break;
    default: break;
    }
  }
  inputs_then_inits(C, op);
  signature(C, op, sig);
  /* frontend attributes travel with the op's instructions, like its loc */
  ShAttr *fa = sh_attr(op, "mhlo.frontend_attributes");
  if (fa && fa->val) op->metadata = sh_fmt(C, "%s%s", op->metadata, sh_frontend_attrs(C, fa->val));
}
