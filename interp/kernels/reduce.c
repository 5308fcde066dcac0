/* reduce.c: the reduce kernel (variadic, any set of dimensions) and the
 * registrar of this area's kernels (reduce, reduce-window,
 * select-and-scatter, sort, topk).
 *
 * Every output element folds its reduced elements in row-major order of the
 * reduced dimensions, starting from the init value, as XLA's evaluator does.
 * The input is walked as: outer kept dims x outer reduced dims x one
 * innermost contiguous group. If that group is reduced, each output folds
 * contiguous runs; if it is kept, rows of accumulators take whole input rows,
 * so memory streams either way. Typed loops run the recognised reducers (one
 * binop, one binop per operand of a variadic reduce, argmax/argmin); any
 * other computation runs per element through hli_call. */
#include "interp/kernels/reducer.h"
#include "interp/kernels/register.h"
#include "common/numeric.h"
#include <stdlib.h>
#include <string.h>

enum { MAXR = 64 };   /* rank limit of the geometry tables */

/* Input walk: out index = (outer kept index) * inner + i when the inner group
 * is kept, else = outer kept index. */
typedef struct Geom {
  int32_t nk, nr;
  int64_t ksize[MAXR], kstride[MAXR];   /* outer kept groups, input strides */
  int64_t rsize[MAXR], rstride[MAXR];   /* outer reduced groups */
  bool inner_red;                       /* the innermost group is reduced */
  int64_t inner;                        /* its size (1 if there are no groups) */
  int64_t nko;                          /* product of ksize */
  int64_t nout, nin;
} Geom;

static void geom_build(Geom *g, const HliValue *in, const HloI64s *dims) {
  bool red[MAXR] = {false};
  for (int32_t i = 0; i < dims->n; i++) red[dims->v[i]] = true;
  int64_t size[MAXR], stride[MAXR];
  bool gred[MAXR];
  int32_t ng = 0;
  int64_t st = 1;
  memset(g, 0, sizeof *g);
  g->nin = in->nelem;
  g->nout = 1;
  for (int32_t d = 0; d < in->rank; d++)
    if (!red[d]) g->nout *= in->dims[d];
  /* Merge adjacent dims of the same kind, innermost first; size-1 dims
   * change nothing. */
  for (int32_t d = in->rank - 1; d >= 0; d--) {
    int64_t n = in->dims[d];
    if (n != 1) {
      if (ng > 0 && gred[ng - 1] == red[d]) {
        size[ng - 1] *= n;
      } else {
        size[ng] = n;
        stride[ng] = st;
        gred[ng] = red[d];
        ng++;
      }
    }
    st *= n;
  }
  /* groups are innermost-first; group 0 is the inner one */
  int32_t first = 0;
  g->inner = 1;
  g->inner_red = false;
  if (ng > 0) {
    g->inner = size[0];
    g->inner_red = gred[0];
    first = 1;
  }
  g->nko = 1;
  for (int32_t j = ng - 1; j >= first; j--) {
    if (gred[j]) {
      g->rsize[g->nr] = size[j];
      g->rstride[g->nr++] = stride[j];
    } else {
      g->ksize[g->nk] = size[j];
      g->kstride[g->nk++] = stride[j];
      g->nko *= size[j];
    }
  }
}

/* Input offset (elements) of outer kept index ok. */
static int64_t geom_base(const Geom *g, int64_t ok) {
  int64_t off = 0;
  for (int32_t j = g->nk - 1; j >= 0; j--) {
    off += (ok % g->ksize[j]) * g->kstride[j];
    ok /= g->ksize[j];
  }
  return off;
}

/* Odometer over the outer reduced groups: offset of the next combination. */
typedef struct ROdo { int64_t idx[MAXR]; int64_t off; bool done; } ROdo;
static void rodo_start(ROdo *o, const Geom *g) {
  memset(o->idx, 0, sizeof(int64_t) * (size_t)g->nr);
  o->off = 0;
  o->done = false;
  for (int32_t j = 0; j < g->nr; j++) o->done = o->done || g->rsize[j] == 0;
}
static void rodo_next(ROdo *o, const Geom *g) {
  for (int32_t j = g->nr - 1; j >= 0; j--) {
    o->idx[j]++;
    o->off += g->rstride[j];
    if (o->idx[j] < g->rsize[j]) return;
    o->off -= g->rstride[j] * g->rsize[j];
    o->idx[j] = 0;
  }
  o->done = true;
}

