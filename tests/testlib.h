/* testlib.h: the helpers the Check suites share (tests/testlib.c, linked into
 * every check program through TEST_LIBS).
 *
 * - IR by hand: shapes with the default layout, attribute lists, instructions,
 *   parameters, small scalar computations (reducers, comparators), all in one
 *   arena per test (tl_begin/tl_end, or as a checked fixture). The fields are
 *   set as the parser would set them for the same text (default layout,
 *   feature/batch group counts 1, topk largest), so kernels see the same IR.
 * - Values: arrays filled from bytes; tl_kept ones are released by tl_end.
 * - Running one kernel without an executor, through the opcode table: the
 *   plan-time check, then the kernel (tl_run asserts, tl_try_run reports).
 * - Whole modules through the public API (hlorun.h): parse text and run it,
 *   also on array inputs under a given thread count.
 * - Every GEMM micro-kernel instruction set the CPU has, forced in turn.
 * - Integer results: a 64-bit generator for test data, elements read back as
 *   typed values, sums reduced modulo 2^64 to what the result type keeps.
 * - Files: a whole file read into memory.
 * - tl_main: the Check runner every suite's main() is.
 *
 * Not here: anything one suite alone needs (it stays in that suite), and
 * expected values: every suite works out its own. */
#ifndef HLORUN_TESTS_TESTLIB_H
#define HLORUN_TESTS_TESTLIB_H
#include <check.h>
#include <stdbool.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hlorun.h"
#include "common/arena.h"
#include "interp/interp.h"

/* ---- one arena per test -------------------------------------------------- */

extern HlcArena tl_arena;   /* owns every IR object the builders below make */
void tl_begin(void);        /* start a test: a fresh arena */
void tl_end(void);          /* free the arena and release the tl_kept values */

/* ---- shapes and attribute lists ------------------------------------------ */

/* Array shape of element type t with the default (row-major) layout. */
HloShape tl_shape(HloDtype t, int rank, const int64_t *dims);
#define SH(t, ...) tl_shape(t, (int)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), \
                            (int64_t[]){ __VA_ARGS__ })
#define SCALAR(t) tl_shape(t, 0, NULL)
/* Tuple shape of n elements (copied). */
HloShape tl_tuple(int n, const HloShape *elems);

/* A list of integers (dimensions={...}, slice_sizes, ...) copied to the arena. */
HloI64s tl_ints(int n, const int64_t *v);
#define INTS(...) tl_ints((int)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), \
                          (int64_t[]){ __VA_ARGS__ })
#define NOINTS ((HloI64s){ 0, NULL })

/* ---- instructions and computations --------------------------------------- */

/* Instruction `t` (line 1) of opcode op, result shape s, nops operands given
 * as HloInstr * arguments. */
HloInstr *tl_instr(HloOpcode op, HloShape s, int nops, ...);
/* parameter(n) of shape s. */
HloInstr *tl_param(int64_t n, HloShape s);
/* A f32[] constant. */
HloInstr *tl_const_f32(float v);
/* compare(a, b) with direction d and type t: a pred[] instruction. */
HloInstr *tl_cmp(HloCmpDir d, HloCmpType t, HloInstr *a, HloInstr *b);

/* A computation from its parameters (in order) and root; its instruction
 * list is every instruction the root depends on, operands first. */
HloComputation *tl_comp(int np, HloInstr **params, HloInstr *root);
/* (p0, p1) -> ROOT op(p0, p1) on scalars of type t (compare gives pred);
 * op HLO_OP_PARAMETER means ROOT = p1. */
HloComputation *tl_binop(HloOpcode op, HloDtype t);
/* nparams scalar parameters of type t -> ROOT compare(p0, p1) dir d, type ct
 * (sort comparators, select computations). */
HloComputation *tl_cmp_comp(HloDtype t, int nparams, HloCmpDir d, HloCmpType ct);

/* Append c to ins's called computations in role role (to_apply, select, ...). */
void tl_call(HloInstr *ins, HloCallRole role, HloComputation *c);
/* dimensions={d[0..n-1]}. */
void tl_dims(HloInstr *ins, int n, const int64_t *d);
/* window={...}: per dim {size, stride, pad_lo, pad_hi, base dilation,
 * window dilation}. */
void tl_window(HloInstr *ins, int rank, const int64_t (*w)[6]);

/* ---- values -------------------------------------------------------------- */

/* A new value of shape s (which must outlive it) holding the bytes at data
 * (left uninitialised when data is NULL). Release with hli_value_unref. */
HliValue *tl_value(const HloShape *s, const void *data);
#define VAL(ins, T, ...) tl_value(&(ins)->shape, (T[]){ __VA_ARGS__ })
/* Same, but tl_end releases it. */
HliValue *tl_kept(const HloShape *s, const void *data);
/* Release n values. */
void tl_free(int n, HliValue **v);

