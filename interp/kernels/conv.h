/* conv.h: what the convolution kernel's files share (conv_geometry.c checks
 * a convolution and builds its geometry; conv.c lowers any convolution;
 * conv_rows.c and conv_dw.c run the common f32 forms as per-tap products
 * read in place): the geometry of one convolution. */
#ifndef HLORUN_INTERP_KERNELS_CONV_H
#define HLORUN_INTERP_KERNELS_CONV_H
#include <stdbool.h>
#include <stdint.h>
#include "interp/kernels/gemm.h"

/* Geometry of one convolution, from the operands' shapes and attributes. */
typedef struct Geo {
  int nsp;                                   /* spatial dims */
  int64_t ib, ifeat, isp[HLK_MAX_RANK];      /* lhs dims: batch, feature, spatial */
  int64_t kin, kout, ksp[HLK_MAX_RANK];      /* rhs dims */
  int64_t ob, ofeat, osp[HLK_MAX_RANK];      /* result dims */
  int64_t istr[HLK_MAX_RANK], kstr[HLK_MAX_RANK], ostr[HLK_MAX_RANK];   /* element strides */
  int64_t in_sz[HLK_MAX_RANK], out_sz[HLK_MAX_RANK], win[HLK_MAX_RANK]; /* spatial extents */
  bool rev[HLK_MAX_RANK];
  int64_t n_in, cin, cin_g, cout, bout;      /* batch/feature sizes */
  int64_t fgc, bgc;
  int64_t wpos, srows;                       /* window positions; output positions per batch */
  bool binner;                               /* GEMM rows ordered (s..., b): see row_coords */
  int64_t *tab[HLK_MAX_RANK];                /* per spatial dim: [s * win + w] -> input
                                                index, or -1 (padding / dilation hole) */
  /* A phase of an input-dilated convolution (lower_phases) is a Geo of its
   * own: its window tap t is the kernel's tap wmap[i][t] (NULL: t itself)
   * of a window kwin[i] long, and its output index s is the result's
   * ophase[i] + ostep[i] * s. */
  int64_t kwin[HLK_MAX_RANK], ophase[HLK_MAX_RANK], ostep[HLK_MAX_RANK];
  const int64_t *wmap[HLK_MAX_RANK];
} Geo;

/* The kernel's element offset (spatial part) of window tap w along dim i. */
static inline int64_t hlk_conv_tap_offset(const Geo *g, int i, int64_t w) {
  int64_t t = g->wmap[i] ? g->wmap[i][w] : w;
  return (g->rev[i] ? g->kwin[i] - 1 - t : t) * g->kstr[g->ksp[i]];
}

/* conv_geometry.c: g from the instruction and its operand and result
 * values (index tables allocated: -1 out of memory); freed with
 * hlk_conv_geo_free. */
int hlk_conv_geo_init(Geo *g, const HloInstr *ins, const HliValue *l, const HliValue *k,
                      const HliValue *o);
void hlk_conv_geo_free(Geo *g);
/* Dim i of p (a copy of g) restricted to g's outputs o0, o0 + ostep, ...
 * (on of them) and window taps w0, w0 + wstep, ... (wn of them); its tables
 * go to mem (wn + on * wn words), which is returned past them. */
int64_t *hlk_conv_geo_sub_dim(Geo *p, const Geo *g, int i, int64_t o0, int64_t ostep,
                              int64_t on, int64_t w0, int64_t wstep, int64_t wn, int64_t *mem);

/* conv_rows.c: an f32 convolution with one batch group, at least 16 input
 * and 16 output features per feature group and outputs along the innermost
 * spatial dimension at least a micro-kernel tile tall (per phase when the
 * input is dilated: then phase by phase, hlk_conv_phases), computed without
 * patches: for each window tap, the output
 * positions along the innermost spatial dimension read input rows evenly
 * spaced (stride * the input's spacing), so the micro-kernel reads them in
 * place (HlkUkrF32Rows) against that tap's slice of the group's kernel.
 * Inputs whose features are not contiguous (NCHW) are transposed to
 * (b, s..., f) first, and results not (b, s..., f) come back through a
 * transpose: copies that move each element once. bf16/f16 operands arrive
 * converted to f32 once (exactly); the result is rounded once from the f32
 * sums.
 *
 * Summation order, per output element: acc = +0; for each window tap in
 * window order (row-major over the spatial dims), skipping taps that fall
 * in padding or input-dilation holes (as XLA's evaluator does): t = the micro-kernel's chain over
 * the group's input features in order starting from +0 (t = t + x * k, one
 * fused multiply-add per step where the micro-kernel fuses: AVX2/AVX-512;
 * a multiply then an add in the scalar one), then acc = acc + t. Nothing
 * else (threads split whole output lines) moves it.
 * Whether it applies to g (of instruction ins), and the product. */
