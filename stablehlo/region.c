/* region.c: blocks of operations, regions as computations, and the values a
 * region captures from the computations around it.
 */
#include <stdlib.h>
#include <string.h>
#include "stablehlo/lower.h"
#include "stablehlo/mlir.h"

static bool is_return(const ShOp *op) {
  static const char *const names[] = {"stablehlo.return", "func.return", "return", "mhlo.return", "chlo.return",
                                      "sdy.return"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (op->nlen == strlen(names[i]) && memcmp(op->name, names[i], op->nlen) == 0) return true;
  return false;
}

/* Lower every op of block; *ret gets the operands of its terminator. */
static void lower_block(Lower *C, ShNode *block, Binding ***ret, int *nret) {
  *ret = NULL;
  *nret = 0;
  for (ShNode *n = block->kids; n; n = n->next) {
    if (n->name.kind == SH_ALIAS) continue;
    /* its region's arguments are written like operands: not an ShOp */
    if (n->name.len == 22 && memcmp(C->src + n->name.off, "sdy.manual_computation", 22) == 0) {
      sh_sdy_manual_computation(C, n);
      continue;
    }
    ShOp *op = hlc_arena_alloc(C->arena, sizeof *op);
    sh_decompose(C, n, op);
    if (is_return(op)) {
      *ret = op->operands;
      *nret = op->noperands;
      if (n->next) sh_fail(C, n->next, "operation after the block's terminator");
      return;
    }
    Comp *comp = C->cur;
    size_t start = comp->body.n;
    int mark = sh_bind_mark(C);
    if (sh_lower_op(C, op) < 0)
      sh_fail(C, n, "unsupported operation %.*s", (int)op->nlen, op->name);
    sh_attach_op_sharding(C, op, comp, start, mark);
  }
  sh_fail(C, block, "block without a terminator (return)");
}

int sh_arg_list(Lower *C, ShNode *paren, ShNode **names, ShType **types, ShNode **attrs, int max) {
  int n = 0;
  for (ShNode *k = paren->kids; k;) {
    if (sh_is(C, k, SH_COMMA, NULL)) { k = k->next; continue; }
    if (!sh_is(C, k, SH_VALUE, NULL) || !k->next || !sh_is(C, k->next, SH_COLON, NULL))
      sh_fail(C, k, "expected an argument \"%%name: type\"");
    if (n >= max) sh_fail(C, k, "more than %d arguments", max);
    names[n] = k;
    ShNode *t = k->next->next;
    types[n] = sh_parse_type(C, &t);
    if (attrs) attrs[n] = NULL;
    if (t && t->kind == SHN_DICT) {
      if (attrs) attrs[n] = t;
      t = t->next;
    }
    if (t && sh_is(C, t, SH_BAREID, "loc") && t->next) t = t->next->next;
    n++;
    k = t;
  }
  return n;
}

static const char *computation_name(Lower *C, const char *what) {
  char base[64];
  size_t k = 0;
  for (const char *p = what; *p && k + 1 < sizeof base; p++)
    base[k++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ? *p : '_';
  base[k] = 0;
  return sh_fmt(C, "%s.%d", base, ++C->counter);
}

const char *sh_region_lower(Lower *C, ShNode *region, const char *what, unsigned flags, ShNode **arg_names,
                            ShType **arg_types, int nargs, const ShCaptures *caps, ShType **root_type) {
  if (region->nkids != 1) sh_fail(C, region, "%s: a region with more than one block is not supported", what);
  ShNode *block = region->kids;
  ShNode *names_buf[256];
  ShType *types_buf[256];
  if (!arg_names) {
    nargs = block->args ? sh_arg_list(C, block->args, names_buf, types_buf, NULL, 256) : 0;
    arg_names = names_buf;
    arg_types = types_buf;
  }
  int ncaps = caps ? caps->n : 0;
  Comp *saved = C->cur;
  Comp *c = sh_comp_open(C);
  c->name = computation_name(C, what);
  C->cur = c;
  int mark = sh_bind_mark(C);
  Binding **capb = hlc_arena_alloc(C->arena, sizeof *capb * (size_t)(ncaps ? ncaps : 1));
  if (flags & SHR_TUPLE_PARAM) {
    ShType **el = hlc_arena_alloc(C->arena, sizeof *el * (size_t)(nargs + ncaps + 1));
    for (int i = 0; i < nargs; i++) el[i] = arg_types[i];
    for (int j = 0; j < ncaps; j++) el[nargs + j] = caps->v[j]->type;
    ShType *tt = sh_tuple_type(C, el, nargs + ncaps);
    const char *p = sh_emit(C, tt, "parameter", "0", NULL, NULL);
    for (int i = 0; i < nargs; i++) {
      const char *g = sh_emit(C, el[i], "get-tuple-element", p, sh_fmt(C, ", index=%d", i), NULL);
      size_t n;
      const char *s = sh_text(C, arg_names[i], &n);
      sh_bind(C, s, n, g, el[i]);
    }
    for (int j = 0; j < ncaps; j++) {
      const char *g = sh_emit(C, el[nargs + j], "get-tuple-element", p, sh_fmt(C, ", index=%d", nargs + j), NULL);
      capb[j] = sh_bind(C, caps->v[j]->name, caps->v[j]->nlen, g, el[nargs + j]);
    }
  } else {
    for (int i = 0; i < nargs; i++) {
      const char *p = sh_emit(C, arg_types[i], "parameter", sh_fmt(C, "%d", i), NULL, NULL);
      size_t n;
      const char *s = sh_text(C, arg_names[i], &n);
      sh_bind(C, s, n, p, arg_types[i]);
    }
  }
  Binding **ret;
  int nret;
  bool checks = C->checks_here;
  C->checks_here = false;
  lower_block(C, block, &ret, &nret);
  C->checks_here = checks;
  ShType *rt;
  if ((flags & SHR_PASS_CAPTURES) || nret != 1 || (flags & SHR_TUPLE_ROOT)) {
    int nr = nret + ((flags & SHR_PASS_CAPTURES) ? ncaps : 0);
    ShType **el = hlc_arena_alloc(C->arena, sizeof *el * (size_t)(nr + 1));
    HlcText ops = {0};
    for (int i = 0; i < nret; i++) {
      el[i] = ret[i]->type;
      hlc_text_printf(&ops, "%s%s", i ? ", " : "", ret[i]->hlo);
    }
    for (int j = 0; nret + j < nr; j++) {
      el[nret + j] = capb[j]->type;
      hlc_text_printf(&ops, "%s%s", nret + j ? ", " : "", capb[j]->hlo);
    }
    rt = sh_tuple_type(C, el, nr);
    const char *t = sh_emit(C, rt, "tuple", ops.p ? ops.p : "", NULL, NULL);
    hlc_text_free(&ops);
    Binding *tb = sh_bind(C, "", 0, t, rt);
    sh_mark_root(C, tb);
  } else {
    rt = ret[0]->type;
    sh_mark_root(C, ret[0]);
  }
  if (c->body.oom) sh_fail_off(C, 0, "out of memory");
  hlc_text_printf(&C->module, "%s {\n", c->name);
  hlc_text_put(&C->module, c->body.p, c->body.n);
  hlc_text_puts(&C->module, "}\n\n");
  hlc_text_free(&c->body);
  sh_bind_unwind(C, mark);
  C->cur = saved;
  if (root_type) *root_type = rt;
  return c->name;
}

/* ---- Captures ------------------------------------------------------------------ */

typedef struct NameSet { const char **s; uint32_t *n; uint32_t mask; int count; } NameSet;

static uint32_t fnv(const char *s, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

static bool set_has(const NameSet *set, const char *s, size_t n) {
  if (!set->mask) return false;
  for (uint32_t h = fnv(s, n) & set->mask; set->s[h]; h = (h + 1) & set->mask)
    if (set->n[h] == n && memcmp(set->s[h], s, n) == 0) return true;
  return false;
}

static void set_add(NameSet *set, const char *s, size_t n) {
  if (set_has(set, s, n)) return;
  if ((uint32_t)(set->count + 1) * 2 > set->mask + 1) {
    uint32_t size = set->mask ? (set->mask + 1) * 2 : 256;
    NameSet ns = {calloc(size, sizeof(char *)), calloc(size, sizeof(uint32_t)), size - 1, 0};
    if (!ns.s || !ns.n) { free(ns.s); free(ns.n); return; }
    for (uint32_t i = 0; set->mask && i <= set->mask; i++)
      if (set->s[i]) set_add(&ns, set->s[i], set->n[i]);
    free(set->s);
    free(set->n);
    *set = ns;
  }
  uint32_t h = fnv(s, n) & set->mask;
  while (set->s[h]) h = (h + 1) & set->mask;
  set->s[h] = s;
  set->n[h] = (uint32_t)n;
  set->count++;
}

static size_t base_len(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] == '#' || s[i] == ':') return i;
  return n;
}

static void defs_in(Lower *C, ShNode *n, NameSet *defs, int depth) {
  if (depth > SH_MAX_DEPTH) return;
  for (ShNode *k = n->kids; k; k = k->next) {
    if (k->kind == SHN_OP) {
      for (ShNode *r = k->results ? k->results->kids : NULL; r; r = r->next)
        set_add(defs, C->src + r->tok.off, base_len(C->src + r->tok.off, r->tok.len));
    }
    if (k->kind == SHN_BLOCK && k->args)
      for (ShNode *a = k->args->kids; a; a = a->next)
        if (sh_is(C, a, SH_VALUE, NULL) && a->next && sh_is(C, a->next, SH_COLON, NULL))
          set_add(defs, C->src + a->tok.off, a->tok.len);
    if (k->kind == SHN_PAREN)   /* "(%arg0 = %x)", "reducer(%a: T)" */
      for (ShNode *a = k->kids; a; a = a->next)
        if (sh_is(C, a, SH_VALUE, NULL) && a->next && (sh_is(C, a->next, SH_EQ, NULL) || sh_is(C, a->next, SH_COLON, NULL)))
          set_add(defs, C->src + a->tok.off, a->tok.len);
    if (k->kids) defs_in(C, k, defs, depth + 1);
  }
}

static void uses_in(Lower *C, ShNode *n, NameSet *defs, NameSet *seen, ShCaptures *out, int *cap, int depth) {
  if (depth > SH_MAX_DEPTH) return;
  for (ShNode *k = n->kids; k; k = k->next) {
    if (sh_is(C, k, SH_VALUE, NULL)) {
      const char *s = C->src + k->tok.off;
      size_t bl = base_len(s, k->tok.len);
      if (set_has(defs, s, bl) || set_has(defs, s, k->tok.len) || set_has(seen, s, k->tok.len)) continue;
      Binding *b = sh_find(C, s, k->tok.len);
      if (!b || b->const_rhs) continue;   /* undefined: reported at the use; constants are copied */
      set_add(seen, s, k->tok.len);
      if (out->n == *cap) {
        int nc = *cap ? *cap * 2 : 16;
        Binding **v = hlc_arena_alloc(C->arena, sizeof *v * (size_t)nc);
        if (out->n) memcpy(v, out->v, sizeof *v * (size_t)out->n);
        out->v = v;
        *cap = nc;
      }
      out->v[out->n++] = b;
    }
    if (k->kids) uses_in(C, k, defs, seen, out, cap, depth + 1);
  }
}

void sh_region_captures(Lower *C, ShNode **regions, int nregions, ShCaptures *out) {
  NameSet defs = {0}, seen = {0};
  out->v = NULL;
  out->n = 0;
  int cap = 0;
  for (int i = 0; i < nregions; i++) defs_in(C, regions[i], &defs, 0);
  for (int i = 0; i < nregions; i++) uses_in(C, regions[i], &defs, &seen, out, &cap, 0);
  free(defs.s);
  free(defs.n);
  free(seen.s);
  free(seen.n);
}

/* ---- Blocks of the entry and called functions ------------------------------------ */

void sh_lower_body(Lower *C, ShNode *region, Binding ***ret, int *nret) {
  if (region->nkids != 1) sh_fail(C, region, "a function with more than one block is not supported");
  lower_block(C, region->kids, ret, nret);
}
