/* conv_rows.c: f32 convolutions without patches (conv.h says which and in
 * what order they sum).
 *
 * The output is cut into lines: one batch element and one position of
 * every spatial dimension but the innermost, all positions along that one.
 * For window tap q, output position ox of a line reads input position
 * ox * stride - pad + t * dilation along the innermost dimension, so the
 * input rows a run of consecutive outputs reads are evenly spaced (lda =
 * stride * the input's spacing there) with the features contiguous: the
 * A operand of a row-major product, read in place by the micro-kernel
 * against the kernel's slice for the tap (packed once, like any B). The
 * outputs where the tap falls in padding form a prefix and a suffix of the
 * line and are left out. A line is zeroed, then, column sliver by column
 * sliver (nr output features), every tap and group adds its products into
 * its columns, in window order; a short last tile of the line runs the
 * micro-kernel for just its rows.
 *
 * Other layouts (features not innermost in the input, as NCHW; a result
 * not (b, s..., f)) go through copies in that order: a transpose of the
 * input before, of the result after. Each element moves once, where
 * patches would copy the input once per tap.
 */
#include "interp/kernels/conv.h"
#include <stdlib.h>
#include <string.h>

/* The result is (b, s..., f) row-major. */
static bool out_native(const Geo *g) {
  if (g->ob != 0 || g->ofeat != g->nsp + 1) return false;
  for (int i = 0; i < g->nsp; i++)
    if (g->osp[i] != i + 1) return false;
  return true;
}

bool hlk_conv_rows_applies(const Geo *g, const HloInstr *ins) {
  int n = g->nsp;
  if (n < 1 || g->bgc != 1) return false;
  /* Few features per tap would leave the micro-kernel mostly loading and
   * storing its tile: the patch lowering packs those better. */
  if (g->cin_g < 16 || g->cout / g->fgc < 16) return false;
  bool phased = hlk_conv_phased(ins, g);
  for (int i = 0; i < n; i++)
    if ((ins->window.dims[i].lhs_dilate != 1 && !phased) || g->wmap[i] || g->ostep[i] != 1)
      return false;
  /* Every phase's outputs along the last dim (at least this many) fill a tile. */
  return g->out_sz[n - 1] / ins->window.dims[n - 1].lhs_dilate >= hlk_gemm_ukr()->mr_f32;
}

typedef struct RowsJob {
  const Geo *g;
  const float *L, *Bp;       /* input; the kernel packed per group, tap and column sliver */
  float *O;
  const HlkUkrTable *u;
  int64_t mr, nr, nsl;       /* register tile; column slivers per group */
  int64_t cg;                /* output features per group */
  int64_t ow, wl, lda, xstr; /* outputs per line; taps along the innermost dim; row spacing */
  int64_t ldc;               /* spacing of a line's outputs in O (a phase's are ostep apart) */
  int64_t outer;             /* lines per batch element */
  const int64_t *lo, *hi;    /* per innermost tap: the outputs it reads input for */
  _Atomic bool oom;
} RowsJob;

/* Outputs ox0 .. ox0+m of tap q's products added into the line at c
 * (column sliver js of a group): in place when the sliver's columns are
 * whole (a short last tile by the kernel for its m rows: 56 outputs are 4
 * tiles of 12 and one of 8, computed as 8 rather than 12 rows), else
 * through a scratch tile (rows from an in-range start, or copied when the
 * tap's range is shorter than a tile). Either way each element gets the
 * same chain and the same one add into c. */
static void tile_add(const RowsJob *j, const float *row0, int64_t ox0, int64_t m, int64_t first,
                     int64_t js, const float *bp, float *c, float *abuf) {
  const Geo *g = j->g;
  int64_t mr = j->mr, nr = j->nr, cin = g->cin_g, ldc = j->ldc;
  int64_t ncols = j->cg - js * nr < nr ? j->cg - js * nr : nr;
  if (ncols == nr) {
    const float *a = row0 + (ox0 - first) * j->lda;
    if (m == mr) j->u->f32_rows(cin, a, j->lda, bp, c, ldc, 1);
    else j->u->f32_rows_edge[m](cin, a, j->lda, bp, c, ldc, 1);
    return;
  }
  float tile[32 * 64];
  const float *ap;
  int64_t lda, skip;
  if (m == mr || ox0 + m - first >= mr) {   /* mr whole rows end at the last one wanted */
    int64_t start = ox0 + m - mr;
    ap = row0 + (start - first) * j->lda;
    lda = j->lda;
    skip = ox0 - start;
  } else {
    for (int64_t i = 0; i < mr; i++) {
      if (i < m) memcpy(abuf + i * cin, row0 + (ox0 + i - first) * j->lda, (size_t)cin * sizeof(float));
      else memset(abuf + i * cin, 0, (size_t)cin * sizeof(float));
    }
    ap = abuf;
    lda = cin;
    skip = 0;
  }
  j->u->f32_rows(cin, ap, lda, bp, tile, nr, 0);
  for (int64_t i = 0; i < m; i++)
    for (int64_t jj = 0; jj < ncols; jj++) c[i * ldc + jj] += tile[(skip + i) * nr + jj];
}

