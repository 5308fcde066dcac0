/* dotconv_util.h: helpers for the dot and convolution suites: build
 * instructions and values by hand (no parser needed) and compare results.
 * Everything lives in one arena per test, freed by dc_end(). */
#ifndef HLORUN_TESTS_DOTCONV_UTIL_H
#define HLORUN_TESTS_DOTCONV_UTIL_H
#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include "interp/interp.h"
#include "interp/kernels/gemm.h"

static HlcArena dc_arena;
static HliValue *dc_vals[256];
static int dc_nvals;

static inline void dc_begin(void) { hlc_arena_init(&dc_arena); dc_nvals = 0; }
static inline void dc_end(void) {
  for (int i = 0; i < dc_nvals; i++) hli_value_unref(NULL, dc_vals[i]);
  hlc_arena_free(&dc_arena);
}

/* Shape of dtype t with the given dims (rank n). */
static inline HloShape dc_shape(HloDtype t, int n, const int64_t *dims) {
  HloShape s;
  memset(&s, 0, sizeof s);
  s.dtype = t;
  s.rank = n;
  s.dims = hlc_arena_memdup(&dc_arena, dims, (size_t)(n ? n : 1) * sizeof(int64_t));
  return s;
}

static inline HloI64s dc_list(int n, const int64_t *v) {
  HloI64s l = { n, hlc_arena_memdup(&dc_arena, v, (size_t)(n ? n : 1) * sizeof(int64_t)) };
  return l;
}

/* An instruction of opcode op with result shape s and two parameter
 * operands of shapes a and b. */
static inline HloInstr *dc_instr(HloOpcode op, HloShape s, HloShape a, HloShape b) {
  HloInstr *ins = hlc_arena_alloc(&dc_arena, sizeof *ins);
  HloInstr *p = hlc_arena_alloc(&dc_arena, 2 * sizeof *p);
  ins->op = op;
  ins->name = "test";
  ins->shape = s;
  p[0].op = p[1].op = HLO_OP_PARAMETER;
  p[0].shape = a;
  p[1].shape = b;
  p[1].parameter_number = 1;
  ins->nops = 2;
  ins->ops = hlc_arena_alloc(&dc_arena, 2 * sizeof(HloInstr *));
  ins->ops[0] = &p[0];
  ins->ops[1] = &p[1];
  ins->feature_group_count = ins->batch_group_count = 1;
  return ins;
}

/* A value of shape s (borrowed from the arena) holding the bytes at data. */
static inline HliValue *dc_value(const HloShape *s, const void *data) {
  HliValue *v = hli_value_new(NULL, s);
  ck_assert_ptr_nonnull(v);
  if (data && v->nbytes) memcpy(v->data, data, v->nbytes);
  ck_assert_int_lt(dc_nvals, 256);
  dc_vals[dc_nvals++] = v;
  return v;
}

static inline void dc_check_f32(const HliValue *v, const float *want, int64_t n, double tol) {
  ck_assert_int_eq(v->nelem, n);
  const float *got = v->data;
  for (int64_t i = 0; i < n; i++)
    ck_assert_msg(fabs((double)got[i] - (double)want[i]) <= tol * (1 + fabs((double)want[i])),
                  "element %lld: got %.9g want %.9g", (long long)i, got[i], want[i]);
}
#endif
