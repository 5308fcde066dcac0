/* conv_geometry.c: a convolution's geometry: the plan-time check of its
 * shapes and attributes against XLA's rules, the index tables of a Geo
 * (which input element each output position and window tap reads), and the
 * sub-geometries conv.c and conv_rows.c run separately: runs of window taps
 * (hlk_conv_geo_sub_dim) and the phases of an input-dilated convolution. */
#include "interp/kernels/conv.h"
#include <stdlib.h>
#include <string.h>

/* ---- Plan-time check ---------------------------------------------------- */

static int64_t dilated(int64_t n, int64_t d) { return n == 0 ? 0 : (n - 1) * d + 1; }

/* XLA's output extent of one windowed dimension. */
static int64_t out_extent(int64_t in, const HloWindowDim *w) {
  int64_t base = w->pad_lo + dilated(in, w->lhs_dilate) + w->pad_hi;
  int64_t win = dilated(w->size, w->rhs_dilate);
  return win > base ? 0 : (base - win) / w->stride + 1;
}

static int distinct_dims(HliExec *x, const HloInstr *ins, const char *what, int rank, int64_t a,
                         int64_t b, const HloI64s *sp) {
  bool seen[HLK_MAX_RANK] = {0};
  int64_t all[HLK_MAX_RANK + 2];
  int n = 0;
  all[n++] = a;
  all[n++] = b;
  for (int32_t i = 0; i < sp->n; i++) all[n++] = sp->v[i];
  if (n != rank)
    return hli_fail(x, ins, "dim_labels give %d %s dimensions but the shape has rank %d", n, what,
                    rank);
  for (int i = 0; i < n; i++) {
    if (all[i] < 0 || all[i] >= rank || seen[all[i]])
      return hli_fail(x, ins, "dim_labels: bad %s dimension numbers", what);
    seen[all[i]] = true;
  }
  return 0;
}

int hlk_conv_check(HliExec *x, const HloInstr *ins) {
  if (ins->nops != 2) return hli_fail(x, ins, "convolution takes 2 operands, got %d", ins->nops);
  for (int32_t i = 0; i < ins->nattrs; i++)
    if (strcmp(ins->attrs[i].name, "sparsity_config") == 0)
      return hli_unsupported(x, ins, "sparse convolution (sparsity_config)");
  if (hlk_check_operand_types(x, ins, "convolution") != 0) return -1;
  const HloShape *ls = &ins->ops[0]->shape, *rs = &ins->ops[1]->shape, *os = &ins->shape;
  if (ins->dim_labels_text && strchr(ins->dim_labels_text, '?'))
    return hli_unsupported(x, ins, "dim_labels with unused ('?') dimensions: %s",
                           ins->dim_labels_text);
  const HloConvDims *cd = &ins->conv;
  int nsp = cd->in_spatial.n;
  if (cd->k_spatial.n != nsp || cd->out_spatial.n != nsp)
    return hli_fail(x, ins, "dim_labels: the three parts have different spatial counts");
  if (nsp + 2 > HLK_MAX_RANK) return hli_unsupported(x, ins, "more than %d spatial dimensions", HLK_MAX_RANK - 2);
  if (distinct_dims(x, ins, "input", ls->rank, cd->in_batch, cd->in_feature, &cd->in_spatial) ||
      distinct_dims(x, ins, "kernel", rs->rank, cd->k_in_feature, cd->k_out_feature, &cd->k_spatial) ||
      distinct_dims(x, ins, "output", os->rank, cd->out_batch, cd->out_feature, &cd->out_spatial))
    return -1;
  int wrank = ins->window.present ? ins->window.rank : 0;
  if (wrank != nsp)
    return hli_fail(x, ins, "window has %d dimensions but the convolution has %d spatial", wrank, nsp);
  int64_t fgc = ins->feature_group_count, bgc = ins->batch_group_count;
  if (fgc < 1 || bgc < 1) return hli_fail(x, ins, "group counts must be positive");
  if (fgc > 1 && bgc > 1)
    return hli_unsupported(x, ins, "feature_group_count and batch_group_count both above 1");
  int64_t nin = ls->dims[cd->in_batch], cin = ls->dims[cd->in_feature];
  int64_t kin = rs->dims[cd->k_in_feature], cout = rs->dims[cd->k_out_feature];
  if (cin % fgc != 0 || kin * fgc != cin)
    return hli_fail(x, ins, "input features %lld must equal kernel input features %lld times "
                    "feature_group_count %lld", (long long)cin, (long long)kin, (long long)fgc);
  if (cout % fgc != 0)
    return hli_fail(x, ins, "kernel output features %lld not divisible by feature_group_count %lld",
                    (long long)cout, (long long)fgc);
  if (nin % bgc != 0 || cout % bgc != 0)
    return hli_fail(x, ins, "batch %lld and output features %lld must be divisible by "
                    "batch_group_count %lld", (long long)nin, (long long)cout, (long long)bgc);
  if (os->dims[cd->out_batch] != nin / bgc || os->dims[cd->out_feature] != cout)
    return hli_fail(x, ins, "result batch/feature sizes do not match the operands");
  for (int i = 0; i < nsp; i++) {
    const HloWindowDim *w = &ins->window.dims[i];
    if (w->stride < 1 || w->lhs_dilate < 1 || w->rhs_dilate < 1 || w->size < 0)
      return hli_fail(x, ins, "window dimension %d: stride and dilations must be positive", i);
    if (rs->dims[cd->k_spatial.v[i]] != w->size)
      return hli_fail(x, ins, "window size %lld does not match kernel spatial size %lld",
                      (long long)w->size, (long long)rs->dims[cd->k_spatial.v[i]]);
    if (os->dims[cd->out_spatial.v[i]] != out_extent(ls->dims[cd->in_spatial.v[i]], w))
      return hli_fail(x, ins, "result spatial dimension %d is %lld, the window gives %lld", i,
                      (long long)os->dims[cd->out_spatial.v[i]],
                      (long long)out_extent(ls->dims[cd->in_spatial.v[i]], w));
  }
  return 0;
}

