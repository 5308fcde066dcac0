/* lower.c: syntax tree -> IR. Resolves computation and instruction names,
 * operands (with optional shapes and nested anonymous instructions),
 * parameter numbers, ROOT/ENTRY, signatures, async "-start/-update/-done"
 * sugar, and omitted result shapes. Attributes are lowered by attrs.c and
 * constant bodies by literal.c; names are looked up in names.c's tables.
 * Stops at the first error.
 */
#include "parser/syntax.h"
#include "hlo.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const signed char opcode_arity[HLO_NUM_OPCODES] = {
#define OPCODE(id, text, arity, shape_opt) arity,
#include "ir/opcodes.def"
#undef OPCODE
};
static const bool opcode_shape_opt[HLO_NUM_OPCODES] = {
#define OPCODE(id, text, arity, shape_opt) shape_opt,
#include "ir/opcodes.def"
#undef OPCODE
};

typedef struct Ctx {
  HlpParser *P;
  HlpNames *comps;
  HlpNames instrs;     /* of the computation being lowered */
  HlpList list;       /* HloInstr* in order */
  HloComputation *comp;
  int depth;
  struct Ctx *outer;
} Ctx;


/* Bare name of a name-like token text: strips '%' and a trailing ':' or '='
 * (with blanks before it). */
static const char *bare(const char *s, size_t n, size_t *out) {
  if (n && s[0] == '%') { s++; n--; }
  while (n && (s[n - 1] == '=' || s[n - 1] == ':' || s[n - 1] == ' ' || s[n - 1] == '\t' ||
               s[n - 1] == '\n' || s[n - 1] == '\r'))
    n--;
  *out = n;
  return s;
}


static HloInstr *new_instr(Ctx *C, const char *name, uint32_t off) {
  HlpParser *P = C->P;
  HloInstr *ins = hlp_alloc(P, sizeof *ins);
  ins->name = name;
  ins->off = off;
  ins->line = hlp_line_of(P, off);
  ins->parent = C->comp;
  ins->feature_group_count = ins->batch_group_count = 1;
  ins->largest = true;
  ins->api_version = HLO_API_ORIGINAL;
  return ins;
}

static void add_instr(Ctx *C, HloInstr *ins) {
  hlp_names_put(C->P, &C->instrs, ins->name, ins);
  hlp_list_push(C->P, &C->list, ins);
}

/* Split items at top-level commas into operand groups. */
typedef struct Group { HloVal **v; int32_t n; } Group;

static int split_operands(HlpParser *P, HloVal **items, int32_t n, Group **out) {
  int ng = n ? 1 : 0;
  for (int32_t i = 1; i < n; i++)
    if (items[i]->sep == 2) ng++;
  Group *g = hlp_alloc(P, (size_t)(ng ? ng : 1) * sizeof *g);
  int k = -1;
  for (int32_t i = 0; i < n; i++) {
    if (i == 0 || items[i]->sep == 2) { k++; g[k].v = items + i; }
    g[k].n++;
  }
  *out = g;
  return ng;
}

static HloInstr *lower_instr(Ctx *C, SynInstr *si, const char *name, uint32_t name_off,
                             HloShape *shape, HlxToken opcode, HloVal **ops, int32_t nops,
                             uint32_t ops_off, uint32_t stray_comma);

static bool is_name_tok(const HloVal *v) {
  return v->kind == HLO_VAL_TOKEN && (v->tok == TK_NAME || v->tok == TK_IDENT);
}

/* One operand: [shape] name | [shape] opcode ( items ). */
static HloInstr *lower_operand(Ctx *C, Group g) {
  HlpParser *P = C->P;
  int32_t i = 0;
  HloShape *shape = NULL;
  if (g.n > 1 && (g.v[0]->kind == HLO_VAL_SHAPE || g.v[0]->kind == HLO_VAL_PAREN)) {
    if (g.v[0]->kind == HLO_VAL_SHAPE) { shape = g.v[0]->shape; i = 1; }
    else {
      shape = hlp_shape_from_items(P, g.v, g.n, &i);
      if (!shape) return NULL;
    }
  }
  if (i >= g.n) { hlp_error(P, g.v[0]->off, "expected an operand name"); return NULL; }
  HloVal *v = g.v[i];
  if (!is_name_tok(v)) { hlp_error(P, v->off, "expected an operand name"); return NULL; }
  HloInstr *def;
  if (i + 1 < g.n && g.v[i + 1]->kind == HLO_VAL_PAREN && g.v[i + 1]->sep == 0 &&
      v->tok == TK_IDENT) {
    if (i + 2 != g.n) { hlp_error(P, g.v[i + 2]->off, "unexpected item in operand"); return NULL; }
    if (++C->depth > HLX_MAX_DEPTH) { hlp_error(P, v->off, "operands nested too deeply"); return NULL; }
    /* Nested anonymous instruction. */
    char buf[96];
    int k = 0;
    do {
      snprintf(buf, sizeof buf, "%.*s.anon%s%.0d", (int)(v->len > 60 ? 60 : v->len), v->text,
               k > 0 ? "." : "", k);
      k++;
    } while (hlp_names_get(&C->instrs, buf, strlen(buf)));
    HlxToken op = {TK_IDENT, v->off, (uint32_t)v->len, false};
    HloVal *paren = g.v[i + 1];
    def = lower_instr(C, NULL, hlp_strndup(P, buf, strlen(buf)), v->off, shape, op, paren->items,
                      paren->nitems, paren->off, paren->syn ? *(const uint32_t *)paren->syn : 0);
    C->depth--;
    return def;
  }
  if (i + 1 != g.n) { hlp_error(P, g.v[i + 1]->off, "unexpected item in operand"); return NULL; }
  size_t n;
  const char *s = bare(v->text, v->len, &n);
  def = hlp_names_get(&C->instrs, s, n);
  if (!def) {
    hlp_error(P, v->off, "instruction '%.*s' is not defined before this use", (int)n, s);
    return NULL;
  }
  if (shape && !hlp_shape_compatible(shape, &def->shape)) {
    hlp_error(P, g.v[0]->off, "operand shape does not match the shape of '%s'", def->name);
    return NULL;
  }
  return def;
}

