/* reduce_window.c: the reduce-window kernel (variadic; window size, stride,
 * low/high padding, base and window dilation).
 *
 * Each output element folds, from its init value, the input elements its
 * window covers, in row-major order of the window positions; positions that
 * fall into padding or between base-dilated elements are skipped (XLA's
 * evaluator iterates the window the same way). Typed loops run a recognised
 * single reducer a whole output row at a time; any other computation, and
 * variadic reduce-window, run per element through hli_call; windows that
 * make a cumulative fold along one dimension run as a running fold. Window
 * reversal is a convolution attribute and is rejected here. */
#include "interp/kernels/reducer.h"
#include <stdlib.h>
#include <string.h>

enum { MAXR = HLK_WINDOW_MAX_RANK };

typedef struct WGeom {
  int32_t rank;
  int64_t in[MAXR], out[MAXR];          /* input / output dims */
  int64_t istride[MAXR];                /* input element strides */
  int64_t size[MAXR], stride[MAXR], pad[MAXR], base[MAXR], dil[MAXR];
} WGeom;

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* Input index along dim d for output position o and window position w, or
 * -1 when it is padding or a base-dilation hole. */
static int64_t in_index(const WGeom *g, int32_t d, int64_t o, int64_t w) {
  int64_t t = o * g->stride[d] - g->pad[d] + w * g->dil[d];
  if (t < 0) return -1;
  if (g->base[d] > 1) {
    if (t % g->base[d] != 0) return -1;
    t /= g->base[d];
  }
  return t < g->in[d] ? t : -1;
}

/* Input offset of the window position w (dims [0, nd)) for output index o,
 * or -1 if some dim is outside the input. */
static int64_t window_offset(const WGeom *g, int32_t nd, const int64_t *o, const int64_t *w) {
  int64_t off = 0;
  for (int32_t d = 0; d < nd; d++) {
    int64_t t = in_index(g, d, o[d], w[d]);
    if (t < 0) return -1;
    off += t * g->istride[d];
  }
  return off;
}

/* ---- Typed path: one output row at a time ----------------------------- */

/* A row is one position of the dims before L, the last dim with a real
 * window: its accumulators cover L's outputs times the `inner` elements of
 * the dims after L, whose windows are single elements (the features of an
 * NHWC pooling), so each window position of L folds whole runs of inner
 * elements, or one run of all of them at stride 1. */
typedef struct WJob {
  const WGeom *g;
  const HlkFold *f;
  const char *in;
  size_t es;
  const void *init;
  char *out;
  int32_t L;         /* the row dim */
  int64_t inner;     /* elements of the dims after L */
  bool oom;
} WJob;

/* Dims after L: trailing dims whose window is one element in place (size 1,
 * stride 1, no padding or dilation). Returns L. */
static int32_t row_dim(const WGeom *g, const HloInstr *ins, int64_t *inner) {
  int32_t L = g->rank - 1;
  *inner = 1;
  while (L > 0) {
    const HloWindowDim *w = &ins->window.dims[L];
    if (w->size != 1 || w->stride != 1 || w->pad_lo || w->pad_hi || w->lhs_dilate != 1 ||
        w->rhs_dilate != 1)
      break;
    *inner *= g->in[L];
    L--;
  }
  return L;
}

/* The accumulators of one window_rows call: a row of the output. */
static size_t window_row_bytes(const WJob *j) {
  return (size_t)(j->g->out[j->L] * j->inner) * j->f->acc_size + 1;
}

