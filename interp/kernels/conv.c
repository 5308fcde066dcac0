/* conv.c: the convolution kernel, with XLA's evaluator semantics: any
 * dim_labels order, 0-D to N-D spatial windows with stride, low/high padding
 * (negative too), base (lhs) and window (rhs) dilation, window reversal,
 * feature_group_count and batch_group_count, and a result type that may
 * differ from the operands' (operands are converted to it first).
 *
 * Output element (b, o, s) sums, over window positions w and the group's
 * input features iz, lhs[b_in][f_in][pos(s, w)] * rhs[w'][iz][o], where
 *   fg = o / (Cout / feature_group_count)      f_in = fg * Cin_g + iz
 *   bg = o / (Cout / batch_group_count)        b_in = b + bg * (N_in / bgc)
 *   pos = s * stride - pad_lo + w * rhs_dilate, which must be a multiple of
 *         lhs_dilate and, divided by it, inside the input; w' = w, or
 *         size-1-w where the window is reversed.
 * Float and integer compute types lower each group onto the GEMM: rows are
 * output positions (b, s...), the shared dimension is (w, iz), columns are
 * the group's output features; the patch matrix is built in chunks of rows
 * (im2col). Integers (and pred) run in 32-bit lanes when the result has at
 * most 32 bits, else 64-bit (as dot: hlk_int_lanes); padding and dilation
 * holes become zero products, exact for integers. Depthwise f32
 * convolutions (any layout) run conv_dw.c's line kernel; f32/f64
 * ones with small feature groups skip the GEMM for a direct vector loop
 * over the output features; f32 ones with 16+ features per group on both
 * sides skip the patches instead (conv_rows.c, any layout). bf16/f16
 * operands reach those f32 paths converted once. Complex convolutions, and
 * float ones whose kernel holds an infinity or NaN, run the exact reference
 * loop.
 */
#include "interp/kernels/conv.h"
#include "interp/kernels/gemm.h"
#include "interp/kernels/vectorize.h"
#include <complex.h>
#include <stdlib.h>
#include <string.h>

/* ---- Reference loop ----------------------------------------------------- */

/* One output element at a time, exactly as the evaluator sums: window
 * positions outer, the group's input features inner. L, K are the operands
 * converted to the compute type (same shapes); O is the result in the
 * compute type. */
#define DEFINE_REF(SUF, T)                                                                  \
  static void ref_##SUF(const Geo *g, const T *L, const T *K, T *O) {                       \
    int64_t s[HLK_MAX_RANK], w[HLK_MAX_RANK];                                               \
    int64_t cout_fg = g->cout / g->fgc, cout_bg = g->cout / g->bgc;                         \
    for (int64_t b = 0; b < g->bout; b++)                                                   \
      for (int64_t o = 0; o < g->cout; o++) {                                               \
        int64_t fg = o / cout_fg, bg = g->bgc > 1 ? o / cout_bg : 0;                        \
        int64_t b_in = b + bg * (g->n_in / g->bgc);                                         \
        int64_t lbase = b_in * g->istr[g->ib] + fg * g->cin_g * g->istr[g->ifeat];          \
        int64_t kbase = o * g->kstr[g->kout];                                               \
        for (int64_t r = 0; r < g->srows; r++) {                                            \
          hlk_split_index(r, g->out_sz, g->nsp, s);                                         \
          T acc = 0;                                                                        \
          for (int64_t q = 0; q < g->wpos; q++) {                                           \
            hlk_split_index(q, g->win, g->nsp, w);                                          \
            int64_t koff, loff = hlk_conv_window_offsets(g, s, w, &koff);                   \
            if (loff < 0) continue;                                                         \
            const T *lp = L + lbase + loff, *kp = K + kbase + koff;                         \
            for (int64_t iz = 0; iz < g->cin_g; iz++)                                       \
              acc = acc + lp[iz * g->istr[g->ifeat]] * kp[iz * g->kstr[g->kin]];            \
          }                                                                                 \
          int64_t off = b * g->ostr[g->ob] + o * g->ostr[g->ofeat];                         \
          for (int i = 0; i < g->nsp; i++) off += s[i] * g->ostr[g->osp[i]];                \
          O[off] = acc;                                                                     \
        }                                                                                   \
      }                                                                                     \
  }
DEFINE_REF(f32, float)
DEFINE_REF(f64, double)
DEFINE_REF(c64, float complex)
DEFINE_REF(c128, double complex)
DEFINE_REF(u64, uint64_t)

/* ---- GEMM lowering (f32 / f64) ------------------------------------------ */

/* Work shared by the chunks of one group. */
typedef struct Lower {
  const Geo *g;
  const void *L;          /* lhs in the compute type */
  void *P;                /* patch chunk, packed (see im2col) */
  int64_t row0, rows;     /* first output row of the chunk, rows in it */
  int64_t mr;             /* rows per packed sliver */
  int64_t lfeat0, lbatch0;/* group's first input feature and batch */
  size_t es;
} Lower;

enum { SLIVER_MAX = 32, ZERO_ROW = 4096 };

/* One sliver (mr output rows) of the patch matrix of a 4-byte type when the
 * input features are contiguous (stride 1, as in NHWC) and KP = 1: for each
 * window position the rows' feature vectors are interleaved into the panel;
 * rows reading padding, and rows past the chunk, read a row of zeros. */