static void rows_lines(void *arg, int64_t lo, int64_t hi) {
  RowsJob *j = arg;
  const Geo *g = j->g;
  int n = g->nsp;
  int64_t cin = g->cin_g, cout = g->cout, last = n - 1;
  float *abuf = malloc((size_t)(j->mr * cin) * sizeof(float));
  if (!abuf) { j->oom = true; return; }
  int64_t s[HLK_MAX_RANK], w[HLK_MAX_RANK];
  for (int64_t line = lo; line < hi; line++) {
    int64_t b = line / j->outer, ooff = b * g->ostr[g->ob] + g->ophase[last] * g->ostr[g->osp[last]];
    hlk_split_index(line % j->outer, g->out_sz, n - 1, s);
    for (int i = 0; i < last; i++) ooff += (g->ophase[i] + g->ostep[i] * s[i]) * g->ostr[g->osp[i]];
    float *oline = j->O + ooff;
    if (j->ldc == cout) memset(oline, 0, (size_t)(j->ow * cout) * sizeof(float));
    else for (int64_t ox = 0; ox < j->ow; ox++) memset(oline + ox * j->ldc, 0, (size_t)cout * sizeof(float));
    /* Column slivers outermost: a tap then needs one sliver of its kernel
     * slice (cin x nr) and the sliver's half of the line in L1 beside the
     * input rows, where all slivers at once overflowed it (64 -> 64
     * features: 16 + 14 + 14 KiB). Each output still sums its taps in
     * window order. */
    for (int64_t js = 0; js < j->nsl; js++) {
      for (int64_t q = 0; q < g->wpos; q++) {
        hlk_split_index(q, g->win, n, w);
        int64_t in;
        bool pad = !hlk_conv_tap_input(g, b, s, w, last, &in);
        int64_t t = w[last], ox_lo = j->lo[t], ox_hi = j->hi[t];
        if (pad || ox_lo >= ox_hi) continue;
        /* The input row of output ox_lo for this tap; the others follow lda apart. */
        const float *row0 = j->L + in + g->tab[last][ox_lo * g->win[last] + t] * j->xstr;
        for (int64_t grp = 0; grp < g->fgc; grp++) {
          const float *bq = j->Bp + (grp * g->wpos + q) * j->nsl * cin * j->nr;
          const float *rg = row0 + grp * cin;
          float *og = oline + grp * j->cg;
          for (int64_t ox0 = ox_lo; ox0 < ox_hi; ox0 += j->mr) {
            int64_t m = ox_hi - ox0 < j->mr ? ox_hi - ox0 : j->mr;
            tile_add(j, rg, ox0, m, ox_lo, js, bq + js * cin * j->nr,
                     og + ox0 * j->ldc + js * j->nr, abuf);
          }
        }
      }
    }
  }
  free(abuf);
}

/* ---- Transposes to and from (b, s..., f) -------------------------------- */

typedef struct PermJob {
  const float *src;
  float *dst;
  int rank;
  int64_t odims[HLK_MAX_RANK], sstr[HLK_MAX_RANK];   /* dst extents; src stride of each */
} PermJob;

/* Destination rows [lo, hi) (all dims but the innermost), each gathered
 * from the source with its stride. */
static void perm_rows(void *arg, int64_t lo, int64_t hi) {
  const PermJob *p = arg;
  int r = p->rank;
  int64_t inner = p->odims[r - 1], is = p->sstr[r - 1], idx[HLK_MAX_RANK], off = 0;
  hlk_split_index(lo, p->odims, r - 1, idx);
  for (int i = 0; i < r - 1; i++) off += idx[i] * p->sstr[i];
  for (int64_t row = lo; row < hi; row++) {
    const float *s = p->src + off;
    float *d = p->dst + row * inner;
    for (int64_t k = 0; k < inner; k++) d[k] = s[k * is];
    for (int i = r - 2; i >= 0; i--) {   /* odometer over the outer dims */
      off += p->sstr[i];
      if (++idx[i] < p->odims[i]) break;
      off -= p->sstr[i] * p->odims[i];
      idx[i] = 0;
    }
  }
}

