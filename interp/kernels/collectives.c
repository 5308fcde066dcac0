/* collectives.c: cross-device operations and the device ids.
 *
 * A run on one device (no HliDevice on the executor) is a grid of one: every
 * group holds only this device, so all-reduce, all-gather, reduce-scatter,
 * all-to-all and collective-broadcast return their operands, and
 * collective-permute delivers the device's own value when a pair targets it
 * and zeros otherwise.
 *
 * On a grid of R replicas x P partitions (comm.h) each kernel finds the
 * group of its device (ir/collective.c: XLA's group modes), hands its
 * operand leaves to the communicator and computes its own result from every
 * member's leaves, read in the group's rank order. Reductions fold
 * ((x0 op x1) op x2) ... in rank order with the instruction's to_apply: the
 * same bits on every device, every transport and every thread count.
 * bf16 and f16 all-reduce and reduce-scatter accumulate in f32 and round
 * once to the element type, as XLA:CPU's AllReducePromotion does; other
 * types fold in their own type.
 *
 * The async forms compute at their start instruction (XLA:CPU replaces them
 * by the synchronous forms); -done returns the start's result. send and
 * recv move data between devices on a channel: send posts its operand,
 * recv-done waits for it (so a recv issued before the matching send on the
 * peer does not block). Host transfers (is_host_transfer, infeed, outfeed)
 * have no peer here and are refused. */
#include "interp/kernels/control.h"
#include "interp/kernels/register.h"
#include "interp/kernels/reducer.h"
#include "interp/comm.h"
#include "ir/collective.h"
#include "common/numeric.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const HliDevice *device_of(HliExec *x) { return hli_exec_device(x); }

/* ---- groups --------------------------------------------------------------- */

enum { GROUP_INLINE = 64 };
typedef struct Group {
  int64_t *devs;             /* member device ids in rank order */
  int n, rank;
  int64_t buf[GROUP_INLINE];
} Group;

static void group_free(Group *g) {
  if (g->devs && g->devs != g->buf) free(g->devs);
  g->devs = NULL;
}

/* The group of this device. 1, 0 (in no group: collective-broadcast), or -1
 * with an error naming ins. */
static int group_of(HliExec *x, const HloInstr *ins, Group *g) {
  const HliDevice *d = device_of(x);
  int64_t all = d->nreplicas * d->npartitions;
  g->devs = all <= GROUP_INLINE ? g->buf : malloc((size_t)all * sizeof *g->devs);
  if (!g->devs) return hli_fail_nomem(x, ins, "out of memory");
  char why[256];
  int rc = hlp_device_group(ins, d->nreplicas, d->npartitions, d->replica, d->partition, g->devs,
                            &g->n, &g->rank, why, sizeof why);
  if (rc < 0) {
    group_free(g);
    return hli_fail(x, ins, "%s", why);
  }
  return rc;
}

/* Members of every group (the uniform group size the shapes depend on). */
static int64_t group_size(HliExec *x, const HloInstr *ins) {
  Group g;
  int rc = group_of(x, ins, &g);
  if (rc <= 0) return rc < 0 ? -1 : 1;
  int64_t n = g.n;
  group_free(&g);
  return n;
}

/* Plan-time checks of the groups against the grid: ids in range, a
 * partition of the id space, uniform sizes where XLA wants them. */
static int check_groups(HliExec *x, const HloInstr *ins) {
  const HliDevice *d = device_of(x);
  char why[256];
  if (hlp_check_groups(ins, d->nreplicas, d->npartitions, why, sizeof why) != 0)
    return hli_fail(x, ins, "%s", why);
  return 0;
}

/* ---- values as leaves ----------------------------------------------------- */

enum { MAX_LEAVES = 64 };

static int leaves_of(HliValue *v, HliPiece *out, int *k) {
  if (v->dtype == HLO_TUPLE) {
    for (int32_t i = 0; i < v->ntuple; i++)
      if (leaves_of(v->tuple[i], out, k)) return -1;
    return 0;
  }
  if (*k >= MAX_LEAVES) return -1;
  out[(*k)++] = (HliPiece){v->data, v->nbytes};
  return 0;
}

/* Operand i's value as part i of the result (a tuple, or the array itself
 * for one operand). */
static HliValue *result_part(HliValue *out, int32_t i) {
  return out->dtype == HLO_TUPLE ? out->tuple[i] : out;
}

static void zero_value(HliValue *v) {
  if (v->dtype == HLO_TUPLE) {
    for (int32_t i = 0; i < v->ntuple; i++) zero_value(v->tuple[i]);
    return;
  }
  if (v->nbytes) memset(v->data, 0, v->nbytes);
}

/* Exchange the operands' leaves over the group and run consume; with
 * `shared` (a result every member computes alike) the members of this
 * process split the work (HliShare). */
static int exchange(HliExec *x, const HloInstr *ins, const Group *g, HliValue *const *in,
                    int32_t nin, HliValue *shared, HliConsume consume, void *arg,
                    const HliHints *hints) {
  HliPiece mine[MAX_LEAVES], out[MAX_LEAVES];
  int k = 0, kout = 0;
  for (int32_t i = 0; i < nin; i++)
    if (in[i] && leaves_of(in[i], mine, &k))
      return hli_unsupported(x, ins, "more than %d array operands", MAX_LEAVES);
  if (shared && leaves_of(shared, out, &kout))
    return hli_unsupported(x, ins, "more than %d array results", MAX_LEAVES);
  if (g->n == 1) {   /* a group of one: nobody to wait for */
    const HliPiece *only = mine;
    HliShare alone = {0, 1, NULL};
    return consume(arg, &only, &alone);
  }
  const HliDevice *d = device_of(x);
  if (!d->comm) return hli_fail(x, ins, "a group of %d devices, but this run has no communicator", g->n);
  return d->comm->exchange(d->comm, x, ins, g->devs, g->n, g->rank, mine, k, shared ? out : NULL,
                           consume, arg, hints);
}

/* ---- reductions ----------------------------------------------------------- */

typedef struct Reduce {
  HliExec *x;
  const HloInstr *ins;
  HliBinop op;
  int n;                     /* group size */
} Reduce;

static bool narrow_float(HloDtype t) { return t == HLO_BF16 || t == HLO_F16; }

static void to_f32(HloDtype t, const void *src, float *dst, int64_t n) {
  const uint16_t *s = src;
  if (t == HLO_BF16) for (int64_t i = 0; i < n; i++) dst[i] = hlc_bf16_to_f32(s[i]);
  else for (int64_t i = 0; i < n; i++) dst[i] = hlc_f16_to_f32(s[i]);
}