static void sliver32(const Lower *lw, int64_t sl) {
  static const uint32_t zeros[ZERO_ROW];
  const Geo *g = lw->g;
  int64_t mr = lw->mr, cin = g->cin_g, kdim = g->wpos * cin;
  uint32_t *base = (uint32_t *)lw->P + sl * kdim * mr;
  /* Per lane and spatial dim, the row of the index table its output
   * position reads (window position -> input index, -1 for padding). */
  const int64_t *tr[SLIVER_MAX][HLK_MAX_RANK];
  int64_t w[HLK_MAX_RANK] = {0};
  const uint32_t *lb[SLIVER_MAX], *src[SLIVER_MAX];
  for (int64_t lane = 0; lane < mr; lane++) {
    int64_t r = sl * mr + lane, b, s[HLK_MAX_RANK];
    lb[lane] = NULL;
    if (r >= lw->rows) continue;
    hlk_conv_row_coords(g, lw->row0 + r, &b, s);
    lb[lane] = (const uint32_t *)lw->L + (b + lw->lbatch0) * g->istr[g->ib] + lw->lfeat0;
    for (int i = 0; i < g->nsp; i++) tr[lane][i] = g->tab[i] + s[i] * g->win[i];
  }
  for (int64_t q = 0; q < g->wpos; q++) {
    for (int64_t lane = 0; lane < mr; lane++) {
      const uint32_t *p = lb[lane];
      for (int i = 0; i < g->nsp && p; i++) {
        int64_t t = tr[lane][i][w[i]];
        p = t < 0 ? NULL : p + t * g->istr[g->isp[i]];
      }
      src[lane] = p ? p : zeros;
    }
    hlk_interleave32(src, mr, cin, base + q * cin * mr);
    for (int i = g->nsp - 1; i >= 0; i--) {   /* next window position, row-major */
      if (++w[i] < g->win[i]) break;
      w[i] = 0;
    }
  }
}

/* im2col over slivers [lo, hi) of the chunk, written straight in the
 * GEMM's packed-A layout: MR rows per sliver, k-major, KP consecutive k
 * values of a row together (KP = 2 for the int16-pair kernel, else 1):
 * element (row, k) of sliver s at s*KD*MR + (k/KP)*MR*KP + (row%MR)*KP +
 * k%KP, KD = kdim rounded up to KP. So the GEMM skips packing A. Zeros
 * where the window reads padding or a dilation hole, in rows past the
 * chunk's end, and in the pad step past kdim. */
