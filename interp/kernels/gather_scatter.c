/* gather_scatter.c: gather and scatter with XLA's general dimension numbers
 * (offset/collapsed/start_index_map, update_window/inserted/scatter_dims,
 * batching dims, index_vector_dim equal to the indices rank meaning an
 * implicit trailing 1, indices of any integer type), and the registrar of
 * this family (dynamic slices are in dynamic_slice.c).
 *
 * Out-of-bounds rules are XLA's: gather clamps each start index into
 * [0, operand_dim - slice_size]; scatter skips a whole update window when
 * any part of it would fall outside the operand. Scatter copies the operands
 * into the result, then applies the update windows in row-major order of the
 * update scatter dims (the order XLA's evaluator uses, which matters for
 * repeated indices under a non-commutative reducer). Recognised reducers run
 * typed row loops (scatter_combine.c), overwrite is a copy; any other
 * reducer, and variadic scatter, calls the computation per element.
 *
 * One window is a strided copy plan (strided.c): an embedding row gather or
 * a row scatter-add is one memcpy or one vector loop per index; one-index
 * scalar takes and scalar scatters have their own tight loops. Gather splits
 * positions over threads; typed scatter with wide windows gives each thread
 * a range of operand rows (every element still sees its updates in order). */
#include "interp/kernels/movement.h"
#include "interp/kernels/register.h"
#include <stdlib.h>
#include <string.h>

static bool has_dim(const HloI64s *v, int64_t d) {
  for (int i = 0; i < v->n; i++)
    if (v->v[i] == d) return true;
  return false;
}

/* How positions (gather: result batch positions; scatter: update scatter
 * positions) map to index vectors and operand offsets. Strides are in
 * elements. */
typedef struct IndexGeom {
  int nb;                        /* batch (scatter) dims: indices dims except index_vector_dim */
  int64_t n[HLK_MAX_RANK];       /* their sizes */
  int64_t istr[HLK_MAX_RANK];    /* stride in the indices array */
  int64_t xstr[HLK_MAX_RANK];    /* stride in the result (gather) or the updates (scatter) */
  int64_t npos;                  /* product of n */
  int nvec;                      /* index vector length */
  int64_t vstr;                  /* stride of the index vector's components in indices */
  int64_t map[HLK_MAX_RANK];     /* operand dim of each index vector component */
  int nbat;                      /* batching dims */
  int bpos[HLK_MAX_RANK];        /* which batch dim gives operand batching dim i ... */
  int64_t bstr[HLK_MAX_RANK];    /* ... and that operand dim's stride */
  int64_t bop[HLK_MAX_RANK];     /* the operand dim of batching dim i */
  int64_t hi[HLK_MAX_RANK];      /* per operand dim: largest start that keeps the window in */
  int64_t opstr[HLK_MAX_RANK];   /* operand strides */
} IndexGeom;

typedef struct Cursor {
  int64_t idx[HLK_MAX_RANK];     /* position over the batch dims */
  int64_t ioff;                  /* offset of the index vector in indices */
  int64_t xoff;                  /* offset in the result (gather) or updates (scatter) */
} Cursor;

static void cursor_at(const IndexGeom *g, Cursor *c, int64_t pos) {
  c->ioff = c->xoff = 0;
  for (int k = g->nb - 1; k >= 0; k--) {
    c->idx[k] = pos % g->n[k];
    pos /= g->n[k];
    c->ioff += c->idx[k] * g->istr[k];
    c->xoff += c->idx[k] * g->xstr[k];
  }
}

static inline void cursor_next(const IndexGeom *g, Cursor *c) {
  for (int k = g->nb - 1; k >= 0; k--) {
    c->ioff += g->istr[k];
    c->xoff += g->xstr[k];
    if (++c->idx[k] < g->n[k]) return;
    c->ioff -= g->istr[k] * g->n[k];
    c->xoff -= g->xstr[k] * g->n[k];
    c->idx[k] = 0;
  }
}

/* Operand element offset of the window at cursor c. Gather clamps the
 * start (always true); scatter returns false when the window is out of
 * bounds. start0, if not NULL, gets the window's start in operand dim 0. */
static inline bool window_start(const IndexGeom *g, const int64_t *indices, const Cursor *c,
                         bool clamp, int64_t *off, int64_t *start0) {
  int64_t o = 0, s0 = 0;
  for (int k = 0; k < g->nvec; k++) {
    int64_t d = g->map[k], s = indices[c->ioff + k * g->vstr];
    if (s < 0 || s > g->hi[d]) {
      if (!clamp) return false;
      s = s < 0 ? 0 : g->hi[d];
    }
    o += s * g->opstr[d];
    if (d == 0) s0 = s;
  }
  for (int i = 0; i < g->nbat; i++) {
    o += c->idx[g->bpos[i]] * g->bstr[i];
    if (g->bop[i] == 0) s0 = c->idx[g->bpos[i]];
  }
  *off = o;
  if (start0) *start0 = s0;
  return true;
}