/* ---- Typed single-reducer path --------------------------------------- */

typedef struct FoldJob {
  const Geom *g;
  const HlkFold *f;
  const char *in;       /* input data */
  size_t esize;         /* element bytes */
  const void *init;     /* init element */
  char *out;
  int64_t bw, nblk;     /* kept inner group: columns per task, tasks per outer kept index */
  bool oom;
} FoldJob;

static void fold_rows(void *arg, int64_t lo, int64_t hi) {
  FoldJob *j = arg;
  const Geom *g = j->g;
  const HlkFold *f = j->f;
  ROdo o;
  if (g->inner_red) {
    _Alignas(16) unsigned char acc[16];
    for (int64_t ok = lo; ok < hi; ok++) {
      int64_t base = geom_base(g, ok);
      f->init(acc, j->init, 1);
      for (rodo_start(&o, g); !o.done; rodo_next(&o, g))
        f->run(acc, j->in + (size_t)(base + o.off) * j->esize, g->inner, 1);
      f->store(j->out + (size_t)ok * j->esize, acc, 1);
    }
    return;
  }
  void *acc = malloc((size_t)j->bw * f->acc_size);
  if (!acc) { j->oom = true; return; }
  /* With vec_rows, the innermost reduced group is folded a few rows per
   * pass; the odometer walks the groups outside it. */
  Geom outer = *g;
  bool by_rows = f->vec_rows && g->nr > 0;
  if (by_rows) outer.nr--;
  int64_t rows = by_rows ? g->rsize[g->nr - 1] : 1, rs = by_rows ? g->rstride[g->nr - 1] : 0;
  for (int64_t t = lo; t < hi; t++) {
    int64_t ok = t / j->nblk, c0 = t % j->nblk * j->bw;
    int64_t w = g->inner - c0 < j->bw ? g->inner - c0 : j->bw;
    int64_t base = geom_base(g, ok) + c0;
    f->init(acc, j->init, w);
    for (rodo_start(&o, &outer); !o.done; rodo_next(&o, &outer)) {
      const char *src = j->in + (size_t)(base + o.off) * j->esize;
      if (by_rows) f->vec_rows(acc, src, w, rows, rs);
      else f->vec(acc, src, w, 1);
    }
    f->store(j->out + (size_t)(ok * g->inner + c0) * j->esize, acc, w);
  }
  free(acc);
}

/* Partial results of whole blocks of one long run, over threads. */
typedef struct PartJob {
  const HlkFold *f;
  const char *src;      /* the run */
  char *parts;
  size_t bbytes;        /* bytes of a block of input */
} PartJob;

static void parts_chunk(void *arg, int64_t lo, int64_t hi) {
  const PartJob *j = arg;
  j->f->blocks(j->parts + (size_t)lo * j->f->part_size, j->src + (size_t)lo * j->bbytes, hi - lo);
}

/* Few outputs, each folding one long contiguous run (a full sum, say): the
 * threads share each run's blocks, then the partials fold in order, which is
 * exactly what run() computes. */
static int fold_long_runs(HliExec *x, const HloInstr *ins, const Geom *g, const HlkFold *f,
                          const HliValue *in, const HliValue *init, HliValue *out) {
  size_t es = hlc_dtype_size(in->dtype);
  int64_t nb = g->inner / f->block;
  char *parts = hli_scratch_alloc(x, ins, (size_t)nb * f->part_size);
  if (!parts) return -1;
  _Alignas(16) unsigned char acc[16];
  for (int64_t ok = 0; ok < g->nko; ok++) {
    const char *src = (const char *)in->data + (size_t)geom_base(g, ok) * es;
    PartJob j = {f, src, parts, (size_t)f->block * es};
    hli_parallel_for(x, nb, 64, parts_chunk, &j);
    f->init(acc, init->data, 1);
    f->fold_parts(acc, parts, nb);
    f->run(acc, src + (size_t)(nb * f->block) * es, g->inner - nb * f->block, 1);
    f->store((char *)out->data + (size_t)ok * es, acc, 1);
  }
  hli_scratch_free(x, parts);
  return 0;
}

