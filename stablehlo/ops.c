/* ops.c: the op table, and the ops without regions (elementwise, shapes,
 * indexing, linear algebra). Each translates as XLA's StableHLO -> HLO
 * translation does (xla/hlo/translate/mhlo_to_hlo): the same HLO opcode and
 * attributes, in XLA's HLO text syntax. Attributes are read in both the
 * pretty ("dims = [1, 0]") and the generic ("permutation = array<i64: 1, 0>")
 * spelling.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stablehlo/lower.h"
#include "stablehlo/ops.h"
#include "stablehlo/mlir.h"

const char *sh_ints_text(Lower *C, const int64_t *v, int n) {
  HlcText b = {0};
  hlc_text_puts(&b, "{");
  for (int i = 0; i < n; i++) hlc_text_printf(&b, "%s%lld", i ? "," : "", (long long)v[i]);
  hlc_text_puts(&b, "}");
  const char *r = sh_strdup(C, b.p, b.n);
  hlc_text_free(&b);
  return r;
}

/* The integer list of the first attribute present among keys (NULL-ended). */
int sh_ints_of(Lower *C, ShOp *op, int64_t *v, int max, const char *k1, const char *k2) {
  int n = sh_attr_ints(C, op, k1, v, max);
  if (n < 0 && k2) n = sh_attr_ints(C, op, k2, v, max);
  return n;
}

int sh_need_ints(Lower *C, ShOp *op, int64_t *v, int max, const char *k1, const char *k2) {
  int n = sh_ints_of(C, op, v, max, k1, k2);
  if (n < 0) sh_fail(C, op->node, "%.*s: missing attribute %s", (int)op->nlen, op->name, k1);
  return n;
}

void sh_need_operands(Lower *C, ShOp *op, int n) {
  if (op->noperands != n)
    sh_fail(C, op->node, "%.*s: expected %d operands, got %d", (int)op->nlen, op->name, n, op->noperands);
  if (op->nresults < 1) sh_fail(C, op->node, "%.*s: expected a result", (int)op->nlen, op->name);
}

/* One instruction over all operands, bound to result 0. */
const char *sh_simple(Lower *C, ShOp *op, const char *opcode, const char *attrs) {
  if (op->nresults != 1) sh_fail(C, op->node, "%.*s: expected one result", (int)op->nlen, op->name);
  const char *n = sh_emit(C, op->results[0], opcode, sh_operand_list(C, op, 0, op->noperands), attrs, op->metadata);
  sh_bind_result(C, op, 0, n, op->results[0]);
  return n;
}

/* ---- Elementwise ------------------------------------------------------------------ */

static const struct { const char *mlir; const char *hlo; int arity; } elementwise[] = {
  {"abs", "abs", 1}, {"cbrt", "cbrt", 1}, {"ceil", "ceil", 1}, {"convert", "convert", 1},
  {"cosine", "cosine", 1}, {"count_leading_zeros", "count-leading-zeros", 1}, {"exponential", "exponential", 1},
  {"exponential_minus_one", "exponential-minus-one", 1}, {"floor", "floor", 1}, {"imag", "imag", 1},
  {"is_finite", "is-finite", 1}, {"log", "log", 1}, {"log_plus_one", "log-plus-one", 1},
  {"logistic", "logistic", 1}, {"not", "not", 1}, {"negate", "negate", 1}, {"popcnt", "popcnt", 1},
  {"real", "real", 1}, {"round_nearest_afz", "round-nearest-afz", 1}, {"round_nearest_even", "round-nearest-even", 1},
  {"rsqrt", "rsqrt", 1}, {"sign", "sign", 1}, {"sine", "sine", 1}, {"sqrt", "sqrt", 1}, {"tan", "tan", 1},
  {"tanh", "tanh", 1}, {"bitcast_convert", "bitcast-convert", 1}, {"erf", "erf", 1},
  {"add", "add", 2}, {"subtract", "subtract", 2}, {"multiply", "multiply", 2}, {"divide", "divide", 2},
  {"remainder", "remainder", 2}, {"power", "power", 2}, {"maximum", "maximum", 2}, {"minimum", "minimum", 2},
  {"and", "and", 2}, {"or", "or", 2}, {"xor", "xor", 2}, {"shift_left", "shift-left", 2},
  {"shift_right_arithmetic", "shift-right-arithmetic", 2}, {"shift_right_logical", "shift-right-logical", 2},
  {"atan2", "atan2", 2}, {"complex", "complex", 2}, {"clamp", "clamp", 3},
};

