/* ops_region.c: ops with regions: reduce, reduce_window, select_and_scatter,
 * sort, map, while, if, case. Regions become computations (region.c);
 * while/if/case pass the values their regions capture through their operand
 * tuple, as XLA's translation adds implicit operands.
 */
#include <stdlib.h>
#include <string.h>
#include "stablehlo/lower.h"
#include "stablehlo/ops.h"
#include "stablehlo/mlir.h"

static bool is(const ShOp *op, const char *w) {
  size_t n = strlen(w);
  if (op->nlen == n && memcmp(op->name, w, n) == 0) return true;
  return n > 10 && memcmp(w, "stablehlo.", 10) == 0 && op->nlen == n - 5 && memcmp(op->name, "mhlo.", 5) == 0 &&
         memcmp(op->name + 5, w + 10, n - 10) == 0;
}

static void need_regions(Lower *C, ShOp *op, int n) {
  if (op->nregions != n)
    sh_fail(C, op->node, "%.*s: expected %d region(s), found %d", (int)op->nlen, op->name, n, op->nregions);
}

/* A computation (p0, p1) -> opcode(p0, p1) on scalars of type t: the
 * "applies stablehlo.add" form of a reduction. */
static const char *binary_computation(Lower *C, const char *opcode, ShType *t) {
  Comp *saved = C->cur;
  Comp *c = sh_comp_open(C);
  c->name = sh_fmt(C, "region.%d", ++C->counter);
  C->cur = c;
  const char *a = sh_emit(C, t, "parameter", "0", NULL, NULL);
  const char *b = sh_emit(C, t, "parameter", "1", NULL, NULL);
  sh_emit(C, t, opcode, sh_fmt(C, "%s, %s", a, b), NULL, NULL);
  hlc_text_printf(&C->module, "%s {\n", c->name);
  hlc_text_put(&C->module, c->body.p, c->body.n);
  hlc_text_puts(&C->module, "}\n\n");
  hlc_text_free(&c->body);
  C->cur = saved;
  return c->name;
}

/* The reducer of a reduction-like op: its region (generic, or pretty
 * "reducer(%a: T, %b: T) (%c: T, %d: T) {..}"), or "applies OP". */
static const char *reducer(Lower *C, ShOp *op, int ninputs, ShType *scalar) {
  ShNode *kw = NULL;
  for (ShNode *k = op->node->kids; k; k = k->next)
    if (sh_is(C, k, SH_BAREID, "applies") || sh_is(C, k, SH_BAREID, "reducer")) { kw = k; break; }
  if (kw && sh_is(C, kw, SH_BAREID, "applies")) {
    ShNode *w = kw->next;
    size_t n;
    const char *s = w ? sh_text(C, w, &n) : "";
    int ar;
    const char *opc = w ? sh_elementwise_opcode(s, n, &ar) : NULL;
    if (!opc || ar != 2) sh_fail(C, w ? w : kw, "%.*s: 'applies' needs a binary elementwise op", (int)op->nlen, op->name);
    if (ninputs != 1) sh_fail(C, kw, "%.*s: 'applies' with several inputs", (int)op->nlen, op->name);
    return binary_computation(C, opc, scalar);
  }
  need_regions(C, op, 1);
  if (kw) {
    ShNode *names[256], *pa[128];
    ShType *types[256];
    int np = 0;
    for (ShNode *k = kw->next; k && k->kind == SHN_PAREN && np < 128; k = k->next) pa[np++] = k;
    if (np != ninputs) sh_fail(C, kw, "%.*s: expected %d reducer argument pairs", (int)op->nlen, op->name, ninputs);
    for (int i = 0; i < np; i++) {
      ShNode *nm[2];
      ShType *ty[2];
      if (sh_arg_list(C, pa[i], nm, ty, NULL, 2) != 2) sh_fail(C, pa[i], "expected two reducer arguments");
      names[i] = nm[0]; types[i] = ty[0];
      names[np + i] = nm[1]; types[np + i] = ty[1];
    }
    return sh_region_lower(C, op->regions[0], "region", SHR_PARAMS, names, types, 2 * np, NULL, NULL);
  }
  return sh_region_lower(C, op->regions[0], "region", SHR_PARAMS, NULL, NULL, 0, NULL, NULL);
}

