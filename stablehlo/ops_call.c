/* ops_call.c: func.call, stablehlo.composite (a call of its decomposition),
 * stablehlo.custom_call, and the check dialect of StableHLO's interpreter
 * tests (check.expect_* and their custom_call @check.expect_* forms).
 */
#include <stdlib.h>
#include <string.h>
#include "stablehlo/lower.h"
#include "stablehlo/ops.h"
#include "stablehlo/mlir.h"

static bool is(const ShOp *op, const char *w) {
  size_t n = strlen(w);
  return op->nlen == n && memcmp(op->name, w, n) == 0;
}

static ShNode *first_symbol(Lower *C, ShOp *op, const char *key) {
  ShAttr *a = key ? sh_attr(op, key) : NULL;
  if (a && a->val && sh_is(C, a->val, SH_SYMBOL, NULL)) return a->val;
  for (ShNode *k = op->node->kids; k; k = k->next)
    if (sh_is(C, k, SH_SYMBOL, NULL)) return k;
  return NULL;
}

static void symbol_text(Lower *C, ShNode *sym, const char **s, size_t *n) {
  *s = C->src + sym->tok.off + 1;
  *n = sym->tok.len - 1;
  if (*n >= 2 && (*s)[0] == '"') {
    ShNode tmp = *sym;
    tmp.tok.off++;
    tmp.tok.len--;
    *s = sh_string(C, &tmp, n);
  }
}

static int emit_call(Lower *C, ShOp *op, ShNode *sym) {
  const char *s;
  size_t n;
  symbol_text(C, sym, &s, &n);
  ShType *rt;
  const char *comp = sh_func_computation(C, s, n, sym, &rt);
  const char *c = sh_emit(C, rt, "call", sh_operand_list(C, op, 0, op->noperands), sh_fmt(C, ", to_apply=%s", comp),
                          op->metadata);
  if (op->nresults == 1 && rt->kind != SHT_TUPLE) sh_bind_result(C, op, 0, c, rt);
  else if (op->nresults == 1 && op->results[0]->kind == SHT_TUPLE && rt->n != 1) sh_bind_result(C, op, 0, c, rt);
  else if (op->nresults > 0) {
    if (rt->kind != SHT_TUPLE || rt->n != op->nresults)
      sh_fail(C, op->node, "call of @%.*s: %d results expected", (int)n, s, op->nresults);
    sh_bind_tuple_results(C, op, c, rt);
  }
  return 0;
}

/* ---- Checks ------------------------------------------------------------------------ */

static void add_check(Lower *C, ShOp *op, ShCheckKind kind, const char *what, Binding *actual, Binding *expected,
                      double tol, unsigned long long maxu, unsigned long long minu) {
  if (!C->test_mode)
    sh_fail(C, op->node, "%s: check ops run in test mode only (a file of // ----- parts or with checks)", what);
  if (!C->checks_here)
    sh_fail(C, op->node, "%s inside a region or a called function is not supported (only in the test function's body)", what);
  if (C->nchecks == C->capchecks) {
    int cap = C->capchecks ? C->capchecks * 2 : 16;
    ShCheck *v = realloc(C->checks, sizeof *v * (size_t)cap);
    if (!v) sh_fail_off(C, 0, "out of memory");
    C->checks = v;
    C->capchecks = cap;
  }
  if (C->ncheck_vals + 2 > C->capcheck_vals) {
    int cap = C->capcheck_vals ? C->capcheck_vals * 2 : 32;
    Binding **v = realloc(C->check_vals, sizeof *v * (size_t)cap);
    if (!v) sh_fail_off(C, 0, "out of memory");
    C->check_vals = v;
    C->capcheck_vals = cap;
  }
  ShCheck *c = &C->checks[C->nchecks++];
  memset(c, 0, sizeof *c);
  c->kind = kind;
  c->what = what;
  int col;
  hlc_line_col(C->src, C->P->len, op->node->tok.off, &c->line, &col);
  c->tolerance = tol;
  c->max_ulp = maxu;
  c->min_ulp = minu;
  if (actual->type->kind != SHT_TENSOR || !sh_type_eq(actual->type, expected->type))
    sh_fail(C, op->node, "%s: the compared values have different types", what);
  C->check_vals[C->ncheck_vals++] = actual;
  C->check_vals[C->ncheck_vals++] = expected;
}