/* The part of the geometry that comes from the indices array. */
static void index_geom(IndexGeom *g, const HloShape *ishape, int64_t ivd, const HloI64s *map,
                       const HloI64s *op_bat, const HloI64s *idx_bat, const HloShape *oshape) {
  int64_t istr[HLK_MAX_RANK];
  hlk_byte_strides(ishape->dims, ishape->rank, 1, istr);
  g->nb = 0;
  g->npos = 1;
  for (int d = 0; d < ishape->rank; d++) {
    if (d == ivd) continue;
    g->n[g->nb] = ishape->dims[d];
    g->istr[g->nb] = istr[d];
    g->npos *= ishape->dims[d];
    g->nb++;
  }
  g->nvec = (int)map->n;
  g->vstr = ivd < ishape->rank ? istr[ivd] : 0;
  for (int k = 0; k < map->n; k++) g->map[k] = map->v[k];
  hlk_byte_strides(oshape->dims, oshape->rank, 1, g->opstr);
  g->nbat = (int)op_bat->n;
  for (int i = 0; i < op_bat->n; i++) {
    int64_t d = idx_bat->v[i];
    g->bpos[i] = (int)(d < ivd ? d : d - 1);
    g->bstr[i] = g->opstr[op_bat->v[i]];
    g->bop[i] = op_bat->v[i];
  }
}

/* Indices as int64 (one pass, so the loops below read one type); s64
 * indices are used in place. The copy is counted against --max-memory
 * (limits.c). Release with free_indices. */
static const int64_t *load_all_indices(HliExec *x, const HloInstr *ins, const HliValue *v,
                                       bool in_place) {
  if (v->dtype == HLO_S64 && in_place) return v->data;
  int64_t *p = hli_scratch_alloc(x, ins, (size_t)v->nelem * sizeof *p);
  if (!p) return NULL;
  hlk_load_indices(v->dtype, v->data, v->nelem, p);
  return p;
}

static void free_indices(HliExec *x, const HliValue *v, const int64_t *p) {
  if (p != v->data) hli_scratch_free(x, (void *)p);
}

static int check_indices(HliExec *x, const HloInstr *ins, const HloShape *s, int64_t ivd) {
  if (hlk_check_rank(x, ins, s, "indices") != 0) return -1;
  if (!hlk_is_index_type(s->dtype))
    return hli_fail(x, ins, "indices must have an integer type, not %s", hlc_dtype_name(s->dtype));
  if (ivd < 0 || ivd > s->rank)
    return hli_fail(x, ins, "index_vector_dim=%lld out of range for indices of rank %d",
                    (long long)ivd, (int)s->rank);
  return 0;
}

/* Batching dims: operand dims paired with indices dims of equal size. */
static int check_batching(HliExec *x, const HloInstr *ins, const HloShape *o, const HloShape *is,
                          int64_t ivd, const HloI64s *ob, const HloI64s *ib, const HloI64s *other,
                          const char *oname, const char *iname, const char *othername) {
  if (hlk_check_dim_list(x, ins, ob, o->rank, false, oname) != 0 ||
      hlk_check_dim_list(x, ins, ib, is->rank, false, iname) != 0)
    return -1;
  if (ob->n != ib->n)
    return hli_fail(x, ins, "%s and %s differ in length", oname, iname);
  for (int i = 0; i < ob->n; i++) {
    if (ib->v[i] == ivd)
      return hli_fail(x, ins, "%s contains index_vector_dim", iname);
    if (has_dim(other, ob->v[i]))
      return hli_fail(x, ins, "dimension %lld is in both %s and %s", (long long)ob->v[i], oname,
                      othername);
    if (o->dims[ob->v[i]] != is->dims[ib->v[i]])
      return hli_fail(x, ins, "batching dimension sizes differ (%lld vs %lld)",
                      (long long)o->dims[ob->v[i]], (long long)is->dims[ib->v[i]]);
  }
  return 0;
}