/* ---- Geometry ----------------------------------------------------------- */

void hlk_conv_geo_free(Geo *g) {
  for (int i = 0; i < g->nsp; i++) free(g->tab[i]);
}

int hlk_conv_geo_init(Geo *g, const HloInstr *ins, const HliValue *l, const HliValue *k,
                      const HliValue *o) {
  const HloConvDims *cd = &ins->conv;
  memset(g, 0, sizeof *g);
  g->nsp = cd->in_spatial.n;
  g->ib = cd->in_batch; g->ifeat = cd->in_feature;
  g->kin = cd->k_in_feature; g->kout = cd->k_out_feature;
  g->ob = cd->out_batch; g->ofeat = cd->out_feature;
  hli_strides(l->dims, l->rank, g->istr);
  hli_strides(k->dims, k->rank, g->kstr);
  hli_strides(o->dims, o->rank, g->ostr);
  g->n_in = l->dims[g->ib];
  g->cin = l->dims[g->ifeat];
  g->cin_g = k->dims[g->kin];
  g->cout = k->dims[g->kout];
  g->bout = o->dims[g->ob];
  g->fgc = ins->feature_group_count;
  g->bgc = ins->batch_group_count;
  g->wpos = 1;
  g->srows = 1;
  for (int i = 0; i < g->nsp; i++) {
    const HloWindowDim *w = &ins->window.dims[i];
    g->isp[i] = cd->in_spatial.v[i];
    g->ksp[i] = cd->k_spatial.v[i];
    g->osp[i] = cd->out_spatial.v[i];
    g->in_sz[i] = l->dims[g->isp[i]];
    g->out_sz[i] = o->dims[g->osp[i]];
    g->win[i] = g->kwin[i] = w->size;
    g->ostep[i] = 1;
    g->rev[i] = w->reversal;
    g->wpos *= g->win[i];
    g->srows *= g->out_sz[i];
    size_t n = (size_t)(g->out_sz[i] * g->win[i]);
    g->tab[i] = malloc((n ? n : 1) * sizeof(int64_t));
    if (!g->tab[i]) { hlk_conv_geo_free(g); return -1; }
    for (int64_t s = 0; s < g->out_sz[i]; s++)
      for (int64_t t = 0; t < g->win[i]; t++) {
        int64_t pos = s * w->stride - w->pad_lo + t * w->rhs_dilate, idx = -1;
        if (pos >= 0 && pos % w->lhs_dilate == 0 && pos / w->lhs_dilate < g->in_sz[i])
          idx = pos / w->lhs_dilate;
        g->tab[i][s * g->win[i] + t] = idx;
      }
  }
  g->binner = g->istr[g->ib] == 1 && g->istr[g->ifeat] != 1 && g->nsp > 0;
  return 0;
}

/* Dim i of p (a copy of g) restricted to g's outputs o0, o0 + ostep, ...
 * (on of them) and window taps w0, w0 + wstep, ... (wn of them): its index
 * table, tap map and output placement, composed with g's; wpos and srows
 * follow. The map and table go to mem (wn + on * wn words), which is
 * returned past them. */
