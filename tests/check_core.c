/* check_core.c: Check suite for the executor core: plans (built once, dead
 * code skipped, kernels checked before running), value lifetimes (memory in
 * use returns to zero, last uses release buffers early, repeated calls do
 * not grow memory), zero-copy steps (tuple, get-tuple-element, reshape view),
 * errors naming the instruction, and the thread pool.
 *
 * Modules are built by hand (no parser). The tests install small f32
 * kernels of their own in the opcode table (add, negate, a counting kernel)
 * so they do not depend on the kernel areas. */
#include "interp/exec.h"
#include "interp/plan.h"
#include <check.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include "tests/testlib.h"

/* ---- hand-built IR ---------------------------------------------------------- */

typedef struct Mod {
  HloModule m;
  HloComputation *comp;       /* the computation being built */
} Mod;

static Mod *mod_new(void) {
  Mod *b = calloc(1, sizeof *b);
  hlc_arena_init(&b->m.arena);
  b->m.filename = "test.hlo";
  b->m.comps = hlc_arena_alloc(&b->m.arena, 16 * sizeof(HloComputation *));
  return b;
}

static void mod_free(Mod *b) {
  hlc_arena_free(&b->m.arena);
  free(b);
}

static HloComputation *comp_new(Mod *b, const char *name, int nparams) {
  HloComputation *c = hlc_arena_alloc(&b->m.arena, sizeof *c);
  c->name = name;
  c->instrs = hlc_arena_alloc(&b->m.arena, 64 * sizeof(HloInstr *));
  c->nparams = nparams;
  c->params = hlc_arena_alloc(&b->m.arena, (size_t)(nparams + 1) * sizeof(HloInstr *));
  b->m.comps[b->m.ncomps++] = c;
  b->comp = c;
  return c;
}

static HloShape shape(Mod *b, HloDtype t, int rank, const int64_t *dims) {
  HloShape s = {.dtype = t, .rank = rank};
  if (rank) s.dims = hlc_arena_memdup(&b->m.arena, dims, (size_t)rank * sizeof(int64_t));
  return s;
}

static HloShape vec(Mod *b, int64_t n) { return shape(b, HLO_F32, 1, &n); }

static HloInstr *ins(Mod *b, HloOpcode op, const char *name, HloShape s, int nops, ...) {
  HloComputation *c = b->comp;
  HloInstr *i = hlc_arena_alloc(&b->m.arena, sizeof *i);
  i->op = op;
  i->name = name;
  i->shape = s;
  i->parent = c;
  i->index = c->ninstrs;
  i->line = 10 + c->ninstrs;
  i->nops = nops;
  i->ops = hlc_arena_alloc(&b->m.arena, (size_t)(nops + 1) * sizeof(HloInstr *));
  va_list ap;
  va_start(ap, nops);
  for (int k = 0; k < nops; k++) i->ops[k] = va_arg(ap, HloInstr *);
  va_end(ap);
  c->instrs[c->ninstrs++] = i;
  c->root = i;   /* the last one, unless set otherwise */
  return i;
}

static HloInstr *param(Mod *b, int n, HloShape s) {
  HloInstr *p = ins(b, HLO_OP_PARAMETER, "p", s, 0);
  p->parameter_number = n;
  b->comp->params[n] = p;
  return p;
}

static HloInstr *constant_f32(Mod *b, const char *name, int64_t n, const float *vals) {
  HloInstr *i = ins(b, HLO_OP_CONSTANT, name, vec(b, n), 0);
  HloLiteral *l = hlc_arena_alloc(&b->m.arena, sizeof *l);
  l->shape = &i->shape;
  l->nbytes = (size_t)n * 4;
  l->data = vals ? hlc_arena_memdup(&b->m.arena, vals, l->nbytes) : NULL;
  l->elided = vals == NULL;
  i->literal = l;
  return i;
}

/* ---- test kernels ---------------------------------------------------------- */

static int kernel_calls;

static int k_add(HliExec *x, const HloInstr *i, HliValue *const *in, HliValue *out) {
  (void)x; (void)i;
  kernel_calls++;
  const float *a = in[0]->data, *c = in[1]->data;
  float *o = out->data;
  for (int64_t k = 0; k < out->nelem; k++) o[k] = a[k] + c[k];
  return 0;
}