/* Async sugar: X-start / X-update / X-done for a non-async opcode X. */
static int async_sugar(const char *s, size_t n, int *wrapped) {
  static const char *const sfx[] = {"-start", "-update", "-done"};
  for (int k = 0; k < 3; k++) {
    size_t l = strlen(sfx[k]);
    if (n > l && memcmp(s + n - l, sfx[k], l) == 0) {
      int op = hlp_opcode_from_name(s, n - l);
      if (op < 0) return -1;
      *wrapped = op;
      return k;
    }
  }
  return -1;
}

static HloShape *infer_shape(Ctx *C, HloInstr *ins, uint32_t off);

/* A computation name "base.N" used by no computation, lowered or written
 * later in the text (generated names must survive a print and re-parse). */
static const char *fresh_comp_name(HlpParser *P, const char *base) {
  char buf[160];
  for (;;) {
    snprintf(buf, sizeof buf, "%.120s.%d", base, ++P->anon_count);
    size_t n = strlen(buf);
    bool used = hlp_names_get(P->comps_map, buf, n) != NULL;
    for (HlpNode *q = P->syn.comps.head; q && !used; q = q->next) {
      SynComp *c = q->p;
      size_t cl;
      const char *cs = bare(P->src + c->name.off, c->name.len, &cl);
      used = cl == n && memcmp(cs, buf, n) == 0;
    }
    if (!used) return hlp_strndup(P, buf, n);
  }
}

static bool attr_is(HlpParser *P, const SynAttr *a, const char *name) {
  size_t n = strlen(name);
  return a->name.len == n + 1 && memcmp(P->src + a->name.off, name, n) == 0;
}

/* Where an attribute of an async sugar line (X-start) goes, as in XLA:
 * 1 = the async-start only (it names caller instructions, or describes the
 * start), 2 = both the start and the wrapped X (XLA copies these to the
 * wrapped instruction), 0 = the wrapped X only (X's own attributes). */
static int sugar_attr_place(HlpParser *P, const SynAttr *a) {
  if (attr_is(P, a, "control-predecessors") || attr_is(P, a, "sharding") ||
      attr_is(P, a, "parameter_replication") || attr_is(P, a, "async_execution_thread"))
    return 1;
  if (attr_is(P, a, "metadata") || attr_is(P, a, "backend_config") ||
      attr_is(P, a, "frontend_attributes") || attr_is(P, a, "statistics") ||
      attr_is(P, a, "origin"))
    return 2;
  return 0;
}

/* Build the wrapped computation of an async-start sugar form:
 * parameters for each operand, then the wrapped instruction as ROOT. */
static HloComputation *wrap_async(Ctx *C, HloInstr *start, HloOpcode wop, SynInstr *si,
                                  uint32_t off) {
  HlpParser *P = C->P;
  HloComputation *w = hlp_alloc(P, sizeof *w);
  char buf[128];
  snprintf(buf, sizeof buf, "wrapped_%s", hlp_opcode_name(wop));
  w->name = fresh_comp_name(P, buf);
  hlp_names_put(P, P->comps_map, w->name, w);
  w->off = off;
  w->ninstrs = start->nops + 1;
  w->instrs = hlp_alloc(P, (size_t)w->ninstrs * sizeof *w->instrs);
  w->nparams = start->nops;
  w->params = hlp_alloc(P, (size_t)(start->nops ? start->nops : 1) * sizeof *w->params);
  Ctx sub = {.P = P, .comps = C->comps, .comp = w};
  HloInstr *inner = new_instr(&sub, NULL, off);
  for (int32_t i = 0; i < start->nops; i++) {
    snprintf(buf, sizeof buf, "param_%d", (int)i);
    HloInstr *p = new_instr(&sub, hlp_strndup(P, buf, strlen(buf)), off);
    p->op = HLO_OP_PARAMETER;
    p->parameter_number = i;
    p->shape = start->ops[i]->shape;
    p->index = i;
    w->instrs[i] = w->params[i] = p;
  }
  inner->op = wop;
  inner->name = hlp_opcode_name(wop);
  inner->nops = start->nops;
  inner->ops = w->params;
  inner->index = start->nops;
  inner->is_root = true;
  w->instrs[start->nops] = w->root = inner;
  /* The -start line's shape is ((operands), result, state...): element 1 is
   * the wrapped op's result. */
  if (start->shape.dtype == HLO_TUPLE && start->shape.ntuple >= 2)
    inner->shape = start->shape.tuple[1];
  else {
    hlp_error(P, off, "async start shape must be a tuple ((operands), result, ...)");
    return NULL;
  }
  if (si) {
    SynInstr tmp = *si;
    tmp.attrs = (HlpList){0};
    for (HlpNode *n = si->attrs.head; n; n = n->next) {
      SynAttr *a = n->p;
      if (sugar_attr_place(P, a) != 1) hlp_list_push(P, &tmp.attrs, a);
    }
    if (hlp_lower_attrs(P, inner, &tmp) != 0) return NULL;
  }
  hlp_list_push(P, &P->pending_comps, w);
  return w;
}

