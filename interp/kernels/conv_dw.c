/* conv_dw.c: depthwise f32 convolutions (conv.h says which and in what
 * order they sum).
 *
 * The output is cut into lines as in conv_rows.c (one batch element, one
 * position of every spatial dim but the innermost). Per line, each window
 * tap's input line is found once (or padding); then every output position
 * keeps a block of features in vector registers while its taps add their
 * products, and stores it once. The old per-tap loop loaded and stored its
 * accumulators from memory for every tap and located the window element by
 * element. */
#include "interp/kernels/conv.h"
#include "interp/kernels/vectorize.h"
#include <stdlib.h>
#include <string.h>

bool hlk_conv_dw_applies(const Geo *g) {
  return g->nsp >= 1 && g->bgc == 1 && g->cin_g == 1 && g->fgc == g->cin;
}

typedef float DwV __attribute__((vector_size(64)));

/* V = the inputs of outputs f .. f+15: one load, or with a channel
 * multiplier m, output o reads input ix[o] = o / m. (Macros: a function returning
 * a 64-byte vector would change the ABI of the non-AVX-512 clones.) */
#define DW_X(V, XP, F, M)                                              \
  do {                                                                 \
    if ((M) == 1) memcpy(&(V), (XP) + (F), sizeof(V));                 \
    else for (int l_ = 0; l_ < 16; l_++) (V)[l_] = (XP)[ix[(F) + l_]];    \
  } while (0)
#define DW_ADD(A, XP, F, M, KP)                                        \
  do {                                                                 \
    DwV x_, k_;                                                        \
    DW_X(x_, XP, F, M);                                                \
    memcpy(&k_, (KP), sizeof k_);                                      \
    (A) = (A) + x_ * k_;                                               \
  } while (0)

/* One line: nq taps, tap q reading input line base[q] (NULL: padding) at
 * innermost tap tl[q] with kernel kq[q]; output ox at o + ox * ostep. The
 * sums acc = acc + x * k run per output in tap order, one rounding each,
 * as the reference loop (FMA contraction is off in HLK_VECTORIZE). */
HLK_VECTORIZE static void dw_line(const float *const *base, const int64_t *tl,
                                  const float *const *kq, int64_t nq, const int64_t *tab,
                                  int64_t wl, int64_t xstr, int64_t ow, int64_t cout, int64_t m,
                                  const int32_t *ix, float *o, int64_t ostep) {
  for (int64_t ox = 0; ox < ow; ox++) {
    const int64_t *tr = tab + ox * wl;
    float *op = o + ox * ostep;
    int64_t f = 0;
    /* Four vectors at once: independent sums hide the adds' latency. */
    for (; f + 64 <= cout; f += 64) {
      DwV a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
      for (int64_t q = 0; q < nq; q++) {
        int64_t idx = tr[tl[q]];
        if (!base[q] || idx < 0) continue;
        const float *xp = base[q] + idx * xstr, *kp = kq[q] + f;
        DW_ADD(a0, xp, f, m, kp);
        DW_ADD(a1, xp, f + 16, m, kp + 16);
        DW_ADD(a2, xp, f + 32, m, kp + 32);
        DW_ADD(a3, xp, f + 48, m, kp + 48);
      }
      memcpy(op + f, &a0, 64), memcpy(op + f + 16, &a1, 64);
      memcpy(op + f + 32, &a2, 64), memcpy(op + f + 48, &a3, 64);
    }
    for (; f + 16 <= cout; f += 16) {
      DwV a0 = {0};
      for (int64_t q = 0; q < nq; q++) {
        int64_t idx = tr[tl[q]];
        if (!base[q] || idx < 0) continue;
        DW_ADD(a0, base[q] + idx * xstr, f, m, kq[q] + f);
      }
      memcpy(op + f, &a0, 64);
    }
    for (; f < cout; f++) {
      float a = 0;
      for (int64_t q = 0; q < nq; q++) {
        int64_t idx = tr[tl[q]];
        if (!base[q] || idx < 0) continue;
        a = a + base[q][idx * xstr + ix[f]] * kq[q][f];
      }
      op[f] = a;
    }
  }
}