static int k_negate(HliExec *x, const HloInstr *i, HliValue *const *in, HliValue *out) {
  (void)x; (void)i;
  kernel_calls++;
  const float *a = in[0]->data;
  float *o = out->data;
  for (int64_t k = 0; k < out->nelem; k++) o[k] = -a[k];
  return 0;
}

static int k_fail(HliExec *x, const HloInstr *i, HliValue *const *in, HliValue *out) {
  (void)in; (void)out;
  return hli_fail(x, i, "test failure");
}

static int check_reject(HliExec *x, const HloInstr *i) {
  return hli_unsupported(x, i, "test check rejects this");
}

/* call: run called[0] on the operands (as the control area's call does). */
static int k_call(HliExec *x, const HloInstr *i, HliValue *const *in, HliValue *out) {
  HliValue *r;
  if (hli_call(x, i->called[0].comp, in, &r) != 0) return -1;
  hli_value_copy_into(out, r);
  hli_value_unref(x, r);
  return 0;
}

static HliOpEntry saved[HLO_NUM_OPCODES];

/* The table is const for kernels; tests swap entries in and restore them. */
static void install(HloOpcode op, HliKernel run, HliKernelCheck check) {
  HliOpEntry *t = (HliOpEntry *)(uintptr_t)hli_op_table();
  t[op].run = run;
  t[op].check = check;
}

static void setup(void) {
  memcpy(saved, hli_op_table(), sizeof saved);
  install(HLO_OP_ADD, k_add, NULL);
  install(HLO_OP_NEGATE, k_negate, NULL);
  install(HLO_OP_CALL, k_call, NULL);
  kernel_calls = 0;
}

static void teardown(void) {
  memcpy((HliOpEntry *)(uintptr_t)hli_op_table(), saved, sizeof saved);
}

static HliValue *f32_value(const float *v, int64_t n, const HloShape *s) {
  (void)n;
  HliValue *x = hli_value_new(NULL, s);
  memcpy(x->data, v, x->nbytes);
  return x;
}

/* ---- tests ----------------------------------------------------------------- */

START_TEST(add_constant_and_parameter) {
  Mod *b = mod_new();
  HloComputation *c = comp_new(b, "main", 1);
  HloInstr *p = param(b, 0, vec(b, 3));
  static const float cv[3] = {10, 20, 30};
  HloInstr *k = constant_f32(b, "c", 3, cv);
  ins(b, HLO_OP_ADD, "sum", vec(b, 3), 2, p, k);
  HlcDiags d = {0};
  HliExec x;
  hli_exec_init(&x, &b->m, &d);
  const float in[3] = {1, 2, 3};
  HliValue *a = f32_value(in, 3, &p->shape), *r;
  ck_assert_int_eq(hli_call(&x, c, &a, &r), 0);
  const float *o = r->data;
  ck_assert_float_eq(o[0], 11);
  ck_assert_float_eq(o[1], 22);
  ck_assert_float_eq(o[2], 33);
  ck_assert_int_eq((int)x.mem_used, 12);   /* only the result is alive */
  hli_value_unref(&x, r);
  ck_assert_int_eq((int)x.mem_used, 0);
  ck_assert_int_eq(a->refs, 1);            /* the argument's reference was returned */
  hli_value_unref(NULL, a);
  hli_exec_free(&x);
  hlc_diags_clear(&d);
  mod_free(b);
}
END_TEST

START_TEST(last_use_releases_early) {
  /* x1 = p+p; x2 = x1+x1; x3 = x2+x2; x4 = x3+x3: at most two of the
   * intermediate buffers are ever alive (an operand and its result). */
  Mod *b = mod_new();
  HloComputation *c = comp_new(b, "main", 1);
  HloInstr *p = param(b, 0, vec(b, 1000));
  HloInstr *v = p;
  static const char *names[] = {"x1", "x2", "x3", "x4"};
  for (int i = 0; i < 4; i++) v = ins(b, HLO_OP_ADD, names[i], vec(b, 1000), 2, v, v);
  HlcDiags d = {0};
  HliExec x;
  hli_exec_init(&x, &b->m, &d);
  x.no_fusion = true;   /* one step per add (fused, only the result is allocated) */
  x.no_inplace = true;  /* (in place, x2..x4 would overwrite their operand) */
  HliValue *a = hli_value_zeros(NULL, &p->shape), *r;
  ((float *)a->data)[7] = 1.5f;
  ck_assert_int_eq(hli_call(&x, c, &a, &r), 0);
  ck_assert_float_eq(((float *)r->data)[7], 24.0f);   /* 1.5 * 2^4 */
  ck_assert_int_eq((int)x.mem_peak, 2 * 4000);
  hli_value_unref(&x, r);
  ck_assert_int_eq((int)x.mem_used, 0);
  hli_value_unref(NULL, a);
  hli_exec_free(&x);
  hlc_diags_clear(&d);
  mod_free(b);
}
END_TEST