static void from_f32(HloDtype t, const float *src, void *dst, int64_t n) {
  uint16_t *d = dst;
  if (t == HLO_BF16) for (int64_t i = 0; i < n; i++) d[i] = hlc_f32_to_bf16(src[i]);
  else for (int64_t i = 0; i < n; i++) d[i] = hlc_f32_to_f16(src[i]);
}

/* dst[0..count) = fold over ranks r of src[r] + off elements, in rank order. */
static int fold_ranks(Reduce *rd, HloDtype t, const void *const *src, int64_t off, int64_t count,
                      void *dst) {
  HliExec *x = rd->x;
  size_t es = hlc_dtype_size(t);
  if (count == 0) return 0;
  if (narrow_float(t) && rd->op != HLI_BINOP_NONE) {   /* promoted to f32, rounded once */
    const HlkFold *f = hlk_fold(rd->op, HLO_F32, false);
    float *acc = f ? hli_scratch_alloc(x, rd->ins, (size_t)count * 8) : NULL;
    if (!f) return hli_unsupported(x, rd->ins, "this reduction of %s", hlc_dtype_name(t));
    if (!acc) return -1;
    float *tmp = acc + count;
    to_f32(t, (const char *)src[0] + off * (int64_t)es, acc, count);
    for (int r = 1; r < rd->n; r++) {
      to_f32(t, (const char *)src[r] + off * (int64_t)es, tmp, count);
      f->vec(acc, tmp, count, 1);
    }
    from_f32(t, acc, dst, count);
    hli_scratch_free(x, acc);
    return 0;
  }
  const HlkFold *f = rd->op != HLI_BINOP_NONE ? hlk_fold(rd->op, t, false) : NULL;
  if (f && f->acc_size == es) {
    void *acc = hli_scratch_alloc(x, rd->ins, (size_t)count * es);
    if (!acc) return -1;
    memcpy(acc, (const char *)src[0] + off * (int64_t)es, (size_t)count * es);
    for (int r = 1; r < rd->n; r++) f->vec(acc, (const char *)src[r] + off * (int64_t)es, count, 1);
    f->store(dst, acc, count);
    hli_scratch_free(x, acc);
    return 0;
  }
  /* Any other to_apply: the computation per element. */
  const HloComputation *comp = rd->ins->ncalled ? rd->ins->called[0].comp : NULL;
  if (!comp) return hli_fail(x, rd->ins, "no to_apply computation");
  HloDtype types[2] = {t, t};
  HlkScalarCall sc;
  if (hlk_scall_init(&sc, x, rd->ins, comp, 2, types, 1, types) != 0) return -1;
  for (int64_t i = 0; i < count; i++) {
    char *d = (char *)dst + i * (int64_t)es;
    memcpy(d, (const char *)src[0] + (off + i) * (int64_t)es, es);
    for (int r = 1; r < rd->n; r++) {
      memcpy(hlk_scall_arg(&sc, 0), d, es);
      memcpy(hlk_scall_arg(&sc, 1), (const char *)src[r] + (off + i) * (int64_t)es, es);
      void *res[1] = {d};
      if (hlk_scall_run(&sc, res) != 0) { hlk_scall_free(&sc); return -1; }
    }
  }
  hlk_scall_free(&sc);
  return 0;
}

static int check_reduction(HliExec *x, const HloInstr *ins) {
  if (ins->ncalled < 1 || !ins->called[0].comp) return hli_fail(x, ins, "needs to_apply");
  for (int32_t i = 0; i < ins->nops; i++) {
    HloDtype t = ins->ops[i]->shape.dtype;
    if (!hlc_dtype_is_array(t)) return hli_fail(x, ins, "operand %d must be an array", i);
    HloDtype types[2] = {t, t};
    if (hlk_check_signature(x, ins, ins->called[0].comp, 2, types, 1, types) != 0) return -1;
  }
  return 0;
}

/* ---- all-reduce ----------------------------------------------------------- */

typedef struct AllReduce {
  Reduce rd;
  HliValue *out;             /* the result (parts one to one with operands) */
  int32_t nops;
} AllReduce;

/* Each member of this process folds its share of every leaf (a contiguous
 * run of elements) and copies it into the others' results: the per-element
 * fold is the same, in rank order, whoever computes it. */
static int consume_all_reduce(void *arg, const HliPiece *const *pieces, const HliShare *share) {
  AllReduce *a = arg;
  const void *src[1024];
  if (a->rd.n > 1024) return hli_unsupported(a->rd.x, a->rd.ins, "groups of more than 1024 devices");
  for (int32_t i = 0; i < a->nops; i++) {
    HliValue *o = result_part(a->out, i);
    for (int r = 0; r < a->rd.n; r++) src[r] = pieces[r][i].data;
    int64_t lo = 0, hi = o->nelem;
    if (share->outs) {
      lo = o->nelem * share->part / share->nparts;
      hi = o->nelem * (share->part + 1) / share->nparts;
    }
    size_t es = hlc_dtype_size(o->dtype);
    char *mine = (char *)o->data + lo * (int64_t)es;
    if (fold_ranks(&a->rd, o->dtype, src, lo, hi - lo, mine) != 0) return -1;
    for (int r = 0; share->outs && r < a->rd.n; r++)
      if (share->outs[r] && share->outs[r][i].data != o->data && hi > lo)
        memcpy((char *)share->outs[r][i].data + lo * (int64_t)es, mine, (size_t)(hi - lo) * es);
  }
  return 0;
}

/* The same fold in steps (HliFold), for a transport that carries running
 * folds between processes: fold_ranks cut at any member. */
static HloDtype fold_dtype(AllReduce *a, int leaf) { return result_part(a->out, leaf)->dtype; }

static bool fold_promotes(AllReduce *a, int leaf) {
  return narrow_float(fold_dtype(a, leaf)) && a->rd.op != HLI_BINOP_NONE;
}

/* The typed loops fold_ranks uses for this leaf, or NULL (the computation). */
static const HlkFold *fold_loops(AllReduce *a, int leaf) {
  HloDtype t = fold_dtype(a, leaf);
  const HlkFold *f = a->rd.op != HLI_BINOP_NONE ? hlk_fold(a->rd.op, t, false) : NULL;
  return f && f->acc_size == hlc_dtype_size(t) ? f : NULL;
}

static size_t fold_elem_size(void *arg, int leaf) { return hlc_dtype_size(fold_dtype(arg, leaf)); }

static size_t fold_acc_size(void *arg, int leaf) {
  return fold_promotes(arg, leaf) ? sizeof(float) : fold_elem_size(arg, leaf);
}

static int fold_begin(void *arg, int leaf, void *acc, const void *src, int64_t count) {
  AllReduce *a = arg;
  if (fold_promotes(a, leaf)) to_f32(fold_dtype(a, leaf), src, acc, count);
  else memcpy(acc, src, (size_t)count * fold_elem_size(a, leaf));
  return 0;
}