/* Bytes of the workspaces that the workers of a parallel loop over `tasks`
 * items malloc themselves, `each` bytes per running worker: at most one per
 * thread at a time. Counted against --max-memory before they start. */
static size_t per_worker(HliExec *x, int64_t tasks, size_t each) {
  int64_t par = tasks < hli_num_threads(x) ? tasks : hli_num_threads(x);
  return (size_t)(par > 0 ? par : 1) * each;
}

static int run_fold(HliExec *x, const HloInstr *ins, const Geom *g, const HlkFold *f,
                    const HliValue *in, const HliValue *init, HliValue *out) {
  FoldJob j = {g, f, in->data, hlc_dtype_size(in->dtype), init->data, out->data, g->inner, 1,
               false};
  if (g->nout == 0) return 0;
  if (f->blocks && g->inner_red && g->nr == 0 && g->nko < 2 * hli_num_threads(x) &&
      g->inner >= 64 * f->block && hli_num_threads(x) > 1 && f->acc_size <= 16)
    return fold_long_runs(x, ins, g, f, in, init, out);
  /* Fewer outer kept indices than threads (a sum over the leading
   * dimension, say): the kept columns split into blocks of at least 256, so
   * every thread streams its share of each input row. Each output still
   * folds its elements in the same order: the same bits on any thread count. */
  int64_t nthr = hli_num_threads(x);
  if (!g->inner_red && g->nko < 2 * nthr && nthr > 1 && g->inner >= 512) {
    int64_t want = (nthr + g->nko - 1) / g->nko, most = g->inner / 256;
    j.nblk = want < most ? want : most;
    j.bw = ((g->inner + j.nblk - 1) / j.nblk + 15) & ~(int64_t)15;
    j.nblk = (g->inner + j.bw - 1) / j.bw;
  }
  int64_t tasks = g->nko * j.nblk;
  /* Tasks of at least ~32K input elements keep scheduling noise low. */
  int64_t per_task = g->nin / (tasks ? tasks : 1) + 1;
  int64_t chunk = 32768 / per_task + 1;
  /* fold_rows: a row of accumulators per worker, one per column of a task
   * (none when the inner group is reduced: one accumulator on the stack). */
  size_t work = g->inner_red ? 0 : per_worker(x, tasks, (size_t)j.bw * f->acc_size);
  if (hli_scratch_reserve(x, ins, work)) return -1;
  hli_parallel_for(x, tasks, chunk, fold_rows, &j);
  hli_scratch_unreserve(x, work);
  if (j.oom) return hli_fail_nomem(x, ins, "out of memory");
  return 0;
}

/* ---- argmax / argmin ------------------------------------------------- */

/* One step on (value, index) accumulators, exactly as the matched
 * computation: pick = a CMP b || a != a; ipick = pick || (a == b && ia < ib). */
#define ARG_STEP(CMP, LOADV, av, ai, bv, bi)                                          \
  do {                                                                                \
    __typeof__(LOADV(av)) a_ = LOADV(av), b_ = LOADV(bv);                             \
    bool pick_ = (a_ CMP b_) || a_ != a_;                                             \
    bool ipick_ = pick_ || (a_ == b_ && (ai) < (bi));                                 \
    if (!pick_) av = bv;                                                              \
    if (!ipick_) ai = bi;                                                             \
  } while (0)

#define ARG_DEFINE(NAME, V, I, LOADV, CMP)                                            \
  static void NAME##_run(void *av, void *ai, const void *v, const void *ix, int64_t n) { \
    V a = *(V *)av;                                                                   \
    I ia = *(I *)ai;                                                                  \
    const V *pv = v;                                                                  \
    const I *pi = ix;                                                                 \
    for (int64_t k = 0; k < n; k++) ARG_STEP(CMP, LOADV, a, ia, pv[k], pi[k]);        \
    *(V *)av = a;                                                                     \
    *(I *)ai = ia;                                                                    \
  }                                                                                   \
  static void NAME##_vec(void *av, void *ai, const void *v, const void *ix, int64_t n) { \
    V *a = av;                                                                        \
    I *ia = ai;                                                                       \
    const V *pv = v;                                                                  \
    const I *pi = ix;                                                                 \
    for (int64_t k = 0; k < n; k++) ARG_STEP(CMP, LOADV, a[k], ia[k], pv[k], pi[k]);  \
  }

