/* select_scatter.c: the select-and-scatter kernel (operand, source, init;
 * window size, stride, padding).
 *
 * The result starts as init everywhere. Source elements are visited in
 * row-major order; for each, its window over the operand is scanned in
 * row-major order of window positions (padding positions are skipped): the
 * first position is the candidate, and a later position replaces it when
 * select(candidate, current) is false. Then result[chosen] =
 * scatter(source value, result[chosen]). This is XLA's evaluator order.
 * Typed loops cover select = compare GE/GT/LE/LT (max- or min-pooling
 * gradients) with a commutative recognised scatter (with a one-element
 * window on the last dimension, a row of candidates at a time); everything
 * else calls
 * the computations per element. Window dilation is rejected (XLA's
 * select-and-scatter has none). */
#include "interp/kernels/reducer.h"
#include "interp/kernels/movement.h"
#include "interp/kernels/vectorize.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { MAXR = HLK_WINDOW_MAX_RANK };

typedef struct SGeom {
  int32_t rank;
  int64_t in[MAXR], istride[MAXR];
  int64_t src[MAXR];
  int64_t size[MAXR], stride[MAXR], pad[MAXR];
} SGeom;

/* Operand offset of window position w for source index s, or -1 in padding. */
static int64_t sg_offset(const SGeom *g, const int64_t *s, const int64_t *w) {
  int64_t off = 0;
  for (int32_t d = 0; d < g->rank; d++) {
    int64_t t = s[d] * g->stride[d] - g->pad[d] + w[d];
    if (t < 0 || t >= g->in[d]) return -1;
    off += t * g->istride[d];
  }
  return off;
}

/* ---- Typed path ------------------------------------------------------- */

/* keep the candidate a over the current b? (select(a, b) is true) */
#define KEEP(dir, a, b)                                                               \
  ((dir) == HLO_CMP_GE ? (a) >= (b) : (dir) == HLO_CMP_GT ? (a) > (b)                 \
   : (dir) == HLO_CMP_LE ? (a) <= (b) : (a) < (b))

/* The last dimension's window is one element, stride 1, unpadded (the
 * feature dimension of NHWC pooling): a row of source elements along it
 * selects within the same window positions, so the row's candidates are
 * compared as vectors, one window position at a time; the scatters then run
 * in the row's order, as the element-at-a-time loop would. */
static bool sas_rows_apply(const SGeom *g) {
  int32_t L = g->rank - 1;
  return g->rank > 0 && g->size[L] == 1 && g->stride[L] == 1 && g->pad[L] == 0 &&
         g->src[L] == g->in[L];
}

/* One window position (the row's q-th valid one) for a row: the candidate
 * stays where select(kept, current) holds, else becomes position q;
 * branch-free, so it vectorizes (4-byte position numbers: as many lanes as
 * f32 values). */
#define SAS_PICK(N, S, C, LOAD, DIR, CMP)                                             \
  HLK_VECTORIZE static void pick_##DIR##_##N(int32_t *restrict bq, C *restrict bv,    \
                                             const S *restrict row, int32_t q,        \
                                             int64_t n) {                             \
    for (int64_t c = 0; c < n; c++) {                                                 \
      C cv = LOAD(row[c]);                                                            \
      bool keep = bv[c] CMP cv;                                                       \
      bq[c] = keep ? bq[c] : q;                                                       \
      bv[c] = keep ? bv[c] : cv;                                                      \
    }                                                                                 \
  }

