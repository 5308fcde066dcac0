/* reduce_ir.h: a tiny IR builder for the reduce-area Check suites, so the
 * kernels can be tested with hand-made instructions before (and without)
 * the parser. Everything lives in one arena per test (ir_begin/ir_end). */
#ifndef HLORUN_TESTS_REDUCE_IR_H
#define HLORUN_TESTS_REDUCE_IR_H
#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include "interp/interp.h"
#include "interp/kernels/reducer.h"

static HlcArena ir_arena;
static inline void ir_begin(void) { hlc_arena_init(&ir_arena); }
static inline void ir_end(void) { hlc_arena_free(&ir_arena); }

static inline HloShape ir_shape(HloDtype t, int32_t rank, const int64_t *dims) {
  HloShape s;
  memset(&s, 0, sizeof s);
  s.dtype = t;
  s.rank = rank;
  s.dims = hlc_arena_alloc(&ir_arena, sizeof(int64_t) * (size_t)(rank ? rank : 1));
  if (rank) memcpy(s.dims, dims, sizeof(int64_t) * (size_t)rank);
  return s;
}
static inline HloShape ir_scalar(HloDtype t) { return ir_shape(t, 0, NULL); }
static inline HloShape ir_tuple(int32_t n, const HloShape *elems) {
  HloShape s;
  memset(&s, 0, sizeof s);
  s.dtype = HLO_TUPLE;
  s.ntuple = n;
  s.tuple = hlc_arena_memdup(&ir_arena, elems, sizeof(HloShape) * (size_t)n);
  return s;
}

static inline HloInstr *ir_instr(HloOpcode op, HloShape s, int32_t nops, ...) {
  HloInstr *i = hlc_arena_alloc(&ir_arena, sizeof *i);
  i->op = op;
  i->name = "t";
  i->line = 1;
  i->shape = s;
  i->nops = nops;
  i->ops = hlc_arena_alloc(&ir_arena, sizeof(HloInstr *) * (size_t)(nops ? nops : 1));
  va_list ap;
  va_start(ap, nops);
  for (int32_t k = 0; k < nops; k++) i->ops[k] = va_arg(ap, HloInstr *);
  va_end(ap);
  i->largest = true;
  return i;
}
static inline HloInstr *ir_param(int64_t n, HloShape s) {
  HloInstr *i = ir_instr(HLO_OP_PARAMETER, s, 0);
  i->parameter_number = n;
  return i;
}
static inline HloInstr *ir_cmp(HloCmpDir d, HloCmpType t, HloInstr *a, HloInstr *b) {
  HloInstr *i = ir_instr(HLO_OP_COMPARE, ir_scalar(HLO_PRED), 2, a, b);
  i->cmp_dir = d;
  i->cmp_type = t;
  return i;
}
static inline HloInstr *ir_const_f32(float v) {
  HloInstr *i = ir_instr(HLO_OP_CONSTANT, ir_scalar(HLO_F32), 0);
  i->literal = hlc_arena_alloc(&ir_arena, sizeof *i->literal);
  i->literal->shape = &i->shape;
  i->literal->data = hlc_arena_memdup(&ir_arena, &v, sizeof v);
  i->literal->nbytes = sizeof v;
  return i;
}

/* A computation from its parameters (in order) and root. */
static inline HloComputation *ir_comp(int32_t np, HloInstr **params, HloInstr *root) {
  HloComputation *c = hlc_arena_alloc(&ir_arena, sizeof *c);
  c->name = "comp";
  c->nparams = np;
  c->params = hlc_arena_memdup(&ir_arena, params, sizeof(HloInstr *) * (size_t)(np ? np : 1));
  c->root = root;
  root->is_root = true;
  return c;
}
/* ROOT = op(p0, p1) on scalars of type t. */
static inline HloComputation *ir_binop(HloOpcode op, HloDtype t) {
  HloInstr *p[2] = {ir_param(0, ir_scalar(t)), ir_param(1, ir_scalar(t))};
  HloShape rs = ir_scalar(op == HLO_OP_COMPARE ? HLO_PRED : t);
  return ir_comp(2, p, ir_instr(op, rs, 2, p[0], p[1]));
}
/* ROOT = compare(p0, p1) dir/type (comparators and select computations). */
static inline HloComputation *ir_cmp_comp(HloDtype t, int32_t nparams, HloCmpDir d, HloCmpType ct) {
  HloInstr *p[32];
  for (int32_t k = 0; k < nparams; k++) p[k] = ir_param(k, ir_scalar(t));
  return ir_comp(nparams, p, ir_cmp(d, ct, p[0], p[1]));
}

static inline void ir_call(HloInstr *ins, HloCallRole role, HloComputation *c) {
  HloCalled *n = hlc_arena_alloc(&ir_arena, sizeof(HloCalled) * (size_t)(ins->ncalled + 1));
  if (ins->ncalled) memcpy(n, ins->called, sizeof(HloCalled) * (size_t)ins->ncalled);
  n[ins->ncalled].role = role;
  n[ins->ncalled].comp = c;
  ins->called = n;
  ins->ncalled++;
}
static inline void ir_dims(HloInstr *ins, int32_t n, const int64_t *d) {
  ins->dimensions.n = n;
  ins->dimensions.v = hlc_arena_alloc(&ir_arena, sizeof(int64_t) * (size_t)(n ? n : 1));
  if (n) memcpy(ins->dimensions.v, d, sizeof(int64_t) * (size_t)n);
  ins->has_dimensions = true;
}
/* window: per dim {size, stride, pad_lo, pad_hi, base dilation, window dilation} */
static inline void ir_window(HloInstr *ins, int32_t rank, const int64_t (*w)[6]) {
  ins->window.rank = rank;
  ins->window.present = true;
  ins->window.dims = hlc_arena_alloc(&ir_arena, sizeof(HloWindowDim) * (size_t)(rank ? rank : 1));
  for (int32_t d = 0; d < rank; d++)
    ins->window.dims[d] = (HloWindowDim){w[d][0], w[d][1], w[d][2], w[d][3], w[d][4], w[d][5], false};
}

/* A value of shape s filled from data (nelem * element size bytes). */
static inline HliValue *val(const HloShape *s, const void *data) {
  HliValue *v = hli_value_new(NULL, s);
  if (data && v->nbytes) memcpy(v->data, data, v->nbytes);
  return v;
}
static inline HliValue *vf32(const HloShape *s, const float *d) { return val(s, d); }

/* Check and run ins through the opcode table; returns the output (caller
 * unrefs) or NULL on failure. */
static inline HliValue *run(HloInstr *ins, HliValue **in) {
  const HliOpEntry *e = &hli_op_table()[ins->op];
  if (!e->run) return NULL;
  if (e->check && e->check(NULL, ins) != 0) return NULL;
  HliValue *out = hli_value_new(NULL, &ins->shape);
  if (e->run(NULL, ins, in, out) != 0) {
    hli_value_unref(NULL, out);
    return NULL;
  }
  return out;
}
#endif
