/* testlib.c: the helpers the Check suites share (see testlib.h): IR and
 * values built by hand, one kernel run without an executor, whole modules run
 * through the public API, the GEMM instruction-set loop, integer test data
 * and results, reading a file, and the suites' main(). No test lives here. */
#include "tests/testlib.h"
#include "interp/kernels/gemm.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- one arena per test -------------------------------------------------- */

HlcArena tl_arena;

/* Values made by tl_kept, released by tl_end. */
static HliValue **kept;
static int nkept, capkept;

void tl_begin(void) {
  hlc_arena_init(&tl_arena);
  nkept = 0;
}

void tl_end(void) {
  for (int i = 0; i < nkept; i++) hli_value_unref(NULL, kept[i]);
  free(kept);
  kept = NULL;
  nkept = capkept = 0;
  hlc_arena_free(&tl_arena);
}

/* n (at least one) elements of size sz from the arena, zero-filled. */
static void *arena_array(size_t n, size_t sz) {
  return hlc_arena_alloc(&tl_arena, sz * (n ? n : 1));
}

/* ---- shapes and attribute lists ------------------------------------------ */

HloShape tl_shape(HloDtype t, int rank, const int64_t *dims) {
  HloShape s;
  memset(&s, 0, sizeof s);
  s.dtype = t;
  s.rank = rank;
  s.dims = arena_array((size_t)rank, sizeof(int64_t));
  s.minor_to_major = arena_array((size_t)rank, sizeof(int64_t));
  for (int i = 0; i < rank; i++) {
    s.dims[i] = dims[i];
    s.minor_to_major[i] = rank - 1 - i;
  }
  return s;
}

HloShape tl_tuple(int n, const HloShape *elems) {
  HloShape s;
  memset(&s, 0, sizeof s);
  s.dtype = HLO_TUPLE;
  s.ntuple = n;
  s.tuple = arena_array((size_t)n, sizeof *elems);
  if (n) memcpy(s.tuple, elems, sizeof *elems * (size_t)n);
  return s;
}

HloI64s tl_ints(int n, const int64_t *v) {
  HloI64s r = { n, arena_array((size_t)n, sizeof *v) };
  if (n) memcpy(r.v, v, sizeof *v * (size_t)n);
  return r;
}

/* ---- instructions and computations --------------------------------------- */

HloInstr *tl_instr(HloOpcode op, HloShape s, int nops, ...) {
  HloInstr *i = hlc_arena_alloc(&tl_arena, sizeof *i);
  i->op = op;
  i->name = "t";
  i->line = 1;
  i->shape = s;
  i->nops = nops;
  i->ops = arena_array((size_t)nops, sizeof(HloInstr *));
  va_list ap;
  va_start(ap, nops);
  for (int k = 0; k < nops; k++) i->ops[k] = va_arg(ap, HloInstr *);
  va_end(ap);
  /* The parser's defaults for attributes that were not written. */
  i->feature_group_count = i->batch_group_count = 1;
  i->largest = true;
  return i;
}

HloInstr *tl_param(int64_t n, HloShape s) {
  HloInstr *p = tl_instr(HLO_OP_PARAMETER, s, 0);
  p->parameter_number = n;
  return p;
}

HloInstr *tl_const_f32(float v) {
  HloInstr *i = tl_instr(HLO_OP_CONSTANT, SCALAR(HLO_F32), 0);
  i->literal = hlc_arena_alloc(&tl_arena, sizeof *i->literal);
  i->literal->shape = &i->shape;
  i->literal->data = hlc_arena_memdup(&tl_arena, &v, sizeof v);
  i->literal->nbytes = sizeof v;
  return i;
}

HloInstr *tl_cmp(HloCmpDir d, HloCmpType t, HloInstr *a, HloInstr *b) {
  HloInstr *i = tl_instr(HLO_OP_COMPARE, SCALAR(HLO_PRED), 2, a, b);
  i->cmp_dir = d;
  i->cmp_type = t;
  return i;
}

/* Append ins and (first) its operands to c->instrs unless already there. */
static void add_with_operands(HloComputation *c, HloInstr *ins, int cap) {
  for (int k = 0; k < c->ninstrs; k++)
    if (c->instrs[k] == ins) return;
  for (int k = 0; k < ins->nops; k++) add_with_operands(c, ins->ops[k], cap);
  ck_assert_int_lt(c->ninstrs, cap);
  ins->parent = c;
  ins->index = c->ninstrs;
  c->instrs[c->ninstrs++] = ins;
}