const char *sh_elementwise_opcode(const char *name, size_t n, int *arity) {
  const char *dot = memchr(name, '.', n);
  if (!dot) return NULL;
  size_t dl = (size_t)(dot - name);
  if (!((dl == 9 && memcmp(name, "stablehlo", 9) == 0) || (dl == 4 && memcmp(name, "mhlo", 4) == 0))) return NULL;
  const char *w = dot + 1;
  size_t wl = n - dl - 1;
  for (size_t i = 0; i < sizeof elementwise / sizeof *elementwise; i++)
    if (strlen(elementwise[i].mlir) == wl && memcmp(elementwise[i].mlir, w, wl) == 0) {
      if (arity) *arity = elementwise[i].arity;
      return elementwise[i].hlo;
    }
  return NULL;
}

static int op_elementwise(Lower *C, ShOp *op, const char *opcode, int arity) {
  sh_need_operands(C, op, arity);
  sh_simple(C, op, opcode, NULL);
  return 0;
}

/* ---- Ops without regions ---------------------------------------------------------- */

static int op_constant(Lower *C, ShOp *op) {
  ShNode *d = NULL;
  ShAttr *a = sh_attr(op, "value");
  if (a) d = a->val;
  for (ShNode *k = op->node->kids; !d && k; k = k->next)
    if (sh_is(C, k, SH_BAREID, "dense")) d = k;
  if (!d || !sh_is(C, d, SH_BAREID, "dense") || !d->next || d->next->kind != SHN_ANGLE) {
    if (d && sh_is(C, d, SH_BAREID, "dense_resource")) sh_fail(C, d, "dense_resource constants are not supported");
    sh_fail(C, op->node, "stablehlo.constant: expected a dense<...> value");
  }
  if (op->nresults != 1) sh_fail(C, op->node, "stablehlo.constant: expected one result");
  const char *name = sh_emit_constant(C, d->next, op->results[0], op->metadata);
  Binding *b = sh_bind_result(C, op, 0, name, op->results[0]);
  if (b) {
    b->const_rhs = C->last_const_rhs;
    b->const_dense = d;
  }
  return 0;
}

const char *sh_emit_constant(Lower *C, ShNode *angle, ShType *t, const char *metadata) {
  HlcText lit = {0};
  bool splat;
  sh_dense_literal(C, angle, t, &lit, &splat);
  if (lit.oom) sh_fail_off(C, 0, "out of memory");
  ShType *st = splat ? sh_scalar_type(C, t->dt) : t;
  HlcText rhs = {0};
  sh_put_type(&rhs, st);
  hlc_text_printf(&rhs, " constant(%s)", lit.p ? lit.p : "{}");
  hlc_text_free(&lit);
  if (rhs.oom) sh_fail_off(C, 0, "out of memory");
  const char *name = sh_fmt(C, "constant.%d", ++C->counter);
  sh_emit_line(C, name, rhs.p);
  /* small constants are copied into regions that use them */
  C->last_const_rhs = !splat && rhs.n < 4096 ? sh_strdup(C, rhs.p, rhs.n) : NULL;
  hlc_text_free(&rhs);
  if (!splat) return name;
  return sh_emit(C, t, "broadcast", name, ", dimensions={}", metadata);
}

/* A required integer attribute, written `key` in the generic form or `alt`
 * in the pretty one (NULL: none): a missing one is an error, never a default. */
static int64_t need_int(Lower *C, ShOp *op, const char *key, const char *alt) {
  if (!sh_attr(op, key) && !(alt && sh_attr(op, alt)))
    sh_fail(C, op->node, "%.*s: missing attribute %s", (int)op->nlen, op->name, key);
  return sh_attr(op, key) ? sh_attr_int(C, op, key, 0) : sh_attr_int(C, op, alt, 0);
}

static int op_iota(Lower *C, ShOp *op) {
  int64_t d = need_int(C, op, "iota_dimension", "dim");
  if (op->nresults != 1) sh_fail(C, op->node, "iota: expected one result");
  const char *n = sh_emit(C, op->results[0], "iota", "", sh_fmt(C, ", iota_dimension=%lld", (long long)d), op->metadata);
  sh_bind_result(C, op, 0, n, op->results[0]);
  return 0;
}