START_TEST(dead_code_is_not_run) {
  Mod *b = mod_new();
  HloComputation *c = comp_new(b, "main", 1);
  HloInstr *p = param(b, 0, vec(b, 2));
  ins(b, HLO_OP_NEGATE, "unused", vec(b, 2), 1, p);
  HloInstr *n = ins(b, HLO_OP_NEGATE, "used", vec(b, 2), 1, p);
  ins(b, HLO_OP_NEGATE, "also_unused", vec(b, 2), 1, n);
  c->root = n;
  HlcDiags d = {0};
  HliExec x;
  hli_exec_init(&x, &b->m, &d);
  const float in[2] = {1, -2};
  HliValue *a = f32_value(in, 2, &p->shape), *r;
  ck_assert_int_eq(hli_call(&x, c, &a, &r), 0);
  ck_assert_int_eq(kernel_calls, 1);
  ck_assert_float_eq(((float *)r->data)[1], 2.0f);
  hli_value_unref(&x, r);
  hli_value_unref(NULL, a);
  hli_exec_free(&x);
  hlc_diags_clear(&d);
  mod_free(b);
}
END_TEST

START_TEST(tuple_gte_reshape_are_zero_copy) {
  Mod *b = mod_new();
  HloComputation *c = comp_new(b, "main", 2);
  HloInstr *p0 = param(b, 0, vec(b, 6));
  HloInstr *p1 = param(b, 1, vec(b, 6));
  HloShape ts = {.dtype = HLO_TUPLE, .ntuple = 2};
  ts.tuple = hlc_arena_alloc(&b->m.arena, 2 * sizeof(HloShape));
  ts.tuple[0] = p0->shape;
  ts.tuple[1] = p1->shape;
  HloInstr *t = ins(b, HLO_OP_TUPLE, "t", ts, 2, p0, p1);
  HloInstr *g = ins(b, HLO_OP_GET_TUPLE_ELEMENT, "g", vec(b, 6), 1, t);
  g->tuple_index = 1;
  static const int64_t d23[2] = {2, 3};
  ins(b, HLO_OP_RESHAPE, "r", shape(b, HLO_F32, 2, d23), 1, g);
  HlcDiags d = {0};
  HliExec x;
  hli_exec_init(&x, &b->m, &d);
  HliValue *args[2] = {hli_value_zeros(NULL, &p0->shape), hli_value_zeros(NULL, &p1->shape)};
  HliValue *r;
  ck_assert_int_eq(hli_call(&x, c, args, &r), 0);
  ck_assert_ptr_eq(r->data, args[1]->data);
  ck_assert_int_eq(r->rank, 2);
  ck_assert_int_eq(r->dims[0], 2);
  ck_assert_int_eq((int)x.mem_peak, 0);     /* nothing was allocated */
  ck_assert_int_eq(kernel_calls, 0);
  hli_value_unref(&x, r);
  ck_assert_int_eq(args[1]->refs, 1);
  hli_value_unref(NULL, args[0]);
  hli_value_unref(NULL, args[1]);
  hli_exec_free(&x);
  hlc_diags_clear(&d);
  mod_free(b);
}
END_TEST

START_TEST(wide_tuple) {
  /* A tuple with more operands than any kernel step (regression: the
   * operand buffer was sized for kernel steps only). */
  Mod *b = mod_new();
  HloComputation *c = comp_new(b, "main", 1);
  HloInstr *p = param(b, 0, vec(b, 1));
  HloShape ts = {.dtype = HLO_TUPLE, .ntuple = 9};
  ts.tuple = hlc_arena_alloc(&b->m.arena, 9 * sizeof(HloShape));
  for (int i = 0; i < 9; i++) ts.tuple[i] = p->shape;
  HloInstr *t = ins(b, HLO_OP_TUPLE, "t", ts, 0);
  t->nops = 9;
  t->ops = hlc_arena_alloc(&b->m.arena, 9 * sizeof(HloInstr *));
  for (int i = 0; i < 9; i++) t->ops[i] = p;
  HlcDiags d = {0};
  HliExec x;
  hli_exec_init(&x, &b->m, &d);
  HliValue *a = hli_value_zeros(NULL, &p->shape), *r;
  for (int rep = 0; rep < 3; rep++) {
    ck_assert_int_eq(hli_call(&x, c, &a, &r), 0);
    ck_assert_int_eq(r->ntuple, 9);
    ck_assert_ptr_eq(r->tuple[8], a);
    hli_value_unref(&x, r);
  }
  ck_assert_int_eq(a->refs, 1);
  hli_value_unref(NULL, a);
  hli_exec_free(&x);
  hlc_diags_clear(&d);
  mod_free(b);
}
END_TEST