#define DEFINE_IM2COL(SUF, T, KP)                                                           \
  static void im2col_##SUF(void *arg, int64_t lo, int64_t hi) {                             \
    const Lower *lw = arg;                                                                  \
    const Geo *g = lw->g;                                                                   \
    const T *L = lw->L;                                                                     \
    int64_t kdim = g->wpos * g->cin_g, fs = g->istr[g->ifeat], mr = lw->mr;                 \
    int64_t kd = (kdim + KP - 1) / KP * KP;                                                 \
    int64_t s[HLK_MAX_RANK], w[HLK_MAX_RANK];                                               \
    if (KP == 1 && sizeof(T) == 4 && fs == 1 && mr <= SLIVER_MAX && g->cin_g <= ZERO_ROW) { \
      for (int64_t sl = lo; sl < hi; sl++) sliver32(lw, sl);                                \
      return;                                                                               \
    }                                                                                       \
    for (int64_t sl = lo; sl < hi; sl++) {                                                  \
      T *base = (T *)lw->P + sl * kd * mr;                                                  \
      /* Rows (s..., b) with the batch innermost in the input: when the                     \
       * sliver's rows share one output position, each (w, iz) is mr                        \
       * consecutive input elements. */                                                     \
      int64_t r0 = lw->row0 + sl * mr;                                                      \
      if (KP == 1 && g->binner && g->istr[g->ib] == 1 && sl * mr + mr <= lw->rows &&        \
          r0 / g->bout == (r0 + mr - 1) / g->bout) {                                        \
        int64_t b0;                                                                         \
        hlk_conv_row_coords(g, r0, &b0, s);                                                 \
        const T *lb = L + b0 + lw->lbatch0 + lw->lfeat0 * fs;                               \
        for (int64_t q = 0; q < g->wpos; q++) {                                             \
          hlk_split_index(q, g->win, g->nsp, w);                                            \
          int64_t koff, loff = hlk_conv_window_offsets(g, s, w, &koff);                     \
          T *d = base + q * g->cin_g * mr;                                                  \
          for (int64_t iz = 0; iz < g->cin_g; iz++, d += mr) {                              \
            if (loff < 0) memset(d, 0, (size_t)mr * sizeof(T));                             \
            else memcpy(d, lb + loff + iz * fs, (size_t)mr * sizeof(T));                    \
          }                                                                                 \
        }                                                                                   \
        continue;                                                                           \
      }                                                                                     \
      /* Rows along the last spatial dim of one output line (NCHW and other                 \
       * layouts with features outside the spatial dims): each (w, iz) reads                \
       * the lanes' elements of one input line, found once per w. */                        \
      if (KP == 1 && !g->binner && g->nsp > 0 && sl * mr + mr <= lw->rows &&                \
          mr <= SLIVER_MAX) {                                                               \
        int64_t b0;                                                                         \
        hlk_conv_row_coords(g, r0, &b0, s);                                                 \
        int last = g->nsp - 1;                                                              \
        if (s[last] + mr <= g->out_sz[last]) {                                              \
          const T *lb = L + (b0 + lw->lbatch0) * g->istr[g->ib] + lw->lfeat0 * fs;          \
          int64_t ls = g->istr[g->isp[last]], idx[SLIVER_MAX];                              \
          for (int64_t q = 0; q < g->wpos; q++) {                                           \
            hlk_split_index(q, g->win, g->nsp, w);                                          \
            int64_t off = 0;                                                                \
            bool in = true;                                                                 \
            for (int i = 0; i < last && in; i++) {                                          \
              int64_t p = g->tab[i][s[i] * g->win[i] + w[i]];                               \
              in = p >= 0;                                                                  \
              off += p * g->istr[g->isp[i]];                                                \
            }                                                                               \
            bool run = in;   /* the lanes read consecutive elements, none padding */        \
            for (int64_t lane = 0; lane < mr; lane++) {                                     \
              idx[lane] = g->tab[last][(s[last] + lane) * g->win[last] + w[last]];          \
              run = run && idx[lane] >= 0 && idx[lane] == idx[0] + lane;                    \
            }                                                                               \
            T *d = base + q * g->cin_g * mr;                                                \
            for (int64_t iz = 0; iz < g->cin_g; iz++, d += mr) {                            \
              const T *src = lb + off + iz * fs;                                            \
              if (!in) memset(d, 0, (size_t)mr * sizeof(T));                                \
              else if (run && ls == 1)   /* a few elements: no memcpy call */               \
                for (int64_t lane = 0; lane < mr; lane++) d[lane] = src[idx[0] + lane];     \
              else                                                                          \
                for (int64_t lane = 0; lane < mr; lane++)                                   \
                  d[lane] = idx[lane] < 0 ? 0 : src[idx[lane] * ls];                        \
            }                                                                               \
          }                                                                                 \
          continue;                                                                         \
        }                                                                                   \
      }                                                                                     \
      for (int64_t lane = 0; lane < mr; lane++) {                                           \
        int64_t r = sl * mr + lane;                                                         \
        T *dst = base + lane * KP;                                                          \
        if (r >= lw->rows) {                                                                \
          for (int64_t k = 0; k < kd; k++) dst[k / KP * mr * KP + k % KP] = 0;              \
          continue;                                                                         \
        }                                                                                   \
        if (kd > kdim) dst[kdim / KP * mr * KP + kdim % KP] = 0;                            \
        int64_t b;                                                                          \
        hlk_conv_row_coords(g, lw->row0 + r, &b, s);                                        \
        const T *lb = L + (b + lw->lbatch0) * g->istr[g->ib] + lw->lfeat0 * fs;             \
        /* Whole groups of KP steps per window position (always when KP = 1):               \
         * KP contiguous slots, then the next group mr*KP further. */                       \
        bool whole = g->cin_g % KP == 0;                                                    \
        for (int64_t q = 0; q < g->wpos; q++) {                                             \
          hlk_split_index(q, g->win, g->nsp, w);                                            \
          int64_t koff, loff = hlk_conv_window_offsets(g, s, w, &koff), k0 = q * g->cin_g;  \
          const T *src = loff < 0 ? NULL : lb + loff - k0 * fs;                             \
          if (whole) {                                                                      \
            T *d = dst + k0 * mr;                                                           \
            const T *sp = src ? src + k0 * fs : NULL;                                       \
            for (int64_t t = 0; t < g->cin_g / KP; t++, d += mr * KP)                       \
              for (int j = 0; j < KP; j++) d[j] = sp ? sp[(t * KP + j) * fs] : 0;           \
            continue;                                                                       \
          }                                                                                 \
          for (int64_t k = k0; k < k0 + g->cin_g; k++)                                      \
            dst[k / KP * mr * KP + k % KP] = src ? src[k * fs] : 0;                         \
        }                                                                                   \
      }                                                                                     \
    }                                                                                       \
  }                                                                                         \
  /* Kernel matrix of group grp: [(w, iz)][n] for the group's output features. */           \
  static void kmat_##SUF(const Geo *g, const void *Kv, int64_t grp, void *dv) {             \
    const T *K = Kv;                                                                        \
    T *dst = dv;                                                                            \
    int64_t w[HLK_MAX_RANK], cg = g->cout / (g->fgc * g->bgc);                              \
    for (int64_t q = 0; q < g->wpos; q++) {                                                 \
      hlk_split_index(q, g->win, g->nsp, w);                                                \
      int64_t koff = 0;                                                                     \
      for (int i = 0; i < g->nsp; i++) koff += hlk_conv_tap_offset(g, i, w[i]);             \
      for (int64_t iz = 0; iz < g->cin_g; iz++)                                             \
        for (int64_t n = 0; n < cg; n++)                                                    \
          *dst++ = K[koff + iz * g->kstr[g->kin] + (grp * cg + n) * g->kstr[g->kout]];      \
    }                                                                                       \
  }
/* Scatter a [rows][cg] result chunk into the compute-type output. */
#define DEFINE_SCATTER(SUF, T)                                                              \
  static void scatter_##SUF(const Geo *g, const void *Cv, int64_t row0, int64_t rows,       \
                            int64_t o0, int64_t cg, void *Ov, bool add) {                   \
    const T *C = Cv;                                                                        \
    T *O = Ov;                                                                              \
    int64_t s[HLK_MAX_RANK];                                                                \
    for (int64_t r = 0; r < rows; r++) {                                                    \
      int64_t b;                                                                            \
      hlk_conv_row_coords(g, row0 + r, &b, s);                                              \
      int64_t off = b * g->ostr[g->ob] + o0 * g->ostr[g->ofeat];                            \
      for (int i = 0; i < g->nsp; i++)                                                      \
        off += (g->ophase[i] + g->ostep[i] * s[i]) * g->ostr[g->osp[i]];                    \
      for (int64_t n = 0; n < cg; n++) {                                                    \
        T *o = &O[off + n * g->ostr[g->ofeat]];                                             \
        *o = add ? *o + C[r * cg + n] : C[r * cg + n];                                      \
      }                                                                                     \
    }                                                                                       \
  }