static HloInstr *lower_instr(Ctx *C, SynInstr *si, const char *name, uint32_t name_off,
                             HloShape *shape, HlxToken opcode, HloVal **items, int32_t nitems,
                             uint32_t ops_off, uint32_t stray_comma) {
  HlpParser *P = C->P;
  if (hlp_names_get(&C->instrs, name, strlen(name))) {
    hlp_error(P, name_off, "instruction '%s' is defined twice", name);
    return NULL;
  }
  HloInstr *ins = new_instr(C, name, name_off);
  const char *ot = P->src + opcode.off;
  int op = hlp_opcode_from_name(ot, opcode.len);
  int wrapped = -1, async_kind = -1;
  if (op < 0) {
    async_kind = async_sugar(ot, opcode.len, &wrapped);
    if (async_kind < 0) {
      hlp_error(P, opcode.off, "unknown opcode '%.*s'", (int)opcode.len, ot);
      return NULL;
    }
    op = async_kind == 0 ? HLO_OP_ASYNC_START : async_kind == 1 ? HLO_OP_ASYNC_UPDATE
                                                                : HLO_OP_ASYNC_DONE;
  }
  ins->op = (HloOpcode)op;

  /* Operand lists separate operands by single commas (XLA rejects `add(x,,y)`);
   * constant bodies are literals, where commas are free. */
  if (op != HLO_OP_CONSTANT && stray_comma) {
    hlp_error(P, stray_comma - 1, "unexpected ',' in the operand list");
    return NULL;
  }

  /* Operands (parameter and constant have their own operand syntax). */
  if (op == HLO_OP_PARAMETER) {
    if (nitems != 1 || items[0]->kind != HLO_VAL_TOKEN || items[0]->tok != TK_INT ||
        items[0]->text[0] == '-') {
      hlp_error(P, nitems ? items[0]->off : ops_off, "parameter expects a parameter number");
      return NULL;
    }
    ins->parameter_number = strtoll(items[0]->text, NULL, 10);
  } else if (op != HLO_OP_CONSTANT) {
    Group *g;
    int ng = split_operands(P, items, nitems, &g);
    ins->nops = ng;
    ins->ops = hlp_alloc(P, (size_t)(ng ? ng : 1) * sizeof *ins->ops);
    for (int k = 0; k < ng; k++) {
      ins->ops[k] = lower_operand(C, g[k]);
      if (!ins->ops[k]) return NULL;
    }
    int ar = opcode_arity[op];
    if (async_kind < 0 && ar >= 0 && ng != ar) {
      hlp_error(P, opcode.off, "%s expects %d operand%s, got %d", hlp_opcode_name(op), ar,
                ar == 1 ? "" : "s", ng);
      return NULL;
    }
    if (async_kind > 0 && ng != 1) {
      hlp_error(P, opcode.off, "%.*s expects 1 operand, got %d", (int)opcode.len, ot, ng);
      return NULL;
    }
    if (async_kind == 0 && opcode_arity[wrapped] >= 0 && ng != opcode_arity[wrapped]) {
      hlp_error(P, opcode.off, "%s expects %d operand%s, got %d", hlp_opcode_name(wrapped),
                opcode_arity[wrapped], opcode_arity[wrapped] == 1 ? "" : "s", ng);
      return NULL;
    }
  }

  /* Result shape. */
  if (shape) {
    ins->shape = *shape;
  } else {
    if (!opcode_shape_opt[op] || async_kind >= 0) {
      hlp_error(P, opcode.off, "cannot infer the shape of %.*s, write it", (int)opcode.len, ot);
      return NULL;
    }
  }

  /* Attributes. */
  if (async_kind == 0) {
    HloComputation *w = wrap_async(C, ins, (HloOpcode)wrapped, si, opcode.off);
    if (!w) return NULL;
    ins->ncalled = 1;
    ins->called = hlp_alloc(P, sizeof *ins->called);
    ins->called[0] = (HloCalled){HLO_CALL_CALLS, w};
    /* The start keeps its own and the shared attributes (and gets the
     * shape check of the explicit form); the rest went to the wrapped op. */
    SynInstr own = {0};
    if (si)
      for (HlpNode *n = si->attrs.head; n; n = n->next)
        if (sugar_attr_place(P, n->p) != 0) hlp_list_push(P, &own.attrs, n->p);
    if (hlp_lower_attrs(P, ins, &own) != 0) return NULL;
  } else {
    if (async_kind > 0) {
      /* -update / -done: same wrapped computation as the operand chain. */
      HloInstr *o = ins->ops[0];
      if (o->op != HLO_OP_ASYNC_START && o->op != HLO_OP_ASYNC_UPDATE) {
        hlp_error(P, opcode.off, "%.*s expects an async start or update operand", (int)opcode.len,
                  ot);
        return NULL;
      }
      const HloComputation *wc = o->ncalled ? o->called[0].comp : NULL;
      if (!wc || !wc->root || wc->root->op != (HloOpcode)wrapped) {
        hlp_error(P, opcode.off, "%.*s: the async operand wraps %s, not %s", (int)opcode.len, ot,
                  wc && wc->root ? hlp_opcode_name(wc->root->op) : "nothing",
                  hlp_opcode_name(wrapped));
        return NULL;
      }
      ins->ncalled = o->ncalled;
      ins->called = o->called;
    }
    SynInstr empty = {0};
    if (hlp_lower_attrs(P, ins, si ? si : &empty) != 0) return NULL;
  }
  if (op == HLO_OP_CONSTANT) {
    if (!shape) {
      hlp_error(P, opcode.off, "constant needs a result shape");
      return NULL;
    }
    ins->literal = hlp_literal(P, &ins->shape, items, nitems, ops_off);
    if (!ins->literal) return NULL;
  }
  if (!shape) {
    HloShape *s = infer_shape(C, ins, opcode.off);
    if (!s) return NULL;
    ins->shape = *s;
  }
  if (op == HLO_OP_TUPLE && (ins->shape.dtype != HLO_TUPLE || ins->shape.ntuple != ins->nops)) {
    hlp_error(P, opcode.off, "tuple shape has %d elements but %d operands are given",
              ins->shape.dtype == HLO_TUPLE ? (int)ins->shape.ntuple : 1, (int)ins->nops);
    return NULL;
  }
  add_instr(C, ins);
  return ins;
}

/* ---- Shape inference for omitted result shapes ------------------------------- */