/* start_index_map / scatter_dims_to_operand_dims against the index vector. */
static int check_map(HliExec *x, const HloInstr *ins, const HloShape *o, const HloShape *is,
                     int64_t ivd, const HloI64s *map, const HloI64s *bat, const char *name) {
  int64_t nvec = ivd == is->rank ? 1 : is->dims[ivd];
  if (map->n != nvec)
    return hli_fail(x, ins, "%s has %d entries but the index vector has %lld", name, (int)map->n,
                    (long long)nvec);
  if (hlk_check_dim_list(x, ins, map, o->rank, false, name) != 0) return -1;
  for (int i = 0; i < map->n; i++)
    if (has_dim(bat, map->v[i]))
      return hli_fail(x, ins, "%s names batching dimension %lld", name, (long long)map->v[i]);
  return 0;
}

/* ==== gather ================================================================= */

static int gather_check(HliExec *x, const HloInstr *ins) {
  if (ins->nops != 2) return hli_fail(x, ins, "expects 2 operands, has %d", (int)ins->nops);
  const HloShape *o = &ins->ops[0]->shape, *is = &ins->ops[1]->shape;
  const HloGatherDims *g = &ins->gather;
  if (hlk_check_array(x, ins, o, "operand") != 0) return -1;
  if (check_indices(x, ins, is, g->index_vector_dim) != 0) return -1;
  if (g->slice_sizes.n != o->rank)
    return hli_fail(x, ins, "slice_sizes has %d entries for an operand of rank %d",
                    (int)g->slice_sizes.n, (int)o->rank);
  for (int d = 0; d < o->rank; d++)
    if (g->slice_sizes.v[d] < 0 || g->slice_sizes.v[d] > o->dims[d])
      return hli_fail(x, ins, "slice size %lld does not fit operand dimension %d (size %lld)",
                      (long long)g->slice_sizes.v[d], d, (long long)o->dims[d]);
  if (hlk_check_dim_list(x, ins, &g->collapsed_slice_dims, o->rank, true,
                         "collapsed_slice_dims") != 0)
    return -1;
  if (check_batching(x, ins, o, is, g->index_vector_dim, &g->operand_batching_dims,
                     &g->start_indices_batching_dims, &g->collapsed_slice_dims,
                     "operand_batching_dims", "start_indices_batching_dims",
                     "collapsed_slice_dims") != 0)
    return -1;
  for (int d = 0; d < o->rank; d++)
    if ((has_dim(&g->collapsed_slice_dims, d) || has_dim(&g->operand_batching_dims, d)) &&
        g->slice_sizes.v[d] != 1)
      return hli_fail(x, ins, "collapsed or batching dimension %d needs slice size 1", d);
  if (check_map(x, ins, o, is, g->index_vector_dim, &g->start_index_map,
                &g->operand_batching_dims, "start_index_map") != 0)
    return -1;
  int nbatch = is->rank - (g->index_vector_dim < is->rank ? 1 : 0);
  int noff = o->rank - (int)g->collapsed_slice_dims.n - (int)g->operand_batching_dims.n;
  if (g->offset_dims.n != noff)
    return hli_fail(x, ins, "offset_dims has %d entries, expected %d", (int)g->offset_dims.n,
                    noff);
  int rrank = nbatch + noff;
  if (rrank > HLK_MAX_RANK) return hli_unsupported(x, ins, "result rank %d", rrank);
  if (hlk_check_dim_list(x, ins, &g->offset_dims, rrank, true, "offset_dims") != 0) return -1;
  int64_t dims[HLK_MAX_RANK];
  int ob = 0, od = 0;
  for (int j = 0; j < rrank; j++) {
    if (has_dim(&g->offset_dims, j)) {
      while (has_dim(&g->collapsed_slice_dims, od) || has_dim(&g->operand_batching_dims, od)) od++;
      dims[j] = g->slice_sizes.v[od++];
    } else {
      int d = ob < g->index_vector_dim ? ob : ob + 1;
      dims[j] = is->dims[d];
      ob++;
    }
  }
  return hlk_check_result(x, ins, o->dtype, rrank, dims);
}

typedef struct GatherJob {
  const IndexGeom *g;
  const HlkPlan *win;
  const int64_t *indices;
  char *out;
  const char *operand;
  int64_t es;
} GatherJob;

/* The common "take": one batch dim, one index per position, no batching
 * dims. A tight loop per element size for scalar windows. */
static bool simple_geom(const IndexGeom *g) { return g->nb == 1 && g->nvec == 1 && g->nbat == 0; }

#define TAKE_LOOP(T)                                                                  \
  do {                                                                                \
    T *o = (T *)(void *)j->out;                                                       \
    const T *a = (const T *)(const void *)j->operand;                                 \
    for (int64_t pos = lo; pos < hi; pos++) {                                         \
      int64_t s = ix[pos * is];                                                       \
      s = s < 0 ? 0 : s > top ? top : s;                                              \
      o[pos * xs] = a[s * os];                                                        \
    }                                                                                 \
  } while (0)