START_TEST(repeated_calls_reuse_the_plan) {
  /* body(p) = p + 1, called through a "call" kernel 2000 times. */
  Mod *b = mod_new();
  HloComputation *body = comp_new(b, "body", 1);
  HloInstr *bp = param(b, 0, vec(b, 4));
  static const float one[4] = {1, 1, 1, 1};
  HloInstr *k = constant_f32(b, "one", 4, one);
  ins(b, HLO_OP_ADD, "inc", vec(b, 4), 2, bp, k);
  HloComputation *main = comp_new(b, "main", 1);
  HloInstr *p = param(b, 0, vec(b, 4));
  HloInstr *call = ins(b, HLO_OP_CALL, "call", vec(b, 4), 1, p);
  call->ncalled = 1;
  call->called = hlc_arena_alloc(&b->m.arena, sizeof(HloCalled));
  call->called[0].comp = body;
  HlcDiags d = {0};
  HliExec x;
  hli_exec_init(&x, &b->m, &d);
  ck_assert_int_eq(hli_exec_prepare(&x, main), 0);
  ck_assert_int_eq(x.nplans, 2);
  size_t planned = x.plan_arena.total;
  HliValue *v = hli_value_zeros(&x, &p->shape);
  for (int i = 0; i < 2000; i++) {
    HliValue *r;
    ck_assert_int_eq(hli_call(&x, main, &v, &r), 0);
    hli_value_unref(&x, v);
    v = r;
    ck_assert_int_eq((int)x.mem_used, 16);   /* only the current value */
  }
  ck_assert_float_eq(((float *)v->data)[3], 2000.0f);
  ck_assert_int_eq(x.nplans, 2);
  ck_assert_uint_eq(x.plan_arena.total, planned);   /* no re-planning */
  hli_value_unref(&x, v);
  ck_assert_int_eq((int)x.mem_used, 0);
  hli_exec_free(&x);
  hlc_diags_clear(&d);
  mod_free(b);
}
END_TEST

START_TEST(missing_kernel_is_a_plan_time_error) {
  Mod *b = mod_new();
  HloComputation *c = comp_new(b, "main", 1);
  HloInstr *p = param(b, 0, vec(b, 2));
  HloInstr *n = ins(b, HLO_OP_NEGATE, "first", vec(b, 2), 1, p);
  HloInstr *cos = ins(b, HLO_OP_COSINE, "cos.7", vec(b, 2), 1, n);
  (void)cos;
  install(HLO_OP_COSINE, NULL, NULL);
  HlcDiags d = {0};
  HliExec x;
  hli_exec_init(&x, &b->m, &d);
  HliValue *a = hli_value_zeros(NULL, &p->shape), *r = NULL;
  ck_assert_int_eq(hli_call(&x, c, &a, &r), -1);
  ck_assert_ptr_null(r);
  ck_assert_int_eq(kernel_calls, 0);   /* nothing ran */
  ck_assert_int_eq(d.nerrors, 1);
  ck_assert_str_eq(d.v[0].text, "error: test.hlo:12: in cos.7 (cosine): not supported: opcode "
                                "cosine has no kernel in hlorun\n");
  hli_value_unref(NULL, a);
  hli_exec_free(&x);
  hlc_diags_clear(&d);
  mod_free(b);
}
END_TEST