static bool is_elementwise_unary(HloOpcode op) {
  switch (op) {
  case HLO_OP_ABS: case HLO_OP_ACOS: case HLO_OP_ACOSH: case HLO_OP_ASIN: case HLO_OP_ASINH:
  case HLO_OP_ATANH: case HLO_OP_CBRT: case HLO_OP_CEIL: case HLO_OP_COUNT_LEADING_ZEROS:
  case HLO_OP_COPY: case HLO_OP_COSINE: case HLO_OP_COSH: case HLO_OP_ERF: case HLO_OP_EXPONENTIAL:
  case HLO_OP_EXPONENTIAL_MINUS_ONE: case HLO_OP_FLOOR: case HLO_OP_LOG: case HLO_OP_LOG_PLUS_ONE:
  case HLO_OP_LOGISTIC: case HLO_OP_NEGATE: case HLO_OP_NOT: case HLO_OP_POPCNT:
  case HLO_OP_ROUND_NEAREST_AFZ: case HLO_OP_ROUND_NEAREST_EVEN: case HLO_OP_RSQRT:
  case HLO_OP_SIGN: case HLO_OP_SINE: case HLO_OP_SINH: case HLO_OP_SQRT: case HLO_OP_TAN:
  case HLO_OP_TANH: case HLO_OP_OPT_BARRIER: case HLO_OP_DOMAIN: case HLO_OP_CHOLESKY:
    return true;
  default:
    return false;
  }
}

static bool is_elementwise_binary(HloOpcode op) {
  switch (op) {
  case HLO_OP_ADD: case HLO_OP_ATAN2: case HLO_OP_AND: case HLO_OP_DIVIDE: case HLO_OP_MAXIMUM:
  case HLO_OP_MINIMUM: case HLO_OP_MULTIPLY: case HLO_OP_OR: case HLO_OP_POWER:
  case HLO_OP_REMAINDER: case HLO_OP_SHIFT_LEFT: case HLO_OP_SHIFT_RIGHT_ARITHMETIC:
  case HLO_OP_SHIFT_RIGHT_LOGICAL: case HLO_OP_SUBTRACT: case HLO_OP_XOR:
    return true;
  default:
    return false;
  }
}

/* An array result built from an operand's element type and a dims list. */
static HloShape *dims_shape(HlpParser *P, HloDtype t, const int64_t *d, int32_t n) {
  if (n < 0 || n > HLX_MAX_DEPTH) return NULL;
  return hlp_shape_make(P, t, n, d);
}

static bool is_array(const HloShape *s) { return s->dtype != HLO_TUPLE && hlc_dtype_is_array(s->dtype); }

static bool has_dim(const HloI64s *l, int64_t d) {
  for (int32_t i = 0; i < l->n; i++)
    if (l->v[i] == d) return true;
  return false;
}

/* Result shapes XLA's parser infers with its shape inference when the text
 * omits them (the opcodes marked shape-optional in opcodes.def, beyond the
 * elementwise ones). Returns NULL when the operands do not allow it; the
 * caller reports the error. Only the shape is inferred: the verifier checks
 * the operands further. */