HloComputation *tl_comp(int np, HloInstr **params, HloInstr *root) {
  enum { CAP = 64 };
  HloComputation *c = hlc_arena_alloc(&tl_arena, sizeof *c);
  c->name = "comp";
  c->nparams = np;
  c->params = arena_array((size_t)np, sizeof(HloInstr *));
  if (np) memcpy(c->params, params, sizeof(HloInstr *) * (size_t)np);
  c->instrs = arena_array(CAP, sizeof(HloInstr *));
  for (int k = 0; k < np; k++) add_with_operands(c, params[k], CAP);
  add_with_operands(c, root, CAP);
  c->root = root;
  root->is_root = true;
  return c;
}

HloComputation *tl_binop(HloOpcode op, HloDtype t) {
  HloInstr *p[2] = {tl_param(0, SCALAR(t)), tl_param(1, SCALAR(t))};
  if (op == HLO_OP_PARAMETER) return tl_comp(2, p, p[1]);
  HloShape rs = SCALAR(op == HLO_OP_COMPARE ? HLO_PRED : t);
  return tl_comp(2, p, tl_instr(op, rs, 2, p[0], p[1]));
}

HloComputation *tl_cmp_comp(HloDtype t, int nparams, HloCmpDir d, HloCmpType ct) {
  HloInstr *p[32];
  ck_assert_int_le(nparams, 32);
  for (int k = 0; k < nparams; k++) p[k] = tl_param(k, SCALAR(t));
  return tl_comp(nparams, p, tl_cmp(d, ct, p[0], p[1]));
}

void tl_call(HloInstr *ins, HloCallRole role, HloComputation *c) {
  HloCalled *n = arena_array((size_t)ins->ncalled + 1, sizeof(HloCalled));
  if (ins->ncalled) memcpy(n, ins->called, sizeof(HloCalled) * (size_t)ins->ncalled);
  n[ins->ncalled].role = role;
  n[ins->ncalled].comp = c;
  ins->called = n;
  ins->ncalled++;
}

void tl_dims(HloInstr *ins, int n, const int64_t *d) {
  ins->dimensions = tl_ints(n, d);
  ins->has_dimensions = true;
}

void tl_window(HloInstr *ins, int rank, const int64_t (*w)[6]) {
  ins->window.rank = rank;
  ins->window.present = true;
  ins->window.dims = arena_array((size_t)rank, sizeof(HloWindowDim));
  for (int d = 0; d < rank; d++)
    ins->window.dims[d] = (HloWindowDim){w[d][0], w[d][1], w[d][2], w[d][3], w[d][4], w[d][5], false};
}

/* ---- values -------------------------------------------------------------- */

HliValue *tl_value(const HloShape *s, const void *data) {
  HliValue *v = hli_value_new(NULL, s);
  ck_assert_ptr_nonnull(v);
  if (v->nbytes && data) memcpy(v->data, data, v->nbytes);
  return v;
}

HliValue *tl_kept(const HloShape *s, const void *data) {
  HliValue *v = tl_value(s, data);
  if (nkept == capkept) {
    capkept = capkept ? 2 * capkept : 64;
    kept = realloc(kept, sizeof *kept * (size_t)capkept);
    ck_assert_ptr_nonnull(kept);
  }
  kept[nkept++] = v;
  return v;
}

void tl_free(int n, HliValue **v) {
  for (int i = 0; i < n; i++) hli_value_unref(NULL, v[i]);
}

void tl_expect_f32_near(const HliValue *v, const float *want, int64_t n, double tol) {
  ck_assert_int_eq(v->nelem, n);
  const float *got = v->data;
  for (int64_t i = 0; i < n; i++)
    ck_assert_msg(fabs((double)got[i] - (double)want[i]) <= tol * (1 + fabs((double)want[i])),
                  "element %lld: got %.9g want %.9g", (long long)i, got[i], want[i]);
}

/* ---- one kernel, no executor --------------------------------------------- */