static int op_dims(Lower *C, ShOp *op, const char *opcode, const char *k1, const char *k2) {
  int64_t v[SH_MAX_RANK];
  int n = sh_need_ints(C, op, v, SH_MAX_RANK, k1, k2);
  sh_need_operands(C, op, 1);
  sh_simple(C, op, opcode, sh_fmt(C, ", dimensions=%s", sh_ints_text(C, v, n)));
  return 0;
}

/* broadcast_in_dim may stretch a dimension of size 1, HLO's broadcast may
 * not: such dimensions are reshaped away first (as XLA's BroadcastInDim does). */
static int op_broadcast_in_dim(Lower *C, ShOp *op) {
  int64_t v[SH_MAX_RANK];
  int n = sh_need_ints(C, op, v, SH_MAX_RANK, "broadcast_dimensions", "dims");
  sh_need_operands(C, op, 1);
  ShType *ot = op->operands[0]->type, *rt = op->results[0];
  if (n != ot->rank) sh_fail(C, op->node, "broadcast_in_dim: %d dimensions for an operand of rank %d", n, ot->rank);
  int64_t keep[SH_MAX_RANK];
  int nk = 0;
  ShType *rs = hlc_arena_memdup(C->arena, ot, sizeof *ot);
  rs->rank = 0;
  for (int i = 0; i < n; i++) {
    if (v[i] < 0 || v[i] >= rt->rank) sh_fail(C, op->node, "broadcast_in_dim: dimension %lld out of range", (long long)v[i]);
    if (ot->dims[i] == 1 && rt->dims[v[i]] != 1) continue;
    keep[nk++] = v[i];
    rs->dims[rs->rank++] = ot->dims[i];
  }
  if (nk != n) {
    const char *r = sh_emit(C, rs, "reshape", op->operands[0]->hlo, NULL, NULL);
    op->operands[0] = sh_bind(C, "", 0, r, rs);
  }
  sh_simple(C, op, "broadcast", sh_fmt(C, ", dimensions=%s", sh_ints_text(C, keep, nk)));
  return 0;
}