static HloShape *infer_structured(HlpParser *P, HloInstr *ins) {
  HloInstr **o = ins->ops;
  int32_t n = ins->nops;
  int64_t d[HLX_MAX_DEPTH];
  int32_t k = 0;
  switch (ins->op) {
  case HLO_OP_DOT: {
    /* batch dims, then lhs free dims, then rhs free dims */
    const HloShape *l = &o[0]->shape, *r = &o[1]->shape;
    const HloDotDims *dd = &ins->dot;
    if (!is_array(l) || !is_array(r) || dd->lhs_batch.n != dd->rhs_batch.n) return NULL;
    for (int32_t i = 0; i < dd->lhs_batch.n; i++) {
      int64_t b = dd->lhs_batch.v[i];
      if (b < 0 || b >= l->rank) return NULL;
      d[k++] = l->dims[b];
    }
    for (int32_t i = 0; i < l->rank; i++)
      if (!has_dim(&dd->lhs_batch, i) && !has_dim(&dd->lhs_contracting, i)) d[k++] = l->dims[i];
    for (int32_t i = 0; i < r->rank && k < HLX_MAX_DEPTH; i++)
      if (!has_dim(&dd->rhs_batch, i) && !has_dim(&dd->rhs_contracting, i)) d[k++] = r->dims[i];
    /* the higher-precision element type of the two */
    HloDtype t = hlc_dtype_bits(r->dtype) > hlc_dtype_bits(l->dtype) ? r->dtype : l->dtype;
    return dims_shape(P, t, d, k);
  }
  case HLO_OP_CONDITIONAL:
    for (int32_t i = 0; i < ins->ncalled; i++)
      if (ins->called[i].comp->root) return hlp_shape_copy(P, &ins->called[i].comp->root->shape);
    return NULL;
  case HLO_OP_BROADCAST: {
    /* As XLA's parser: dimensions are taken as sizes prepended to the
     * operand's dims (for the usual scalar operand with {}: a scalar). */
    const HloShape *a = &o[0]->shape;
    if (!is_array(a) || ins->dimensions.n + a->rank > HLX_MAX_DEPTH) return NULL;
    for (int32_t i = 0; i < ins->dimensions.n; i++) d[k++] = ins->dimensions.v[i];
    for (int32_t i = 0; i < a->rank; i++) d[k++] = a->dims[i];
    return dims_shape(P, a->dtype, d, k);
  }
  case HLO_OP_CONCATENATE: {
    const HloShape *a = &o[0]->shape;
    int64_t cd = ins->dimensions.n == 1 ? ins->dimensions.v[0] : -1;
    if (!is_array(a) || cd < 0 || cd >= a->rank) return NULL;
    memcpy(d, a->dims, (size_t)a->rank * sizeof *d);
    for (int32_t i = 1; i < n; i++) {
      if (!is_array(&o[i]->shape) || o[i]->shape.rank != a->rank) return NULL;
      d[cd] += o[i]->shape.dims[cd];
    }
    return dims_shape(P, a->dtype, d, a->rank);
  }
  case HLO_OP_PAD: {
    const HloShape *a = &o[0]->shape;
    if (!is_array(a) || !ins->padding) return NULL;
    for (int32_t i = 0; i < a->rank; i++) {
      const HloPadDim *pd = &ins->padding[i];
      int64_t x = a->dims[i];
      d[i] = pd->lo + pd->hi + x + (x > 0 ? (x - 1) * pd->interior : 0);
      if (d[i] < 0) return NULL;
    }
    return dims_shape(P, a->dtype, d, a->rank);
  }
  case HLO_OP_REDUCE: {
    /* k inputs reduced over dimensions: one array, or a tuple of k */
    int32_t m = n / 2;
    if (m < 1) return NULL;
    HloShape *t = hlp_alloc(P, sizeof *t);
    t->dtype = HLO_TUPLE;
    t->ntuple = m;
    t->tuple = hlp_alloc(P, (size_t)m * sizeof *t->tuple);
    for (int32_t j = 0; j < m; j++) {
      const HloShape *a = &o[j]->shape;
      if (!is_array(a) || !is_array(&o[m + j]->shape)) return NULL;
      k = 0;
      for (int32_t i = 0; i < a->rank; i++)
        if (!has_dim(&ins->dimensions, i)) d[k++] = a->dims[i];
      HloShape *e = dims_shape(P, o[m + j]->shape.dtype, d, k);
      if (!e) return NULL;
      t->tuple[j] = *e;
    }
    return m == 1 ? &t->tuple[0] : t;
  }
  case HLO_OP_MAP: case HLO_OP_SORT: {
    /* map: operand dims with the computation's result type; sort: the
     * operand, or a tuple of all operands */
    const HloShape *a = &o[0]->shape;
    if (n < 1 || !is_array(a)) return NULL;
    if (ins->op == HLO_OP_MAP) {
      const HloComputation *c = ins->ncalled ? ins->called[0].comp : NULL;
      if (!c || !c->root || !is_array(&c->root->shape)) return NULL;
      return dims_shape(P, c->root->shape.dtype, a->dims, a->rank);
    }
    if (n == 1) return hlp_shape_copy(P, a);
    HloShape *t = hlp_alloc(P, sizeof *t);
    t->dtype = HLO_TUPLE;
    t->ntuple = n;
    t->tuple = hlp_alloc(P, (size_t)n * sizeof *t->tuple);
    for (int32_t i = 0; i < n; i++) t->tuple[i] = o[i]->shape;
    return t;
  }
  case HLO_OP_SCATTER: {
    int32_t m = (n - 1) / 2;
    if (m == 1) return hlp_shape_copy(P, &o[0]->shape);
    HloShape *t = hlp_alloc(P, sizeof *t);
    t->dtype = HLO_TUPLE;
    t->ntuple = m;
    t->tuple = hlp_alloc(P, (size_t)(m ? m : 1) * sizeof *t->tuple);
    for (int32_t i = 0; i < m; i++) t->tuple[i] = o[i]->shape;
    return m ? t : NULL;
  }
  case HLO_OP_FFT: {
    const HloShape *a = &o[0]->shape;
    int32_t fl = ins->fft_length.n;
    if (!is_array(a) || fl < 1 || fl > a->rank) return NULL;
    memcpy(d, a->dims, (size_t)a->rank * sizeof *d);
    HloDtype t = a->dtype;
    if (ins->fft_type == HLO_FFT_RFFT) {
      d[a->rank - 1] = ins->fft_length.v[fl - 1] / 2 + 1;
      t = a->dtype == HLO_F64 ? HLO_C128 : HLO_C64;
    } else if (ins->fft_type == HLO_FFT_IRFFT) {
      d[a->rank - 1] = ins->fft_length.v[fl - 1];
      t = a->dtype == HLO_C128 ? HLO_F64 : HLO_F32;
    }
    return dims_shape(P, t, d, a->rank);
  }
  case HLO_OP_CONVOLUTION: {
    const HloShape *l = &o[0]->shape, *r = &o[1]->shape;
    const HloConvDims *c = &ins->conv;
    int32_t ns = c->in_spatial.n;
    if (!is_array(l) || !is_array(r) || ns + 2 != l->rank || ns + 2 != r->rank ||
        (ins->window.present && ins->window.rank != ns) || c->out_spatial.n != ns)
      return NULL;
    for (int32_t i = 0; i < l->rank; i++) d[i] = -1;
    int64_t batch = l->dims[c->in_batch] / (ins->batch_group_count ? ins->batch_group_count : 1);
    d[c->out_batch] = batch;
    d[c->out_feature] = r->dims[c->k_out_feature];
    for (int32_t i = 0; i < ns; i++) {
      int64_t in = l->dims[c->in_spatial.v[i]], ks = r->dims[c->k_spatial.v[i]];
      int64_t lo = 0, hi = 0, st = 1, ld = 1, rd = 1;
      if (ins->window.present) {
        const HloWindowDim *w = &ins->window.dims[i];
        lo = w->pad_lo; hi = w->pad_hi; st = w->stride; ld = w->lhs_dilate; rd = w->rhs_dilate;
      }
      int64_t din = in > 0 ? (in - 1) * ld + 1 : 0, dk = ks > 0 ? (ks - 1) * rd + 1 : 0;
      int64_t span = din + lo + hi - dk;
      d[c->out_spatial.v[i]] = span < 0 ? 0 : span / st + 1;
    }
    for (int32_t i = 0; i < l->rank; i++)
      if (d[i] < 0) return NULL;
    HloDtype t = hlc_dtype_bits(r->dtype) > hlc_dtype_bits(l->dtype) ? r->dtype : l->dtype;
    return dims_shape(P, t, d, l->rank);
  }
  case HLO_OP_REDUCE_WINDOW: {
    int32_t m = n / 2;
    const HloWindow *w = &ins->window;
    if (m < 1) return NULL;
    HloShape *t = hlp_alloc(P, sizeof *t);
    t->dtype = HLO_TUPLE;
    t->ntuple = m;
    t->tuple = hlp_alloc(P, (size_t)m * sizeof *t->tuple);
    for (int32_t j = 0; j < m; j++) {
      const HloShape *a = &o[j]->shape;
      if (!is_array(a) || (w->present && w->rank != a->rank) || !is_array(&o[m + j]->shape))
        return NULL;
      for (int32_t i = 0; i < a->rank; i++) {
        d[i] = a->dims[i];
        if (w->present && w->rank) {
          const HloWindowDim *wd = &w->dims[i];
          int64_t din = d[i] > 0 ? (d[i] - 1) * wd->lhs_dilate + 1 : 0;
          int64_t dk = wd->size > 0 ? (wd->size - 1) * wd->rhs_dilate + 1 : 0;
          int64_t span = din + wd->pad_lo + wd->pad_hi - dk;
          d[i] = span < 0 ? 0 : span / wd->stride + 1;
        }
      }
      HloShape *e = dims_shape(P, o[m + j]->shape.dtype, d, a->rank);
      if (!e) return NULL;
      t->tuple[j] = *e;
    }
    return m == 1 ? &t->tuple[0] : t;
  }
  case HLO_OP_SELECT_AND_SCATTER: case HLO_OP_TRIANGULAR_SOLVE:
    /* the operand's (select-and-scatter) or b's (triangular-solve) shape */
    return hlp_shape_copy(P, &o[ins->op == HLO_OP_TRIANGULAR_SOLVE ? 1 : 0]->shape);
  case HLO_OP_SET_DIMENSION_SIZE: case HLO_OP_BATCH_NORM_INFERENCE:
    return hlp_shape_copy(P, &o[0]->shape);
  case HLO_OP_BATCH_NORM_TRAINING: case HLO_OP_BATCH_NORM_GRAD: {
    /* (operand-shaped, feature vector, feature vector) */
    const HloShape *a = &o[0]->shape;
    if (!is_array(a) || ins->feature_index < 0 || ins->feature_index >= a->rank) return NULL;
    HloShape *t = hlp_alloc(P, sizeof *t);
    t->dtype = HLO_TUPLE;
    t->ntuple = 3;
    t->tuple = hlp_alloc(P, 3 * sizeof *t->tuple);
    t->tuple[0] = *a;
    d[0] = a->dims[ins->feature_index];
    t->tuple[1] = t->tuple[2] = *dims_shape(P, a->dtype, d, 1);
    return t;
  }
  case HLO_OP_TOPK: {
    const HloShape *a = &o[0]->shape;
    if (!is_array(a) || a->rank < 1) return NULL;
    memcpy(d, a->dims, (size_t)a->rank * sizeof *d);
    d[a->rank - 1] = ins->k;
    HloShape *t = hlp_alloc(P, sizeof *t);
    t->dtype = HLO_TUPLE;
    t->ntuple = 2;
    t->tuple = hlp_alloc(P, 2 * sizeof *t->tuple);
    t->tuple[0] = *dims_shape(P, a->dtype, d, a->rank);
    t->tuple[1] = *dims_shape(P, HLO_S32, d, a->rank);
    return t;
  }
  case HLO_OP_GATHER: {
    /* batch dims of the indices in order, with offset dims (the uncollapsed
     * slice sizes) placed at offset_dims */
    const HloShape *a = &o[0]->shape, *ix = &o[1]->shape;
    const HloGatherDims *g = &ins->gather;
    if (!is_array(a) || !is_array(ix) || g->slice_sizes.n != a->rank) return NULL;
    int64_t bd[HLX_MAX_DEPTH], od[HLX_MAX_DEPTH];
    int32_t nb = 0, no = 0;
    for (int32_t i = 0; i < ix->rank; i++)
      if (i != g->index_vector_dim) bd[nb++] = ix->dims[i];
    for (int32_t i = 0; i < a->rank; i++)
      if (!has_dim(&g->collapsed_slice_dims, i) && !has_dim(&g->operand_batching_dims, i))
        od[no++] = g->slice_sizes.v[i];
    int32_t rank = nb + no, bi = 0, oi = 0;
    if (no != g->offset_dims.n || rank > HLX_MAX_DEPTH) return NULL;
    for (int32_t i = 0; i < rank; i++) d[i] = has_dim(&g->offset_dims, i) ? od[oi++] : bd[bi++];
    if (oi != no || bi != nb) return NULL;
    return dims_shape(P, a->dtype, d, rank);
  }
  default:
    return NULL;
  }
}