DEFINE_IM2COL(f32, float, 1)
DEFINE_IM2COL(f64, double, 1)
DEFINE_IM2COL(u32, uint32_t, 1)
DEFINE_IM2COL(u64, uint64_t, 1)
DEFINE_IM2COL(i16, int16_t, 2)
DEFINE_SCATTER(f32, float)
DEFINE_SCATTER(f64, double)
DEFINE_SCATTER(u32, uint32_t)
DEFINE_SCATTER(u64, uint64_t)

/* The element kind the GEMM runs in, with its stamped helpers: es is the
 * size of the operand elements (patches, kernel matrix), ces of the
 * results, kp the shared-dim steps per packed value. */
typedef struct Kind {
  size_t es, ces;
  int64_t mr, kp;
  void (*im2col)(void *arg, int64_t lo, int64_t hi);
  void (*kmat)(const Geo *g, const void *K, int64_t grp, void *dst);
  void (*scatter)(const Geo *g, const void *C, int64_t row0, int64_t rows, int64_t o0,
                  int64_t cg, void *O, bool add);
  int (*gemm)(HliExec *x, const HlkGemm *g);
} Kind;

#define KIND(SUF, T, CSUF, CT, KP)                                                          \
  (Kind){ .es = sizeof(T), .ces = sizeof(CT), .mr = hlk_gemm_mr_##SUF(), .kp = KP,          \
          .im2col = im2col_##SUF, .kmat = kmat_##SUF, .scatter = scatter_##CSUF,            \
          .gemm = hlk_gemm_##SUF }

/* The output rows (b, s...) are consecutive with the feature innermost:
 * GEMM results go straight into the output. */
static bool out_rows_direct(const Geo *g) {
  if (g->ofeat != g->nsp + 1 || g->ob != (g->binner ? g->nsp : 0)) return false;
  for (int i = 0; i < g->nsp; i++)
    if (g->osp[i] != i + (g->binner ? 0 : 1) || g->ostep[i] != 1) return false;
  return true;
}

/* A pointwise convolution (every window one element, stride 1, no padding
 * or dilation: a 1x1 convolution) whose input rows (b, s...) are evenly
 * spaced with the features contiguous: its patch matrix is the input
 * itself, read in place by the GEMM. The row stride, or 0. */
static int64_t pointwise_rows(const Geo *g) {
  if (g->bgc != 1 || g->binner || g->istr[g->ifeat] != 1 || g->wpos != 1) return 0;
  int64_t r = g->istr[g->ib];
  for (int i = g->nsp - 1; i >= 0; i--) {
    if (g->in_sz[i] != g->out_sz[i]) return 0;
    for (int64_t t = 0; t < g->out_sz[i]; t++)
      if (g->tab[i][t] != t) return 0;
  }
  for (int i = 0; i < g->nsp; i++) {   /* batch, then spatial dims, each spanning the next */
    if (r != g->istr[g->isp[i]] * g->in_sz[i]) return 0;
    r = g->istr[g->isp[i]];
  }
  return r;
}

static int lower_block(HliExec *x, const HloInstr *ins, const Geo *g, const Kind *kd,
                       const void *L, const void *K, void *O, bool add) {
  size_t es = kd->es, ces = kd->ces;
  int64_t groups = g->fgc * g->bgc, cg = g->cout / groups;
  int64_t kdim = g->wpos * g->cin_g, rows_total = g->bout * g->srows;
  int64_t kpad = (kdim + kd->kp - 1) / kd->kp * kd->kp;   /* kdim with the pad step */
  /* Chunk of rows so that a patch chunk (about 1 MB of f32) stays near L2,
   * but with at least two GEMM row blocks per thread to share out. */
  int64_t chunk = ((int64_t)1 << 18) / (kdim > 0 ? kdim : 1);
  if (chunk < 512 * (int64_t)hli_num_threads(x)) chunk = 512 * (int64_t)hli_num_threads(x);
  if (chunk > rows_total) chunk = rows_total;
  bool direct = out_rows_direct(g);
  int64_t row_stride = pointwise_rows(g);
  if (row_stride && direct) chunk = rows_total;   /* no patches to keep near L2 */
  int64_t mr = kd->mr;
  int64_t slivers = (chunk + mr - 1) / mr;
  /* Counted against --max-memory (hli_scratch_alloc reports a failure). */
  void *kmat = hli_scratch_alloc(x, ins, (size_t)(kdim * cg > 0 ? kdim * cg : 1) * es);
  void *P = !kmat ? NULL
          : row_stride ? kmat   /* unused: the input is the patch matrix */
          : hli_scratch_alloc(x, ins, (size_t)(slivers * mr * kpad > 0 ? slivers * mr * kpad : 1) * es);
  void *C = direct || !P ? NULL : hli_scratch_alloc(x, ins, (size_t)(chunk * cg > 0 ? chunk * cg : 1) * ces);
  int rc = 0;
  if (!kmat || !P || (!direct && !C)) {
    rc = -1;
    goto done;
  }
  for (int64_t grp = 0; grp < groups && rc == 0; grp++) {
    kd->kmat(g, K, grp, kmat);
    Lower lw = { .g = g, .L = L, .P = P, .es = es, .mr = mr,
                 .lfeat0 = g->fgc > 1 ? grp * g->cin_g : 0,
                 .lbatch0 = g->bgc > 1 ? grp * (g->n_in / g->bgc) : 0 };
    for (int64_t row0 = 0; row0 < rows_total && rc == 0; row0 += chunk) {
      int64_t rows = rows_total - row0 < chunk ? rows_total - row0 : chunk;
      lw.row0 = row0;
      lw.rows = rows;
      HlkGemm gm = { .ins = ins, .batch = 1, .m = rows, .n = cg, .k = kdim, .a = P, .a_packed = true,
                     .b = kmat, .b_rs = cg, .b_cs = 1, .accumulate = add && direct };
      if (row_stride) {
        gm.a = (const char *)L + (size_t)(row0 * row_stride + lw.lfeat0) * es;
        gm.a_rs = row_stride;
        gm.a_cs = 1;
        gm.a_packed = false;
      } else {
        hli_parallel_for(x, (rows + mr - 1) / mr, 4, kd->im2col, &lw);
      }
      if (direct) {
        gm.c = (char *)O + (size_t)(row0 * g->cout + grp * cg) * ces;
        gm.ldc = g->cout;
      } else {
        gm.c = C;
        gm.ldc = cg;
      }
      rc = kd->gemm(x, &gm);
      if (rc == 0 && !direct) kd->scatter(g, C, row0, rows, grp * cg, cg, O, add);
    }
  }
done:
  hli_scratch_free(x, kmat);
  if (P != kmat) hli_scratch_free(x, P);
  hli_scratch_free(x, C);
  return rc;
}

/* A patch matrix past PATCH_MAX bytes (a weight gradient, whose window is
 * a whole image: k = 25088 for a 56x56x8 one) would go to memory and back:
 * the window's first dim is cut into runs of taps, each a convolution of
 * its own (Geo.wmap names its kernel taps) whose products add into the
 * result, so each part's patches stay in cache. The parts sum in order of
 * their taps; the split moves where the GEMM's partial sums meet. */
enum { PATCH_MAX = 8 << 20 };
static size_t patch_max = PATCH_MAX;

void hlk_conv_patch_max(size_t bytes) { patch_max = bytes ? bytes : PATCH_MAX; }

static int lower_geo(HliExec *x, const HloInstr *ins, const Geo *g, const Kind *kd,
                     const void *L, const void *K, void *O) {
  int64_t rows = g->bout * g->srows, w0 = g->nsp > 0 ? g->win[0] : 1;
  if (rows > 512 * (int64_t)hli_num_threads(x)) rows = 512 * (int64_t)hli_num_threads(x);
  size_t per_tap = (size_t)(w0 > 0 ? g->wpos / w0 : 0) * (size_t)g->cin_g * kd->es *
                   (size_t)(rows > 0 ? rows : 1);
  size_t cap = patch_max;
  if (kd->kp != 1 || w0 < 2 || per_tap * (size_t)w0 <= cap)
    return lower_block(x, ins, g, kd, L, K, O, false);
  int64_t taps = per_tap ? (int64_t)(cap / 2 / per_tap) : w0;
  if (taps < 1) taps = 1;
  Geo *p = malloc(sizeof *p);
  int64_t *mem = p ? malloc(sizeof(int64_t) * (size_t)(taps + g->out_sz[0] * taps + 1)) : NULL;
  if (!p || !mem) {
    free(p);
    return hli_fail_nomem(x, ins, "out of memory planning the convolution");
  }
  int rc = 0;
  for (int64_t t0 = 0; t0 < w0 && rc == 0; t0 += taps) {
    *p = *g;
    hlk_conv_geo_sub_dim(p, g, 0, 0, 1, g->out_sz[0], t0, 1, w0 - t0 < taps ? w0 - t0 : taps, mem);
    rc = lower_block(x, ins, p, kd, L, K, O, t0 > 0);
  }
  free(mem);
  free(p);
  return rc;
}

typedef struct PhaseGemm {
  HliExec *x;
  const HloInstr *ins;
  const Kind *kd;
  const void *L, *K;
  void *O;
} PhaseGemm;

static int phase_gemm(void *ctx, const Geo *p) {
  PhaseGemm *c = ctx;
  return lower_geo(c->x, c->ins, p, c->kd, c->L, c->K, c->O);
}

static int lower_gemm(HliExec *x, const HloInstr *ins, const Geo *g, const Kind *kd,
                      const void *L, const void *K, void *O) {
  PhaseGemm c = {x, ins, kd, L, K, O};
  return hlk_conv_phased(ins, g) ? hlk_conv_phases(x, ins, g, phase_gemm, &c)
                                 : lower_geo(x, ins, g, kd, L, K, O);
}

/* The GEMM lowering multiplies padding and dilation holes by the kernel as
 * explicit zeros; the evaluator skips them. The two differ only when the
 * kernel holds an infinity or NaN (0 * inf = NaN), so such kernels take the
 * reference loop. */
static bool all_finite(HlkCType ct, const void *k, int64_t n) {
  bool ok = true;
  if (ct == HLK_CT_F32) {
    const float *f = k;
    for (int64_t i = 0; i < n; i++) ok &= f[i] - f[i] == 0;
  } else {
    const double *d = k;
    for (int64_t i = 0; i < n; i++) ok &= d[i] - d[i] == 0;
  }
  return ok;
}

/* ---- Direct loops for small feature groups ----------------------------- */

/* Features innermost in the input, the kernel's output features and the
 * result, no batch groups, and few features per group (depthwise: one
 * input feature per group): each output row (b, s...) is a vector over the
 * output features, summed over the window positions and then the group's
 * input features in the evaluator's order, skipping padding and holes as
 * it does (so infinities in the kernel need no reference loop). Output
 * feature o of group o / cout_g reads input feature (o / cout_g) * cin_g +
 * iz. A GEMM per group would multiply matrices a few columns wide: 0.24
 * GFLOP/s for a depthwise f32[8,56,56,128], 3.6 for 32 groups of 4. */
enum { DIRECT_GROUP_MAX = 16 };
static bool grouped_direct_layout(const Geo *g) {
  int64_t cout_g = g->cout / g->fgc;
  return g->bgc == 1 && g->istr[g->ifeat] == 1 && g->kstr[g->kout] == 1 &&
         g->ostr[g->ofeat] == 1 &&
         (g->cin_g == 1 || (g->fgc > 1 && g->cin_g <= DIRECT_GROUP_MAX &&
                            cout_g <= DIRECT_GROUP_MAX));
}

typedef struct DwJob {
  const Geo *g;
  const void *L, *K;
  void *O;
  bool oom;
} DwJob;

#define DEFINE_GROUPED(SUF, T, BLOCKS)                                                      \
  /* acc += x * k over n features: its own loop, so it vectorizes */                        \
  HLK_VECTORIZE static void dw_axpy_##SUF(T *restrict acc, const T *restrict x,             \
                                          const T *restrict k, int64_t n) {                 \
    for (int64_t o = 0; o < n; o++) acc[o] = acc[o] + x[o] * k[o];                          \
  }                                                                                         \
  /* acc[o] += x[ix[o]] * k[o]: each output reads its group's input feature */              \
  HLK_VECTORIZE static void dw_gaxpy_##SUF(T *restrict acc, const T *restrict x,            \
                                           const int32_t *restrict ix, const T *restrict k, \
                                           int64_t n) {                                     \
    for (int64_t o = 0; o < n; o++) acc[o] = acc[o] + x[ix[o]] * k[o];                      \
  }                                                                                         \
  static void grouped_##SUF(void *arg, int64_t lo, int64_t hi) {                            \
    DwJob *j = arg;                                                                         \
    const Geo *g = j->g;                                                                    \
    const T *L = j->L, *K = j->K;                                                           \
    T *O = j->O;                                                                            \
    int64_t cout = g->cout, m = g->cout / g->fgc, cin_g = g->cin_g;                         \
    T *acc = malloc((size_t)cout * (sizeof(T) + sizeof(int32_t)));                          \
    if (!acc) { j->oom = true; return; }                                                    \
    int32_t *ix = (int32_t *)(void *)(acc + cout);                                          \
    for (int64_t o = 0; o < cout; o++) ix[o] = (int32_t)(o / m * cin_g);                    \
    GrpI idx[DIRECT_GROUP_MAX];                                                             \
    if (BLOCKS(g)) grouped_indices(idx, m, cin_g);                                          \
    int64_t s[HLK_MAX_RANK], w[HLK_MAX_RANK];                                               \
    for (int64_t r = lo; r < hi; r++) {                                                     \
      int64_t b = r / g->srows;                                                             \
      hlk_split_index(r % g->srows, g->out_sz, g->nsp, s);                                  \
      for (int64_t o = 0; o < cout; o++) acc[o] = 0;                                        \
      for (int64_t q = 0; q < g->wpos; q++) {                                               \
        hlk_split_index(q, g->win, g->nsp, w);                                              \
        int64_t koff, loff = hlk_conv_window_offsets(g, s, w, &koff);                       \
        if (loff < 0) continue;                                                             \
        const T *xp = L + b * g->istr[g->ib] + loff, *kp = K + koff;                        \
        if (m == 1 && cin_g == 1)                                                           \
          dw_axpy_##SUF(acc, xp, kp, cout);                                                 \
        else if (BLOCKS(g))                                                                 \
          grouped_blocks_##SUF(acc, xp, kp, g->kstr[g->kin], cout, m, cin_g, idx);          \
        else                                                                                \
          for (int64_t iz = 0; iz < cin_g; iz++)                                            \
            dw_gaxpy_##SUF(acc, xp + iz, ix, kp + iz * g->kstr[g->kin], cout);              \
      }                                                                                     \
      int64_t off = b * g->ostr[g->ob];                                                     \
      for (int i = 0; i < g->nsp; i++) off += s[i] * g->ostr[g->osp[i]];                    \
      memcpy(O + off, acc, (size_t)cout * sizeof(T));                                       \
    }                                                                                       \
    free(acc);                                                                              \
  }