static void gather_simple(const GatherJob *j, int64_t lo, int64_t hi) {
  const IndexGeom *g = j->g;
  const int64_t *ix = j->indices + 0;
  int64_t d = g->map[0], top = g->hi[d], os = g->opstr[d], is = g->istr[0], xs = g->xstr[0];
  if (j->win->rank == 0) {
    switch (j->es) {
    case 1: TAKE_LOOP(uint8_t); return;
    case 2: TAKE_LOOP(uint16_t); return;
    case 4: TAKE_LOOP(uint32_t); return;
    case 8: TAKE_LOOP(uint64_t); return;
    default: break;
    }
  }
  for (int64_t pos = lo; pos < hi; pos++) {
    int64_t s = ix[pos * is];
    s = s < 0 ? 0 : s > top ? top : s;
    char *dst = j->out + pos * xs * j->es;
    const char *src = j->operand + s * os * j->es;
    if (j->win->rank == 0)
      memcpy(dst, src, (size_t)j->es);
    else
      hlk_plan_run(j->win, dst, src);
  }
}

static void gather_range(void *arg, int64_t lo, int64_t hi) {
  const GatherJob *j = arg;
  if (simple_geom(j->g)) {
    gather_simple(j, lo, hi);
    return;
  }
  Cursor c;
  cursor_at(j->g, &c, lo);
  for (int64_t pos = lo; pos < hi; pos++) {
    int64_t off;
    window_start(j->g, j->indices, &c, true, &off, NULL);
    char *d = j->out + c.xoff * j->es;
    const char *s = j->operand + off * j->es;
    if (j->win->rank == 0)
      memcpy(d, s, (size_t)j->es);
    else
      hlk_plan_run(j->win, d, s);
    cursor_next(j->g, &c);
  }
}

static int gather_run(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  const HloGatherDims *gd = &ins->gather;
  const HliValue *a = in[0], *iv = in[1];
  if (out->nelem == 0) return 0;
  size_t es = hlc_dtype_size(a->dtype);
  IndexGeom g;
  index_geom(&g, &ins->ops[1]->shape, gd->index_vector_dim, &gd->start_index_map,
             &gd->operand_batching_dims, &gd->start_indices_batching_dims, &ins->ops[0]->shape);
  int64_t rstr[HLK_MAX_RANK];
  hlk_byte_strides(out->dims, out->rank, 1, rstr);
  int nb = 0;
  for (int j = 0; j < out->rank; j++)
    if (!has_dim(&gd->offset_dims, j)) g.xstr[nb++] = rstr[j];
  for (int d = 0; d < a->rank; d++) g.hi[d] = a->dims[d] - gd->slice_sizes.v[d];
  /* The window: offset dims of the result against the operand's kept dims. */
  int64_t wn[HLK_MAX_RANK], wd[HLK_MAX_RANK], ws[HLK_MAX_RANK];
  int nw = 0;
  for (int d = 0; d < a->rank; d++) {
    if (has_dim(&gd->collapsed_slice_dims, d) || has_dim(&gd->operand_batching_dims, d)) continue;
    wn[nw] = gd->slice_sizes.v[d];
    ws[nw] = g.opstr[d] * (int64_t)es;
    wd[nw] = rstr[gd->offset_dims.v[nw]] * (int64_t)es;
    nw++;
  }
  HlkPlan win;
  hlk_plan_init(&win, nw, wn, wd, ws, es);
  const int64_t *indices = load_all_indices(x, ins, iv, true);
  if (!indices) return -1;
  GatherJob j = { &g, &win, indices, out->data, a->data, (int64_t)es };
  int64_t per = win.bytes > 0 ? win.bytes : 1;
  hli_parallel_for(x, g.npos, per >= 4096 ? 1 : 4096 / per, gather_range, &j);
  free_indices(x, iv, indices);
  return 0;
}

/* ==== scatter ================================================================= */

static const HloComputation *to_apply(const HloInstr *ins) {
  for (int i = 0; i < ins->ncalled; i++)
    if (ins->called[i].role == HLO_CALL_TO_APPLY) return ins->called[i].comp;
  return NULL;
}

/* The reducer takes 2k scalars (k operand values, then k update values) and
 * returns one scalar (k == 1) or a k-tuple of them. */