static HloShape *infer_shape(Ctx *C, HloInstr *ins, uint32_t off) {
  HlpParser *P = C->P;
  HloOpcode op = ins->op;
  HloShape *s = NULL;
  if (is_elementwise_unary(op) || op == HLO_OP_ADD_DEPENDENCY ||
      (is_elementwise_binary(op) && ins->ops[0]->shape.dtype != HLO_TUPLE)) {
    s = hlp_shape_copy(P, &ins->ops[0]->shape);
    if (op == HLO_OP_ABS && hlc_dtype_is_complex(s->dtype))
      s->dtype = s->dtype == HLO_C64 ? HLO_F32 : HLO_F64;
    if (is_elementwise_binary(op) && !hlp_shape_compatible(&ins->ops[0]->shape, &ins->ops[1]->shape))
      s = NULL;
  } else if (op == HLO_OP_REAL || op == HLO_OP_IMAG) {
    s = hlp_shape_copy(P, &ins->ops[0]->shape);
    if (hlc_dtype_is_complex(s->dtype)) s->dtype = s->dtype == HLO_C64 ? HLO_F32 : HLO_F64;
  } else if (op == HLO_OP_IS_FINITE || op == HLO_OP_COMPARE) {
    s = hlp_shape_copy(P, &ins->ops[0]->shape);
    s->dtype = HLO_PRED;
  } else if (op == HLO_OP_SELECT) {
    s = hlp_shape_copy(P, &ins->ops[1]->shape);
  } else if (op == HLO_OP_CLAMP) {
    s = hlp_shape_copy(P, &ins->ops[1]->shape);
  } else if (op == HLO_OP_COMPLEX) {
    s = hlp_shape_copy(P, &ins->ops[0]->shape);
    s->dtype = s->dtype == HLO_F64 ? HLO_C128 : HLO_C64;
  } else if (op == HLO_OP_TUPLE) {
    s = hlp_alloc(P, sizeof *s);
    s->dtype = HLO_TUPLE;
    s->ntuple = ins->nops;
    s->tuple = hlp_alloc(P, (size_t)(ins->nops ? ins->nops : 1) * sizeof *s->tuple);
    for (int32_t i = 0; i < ins->nops; i++) s->tuple[i] = ins->ops[i]->shape;
  } else if (op == HLO_OP_GET_TUPLE_ELEMENT) {
    const HloShape *t = &ins->ops[0]->shape;
    if (t->dtype == HLO_TUPLE && ins->tuple_index >= 0 && ins->tuple_index < t->ntuple)
      s = hlp_shape_copy(P, &t->tuple[ins->tuple_index]);
  } else if (op == HLO_OP_AFTER_ALL) {
    s = hlp_alloc(P, sizeof *s);
    s->dtype = HLO_TOKEN;
  } else if (op == HLO_OP_PARTITION_ID || op == HLO_OP_REPLICA_ID) {
    s = hlp_shape_make(P, HLO_U32, 0, NULL);
  } else if (op == HLO_OP_GET_DIMENSION_SIZE) {
    s = hlp_shape_make(P, HLO_S32, 0, NULL);
  } else if (op == HLO_OP_WHILE) {
    s = hlp_shape_copy(P, &ins->ops[0]->shape);
  } else if (op == HLO_OP_CALL && ins->ncalled && ins->called[0].comp->root) {
    s = hlp_shape_copy(P, &ins->called[0].comp->root->shape);
  } else if (op == HLO_OP_TRANSPOSE && ins->has_dimensions &&
             ins->dimensions.n == ins->ops[0]->shape.rank) {
    const HloShape *a = &ins->ops[0]->shape;
    int64_t d[HLX_MAX_DEPTH];
    bool okp = a->rank <= HLX_MAX_DEPTH;
    for (int32_t i = 0; okp && i < a->rank; i++) {
      int64_t k = ins->dimensions.v[i];
      if (k < 0 || k >= a->rank) okp = false;
      else d[i] = a->dims[k];
    }
    if (okp) s = hlp_shape_make(P, a->dtype, a->rank, d);
  } else if (op == HLO_OP_REVERSE) {
    s = hlp_shape_copy(P, &ins->ops[0]->shape);
  } else {
    s = infer_structured(P, ins);
  }
  if (!s) {
    hlp_error(P, off, "cannot infer the shape of %s, write it", hlp_opcode_name(op));
    return NULL;
  }
  /* Inferred arrays get the default layout; tuples keep their elements'
   * (built with default layouts, or operand shapes as XLA's tuple shapes). */
  if (s->dtype != HLO_TUPLE && hlc_dtype_is_array(s->dtype)) {
    s->minor_to_major = NULL;
    s->layout_tail = NULL;
    hlp_fill_layout(P, s);
  }
  return s;
}