/* f32 groups of m output features whose inputs fit one vector with theirs:
 * m divides 16 and cin_g <= m. A block of 16 outputs reads 16 / m groups'
 * cin_g inputs each; input iz of every lane's group is one shuffle of
 * those (lane l takes (l / m) cin_g + iz), so the block costs a load, then
 * a shuffle, a multiply and an add per input feature. Same operations, in
 * the same order, as dw_gaxpy_f32. */
typedef float GrpV __attribute__((vector_size(64)));
typedef int32_t GrpI __attribute__((vector_size(64)));
/* GRP_PERMUTE(x, i): lane l of the result is x[i[l]] (every i[l] in
 * [0, 16)). gcc's __builtin_shuffle takes a variable mask (one vpermps on
 * AVX-512); clang has no such form (its __builtin_shufflevector wants
 * constant indices), so there the lanes move one by one. A macro, not a
 * function: 64-byte vectors passed by value change the ABI without AVX-512
 * (-Wpsabi). Data movement only: the sums built from it are the same. */
#if defined(__has_builtin)
#if __has_builtin(__builtin_shuffle)
#define GRP_HAVE_SHUFFLE 1
#endif
#endif
#ifdef GRP_HAVE_SHUFFLE
#define GRP_PERMUTE(x, i) __builtin_shuffle(x, i)
#else
#define GRP_PERMUTE(x, i)                                          \
  __extension__({                                                  \
    GrpV grp_r_;                                                   \
    for (int grp_l_ = 0; grp_l_ < 16; grp_l_++)                    \
      grp_r_[grp_l_] = (x)[(i)[grp_l_] & 15];                      \
    grp_r_;                                                        \
  })
