/* conv.h: what the convolution kernel's files share (conv.c lowers any
 * convolution; conv_rows.c runs the common f32 forms as per-tap products
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

/* conv_rows.c: an f32 convolution whose input features are contiguous and
 * whose output is (batch, spatial..., feature) row-major, with no input
 * dilation and one group, computed without patches: for each window tap,
 * the output positions along the innermost spatial dimension read input
 * rows evenly spaced (stride * the input's spacing), so the micro-kernel
 * reads them in place (HlkUkrF32Rows) against that tap's slice of the
 * kernel. Each output sums its taps in window order, each tap's input
 * features in order (one fused multiply-add chain from zero, then added to
 * the sum); taps that fall in padding add nothing, as in XLA's evaluator.
 * The order depends on nothing else (threads split the output rows).
 * Whether it applies to g (of instruction ins), and the product. */
bool hlk_conv_rows_applies(const Geo *g, const HloInstr *ins);
int hlk_conv_rows_f32(HliExec *x, const HloInstr *ins, const Geo *g, const float *L,
                      const float *K, float *O);
#endif