/* dst = src (extents dims, row-major) with dst dim i = src dim perm[i]. */
static void permute(HliExec *x, const float *src, const int64_t *dims, int rank, const int *perm,
                    float *dst) {
  PermJob p = {.src = src, .dst = dst, .rank = rank};
  int64_t str[HLK_MAX_RANK], rows = 1;
  hli_strides(dims, rank, str);
  for (int i = 0; i < rank; i++) {
    p.odims[i] = dims[perm[i]];
    p.sstr[i] = str[perm[i]];
    if (i < rank - 1) rows *= p.odims[i];
  }
  hli_parallel_for(x, rows, 1 + 4096 / (p.odims[rank - 1] + 1), perm_rows, &p);
}

static int rows_native(HliExec *x, const HloInstr *ins, const Geo *g, const float *L,
                       const float *K, float *O) {
  const HlkUkrTable *u = hlk_gemm_ukr();
  int n = g->nsp, last = n - 1;
  int64_t mr = u->mr_f32, nr = u->nr_f32, cin = g->cin_g, cout = g->cout, cg = cout / g->fgc;
  if (mr * nr > 32 * 64) return hli_fail(x, ins, "micro-kernel tile too large");
  int64_t nsl = (cg + nr - 1) / nr, wl = g->win[last], ow = g->out_sz[last];
  size_t bsize = (size_t)(g->fgc * g->wpos * nsl * cin * nr) * sizeof(float);
  float *Bp = hli_scratch_alloc(x, ins, bsize ? bsize : 1);
  int64_t *range = Bp ? hli_scratch_alloc(x, ins, (size_t)(2 * wl + 1) * sizeof(int64_t)) : NULL;
  if (!Bp || !range) {
    hli_scratch_free(x, Bp);
    return -1;   /* hli_scratch_alloc said why */
  }
  /* The kernel: per group, tap q and column sliver js, cin steps of nr
   * values (zero past the group's columns). */
  int64_t w[HLK_MAX_RANK];
  for (int64_t grp = 0; grp < g->fgc; grp++)
    for (int64_t q = 0; q < g->wpos; q++) {
      hlk_split_index(q, g->win, n, w);
      int64_t koff = 0;
      for (int i = 0; i < n; i++) koff += hlk_conv_tap_offset(g, i, w[i]);
      for (int64_t js = 0; js < nsl; js++) {
        float *d = Bp + ((grp * g->wpos + q) * nsl + js) * cin * nr;
        for (int64_t p = 0; p < cin; p++)
          for (int64_t jj = 0; jj < nr; jj++) {
            int64_t o = js * nr + jj;
            d[p * nr + jj] =
                o < cg ? K[koff + p * g->kstr[g->kin] + (grp * cg + o) * g->kstr[g->kout]] : 0.0f;
          }
      }
    }
  /* Per innermost tap, the outputs whose input is in range (a contiguous
   * run: no input dilation). */
  int64_t *lo = range, *hi = range + wl;
  for (int64_t t = 0; t < wl; t++) {
    lo[t] = ow;
    hi[t] = ow;
    for (int64_t ox = 0; ox < ow; ox++)
      if (g->tab[last][ox * wl + t] >= 0) { lo[t] = ox; break; }
    for (int64_t ox = lo[t]; ox < ow && g->tab[last][ox * wl + t] >= 0; ox++) hi[t] = ox + 1;
  }
  int64_t stride = ins->window.dims[last].stride, xstr = g->istr[g->isp[last]];
  RowsJob j = {.g = g, .L = L, .Bp = Bp, .O = O, .u = u, .mr = mr, .nr = nr, .nsl = nsl, .cg = cg,
               .ow = ow, .wl = wl, .lda = stride * xstr, .xstr = xstr,
               .ldc = g->ostep[last] * g->ostr[g->osp[last]],
               .outer = g->srows / ow, .lo = lo, .hi = hi};
  int64_t lines = g->bout * j.outer;
  int64_t flops_per_line = 2 * ow * cout * g->wpos * cin;
  /* Each worker's copied rows, counted against --max-memory. */
  size_t work = (size_t)hli_num_threads(x) * (size_t)(mr * cin) * sizeof(float);
  int rc = hli_scratch_reserve(x, ins, work);
  if (rc == 0) {
    hli_parallel_for(x, lines, 1 + ((int64_t)1 << 21) / (flops_per_line + 1), rows_lines, &j);
    hli_scratch_unreserve(x, work);
    if (j.oom) rc = hli_fail_nomem(x, ins, "out of memory");
  }
  hli_scratch_free(x, range);
  hli_scratch_free(x, Bp);
  return rc;
}