#endif
static bool grouped_shuffles(const Geo *g) {
  int64_t m = g->cout / g->fgc;
  return 16 % m == 0 && g->cin_g <= m && g->cout % 16 == 0;
}
/* The inputs of the block at o0 (the rest of the vector zero). */
static inline void grouped_inputs(GrpV *v, const float *xp, int64_t o0, int64_t m,
                                  int64_t cin_g) {
  float tmp[16] = {0};
  memcpy(tmp, xp + o0 / m * cin_g, (size_t)(16 / m * cin_g) * sizeof(float));
  memcpy(v, tmp, sizeof *v);
}
HLK_VECTORIZE static void grouped_blocks_f32(float *acc, const float *xp, const float *kp,
                                             int64_t ks, int64_t cout, int64_t m,
                                             int64_t cin_g, const GrpI *idx) {
  int64_t o0 = 0;
  /* Four blocks at once: independent sums hide the latency of the adds. */
  for (; o0 + 64 <= cout; o0 += 64) {
    GrpV x0, x1, x2, x3, a0, a1, a2, a3;
    grouped_inputs(&x0, xp, o0, m, cin_g), grouped_inputs(&x1, xp, o0 + 16, m, cin_g);
    grouped_inputs(&x2, xp, o0 + 32, m, cin_g), grouped_inputs(&x3, xp, o0 + 48, m, cin_g);
    memcpy(&a0, acc + o0, 64), memcpy(&a1, acc + o0 + 16, 64);
    memcpy(&a2, acc + o0 + 32, 64), memcpy(&a3, acc + o0 + 48, 64);
    for (int64_t iz = 0; iz < cin_g; iz++) {
      const float *kr = kp + iz * ks + o0;
      GrpV k0, k1, k2, k3;
      memcpy(&k0, kr, 64), memcpy(&k1, kr + 16, 64);
      memcpy(&k2, kr + 32, 64), memcpy(&k3, kr + 48, 64);
      a0 = a0 + GRP_PERMUTE(x0, idx[iz]) * k0;
      a1 = a1 + GRP_PERMUTE(x1, idx[iz]) * k1;
      a2 = a2 + GRP_PERMUTE(x2, idx[iz]) * k2;
      a3 = a3 + GRP_PERMUTE(x3, idx[iz]) * k3;
    }
    memcpy(acc + o0, &a0, 64), memcpy(acc + o0 + 16, &a1, 64);
    memcpy(acc + o0 + 32, &a2, 64), memcpy(acc + o0 + 48, &a3, 64);
  }
  for (; o0 < cout; o0 += 16) {
    GrpV x0, a0;
    grouped_inputs(&x0, xp, o0, m, cin_g);
    memcpy(&a0, acc + o0, 64);
    for (int64_t iz = 0; iz < cin_g; iz++) {
      GrpV k0;
      memcpy(&k0, kp + iz * ks + o0, 64);
      a0 = a0 + GRP_PERMUTE(x0, idx[iz]) * k0;
    }
    memcpy(acc + o0, &a0, 64);
  }
}
/* The shuffle of input feature iz: lane l takes (l / m) cin_g + iz. */
static void grouped_indices(GrpI *idx, int64_t m, int64_t cin_g) {
  for (int64_t iz = 0; iz < cin_g; iz++)
    for (int l = 0; l < 16; l++) idx[iz][l] = (int32_t)(l / m * cin_g + iz);
}
static bool no_blocks(const Geo *g) { (void)g; return false; }
static void grouped_blocks_f64(double *acc, const double *xp, const double *kp, int64_t ks,
                               int64_t cout, int64_t m, int64_t cin_g, const GrpI *idx) {
  (void)acc, (void)xp, (void)kp, (void)ks, (void)cout, (void)m, (void)cin_g, (void)idx;
}
DEFINE_GROUPED(f32, float, grouped_shuffles)
DEFINE_GROUPED(f64, double, no_blocks)