/* A "name = number" among the op's top-level items (check ops put them after ':'). */
static double number_attr(Lower *C, ShOp *op, const char *key, double dflt) {
  size_t kl = strlen(key);
  for (ShNode *k = op->node->kids; k; k = k->next) {
    size_t n;
    const char *s = sh_text(C, k, &n);
    if (k->kind == SHN_TOKEN && k->tok.kind == SH_ATTRKEY && n == kl && memcmp(s, key, n) == 0 && k->next &&
        k->next->next && (sh_is(C, k->next->next, SH_FLOAT, NULL) || sh_is(C, k->next->next, SH_INT, NULL)))
      return strtod(C->src + k->next->next->tok.off, NULL);
  }
  ShAttr *a = sh_attr(op, key);
  if (a && a->val && (sh_is(C, a->val, SH_FLOAT, NULL) || sh_is(C, a->val, SH_INT, NULL)))
    return strtod(C->src + a->val->tok.off, NULL);
  return dflt;
}

static int op_check(Lower *C, ShOp *op) {
  const char *w = op->name + 6;   /* after "check." */
  static const char *const names[] = {"check.expect_eq", "check.expect_eq_const", "check.expect_almost_eq",
                                      "check.expect_almost_eq_const", "check.expect_close"};
  const char *what = NULL;
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (is(op, names[i])) what = names[i];
  if (!what) sh_fail(C, op->node, "unsupported check op %.*s", (int)op->nlen, op->name);
  bool is_const = op->nlen > 6 && memcmp(op->name + op->nlen - 6, "_const", 6) == 0;
  if (op->noperands != (is_const ? 1 : 2))
    sh_fail(C, op->node, "%s: expected %d operands", what, is_const ? 1 : 2);
  Binding *expected;
  if (is_const) {
    ShNode *d = NULL;
    for (ShNode *k = op->node->kids; k && !d; k = k->next)
      if (sh_is(C, k, SH_BAREID, "dense") && k->next && k->next->kind == SHN_ANGLE) d = k;
    ShAttr *va = sh_attr(op, "value");
    if (!d && va && sh_is(C, va->val, SH_BAREID, "dense")) d = va->val;
    if (!d) sh_fail(C, op->node, "%s: expected a dense<...> value", what);
    ShType *t = op->operands[0]->type;
    const char *name = sh_emit_constant(C, d->next, t, NULL);
    expected = sh_bind(C, "", 0, name, t);
  } else {
    expected = op->operands[1];
  }
  if (strncmp(w, "expect_eq", 9) == 0) {
    add_check(C, op, SHC_EQ, what, op->operands[0], expected, 0, 0, 0);
  } else if (strncmp(w, "expect_almost_eq", 16) == 0) {
    add_check(C, op, SHC_ALMOST_EQ, what, op->operands[0], expected, number_attr(C, op, "tolerance", 1e-4), 0, 0);
  } else {
    add_check(C, op, SHC_CLOSE, what, op->operands[0], expected, 0,
              (unsigned long long)number_attr(C, op, "max_ulp_difference", 1),
              (unsigned long long)number_attr(C, op, "min_ulp_difference", 0));
  }
  return 0;
}

/* custom_call @check.expect_*(%actual, %expected), as StableHLO's
 * interpreter runs them: close within 3 ULP, almost_eq within 0.001. */