int hlk_conv_canonical(HliExec *x, const HloInstr *ins, const Geo *g, const float *L,
                       const float *K, float *O, HlkConvF32 run) {
  int n = g->nsp, rank = n + 2;
  bool lin = g->istr[g->ifeat] == 1, lout = out_native(g);
  if (lin && lout) return run(x, ins, g, L, K, O);
  /* g over an input and a result in (b, s..., f) order. */
  Geo t = *g;
  int64_t idims[HLK_MAX_RANK], odims[HLK_MAX_RANK];
  int iperm[HLK_MAX_RANK], operm[HLK_MAX_RANK];
  idims[0] = g->n_in, odims[0] = g->bout;
  iperm[0] = (int)g->ib;
  operm[g->ob] = 0;
  for (int i = 0; i < n; i++) {
    idims[i + 1] = g->in_sz[i], odims[i + 1] = g->out_sz[i];
    iperm[i + 1] = (int)g->isp[i];
    operm[g->osp[i]] = i + 1;
  }
  idims[n + 1] = g->cin, odims[n + 1] = g->cout;
  iperm[n + 1] = (int)g->ifeat;
  operm[g->ofeat] = n + 1;
  if (!lin) {
    t.ib = 0, t.ifeat = n + 1;
    for (int i = 0; i < n; i++) t.isp[i] = i + 1;
    hli_strides(idims, rank, t.istr);
  }
  if (!lout) {
    t.ob = 0, t.ofeat = n + 1;
    for (int i = 0; i < n; i++) t.osp[i] = i + 1;
    hli_strides(odims, rank, t.ostr);
  }
  t.binner = false;
  int64_t in_n = g->n_in * g->cin, out_n = g->bout * g->srows * g->cout;
  for (int i = 0; i < n; i++) in_n *= g->in_sz[i];
  float *Lt = lin ? NULL : hli_scratch_alloc(x, ins, (size_t)(in_n ? in_n : 1) * sizeof(float));
  float *Ot = lout || (!lin && !Lt) ? NULL
            : hli_scratch_alloc(x, ins, (size_t)(out_n ? out_n : 1) * sizeof(float));
  int rc = -1;   /* hli_scratch_alloc says why */
  if ((lin || Lt) && (lout || Ot)) {
    int64_t src_dims[HLK_MAX_RANK];
    if (!lin) {
      /* The source's extents in its own order: the inverse of iperm. */
      for (int i = 0; i < rank; i++) src_dims[iperm[i]] = idims[i];
      permute(x, L, src_dims, rank, iperm, Lt);
    }
    rc = run(x, ins, &t, lin ? L : Lt, K, lout ? O : Ot);
    if (rc == 0 && !lout) permute(x, Ot, odims, rank, operm, O);
  }
  hli_scratch_free(x, Ot);
  hli_scratch_free(x, Lt);
  return rc;
}

typedef struct RowsPhase {
  HliExec *x;
  const HloInstr *ins;
  const float *L, *K;
  float *O;
} RowsPhase;

static int rows_phase(void *ctx, const Geo *p) {
  RowsPhase *c = ctx;
  return rows_native(c->x, c->ins, p, c->L, c->K, c->O);
}

/* g in (b, s..., f) order, phase by phase when the input is dilated. */
static int rows_run(HliExec *x, const HloInstr *ins, const Geo *g, const float *L,
                    const float *K, float *O) {
  if (!hlk_conv_phased(ins, g)) return rows_native(x, ins, g, L, K, O);
  RowsPhase c = {x, ins, L, K, O};
  return hlk_conv_phases(x, ins, g, rows_phase, &c);
}

int hlk_conv_rows_f32(HliExec *x, const HloInstr *ins, const Geo *g, const float *L,
                      const float *K, float *O) {
  return hlk_conv_canonical(x, ins, g, L, K, O, rows_run);
}