static int check_reducer(HliExec *x, const HloInstr *ins, int k) {
  const HloComputation *c = to_apply(ins);
  if (!c || !c->root) return hli_fail(x, ins, "missing to_apply computation");
  if (c->nparams != 2 * k)
    return hli_fail(x, ins, "to_apply %s takes %d parameters, expected %d", c->name,
                    (int)c->nparams, 2 * k);
  for (int i = 0; i < 2 * k; i++) {
    const HloShape *p = c->params[i] ? &c->params[i]->shape : NULL;
    HloDtype t = ins->ops[i < k ? i : i + 1]->shape.dtype;
    if (!p || p->rank != 0 || p->dtype != t)
      return hli_fail(x, ins, "to_apply %s parameter %d must be a %s scalar", c->name, i,
                      hlc_dtype_name(t));
  }
  const HloShape *r = &c->root->shape;
  if (k == 1 && r->dtype != HLO_TUPLE) {
    if (r->rank != 0 || r->dtype != ins->ops[0]->shape.dtype)
      return hli_fail(x, ins, "to_apply %s must return a %s scalar", c->name,
                      hlc_dtype_name(ins->ops[0]->shape.dtype));
    return 0;
  }
  if (r->dtype != HLO_TUPLE || r->ntuple != k)
    return hli_fail(x, ins, "to_apply %s must return a tuple of %d scalars", c->name, k);
  for (int i = 0; i < k; i++)
    if (r->tuple[i].dtype != ins->ops[i]->shape.dtype || r->tuple[i].rank != 0)
      return hli_fail(x, ins, "to_apply %s result %d must be a %s scalar", c->name, i,
                      hlc_dtype_name(ins->ops[i]->shape.dtype));
  return 0;
}

static int scatter_check(HliExec *x, const HloInstr *ins) {
  if (ins->nops < 3 || ins->nops % 2 == 0)
    return hli_fail(x, ins, "expects 2k+1 operands (k operands, indices, k updates), has %d",
                    (int)ins->nops);
  int k = (ins->nops - 1) / 2;
  if (k > HLK_MAX_RANK) return hli_unsupported(x, ins, "scatter of %d operands", k);
  const HloScatterDims *sd = &ins->scatter;
  const HloShape *o = &ins->ops[0]->shape, *is = &ins->ops[k]->shape,
                 *u = &ins->ops[k + 1]->shape;
  for (int i = 0; i < k; i++) {
    const HloShape *oi = &ins->ops[i]->shape, *ui = &ins->ops[k + 1 + i]->shape;
    if (hlk_check_array(x, ins, oi, "operand") != 0 || hlk_check_array(x, ins, ui, "update") != 0)
      return -1;
    if (oi->rank != o->rank || ui->rank != u->rank || ui->dtype != oi->dtype)
      return hli_fail(x, ins, "operand %d and update %d must match the first ones' ranks "
                      "and each other's type", i, i);
    for (int d = 0; d < o->rank; d++)
      if (oi->dims[d] != o->dims[d]) return hli_fail(x, ins, "operands differ in shape");
    for (int d = 0; d < u->rank; d++)
      if (ui->dims[d] != u->dims[d]) return hli_fail(x, ins, "updates differ in shape");
  }
  int64_t ivd = sd->index_vector_dim;
  if (check_indices(x, ins, is, ivd) != 0) return -1;
  if (hlk_check_dim_list(x, ins, &sd->update_window_dims, u->rank, true, "update_window_dims") != 0 ||
      hlk_check_dim_list(x, ins, &sd->inserted_window_dims, o->rank, true,
                         "inserted_window_dims") != 0)
    return -1;
  if (check_batching(x, ins, o, is, ivd, &sd->input_batching_dims,
                     &sd->scatter_indices_batching_dims, &sd->inserted_window_dims,
                     "input_batching_dims", "scatter_indices_batching_dims",
                     "inserted_window_dims") != 0)
    return -1;
  if (check_map(x, ins, o, is, ivd, &sd->scatter_dims_to_operand_dims, &sd->input_batching_dims,
                "scatter_dims_to_operand_dims") != 0)
    return -1;
  int nscat = is->rank - (ivd < is->rank ? 1 : 0);
  int nwin = o->rank - (int)sd->inserted_window_dims.n - (int)sd->input_batching_dims.n;
  if (sd->update_window_dims.n != nwin || u->rank != nscat + nwin)
    return hli_fail(x, ins, "updates of rank %d do not fit %d scatter and %d window dims",
                    (int)u->rank, nscat, nwin);
  int sc = 0, w = 0, od = 0;
  for (int j = 0; j < u->rank; j++) {
    if (has_dim(&sd->update_window_dims, j)) {
      while (has_dim(&sd->inserted_window_dims, od) || has_dim(&sd->input_batching_dims, od))
        od++;
      if (u->dims[j] > o->dims[od])
        return hli_fail(x, ins, "update window dimension %d (size %lld) exceeds operand "
                        "dimension %d (size %lld)", j, (long long)u->dims[j], od,
                        (long long)o->dims[od]);
      od++;
      w++;
    } else {
      int d = sc < ivd ? sc : sc + 1;
      if (u->dims[j] != is->dims[d])
        return hli_fail(x, ins, "update scatter dimension %d (size %lld) differs from indices "
                        "dimension %d (size %lld)", j, (long long)u->dims[j], d,
                        (long long)is->dims[d]);
      sc++;
    }
  }
  if (k == 1) {
    if (hlk_check_result(x, ins, o->dtype, o->rank, o->dims) != 0) return -1;
  } else {
    const HloShape *r = &ins->shape;
    if (r->dtype != HLO_TUPLE || r->ntuple != k)
      return hli_fail(x, ins, "the result must be a tuple of %d arrays", k);
    for (int i = 0; i < k; i++) {
      const HloShape *ri = &r->tuple[i], *oi = &ins->ops[i]->shape;
      bool ok = ri->dtype == oi->dtype && ri->rank == oi->rank;
      for (int d = 0; ok && d < oi->rank; d++) ok = ri->dims[d] == oi->dims[d];
      if (!ok) return hli_fail(x, ins, "result %d does not match operand %d", i, i);
    }
  }
  return check_reducer(x, ins, k);
}