static bool custom_check(Lower *C, ShOp *op, const char *target, size_t n) {
  struct { const char *t; ShCheckKind k; } v[] = {
    {"check.expect_close", SHC_CLOSE}, {"check.expect_eq", SHC_EQ}, {"check.expect_almost_eq", SHC_ALMOST_EQ}};
  for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
    if (strlen(v[i].t) != n || memcmp(v[i].t, target, n) != 0) continue;
    if (op->noperands != 2) sh_fail(C, op->node, "custom_call @%s: expected two operands", v[i].t);
    add_check(C, op, v[i].k, v[i].t, op->operands[0], op->operands[1], 0.001, 3, 0);
    return true;
  }
  return false;
}

/* ---- custom_call ----------------------------------------------------------------- */

/* The source text of a group node (through its closing bracket). */
static const char *group_text(Lower *C, const ShNode *g, size_t *n) {
  const char *s = C->src + g->tok.off;
  size_t len = C->P->len - g->tok.off;
  int depth = 0;
  for (size_t i = 0; i < len; i++) {
    char c = s[i];
    if (c == '"') {
      for (i++; i < len && s[i] != '"'; i++)
        if (s[i] == '\\') i++;
    } else if (c == '{' || c == '[' || c == '(' || c == '<') {
      depth++;
    } else if (c == '}' || c == ']' || c == ')' || c == '>') {
      if (i > 0 && c == '>' && s[i - 1] == '-') continue;
      if (--depth == 0) { *n = i + 1; return s; }
    }
  }
  *n = len;
  return s;
}

static void put_escaped(HlcText *b, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c == '"' || c == '\\') { hlc_text_put(b, "\\", 1); hlc_text_put(b, &c, 1); }
    else if (c == '\n') hlc_text_puts(b, "\\n");
    else hlc_text_put(b, &c, 1);
  }
}

