/* elementwise.h: what the elementwise kernel files share (internal to
 * interp/kernels/elementwise*.c, convert.c, vmath.c, dispatch.c).
 *
 * Array functions: every elementwise computation is a loop over n elements of
 * one element type, written once per type with macros. `bits` is the logical
 * width of integer types (sub-byte types run the 8-bit loop; the loops that
 * depend on the width read it); other loops ignore it.
 *
 * Vector math: transcendental f32/f64 loops come from a per-ISA table
 * (HlkVmath) built from vmath.c once per instruction set; dispatch.c picks
 * one at the first use (CPUID, or HLORUN_ISA=scalar|sse4|avx2|avx512).
 */
#ifndef HLORUN_INTERP_KERNELS_ELEMENTWISE_H
#define HLORUN_INTERP_KERNELS_ELEMENTWISE_H
#include <stdint.h>
#include "common/dtype.h"
#include "interp/interp.h"
#include "interp/kernels/vectorize.h"

typedef void (*HlkUnFn)(const void *a, void *o, int64_t n, int bits);
typedef void (*HlkBinFn)(const void *a, const void *b, void *o, int64_t n, int bits);

/* ---- vector math table ------------------------------------------------- */

/* Unary functions with a SLEEF vector form: X(ID, sleef name, accuracy).
 * Accuracy: 1.0-ULP (_u10) everywhere, the most accurate SLEEF offers for
 * these (XLA's own CPU kernels are at least as loose); sqrt is correctly
 * rounded (_u05), as IEEE requires. f32 exp, expm1, tanh, log, log1p
 * (and logistic) are XLA:CPU's algorithms instead, in every table
 * (xla_math.h). */
#define HLK_VM_UNARY(X)                                                         \
  X(EXP, exp, u10) X(EXPM1, expm1, u10) X(LOG, log, u10) X(LOG1P, log1p, u10)   \
  X(SIN, sin, u10) X(COS, cos, u10) X(TAN, tan, u10) X(TANH, tanh, u10)         \
  X(ERF, erf, u10) X(CBRT, cbrt, u10) X(ACOS, acos, u10) X(ACOSH, acosh, u10)   \
  X(ASIN, asin, u10) X(ASINH, asinh, u10) X(ATANH, atanh, u10)                  \
  X(COSH, cosh, u10) X(SINH, sinh, u10) X(SQRT, sqrt, u05)
/* Binary functions: X(ID, sleef name, accuracy). */
#define HLK_VM_BINARY(X) X(POW, pow, u10) X(ATAN2, atan2, u10)

enum {
#define X(id, name, acc) HLK_VM_##id,
  HLK_VM_UNARY(X)
#undef X
  HLK_VM_LOGISTIC,   /* 1 / (1 + exp(-x)), as XLA's evaluator computes it */
  HLK_VM_RSQRT,      /* 1 / sqrt(x) (two roundings, as XLA's evaluator) */
  HLK_VM_NUNARY
};
enum {
#define X(id, name, acc) HLK_VM_##id,
  HLK_VM_BINARY(X)
#undef X
  HLK_VM_NBINARY
};

typedef void (*HlkVUnF)(const float *a, float *o, int64_t n);
typedef void (*HlkVUnD)(const double *a, double *o, int64_t n);
typedef void (*HlkVBinF)(const float *a, const float *b, float *o, int64_t n);
typedef void (*HlkVBinD)(const double *a, const double *b, double *o, int64_t n);

typedef struct HlkVmath {
  const char *name;             /* "scalar", "sse4", "avx2", "avx512" */
  HlkVUnF uf[HLK_VM_NUNARY];    /* f32 unary */
  HlkVUnD ud[HLK_VM_NUNARY];    /* f64 unary */
  HlkVBinF bf[HLK_VM_NBINARY];  /* f32 binary */
  HlkVBinD bd[HLK_VM_NBINARY];  /* f64 binary */
} HlkVmath;

enum { HLK_ISA_SCALAR, HLK_ISA_SSE4, HLK_ISA_AVX2, HLK_ISA_AVX512, HLK_NUM_ISAS };