static const char *result_or_tuple(Lower *C, ShOp *op, const char *opcode, const char *attrs) {
  if (op->nresults == 1) return sh_simple(C, op, opcode, attrs);
  ShType *tt = sh_tuple_type(C, op->results, op->nresults);
  const char *t = sh_emit(C, tt, opcode, sh_operand_list(C, op, 0, op->noperands), attrs, op->metadata);
  sh_bind_tuple_results(C, op, t, tt);
  return t;
}

static int op_reduce(Lower *C, ShOp *op) {
  if (op->noperands % 2 || op->noperands == 0) sh_fail(C, op->node, "stablehlo.reduce: expected inputs and as many inits");
  int n = op->noperands / 2;
  int64_t d[SH_MAX_RANK];
  int nd = sh_need_ints(C, op, d, SH_MAX_RANK, "dimensions", NULL);
  const char *body = reducer(C, op, n, op->operands[n]->type);
  result_or_tuple(C, op, "reduce", sh_fmt(C, ", dimensions=%s, to_apply=%s", sh_ints_text(C, d, nd), body));
  return 0;
}

const char *sh_window_text(Lower *C, const int64_t *size, int rank, const int64_t *stride, const int64_t *pad_lo,
                           const int64_t *pad_hi, const int64_t *lhs_dil, const int64_t *rhs_dil, const int64_t *reversal) {
  if (rank == 0) return "{}";
  HlcText b = {0};
  hlc_text_puts(&b, "{size=");
  for (int i = 0; i < rank; i++) hlc_text_printf(&b, "%s%lld", i ? "x" : "", (long long)size[i]);
  hlc_text_puts(&b, " stride=");
  for (int i = 0; i < rank; i++) hlc_text_printf(&b, "%s%lld", i ? "x" : "", (long long)stride[i]);
  hlc_text_puts(&b, " pad=");
  for (int i = 0; i < rank; i++) hlc_text_printf(&b, "%s%lld_%lld", i ? "x" : "", (long long)pad_lo[i], (long long)pad_hi[i]);
  hlc_text_puts(&b, " lhs_dilate=");
  for (int i = 0; i < rank; i++) hlc_text_printf(&b, "%s%lld", i ? "x" : "", (long long)lhs_dil[i]);
  hlc_text_puts(&b, " rhs_dilate=");
  for (int i = 0; i < rank; i++) hlc_text_printf(&b, "%s%lld", i ? "x" : "", (long long)rhs_dil[i]);
  if (reversal) {
    hlc_text_puts(&b, " rhs_reversal=");
    for (int i = 0; i < rank; i++) hlc_text_printf(&b, "%s%lld", i ? "x" : "", (long long)reversal[i]);
  }
  hlc_text_puts(&b, "}");
  const char *r = sh_strdup(C, b.p, b.n);
  hlc_text_free(&b);
  return r;
}

/* window_dimensions, window_strides, base_dilations, window_dilations, padding. */
static const char *window_of(Lower *C, ShOp *op, int rank) {
  int64_t size[SH_MAX_RANK], stride[SH_MAX_RANK], lo[SH_MAX_RANK], hi[SH_MAX_RANK], bd[SH_MAX_RANK], wd[SH_MAX_RANK];
  int64_t pad[2 * SH_MAX_RANK];
  int n = sh_need_ints(C, op, size, SH_MAX_RANK, "window_dimensions", NULL);
  if (n != rank) sh_fail(C, op->node, "%.*s: window_dimensions has %d values; the operand has rank %d", (int)op->nlen, op->name, n, rank);
  for (int i = 0; i < rank; i++) stride[i] = lo[i] = hi[i] = 0, bd[i] = wd[i] = 1, stride[i] = 1;
  int k;
  if ((k = sh_attr_ints(C, op, "window_strides", stride, SH_MAX_RANK)) >= 0 && k != rank) sh_fail(C, op->node, "window_strides: expected %d values", rank);
  if ((k = sh_attr_ints(C, op, "base_dilations", bd, SH_MAX_RANK)) >= 0 && k != rank) sh_fail(C, op->node, "base_dilations: expected %d values", rank);
  if ((k = sh_attr_ints(C, op, "window_dilations", wd, SH_MAX_RANK)) >= 0 && k != rank) sh_fail(C, op->node, "window_dilations: expected %d values", rank);
  if ((k = sh_attr_ints(C, op, "padding", pad, 2 * SH_MAX_RANK)) >= 0) {
    if (k != 2 * rank) sh_fail(C, op->node, "padding: expected %d values", 2 * rank);
    for (int i = 0; i < rank; i++) lo[i] = pad[2 * i], hi[i] = pad[2 * i + 1];
  }
  return sh_window_text(C, size, rank, stride, lo, hi, bd, wd, NULL);
}