HliValue *tl_try_run(const HloInstr *ins, HliValue *const *in) {
  const HliOpEntry *e = &hli_op_table()[ins->op];
  if (!e->run) return NULL;
  if (e->check && e->check(NULL, ins) != 0) return NULL;
  HliValue *out = hli_value_new(NULL, &ins->shape);
  if (!out) return NULL;
  if (e->run(NULL, ins, in, out) != 0) {
    hli_value_unref(NULL, out);
    return NULL;
  }
  return out;
}

HliValue *tl_run(const HloInstr *ins, HliValue *const *in) {
  const HliOpEntry *e = &hli_op_table()[ins->op];
  ck_assert_msg(e->run != NULL, "no kernel for %s", hlp_opcode_name(ins->op));
  if (e->check) ck_assert_msg(e->check(NULL, ins) == 0, "check failed: %s", hli_last_error());
  HliValue *out = hli_value_new(NULL, &ins->shape);
  ck_assert_ptr_nonnull(out);
  ck_assert_msg(e->run(NULL, ins, in, out) == 0, "run failed: %s", hli_last_error());
  return out;
}

void tl_refused(const HloInstr *ins, const char *want) {
  const HliOpEntry *e = &hli_op_table()[ins->op];
  ck_assert_ptr_nonnull(e->check);
  ck_assert_int_eq(e->check(NULL, ins), -1);
  ck_assert_msg(strstr(hli_last_error(), want) != NULL, "error \"%s\" lacks \"%s\"",
                hli_last_error(), want);
}

/* ---- whole modules through the public API -------------------------------- */

HloCtx *tl_ctx_new(int threads) { return tl_ctx_limited(threads, 0); }

HloCtx *tl_ctx_limited(int threads, uint64_t max_memory) {
  HloCtxOptions o = {.struct_size = sizeof o, .threads = threads, .max_memory = max_memory};
  HloCtx *ctx = NULL;
  ck_assert_int_eq(hlo_ctx_new(&o, &ctx), HLO_OK);
  return ctx;
}

char *tl_run_test_file(const char *text, int *passed, int *failed) {
  char path[] = "/tmp/hlorun-testfile-XXXXXX.mlir";
  int fd = mkstemps(path, 5);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
  HloCtx *ctx = tl_ctx_new(0);
  char *report = NULL;
  ck_assert(hlo_is_test_file(text, strlen(text)));
  ck_assert_int_eq(hlo_run_test_file(ctx, path, NULL, passed, failed, &report), HLO_OK);
  hlo_ctx_free(ctx);
  unlink(path);
  return report;
}

HloStatus tl_run_module(HloCtx *ctx, const char *text, HloBuffer *const *in, int n,
                        HloBuffer **out) {
  HloModule *m = NULL;
  *out = NULL;
  HloStatus st = hlo_module_parse(ctx, text, strlen(text), "test.hlo", &m);
  if (st == HLO_OK) st = hlo_run(ctx, m, in, n, out);
  hlo_module_free(m);
  return st;
}

HloBuffer *tl_run_ok(HloCtx *ctx, const char *text, HloBuffer *const *in, int n) {
  HloBuffer *r = NULL;
  HloStatus st = tl_run_module(ctx, text, in, n, &r);
  ck_assert_msg(st == HLO_OK, "status %d: %s", st, hlo_ctx_diagnostics(ctx));
  return r;
}

char *tl_run_literal(HloCtx *ctx, const char *text, HloBuffer *const *in, int n,
                     HloStatus *status) {
  HloBuffer *r = NULL;
  char *lit = NULL;
  HloStatus st = tl_run_module(ctx, text, in, n, &r);
  if (st == HLO_OK) {
    size_t len;
    st = hlo_buffer_to_literal(ctx, r, &lit, &len);
  }
  hlo_buffer_free(r);
  if (status) *status = st;
  return lit;
}

TlRun tl_run_arrays(int threads, const char *text, int n, const TlArray *in) {
  TlRun r = {.ctx = tl_ctx_new(threads), .nin = n};
  ck_assert_int_le(n, (int)(sizeof r.in / sizeof *r.in));
  for (int i = 0; i < n; i++)
    ck_assert_int_eq(hlo_buffer_new_array(r.ctx, in[i].type, in[i].dims, in[i].rank, in[i].data,
                                          &r.in[i]), HLO_OK);
  r.result = tl_run_ok(r.ctx, text, r.in, n);
  return r;
}