/* The table in use: chosen once (HLORUN_ISA, else the best the CPU has). */
const HlkVmath *hlk_vmath(void);
/* A given ISA's table, or NULL if not built or the CPU lacks it (tests). */
const HlkVmath *hlk_vmath_for_isa(int isa);
/* Force the table in use (tests); -1 re-runs the automatic choice. Returns
 * 0, or -1 if that ISA is unavailable. */
int hlk_vmath_force(int isa);

/* ---- complex power ------------------------------------------------------ */

/* XLA's complex power, for pow and cbrt (complex_pow.c); _Complex, as
 * <complex.h> would define I for every file that includes this one. */
float _Complex hlk_cpowf(float _Complex x, float _Complex y);
double _Complex hlk_cpow(double _Complex x, double _Complex y);

/* ---- narrow floats ------------------------------------------------------ */

/* f16, bf16, the f8 types and f4e2m1fn: computed in f32, rounded once. */
bool hlk_is_narrow_float(HloDtype t);
/* n elements of narrow type t <-> f32. */
void hlk_narrow_to_f32(HloDtype t, const void *src, float *dst, int64_t n);
void hlk_f32_to_narrow(HloDtype t, const float *src, void *dst, int64_t n);
/* d[i] = the f32 value of d[i] rounded to narrow type t (what converting to
 * t and back gives), in place. */
void hlk_round_narrow(HloDtype t, float *d, int64_t n);

/* ---- running array functions over values -------------------------------- */

/* Elements per parallel chunk (large enough that scheduling is noise). */
enum { HLK_CHUNK = 1 << 15 };

/* out[i] = fn(a[i]) over whole arrays of dtype t (narrow floats: through
 * f32 with fn being the f32 loop; sub-byte integers: the 8-bit loop, then the
 * result is wrapped to the width). out's type may differ (pred, real part). */
void hlk_run_unary(HliExec *x, HlkUnFn fn, HloDtype t, const HliValue *a, HliValue *out);
/* out[i] = fn(a[i], b[i]); same rules. */
void hlk_run_binary(HliExec *x, HlkBinFn fn, HloDtype t, const HliValue *a, const HliValue *b,
                    HliValue *out);
/* Wrap sub-byte integers (s1, s2, s4, u1, u2, u4) in place to their width. */
void hlk_wrap_subbyte(HloDtype t, void *data, int64_t n);

/* ---- loops for fused evaluation (interp/fuse.c) ------------------------- */

/* The array loop an elementwise opcode runs for operand type t, exactly as
 * its kernel does (narrow floats: the f32 loop, sub-byte ints: the 8-bit
 * one), or NULL if op is not such an opcode or t is unsupported. */
HlkUnFn hlk_unary_loop(HloOpcode op, HloDtype t);
HlkBinFn hlk_binary_loop(HloOpcode op, HloDtype t);
/* The same loop with one operand a single element: side 0, the right one
 * (fn(a, &s, o, n, bits) computes a[i] op s), side 1 the left (fn(&s, b, o,
 * n, bits) computes s op b[i]); the bits of the two-array loop on a
 * repeated element. NULL where there is none (only the float arithmetic
 * has them). */
HlkBinFn hlk_binary_scalar_loop(HloOpcode op, HloDtype t, int side);
/* compare's loop for this instruction's direction and type, or NULL. */
HlkBinFn hlk_compare_loop(const HloInstr *ins, HloDtype t);
/* o[i] = p[i] ? a[i] : b[i] on elements of esize bytes (1, 2, 4, 8, 16). */
void hlk_select_loop(size_t esize, const uint8_t *p, const void *a, const void *b, void *o,
                     int64_t n);
/* convert's element conversion of n elements from -> to (any pair convert
 * accepts), as the convert kernel does it. */
void hlk_convert_loop(HloDtype from, HloDtype to, const void *src, void *dst, int64_t n);

/* The convert kernel, for a copy that changes the element type (movement.c). */
int hlk_convert_check(HliExec *x, const HloInstr *ins);
int hlk_convert_run(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out);
#endif
