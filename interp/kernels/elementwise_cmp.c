/* elementwise_cmp.c: compare, select and clamp.
 *   compare: every direction; type FLOAT (IEEE: NaN compares unordered, NE
 *     is true), TOTALORDER (-NaN < -inf < ... < -0 < +0 < ... < inf < NaN,
 *     on the bit patterns), SIGNED/UNSIGNED/default by the element type;
 *     complex: EQ and NE only. Narrow floats compare as f32 (exact).
 *   select: pred array or scalar; any element type; tuples with a scalar pred.
 *   clamp(lo, x, hi): lo/hi arrays or scalars; XLA's evaluator order:
 *     a NaN lo, then x, then hi is returned; else min(hi, max(x, lo)).
 * Loops are stamped per (type, direction); no per-element switch.
 * Not here: arithmetic (elementwise.c). */
#include <complex.h>
#include <math.h>
#include <string.h>
#include "interp/kernels/elementwise.h"
#include "interp/kernels/register.h"

enum { D_EQ, D_NE, D_LT, D_LE, D_GT, D_GE, NUM_DIR };

static HlkBinFn cmp_tab[2][NUM_DIR][HLO_NUM_DTYPES];   /* [totalorder][dir][dtype] */

#define CMP_LOOP(name, T, KEY, OP)                                              \
  HLK_VECTORIZE static void name(const void *a_, const void *b_, void *o_, int64_t n, int bits) { \
    const T *restrict a = a_;                                                   \
    const T *restrict b = b_;                                                   \
    uint8_t *restrict o = o_;                                                   \
    (void)bits;                                                                 \
    for (int64_t i = 0; i < n; i++) o[i] = (uint8_t)(KEY(a[i]) OP KEY(b[i]));   \
  }