bool hlk_conv_rows_applies(const Geo *g, const HloInstr *ins);
int hlk_conv_rows_f32(HliExec *x, const HloInstr *ins, const Geo *g, const float *L,
                      const float *K, float *O);

/* conv_geometry.c: an input-dilated convolution with stride 1 and no window
 * dilation along its dilated dims (hlk_conv_phased) splits into phases, one
 * per residue class of the outputs modulo the dilation, each a convolution
 * of the undilated input with only the taps that meet real inputs (a Geo
 * with wmap/ophase/ostep); hlk_conv_phases calls fn on each (nonempty) one
 * and stops at the first nonzero return. */
bool hlk_conv_phased(const HloInstr *ins, const Geo *g);
int hlk_conv_phases(HliExec *x, const HloInstr *ins, const Geo *g,
                    int (*fn)(void *ctx, const Geo *p), void *ctx);

/* run(x, ins, g', L', K, O') on g's input and result in (b, s..., f)
 * order: L and O themselves when they are, else transposed copies (the
 * input before, the result after). */
typedef int (*HlkConvF32)(HliExec *x, const HloInstr *ins, const Geo *g, const float *L,
                          const float *K, float *O);
int hlk_conv_canonical(HliExec *x, const HloInstr *ins, const Geo *g, const float *L,
                       const float *K, float *O, HlkConvF32 run);

/* conv_dw.c: a depthwise f32 convolution (one input feature per group, any
 * channel multiplier m: output feature o reads input feature o / m), any
 * layout (through hlk_conv_canonical when the features are not innermost).
 * Summation order, per output element, the evaluator's: acc =
 * +0; for each window tap in window order, skipping padding and dilation
 * holes, acc = acc + x * k (a multiply, then an add: two roundings). bf16/
 * f16 operands arrive converted to f32; the result is rounded once. */
bool hlk_conv_dw_applies(const Geo *g);
int hlk_conv_dw_f32(HliExec *x, const HloInstr *ins, const Geo *g, const float *L,
                    const float *K, float *O);
/* Split a linear index over extents sz[0..n) (row-major) into idx. */
static inline void hlk_split_index(int64_t lin, const int64_t *sz, int n, int64_t *idx) {
  for (int i = n - 1; i >= 0; i--) {
    idx[i] = sz[i] ? lin % sz[i] : 0;
    lin = sz[i] ? lin / sz[i] : 0;
  }
}

/* Element offset in the input of window tap w (per spatial dim) of the
 * output line at spatial index s, batch b, over the spatial dims before
 * `last`; false when the tap falls on padding or a dilation hole in one of
 * them. Shared by the row kernels (conv_rows.c, conv_dw.c). */
static inline bool hlk_conv_tap_input(const Geo *g, int64_t b, const int64_t *s,
                                      const int64_t *w, int last, int64_t *in) {
  int64_t off = b * g->istr[g->ib];
  for (int i = 0; i < last; i++) {
    int64_t p = g->tab[i][s[i] * g->win[i] + w[i]];
    if (p < 0) return false;
    off += p * g->istr[g->isp[i]];
  }
  *in = off;
  return true;
}

/* Batch b and spatial index s of GEMM row `row`. Rows are (b, s...) with
 * the spatial position fastest, except when the input's batch dimension is
 * its innermost and its features are not (the f01b layout XLA gives weight
 * gradients): then (s..., b), so that a sliver of consecutive rows reads
 * consecutive input elements. */
static inline void hlk_conv_row_coords(const Geo *g, int64_t row, int64_t *b, int64_t *s) {
  int64_t sp;
  if (g->binner) {
    *b = g->bout ? row % g->bout : 0;
    sp = g->bout ? row / g->bout : 0;
  } else {
    *b = g->srows ? row / g->srows : 0;
    sp = g->srows ? row % g->srows : 0;
  }
  hlk_split_index(sp, g->out_sz, g->nsp, s);
}

/* Offset of the input element for output position s and window position w
 * (spatial part only), or -1 if it falls in padding or a dilation hole; also
 * the kernel's spatial offset (after reversal). */
static inline int64_t hlk_conv_window_offsets(const Geo *g, const int64_t *s, const int64_t *w,
                                              int64_t *koff) {
  int64_t in = 0, kk = 0;
  for (int i = 0; i < g->nsp; i++) {
    int64_t p = g->tab[i][s[i] * g->win[i] + w[i]];
    if (p < 0) return -1;
    in += p * g->istr[g->isp[i]];
    kk += hlk_conv_tap_offset(g, i, w[i]);
  }
  *koff = kk;
  return in;
}

#endif