static int run_grouped(HliExec *x, const HloInstr *ins, const Geo *g, bool f64, const void *L,
                       const void *K, void *O) {
  DwJob j = {g, L, K, O, false};
  int64_t rows = g->bout * g->srows;
  /* each worker's row of accumulators and indices, counted against --max-memory */
  int64_t par = rows < hli_num_threads(x) ? rows : hli_num_threads(x);
  size_t work = (size_t)(par > 0 ? par : 1) * (size_t)g->cout * (f64 ? 12 : 8);
  if (hli_scratch_reserve(x, ins, work)) return -1;
  int64_t per_row = g->wpos * g->cin_g * g->cout + 1;
  hli_parallel_for(x, rows, 16384 / per_row + 1, f64 ? grouped_f64 : grouped_f32, &j);
  hli_scratch_unreserve(x, work);
  return j.oom ? hli_fail_nomem(x, ins, "out of memory") : 0;
}

/* ---- The kernel --------------------------------------------------------- */

/* v converted to the compute type of `to` (integer lanes: 32 for 32-bit,
 * 16 for int16 values of the pair kernel), or v's own data when it already is (f32/f64 operands of an
 * f32/f64 result, s32/u32 operands in 32-bit lanes, s64/u64 operands of a
 * 64-bit integer result). *owned gets scratch to free. */
