/* check_movement_util.h: helpers for the movement / gather-scatter Check
 * suites: build shapes, instructions, tiny computations and values by hand
 * in an arena, and run one kernel (plan-time check, then run) without an
 * executor. Header-only; each suite includes it once. */
#ifndef HLORUN_TESTS_CHECK_MOVEMENT_UTIL_H
#define HLORUN_TESTS_CHECK_MOVEMENT_UTIL_H
#include <check.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "common/arena.h"
#include "interp/interp.h"

static HlcArena T_arena;

static inline void t_setup(void) { hlc_arena_init(&T_arena); }
static inline void t_teardown(void) { hlc_arena_free(&T_arena); }

/* Array shape with the default layout. */
static inline HloShape t_shape(HloDtype t, int rank, const int64_t *dims) {
  HloShape s;
  memset(&s, 0, sizeof s);
  s.dtype = t;
  s.rank = rank;
  s.dims = hlc_arena_alloc(&T_arena, sizeof(int64_t) * (size_t)(rank ? rank : 1));
  s.minor_to_major = hlc_arena_alloc(&T_arena, sizeof(int64_t) * (size_t)(rank ? rank : 1));
  for (int i = 0; i < rank; i++) {
    s.dims[i] = dims[i];
    s.minor_to_major[i] = rank - 1 - i;
  }
  return s;
}
#define SH(t, ...) t_shape(t, (int)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), \
                           (int64_t[]){ __VA_ARGS__ })
#define SCALAR(t) t_shape(t, 0, NULL)

static inline HloShape t_tuple(int n, const HloShape *elems) {
  HloShape s;
  memset(&s, 0, sizeof s);
  s.dtype = HLO_TUPLE;
  s.ntuple = n;
  s.tuple = hlc_arena_memdup(&T_arena, elems, sizeof *elems * (size_t)n);
  return s;
}

static inline HloI64s t_ints(int n, const int64_t *v) {
  HloI64s r = { n, hlc_arena_memdup(&T_arena, v, sizeof *v * (size_t)(n ? n : 1)) };
  return r;
}
#define INTS(...) t_ints((int)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), \
                         (int64_t[]){ __VA_ARGS__ })
#define NOINTS ((HloI64s){ 0, NULL })

static inline HloInstr *t_instr(HloOpcode op, HloShape s, int nops, ...) {
  HloInstr *i = hlc_arena_alloc(&T_arena, sizeof *i);
  i->op = op;
  i->name = "t";
  i->line = 1;
  i->shape = s;
  i->nops = nops;
  i->ops = hlc_arena_alloc(&T_arena, sizeof(HloInstr *) * (size_t)(nops ? nops : 1));
  va_list ap;
  va_start(ap, nops);
  for (int k = 0; k < nops; k++) i->ops[k] = va_arg(ap, HloInstr *);
  va_end(ap);
  return i;
}

static inline HloInstr *t_param(HloShape s, int64_t n) {
  HloInstr *p = t_instr(HLO_OP_PARAMETER, s, 0);
  p->parameter_number = n;
  return p;
}

/* Computation (p0, p1) -> ROOT op(p0, p1) on scalars of type t; op
 * HLO_OP_PARAMETER means "return p1". */
static inline HloComputation *t_binop_comp(HloOpcode op, HloDtype t) {
  HloComputation *c = hlc_arena_alloc(&T_arena, sizeof *c);
  c->name = "reducer";
  c->nparams = 2;
  c->params = hlc_arena_alloc(&T_arena, 2 * sizeof(HloInstr *));
  c->params[0] = t_param(SCALAR(t), 0);
  c->params[1] = t_param(SCALAR(t), 1);
  c->root = op == HLO_OP_PARAMETER ? c->params[1]
                                   : t_instr(op, SCALAR(t), 2, c->params[0], c->params[1]);
  c->root->is_root = true;
  c->ninstrs = op == HLO_OP_PARAMETER ? 2 : 3;
  c->instrs = hlc_arena_alloc(&T_arena, 3 * sizeof(HloInstr *));
  c->instrs[0] = c->params[0];
  c->instrs[1] = c->params[1];
  c->instrs[2] = c->root;
  return c;
}

static inline void t_set_to_apply(HloInstr *i, HloComputation *c) {
  i->ncalled = 1;
  i->called = hlc_arena_alloc(&T_arena, sizeof *i->called);
  i->called[0].role = HLO_CALL_TO_APPLY;
  i->called[0].comp = c;
}

/* A value of the instruction's shape filled from raw bytes. */
static inline HliValue *t_value(const HloShape *s, const void *data) {
  HliValue *v = hli_value_new(NULL, s);
  ck_assert_ptr_nonnull(v);
  if (v->nbytes && data) memcpy(v->data, data, v->nbytes);
  return v;
}
#define VAL(ins, T, ...) t_value(&(ins)->shape, (T[]){ __VA_ARGS__ })

/* Run ins on the given operand values (check first); the result value. */
static inline HliValue *t_run(const HloInstr *ins, HliValue *const *in) {
  const HliOpEntry *e = &hli_op_table()[ins->op];
  ck_assert_msg(e->run != NULL, "no kernel for %s", hlp_opcode_name(ins->op));
  if (e->check) ck_assert_msg(e->check(NULL, ins) == 0, "check failed: %s", hli_last_error());
  HliValue *out = hli_value_new(NULL, &ins->shape);
  ck_assert_ptr_nonnull(out);
  ck_assert_msg(e->run(NULL, ins, in, out) == 0, "run failed: %s", hli_last_error());
  return out;
}

/* The plan-time check must refuse ins; its message must contain want. */
static inline void t_refused(const HloInstr *ins, const char *want) {
  const HliOpEntry *e = &hli_op_table()[ins->op];
  ck_assert_ptr_nonnull(e->check);
  ck_assert_int_eq(e->check(NULL, ins), -1);
  ck_assert_msg(strstr(hli_last_error(), want) != NULL, "error \"%s\" lacks \"%s\"",
                hli_last_error(), want);
}

static inline void t_free(int n, HliValue **v) {
  for (int i = 0; i < n; i++) hli_value_unref(NULL, v[i]);
}

#define EXPECT(v, T, ...)                                                              \
  do {                                                                                 \
    const T want_[] = { __VA_ARGS__ };                                                 \
    size_t n_ = sizeof want_ / sizeof want_[0];                                        \
    ck_assert_int_eq((v)->nelem, (int64_t)n_);                                         \
    for (size_t k_ = 0; k_ < n_; k_++)                                                 \
      ck_assert_msg(memcmp(&((const T *)(v)->data)[k_], &want_[k_], sizeof(T)) == 0,   \
                    "element %zu differs", k_);                                        \
  } while (0)
#endif