static int fold_step(void *arg, int leaf, void *acc, const void *src, int64_t count) {
  AllReduce *a = arg;
  HliExec *x = a->rd.x;
  HloDtype t = fold_dtype(a, leaf);
  if (count == 0) return 0;
  if (fold_promotes(a, leaf)) {
    const HlkFold *f = hlk_fold(a->rd.op, HLO_F32, false);
    if (!f) return hli_unsupported(x, a->rd.ins, "this reduction of %s", hlc_dtype_name(t));
    float *tmp = hli_scratch_alloc(x, a->rd.ins, (size_t)count * sizeof(float));
    if (!tmp) return -1;
    to_f32(t, src, tmp, count);
    f->vec(acc, tmp, count, 1);
    hli_scratch_free(x, tmp);
    return 0;
  }
  const HlkFold *f = fold_loops(a, leaf);
  if (f) {
    f->vec(acc, src, count, 1);
    return 0;
  }
  const HloComputation *comp = a->rd.ins->ncalled ? a->rd.ins->called[0].comp : NULL;
  if (!comp) return hli_fail(x, a->rd.ins, "no to_apply computation");
  size_t es = hlc_dtype_size(t);
  HloDtype types[2] = {t, t};
  HlkScalarCall sc;
  if (hlk_scall_init(&sc, x, a->rd.ins, comp, 2, types, 1, types) != 0) return -1;
  for (int64_t i = 0; i < count; i++) {
    char *d = (char *)acc + i * (int64_t)es;
    memcpy(hlk_scall_arg(&sc, 0), d, es);
    memcpy(hlk_scall_arg(&sc, 1), (const char *)src + i * (int64_t)es, es);
    void *res[1] = {d};
    if (hlk_scall_run(&sc, res) != 0) { hlk_scall_free(&sc); return -1; }
  }
  hlk_scall_free(&sc);
  return 0;
}

static int fold_end(void *arg, int leaf, void *dst, const void *acc, int64_t count) {
  AllReduce *a = arg;
  const HlkFold *f = fold_loops(a, leaf);
  if (fold_promotes(a, leaf)) from_f32(fold_dtype(a, leaf), acc, dst, count);
  else if (f) f->store(dst, acc, count);   /* element by element: safe in place */
  else if (dst != acc) memcpy(dst, acc, (size_t)count * fold_elem_size(a, leaf));
  return 0;
}

static int check_all_reduce_shape(HliExec *x, const HloInstr *ins, const HloShape *s) {
  if (ins->nops == 1 && s->dtype != HLO_TUPLE) {
    if (!hlp_shape_compatible(s, &ins->ops[0]->shape))
      return hli_fail(x, ins, "result shape must equal the operand's");
    return 0;
  }
  if (s->dtype != HLO_TUPLE || s->ntuple != ins->nops)
    return hli_fail(x, ins, "result must be a tuple with one element per operand");
  for (int32_t i = 0; i < ins->nops; i++)
    if (!hlp_shape_compatible(&s->tuple[i], &ins->ops[i]->shape))
      return hli_fail(x, ins, "result element %d must equal operand %d's shape", i, i);
  return 0;
}

static int check_all_reduce(HliExec *x, const HloInstr *ins) {
  if (check_groups(x, ins) || check_reduction(x, ins)) return -1;
  return check_all_reduce_shape(x, ins, &ins->shape);
}

static int run_all_reduce(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (check_all_reduce(x, ins)) return -1;
  Group g;
  if (group_of(x, ins, &g) < 0) return -1;
  AllReduce a = {{x, ins, hlk_match_reducer(ins->called[0].comp), g.n}, out, ins->nops};
  HliFold fold = {&a, fold_elem_size, fold_acc_size, fold_begin, fold_step, fold_end};
  HliHints hints = {&fold, NULL};
  int rc = exchange(x, ins, &g, in, ins->nops, out, consume_all_reduce, &a, &hints);
  group_free(&g);
  return rc;
}

/* ---- all-gather ----------------------------------------------------------- */

typedef struct Gather {
  HliExec *x;
  HliValue *out;             /* result: parts one to one with operands */
  int32_t nops;
  int64_t dim;
  int n;
} Gather;

/* Split an array around dimension d: outer blocks of `inner` bytes of which
 * the dimension is the leading part. */
static void around(const HliValue *v, int64_t d, int64_t *outer, size_t *inner) {
  *outer = 1;
  for (int64_t i = 0; i < d; i++) *outer *= v->dims[i];
  *inner = *outer ? v->nbytes / (size_t)*outer : 0;
}

static int consume_gather(void *arg, const HliPiece *const *pieces, const HliShare *share) {
  (void)share;
  Gather *a = arg;
  for (int32_t i = 0; i < a->nops; i++) {
    HliValue *o = result_part(a->out, i);
    int64_t outer;
    size_t inner;
    around(o, a->dim, &outer, &inner);
    size_t part = inner / (size_t)a->n;   /* one member's block in one outer step */
    for (int64_t b = 0; b < outer; b++)
      for (int r = 0; r < a->n; r++)
        memcpy((char *)o->data + (size_t)b * inner + (size_t)r * part,
               (const char *)pieces[r][i].data + (size_t)b * part, part);
  }
  return 0;
}

static int check_gather_shape(HliExec *x, const HloInstr *ins, const HloShape *s, int64_t n) {
  if (!ins->has_dimensions || ins->dimensions.n != 1)
    return hli_fail(x, ins, "needs dimensions={d}");
  int64_t d = ins->dimensions.v[0];
  for (int32_t i = 0; i < ins->nops; i++) {
    const HloShape *o = &ins->ops[i]->shape;
    const HloShape *r = ins->nops == 1 && s->dtype != HLO_TUPLE ? s
                        : s->dtype == HLO_TUPLE && i < s->ntuple ? &s->tuple[i] : NULL;
    if (!r || !hlc_dtype_is_array(o->dtype)) return hli_fail(x, ins, "result must have one array per operand");
    if (d < 0 || d >= o->rank) return hli_fail(x, ins, "dimension %lld is out of range", (long long)d);
    if (r->dtype != o->dtype || r->rank != o->rank)
      return hli_fail(x, ins, "result %d must have operand %d's type and rank", i, i);
    for (int32_t k = 0; k < o->rank; k++) {
      int64_t want = k == d ? o->dims[k] * n : o->dims[k];
      if (r->dims[k] != want)
        return hli_fail(x, ins, "result dimension %d is %lld, but operand %d's is %lld and the "
                        "group has %lld devices (so %lld)", k, (long long)r->dims[k], i,
                        (long long)o->dims[k], (long long)n, (long long)want);
    }
  }
  return 0;
}