static int op_reduce_window(Lower *C, ShOp *op) {
  if (op->noperands % 2 || op->noperands == 0) sh_fail(C, op->node, "reduce_window: expected inputs and as many inits");
  int n = op->noperands / 2;
  const char *win = window_of(C, op, op->operands[0]->type->rank);
  const char *body = reducer(C, op, n, op->operands[n]->type);
  result_or_tuple(C, op, "reduce-window", sh_fmt(C, ", window=%s, to_apply=%s", win, body));
  return 0;
}

static int op_select_and_scatter(Lower *C, ShOp *op) {
  sh_need_operands(C, op, 3);
  need_regions(C, op, 2);
  const char *win = window_of(C, op, op->operands[0]->type->rank);
  const char *sel = sh_region_lower(C, op->regions[0], "region_select", SHR_PARAMS, NULL, NULL, 0, NULL, NULL);
  const char *sc = sh_region_lower(C, op->regions[1], "region_scatter", SHR_PARAMS, NULL, NULL, 0, NULL, NULL);
  sh_simple(C, op, "select-and-scatter", sh_fmt(C, ", window=%s, select=%s, scatter=%s", win, sel, sc));
  return 0;
}

static int op_sort(Lower *C, ShOp *op) {
  need_regions(C, op, 1);
  if (op->noperands < 1) sh_fail(C, op->node, "stablehlo.sort: expected operands");
  int64_t d = sh_attr_int(C, op, "dimension", -1);
  int rank = op->operands[0]->type->rank;
  if (d < 0) d += rank;
  bool stable = sh_attr_bool(C, op, "is_stable", false);
  const char *cmp = sh_region_lower(C, op->regions[0], "region_compare", SHR_PARAMS, NULL, NULL, 0, NULL, NULL);
  result_or_tuple(C, op, "sort", sh_fmt(C, ", dimensions={%lld}%s, to_apply=%s", (long long)d, stable ? ", is_stable=true" : "", cmp));
  return 0;
}

static int op_map(Lower *C, ShOp *op) {
  need_regions(C, op, 1);
  int64_t d[SH_MAX_RANK];
  int nd = sh_need_ints(C, op, d, SH_MAX_RANK, "dimensions", NULL);
  const char *f = sh_region_lower(C, op->regions[0], "region_map", SHR_PARAMS, NULL, NULL, 0, NULL, NULL);
  sh_simple(C, op, "map", sh_fmt(C, ", dimensions=%s, to_apply=%s", sh_ints_text(C, d, nd), f));
  return 0;
}

/* tuple(values..., captures...) */
static const char *state_tuple(Lower *C, Binding **v, int n, const ShCaptures *caps, ShType **tt) {
  ShType **el = hlc_arena_alloc(C->arena, sizeof *el * (size_t)(n + caps->n + 1));
  HlcText ops = {0};
  for (int i = 0; i < n; i++) {
    el[i] = v[i]->type;
    hlc_text_printf(&ops, "%s%s", i ? ", " : "", v[i]->hlo);
  }
  for (int j = 0; j < caps->n; j++) {
    el[n + j] = caps->v[j]->type;
    hlc_text_printf(&ops, "%s%s", n + j ? ", " : "", caps->v[j]->hlo);
  }
  *tt = sh_tuple_type(C, el, n + caps->n);
  const char *t = sh_emit(C, *tt, "tuple", ops.p ? ops.p : "", NULL, NULL);
  hlc_text_free(&ops);
  return t;
}