#define SAS_DEFINE(N, S, C, LOAD, ADDS)                                                  \
  SAS_PICK(N, S, C, LOAD, ge, >=)                                                     \
  SAS_PICK(N, S, C, LOAD, gt, >)                                                      \
  SAS_PICK(N, S, C, LOAD, le, <=)                                                     \
  SAS_PICK(N, S, C, LOAD, lt, <)                                                      \
  static bool sas_rows_##N(const SGeom *g, HloCmpDir dir, const HlkFold *f, bool add,  \
                           const void *opnd, const char *src, char *res) {            \
    const S *op = opnd;                                                               \
    int32_t L = g->rank - 1;                                                          \
    int64_t n = g->in[L], s[MAXR] = {0}, w[MAXR], nw = 1;                             \
    for (int32_t d = 0; d < L; d++) nw *= g->size[d];                                 \
    size_t es = sizeof(S);                                                            \
    int32_t *bq = malloc((size_t)n * sizeof *bq + 1);                                 \
    C *bv = malloc((size_t)n * sizeof *bv + 1);                                       \
    int64_t *qoff = malloc((size_t)nw * sizeof *qoff + 1); /* offset of position q */ \
    if (!bq || !bv || !qoff || nw > INT32_MAX) {                                      \
      free(bq); free(bv); free(qoff); return false;                                   \
    }                                                                                 \
    _Alignas(16) unsigned char acc[16];                                               \
    if (!hlk_odo_empty(g->src, L)) do {                                               \
      int32_t q = 0;                                                                  \
      memset(w, 0, sizeof(int64_t) * (size_t)g->rank);                                \
      if (!hlk_odo_empty(g->size, L)) do {                                            \
        int64_t off = sg_offset(g, s, w);                                             \
        if (off < 0) continue;                                                        \
        const S *row = op + off;                                                      \
        qoff[q] = off;                                                                \
        if (q == 0) {                                                                 \
          for (int64_t c = 0; c < n; c++) { bq[c] = 0; bv[c] = LOAD(row[c]); }        \
        } else {                                                                      \
          switch (dir) {                                                              \
          case HLO_CMP_GE: pick_ge_##N(bq, bv, row, q, n); break;                     \
          case HLO_CMP_GT: pick_gt_##N(bq, bv, row, q, n); break;                     \
          case HLO_CMP_LE: pick_le_##N(bq, bv, row, q, n); break;                     \
          default: pick_lt_##N(bq, bv, row, q, n); break;                             \
          }                                                                           \
        }                                                                             \
        q++;                                                                          \
      } while (hlk_odo_next(w, g->size, L));                                          \
      if (ADDS && add && q) {   /* the add fold's one rounding, without the calls */  \
        S *r = (S *)(void *)res;                                                      \
        const S *sv = (const S *)(const void *)src;                                   \
        for (int64_t c = 0; c < n; c++) r[qoff[bq[c]] + c] = r[qoff[bq[c]] + c] + sv[c]; \
      }                                                                               \
      for (int64_t c = 0; !(ADDS && add) && q && c < n; c++) {                        \
        char *at = res + (size_t)(qoff[bq[c]] + c) * es;                              \
        f->init(acc, at, 1);                                                          \
        f->run(acc, src + (size_t)c * es, 1, 1);                                      \
        f->store(at, acc, 1);                                                         \
      }                                                                               \
      src += (size_t)n * es;                                                          \
    } while (hlk_odo_next(s, g->src, L));                                             \
    free(bq);                                                                         \
    free(bv);                                                                         \
    free(qoff);                                                                       \
    return true;                                                                      \
  }                                                                                   \
  static void sas_##N(const SGeom *g, HloCmpDir dir, const HlkFold *f, bool add,      \
                      const void *opnd, const char *src, char *res) {                 \
    if (sas_rows_apply(g) && sas_rows_##N(g, dir, f, add, opnd, src, res)) return;    \
    const S *op = opnd;                                                               \
    int64_t s[MAXR] = {0}, w[MAXR];                                                   \
    size_t es = sizeof(S);                                                            \
    _Alignas(16) unsigned char acc[16];                                               \
    if (hlk_odo_empty(g->src, g->rank)) return;                                       \
    do {                                                                              \
      int64_t best = -1;                                                              \
      C bv = 0;                                                                       \
      memset(w, 0, sizeof(int64_t) * (size_t)g->rank);                                \
      do {                                                                            \
        int64_t off = sg_offset(g, s, w);                                             \
        if (off < 0) continue;                                                        \
        C cv = LOAD(op[off]);                                                         \
        if (best < 0) { best = off; bv = cv; }                                        \
        if (!KEEP(dir, bv, cv)) { best = off; bv = cv; }                              \
      } while (hlk_odo_next(w, g->size, g->rank));                                    \
      if (best >= 0) {                                                                \
        f->init(acc, res + (size_t)best * es, 1);                                     \
        f->run(acc, src, 1, 1);                                                       \
        f->store(res + (size_t)best * es, acc, 1);                                    \
      }                                                                               \
      src += es;                                                                      \
    } while (hlk_odo_next(s, g->src, g->rank));                                       \
  }

#define ID(x) (x)
SAS_DEFINE(s8, int8_t, int8_t, ID, 0)
SAS_DEFINE(s16, int16_t, int16_t, ID, 0)
SAS_DEFINE(s32, int32_t, int32_t, ID, 0)
SAS_DEFINE(s64, int64_t, int64_t, ID, 0)
SAS_DEFINE(u8, uint8_t, uint8_t, ID, 0)
SAS_DEFINE(u16, uint16_t, uint16_t, ID, 0)
SAS_DEFINE(u32, uint32_t, uint32_t, ID, 0)
SAS_DEFINE(u64, uint64_t, uint64_t, ID, 0)
SAS_DEFINE(f32, float, float, ID, 1)
SAS_DEFINE(f64, double, double, ID, 1)
SAS_DEFINE(f16, uint16_t, float, hlk_f16_to_f32, 0)
SAS_DEFINE(bf16, uint16_t, float, hlk_bf16_to_f32, 0)

typedef void (*SasFn)(const SGeom *, HloCmpDir, const HlkFold *, bool, const void *,
                      const char *, char *);

/* Leading dims whose window is one element in place (the batch of a
 * pooling) split the work: no window crosses them, so each of their
 * positions selects and scatters within its own block, in the same order. */
typedef struct SasJob {
  SGeom sub;                 /* the geometry of one block */
  int32_t lead;              /* the leading dims split off */
  const SGeom *g;
  SasFn fn;
  HloCmpDir dir;
  const HlkFold *f;
  bool add;
  const char *opnd, *src;
  char *res;
  size_t es;
} SasJob;

static void sas_blocks(void *arg, int64_t lo, int64_t hi) {
  const SasJob *j = arg;
  for (int64_t b = lo; b < hi; b++) {
    int64_t t = b, ooff = 0, soff = 0, sstride = 1;
    for (int32_t d = j->g->rank - 1; d >= j->lead; d--) sstride *= j->g->src[d];
    for (int32_t d = j->lead - 1; d >= 0; d--) {
      int64_t i = t % j->g->src[d];
      t /= j->g->src[d];
      ooff += i * j->g->istride[d];
      soff += i * sstride;
      sstride *= j->g->src[d];
    }
    j->fn(&j->sub, j->dir, j->f, j->add, j->opnd + (size_t)ooff * j->es,
          j->src + (size_t)soff * j->es, j->res + (size_t)ooff * j->es);
  }
}

static SasFn sas_fn(HloDtype t) {
  switch (t) {
  case HLO_S8: return sas_s8;
  case HLO_S16: return sas_s16;
  case HLO_S32: return sas_s32;
  case HLO_S64: return sas_s64;
  case HLO_U8: return sas_u8;
  case HLO_U16: return sas_u16;
  case HLO_U32: return sas_u32;
  case HLO_U64: return sas_u64;
  case HLO_F32: return sas_f32;
  case HLO_F64: return sas_f64;
  case HLO_F16: return sas_f16;
  case HLO_BF16: return sas_bf16;
  default: return NULL;
  }
}

/* ---- Generic path ----------------------------------------------------- */

static int sas_generic(HliExec *x, const HloInstr *ins, const SGeom *g, HloDtype t,
                       const char *opnd, const char *src, char *res) {
  HloDtype tt[2] = {t, t}, pred = HLO_PRED;
  HlkScalarCall sel, sca;
  if (hlk_scall_init(&sel, x, ins, hlk_called(ins, HLO_CALL_SELECT), 2, tt, 1, &pred)) return -1;
  if (hlk_scall_init(&sca, x, ins, hlk_called(ins, HLO_CALL_SCATTER), 2, tt, 1, tt)) {
    hlk_scall_free(&sel);
    return -1;
  }
  size_t es = hlc_dtype_size(t);
  int64_t s[MAXR] = {0}, w[MAXR];
  int rc = 0;
  if (!hlk_odo_empty(g->src, g->rank)) do {
    int64_t best = -1;
    memset(w, 0, sizeof(int64_t) * (size_t)g->rank);
    do {
      int64_t off = sg_offset(g, s, w);
      if (off < 0) continue;
      if (best < 0) best = off;
      memcpy(hlk_scall_arg(&sel, 0), opnd + (size_t)best * es, es);
      memcpy(hlk_scall_arg(&sel, 1), opnd + (size_t)off * es, es);
      int keep = hlk_scall_pred(&sel);
      if (keep < 0) { rc = -1; break; }
      if (!keep) best = off;
    } while (hlk_odo_next(w, g->size, g->rank));
    if (rc == 0 && best >= 0) {
      void *r[1] = {res + (size_t)best * es};
      memcpy(hlk_scall_arg(&sca, 0), src, es);
      memcpy(hlk_scall_arg(&sca, 1), res + (size_t)best * es, es);
      rc = hlk_scall_run(&sca, r);
    }
    src += es;
  } while (rc == 0 && hlk_odo_next(s, g->src, g->rank));
  hlk_scall_free(&sel);
  hlk_scall_free(&sca);
  return rc;
}

/* ---- Kernel ----------------------------------------------------------- */

static int build_geom(HliExec *x, const HloInstr *ins, SGeom *g) {
  const HloShape *o = &ins->ops[0]->shape, *s = &ins->ops[1]->shape;
  if (o->rank > MAXR) return hli_unsupported(x, ins, "rank above %d", MAXR);
  const HloWindow *win = &ins->window;
  if (win->rank != o->rank)
    return hli_fail(x, ins, "window rank %d does not match operand rank %d", win->rank, o->rank);
  if (s->rank != o->rank) return hli_fail(x, ins, "source rank differs from operand rank");
  g->rank = o->rank;
  hli_strides(o->dims, o->rank, g->istride);
  for (int32_t d = 0; d < o->rank; d++) {
    const HloWindowDim *wd = &win->dims[d];
    if (wd->lhs_dilate != 1 || wd->rhs_dilate != 1 || wd->reversal)
      return hli_unsupported(x, ins, "dilation or reversal in a select-and-scatter window");
    if (wd->size < 1 || wd->stride < 1)
      return hli_fail(x, ins, "window dimension %d has a size or stride below 1", d);
    int64_t padded = o->dims[d] + wd->pad_lo + wd->pad_hi;
    int64_t n = padded < wd->size ? 0 : (padded - wd->size) / wd->stride + 1;
    if (s->dims[d] != n)
      return hli_fail(x, ins, "source dimension %d should be %lld", d, (long long)n);
    g->in[d] = o->dims[d];
    g->src[d] = n;
    g->size[d] = wd->size;
    g->stride[d] = wd->stride;
    g->pad[d] = wd->pad_lo;
  }
  return 0;
}

int hlk_select_and_scatter_check(HliExec *x, const HloInstr *ins) {
  if (ins->nops != 3) return hli_fail(x, ins, "select-and-scatter takes 3 operands");
  HloDtype t = ins->ops[0]->shape.dtype;
  if (!hlc_dtype_is_array(t) || ins->ops[1]->shape.dtype != t || ins->ops[2]->shape.dtype != t ||
      ins->ops[2]->shape.rank != 0 || ins->shape.dtype != t)
    return hli_fail(x, ins, "operand, source, init and result must share one element type "
                            "(init a scalar)");
  const HloShape *o = &ins->ops[0]->shape;
  if (ins->shape.rank != o->rank) return hli_fail(x, ins, "result must have the operand's shape");
  for (int32_t d = 0; d < o->rank; d++)
    if (ins->shape.dims[d] != o->dims[d])
      return hli_fail(x, ins, "result must have the operand's shape");
  SGeom g;
  if (build_geom(x, ins, &g) != 0) return -1;
  HloDtype tt[2] = {t, t}, pred = HLO_PRED;
  if (hlk_check_signature(x, ins, hlk_called(ins, HLO_CALL_SELECT), 2, tt, 1, &pred)) return -1;
  return hlk_check_signature(x, ins, hlk_called(ins, HLO_CALL_SCATTER), 2, tt, 1, tt);
}

int hlk_select_and_scatter(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  SGeom g;
  if (build_geom(x, ins, &g) != 0) return -1;
  HloDtype t = in[0]->dtype;
  size_t es = hlc_dtype_size(t);
  hlk_fill(out->data, in[2]->data, out->nelem, es);
  HloCmpDir dir;
  HloCmpType ct;
  HliBinop sop = hlk_match_reducer(hlk_called(ins, HLO_CALL_SCATTER));
  bool commutative = sop == HLI_BINOP_ADD || sop == HLI_BINOP_MUL || sop == HLI_BINOP_AND ||
                     sop == HLI_BINOP_OR || sop == HLI_BINOP_XOR;
  const HlkFold *f = commutative ? hlk_fold(sop, t, false) : NULL;
  SasFn fn = sas_fn(t);
  if (f && fn && hlk_match_select(hlk_called(ins, HLO_CALL_SELECT), &dir, &ct) &&
      ct == hlk_default_cmp_type(t)) {
    SasJob j = {.sub = g, .lead = 0, .g = &g, .fn = fn, .dir = dir, .f = f,
                .add = sop == HLI_BINOP_ADD, .opnd = in[0]->data, .src = in[1]->data,
                .res = out->data, .es = es};
    int64_t blocks = 1;
    while (j.lead < g.rank - 1 && g.size[j.lead] == 1 && g.stride[j.lead] == 1 &&
           g.pad[j.lead] == 0 && g.src[j.lead] == g.in[j.lead]) {
      blocks *= g.in[j.lead];
      j.sub.in[j.lead] = j.sub.src[j.lead] = 1;
      j.lead++;
    }
    int64_t per = out->nelem / (blocks > 0 ? blocks : 1);
    hli_parallel_for(x, blocks, 65536 / (per + 1) + 1, sas_blocks, &j);
    return 0;
  }
  return sas_generic(x, ins, &g, t, in[0]->data, in[1]->data, out->data);
}