int64_t *hlk_conv_geo_sub_dim(Geo *p, const Geo *g, int i, int64_t o0, int64_t ostep,
                              int64_t on, int64_t w0, int64_t wstep, int64_t wn, int64_t *mem) {
  int64_t *map = mem, *tab = mem + wn;
  for (int64_t t = 0; t < wn; t++) map[t] = w0 + wstep * t;
  for (int64_t s = 0; s < on; s++)
    for (int64_t t = 0; t < wn; t++)
      tab[s * wn + t] = g->tab[i][(o0 + ostep * s) * g->win[i] + map[t]];
  if (g->wmap[i])
    for (int64_t t = 0; t < wn; t++) map[t] = g->wmap[i][map[t]];
  p->wpos = p->wpos / (p->win[i] ? p->win[i] : 1) * wn;
  p->srows = p->srows / (p->out_sz[i] ? p->out_sz[i] : 1) * on;
  p->ophase[i] = g->ophase[i] + g->ostep[i] * o0;
  p->ostep[i] = g->ostep[i] * ostep;
  p->out_sz[i] = on;
  p->win[i] = wn;
  p->wmap[i] = map;
  p->tab[i] = tab;
  return tab + on * wn;
}

/* Input (lhs) dilation d along a dim, with stride 1 and no window
 * dilation there (a transposed convolution, the input gradient of a strided
 * one): output s reads tap w only when s - pad_lo + w is a multiple of d,
 * so the outputs of one residue class of s mod d (a phase) all read the
 * same taps, every d-th from the first that fits. Each phase is a
 * convolution of its own over the undilated input with those taps only:
 * the GEMM no longer multiplies the holes (3/4 of the products for d = 2 in
 * two dims). The phases' outputs interleave, so they go through scatter
 * (conv_rows.c writes them in place instead, ostep apart).
 * Each output sums the same products in the same order, without the
 * holes' zeros; the GEMM's blocks of the shared dimension fall elsewhere
 * in a shorter sum, though, so a result may differ from the unphased
 * lowering's in the last place (both are one rounding per step). */
bool hlk_conv_phased(const HloInstr *ins, const Geo *g) {
  bool any = false;
  for (int i = 0; i < g->nsp; i++) {
    const HloWindowDim *w = &ins->window.dims[i];
    if (w->lhs_dilate == 1) continue;
    if (w->stride != 1 || w->rhs_dilate != 1) return false;
    any = true;
  }
  return any;
}

int hlk_conv_phases(HliExec *x, const HloInstr *ins, const Geo *g,
                    int (*fn)(void *ctx, const Geo *p), void *ctx) {
  int n = g->nsp, rc = 0;
  int64_t d[HLK_MAX_RANK], ph[HLK_MAX_RANK] = {0}, nph = 1;
  for (int i = 0; i < n; i++) {
    d[i] = ins->window.dims[i].lhs_dilate;
    nph *= d[i];
  }
  size_t words = 1;   /* per dim at most: a tap map, and a table as the original's */
  for (int i = 0; i < n; i++) words += (size_t)(g->win[i] + g->out_sz[i] * g->win[i]);
  Geo *p = malloc(sizeof *p);
  int64_t *mem = p ? malloc(sizeof(int64_t) * words) : NULL;
  if (!p || !mem) {
    free(p);
    return hli_fail_nomem(x, ins, "out of memory planning the convolution");
  }
  for (int64_t k = 0; k < nph && rc == 0; k++) {
    *p = *g;
    int64_t *at = mem;
    for (int i = 0; i < n; i++) {
      int64_t pad = ins->window.dims[i].pad_lo;
      int64_t w0 = ((pad - ph[i]) % d[i] + d[i]) % d[i];   /* first tap this phase reads */
      int64_t on = g->out_sz[i] > ph[i] ? (g->out_sz[i] - ph[i] + d[i] - 1) / d[i] : 0;
      int64_t wn = g->win[i] > w0 ? (g->win[i] - w0 + d[i] - 1) / d[i] : 0;
      at = hlk_conv_geo_sub_dim(p, g, i, ph[i], d[i], on, w0, d[i], wn, at);
    }
    if (p->srows > 0) rc = fn(ctx, p);
    for (int i = n - 1; i >= 0; i--) {   /* next phase */
      if (++ph[i] < d[i]) break;
      ph[i] = 0;
    }
  }
  free(mem);
  free(p);
  return rc;
}