/* Scribble over a result's arrays before they are freed: the executor keeps
 * large buffers for reuse, and a later run handed this one back must not
 * find the right answer already in it (a run that skipped part of its work
 * would pass). */
static void poison(HloCtx *ctx, const HloBuffer *b) {
  if (!b) return;
  if (hlo_buffer_type(b) == HLO_TYPE_TUPLE) {
    for (int i = 0; i < hlo_buffer_tuple_size(b); i++) {
      HloBuffer *e = NULL;
      if (hlo_buffer_tuple_element(ctx, b, i, &e) == HLO_OK) poison(ctx, e);
      hlo_buffer_free(e);
    }
    return;
  }
  void *d = (void *)(uintptr_t)hlo_buffer_data(b);
  if (d) memset(d, 0xA5, hlo_buffer_nbytes(b));
}

void tl_run_done(TlRun *r) {
  poison(r->ctx, r->result);
  hlo_buffer_free(r->result);
  for (int i = 0; i < r->nin; i++) hlo_buffer_free(r->in[i]);
  hlo_ctx_free(r->ctx);
  *r = (TlRun){0};
}

/* ---- GEMM instruction sets ----------------------------------------------- */

bool tl_gemm_isa_next(TlGemmIsas *g) {
  static const char *const isas[] = {"scalar", "avx2", "avx512"};
  enum { NISAS = sizeof isas / sizeof *isas };
  if (g->next == 0) g->saved = hlk_gemm_isa();
  while (g->next < NISAS) {
    g->isa = isas[g->next++];
    if (hlk_gemm_force_isa(g->isa)) return true;   /* else the CPU lacks it */
  }
  g->isa = NULL;
  ck_assert_msg(hlk_gemm_force_isa(g->saved), "cannot restore GEMM ISA %s", g->saved);
  return false;
}

/* ---- integers ------------------------------------------------------------ */

uint64_t tl_lcg(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return *s >> 11;
}

int64_t tl_int_at(const HliValue *v, int64_t i) {
  switch (v->dtype) {
  case HLO_S8: case HLO_S4: return ((const int8_t *)v->data)[i];
  case HLO_U8: case HLO_PRED: case HLO_U4: return ((const uint8_t *)v->data)[i];
  case HLO_S16: return ((const int16_t *)v->data)[i];
  case HLO_U16: return ((const uint16_t *)v->data)[i];
  case HLO_S32: return ((const int32_t *)v->data)[i];
  case HLO_U32: return ((const uint32_t *)v->data)[i];
  default: return ((const int64_t *)v->data)[i];
  }
}

int64_t tl_int_wrap(HloDtype t, uint64_t v) {
  switch (t) {
  case HLO_S8: return (int8_t)(uint8_t)v;
  case HLO_U8: return (uint8_t)v;
  case HLO_S16: return (int16_t)(uint16_t)v;
  case HLO_U16: return (uint16_t)v;
  case HLO_S32: return (int32_t)(uint32_t)v;
  case HLO_U32: return (uint32_t)v;
  case HLO_S4: return ((int64_t)(v << 60)) >> 60;
  case HLO_U4: return (int64_t)(v & 15);
  default: return (int64_t)v;
  }
}

void tl_expect_wrapped(const HliValue *o, const uint64_t *want, const char *what) {
  ck_assert_ptr_nonnull(o);
  for (int64_t i = 0; i < o->nelem; i++) {
    int64_t w = o->dtype == HLO_PRED ? want[i] != 0 : tl_int_wrap(o->dtype, want[i]);
    ck_assert_msg(tl_int_at(o, i) == w, "%s (GEMM ISA %s): element %lld is %lld, want %lld", what,
                  hlk_gemm_isa(), (long long)i, (long long)tl_int_at(o, i), (long long)w);
  }
}

/* ---- files --------------------------------------------------------------- */

char *tl_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *p = malloc(cap + 1);   /* + 1: the NUL */
  size_t r;
  while (p && (r = fread(p + n, 1, cap - n, f)) > 0) {
    n += r;
    if (n == cap) { char *q = realloc(p, (cap *= 2) + 1); if (!q) { free(p); p = NULL; } else p = q; }
  }
  fclose(f);
  if (p) p[n] = 0;
  *len = n;
  return p;
}

/* ---- main ---------------------------------------------------------------- */

int tl_main(Suite *s) {
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