/* Everything a scatter run needs, element strides throughout. */
typedef struct ScatterGeom {
  IndexGeom g;
  int nw;                       /* window dims */
  int64_t wn[HLK_MAX_RANK];     /* window sizes */
  int64_t wo[HLK_MAX_RANK];     /* operand stride of each window dim */
  int64_t wu[HLK_MAX_RANK];     /* update stride of each window dim */
  int64_t welems;               /* elements in one window */
  int64_t n0;                   /* operand dim 0 (threads own ranges of it) */
  bool win0;                    /* operand dim 0 is window dim 0 */
} ScatterGeom;

static void scatter_geom(ScatterGeom *s, const HloInstr *ins, int k) {
  const HloScatterDims *sd = &ins->scatter;
  const HloShape *o = &ins->ops[0]->shape, *u = &ins->ops[k + 1]->shape;
  IndexGeom *g = &s->g;
  index_geom(g, &ins->ops[k]->shape, sd->index_vector_dim, &sd->scatter_dims_to_operand_dims,
             &sd->input_batching_dims, &sd->scatter_indices_batching_dims, o);
  int64_t ustr[HLK_MAX_RANK];
  hlk_byte_strides(u->dims, u->rank, 1, ustr);
  int nb = 0;
  s->nw = 0;
  s->welems = 1;
  int od = 0;
  for (int d = 0; d < o->rank; d++) g->hi[d] = o->dims[d] - 1;
  s->n0 = o->rank > 0 ? o->dims[0] : 1;
  s->win0 = o->rank > 0 && !has_dim(&sd->inserted_window_dims, 0) &&
            !has_dim(&sd->input_batching_dims, 0);
  for (int j = 0; j < u->rank; j++) {
    if (!has_dim(&sd->update_window_dims, j)) {
      g->xstr[nb++] = ustr[j];
      continue;
    }
    while (has_dim(&sd->inserted_window_dims, od) || has_dim(&sd->input_batching_dims, od)) od++;
    s->wn[s->nw] = u->dims[j];
    s->wo[s->nw] = g->opstr[od];
    s->wu[s->nw] = ustr[j];
    s->welems *= u->dims[j];
    g->hi[od] = o->dims[od] - u->dims[j];
    s->nw++;
    od++;
  }
}

/* Typed path: one reducer (or overwrite) on one operand. With threads,
 * each thread owns a range of operand rows (dim 0) and walks every update
 * window in order, applying only the part that falls in its rows: each
 * element still sees its updates in XLA's order, so results do not depend
 * on the thread count. */
typedef struct ScatterJob {
  const ScatterGeom *s;
  const int64_t *indices;
  char *out;
  const char *upd;
  int64_t es;
  HlkRowFn fn;           /* NULL: overwrite */
  HlkPlan win;           /* the whole window */
  int64_t wd[HLK_MAX_RANK], wsb[HLK_MAX_RANK];   /* its byte strides */
} ScatterJob;

static void scatter_apply(const ScatterJob *j, const HlkPlan *p, char *d, const char *u) {
  if (j->fn)
    hlk_plan_apply(p, d, u, j->fn);
  else
    hlk_plan_run(p, d, u);
}

/* Scalar windows at one index per position (scatter-add of scalars,
 * segment sums): no cursor, no plan; one row-kernel call per element. */