static int check_all_gather(HliExec *x, const HloInstr *ins) {
  if (check_groups(x, ins)) return -1;
  int64_t n = group_size(x, ins);
  return n < 0 ? -1 : check_gather_shape(x, ins, &ins->shape, n);
}

static int gather_into(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  Group g;
  if (group_of(x, ins, &g) < 0) return -1;
  Gather a = {x, out, ins->nops, ins->dimensions.v[0], g.n};
  int rc = exchange(x, ins, &g, in, ins->nops, NULL, consume_gather, &a, NULL);
  group_free(&g);
  return rc;
}

static int run_all_gather(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (check_all_gather(x, ins)) return -1;
  return gather_into(x, ins, in, out);
}

/* all-gather-start: (operand(s), result(s)). */
static int check_gather_start(HliExec *x, const HloInstr *ins) {
  const HloShape *s = &ins->shape;
  if (s->dtype != HLO_TUPLE || s->ntuple != 2)
    return hli_fail(x, ins, "all-gather-start's shape must be (operands, results)");
  if (check_groups(x, ins)) return -1;
  int64_t n = group_size(x, ins);
  if (n < 0 || check_gather_shape(x, ins, &s->tuple[1], n)) return -1;
  return check_gather_shape(x, ins, &s->tuple[0], 1);
}

static int run_gather_start(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (check_gather_start(x, ins)) return -1;
  for (int32_t i = 0; i < ins->nops; i++) hli_value_copy_into(result_part(out->tuple[0], i), in[i]);
  return gather_into(x, ins, in, out->tuple[1]);
}

/* ---- reduce-scatter ------------------------------------------------------- */

typedef struct Scatter {
  Reduce rd;
  HliValue *out;
  int32_t nops;
  int64_t dim;
  int rank;
} Scatter;

static int consume_scatter(void *arg, const HliPiece *const *pieces, const HliShare *share) {
  (void)share;
  Scatter *a = arg;
  const void *src[1024];
  if (a->rd.n > 1024) return hli_unsupported(a->rd.x, a->rd.ins, "groups of more than 1024 devices");
  for (int32_t i = 0; i < a->nops; i++) {
    HliValue *o = result_part(a->out, i);
    int64_t outer;
    size_t inner;
    around(o, a->dim, &outer, &inner);   /* inner: this device's block per outer step */
    size_t es = hlc_dtype_size(o->dtype);
    int64_t block = es ? (int64_t)(inner / es) : 0;
    for (int r = 0; r < a->rd.n; r++) src[r] = pieces[r][i].data;
    for (int64_t b = 0; b < outer; b++) {
      int64_t off = (b * a->rd.n + a->rank) * block;
      if (fold_ranks(&a->rd, o->dtype, src, off, block, (char *)o->data + b * block * (int64_t)es))
        return -1;
    }
  }
  return 0;
}

static int check_reduce_scatter(HliExec *x, const HloInstr *ins) {
  if (check_groups(x, ins) || check_reduction(x, ins)) return -1;
  if (!ins->has_dimensions || ins->dimensions.n != 1) return hli_fail(x, ins, "needs dimensions={d}");
  int64_t n = group_size(x, ins), d = ins->dimensions.v[0];
  if (n < 0) return -1;
  const HloShape *s = &ins->shape;
  for (int32_t i = 0; i < ins->nops; i++) {
    const HloShape *o = &ins->ops[i]->shape;
    const HloShape *r = ins->nops == 1 && s->dtype != HLO_TUPLE ? s
                        : s->dtype == HLO_TUPLE && i < s->ntuple ? &s->tuple[i] : NULL;
    if (!r || r->dtype != o->dtype || r->rank != o->rank)
      return hli_fail(x, ins, "result must have one array per operand, of its type and rank");
    if (d < 0 || d >= o->rank) return hli_fail(x, ins, "dimension %lld is out of range", (long long)d);
    for (int32_t k = 0; k < o->rank; k++) {
      if (k == d && o->dims[k] != r->dims[k] * n)
        return hli_fail(x, ins, "operand %d's dimension %lld (%lld) must be the result's (%lld) "
                        "times the group size (%lld)", i, (long long)d, (long long)o->dims[k],
                        (long long)r->dims[k], (long long)n);
      if (k != d && o->dims[k] != r->dims[k])
        return hli_fail(x, ins, "result dimension %d must equal operand %d's", k, i);
    }
  }
  return 0;
}

static int run_reduce_scatter(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (check_reduce_scatter(x, ins)) return -1;
  Group g;
  if (group_of(x, ins, &g) < 0) return -1;
  Scatter a = {{x, ins, hlk_match_reducer(ins->called[0].comp), g.n}, out, ins->nops,
               ins->dimensions.v[0], g.rank};
  int rc = exchange(x, ins, &g, in, ins->nops, NULL, consume_scatter, &a, NULL);
  group_free(&g);
  return rc;
}

/* ---- all-to-all ----------------------------------------------------------- */

typedef struct ToAll {
  HliValue *out;
  int32_t nops;
  int64_t dim;               /* array form: split and concat dimension; -1 tuple form */
  int n, rank;
} ToAll;

static int consume_to_all(void *arg, const HliPiece *const *pieces, const HliShare *share) {
  (void)share;
  ToAll *a = arg;
  if (a->dim < 0) {   /* tuple form: result j = member j's operand `rank` */
    for (int j = 0; j < a->n; j++) {
      HliValue *o = result_part(a->out, j);
      memcpy(o->data, pieces[j][a->rank].data, o->nbytes);
    }
    return 0;
  }
  /* Array form: block j along dim of the result = block `rank` of member j. */
  HliValue *o = a->out;
  int64_t outer;
  size_t inner;
  around(o, a->dim, &outer, &inner);
  size_t part = inner / (size_t)a->n;
  for (int64_t b = 0; b < outer; b++)
    for (int j = 0; j < a->n; j++)
      memcpy((char *)o->data + (size_t)b * inner + (size_t)j * part,
             (const char *)pieces[j][0].data + (size_t)b * inner + (size_t)a->rank * part, part);
  return 0;
}