/* ---- Computations ----------------------------------------------------------------- */

static HloComputation *lower_body(Ctx *ctx, SynComp *c, const char *name);

static HloComputation *hlp_lower_comp_in(HlpParser *P, HlpNames *comps, SynComp *c, const char *name) {
  HloComputation *comp = hlp_alloc(P, sizeof *comp);
  comp->name = name;
  comp->off = c->name.off;
  comp->has_signature = c->has_sig;
  Ctx C = {.P = P, .comps = comps, .comp = comp, .outer = P->ctx};
  HlpNames *outer_instrs = P->instrs_map;
  P->ctx = &C;
  P->instrs_map = &C.instrs;
  HloComputation *r = lower_body(&C, c, name);
  P->ctx = C.outer;
  P->instrs_map = outer_instrs;
  return r;
}

static HloComputation *lower_body(Ctx *ctx, SynComp *c, const char *name) {
  HlpParser *P = ctx->P;
  HloComputation *comp = ctx->comp;
  Ctx *Cp = ctx;
  HloInstr *root = NULL;
  for (HlpNode *n = c->instrs.head; n; n = n->next) {
    SynInstr *si = n->p;
    size_t nl;
    const char *s = bare(P->src + si->name.off, si->name.len, &nl);
    HloInstr *ins = lower_instr(Cp, si, hlp_strndup(P, s, nl), si->name.off, si->shape, si->opcode,
                                (HloVal **)hlp_list_array(P, &si->ops), si->ops.n, si->lparen,
                                hlp_list_stray_comma(&si->ops));
    if (!ins) return NULL;
    if (si->root) {
      if (root) {
        hlp_error(P, si->name.off, "computation '%s' has several ROOT instructions", name);
        return NULL;
      }
      root = ins;
    }
  }
  comp->ninstrs = Cp->list.n;
  comp->instrs = (HloInstr **)hlp_list_array(P, &Cp->list);
  for (int32_t i = 0; i < comp->ninstrs; i++) comp->instrs[i]->index = i;
  if (!root) root = comp->instrs[comp->ninstrs - 1];
  root->is_root = true;
  comp->root = root;
  /* Parameters, indexed by number: unique and 0..n-1. */
  int64_t maxp = -1;
  for (int32_t i = 0; i < comp->ninstrs; i++)
    if (comp->instrs[i]->op == HLO_OP_PARAMETER && comp->instrs[i]->parameter_number > maxp)
      maxp = comp->instrs[i]->parameter_number;
  int32_t np = 0;
  for (int32_t i = 0; i < comp->ninstrs; i++) np += comp->instrs[i]->op == HLO_OP_PARAMETER;
  if (maxp >= np) {
    for (int32_t i = 0; i < comp->ninstrs; i++)
      if (comp->instrs[i]->op == HLO_OP_PARAMETER && comp->instrs[i]->parameter_number >= np) {
        hlp_error(P, comp->instrs[i]->off,
                  "parameter number %lld out of range: computation '%s' has %d parameters",
                  (long long)comp->instrs[i]->parameter_number, name, (int)np);
        return NULL;
      }
  }
  comp->nparams = np;
  comp->params = hlp_alloc(P, (size_t)(np ? np : 1) * sizeof *comp->params);
  for (int32_t i = 0; i < comp->ninstrs; i++) {
    HloInstr *p = comp->instrs[i];
    if (p->op != HLO_OP_PARAMETER) continue;
    if (comp->params[p->parameter_number]) {
      hlp_error(P, p->off, "duplicate parameter number %lld", (long long)p->parameter_number);
      return NULL;
    }
    comp->params[p->parameter_number] = p;
  }
  if (c->has_sig && c->result && !hlp_shape_compatible(c->result, &root->shape)) {
    hlp_error(P, c->result_off, "computation result shape does not match the root '%s'", root->name);
    return NULL;
  }
  for (HlpNode *n = c->attrs.head; n; n = n->next) {
    SynAttr *a = n->p;
    HloVal *v = a->vals.head->p;
    if (a->name.len == 17 && memcmp(P->src + a->name.off, "execution_thread=", 17) == 0) {
      comp->execution_thread = v->text;
    } else {
      hlp_error(P, a->name.off, "unknown computation attribute '%.*s'", (int)a->name.len - 1,
                P->src + a->name.off);
      return NULL;
    }
  }
  return comp;
}