static void scatter_simple_scalars(const ScatterJob *j) {
  const IndexGeom *g = &j->s->g;
  int64_t d = g->map[0], top = g->hi[d], os = g->opstr[d] * j->es, is = g->istr[0],
          xs = g->xstr[0] * j->es;
  const int64_t *ix = j->indices;
  for (int64_t pos = 0; pos < g->npos; pos++) {
    int64_t s = ix[pos * is];
    if (s < 0 || s > top) continue;
    if (j->fn)
      j->fn(j->out + s * os, j->upd + pos * xs, 1, j->es, j->es);
    else
      memcpy(j->out + s * os, j->upd + pos * xs, (size_t)j->es);
  }
}

static void scatter_rows(void *arg, int64_t lo, int64_t hi) {
  const ScatterJob *j = arg;
  const ScatterGeom *s = j->s;
  int64_t w0 = s->win0 ? s->wn[0] : 1, e = j->es;
  bool all = lo == 0 && hi == s->n0;
  if (all && s->welems == 1 && simple_geom(&s->g)) {
    scatter_simple_scalars(j);
    return;
  }
  Cursor c;
  cursor_at(&s->g, &c, 0);
  for (int64_t pos = 0; pos < s->g.npos; pos++, cursor_next(&s->g, &c)) {
    int64_t off, s0;
    if (!window_start(&s->g, j->indices, &c, false, &off, &s0)) continue;
    char *d = j->out + off * e;
    const char *u = j->upd + c.xoff * e;
    if (all || (s0 >= lo && s0 + w0 <= hi)) {
      scatter_apply(j, &j->win, d, u);
      continue;
    }
    int64_t a = s0 > lo ? s0 : lo, b = s0 + w0 < hi ? s0 + w0 : hi;
    if (a >= b) continue;
    /* Only a window along dim 0 can straddle a boundary: clip it. */
    int64_t wn[HLK_MAX_RANK];
    for (int i = 0; i < s->nw; i++) wn[i] = s->wn[i];
    wn[0] = b - a;
    HlkPlan p;
    hlk_plan_init(&p, s->nw, wn, j->wd, j->wsb, (size_t)e);
    if (j->fn) hlk_plan_untile(&p);
    scatter_apply(j, &p, d + (a - s0) * j->wd[0], u + (a - s0) * j->wsb[0]);
  }
}

static void scatter_typed(HliExec *x, const ScatterGeom *s, const int64_t *indices, char *out,
                          const char *upd, size_t es, HlkRowFn fn) {
  ScatterJob j = { s, indices, out, upd, (int64_t)es, fn, { 0 }, { 0 }, { 0 } };
  for (int i = 0; i < s->nw; i++) {
    j.wd[i] = s->wo[i] * (int64_t)es;
    j.wsb[i] = s->wu[i] * (int64_t)es;
  }
  hlk_plan_init(&j.win, s->nw, s->wn, j.wd, j.wsb, es);
  if (j.win.empty) return;
  if (fn) hlk_plan_untile(&j.win);
  /* Every thread scans all the indices, so threads pay off only when a
   * window is much more work than reading its index: one range per thread. */
  int nt = hli_num_threads(x);
  int64_t work = s->g.npos * s->welems * (int64_t)es;
  if (nt <= 1 || work < (1 << 20) || s->welems * (int64_t)es < 512 || s->n0 < 2) {
    scatter_rows(&j, 0, s->n0);
    return;
  }
  int64_t chunk = (s->n0 + nt - 1) / nt;
  hli_parallel_for(x, s->n0, chunk > 0 ? chunk : 1, scatter_rows, &j);
}