static int op_custom_call(Lower *C, ShOp *op) {
  ShNode *sym = first_symbol(C, op, "call_target_name");
  const char *target;
  size_t tn;
  ShAttr *ta = sh_attr(op, "call_target_name");
  if (ta && ta->val && sh_is(C, ta->val, SH_STRING, NULL)) target = sh_string(C, ta->val, &tn);
  else if (sym) symbol_text(C, sym, &target, &tn);
  else sh_fail(C, op->node, "stablehlo.custom_call: missing call target");
  if (custom_check(C, op, target, tn)) return 0;
  int64_t api = sh_attr_int(C, op, "api_version", 1);
  static const char *const apis[] = {"API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
                                     "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"};
  if (api < 0 || api > 4) sh_fail(C, op->node, "stablehlo.custom_call: unknown api_version %lld", (long long)api);
  ShAttr *bc = sh_attr(op, "backend_config");
  /* JAX's typed-FFI calls (jax.ffi, jaxlib's LAPACK): api_version 1 and the
   * attributes in mhlo.backend_config, which XLA's legalization
   * (fixupMhloBackendConfig) turns into api_version 4 with that dictionary
   * as backend_config; it refuses one beside a non-empty backend_config or
   * another api_version. */
  ShAttr *mbc = sh_attr(op, "mhlo.backend_config");
  if (mbc && mbc->val) {
    size_t n = 0;
    if (mbc->val->kind != SHN_DICT) sh_fail(C, mbc->val, "stablehlo.custom_call: mhlo.backend_config must be a dictionary");
    if (bc && bc->val && !(sh_is(C, bc->val, SH_STRING, NULL) && (sh_string(C, bc->val, &n), n == 0)))
      sh_fail(C, bc->val, "stablehlo.custom_call: both backend_config and mhlo.backend_config are given");
    static const char needs1[] = "stablehlo.custom_call: mhlo.backend_config needs api_version 1 (it becomes the typed FFI's), got %lld";
    if (api != 1) sh_fail(C, mbc->val, needs1, (long long)api);
    api = 4;
    bc = mbc;
  }
  HlcText b = {0};
  hlc_text_puts(&b, ", custom_call_target=\"");
  put_escaped(&b, target, tn);
  hlc_text_puts(&b, "\"");
  if (api != 1) hlc_text_printf(&b, ", api_version=%s", apis[api]);
  if (sh_attr_bool(C, op, "has_side_effect", false)) hlc_text_puts(&b, ", custom_call_has_side_effect=true");
  if (bc && bc->val) {
    if (sh_is(C, bc->val, SH_STRING, NULL)) {
      size_t n;
      const char *s = sh_string(C, bc->val, &n);
      if (n) {
        hlc_text_puts(&b, ", backend_config=\"");
        put_escaped(&b, s, n);
        hlc_text_puts(&b, "\"");
      }
    } else if (bc->val->kind == SHN_DICT) {   /* typed FFI attributes, in MLIR's syntax as XLA prints them */
      size_t n;
      const char *s = group_text(C, bc->val, &n);
      hlc_text_puts(&b, ", backend_config=");
      hlc_text_put(&b, s, n);
    } else {
      sh_fail(C, bc->val, "stablehlo.custom_call: backend_config must be a string or a dictionary");
    }
  }
  ShAttr *al = sh_attr(op, "output_operand_aliases");
  if (al && al->val && al->val->kind == SHN_BRACKET && al->val->kids) {
    hlc_text_puts(&b, ", output_to_operand_aliasing={");
    int k = 0;
    for (ShNode *x = al->val->kids; x; x = x->next) {
      if (!sh_is(C, x, SH_HASHID, NULL) || !x->next || x->next->kind != SHN_ANGLE) continue;
      ShAttr fake = {.val = x};
      int64_t oti[SH_MAX_RANK], on[1], opi[SH_MAX_RANK];
      int n1 = sh_struct_ints(C, &fake, "output_tuple_indices", oti, SH_MAX_RANK);
      int n2 = sh_struct_ints(C, &fake, "operand_index", on, 1);
      int n3 = sh_struct_ints(C, &fake, "operand_tuple_indices", opi, SH_MAX_RANK);
      if (n2 != 1) sh_fail(C, x, "output_operand_alias: missing operand_index");
      hlc_text_printf(&b, "%s{", k++ ? ", " : "");
      for (int i = 0; i < n1; i++) hlc_text_printf(&b, "%s%lld", i ? "," : "", (long long)oti[i]);
      hlc_text_printf(&b, "}: (%lld, {", (long long)on[0]);
      for (int i = 0; i < n3; i++) hlc_text_printf(&b, "%s%lld", i ? "," : "", (long long)opi[i]);
      hlc_text_puts(&b, "})");
      x = x->next;
    }
    hlc_text_puts(&b, "}");
  }
  const char *attrs = sh_strdup(C, b.p, b.n);
  hlc_text_free(&b);
  if (op->nresults == 1) {
    sh_simple(C, op, "custom-call", attrs);
  } else {
    ShType *tt = sh_tuple_type(C, op->results, op->nresults);
    const char *t = sh_emit(C, tt, "custom-call", sh_operand_list(C, op, 0, op->noperands), attrs, op->metadata);
    sh_bind_tuple_results(C, op, t, tt);
  }
  return 0;
}

int sh_lower_call_op(Lower *C, ShOp *op) {
  if (op->nlen > 6 && memcmp(op->name, "check.", 6) == 0) return op_check(C, op);
  if (is(op, "func.call") || is(op, "call")) {
    ShNode *sym = first_symbol(C, op, "callee");
    if (!sym) sh_fail(C, op->node, "func.call: missing callee");
    return emit_call(C, op, sym);
  }
  if (is(op, "stablehlo.composite")) {
    ShNode *sym = first_symbol(C, op, "decomposition");
    if (!sym) sh_fail(C, op->node, "stablehlo.composite: missing decomposition");
    return emit_call(C, op, sym);
  }
  if (is(op, "stablehlo.custom_call") || is(op, "mhlo.custom_call")) return op_custom_call(C, op);
  return -1;
}