START_TEST(failing_check_and_failing_kernel) {
  Mod *b = mod_new();
  HloComputation *c = comp_new(b, "main", 1);
  HloInstr *p = param(b, 0, vec(b, 2));
  ins(b, HLO_OP_SINE, "s", vec(b, 2), 1, p);
  install(HLO_OP_SINE, k_negate, check_reject);
  HlcDiags d = {0};
  HliExec x;
  hli_exec_init(&x, &b->m, &d);
  ck_assert_int_eq(hli_exec_prepare(&x, c), -1);
  ck_assert_str_eq(d.v[0].message, "test.hlo:11: in s (sine): not supported: test check rejects this");
  hli_exec_free(&x);
  hlc_diags_clear(&d);

  /* A kernel failing at run time: the error names it, memory is returned. */
  install(HLO_OP_SINE, k_fail, NULL);
  hli_exec_init(&x, &b->m, &d);
  HliValue *a = hli_value_zeros(NULL, &p->shape), *r;
  ck_assert_int_eq(hli_call(&x, c, &a, &r), -1);
  ck_assert_str_eq(d.v[0].message, "test.hlo:11: in s (sine): test failure");
  ck_assert_int_eq((int)x.mem_used, 0);
  ck_assert_int_eq(a->refs, 1);
  hli_value_unref(NULL, a);
  hli_exec_free(&x);
  hlc_diags_clear(&d);
  mod_free(b);
}
END_TEST

START_TEST(elided_constant) {
  Mod *b = mod_new();
  HloComputation *c = comp_new(b, "main", 0);
  constant_f32(b, "big", 5, NULL);
  HlcDiags d = {0};
  HliExec x;
  hli_exec_init(&x, &b->m, &d);
  HliValue *r;
  ck_assert_int_eq(hli_call(&x, c, NULL, &r), -1);
  ck_assert_ptr_nonnull(strstr(d.v[0].message, "in big (constant): the constant's values are elided"));
  hli_exec_free(&x);
  hlc_diags_clear(&d);

  /* With random fill: deterministic values in [-1, 1) and one warning. */
  float first[5];
  for (int run = 0; run < 2; run++) {
    hli_exec_init(&x, &b->m, &d);
    x.random_constants = true;
    x.random_seed = 42;
    ck_assert_int_eq(hli_call(&x, c, NULL, &r), 0);
    const float *f = r->data;
    for (int i = 0; i < 5; i++) {
      ck_assert(f[i] >= -1.0f && f[i] < 1.0f);
      if (run == 0) first[i] = f[i];
      else ck_assert_float_eq(f[i], first[i]);
    }
    ck_assert_int_eq(d.nwarnings, 1);
    hli_value_unref(&x, r);
    hli_exec_free(&x);
    hlc_diags_clear(&d);
  }
  mod_free(b);
}
END_TEST

/* ---- thread pool ----------------------------------------------------------- */

typedef struct SumArg { atomic_llong sum; atomic_int calls; HliExec *x; } SumArg;

static void sum_range(void *arg, int64_t lo, int64_t hi) {
  SumArg *s = arg;
  long long t = 0;
  for (int64_t i = lo; i < hi; i++) t += i;
  atomic_fetch_add(&s->sum, t);
  atomic_fetch_add(&s->calls, 1);
}

static void nested_range(void *arg, int64_t lo, int64_t hi) {
  SumArg *s = arg;
  /* A parallel loop inside a job runs inline on this thread. */
  for (int64_t i = lo; i < hi; i++) {
    SumArg inner = {0};
    hli_parallel_for(s->x, 100, 1, sum_range, &inner);
    ck_assert_int_eq(atomic_load(&inner.calls), 1);
    atomic_fetch_add(&s->sum, atomic_load(&inner.sum));
  }
}

START_TEST(pool_sums_a_range) {
  HliExec x;
  hli_exec_init(&x, NULL, NULL);
  x.pool = hli_pool_new(4);
  ck_assert_ptr_nonnull(x.pool);
  x.nthreads = hli_pool_threads(x.pool);
  ck_assert_int_eq(x.nthreads, 4);
  for (int rep = 0; rep < 50; rep++) {
    SumArg s = {0};
    int64_t n = 1000003;
    hli_parallel_for(&x, n, 1000, sum_range, &s);
    ck_assert_int_eq(atomic_load(&s.sum), (long long)n * (n - 1) / 2);
    ck_assert_int_gt(atomic_load(&s.calls), 1);
  }
  /* Small ranges run inline, in one call. */
  SumArg s = {0};
  hli_parallel_for(&x, 10, 8, sum_range, &s);
  ck_assert_int_eq(atomic_load(&s.calls), 1);
  ck_assert_int_eq(atomic_load(&s.sum), 45);
  /* Nested loops. */
  SumArg outer = {0};
  outer.x = &x;
  hli_parallel_for(&x, 64, 1, nested_range, &outer);
  ck_assert_int_eq(atomic_load(&outer.sum), 64 * 4950);
  hli_pool_free(x.pool);
  hli_exec_free(&x);
}
END_TEST