/* General path: call the reducer for every element of every window. */
static int scatter_called(HliExec *x, const HloInstr *ins, const ScatterGeom *s,
                          const int64_t *indices, HliValue *const *outs, HliValue *const *upds,
                          int k) {
  const HloComputation *comp = to_apply(ins);
  HliValue *args[2 * HLK_MAX_RANK];
  if (2 * k > 2 * HLK_MAX_RANK) return hli_unsupported(x, ins, "scatter of %d operands", k);
  size_t es[HLK_MAX_RANK];
  int rc = 0;
  for (int i = 0; i < 2 * k; i++) args[i] = NULL;
  for (int i = 0; i < k; i++) es[i] = hlc_dtype_size(outs[i]->dtype);
  Cursor c;
  cursor_at(&s->g, &c, 0);
  int64_t widx[HLK_MAX_RANK];
  for (int64_t pos = 0; pos < s->g.npos && rc == 0; pos++, cursor_next(&s->g, &c)) {
    int64_t base;
    if (!window_start(&s->g, indices, &c, false, &base, NULL)) continue;
    int64_t oo = base, uo = c.xoff;
    for (int i = 0; i < s->nw; i++) widx[i] = 0;
    for (int64_t e = 0; e < s->welems; e++) {
      for (int i = 0; i < 2 * k; i++) {
        if (args[i] && args[i]->refs > 1) {   /* kept by someone: use a fresh one */
          hli_value_unref(x, args[i]);
          args[i] = NULL;
        }
        if (!args[i] && !(args[i] = hli_value_new(x, &comp->params[i]->shape))) {
          rc = hli_fail_nomem(x, ins, "out of memory");
          goto done;
        }
        int j = i < k ? i : i - k;
        const char *src = i < k ? (const char *)outs[j]->data + oo * (int64_t)es[j]
                                : (const char *)upds[j]->data + uo * (int64_t)es[j];
        memcpy(args[i]->data, src, es[j]);
      }
      HliValue *r = NULL;
      if (hli_call(x, comp, args, &r) != 0) {
        rc = -1;
        goto done;
      }
      for (int i = 0; i < k; i++) {
        const HliValue *ri = r->dtype == HLO_TUPLE ? r->tuple[i] : r;
        memcpy((char *)outs[i]->data + oo * (int64_t)es[i], ri->data, es[i]);
      }
      hli_value_unref(x, r);
      for (int i = s->nw - 1; i >= 0; i--) {   /* next window element, row-major */
        oo += s->wo[i];
        uo += s->wu[i];
        if (++widx[i] < s->wn[i]) break;
        oo -= s->wo[i] * s->wn[i];
        uo -= s->wu[i] * s->wn[i];
        widx[i] = 0;
      }
    }
  }
done:
  for (int i = 0; i < 2 * k; i++) hli_value_unref(x, args[i]);
  return rc;
}

static int scatter_run(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  int k = (ins->nops - 1) / 2;
  HliValue *const *outs = k == 1 ? &out : out->tuple;
  HliValue *upds[HLK_MAX_RANK];
  /* If the executor let a result share the operand's buffer (in place) and
   * that value is also an update or the indices, read a private copy. */
  bool shared = false;
  for (int i = 0; i < k; i++) {
    upds[i] = in[k + 1 + i];
    for (int m = 0; m < k; m++) {
      if (outs[m]->data == upds[i]->data && outs[m]->nbytes) {
        upds[i] = hli_value_new(x, upds[i]->shape);
        if (!upds[i]) {
          for (int q = 0; q < i; q++)
            if (upds[q] != in[k + 1 + q]) hli_value_unref(x, upds[q]);
          return hli_fail_nomem(x, ins, "out of memory");
        }
        memcpy(upds[i]->data, in[k + 1 + i]->data, upds[i]->nbytes);
        break;
      }
    }
    shared |= outs[i]->data == in[k]->data;
  }
  for (int i = 0; i < k; i++) hlk_memcpy_par(x, outs[i]->data, in[i]->data, outs[i]->nbytes);
  ScatterGeom s;
  scatter_geom(&s, ins, k);
  int rc = 0;
  const int64_t *indices = NULL;
  if (s.g.npos == 0 || s.welems == 0) goto done;
  /* s64 indices are read in place unless a result shares their buffer. */
  indices = load_all_indices(x, ins, in[k], !shared);
  if (!indices) {
    rc = -1;
    goto done;
  }
  HliBinop op = k == 1 ? hli_match_binop(to_apply(ins)) : HLI_BINOP_NONE;
  HlkRowFn fn = op != HLI_BINOP_NONE ? hlk_combine_fn(op, outs[0]->dtype) : NULL;
  if (op == HLI_BINOP_SELECT_RHS || fn)
    scatter_typed(x, &s, indices, outs[0]->data, upds[0]->data, hlc_dtype_size(outs[0]->dtype), fn);
  else
    rc = scatter_called(x, ins, &s, indices, outs, upds, k);
  free_indices(x, in[k], indices);
done:
  for (int i = 0; i < k; i++)
    if (upds[i] != in[k + 1 + i]) hli_value_unref(x, upds[i]);
  return rc;
}

void hlk_register_gather_scatter(HliOpTable t) {
  t[HLO_OP_GATHER] = (HliOpEntry){ gather_run, gather_check };
  t[HLO_OP_SCATTER] = (HliOpEntry){ scatter_run, scatter_check };
  t[HLO_OP_DYNAMIC_SLICE] = (HliOpEntry){ hlk_dynamic_slice, hlk_dynamic_slice_check };
  t[HLO_OP_DYNAMIC_UPDATE_SLICE] =
      (HliOpEntry){ hlk_dynamic_update_slice, hlk_dynamic_update_slice_check };
}