static void window_rows(void *arg, int64_t lo, int64_t hi) {
  WJob *j = arg;
  const WGeom *g = j->g;
  const HlkFold *f = j->f;
  int32_t L = j->L;
  int64_t on = g->out[L], inner = j->inner;
  size_t as = f->acc_size;
  char *acc = malloc(window_row_bytes(j));
  if (!acc) { j->oom = true; return; }
  int64_t o[MAXR], w[MAXR];
  for (int64_t row = lo; row < hi; row++) {
    int64_t t = row;   /* row -> outer output index */
    for (int32_t d = L - 1; d >= 0; d--) { o[d] = t % g->out[d]; t /= g->out[d]; }
    f->init(acc, j->init, on * inner);
    memset(w, 0, sizeof(int64_t) * (size_t)(L + 1));
    if (!hlk_odo_empty(g->size, L)) do {
      int64_t off = window_offset(g, L, o, w);
      if (off < 0) continue;
      const char *base = j->in + (size_t)off * j->es;
      if (inner > 1 && g->stride[L] > 1 && g->base[L] == 1) {
        /* Strided runs: output by output, so overlapping windows read
         * neighbouring input blocks while they are in cache. */
        for (int64_t ol = 0; ol < on; ol++)
          for (int64_t wl = 0; wl < g->size[L]; wl++) {
            int64_t ti = ol * g->stride[L] + wl * g->dil[L] - g->pad[L];
            if (ti >= 0 && ti < g->in[L])
              f->vec(acc + (size_t)(ol * inner) * as, base + (size_t)(ti * inner) * j->es,
                     inner, 1);
          }
        continue;
      }
      for (int64_t wl = 0; wl < g->size[L]; wl++) {
        int64_t c = wl * g->dil[L] - g->pad[L], S = g->stride[L];
        if (g->base[L] == 1) {
          /* 0 <= ol*S + c < in  <=>  ceil(-c/S) <= ol <= floor((in-1-c)/S) */
          int64_t a = -floor_div(c, S), b = floor_div(g->in[L] - 1 - c, S) + 1;
          if (a < 0) a = 0;
          if (b > on) b = on;
          if (a >= b) continue;
          const char *src = base + (size_t)((a * S + c) * inner) * j->es;
          if (inner == 1)
            f->vec(acc + (size_t)a * as, src, b - a, S);
          else   /* S == 1: one run */
            f->vec(acc + (size_t)(a * inner) * as, src, (b - a) * inner, 1);
        } else {
          for (int64_t ol = 0; ol < on; ol++) {
            int64_t ti = in_index(g, L, ol, wl);
            if (ti >= 0)
              f->vec(acc + (size_t)(ol * inner) * as, base + (size_t)(ti * inner) * j->es,
                     inner, 1);
          }
        }
      }
    } while (hlk_odo_next(w, g->size, L));
    f->store(j->out + (size_t)(row * on * inner) * j->es, acc, on * inner);
  }
  free(acc);
}

/* ---- Prefix windows: running folds ------------------------------------ */

/* One dimension D whose window, stride 1 without dilation, covers its whole
 * extent and is padded only below by size - 1 (a cumulative sum, product,
 * maximum...), every other window a single element: output i along D folds
 * inputs 0..i in that order from init, which a running fold computes with
 * the same operations in O(n) instead of O(n * size). Returns D, or -1. */
static int32_t prefix_dim(const WGeom *g, const HloInstr *ins) {
  int32_t dim = -1;
  for (int32_t d = 0; d < g->rank; d++) {
    const HloWindowDim *wd = &ins->window.dims[d];
    bool plain = g->stride[d] == 1 && g->base[d] == 1 && g->dil[d] == 1;
    if (plain && g->size[d] == 1 && wd->pad_lo == 0 && wd->pad_hi == 0) continue;
    if (dim >= 0 || !plain || g->size[d] < g->in[d] || wd->pad_lo != g->size[d] - 1 ||
        wd->pad_hi != 0)
      return -1;
    dim = d;
  }
  return dim;
}

typedef struct ScanJob {
  const HlkFold *f;
  const char *in;
  char *out;
  size_t es;
  const void *init;
  int64_t n, inner;     /* extent of the scanned dim; elements after it */
  bool oom;
} ScanJob;

static void scan_rows(void *arg, int64_t lo, int64_t hi) {
  ScanJob *j = arg;
  const HlkFold *f = j->f;
  char *acc = malloc((size_t)j->inner * f->acc_size + 1);
  if (!acc) { j->oom = true; return; }
  size_t plane = (size_t)(j->n * j->inner) * j->es, row = (size_t)j->inner * j->es;
  for (int64_t o = lo; o < hi; o++) {
    const char *src = j->in + (size_t)o * plane;
    char *dst = j->out + (size_t)o * plane;
    f->init(acc, j->init, j->inner);
    if (j->inner == 1 && f->scan) {
      f->scan(acc, src, dst, j->n);
      continue;
    }
    for (int64_t i = 0; i < j->n; i++) {   /* a row of accumulators moves along D */
      f->vec(acc, src + (size_t)i * row, j->inner, 1);
      f->store(dst + (size_t)i * row, acc, j->inner);
    }
  }
  free(acc);
}