/* Jobs back to back (the workers still poll for the next one) and after
 * pauses longer than they poll (they sleep and must be woken), then the
 * pool freed while its workers poll: every job sums the whole range. Pools
 * of 2 threads (polling on any machine with two CPUs) and 5 (more threads
 * than this machine's CPUs: no polling). */
START_TEST(pool_wakes_polling_and_sleeping_workers) {
  for (int size = 2; size <= 5; size += 3) {
    HliExec x;
    hli_exec_init(&x, NULL, NULL);
    x.pool = hli_pool_new(size);
    ck_assert_ptr_nonnull(x.pool);
    x.nthreads = hli_pool_threads(x.pool);
    int64_t n = 100003;
    long long want = (long long)n * (n - 1) / 2, bad = 0;
    for (int rep = 0; rep < 120; rep++) {
      if (rep % 8 == 0) nanosleep(&(struct timespec){0, 2000000}, NULL);   /* 2 ms */
      SumArg s = {0};
      hli_parallel_for(&x, n, 1000, sum_range, &s);
      bad += atomic_load(&s.sum) != want;
    }
    ck_assert_msg(bad == 0, "pool of %d: %lld wrong sums", size, bad);
    hli_pool_free(x.pool);
    hli_exec_free(&x);
  }
}
END_TEST

START_TEST(pool_single_thread_inline) {
  ck_assert_ptr_null(hli_pool_new(1));
  HliExec x;
  hli_exec_init(&x, NULL, NULL);
  SumArg s = {0};
  hli_parallel_for(&x, 1000000, 10, sum_range, &s);
  ck_assert_int_eq(atomic_load(&s.calls), 1);
  ck_assert_int_eq(atomic_load(&s.sum), 1000000LL * 999999 / 2);
  hli_parallel_for(NULL, 0, 10, sum_range, &s);   /* empty: no call */
  ck_assert_int_eq(atomic_load(&s.calls), 1);
  ck_assert_int_ge(hli_cpu_count(), 1);
  hli_exec_free(&x);
}
END_TEST

START_TEST(random_fill_ranges) {
  int64_t n = 1000;
  HloShape s32 = {.dtype = HLO_S32, .rank = 1, .dims = &n};
  HloShape u8 = {.dtype = HLO_U8, .rank = 1, .dims = &n};
  HloShape pr = {.dtype = HLO_PRED, .rank = 1, .dims = &n};
  HliValue *a = hli_value_new(NULL, &s32), *b = hli_value_new(NULL, &u8), *c = hli_value_new(NULL, &pr);
  hli_fill_random(a, 1);
  hli_fill_random(b, 1);
  hli_fill_random(c, 1);
  int trues = 0;
  for (int64_t i = 0; i < n; i++) {
    int32_t v = ((int32_t *)a->data)[i];
    ck_assert(v >= -8 && v < 8);
    ck_assert(((uint8_t *)b->data)[i] < 16);
    ck_assert(((uint8_t *)c->data)[i] <= 1);
    trues += ((uint8_t *)c->data)[i];
  }
  ck_assert(trues > 100 && trues < 900);
  hli_value_unref(NULL, a);
  hli_value_unref(NULL, b);
  hli_value_unref(NULL, c);
}
END_TEST

static Suite *core_suite(void) {
  Suite *s = suite_create("core");
  TCase *t = tcase_create("executor");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_add_test(t, add_constant_and_parameter);
  tcase_add_test(t, last_use_releases_early);
  tcase_add_test(t, dead_code_is_not_run);
  tcase_add_test(t, tuple_gte_reshape_are_zero_copy);
  tcase_add_test(t, repeated_calls_reuse_the_plan);
  tcase_add_test(t, wide_tuple);
  tcase_add_test(t, missing_kernel_is_a_plan_time_error);
  tcase_add_test(t, failing_check_and_failing_kernel);
  tcase_add_test(t, elided_constant);
  tcase_add_test(t, random_fill_ranges);
  suite_add_tcase(s, t);
  TCase *p = tcase_create("pool");
  tcase_add_test(p, pool_sums_a_range);
  tcase_add_test(p, pool_wakes_polling_and_sleeping_workers);
  tcase_add_test(p, pool_single_thread_inline);
  tcase_set_timeout(p, 60);
  suite_add_tcase(s, p);
  return s;
}

int main(void) { return tl_main(core_suite()); }