static int check_all_to_all(HliExec *x, const HloInstr *ins) {
  if (check_groups(x, ins)) return -1;
  int64_t n = group_size(x, ins);
  if (n < 0) return -1;
  if (ins->has_dimensions) {
    if (ins->nops != 1 || ins->dimensions.n != 1)
      return hli_fail(x, ins, "the array form takes one operand and dimensions={d}");
    const HloShape *o = &ins->ops[0]->shape;
    int64_t d = ins->dimensions.v[0];
    if (d < 0 || d >= o->rank) return hli_fail(x, ins, "dimension %lld is out of range", (long long)d);
    if (o->dims[d] % n)
      return hli_fail(x, ins, "dimension %lld (%lld) does not split into %lld blocks", (long long)d,
                      (long long)o->dims[d], (long long)n);
    if (!hlp_shape_compatible(&ins->shape, o)) return hli_fail(x, ins, "result shape must equal the operand's");
    return 0;
  }
  if (ins->nops != n)
    return hli_fail(x, ins, "the tuple form takes one operand per group member (%lld), not %d",
                    (long long)n, ins->nops);
  for (int32_t i = 1; i < ins->nops; i++)   /* each member's operand j lands in one result slot */
    if (!hlp_shape_compatible(&ins->ops[i]->shape, &ins->ops[0]->shape))
      return hli_fail(x, ins, "the tuple form's operands must have one shape: operand %d differs "
                      "from operand 0", i);
  return check_all_reduce_shape(x, ins, &ins->shape);
}

static int run_all_to_all(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (check_all_to_all(x, ins)) return -1;
  Group g;
  if (group_of(x, ins, &g) < 0) return -1;
  ToAll a = {out, ins->nops, ins->has_dimensions ? ins->dimensions.v[0] : -1, g.n, g.rank};
  int rc = exchange(x, ins, &g, in, ins->nops, NULL, consume_to_all, &a, NULL);
  group_free(&g);
  return rc;
}

/* ---- collective-permute and collective-broadcast ---------------------------- */

typedef struct Copy {
  HliValue *out;
  int from;                  /* member whose leaves this device takes, -1: zeros */
} Copy;

static int copy_leaves(HliValue *v, const HliPiece *p, int *k) {
  if (v->dtype == HLO_TUPLE) {
    for (int32_t i = 0; i < v->ntuple; i++) copy_leaves(v->tuple[i], p, k);
    return 0;
  }
  if (v->nbytes) memcpy(v->data, p[*k].data, v->nbytes);
  (*k)++;
  return 0;
}

static int consume_copy(void *arg, const HliPiece *const *pieces, const HliShare *share) {
  (void)share;
  Copy *a = arg;
  int k = 0;
  if (a->from < 0) zero_value(a->out);
  else copy_leaves(a->out, pieces[a->from], &k);
  return 0;
}

int hlk_permute_pairs_check(HliExec *x, const HloInstr *ins) {
  if (check_groups(x, ins)) return -1;
  for (int32_t i = 0; i < ins->npairs; i++)
    for (int32_t j = 0; j < i; j++)
      for (int k = 0; k < 2; k++)
        if (ins->source_target_pairs[i][k] == ins->source_target_pairs[j][k])
          return hli_fail(x, ins, "source_target_pairs has %s %lld twice", k ? "target" : "source",
                          (long long)ins->source_target_pairs[i][k]);
  return 0;
}

/* Member `reader` reads only the member that sends to it (HliHints). */
static bool permute_reads(const HloInstr *ins, int reader, int member) {
  for (int32_t i = 0; i < ins->npairs; i++)
    if (ins->source_target_pairs[i][1] == reader) return ins->source_target_pairs[i][0] == member;
  return false;
}

static int permute_into(HliExec *x, const HloInstr *ins, HliValue *const *src, int32_t nsrc,
                        HliValue *dst) {
  Group g;
  if (group_of(x, ins, &g) < 0) return -1;
  Copy a = {dst, -1};
  for (int32_t i = 0; i < ins->npairs; i++)
    if (ins->source_target_pairs[i][1] == g.rank) a.from = (int)ins->source_target_pairs[i][0];
  HliHints hints = {NULL, permute_reads};
  int rc = exchange(x, ins, &g, src, nsrc, NULL, consume_copy, &a, &hints);
  group_free(&g);
  return rc;
}

/* ---- the in-place form's exchange (permute_inplace.c) ---- */

int hlk_permute_role(HliExec *x, const HloInstr *ins, bool *sends, bool *receives) {
  Group g;
  if (group_of(x, ins, &g) < 0) return -1;
  *sends = *receives = false;
  for (int32_t i = 0; i < ins->npairs; i++) {
    if (ins->source_target_pairs[i][0] == g.rank) *sends = true;
    if (ins->source_target_pairs[i][1] == g.rank) *receives = true;
  }
  group_free(&g);
  return 0;
}

typedef struct Deliver {
  int from;
  HlkDeliver deliver;
  void *arg;
} Deliver;

static int consume_deliver(void *arg, const HliPiece *const *pieces, const HliShare *share) {
  (void)share;
  Deliver *d = arg;
  return d->deliver(d->arg, d->from < 0 ? NULL : pieces[d->from]);
}

int hlk_permute_exchange(HliExec *x, const HloInstr *ins, const HliPiece *mine, int k,
                         HlkDeliver deliver, void *arg) {
  Group g;
  if (group_of(x, ins, &g) < 0) return -1;
  Deliver d = {-1, deliver, arg};
  for (int32_t i = 0; i < ins->npairs; i++)
    if (ins->source_target_pairs[i][1] == g.rank) d.from = (int)ins->source_target_pairs[i][0];
  int rc;
  if (g.n == 1) {
    const HliPiece *only = mine;
    rc = consume_deliver(&d, &only, NULL);
  } else if (!device_of(x)->comm) {
    rc = hli_fail(x, ins, "a group of %d devices, but this run has no communicator", g.n);
  } else {
    HliHints hints = {NULL, permute_reads};
    const HliDevice *dev = device_of(x);
    rc = dev->comm->exchange(dev->comm, x, ins, g.devs, g.n, g.rank, mine, k, NULL,
                             consume_deliver, &d, &hints);
  }
  group_free(&g);
  return rc;
}

/* One operand (the result has its shape), or the combined form: several
 * operands, a tuple of their shapes. */
static int check_permute_shape(HliExec *x, const HloInstr *ins, const HloShape *s) {
  if (ins->nops == 1 && hlp_shape_compatible(&ins->ops[0]->shape, s)) return 0;
  bool combined = s->dtype == HLO_TUPLE && s->ntuple == ins->nops;
  for (int32_t i = 0; combined && i < ins->nops; i++)
    combined = hlp_shape_compatible(&s->tuple[i], &ins->ops[i]->shape);
  if (combined) return 0;
  return hli_fail(x, ins, "result shape must equal the operand's (or be a tuple of the operands' "
                  "shapes)");
}

static int check_permute(HliExec *x, const HloInstr *ins) {
  if (ins->npermute_slices) return hlk_inplace_check(x, ins);
  if (hlk_permute_pairs_check(x, ins)) return -1;
  return check_permute_shape(x, ins, &ins->shape);
}