static int window_prefix(HliExec *x, const HloInstr *ins, const WGeom *g, int32_t dim,
                         const HlkFold *f, const HliValue *in, const HliValue *init,
                         HliValue *out) {
  ScanJob j = {f, in->data, out->data, hlc_dtype_size(in->dtype), init->data, g->in[dim], 1,
               false};
  int64_t outer = 1;
  for (int32_t d = 0; d < dim; d++) outer *= g->in[d];
  for (int32_t d = dim + 1; d < g->rank; d++) j.inner *= g->in[d];
  int64_t par = outer < hli_num_threads(x) ? outer : hli_num_threads(x);
  size_t accs = (size_t)(par > 0 ? par : 1) * ((size_t)j.inner * f->acc_size + 1);
  if (hli_scratch_reserve(x, ins, accs)) return -1;
  hli_parallel_for(x, outer, 16384 / (j.n * j.inner + 1) + 1, scan_rows, &j);
  hli_scratch_unreserve(x, accs);
  return j.oom ? hli_fail_nomem(x, ins, "out of memory") : 0;
}

/* ---- Generic path ----------------------------------------------------- */

static int window_generic(HliExec *x, const HloInstr *ins, const WGeom *g, int32_t k,
                          HliValue *const *in, HliValue *const *outs, int64_t nout) {
  HloDtype types[2 * HLK_MAX_VARIADIC];
  size_t es[HLK_MAX_VARIADIC];
  for (int32_t i = 0; i < k; i++) {
    types[i] = types[k + i] = in[i]->dtype;
    es[i] = hlc_dtype_size(in[i]->dtype);
  }
  HlkScalarCall sc;
  if (hlk_scall_init(&sc, x, ins, hlk_called(ins, HLO_CALL_TO_APPLY), 2 * k, types, k, types))
    return -1;
  void *accp[HLK_MAX_VARIADIC];
  for (int32_t i = 0; i < k; i++) accp[i] = hlk_scall_arg(&sc, i);
  int64_t o[MAXR] = {0}, w[MAXR];
  int rc = 0;
  for (int64_t e = 0; e < nout && rc == 0; e++) {
    for (int32_t i = 0; i < k; i++) memcpy(accp[i], in[k + i]->data, es[i]);
    memset(w, 0, sizeof w);
    if (!hlk_odo_empty(g->size, g->rank)) do {
      int64_t off = window_offset(g, g->rank, o, w);
      if (off < 0) continue;
      for (int32_t i = 0; i < k; i++)
        memcpy(hlk_scall_arg(&sc, k + i), (const char *)in[i]->data + (size_t)off * es[i], es[i]);
      rc = hlk_scall_run(&sc, accp);
    } while (rc == 0 && hlk_odo_next(w, g->size, g->rank));
    for (int32_t i = 0; i < k && rc == 0; i++)
      memcpy((char *)outs[i]->data + (size_t)e * es[i], accp[i], es[i]);
    hlk_odo_next(o, g->out, g->rank);
  }
  hlk_scall_free(&sc);
  return rc;
}

/* ---- Kernel ----------------------------------------------------------- */

static int build_geom(HliExec *x, const HloInstr *ins, WGeom *g) {
  const HloShape *s = &ins->ops[0]->shape;
  const HloShape *o = ins->shape.dtype == HLO_TUPLE ? &ins->shape.tuple[0] : &ins->shape;
  if (s->rank > MAXR) return hli_unsupported(x, ins, "rank above %d", MAXR);
  const HloWindow *win = &ins->window;
  if (win->rank != s->rank && !(win->rank == 0 && s->rank == 0))
    return hli_fail(x, ins, "window rank %d does not match operand rank %d", win->rank, s->rank);
  g->rank = s->rank;
  hli_strides(s->dims, s->rank, g->istride);
  for (int32_t d = 0; d < s->rank; d++) {
    const HloWindowDim *wd = &win->dims[d];
    if (wd->reversal) return hli_unsupported(x, ins, "window reversal in reduce-window");
    if (wd->size < 1 || wd->stride < 1 || wd->lhs_dilate < 1 || wd->rhs_dilate < 1)
      return hli_fail(x, ins, "window dimension %d has a size, stride or dilation below 1", d);
    g->in[d] = s->dims[d];
    g->size[d] = wd->size;
    g->stride[d] = wd->stride;
    g->pad[d] = wd->pad_lo;
    g->base[d] = wd->lhs_dilate;
    g->dil[d] = wd->rhs_dilate;
    int64_t padded = (s->dims[d] > 0 ? (s->dims[d] - 1) * wd->lhs_dilate + 1 : 0) +
                     wd->pad_lo + wd->pad_hi;
    int64_t extent = (wd->size - 1) * wd->rhs_dilate + 1;
    int64_t n = padded < extent ? 0 : (padded - extent) / wd->stride + 1;
    if (o->rank != s->rank || o->dims[d] != n)
      return hli_fail(x, ins, "result dimension %d should be %lld", d, (long long)n);
    g->out[d] = n;
  }
  return 0;
}