#define ID_KEY(v) (v)
#define CMP_ALL(ID, T, KEY)                                                     \
  CMP_LOOP(eq_##ID, T, KEY, ==) CMP_LOOP(ne_##ID, T, KEY, !=)                   \
  CMP_LOOP(lt_##ID, T, KEY, <) CMP_LOOP(le_##ID, T, KEY, <=)                    \
  CMP_LOOP(gt_##ID, T, KEY, >) CMP_LOOP(ge_##ID, T, KEY, >=)

/* Total order key: sign-magnitude bits -> two's complement order. */
static inline int32_t tkey32(float f) {
  int32_t k;
  memcpy(&k, &f, 4);
  return k ^ (int32_t)((uint32_t)(k >> 31) >> 1);
}
static inline int64_t tkey64(double d) {
  int64_t k;
  memcpy(&k, &d, 8);
  return k ^ (int64_t)((uint64_t)(k >> 63) >> 1);
}

#define CMP_TYPES(X)                                                            \
  X(PRED, uint8_t, ID_KEY) X(S8, int8_t, ID_KEY) X(S16, int16_t, ID_KEY)        \
  X(S32, int32_t, ID_KEY) X(S64, int64_t, ID_KEY) X(U8, uint8_t, ID_KEY)        \
  X(U16, uint16_t, ID_KEY) X(U32, uint32_t, ID_KEY) X(U64, uint64_t, ID_KEY)    \
  X(F32, float, ID_KEY) X(F64, double, ID_KEY) X(TF32, float, tkey32)           \
  X(TF64, double, tkey64)
CMP_TYPES(CMP_ALL)
CMP_LOOP(eq_C64, float complex, ID_KEY, ==)
CMP_LOOP(ne_C64, float complex, ID_KEY, !=)
CMP_LOOP(eq_C128, double complex, ID_KEY, ==)
CMP_LOOP(ne_C128, double complex, ID_KEY, !=)

static void fill_cmp(void) {
#define SET(tot, ID, FN)                                                        \
  cmp_tab[tot][D_EQ][HLO_##ID] = eq_##FN; cmp_tab[tot][D_NE][HLO_##ID] = ne_##FN; \
  cmp_tab[tot][D_LT][HLO_##ID] = lt_##FN; cmp_tab[tot][D_LE][HLO_##ID] = le_##FN; \
  cmp_tab[tot][D_GT][HLO_##ID] = gt_##FN; cmp_tab[tot][D_GE][HLO_##ID] = ge_##FN;
#define SET_INT(ID) SET(0, ID, ID) SET(1, ID, ID)
  SET_INT(PRED) SET_INT(S8) SET_INT(S16) SET_INT(S32) SET_INT(S64)
  SET_INT(U8) SET_INT(U16) SET_INT(U32) SET_INT(U64)
  SET(0, F32, F32) SET(0, F64, F64) SET(1, F32, TF32) SET(1, F64, TF64)
#undef SET_INT
#undef SET
  for (int tot = 0; tot < 2; tot++) {
    cmp_tab[tot][D_EQ][HLO_C64] = eq_C64;
    cmp_tab[tot][D_NE][HLO_C64] = ne_C64;
    cmp_tab[tot][D_EQ][HLO_C128] = eq_C128;
    cmp_tab[tot][D_NE][HLO_C128] = ne_C128;
  }
  for (int t = 0; t < HLO_NUM_DTYPES; t++) {
    HloDtype d = (HloDtype)t, from;
    if (hlc_dtype_is_int(d) && hlc_dtype_bits(d) < 8)
      from = hlc_dtype_kind(d) == HLO_KIND_SINT ? HLO_S8 : HLO_U8;
    else if (hlk_is_narrow_float(d))
      from = HLO_F32;
    else
      continue;
    for (int tot = 0; tot < 2; tot++)
      for (int dir = 0; dir < NUM_DIR; dir++) cmp_tab[tot][dir][t] = cmp_tab[tot][dir][from];
  }
}

static int dir_index(HloCmpDir d) {
  switch (d) {
  case HLO_CMP_EQ: return D_EQ;
  case HLO_CMP_NE: return D_NE;
  case HLO_CMP_LT: return D_LT;
  case HLO_CMP_LE: return D_LE;
  case HLO_CMP_GT: return D_GT;
  case HLO_CMP_GE: return D_GE;
  }
  return D_EQ;
}

static HlkBinFn cmp_fn(const HloInstr *ins, HloDtype t) {
  if (t < 0 || t >= HLO_NUM_DTYPES) return NULL;
  int tot = ins->cmp_type == HLO_CMPT_TOTALORDER && hlc_dtype_is_float(t);
  return cmp_tab[tot][dir_index(ins->cmp_dir)][t];
}

HlkBinFn hlk_compare_loop(const HloInstr *ins, HloDtype t) { return cmp_fn(ins, t); }

static int check_compare(HliExec *x, const HloInstr *ins) {
  HloDtype t = ins->nops == 2 ? ins->ops[0]->shape.dtype : HLO_DTYPE_INVALID;
  if (!cmp_fn(ins, t) || ins->ops[1]->shape.dtype != t || ins->shape.dtype != HLO_PRED)
    return hli_unsupported(x, ins, "compare of element type %s with this direction",
                           hlc_dtype_name(t));
  return 0;
}

static int k_compare(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (check_compare(x, ins)) return -1;
  if (in[0]->nelem != out->nelem || in[1]->nelem != out->nelem)
    return hli_fail(x, ins, "operand and result sizes differ");
  hlk_run_binary(x, cmp_fn(ins, in[0]->dtype), in[0]->dtype, in[0], in[1], out);
  return 0;
}

/* ---- select ------------------------------------------------------------- */

typedef struct { uint64_t lo, hi; } Pair128;

typedef struct SelJob {
  const uint8_t *p;
  const char *a, *b;
  char *o;
  size_t size;
} SelJob;

#define SEL_LOOP(name, T)                                                       \
  HLK_VECTORIZE static void name(const uint8_t *restrict p, const T *restrict a, const T *restrict b, \
                   T *restrict o, int64_t n) {                                  \
    for (int64_t i = 0; i < n; i++) o[i] = p[i] ? a[i] : b[i];                  \
  }
SEL_LOOP(sel8, uint8_t)
SEL_LOOP(sel16, uint16_t)
SEL_LOOP(sel32, uint32_t)
SEL_LOOP(sel64, uint64_t)
SEL_LOOP(sel128, Pair128)

void hlk_select_loop(size_t esize, const uint8_t *p, const void *a, const void *b, void *o,
                     int64_t n) {
  switch (esize) {   /* once per call, not per element */
  case 1: sel8(p, a, b, o, n); break;
  case 2: sel16(p, a, b, o, n); break;
  case 4: sel32(p, a, b, o, n); break;
  case 8: sel64(p, a, b, o, n); break;
  default: sel128(p, a, b, o, n); break;
  }
}

static void sel_chunk(void *arg, int64_t lo, int64_t hi) {
  const SelJob *j = arg;
  hlk_select_loop(j->size, j->p + lo, j->a + lo * j->size, j->b + lo * j->size,
                  j->o + lo * j->size, hi - lo);
}

static int check_select(HliExec *x, const HloInstr *ins) {
  if (ins->nops != 3 || ins->ops[0]->shape.dtype != HLO_PRED)
    return hli_unsupported(x, ins, "select needs a pred first operand");
  if (ins->ops[0]->shape.rank != 0 && ins->shape.dtype == HLO_TUPLE)
    return hli_unsupported(x, ins, "select of tuples with an array predicate");
  return 0;
}

static int k_select(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (check_select(x, ins)) return -1;
  const HliValue *p = in[0];
  if (p->rank == 0 || out->dtype == HLO_TUPLE) {
    hli_value_copy_into(out, ((const uint8_t *)p->data)[0] ? in[1] : in[2]);
    return 0;
  }
  if (p->nelem != out->nelem || in[1]->nelem != out->nelem || in[2]->nelem != out->nelem)
    return hli_fail(x, ins, "operand and result sizes differ");
  SelJob j = {p->data, in[1]->data, in[2]->data, out->data, hlc_dtype_size(out->dtype)};
  hli_parallel_for(x, out->nelem, HLK_CHUNK, sel_chunk, &j);
  return 0;
}

/* ---- clamp -------------------------------------------------------------- */

typedef struct ClampJob {
  HloDtype t;
  const char *lo, *x, *hi;
  int64_t slo, shi;        /* element strides of lo / hi: 0 for scalars */
  char *o;
  size_t size;
} ClampJob;

/* One element of clamp, without branches so the loops vectorize: the later
 * selects take precedence, giving the evaluator's order (a NaN lo, then a
 * NaN x, then a NaN hi; else min(hi, max(x, lo)) with ties to the bound). */
#define CLAMP_INT_ONE(T, l, v, h) ({ T m_ = (v) < (l) ? (l) : (v); m_ < (h) ? m_ : (h); })
#define CLAMP_FLOAT_ONE(T, l, v, h)                                             \
  ({                                                                            \
    T m_ = (v) < (l) ? (l) : (v);                                               \
    m_ = m_ < (h) ? m_ : (h);                                                   \
    m_ = (h) != (h) ? (h) : m_;                                                 \
    m_ = (v) != (v) ? (v) : m_;                                                 \
    (l) != (l) ? (l) : m_;                                                      \
  })
/* Three loops per type: scalar bounds (the usual case), array bounds, and
 * one of each (strides 0 or 1). */
#define CLAMP_LOOPS(ID, T, ONE)                                                 \
  HLK_VECTORIZE static void clamp_ss_##ID(T l, const T *restrict x, T h, T *restrict o, \
                                          int64_t n) {                          \
    for (int64_t i = 0; i < n; i++) o[i] = ONE(T, l, x[i], h);                  \
  }                                                                             \
  HLK_VECTORIZE static void clamp_aa_##ID(const T *restrict lo, const T *restrict x, \
                                          const T *restrict hi, T *restrict o, int64_t n) { \
    for (int64_t i = 0; i < n; i++) o[i] = ONE(T, lo[i], x[i], hi[i]);          \
  }                                                                             \
  static void clamp_##ID(const T *lo, int64_t slo, const T *x, const T *hi, int64_t shi, \
                         T *o, int64_t n) {                                     \
    if (!slo && !shi)                                                           \
      clamp_ss_##ID(*lo, x, *hi, o, n);                                         \
    else if (slo && shi)                                                        \
      clamp_aa_##ID(lo, x, hi, o, n);                                           \
    else                                                                        \
      for (int64_t i = 0; i < n; i++) o[i] = ONE(T, lo[i * slo], x[i], hi[i * shi]); \
  }
#define CLAMP_INT(ID, T) CLAMP_LOOPS(ID, T, CLAMP_INT_ONE)
#define CLAMP_FLOAT(ID, T) CLAMP_LOOPS(ID, T, CLAMP_FLOAT_ONE)
CLAMP_INT(PRED, uint8_t) CLAMP_INT(S8, int8_t) CLAMP_INT(S16, int16_t)
CLAMP_INT(S32, int32_t) CLAMP_INT(S64, int64_t) CLAMP_INT(U8, uint8_t)
CLAMP_INT(U16, uint16_t) CLAMP_INT(U32, uint32_t) CLAMP_INT(U64, uint64_t)
CLAMP_FLOAT(F32, float) CLAMP_FLOAT(F64, double)

static bool clamp_supported(HloDtype t) {
  return t == HLO_PRED || hlc_dtype_is_int(t) || hlc_dtype_is_float(t);
}

static void clamp_chunk(void *arg, int64_t lo, int64_t hi) {
  const ClampJob *j = arg;
  int64_t n = hi - lo;
  const char *l = j->lo + lo * j->slo * j->size, *h = j->hi + lo * j->shi * j->size;
  const char *x = j->x + lo * j->size;
  char *o = j->o + lo * j->size;
  HloDtype t = j->t;
  if (hlk_is_narrow_float(t)) {
    /* Blocks through f32: clamp only selects, so rounding back is exact. */
    enum { B = 256 };
    float fl[B], fx[B], fh[B], fo[B];
    for (int64_t i = 0; i < n; i += B) {
      int64_t m = n - i < B ? n - i : B;
      hlk_narrow_to_f32(t, l + i * j->slo * j->size, fl, j->slo ? m : 1);
      hlk_narrow_to_f32(t, x + i * j->size, fx, m);
      hlk_narrow_to_f32(t, h + i * j->shi * j->size, fh, j->shi ? m : 1);
      clamp_F32(fl, j->slo, fx, fh, j->shi, fo, m);
      hlk_f32_to_narrow(t, fo, o + i * j->size, m);
    }
    return;
  }
  HloDtype base = t;
  if (hlc_dtype_is_int(t) && hlc_dtype_bits(t) < 8)
    base = hlc_dtype_kind(t) == HLO_KIND_SINT ? HLO_S8 : HLO_U8;
  switch (base) {   /* once per chunk */
#define CASE(ID, T)                                                             \
  case HLO_##ID:                                                                \
    clamp_##ID((const T *)l, j->slo, (const T *)x, (const T *)h, j->shi, (T *)o, n); \
    break;
    CASE(PRED, uint8_t) CASE(S8, int8_t) CASE(S16, int16_t) CASE(S32, int32_t)
    CASE(S64, int64_t) CASE(U8, uint8_t) CASE(U16, uint16_t) CASE(U32, uint32_t)
    CASE(U64, uint64_t) CASE(F32, float) CASE(F64, double)
#undef CASE
  default: break;
  }
}

static int check_clamp(HliExec *x, const HloInstr *ins) {
  HloDtype t = ins->nops == 3 ? ins->ops[1]->shape.dtype : HLO_DTYPE_INVALID;
  if (t < 0 || !clamp_supported(t) || ins->ops[0]->shape.dtype != t ||
      ins->ops[2]->shape.dtype != t)
    return hli_unsupported(x, ins, "clamp of element type %s", hlc_dtype_name(t));
  return 0;
}

static int k_clamp(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (check_clamp(x, ins)) return -1;
  int64_t n = out->nelem;
  const HliValue *lo = in[0], *v = in[1], *hi = in[2];
  if (v->nelem != n || (lo->rank != 0 && lo->nelem != n) || (hi->rank != 0 && hi->nelem != n))
    return hli_fail(x, ins, "operand and result sizes differ");
  ClampJob j = {v->dtype, lo->data, v->data, hi->data, lo->rank == 0 ? 0 : 1,
                hi->rank == 0 ? 0 : 1, out->data, hlc_dtype_size(v->dtype)};
  hli_parallel_for(x, n, HLK_CHUNK, clamp_chunk, &j);
  return 0;
}

void hlk_register_compare(HliOpTable t) {
  fill_cmp();
  t[HLO_OP_COMPARE] = (HliOpEntry){k_compare, check_compare};
  t[HLO_OP_SELECT] = (HliOpEntry){k_select, check_select};
  t[HLO_OP_CLAMP] = (HliOpEntry){k_clamp, check_clamp};
}