static int run_permute(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (ins->npermute_slices) return hlk_inplace_run(x, ins, in, out);
  if (check_permute(x, ins)) return -1;
  return permute_into(x, ins, in, ins->nops, out);
}

/* collective-permute-start: (operand, result, contexts...). */
static int check_permute_start(HliExec *x, const HloInstr *ins) {
  if (ins->npermute_slices) return hlk_inplace_check(x, ins);
  if (hlk_permute_pairs_check(x, ins)) return -1;
  const HloShape *s = &ins->shape;
  if (s->dtype != HLO_TUPLE || s->ntuple < 2 || check_permute_shape(x, ins, &s->tuple[1]))
    return hli_fail(x, ins, "collective-permute-start's shape must be (operand, result, ...)");
  return 0;
}

static int run_permute_start(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (ins->npermute_slices) return hlk_inplace_run(x, ins, in, out);
  if (check_permute_start(x, ins)) return -1;
  for (int32_t i = 0; i < ins->nops; i++) hli_value_copy_into(result_part(out->tuple[0], i), in[i]);
  for (int32_t i = 2; i < out->ntuple; i++) zero_value(out->tuple[i]);
  return permute_into(x, ins, in, ins->nops, out->tuple[1]);
}

static int check_broadcast(HliExec *x, const HloInstr *ins) {
  if (check_groups(x, ins)) return -1;
  return check_all_reduce_shape(x, ins, &ins->shape);
}

/* Every member reads the source's leaves only (HliHints). */
static bool broadcast_reads(const HloInstr *ins, int reader, int member) {
  (void)ins; (void)reader;
  return member == 0;
}

/* The first member of each group is its source; devices in no group get
 * zeros. */
static int run_broadcast(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (check_broadcast(x, ins)) return -1;
  Group g;
  int found = group_of(x, ins, &g);
  if (found < 0) return -1;
  if (found == 0) {
    zero_value(out);
    return 0;
  }
  Copy a = {out, 0};
  HliHints hints = {NULL, broadcast_reads};
  int rc = exchange(x, ins, &g, in, ins->nops, NULL, consume_copy, &a, &hints);
  group_free(&g);
  return rc;
}

/* ---- ragged-all-to-all ---------------------------------------------------- */

/* (input, output, input_offsets, send_sizes, output_offsets, recv_sizes),
 * offsets and sizes with one entry per group member, in rows of dimension
 * 0. Member j sends rows [input_offsets[r], +send_sizes[r]) of its input to
 * member r, which places them at rows [output_offsets[r] of member j, ...)
 * of its copy of output (jax.lax.ragged_all_to_all). */
typedef struct Ragged {
  HliExec *x;
  const HloInstr *ins;
  HliValue *out;
  int n, rank;
  HloDtype itype;            /* of the offset arrays */
  size_t row;                /* bytes of one row */
  int64_t in_rows, out_rows;
} Ragged;

static int64_t nth(HloDtype t, const void *p, int64_t i) {
  return t == HLO_S64 ? ((const int64_t *)p)[i] : ((const int32_t *)p)[i];
}

static int consume_ragged(void *arg, const HliPiece *const *pieces, const HliShare *share) {
  (void)share;
  Ragged *a = arg;
  for (int j = 0; j < a->n; j++) {
    /* leaves of member j: input, output, input_offsets, send_sizes, output_offsets, recv_sizes */
    int64_t in_off = nth(a->itype, pieces[j][2].data, a->rank);
    int64_t size = nth(a->itype, pieces[j][3].data, a->rank);
    int64_t out_off = nth(a->itype, pieces[j][4].data, a->rank);
    if (size < 0 || in_off < 0 || out_off < 0 || in_off > a->in_rows - size ||
        out_off > a->out_rows - size)
      return hli_fail(a->x, a->ins, "the chunk of %lld rows that group member %d sends to member "
                      "%d (input row %lld, output row %lld) is out of bounds", (long long)size, j,
                      a->rank, (long long)in_off, (long long)out_off);
    memcpy((char *)a->out->data + (size_t)out_off * a->row,
           (const char *)pieces[j][0].data + (size_t)in_off * a->row, (size_t)size * a->row);
  }
  return 0;
}