typedef struct DwJob {
  const Geo *g;
  const float *L, *K;
  float *O;
  const int32_t *ix;   /* output feature -> input feature */
  int64_t outer;       /* lines per batch element */
  _Atomic bool oom;
} DwJob;

static void dw_lines(void *arg, int64_t lo, int64_t hi) {
  DwJob *j = arg;
  const Geo *g = j->g;
  int n = g->nsp, last = n - 1;
  int64_t nq = g->wpos, m = g->cout / g->fgc;
  /* Per tap: its input line, innermost tap and kernel slice. */
  void *mem = malloc((size_t)(nq ? nq : 1) * (2 * sizeof(float *) + sizeof(int64_t)));
  if (!mem) { j->oom = true; return; }
  const float **base = mem, **kq = base + nq;
  int64_t *tl = (int64_t *)(void *)(kq + nq), s[HLK_MAX_RANK], w[HLK_MAX_RANK];
  for (int64_t q = 0; q < nq; q++) {
    hlk_split_index(q, g->win, n, w);
    kq[q] = j->K + q * g->cout;
    tl[q] = w[last];
  }
  for (int64_t line = lo; line < hi; line++) {
    int64_t b = line / j->outer, ooff = b * g->ostr[g->ob];
    hlk_split_index(line % j->outer, g->out_sz, n - 1, s);
    for (int i = 0; i < last; i++) ooff += s[i] * g->ostr[g->osp[i]];
    for (int64_t q = 0; q < nq; q++) {
      hlk_split_index(q, g->win, n, w);
      int64_t in;
      base[q] = hlk_conv_tap_input(g, b, s, w, last, &in) ? j->L + in : NULL;
    }
    dw_line(base, tl, kq, nq, g->tab[last], g->win[last], g->istr[g->isp[last]], g->out_sz[last],
            g->cout, m, j->ix, j->O + ooff, g->ostr[g->osp[last]]);
  }
  free(mem);
}

/* g with the features innermost in the input and the result. */
static int dw_native(HliExec *x, const HloInstr *ins, const Geo *g, const float *L,
                     const float *K, float *O) {
  int64_t ow = g->out_sz[g->nsp - 1], w[HLK_MAX_RANK];
  /* The kernel as [tap][output feature], whatever its layout (small). */
  float *Kp = hli_scratch_alloc(x, ins, (size_t)(g->wpos * g->cout + 1) * sizeof(float) +
                                              (size_t)g->cout * sizeof(int32_t));
  if (!Kp) return -1;   /* hli_scratch_alloc said why */
  int32_t *ix = (int32_t *)(void *)(Kp + g->wpos * g->cout + 1);
  for (int64_t o = 0; o < g->cout; o++) ix[o] = (int32_t)(o / (g->cout / g->fgc));
  for (int64_t q = 0; q < g->wpos; q++) {
    hlk_split_index(q, g->win, g->nsp, w);
    int64_t koff = 0;
    for (int i = 0; i < g->nsp; i++) koff += hlk_conv_tap_offset(g, i, w[i]);
    for (int64_t o = 0; o < g->cout; o++) Kp[q * g->cout + o] = K[koff + o * g->kstr[g->kout]];
  }
  DwJob j = {.g = g, .L = L, .K = Kp, .O = O, .ix = ix, .outer = ow ? g->srows / ow : 0};
  int64_t lines = g->bout * j.outer;
  size_t work = (size_t)hli_num_threads(x) * (size_t)g->wpos * (2 * sizeof(float *) + sizeof(int64_t));
  int rc = hli_scratch_reserve(x, ins, work);
  if (rc == 0) {
    int64_t per_line = ow * g->wpos * g->cout + 1;
    hli_parallel_for(x, lines, 1 + 65536 / per_line, dw_lines, &j);
    hli_scratch_unreserve(x, work);
    if (j.oom) rc = hli_fail_nomem(x, ins, "out of memory");
  }
  hli_scratch_free(x, Kp);
  return rc;
}

int hlk_conv_dw_f32(HliExec *x, const HloInstr *ins, const Geo *g, const float *L,
                    const float *K, float *O) {
  return hlk_conv_canonical(x, ins, g, L, K, O, dw_native);
}