typedef struct ArgFold {
  void (*run)(void *av, void *ai, const void *v, const void *ix, int64_t n);
  void (*vec)(void *av, void *ai, const void *v, const void *ix, int64_t n);
} ArgFold;

#define ARG_VALUE_TYPES(X)                                                           \
  X(s8, S8, int8_t, ID) X(s16, S16, int16_t, ID) X(s32, S32, int32_t, ID)            \
  X(s64, S64, int64_t, ID) X(u8, U8, uint8_t, ID) X(u16, U16, uint16_t, ID)          \
  X(u32, U32, uint32_t, ID) X(u64, U64, uint64_t, ID) X(f32, F32, float, ID)         \
  X(f64, F64, double, ID) X(f16, F16, uint16_t, hlk_f16_to_f32)                      \
  X(bf16, BF16, uint16_t, hlk_bf16_to_f32)
#define ID(x) (x)

#define ARG_FOR_VALUE(N, VID, V, LOADV)                                              \
  ARG_DEFINE(argmax_##N##_s32, V, int32_t, LOADV, >)                                 \
  ARG_DEFINE(argmin_##N##_s32, V, int32_t, LOADV, <)                                 \
  ARG_DEFINE(argmax_##N##_s64, V, int64_t, LOADV, >)                                 \
  ARG_DEFINE(argmin_##N##_s64, V, int64_t, LOADV, <)
ARG_VALUE_TYPES(ARG_FOR_VALUE)

static bool arg_fold(HloDtype vt, HloDtype it, bool is_max, ArgFold *f) {
#define ARG_PICK(N, VID, V, LOADV)                                                   \
  if (vt == HLO_##VID) {                                                             \
    if (it == HLO_S32) {                                                             \
      *f = is_max ? (ArgFold){argmax_##N##_s32_run, argmax_##N##_s32_vec}            \
                  : (ArgFold){argmin_##N##_s32_run, argmin_##N##_s32_vec};           \
      return true;                                                                   \
    }                                                                                \
    if (it == HLO_S64) {                                                             \
      *f = is_max ? (ArgFold){argmax_##N##_s64_run, argmax_##N##_s64_vec}            \
                  : (ArgFold){argmin_##N##_s64_run, argmin_##N##_s64_vec};           \
      return true;                                                                   \
    }                                                                                \
    return false;                                                                    \
  }
  ARG_VALUE_TYPES(ARG_PICK)
#undef ARG_PICK
  return false;
}

typedef struct ArgJob {
  const Geom *g;
  ArgFold f;
  const char *v, *ix;     /* ix NULL: the indices are coordinates (arg_iota) */
  size_t vs, is;
  const void *v0, *i0;
  char *ov, *oi;
  const char *seq;        /* coordinates 0, 1, ... of an inner reduced run (ix NULL) */
  bool oom;
} ArgJob;

/* The accumulators of one arg_rows call: w values, then (from a 16-byte
 * boundary, for alignment) w indices, and w more for coordinates (ix NULL). */
static size_t arg_value_bytes(const ArgJob *j, int64_t w) {
  return ((size_t)w * j->vs + 15) & ~(size_t)15;
}
static size_t arg_row_bytes(const ArgJob *j) {
  int64_t w = j->g->inner_red ? 1 : j->g->inner;
  return arg_value_bytes(j, w) + (size_t)w * j->is * 2 + 1;
}

/* Is the index operand iota along the one reduced dimension (jnp.argmax)?
 * Its values are then each element's coordinate there, which arg_rows
 * makes instead of reading them, and the plan never computes the iota
 * (hlk_reduce_reads): a row argmax of f32[4096,4096] writes and reads 64 MiB
 * less. With one reduced dimension the geometry is one inner reduced run
 * (coordinates 0, 1, ... along it) or at most one outer reduced group (one
 * coordinate per step, 0 without a group). */
static bool arg_iota(const HloInstr *ins) {
  const HloInstr *io = ins->ops[1];
  return io->op == HLO_OP_IOTA && ins->dimensions.n == 1 &&
         ins->dimensions.v[0] == io->iota_dimension;
}

/* n indices of element size is, all equal to c (s32 or s64). */
static void fill_index(char *dst, size_t is, int64_t c, int64_t n) {
  if (is == 4) {
    int32_t *d = (int32_t *)(void *)dst;
    for (int64_t k = 0; k < n; k++) d[k] = (int32_t)c;
  } else {
    int64_t *d = (int64_t *)(void *)dst;
    for (int64_t k = 0; k < n; k++) d[k] = c;
  }
}

static void arg_rows(void *arg, int64_t lo, int64_t hi) {
  ArgJob *j = arg;
  const Geom *g = j->g;
  ROdo o;
  int64_t w = g->inner_red ? 1 : g->inner;
  size_t vbytes = arg_value_bytes(j, w);
  char *av = malloc(arg_row_bytes(j));
  if (!av) { j->oom = true; return; }
  char *ai = av + vbytes, *coord = ai + (size_t)w * j->is;
  for (int64_t ok = lo; ok < hi; ok++) {
    int64_t base = geom_base(g, ok);
    for (int64_t k = 0; k < w; k++) {
      memcpy(av + (size_t)k * j->vs, j->v0, j->vs);
      memcpy(ai + (size_t)k * j->is, j->i0, j->is);
    }
    for (rodo_start(&o, g); !o.done; rodo_next(&o, g)) {
      size_t e = (size_t)(base + o.off);
      const char *ix;
      if (j->ix) {
        ix = j->ix + e * j->is;
      } else if (g->inner_red) {
        ix = j->seq;
      } else {
        fill_index(coord, j->is, g->nr ? o.idx[0] : 0, w);
        ix = coord;
      }
      if (g->inner_red)
        j->f.run(av, ai, j->v + e * j->vs, ix, g->inner);
      else
        j->f.vec(av, ai, j->v + e * j->vs, ix, g->inner);
    }
    memcpy(j->ov + (size_t)(ok * w) * j->vs, av, (size_t)w * j->vs);
    memcpy(j->oi + (size_t)(ok * w) * j->is, ai, (size_t)w * j->is);
  }
  free(av);
}

/* ---- Generic path: the computation per element ---------------------- */

static int run_generic(HliExec *x, const HloInstr *ins, const Geom *g, int32_t k,
                       HliValue *const *in, HliValue *const *outs) {
  const HloComputation *comp = hlk_called(ins, HLO_CALL_TO_APPLY);
  HloDtype types[2 * HLK_MAX_VARIADIC];
  size_t es[HLK_MAX_VARIADIC];
  for (int32_t i = 0; i < k; i++) {
    types[i] = types[k + i] = in[i]->dtype;
    es[i] = hlc_dtype_size(in[i]->dtype);
  }
  HlkScalarCall sc;
  if (hlk_scall_init(&sc, x, ins, comp, 2 * k, types, k, types) != 0) return -1;
  void *accp[HLK_MAX_VARIADIC];
  for (int32_t i = 0; i < k; i++) accp[i] = hlk_scall_arg(&sc, i);
  int rc = 0;
  int64_t w = g->inner_red ? 1 : g->inner;
  ROdo o;
  for (int64_t out_i = 0; out_i < g->nout && rc == 0; out_i++) {
    int64_t ok = out_i / w, ii = out_i % w;
    int64_t base = geom_base(g, ok) + (g->inner_red ? 0 : ii);
    for (int32_t i = 0; i < k; i++) memcpy(accp[i], in[k + i]->data, es[i]);
    for (rodo_start(&o, g); !o.done && rc == 0; rodo_next(&o, g)) {
      int64_t n = g->inner_red ? g->inner : 1;
      for (int64_t t = 0; t < n && rc == 0; t++) {
        size_t e = (size_t)(base + o.off + t);
        for (int32_t i = 0; i < k; i++)
          memcpy(hlk_scall_arg(&sc, k + i), (const char *)in[i]->data + e * es[i], es[i]);
        rc = hlk_scall_run(&sc, accp);
      }
    }
    for (int32_t i = 0; i < k && rc == 0; i++)
      memcpy((char *)outs[i]->data + (size_t)out_i * es[i], accp[i], es[i]);
  }
  hlk_scall_free(&sc);
  return rc;
}

/* ---- Kernel ----------------------------------------------------------- */

/* Variadic reduce whose computation returns tuple(op_0(p0, pk), op_1(p1,
 * pk+1), ...): every operand folds independently. Fills ops[]. */
static bool match_independent(const HloComputation *c, int32_t k, HliBinop *ops) {
  if (!c || !c->root || c->nparams != 2 * k || c->root->op != HLO_OP_TUPLE ||
      c->root->nops != k)
    return false;
  for (int32_t i = 0; i < k; i++) {
    const HloInstr *r = c->root->ops[i];
    if (r->nops != 2 || r->shape.rank != 0) return false;
    const HloInstr *a = r->ops[0], *b = r->ops[1];
    bool fwd = a->op == HLO_OP_PARAMETER && a->parameter_number == i &&
               b->op == HLO_OP_PARAMETER && b->parameter_number == k + i;
    bool rev = b->op == HLO_OP_PARAMETER && b->parameter_number == i &&
               a->op == HLO_OP_PARAMETER && a->parameter_number == k + i;
    if (!fwd && !rev) return false;
    switch (r->op) {
    case HLO_OP_ADD: ops[i] = HLI_BINOP_ADD; break;
    case HLO_OP_MULTIPLY: ops[i] = HLI_BINOP_MUL; break;
    /* max/min keep the left operand on ties: only the stated order is exact */
    case HLO_OP_MAXIMUM: if (!fwd) return false; ops[i] = HLI_BINOP_MAX; break;
    case HLO_OP_MINIMUM: if (!fwd) return false; ops[i] = HLI_BINOP_MIN; break;
    case HLO_OP_AND: ops[i] = HLI_BINOP_AND; break;
    case HLO_OP_OR: ops[i] = HLI_BINOP_OR; break;
    case HLO_OP_XOR: ops[i] = HLI_BINOP_XOR; break;
    default: return false;
    }
  }
  return true;
}

int hlk_reduce_check(HliExec *x, const HloInstr *ins) {
  if (ins->nops < 2 || ins->nops % 2 != 0)
    return hli_fail(x, ins, "reduce takes pairs of inputs and init values, got %d operands",
                    ins->nops);
  int32_t k = ins->nops / 2;
  if (k > HLK_MAX_VARIADIC) return hli_unsupported(x, ins, "more than %d inputs", HLK_MAX_VARIADIC);
  const HloShape *s0 = &ins->ops[0]->shape;
  if (s0->rank > MAXR) return hli_unsupported(x, ins, "rank above %d", MAXR);
  HloDtype types[HLK_MAX_VARIADIC * 2];
  for (int32_t i = 0; i < k; i++) {
    const HloShape *s = &ins->ops[i]->shape, *iv = &ins->ops[k + i]->shape;
    if (!hlc_dtype_is_array(s->dtype) || s->rank != s0->rank)
      return hli_fail(x, ins, "input %d is not an array of the first input's rank", i);
    for (int32_t d = 0; d < s->rank; d++)
      if (s->dims[d] != s0->dims[d])
        return hli_fail(x, ins, "inputs have different dimensions");
    if (iv->rank != 0 || iv->dtype != s->dtype)
      return hli_fail(x, ins, "init value %d must be a %s scalar", i, hlc_dtype_name(s->dtype));
    types[i] = types[k + i] = s->dtype;
  }
  bool seen[MAXR] = {false};
  for (int32_t i = 0; i < ins->dimensions.n; i++) {
    int64_t d = ins->dimensions.v[i];
    if (d < 0 || d >= s0->rank || seen[d])
      return hli_fail(x, ins, "bad reduce dimension %lld", (long long)d);
    seen[d] = true;
  }
  /* Result: the kept dims, one array per input (a tuple when k > 1). */
  const HloShape *rs = &ins->shape;
  if ((k == 1) != (rs->dtype != HLO_TUPLE) || (k > 1 && rs->ntuple != k))
    return hli_fail(x, ins, "result shape does not match %d inputs", k);
  for (int32_t i = 0; i < k; i++) {
    const HloShape *o = k == 1 ? rs : &rs->tuple[i];
    /* XLA accepts a result type that differs from the computation's (mixed
     * precision): the reduced value is converted at the end. */
    bool real_ok = !hlc_dtype_is_complex(o->dtype) && !hlc_dtype_is_complex(types[i]) &&
                   hlc_dtype_is_array(o->dtype);
    if ((o->dtype != types[i] && !real_ok) || o->rank != s0->rank - ins->dimensions.n)
      return hli_fail(x, ins, "result %d has the wrong type or rank", i);
    for (int32_t d = 0, j = 0; d < s0->rank; d++)
      if (!seen[d] && o->dims[j++] != s0->dims[d])
        return hli_fail(x, ins, "result %d has the wrong dimensions", i);
  }
  return hlk_check_signature(x, ins, hlk_called(ins, HLO_CALL_TO_APPLY), 2 * k, types, k, types);
}

/* Converts every element of src into dst (same dims, other element type)
 * with XLA's convert rules. */
static void convert_into(HliValue *dst, const HliValue *src) {
  size_t ds = hlc_dtype_size(dst->dtype), ss = hlc_dtype_size(src->dtype);
  bool via_float = hlc_dtype_is_float(dst->dtype) || hlc_dtype_is_float(src->dtype);
  for (int64_t e = 0; e < dst->nelem; e++) {
    const char *sp = (const char *)src->data + (size_t)e * ss;
    char *dp = (char *)dst->data + (size_t)e * ds;
    if (via_float)
      hlc_store_f64(dst->dtype, dp, hlc_load_f64(src->dtype, sp));
    else
      hlc_store_i64(dst->dtype, dp, hlc_load_i64(src->dtype, sp));
  }
}

static int reduce_into(HliExec *x, const HloInstr *ins, HliValue *const *in,
                       HliValue *const *outs);

int hlk_reduce(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  int32_t k = ins->nops / 2;
  HliValue *outs[HLK_MAX_VARIADIC], *tmp[HLK_MAX_VARIADIC] = {NULL};
  HloShape tshape[HLK_MAX_VARIADIC];
  int rc = 0;
  for (int32_t i = 0; i < k && rc == 0; i++) {
    outs[i] = k == 1 ? out : out->tuple[i];
    HloDtype t = ins->ops[i]->shape.dtype;   /* (in[1] may be NULL: hlk_reduce_reads) */
    if (outs[i]->dtype != t) {   /* mixed precision: reduce, then convert */
      tshape[i] = *outs[i]->shape;
      tshape[i].dtype = t;
      tshape[i].minor_to_major = NULL;
      tmp[i] = hli_value_new(x, &tshape[i]);
      if (!tmp[i]) rc = hli_fail_nomem(x, ins, "out of memory");
    }
  }
  HliValue *work[HLK_MAX_VARIADIC];
  for (int32_t i = 0; i < k; i++) work[i] = tmp[i] ? tmp[i] : outs[i];
  if (rc == 0) rc = reduce_into(x, ins, in, work);
  for (int32_t i = 0; i < k; i++) {
    if (tmp[i] && rc == 0) convert_into(outs[i], tmp[i]);
    hli_value_unref(x, tmp[i]);
  }
  return rc;
}

/* The typed fold of every operand, if the computation is one typed binop
 * per operand (folds[0..k-1]). */
static bool typed_folds(const HloInstr *ins, const HlkFold **folds) {
  int32_t k = ins->nops / 2;
  const HloComputation *comp = hlk_called(ins, HLO_CALL_TO_APPLY);
  HliBinop ops[HLK_MAX_VARIADIC];
  bool typed = false;
  if (k == 1) {
    ops[0] = hlk_match_reducer(comp);
    typed = ops[0] != HLI_BINOP_NONE && ops[0] != HLI_BINOP_SELECT_RHS;
  } else {
    typed = match_independent(comp, k, ops);
  }
  for (int32_t i = 0; typed && i < k; i++) {
    folds[i] = hlk_fold(ops[i], ins->ops[i]->shape.dtype, true);
    typed = folds[i] != NULL;
  }
  return typed;
}

/* Does the reduce run as an argmax/argmin (arg_rows)? Its fold, if so. */
static bool arg_path(const HloInstr *ins, ArgFold *af) {
  const HlkFold *folds[HLK_MAX_VARIADIC];
  HlkArgReducer ar;
  return ins->nops == 4 && !typed_folds(ins, folds) &&
         hlk_match_arg_reducer(hlk_called(ins, HLO_CALL_TO_APPLY), &ar) &&
         arg_fold(ins->ops[0]->shape.dtype, ins->ops[1]->shape.dtype, ar.is_max, af);
}

bool hlk_reduce_reads(const HloInstr *ins, int32_t k) {
  ArgFold af;
  return !(k == 1 && arg_iota(ins) && arg_path(ins, &af));
}

static int reduce_into(HliExec *x, const HloInstr *ins, HliValue *const *in,
                       HliValue *const *outs) {
  int32_t k = ins->nops / 2;
  Geom g;
  geom_build(&g, in[0], &ins->dimensions);
  const HlkFold *folds[HLK_MAX_VARIADIC];
  if (typed_folds(ins, folds)) {
    for (int32_t i = 0; i < k; i++)
      if (run_fold(x, ins, &g, folds[i], in[i], in[k + i], outs[i]) != 0) return -1;
    return 0;
  }

  ArgFold af;
  if (arg_path(ins, &af)) {
    bool made = arg_iota(ins);   /* then in[1] may be NULL: never computed */
    ArgJob j = {&g, af, in[0]->data, made ? NULL : in[1]->data,
                hlc_dtype_size(ins->ops[0]->shape.dtype), hlc_dtype_size(ins->ops[1]->shape.dtype),
                in[2]->data, in[3]->data, outs[0]->data, outs[1]->data, NULL, false};
    if (g.nout == 0) return 0;
    size_t seq_bytes = 0;
    char *seq = NULL;
    if (made) {
      if (g.inner_red) {   /* 0, 1, ..., inner - 1, shared by the threads */
        seq_bytes = (size_t)g.inner * j.is;
        if (hli_scratch_reserve(x, ins, seq_bytes)) return -1;
        if (!(seq = malloc(seq_bytes))) {
          hli_scratch_unreserve(x, seq_bytes);
          return hli_fail_nomem(x, ins, "out of memory");
        }
        for (int64_t c = 0; c < g.inner; c++) fill_index(seq + (size_t)c * j.is, j.is, c, 1);
        j.seq = seq;
      }
    }
    int64_t per_row = g.nin / (g.nko ? g.nko : 1) + 1;
    size_t work = per_worker(x, g.nko, arg_row_bytes(&j));   /* arg_rows' accumulators */
    int rc = -1;
    if (hli_scratch_reserve(x, ins, work) == 0) {
      hli_parallel_for(x, g.nko, 32768 / per_row + 1, arg_rows, &j);
      hli_scratch_unreserve(x, work);
      rc = j.oom ? hli_fail_nomem(x, ins, "out of memory") : 0;
    }
    free(seq);
    if (seq_bytes) hli_scratch_unreserve(x, seq_bytes);
    return rc;
  }
  return run_generic(x, ins, &g, k, in, outs);
}

void hlk_register_reduce(HliOpTable t) {
  t[HLO_OP_REDUCE] = (HliOpEntry){hlk_reduce, hlk_reduce_check};
  t[HLO_OP_REDUCE_WINDOW] = (HliOpEntry){hlk_reduce_window, hlk_reduce_window_check};
  t[HLO_OP_SELECT_AND_SCATTER] =
      (HliOpEntry){hlk_select_and_scatter, hlk_select_and_scatter_check};
  t[HLO_OP_SORT] = (HliOpEntry){hlk_sort, hlk_sort_check};
  t[HLO_OP_TOPK] = (HliOpEntry){hlk_topk, hlk_topk_check};
}