static int check_ragged(HliExec *x, const HloInstr *ins) {
  if (check_groups(x, ins)) return -1;
  if (ins->nops != 6) return hli_fail(x, ins, "ragged-all-to-all takes 6 operands");
  int64_t n = group_size(x, ins);
  if (n < 0) return -1;
  const HloShape *a = &ins->ops[0]->shape, *b = &ins->ops[1]->shape;
  if (a->dtype != b->dtype || a->rank < 1 || a->rank != b->rank)
    return hli_fail(x, ins, "input and output must be arrays of the same type and rank");
  for (int32_t i = 1; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return hli_fail(x, ins, "input and output rows differ in shape");
  HloDtype t = ins->ops[2]->shape.dtype;
  for (int k = 2; k < 6; k++) {
    const HloShape *s = &ins->ops[k]->shape;
    if ((s->dtype != HLO_S32 && s->dtype != HLO_S64) || s->dtype != t || hlp_shape_elements(s) != n)
      return hli_fail(x, ins, "operand %d must be an s32 or s64 array of %lld elements (one per "
                      "group member), all four of one type", k, (long long)n);
  }
  if (!hlp_shape_compatible(&ins->shape, b)) return hli_fail(x, ins, "result shape must equal the output operand's");
  return 0;
}

static int run_ragged(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (check_ragged(x, ins)) return -1;
  hli_value_copy_into(out, in[1]);
  Group g;
  if (group_of(x, ins, &g) < 0) return -1;
  int64_t in_rows = in[0]->dims[0], out_rows = out->dims[0];
  Ragged a = {x, ins, out, g.n, g.rank, in[2]->dtype,
              in_rows ? in[0]->nbytes / (size_t)in_rows : 0, in_rows, out_rows};
  int rc = exchange(x, ins, &g, in, 6, NULL, consume_ragged, &a, NULL);
  group_free(&g);
  return rc;
}

/* ---- async -done forms ---------------------------------------------------- */

/* *-done of a tuple-shaped start: element 1. */
static int check_tuple_done(HliExec *x, const HloInstr *ins) {
  const HloShape *s = &ins->ops[0]->shape;
  if (s->dtype != HLO_TUPLE || s->ntuple < 2 || !hlp_shape_compatible(&s->tuple[1], &ins->shape))
    return hli_fail(x, ins, "operand must be the start's tuple whose element 1 has the result shape");
  return 0;
}

static int run_tuple_done(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  (void)x; (void)ins;
  hli_value_copy_into(out, in[0]->tuple[1]);
  return 0;
}

static int check_same(HliExec *x, const HloInstr *ins) {
  if (!hlp_shape_compatible(&ins->ops[0]->shape, &ins->shape))
    return hli_fail(x, ins, "result shape must equal the operand's");
  return 0;
}

static int run_same(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  (void)x; (void)ins;
  hli_value_copy_into(out, in[0]);
  return 0;
}

/* ---- ids ------------------------------------------------------------------ */

static int check_id(HliExec *x, const HloInstr *ins) {
  if (ins->shape.dtype != HLO_U32 || ins->shape.rank != 0)
    return hli_fail(x, ins, "result must be u32[]");
  return 0;
}

static int run_replica_id(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  (void)ins; (void)in;
  *(uint32_t *)out->data = (uint32_t)device_of(x)->replica;
  return 0;
}

static int run_partition_id(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  (void)ins; (void)in;
  *(uint32_t *)out->data = (uint32_t)device_of(x)->partition;
  return 0;
}

/* ---- send / recv between devices ------------------------------------------ */

/* The source-target pairs XLA writes as the frontend attribute
 * _xla_send_recv_source_target_pairs="{{0,1},{1,2}}": ids are partition
 * numbers when the grid has several partitions, else replica numbers. */
static int fe_pairs(HliExec *x, const HloInstr *ins, const char *key, int64_t (**pairs)[2], int *n);

static int p2p_pairs(HliExec *x, const HloInstr *ins, int64_t (**pairs)[2], int *n) {
  return fe_pairs(x, ins, "_xla_send_recv_source_target_pairs", pairs, n);
}

/* Pairs {{a,b},...} in frontend attribute key of ins (none: *n = 0). */
static int fe_pairs(HliExec *x, const HloInstr *ins, const char *key, int64_t (**pairs)[2], int *n) {
  *pairs = NULL;
  *n = 0;
  for (int32_t a = 0; a < ins->nattrs; a++) {
    const HloAttr *at = &ins->attrs[a];
    if (strcmp(at->name, "frontend_attributes") != 0 || at->nvalues != 1) continue;
    const HloVal *b = at->values[0];
    for (int32_t i = 0; i < b->nitems; i++) {
      const HloVal *kv = b->items[i];
      if (kv->kind != HLO_VAL_ATTR || strcmp(kv->text, key) != 0 ||
          kv->nitems < 1)
        continue;
      const HloVal *v = kv->items[0];
      const char *s = v->text;
      size_t len = v->len;
      if (v->kind != HLO_VAL_STRING || !s)
        return hli_fail(x, ins, "%s must be a string \"{{a,b},...}\"", key);
      /* "{{a,b},{c,d}}": every '{' followed by a number starts a pair. */
      char *text = malloc(len + 1);
      int cap = (int)(len / 4) + 1;
      *pairs = malloc((size_t)cap * sizeof **pairs);
      if (!text || !*pairs) {
        free(text);
        free(*pairs);
        *pairs = NULL;
        return hli_fail_nomem(x, ins, "out of memory");
      }
      memcpy(text, s, len);
      text[len] = 0;
      for (const char *p = text; *p; p++) {
        if (*p != '{' || !(p[1] == '-' || (p[1] >= '0' && p[1] <= '9'))) continue;
        long long a0, b0;
        if (sscanf(p, "{%lld ,%lld }", &a0, &b0) != 2 || *n >= cap) {
          free(text);
          free(*pairs);
          *pairs = NULL;
          return hli_fail(x, ins, "cannot read %s=\"%.*s\"", key, (int)len, s);
        }
        (*pairs)[*n][0] = a0;
        (*pairs)[*n][1] = b0;
        (*n)++;
      }
      free(text);
      return 0;
    }
  }
  return 0;
}

/* _xla_send_recv_validation="{{lo,hi},...}" (XLA's
 * CollectivePermuteValidIterationAnnotator): pair i moves data only in the
 * loop iterations lo..hi; in the others the send sends nothing and the
 * receiver gets zeros. The iteration is the count of this device's
 * executions of the instruction (each once per iteration of its loop).
 * 1: pair i is live now; 0: not; -1: error. */
static int pair_live(HliExec *x, const HloInstr *ins, int i, uint64_t iteration) {
  int64_t (*v)[2];
  int n;
  if (fe_pairs(x, ins, "_xla_send_recv_validation", &v, &n)) return -1;
  int live = i >= n || ((int64_t)iteration >= v[i][0] && (int64_t)iteration <= v[i][1]);
  free(v);
  return live;
}

static bool is_host_transfer(const HloInstr *ins) {
  for (int32_t a = 0; a < ins->nattrs; a++)
    if (strcmp(ins->attrs[a].name, "is_host_transfer") == 0 && ins->attrs[a].nvalues == 1 &&
        ins->attrs[a].values[0]->text && strncmp(ins->attrs[a].values[0]->text, "true", 4) == 0)
      return true;
  return false;
}

static int host_transfer(HliExec *x, const HloInstr *ins) {
  return hli_unsupported(x, ins, "%s has no meaning on one CPU process without a host transfer "
                         "(no host program sends or receives the data)", hlp_opcode_name(ins->op));
}

/* The id pairs name: partitions on a grid with several, else replicas. */
static int64_t p2p_self(const HliDevice *d) { return d->npartitions > 1 ? d->partition : d->replica; }
static int64_t p2p_device(const HliDevice *d, int64_t id) {
  return d->npartitions > 1 ? d->replica * d->npartitions + id : id * d->npartitions + d->partition;
}
static int64_t p2p_space(const HliDevice *d) { return d->npartitions > 1 ? d->npartitions : d->nreplicas; }

static int check_send_recv(HliExec *x, const HloInstr *ins) {
  if (is_host_transfer(ins)) return host_transfer(x, ins);
  const HloShape *s = &ins->shape;
  if (s->dtype != HLO_TUPLE || s->ntuple != 3)
    return hli_fail(x, ins, "%s's shape must be (data, u32[], token[])", hlp_opcode_name(ins->op));
  if (ins->op == HLO_OP_SEND && !hlp_shape_compatible(&s->tuple[0], &ins->ops[0]->shape))
    return hli_fail(x, ins, "send's data element must have the operand's shape");
  int64_t (*pairs)[2];
  int n;
  if (p2p_pairs(x, ins, &pairs, &n)) return -1;
  const HliDevice *d = device_of(x);
  for (int i = 0; i < n; i++)
    for (int k = 0; k < 2; k++)
      if (pairs[i][k] < 0 || pairs[i][k] >= p2p_space(d)) {
        int64_t v = pairs[i][k];
        free(pairs);
        return hli_fail(x, ins, "_xla_send_recv_source_target_pairs names %s %lld, but there are %lld",
                        d->npartitions > 1 ? "partition" : "replica", (long long)v,
                        (long long)p2p_space(d));
      }
  free(pairs);
  return 0;
}

static int run_send(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (check_send_recv(x, ins)) return -1;
  hli_value_copy_into(out->tuple[0], in[0]);
  zero_value(out->tuple[1]);
  int64_t (*pairs)[2];
  int n, rc = 0;
  if (p2p_pairs(x, ins, &pairs, &n)) return -1;
  const HliDevice *d = device_of(x);
  uint64_t it = d->comm ? d->comm->executions(d->comm, x, ins) : 0;
  for (int i = 0; i < n && !rc; i++) {
    if (pairs[i][0] != p2p_self(d)) continue;
    int live = pair_live(x, ins, i, it);
    if (live < 0) { rc = -1; break; }
    if (!live) continue;
    HliPiece leaves[MAX_LEAVES];
    int k = 0;
    if (leaves_of(in[0], leaves, &k)) { rc = hli_unsupported(x, ins, "more than %d leaves", MAX_LEAVES); break; }
    if (!d->comm) {   /* one device: only a pair to itself can exist */
      rc = hli_fail(x, ins, "send to another device in a run of one device");
      break;
    }
    rc = d->comm->send(d->comm, x, ins, ins->channel_id, p2p_device(d, pairs[i][1]), leaves, k);
  }
  free(pairs);
  return rc;
}

/* recv itself waits for nothing: recv-done does (the peer may send later). */
static int run_recv(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  (void)in;
  if (check_send_recv(x, ins)) return -1;
  zero_value(out->tuple[0]);
  zero_value(out->tuple[1]);
  return 0;
}

static int check_recv_done(HliExec *x, const HloInstr *ins) {
  const HloInstr *r = ins->ops[0];
  if (r->op != HLO_OP_RECV) return hli_fail(x, ins, "operand must be a recv");
  if (is_host_transfer(r)) return host_transfer(x, ins);
  const HloShape *s = &ins->shape;
  if (s->dtype != HLO_TUPLE || s->ntuple != 2 || !hlp_shape_compatible(&s->tuple[0], &r->shape.tuple[0]))
    return hli_fail(x, ins, "recv-done's shape must be (data, token[]) of its recv");
  return 0;
}

static int run_recv_done(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  (void)in;
  if (check_recv_done(x, ins)) return -1;
  const HloInstr *r = ins->ops[0];
  int64_t (*pairs)[2];
  int n, rc = 0;
  if (p2p_pairs(x, r, &pairs, &n)) return -1;
  const HliDevice *d = device_of(x);
  int64_t from = -1;
  int pair = -1;
  for (int i = 0; i < n; i++)
    if (pairs[i][1] == p2p_self(d)) { from = pairs[i][0]; pair = i; }
  free(pairs);
  uint64_t it = d->comm ? d->comm->executions(d->comm, x, ins) : 0;
  if (pair >= 0) {
    int live = pair_live(x, r, pair, it);
    if (live < 0) return -1;
    if (!live) from = -1;   /* this iteration moves nothing */
  }
  HliValue *data = out->tuple[0];
  if (from < 0) {   /* no pair sends here: zeros, as collective-permute */
    zero_value(data);
    return 0;
  }
  HliPiece leaves[MAX_LEAVES];
  int k = 0;
  if (leaves_of(data, leaves, &k)) return hli_unsupported(x, ins, "more than %d leaves", MAX_LEAVES);
  if (!d->comm) return hli_fail(x, ins, "recv from another device in a run of one device");
  rc = d->comm->recv(d->comm, x, ins, r->channel_id, p2p_device(d, from), leaves, k);
  return rc;
}

static int check_send_done(HliExec *x, const HloInstr *ins) {
  if (ins->ops[0]->op != HLO_OP_SEND) return hli_fail(x, ins, "operand must be a send");
  if (is_host_transfer(ins->ops[0])) return host_transfer(x, ins);
  return 0;
}

static int run_send_done(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  (void)in; (void)out;
  return check_send_done(x, ins);
}

static int check_feed(HliExec *x, const HloInstr *ins) { return host_transfer(x, ins); }
static int run_feed(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  (void)in; (void)out;
  return host_transfer(x, ins);
}

void hlk_register_collectives(HliOpTable t) {
  t[HLO_OP_ALL_REDUCE] = (HliOpEntry){run_all_reduce, check_all_reduce};
  t[HLO_OP_ALL_REDUCE_START] = (HliOpEntry){run_all_reduce, check_all_reduce};
  t[HLO_OP_ALL_REDUCE_DONE] = (HliOpEntry){run_same, check_same};
  t[HLO_OP_ALL_GATHER] = (HliOpEntry){run_all_gather, check_all_gather};
  t[HLO_OP_ALL_GATHER_START] = (HliOpEntry){run_gather_start, check_gather_start};
  t[HLO_OP_ALL_GATHER_DONE] = (HliOpEntry){run_tuple_done, check_tuple_done};
  t[HLO_OP_REDUCE_SCATTER] = (HliOpEntry){run_reduce_scatter, check_reduce_scatter};
  t[HLO_OP_ALL_TO_ALL] = (HliOpEntry){run_all_to_all, check_all_to_all};
  t[HLO_OP_COLLECTIVE_BROADCAST] = (HliOpEntry){run_broadcast, check_broadcast};
  t[HLO_OP_COLLECTIVE_PERMUTE] = (HliOpEntry){run_permute, check_permute};
  t[HLO_OP_COLLECTIVE_PERMUTE_START] = (HliOpEntry){run_permute_start, check_permute_start};
  t[HLO_OP_COLLECTIVE_PERMUTE_DONE] = (HliOpEntry){run_tuple_done, check_tuple_done};
  t[HLO_OP_RAGGED_ALL_TO_ALL] = (HliOpEntry){run_ragged, check_ragged};
  t[HLO_OP_REPLICA_ID] = (HliOpEntry){run_replica_id, check_id};
  t[HLO_OP_PARTITION_ID] = (HliOpEntry){run_partition_id, check_id};
  t[HLO_OP_SEND] = (HliOpEntry){run_send, check_send_recv};
  t[HLO_OP_SEND_DONE] = (HliOpEntry){run_send_done, check_send_done};
  t[HLO_OP_RECV] = (HliOpEntry){run_recv, check_send_recv};
  t[HLO_OP_RECV_DONE] = (HliOpEntry){run_recv_done, check_recv_done};
  t[HLO_OP_INFEED] = (HliOpEntry){run_feed, check_feed};
  t[HLO_OP_OUTFEED] = (HliOpEntry){run_feed, check_feed};
}