/* v holds exactly the listed elements of type T, bit for bit. */
#define EXPECT(v, T, ...)                                                              \
  do {                                                                                 \
    const T want_[] = { __VA_ARGS__ };                                                 \
    size_t n_ = sizeof want_ / sizeof want_[0];                                        \
    ck_assert_int_eq((v)->nelem, (int64_t)n_);                                         \
    for (size_t k_ = 0; k_ < n_; k_++)                                                 \
      ck_assert_msg(memcmp(&((const T *)(v)->data)[k_], &want_[k_], sizeof(T)) == 0,   \
                    "element %zu differs", k_);                                        \
  } while (0)
/* v is f32[n] with |got - want| <= tol * (1 + |want|) element by element. */
void tl_expect_f32_near(const HliValue *v, const float *want, int64_t n, double tol);

/* ---- one kernel, no executor --------------------------------------------- */

/* Check then run ins on the operand values; the result (caller releases).
 * A missing kernel, a refusal or a failure fails the test. */
HliValue *tl_run(const HloInstr *ins, HliValue *const *in);
/* Same, but NULL when there is no kernel, the check refuses or the run fails
 * (hli_last_error() says why). */
HliValue *tl_try_run(const HloInstr *ins, HliValue *const *in);
/* The plan-time check must refuse ins with a message containing want. */
void tl_refused(const HloInstr *ins, const char *want);

/* ---- whole modules through the public API -------------------------------- */

/* A context with the given number of threads (0: one per core). */
HloCtx *tl_ctx_new(int threads);
/* Same, with a memory limit of max_memory bytes (0: the default). */
HloCtx *tl_ctx_limited(int threads, uint64_t max_memory);
/* Run text as a StableHLO test file (written to a temporary .mlir): its
 * passed and failed checks, and the report (free with hlo_free). */
char *tl_run_test_file(const char *text, int *passed, int *failed);
/* Parse text (named test.hlo) and run it on n inputs; *out gets the result.
 * The first failing status (the diagnostics are in ctx). */
HloStatus tl_run_module(HloCtx *ctx, const char *text, HloBuffer *const *in, int n,
                        HloBuffer **out);
/* Same, and the test fails unless it all works; the result. */
HloBuffer *tl_run_ok(HloCtx *ctx, const char *text, HloBuffer *const *in, int n);
/* Same, the result as literal text (hlo_free it), or NULL with *status set
 * (status may be NULL). */
char *tl_run_literal(HloCtx *ctx, const char *text, HloBuffer *const *in, int n,
                     HloStatus *status);

/* An array input of a module: element type, dimensions and the bytes. */
typedef struct TlArray {
  HloElementType type;
  int rank;
  const int64_t *dims;   /* rank of them (borrowed) */
  const void *data;      /* row-major elements (borrowed) */
} TlArray;

/* One run of a module on array inputs in a context of its own, for tests
 * that repeat a run under several thread counts. tl_run_done frees it all. */
typedef struct TlRun {
  HloCtx *ctx;          /* the context (owned) */
  HloBuffer *in[8];     /* the inputs (owned) */
  int nin;
  HloBuffer *result;    /* the result (owned) */
} TlRun;
/* Parse text and run it on n (at most 8) arrays with `threads` threads; the
 * test fails unless it all works. */
TlRun tl_run_arrays(int threads, const char *text, int n, const TlArray *in);
void tl_run_done(TlRun *r);

/* ---- GEMM instruction sets ----------------------------------------------- */

/* A loop over the GEMM micro-kernel instruction sets the CPU can run
 * ("scalar", "avx2", "avx512", in that order), each forced in turn:
 *     for (TlGemmIsas g = {0}; tl_gemm_isa_next(&g);) { ... g.isa ... }
 * The last call restores the instruction set in use before the first (and
 * asserts that it could); leaving the loop early with break skips that. */
typedef struct TlGemmIsas {
  int next;            /* index of the next candidate */
  const char *isa;     /* the one forced for this pass */
  const char *saved;   /* the one in use before the loop */
} TlGemmIsas;
bool tl_gemm_isa_next(TlGemmIsas *g);

/* ---- integers ------------------------------------------------------------ */

/* Next value (53 bits) of a 64-bit linear congruential generator (Knuth's
 * MMIX constants) with state *s: reproducible test data, no libc rand. */
uint64_t tl_lcg(uint64_t *s);
/* Element i of an integer or pred value (s4/u4 stored one per byte), as its
 * typed value. */
int64_t tl_int_at(const HliValue *v, int64_t i);
/* A sum computed modulo 2^64 as the value a result of type t keeps: the low
 * bits, sign-extended for signed types (s4/u4: the low 4 bits). */
int64_t tl_int_wrap(HloDtype t, uint64_t v);
/* Every element of the integer result o is want[i] as its type keeps it
 * (pred: want[i] != 0); failures name `what`. */
void tl_expect_wrapped(const HliValue *o, const uint64_t *want, const char *what);

/* ---- files --------------------------------------------------------------- */

/* The whole file at path, NUL-terminated (so sscanf may read it), its size
 * in *len; NULL if it cannot be read. Free with free(). */
char *tl_read_file(const char *path, size_t *len);

/* ---- main ---------------------------------------------------------------- */

/* Run every test of s; the process exit status (0 when all pass). */
int tl_main(Suite *s);
#endif