int hlk_reduce_window_check(HliExec *x, const HloInstr *ins) {
  if (ins->nops < 2 || ins->nops % 2 != 0)
    return hli_fail(x, ins, "reduce-window takes pairs of inputs and init values");
  int32_t k = ins->nops / 2;
  if (k > HLK_MAX_VARIADIC) return hli_unsupported(x, ins, "more than %d inputs", HLK_MAX_VARIADIC);
  if ((k == 1) != (ins->shape.dtype != HLO_TUPLE) || (k > 1 && ins->shape.ntuple != k))
    return hli_fail(x, ins, "result shape does not match %d inputs", k);
  HloDtype types[2 * HLK_MAX_VARIADIC];
  const HloShape *s0 = &ins->ops[0]->shape;
  for (int32_t i = 0; i < k; i++) {
    const HloShape *s = &ins->ops[i]->shape, *iv = &ins->ops[k + i]->shape;
    const HloShape *o = k == 1 ? &ins->shape : &ins->shape.tuple[i];
    if (!hlc_dtype_is_array(s->dtype) || s->rank != s0->rank)
      return hli_fail(x, ins, "input %d is not an array of the first input's rank", i);
    for (int32_t d = 0; d < s->rank; d++)
      if (s->dims[d] != s0->dims[d]) return hli_fail(x, ins, "inputs have different dimensions");
    if (iv->rank != 0 || iv->dtype != s->dtype)
      return hli_fail(x, ins, "init value %d must be a %s scalar", i, hlc_dtype_name(s->dtype));
    if (o->dtype != s->dtype) return hli_fail(x, ins, "result %d has the wrong element type", i);
    types[i] = types[k + i] = s->dtype;
  }
  WGeom g;
  if (build_geom(x, ins, &g) != 0) return -1;
  return hlk_check_signature(x, ins, hlk_called(ins, HLO_CALL_TO_APPLY), 2 * k, types, k, types);
}

int hlk_reduce_window(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  int32_t k = ins->nops / 2;
  HliValue *outs[HLK_MAX_VARIADIC];
  for (int32_t i = 0; i < k; i++) outs[i] = k == 1 ? out : out->tuple[i];
  WGeom g;
  if (build_geom(x, ins, &g) != 0) return -1;
  int64_t nout = outs[0]->nelem;
  if (nout == 0) return 0;
  if (k == 1 && g.rank > 0) {
    HliBinop op = hlk_match_reducer(hlk_called(ins, HLO_CALL_TO_APPLY));
    const HlkFold *f = op != HLI_BINOP_NONE ? hlk_fold(op, in[0]->dtype, false) : NULL;
    int32_t pd = f ? prefix_dim(&g, ins) : -1;
    if (pd >= 0) return window_prefix(x, ins, &g, pd, f, in[0], in[1], out);
    if (f) {
      WJob j = {&g, f, in[0]->data, hlc_dtype_size(in[0]->dtype), in[1]->data, out->data, 0, 1,
                false};
      j.L = row_dim(&g, ins, &j.inner);
      int64_t rows = nout / (g.out[j.L] * j.inner);
      int64_t work = g.out[j.L] * j.inner;
      for (int32_t d = 0; d < g.rank; d++) work *= g.size[d];
      /* window_rows keeps a row of accumulators per running thread: count
       * them against --max-memory before they exist. */
      int64_t par = rows < hli_num_threads(x) ? rows : hli_num_threads(x);
      size_t accs = (size_t)par * window_row_bytes(&j);
      if (hli_scratch_reserve(x, ins, accs)) return -1;
      hli_parallel_for(x, rows, 16384 / (work + 1) + 1, window_rows, &j);
      hli_scratch_unreserve(x, accs);
      return j.oom ? hli_fail_nomem(x, ins, "out of memory") : 0;
    }
  }
  return window_generic(x, ins, &g, k, in, outs, nout);
}