static int op_while(Lower *C, ShOp *op) {
  need_regions(C, op, 2);
  int n = op->noperands;
  if (op->nresults != n) sh_fail(C, op->node, "stablehlo.while: %d results for %d operands", op->nresults, n);
  ShCaptures caps;
  sh_region_captures(C, op->regions, 2, &caps);
  ShNode **names = NULL;
  ShType **types = NULL;
  if (op->niter_args) {   /* pretty: "(%arg0 = %init, ...)": types are the operands' */
    if (op->niter_args != n) sh_fail(C, op->node, "stablehlo.while: expected one name per operand");
    names = op->iter_args;
    types = hlc_arena_alloc(C->arena, sizeof *types * (size_t)(n + 1));
    for (int i = 0; i < n; i++) types[i] = op->operands[i]->type;
  }
  const char *cond = sh_region_lower(C, op->regions[0], "region_cond", SHR_TUPLE_PARAM, names, types, n, &caps, NULL);
  const char *body = sh_region_lower(C, op->regions[1], "region_body", SHR_TUPLE_PARAM | SHR_PASS_CAPTURES, names,
                                     types, n, &caps, NULL);
  ShType *tt;
  const char *init = state_tuple(C, op->operands, n, &caps, &tt);
  const char *w = sh_emit(C, tt, "while", init, sh_fmt(C, ", condition=%s, body=%s", cond, body), op->metadata);
  for (int i = 0; i < n; i++) {
    const char *g = sh_emit(C, tt->elems[i], "get-tuple-element", w, sh_fmt(C, ", index=%d", i), NULL);
    sh_bind_result(C, op, i, g, tt->elems[i]);
  }
  return 0;
}

/* if (2 regions) and case (N regions): a conditional whose branches take
 * the tuple of captured values. */
static int op_conditional(Lower *C, ShOp *op, bool is_if) {
  if (op->noperands != 1) sh_fail(C, op->node, "%.*s: expected one operand", (int)op->nlen, op->name);
  if (is_if) need_regions(C, op, 2);
  if (op->nregions < 1) sh_fail(C, op->node, "stablehlo.case: expected branches");
  ShCaptures caps;
  sh_region_captures(C, op->regions, op->nregions, &caps);
  const char **br = hlc_arena_alloc(C->arena, sizeof *br * (size_t)op->nregions);
  unsigned fl = SHR_TUPLE_PARAM | (op->nresults == 1 ? 0 : SHR_TUPLE_ROOT);
  for (int i = 0; i < op->nregions; i++)
    br[i] = sh_region_lower(C, op->regions[i], "region_branch", fl, NULL, NULL, 0, &caps, NULL);
  ShType *argt;
  const char *arg = state_tuple(C, NULL, 0, &caps, &argt);
  HlcText ops = {0};
  hlc_text_puts(&ops, op->operands[0]->hlo);
  for (int i = 0; i < op->nregions; i++) hlc_text_printf(&ops, ", %s", arg);
  const char *attrs;
  if (is_if) {
    attrs = sh_fmt(C, ", true_computation=%s, false_computation=%s", br[0], br[1]);
  } else {
    HlcText b = {0};
    hlc_text_puts(&b, ", branch_computations={");
    for (int i = 0; i < op->nregions; i++) hlc_text_printf(&b, "%s%s", i ? ", " : "", br[i]);
    hlc_text_puts(&b, "}");
    attrs = sh_strdup(C, b.p, b.n);
    hlc_text_free(&b);
  }
  ShType *rt = op->nresults == 1 ? op->results[0] : sh_tuple_type(C, op->results, op->nresults);
  const char *c = sh_emit(C, rt, "conditional", ops.p, attrs, op->metadata);
  hlc_text_free(&ops);
  if (op->nresults == 1) sh_bind_result(C, op, 0, c, rt);
  else sh_bind_tuple_results(C, op, c, rt);
  return 0;
}

int sh_lower_region_op(Lower *C, ShOp *op) {
  if (is(op, "stablehlo.reduce")) return op_reduce(C, op);
  if (is(op, "stablehlo.reduce_window")) return op_reduce_window(C, op);
  if (is(op, "stablehlo.select_and_scatter")) return op_select_and_scatter(C, op);
  if (is(op, "stablehlo.sort")) return op_sort(C, op);
  if (is(op, "stablehlo.map")) return op_map(C, op);
  if (is(op, "stablehlo.while")) return op_while(C, op);
  if (is(op, "stablehlo.if")) return op_conditional(C, op, true);
  if (is(op, "stablehlo.case")) return op_conditional(C, op, false);
  return sh_lower_index_op(C, op);
}