static int op_compare(Lower *C, ShOp *op) {
  sh_need_operands(C, op, 2);
  const char *dir = sh_attr_word(C, op, "comparison_direction");
  const char *type = sh_attr_word(C, op, "compare_type");
  /* pretty: "stablehlo.compare LT, %a, %b[, TYPE]" */
  for (ShNode *k = op->node->kids; k; k = k->next) {
    if (sh_is(C, k, SH_COLON, NULL)) break;
    if (!sh_is(C, k, SH_BAREID, NULL)) continue;
    size_t n;
    const char *s = sh_text(C, k, &n);
    if (!dir) dir = sh_strdup(C, s, n);
    else if (!type) type = sh_strdup(C, s, n);
  }
  if (!dir) sh_fail(C, op->node, "stablehlo.compare: missing comparison_direction");
  const char *ok[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
  bool good = false;
  for (int i = 0; i < 6; i++) good |= strcmp(dir, ok[i]) == 0;
  if (!good) sh_fail(C, op->node, "stablehlo.compare: unknown comparison direction %s", dir);
  const char *attrs = sh_fmt(C, ", direction=%s%s", dir, type && strcmp(type, "TOTALORDER") == 0 ? ", type=TOTALORDER" : "");
  sh_simple(C, op, "compare", attrs);
  return 0;
}

static int op_select(Lower *C, ShOp *op) {
  sh_need_operands(C, op, 3);
  Binding *p = op->operands[0];
  ShType *rt = op->results[0];
  if (p->type->rank == 0 && rt->kind == SHT_TENSOR && rt->rank > 0) {   /* a scalar predicate, broadcast as XLA's builder does */
    ShType *bt = hlc_arena_memdup(C->arena, rt, sizeof *rt);
    bt->dt = HLO_PRED;
    const char *b = sh_emit(C, bt, "broadcast", p->hlo, ", dimensions={}", NULL);
    op->operands[0] = sh_bind(C, "", 0, b, bt);
  }
  sh_simple(C, op, "select", NULL);
  return 0;
}

static int op_slice(Lower *C, ShOp *op) {
  sh_need_operands(C, op, 1);
  int64_t st[SH_MAX_RANK], li[SH_MAX_RANK], sd[SH_MAX_RANK];
  int rank = op->operands[0]->type->rank;
  int n1 = sh_attr_ints(C, op, "start_indices", st, SH_MAX_RANK);
  if (n1 >= 0) {
    int n2 = sh_attr_ints(C, op, "limit_indices", li, SH_MAX_RANK);
    int n3 = sh_attr_ints(C, op, "strides", sd, SH_MAX_RANK);
    if (n3 < 0) { for (int i = 0; i < rank; i++) sd[i] = 1; n3 = rank; }
    if (n1 != rank || n2 != rank || n3 != rank) sh_fail(C, op->node, "stablehlo.slice: expected %d start/limit/stride values", rank);
  } else {   /* pretty: %x [0:2, 1:4:2] */
    ShNode *br = NULL;
    for (ShNode *k = op->node->kids; k && !br; k = k->next)
      if (k->kind == SHN_BRACKET) br = k;
    if (!br) sh_fail(C, op->node, "stablehlo.slice: missing start_indices");
    int d = 0;
    for (ShNode *k = br->kids; k;) {
      if (d >= rank) sh_fail(C, k, "stablehlo.slice: more ranges than dimensions");
      int64_t v[3] = {0, 0, 1};
      int nv = 0;
      while (k && !sh_is(C, k, SH_COMMA, NULL)) {
        if (sh_is(C, k, SH_INT, NULL) && nv < 3) v[nv++] = strtoll(C->src + k->tok.off, NULL, 10);
        else if (!sh_is(C, k, SH_COLON, NULL)) sh_fail(C, k, "stablehlo.slice: expected start:limit[:stride]");
        k = k->next;
      }
      if (nv < 2) sh_fail(C, br, "stablehlo.slice: expected start:limit[:stride]");
      st[d] = v[0]; li[d] = v[1]; sd[d] = v[2];
      d++;
      if (k) k = k->next;
    }
    if (d != rank) sh_fail(C, br, "stablehlo.slice: expected %d ranges", rank);
  }
  HlcText b = {0};
  hlc_text_puts(&b, ", slice={");
  for (int i = 0; i < rank; i++)
    hlc_text_printf(&b, "%s[%lld:%lld:%lld]", i ? ", " : "", (long long)st[i], (long long)li[i], (long long)sd[i]);
  hlc_text_puts(&b, "}");
  sh_simple(C, op, "slice", sh_strdup(C, b.p, b.n));
  hlc_text_free(&b);
  return 0;
}

static int op_dynamic_slice(Lower *C, ShOp *op) {
  int64_t v[SH_MAX_RANK];
  int n = sh_need_ints(C, op, v, SH_MAX_RANK, "slice_sizes", "sizes");
  sh_simple(C, op, "dynamic-slice", sh_fmt(C, ", dynamic_slice_sizes=%s", sh_ints_text(C, v, n)));
  return 0;
}

static int op_concatenate(Lower *C, ShOp *op) {
  int64_t d = sh_attr_int(C, op, "dimension", sh_attr_int(C, op, "dim", -1));
  if (d < 0) sh_fail(C, op->node, "stablehlo.concatenate: missing dimension");
  sh_simple(C, op, "concatenate", sh_fmt(C, ", dimensions={%lld}", (long long)d));
  return 0;
}

static bool is(const ShOp *op, const char *w) {
  size_t n = strlen(w);
  if (op->nlen == n && memcmp(op->name, w, n) == 0) return true;
  /* the same op in mhlo */
  if (n > 10 && memcmp(w, "stablehlo.", 10) == 0 && op->nlen == n - 5 && memcmp(op->name, "mhlo.", 5) == 0 &&
      memcmp(op->name + 5, w + 10, n - 10) == 0)
    return true;
  return false;
}

static int op_pad(Lower *C, ShOp *op) {
  int64_t lo[SH_MAX_RANK], hi[SH_MAX_RANK], in[SH_MAX_RANK];
  int n1, n2, n3;
  if (is(op, "stablehlo.dynamic_pad")) {   /* the paddings as operands 2-4, refined when constant */
    int rank = op->noperands >= 1 ? op->operands[0]->type->rank : 0;
    int64_t *dst[3] = {lo, hi, in};
    static const char *const what[3] = {"edge_padding_low", "edge_padding_high", "interior_padding"};
    for (int i = 0; i < 3; i++)
      if (op->noperands != 5 || sh_const_ints(C, op->operands[2 + i], dst[i], rank) != rank)
        sh_fail(C, op->node, "stablehlo.dynamic_pad: its %s must be a constant of %d integers (XLA refines only "
                "that to a static pad)", what[i], rank);
    op->noperands = 2;
    n1 = n2 = n3 = rank;
  } else {
    sh_need_operands(C, op, 2);
    n1 = sh_need_ints(C, op, lo, SH_MAX_RANK, "edge_padding_low", "low");
    n2 = sh_need_ints(C, op, hi, SH_MAX_RANK, "edge_padding_high", "high");
    n3 = sh_need_ints(C, op, in, SH_MAX_RANK, "interior_padding", "interior");
  }
  int rank = op->operands[0]->type->rank;
  if (n1 != rank || n2 != rank || n3 != rank) sh_fail(C, op->node, "stablehlo.pad: expected %d values per padding", rank);
  HlcText b = {0};
  hlc_text_puts(&b, ", padding=");
  for (int i = 0; i < rank; i++)
    hlc_text_printf(&b, "%s%lld_%lld_%lld", i ? "x" : "", (long long)lo[i], (long long)hi[i], (long long)in[i]);
  if (rank == 0) hlc_text_puts(&b, "{}");
  sh_simple(C, op, "pad", sh_strdup(C, b.p, b.n));
  hlc_text_free(&b);
  return 0;
}

/* "batching_dims = [0] x [0]" (pretty dot_general): the two lists. */
static void pair_lists(Lower *C, ShOp *op, const char *key, int64_t *l, int *nl, int64_t *r, int *nr) {
  *nl = *nr = 0;
  ShAttr *a = sh_attr(op, key);
  if (!a) return;
  ShNode *v = a->val;
  if (!v || v->kind != SHN_BRACKET || !v->next || !sh_is(C, v->next, SH_BAREID, "x") || !v->next->next)
    sh_fail(C, op->node, "%.*s: %s: expected [..] x [..]", (int)op->nlen, op->name, key);
  sh_int_list(C, v, l, SH_MAX_RANK, nl);
  sh_int_list(C, v->next->next, r, SH_MAX_RANK, nr);
}

/* Fields "name = [..]" inside #stablehlo.xxx<...>. */
int sh_struct_ints(Lower *C, ShAttr *a, const char *field, int64_t *v, int max) {
  if (!a || !a->val || !a->val->next || a->val->next->kind != SHN_ANGLE) return -1;
  size_t fl = strlen(field);
  for (ShNode *k = a->val->next->kids; k; k = k->next) {
    size_t n;
    const char *s = sh_text(C, k, &n);
    if (k->kind == SHN_TOKEN && k->tok.kind == SH_ATTRKEY && n == fl && memcmp(s, field, n) == 0 && k->next &&
        k->next->next) {
      int cnt;
      sh_int_list(C, k->next->next, v, max, &cnt);
      return cnt;
    }
  }
  return 0;
}

static int op_dot_general(Lower *C, ShOp *op) {
  sh_need_operands(C, op, 2);
  int64_t lb[SH_MAX_RANK], rb[SH_MAX_RANK], lc[SH_MAX_RANK], rc[SH_MAX_RANK];
  int nlb, nrb, nlc, nrc;
  ShAttr *dn = sh_attr(op, "dot_dimension_numbers");
  if (dn) {
    nlb = sh_struct_ints(C, dn, "lhs_batching_dimensions", lb, SH_MAX_RANK);
    nrb = sh_struct_ints(C, dn, "rhs_batching_dimensions", rb, SH_MAX_RANK);
    nlc = sh_struct_ints(C, dn, "lhs_contracting_dimensions", lc, SH_MAX_RANK);
    nrc = sh_struct_ints(C, dn, "rhs_contracting_dimensions", rc, SH_MAX_RANK);
    if (nlb < 0) nlb = nrb = nlc = nrc = 0;
  } else {
    pair_lists(C, op, "batching_dims", lb, &nlb, rb, &nrb);
    pair_lists(C, op, "contracting_dims", lc, &nlc, rc, &nrc);
  }
  HlcText b = {0};
  if (nlb) hlc_text_printf(&b, ", lhs_batch_dims=%s", sh_ints_text(C, lb, nlb));
  hlc_text_printf(&b, ", lhs_contracting_dims=%s", sh_ints_text(C, lc, nlc));
  if (nrb) hlc_text_printf(&b, ", rhs_batch_dims=%s", sh_ints_text(C, rb, nrb));
  hlc_text_printf(&b, ", rhs_contracting_dims=%s", sh_ints_text(C, rc, nrc));
  sh_simple(C, op, "dot", sh_strdup(C, b.p, b.n));
  hlc_text_free(&b);
  return 0;
}

static int op_dot(Lower *C, ShOp *op) {
  sh_need_operands(C, op, 2);
  int lr = op->operands[0]->type->rank;
  sh_simple(C, op, "dot", sh_fmt(C, ", lhs_contracting_dims={%d}, rhs_contracting_dims={0}", lr > 0 ? lr - 1 : 0));
  return 0;
}

static int op_get_tuple_element(Lower *C, ShOp *op) {
  sh_need_operands(C, op, 1);
  int64_t idx = sh_attr_int(C, op, "index", -1);
  if (idx < 0)
    for (ShNode *k = op->node->kids; k; k = k->next)
      if (k->kind == SHN_BRACKET && k->kids && sh_is(C, k->kids, SH_INT, NULL)) idx = strtoll(C->src + k->kids->tok.off, NULL, 10);
  if (idx < 0) sh_fail(C, op->node, "get_tuple_element: missing index");
  sh_simple(C, op, "get-tuple-element", sh_fmt(C, ", index=%lld", (long long)idx));
  return 0;
}

static int op_multi(Lower *C, ShOp *op, const char *opcode, const char *attrs) {
  ShType *tt = sh_tuple_type(C, op->results, op->nresults);
  const char *t = sh_emit(C, tt, opcode, sh_operand_list(C, op, 0, op->noperands), attrs, op->metadata);
  sh_bind_tuple_results(C, op, t, tt);
  return 0;
}

static int op_reduce_precision(Lower *C, ShOp *op) {
  sh_need_operands(C, op, 1);
  int64_t e = sh_attr_int(C, op, "exponent_bits", -1), m = sh_attr_int(C, op, "mantissa_bits", -1);
  ShAttr *f = sh_attr(op, "format");   /* pretty: format = e5m10 */
  if (f && f->val) {
    size_t n;
    const char *s = sh_text(C, f->val, &n);
    char tmp[32];
    snprintf(tmp, sizeof tmp, "%.*s", (int)(n < 31 ? n : 31), s);
    long long ee, mm;
    if (sscanf(tmp, "e%lldm%lld", &ee, &mm) == 2) { e = ee; m = mm; }
  }
  if (e < 0 || m < 0) sh_fail(C, op->node, "reduce_precision: missing exponent_bits/mantissa_bits");
  sh_simple(C, op, "reduce-precision", sh_fmt(C, ", exponent_bits=%lld, mantissa_bits=%lld", (long long)e, (long long)m));
  return 0;
}

static int op_triangular_solve(Lower *C, ShOp *op) {
  sh_need_operands(C, op, 2);
  const char *tr = sh_attr_word(C, op, "transpose_a");
  sh_simple(C, op, "triangular-solve",
            sh_fmt(C, ", left_side=%s, lower=%s, unit_diagonal=%s, transpose_a=%s",
                   sh_attr_bool(C, op, "left_side", false) ? "true" : "false",
                   sh_attr_bool(C, op, "lower", false) ? "true" : "false",
                   sh_attr_bool(C, op, "unit_diagonal", false) ? "true" : "false", tr ? tr : "NO_TRANSPOSE"));
  return 0;
}

static int op_cholesky(Lower *C, ShOp *op) {
  sh_need_operands(C, op, 1);
  sh_simple(C, op, "cholesky", sh_fmt(C, ", lower=%s", sh_attr_bool(C, op, "lower", false) ? "true" : "false"));
  return 0;
}

static int op_fft(Lower *C, ShOp *op) {
  sh_need_operands(C, op, 1);
  const char *t = sh_attr_word(C, op, "fft_type");
  if (!t) t = sh_attr_word(C, op, "type");
  int64_t v[8];
  int n = sh_need_ints(C, op, v, 8, "fft_length", "length");
  if (!t) sh_fail(C, op->node, "fft: missing fft_type");
  sh_simple(C, op, "fft", sh_fmt(C, ", fft_type=%s, fft_length=%s", t, sh_ints_text(C, v, n)));
  return 0;
}

static int op_rng_bit_generator(Lower *C, ShOp *op) {
  const char *alg = sh_attr_word(C, op, "rng_algorithm");
  if (!alg) alg = sh_attr_word(C, op, "algorithm");
  const char *a = !alg || strcmp(alg, "DEFAULT") == 0 ? "rng_default"
                  : strcmp(alg, "THREE_FRY") == 0 ? "rng_three_fry" : strcmp(alg, "PHILOX") == 0 ? "rng_philox" : NULL;
  if (!a) sh_fail(C, op->node, "rng_bit_generator: unknown algorithm %s", alg);
  return op_multi(C, op, "rng-bit-generator", sh_fmt(C, ", algorithm=%s", a));
}

static int op_rng(Lower *C, ShOp *op) {
  const char *d = sh_attr_word(C, op, "rng_distribution");
  if (!d) d = sh_attr_word(C, op, "distribution");
  if (!d) sh_fail(C, op->node, "rng: missing rng_distribution");
  sh_simple(C, op, "rng", sh_fmt(C, ", distribution=%s", strcmp(d, "NORMAL") == 0 ? "rng_normal" : "rng_uniform"));
  return 0;
}

static int op_batch_norm(Lower *C, ShOp *op, const char *opcode) {
  ShAttr *e = sh_attr(op, "epsilon");
  if (!e || !e->val) sh_fail(C, op->node, "%.*s: missing epsilon", (int)op->nlen, op->name);
  size_t n;
  const char *es = sh_text(C, e->val, &n);
  const char *attrs = sh_fmt(C, ", epsilon=%.*s, feature_index=%lld", (int)n, es,
                             (long long)need_int(C, op, "feature_index", NULL));
  if (op->nresults == 1) sh_simple(C, op, opcode, attrs);
  else op_multi(C, op, opcode, attrs);
  return 0;
}

static int op_get_dimension_size(Lower *C, ShOp *op) {
  sh_need_operands(C, op, 1);
  sh_simple(C, op, "get-dimension-size", sh_fmt(C, ", dimensions={%lld}", (long long)need_int(C, op, "dimension", "dim")));
  return 0;
}


/* chlo.top_k(%x, k = K) (pretty: k inside the operand list) or
 * "chlo.top_k"(%x) {k = K}: the K largest along the last dimension and
 * their indices, as XLA lowers it (HLO topk, largest=true). */
static int op_top_k(Lower *C, ShOp *op) {
  sh_need_operands(C, op, 1);
  if (op->nresults != 2) sh_fail(C, op->node, "chlo.top_k: expected two results (values, indices)");
  int64_t k = sh_attr_int(C, op, "k", -1);
  for (ShNode *p = op->node->kids; p && k < 0; p = p->next)
    if (p->kind == SHN_PAREN)
      for (ShNode *x = p->kids; x && x->next && x->next->next && k < 0; x = x->next)
        if (sh_is(C, x, SH_ATTRKEY, "k") && sh_is(C, x->next, SH_EQ, NULL) && sh_is(C, x->next->next, SH_INT, NULL))
          k = strtoll(C->src + x->next->next->tok.off, NULL, 10);
  if (k < 0) sh_fail(C, op->node, "chlo.top_k: missing k");
  return op_multi(C, op, "topk", sh_fmt(C, ", k=%lld, largest=true", (long long)k));
}

/* sdy.sharding_constraint %x <@mesh, [...]> (pretty) or its generic form
 * {sharding = #sdy.sharding<...>}. */
static int op_sdy_constraint(Lower *C, ShOp *op) {
  sh_need_operands(C, op, 1);
  const ShNode *angle = NULL;
  ShAttr *a = sh_attr(op, "sharding");
  if (a && sh_is(C, a->val, SH_HASHID, "#sdy.sharding") && a->val->next && a->val->next->kind == SHN_ANGLE)
    angle = a->val->next;
  for (ShNode *k = op->node->kids; k && !angle && !a; k = k->next)
    if (k->kind == SHN_ANGLE && k->kids && sh_is(C, k->kids, SH_SYMBOL, NULL)) angle = k;
  if (!angle) sh_fail(C, op->node, "%.*s: expected a sharding <@mesh, [...]>", (int)op->nlen, op->name);
  const char *sh = sh_sdy_sharding(C, angle, op->operands[0]->type);
  sh_simple(C, op, "custom-call", sh_fmt(C, ", custom_call_target=\"Sharding\", sharding=%s", sh));
  return 0;
}

int sh_lower_op(Lower *C, ShOp *op) {
  int arity;
  const char *ew = sh_elementwise_opcode(op->name, op->nlen, &arity);
  if (ew) return op_elementwise(C, op, ew, arity);
  if (op->nlen > 5 && memcmp(op->name, "chlo.", 5) == 0 && sh_lower_chlo_op(C, op) == 0) return 0;
  if (is(op, "chlo.top_k")) return op_top_k(C, op);
  if (is(op, "interpreter.run_parallel")) return sh_lower_parallel_op(C, op);
  if (sh_lower_collective_op(C, op) == 0) return 0;
  if (is(op, "stablehlo.constant")) return op_constant(C, op);
  if (is(op, "stablehlo.iota")) return op_iota(C, op);
  if (is(op, "stablehlo.broadcast_in_dim")) return op_broadcast_in_dim(C, op);
  if (is(op, "stablehlo.transpose")) return op_dims(C, op, "transpose", "permutation", "dims");
  if (is(op, "stablehlo.reverse")) return op_dims(C, op, "reverse", "dimensions", "dims");
  if (is(op, "stablehlo.reshape")) { sh_need_operands(C, op, 1); sh_simple(C, op, "reshape", NULL); return 0; }
  if (is(op, "stablehlo.compare")) return op_compare(C, op);
  if (is(op, "stablehlo.select")) return op_select(C, op);
  if (is(op, "stablehlo.slice")) return op_slice(C, op);
  if (is(op, "stablehlo.dynamic_slice")) return op_dynamic_slice(C, op);
  if (is(op, "stablehlo.dynamic_update_slice")) { sh_simple(C, op, "dynamic-update-slice", NULL); return 0; }
  if (is(op, "stablehlo.concatenate")) return op_concatenate(C, op);
  if (is(op, "stablehlo.pad") || is(op, "stablehlo.dynamic_pad")) return op_pad(C, op);
  if (is(op, "stablehlo.dot_general")) return op_dot_general(C, op);
  if (is(op, "stablehlo.dot")) return op_dot(C, op);
  if (is(op, "stablehlo.tuple")) { sh_simple(C, op, "tuple", NULL); return 0; }
  if (is(op, "stablehlo.get_tuple_element")) return op_get_tuple_element(C, op);
  if (is(op, "stablehlo.optimization_barrier")) {
    if (op->nresults == 1 && op->results[0]->kind == SHT_TUPLE) { sh_simple(C, op, "opt-barrier", NULL); return 0; }
    ShType *tt = sh_tuple_type(C, op->results, op->nresults);
    const char *t = sh_emit(C, tt, "tuple", sh_operand_list(C, op, 0, op->noperands), NULL, NULL);
    const char *b = sh_emit(C, tt, "opt-barrier", t, NULL, op->metadata);
    sh_bind_tuple_results(C, op, b, tt);
    return 0;
  }
  /* A sharding constraint is an annotation: XLA's Sharding custom call. */
  if (is(op, "sdy.sharding_constraint") || is(op, "sdy.reshard")) return op_sdy_constraint(C, op);
  if (is(op, "stablehlo.reduce_precision")) return op_reduce_precision(C, op);
  if (is(op, "stablehlo.triangular_solve")) return op_triangular_solve(C, op);
  if (is(op, "stablehlo.cholesky")) return op_cholesky(C, op);
  if (is(op, "stablehlo.fft")) return op_fft(C, op);
  if (is(op, "stablehlo.rng_bit_generator")) return op_rng_bit_generator(C, op);
  if (is(op, "stablehlo.rng")) return op_rng(C, op);
  if (is(op, "stablehlo.batch_norm_inference")) return op_batch_norm(C, op, "batch-norm-inference");
  if (is(op, "stablehlo.batch_norm_training")) return op_batch_norm(C, op, "batch-norm-training");
  if (is(op, "stablehlo.batch_norm_grad")) return op_batch_norm(C, op, "batch-norm-grad");
  if (is(op, "stablehlo.get_dimension_size")) return op_get_dimension_size(C, op);
  if (is(op, "stablehlo.replica_id")) { sh_simple(C, op, "replica-id", NULL); return 0; }
  if (is(op, "stablehlo.partition_id")) { sh_simple(C, op, "partition-id", NULL); return 0; }
  if (is(op, "stablehlo.after_all") || is(op, "stablehlo.create_token")) { sh_simple(C, op, "after-all", NULL); return 0; }
  /* static forms of the dynamic ops (XLA refines them when the result shape is static) */
  if (is(op, "stablehlo.dynamic_iota")) { op->noperands = 0; return op_iota(C, op); }
  if (is(op, "stablehlo.dynamic_reshape")) { op->noperands = 1; sh_simple(C, op, "reshape", NULL); return 0; }
  if (is(op, "stablehlo.dynamic_broadcast_in_dim")) {
    op->noperands = 1;
    return op_broadcast_in_dim(C, op);
  }
  return sh_lower_region_op(C, op);
}