/* Inline computation bodies (attribute values { instrs }). */
HloComputation *hlp_lower_inline(HlpParser *P, HloVal *v) {
  if (v->comp) return v->comp;
  SynComp *c = (SynComp *)v->syn;
  HloComputation *comp = hlp_lower_comp_in(P, P->comps_map, c, fresh_comp_name(P, "_"));
  if (!comp) return NULL;
  hlp_names_put(P, P->comps_map, comp->name, comp);
  hlp_list_push(P, &P->pending_comps, comp);
  v->comp = comp;
  return comp;
}

int hlp_lower(HlpParser *P) {
  P->lower_inline = hlp_lower_inline;   /* attrs.c lowers inline bodies through it */
  HloModule *m = P->m;
  HlpNames *comps = hlp_alloc(P, sizeof *comps);
  P->comps_map = comps;
  HlpList all = {0};
  HloComputation *entry = NULL;
  for (HlpNode *n = P->syn.comps.head; n; n = n->next) {
    SynComp *c = n->p;
    size_t nl;
    const char *s = bare(P->src + c->name.off, c->name.len, &nl);
    if (hlp_names_get(comps, s, nl)) {
      hlp_error(P, c->name.off, "computation '%.*s' is defined twice", (int)nl, s);
      return -1;
    }
    HloComputation *comp = hlp_lower_comp_in(P, comps, c, hlp_strndup(P, s, nl));
    if (!comp) return -1;
    for (HlpNode *q = P->pending_comps.head; q; q = q->next) hlp_list_push(P, &all, q->p);
    P->pending_comps = (HlpList){0};
    hlp_names_put(P, comps, comp->name, comp);
    hlp_list_push(P, &all, comp);
    if (c->entry) {
      if (entry) {
        hlp_error(P, c->name.off, "several ENTRY computations ('%s' and '%s')", entry->name,
                  comp->name);
        return -1;
      }
      entry = comp;
    }
  }
  m->ncomps = all.n;
  m->comps = (HloComputation **)hlp_list_array(P, &all);
  if (!entry) entry = m->comps[m->ncomps - 1];
  entry->is_entry = true;
  m->entry = entry;
  for (int32_t i = 0; i < m->ncomps; i++)
    for (int32_t j = 0; j < m->comps[i]->ninstrs; j++) {
      HloInstr *ins = m->comps[i]->instrs[j];
      if (ins->op == HLO_OP_FUSION)
        for (int32_t k = 0; k < ins->ncalled; k++) ins->called[k].comp->is_fusion_body = true;
    }
  if (P->syn.has_header) {
    size_t nl;
    const char *s = bare(P->src + P->syn.name.off, P->syn.name.len, &nl);
    m->name = hlp_strndup(P, s, nl);
  } else {
    char buf[256];
    snprintf(buf, sizeof buf, "module_%.200s", entry->name);
    m->name = hlp_strndup(P, buf, strlen(buf));
  }
  if (P->syn.has_sfi) {
    /* Stack-frame index: kept as normalised text for the printer. */
    static const char *const kw[4] = {"FileNames", "FunctionNames", "FileLocations", "StackFrames"};
    HlcText b = {0};
    for (int k = 0; k < 4; k++) {
      hlc_text_puts(&b, kw[k]);
      HloVal **v = (HloVal **)hlp_list_array(P, &P->syn.sfi[k]);
      for (int32_t i = 0; i < P->syn.sfi[k].n; i++) {
        /* One entry per line: a number starts an entry. */
        bool starts = v[i]->kind == HLO_VAL_TOKEN;
        hlc_text_puts(&b, starts ? "\n  " : " ");
        v[i]->sep = 0;
        hlp_print_vals(&b, &v[i], 1, false);
      }
      hlc_text_puts(&b, "\n");
    }
    if (b.oom) { free(b.p); longjmp(P->oom, 1); }
    m->stack_frames_text = hlp_strndup(P, b.p, b.n);
    free(b.p);
  }
  if (hlp_lower_module_attrs(P) != 0) return -1;
  return hlp_lower_sdy_edges(P);
}