static const void *as_ctype(HliExec *x, const HloInstr *ins, const HliValue *v, HloDtype to,
                            int lanes, void **owned) {
  HlkCType ct = hlk_ctype_for(to);
  *owned = NULL;
  bool same_int = ct == HLK_CT_I64 && to != HLO_PRED &&
                  (lanes == 16 ? v->dtype == HLO_S16
                   : lanes == 32 ? v->dtype == HLO_S32 || v->dtype == HLO_U32
                   : (v->dtype == HLO_S64 || v->dtype == HLO_U64) && hlc_dtype_bits(to) == 64);
  if ((ct == HLK_CT_F32 && v->dtype == HLO_F32 && to == HLO_F32) ||
      (ct == HLK_CT_F64 && v->dtype == HLO_F64) || same_int)
    return v->data;
  size_t n = (size_t)v->nelem;
  *owned = hli_scratch_alloc(x, ins, n * (lanes ? (size_t)lanes / 8 : hlk_ctype_size(ct)));
  if (!*owned) return NULL;   /* counted against --max-memory, which said why */
  if (lanes == 16) hlk_load_i16(v->dtype, to, v->data, (int64_t)n, *owned);
  else if (lanes == 32) hlk_load_u32(v->dtype, to, v->data, (int64_t)n, *owned);
  else hlk_load_ctype(v->dtype, to, v->data, (int64_t)n, *owned);
  return *owned;
}

/* HLORUN_CONV_ROWS=0 sends the f32 convolutions conv_rows.c takes through
 * the patches, HLORUN_CONV_DW=0 depthwise ones through the older loop (to
 * compare). */
static bool env_enabled(const char *name) {
  const char *e = getenv(name);
  return !e || strcmp(e, "0") != 0;
}

int hlk_conv_run(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out,
                 bool force_ref) {
  if (out->nelem == 0) return 0;
  HloDtype to = out->dtype;
  HlkCType ct = hlk_ctype_for(to);
  Geo g;
  if (hlk_conv_geo_init(&g, ins, in[0], in[1], out) != 0)
    return hli_fail_nomem(x, ins, "out of memory planning the convolution");
  void *lown = NULL, *kown = NULL, *oown = NULL;
  bool ints = ct == HLK_CT_I64 && !force_ref;
  bool lanes32 = ints && hlk_int_lanes(to, g.wpos * g.cin_g) == 32;
  /* Operands that fit in int16 take the pair kernel (as in dot). */
  int lanes = !lanes32 ? 0
            : hlk_fits_i16(in[0]->dtype, to) && hlk_fits_i16(in[1]->dtype, to) ? 16 : 32;
  const void *L = as_ctype(x, ins, in[0], to, lanes, &lown);
  const void *K = L ? as_ctype(x, ins, in[1], to, lanes, &kown) : NULL;
  bool direct = (ct == HLK_CT_F32 && to == HLO_F32) || (ct == HLK_CT_F64 && to == HLO_F64) ||
                (ct == HLK_CT_C64 && to == HLO_C64) || (ct == HLK_CT_C128 && to == HLO_C128) ||
                (lanes32 && (to == HLO_S32 || to == HLO_U32)) ||
                (!lanes32 && (to == HLO_S64 || to == HLO_U64));
  size_t oes = lanes32 ? 4 : hlk_ctype_size(ct);
  void *O = direct ? out->data
         : L && K ? (oown = hli_scratch_alloc(x, ins, (size_t)out->nelem * oes)) : NULL;
  int rc = 0;
  if (!L || !K || !O) {
    rc = -1;   /* hli_scratch_alloc said why */
  } else if (!force_ref && ct == HLK_CT_F32 && env_enabled("HLORUN_CONV_DW") &&
             hlk_conv_dw_applies(&g)) {
    rc = hlk_conv_dw_f32(x, ins, &g, L, K, O);
  } else if (!force_ref && (ct == HLK_CT_F32 || (ct == HLK_CT_F64 && direct)) &&
             grouped_direct_layout(&g)) {
    /* f32 compute with a bf16/f16 result too: O is then f32 scratch. */
    rc = run_grouped(x, ins, &g, ct == HLK_CT_F64, L, K, O);
  } else if (!force_ref && ct == HLK_CT_F32 && env_enabled("HLORUN_CONV_ROWS") &&
             hlk_conv_rows_applies(&g, ins)) {
    rc = hlk_conv_rows_f32(x, ins, &g, L, K, O);
  } else if (ints || ((ct == HLK_CT_F32 || ct == HLK_CT_F64) && !force_ref &&
                      all_finite(ct, K, in[1]->nelem))) {
    Kind kd = ct == HLK_CT_F32 ? KIND(f32, float, f32, float, 1)
            : ct == HLK_CT_F64 ? KIND(f64, double, f64, double, 1)
            : lanes == 16 ? KIND(i16, int16_t, u32, uint32_t, 2)
            : lanes32 ? KIND(u32, uint32_t, u32, uint32_t, 1) : KIND(u64, uint64_t, u64, uint64_t, 1);
    rc = lower_gemm(x, ins, &g, &kd, L, K, O);
  } else {
    switch (ct) {
    case HLK_CT_F32: ref_f32(&g, L, K, O); break;
    case HLK_CT_F64: ref_f64(&g, L, K, O); break;
    case HLK_CT_C64: ref_c64(&g, L, K, O); break;
    case HLK_CT_C128: ref_c128(&g, L, K, O); break;
    default: ref_u64(&g, L, K, O); break;
    }
  }
  if (rc == 0 && !direct) {
    if (lanes32) hlk_store_u32(to, O, out->nelem, out->data);
    else hlk_store_ctype(to, O, out->nelem, out->data);
  }
  hli_scratch_free(x, oown);
  hli_scratch_free(x, lown);
  hli_scratch_free(x, kown);
  hlk_conv_geo_free(&g);
  return rc;
}
