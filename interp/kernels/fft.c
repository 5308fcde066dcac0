/* fft.c: the fft opcode (FFT, IFFT, RFFT, IRFFT over the trailing one to
 * three dimensions) and the 1-D complex transform under it.
 *
 * The transform works in double precision for every element type (c64 and
 * f32 results are rounded once at the end), for any length: a recursive
 * mixed-radix Cooley-Tukey for lengths whose prime factors are small, and
 * Bluestein's chirp-z algorithm (a power-of-two convolution) otherwise.
 * Twiddles are computed directly from cos/sin of exact integer fractions of
 * a turn, so errors stay near 1e-15 relative: well inside c128 tolerances.
 *
 * Semantics follow XLA's evaluator: along each transformed dimension the
 * input is truncated or zero-padded to fft_length (IRFFT: to
 * fft_length/2+1 in the last dimension), and output positions beyond the
 * transform are zero; a zero fft_length gives an all-zero result. IRFFT
 * ignores the imaginary parts that a real signal's spectrum cannot have
 * (DC and, for even lengths, Nyquist), like pocketfft/DUCC on XLA:CPU.
 *
 * Not here: layouts (values are logical; the executor handles them). */
#include "interp/kernels/control.h"
#include "interp/kernels/register.h"
#include "interp/kernels/vectorize.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef double complex cplx;

enum { MAX_RADIX = 61, MAX_FACTORS = 64 };

struct HlkFftPlan {
  int64_t n;
  int nfact;
  int64_t fact[MAX_FACTORS];  /* prime factors, small first (mixed radix) */
  cplx *tw;                   /* n roots exp(-2 pi i k/n) (mixed radix) */
  cplx *tmp;                  /* n scratch */
  /* Bluestein (nfact == 0 && n > 1): */
  int64_t m;                  /* power of two >= 2n-1 */
  cplx *chirp;                /* n: exp(-i pi k^2/n) */
  cplx *kern;                 /* m: FFT of the conjugate chirp, wrapped */
  cplx *work;                 /* m scratch */
  HlkFftPlan *sub;            /* plan of length m */
};

/* exp(-2 pi i num/den), num reduced mod den by the caller. */
static cplx root(int64_t num, int64_t den) {
  double a = -2.0 * M_PI * (double)num / (double)den;
  return cos(a) + I * sin(a);
}

/* Recursive decimation in time: out[0..n) = DFT of in[0], in[is], ...
 * using twiddles of the full length N = n * twstep. */
static void mixed_radix(const HlkFftPlan *p, const cplx *in, int64_t is, cplx *out, int64_t n,
                        const int64_t *f, int64_t twstep) {
  int64_t r = f[0], m = n / r;
  const cplx *tw = p->tw;
  if (m == 1) {
    for (int64_t k = 0; k < r; k++) {
      cplx s = 0;
      for (int64_t j = 0; j < r; j++) s += in[j * is] * tw[((j * k) % r) * twstep];
      out[k] = s;
    }
    return;
  }
  for (int64_t j = 0; j < r; j++) mixed_radix(p, in + j * is, is * r, out + j * m, m, f + 1, twstep * r);
  cplx t[MAX_RADIX];
  int64_t rstep = m * twstep;  /* W_r = tw[N/r] */
  for (int64_t k = 0; k < m; k++) {
    for (int64_t j = 0; j < r; j++) t[j] = out[j * m + k] * (j ? tw[j * k * twstep] : 1.0);
    if (r == 2) {
      out[k] = t[0] + t[1];
      out[m + k] = t[0] - t[1];
      continue;
    }
    for (int64_t q = 0; q < r; q++) {
      cplx s = t[0];
      for (int64_t j = 1; j < r; j++) s += t[j] * tw[((j * q) % r) * rstep];
      out[q * m + k] = s;
    }
  }
}

/* The prime factors of n (> 1) up to MAX_RADIX, small first, into fact;
 * true when they are all of them (mixed radix), false when a larger one is
 * left (Bluestein). */
static bool factor(int64_t n, int64_t *fact, int *nfact) {
  int64_t rest = n;
  *nfact = 0;
  for (int64_t f = 2; f <= MAX_RADIX && rest > 1; f++)
    while (rest % f == 0 && *nfact < MAX_FACTORS) {
      fact[(*nfact)++] = f;
      rest /= f;
    }
  return rest == 1;
}

/* Bluestein's convolution length for n: the power of two >= 2n-1. */
static int64_t conv_length(int64_t n) {
  int64_t m = 1;
  while (m < 2 * n - 1) m *= 2;
  return m;
}

size_t hlk_fft_plan_bytes(int64_t n) {
  if (n <= 1) return 0;
  int64_t fact[MAX_FACTORS];
  int nfact;
  if (factor(n, fact, &nfact)) return 2 * (size_t)n * sizeof(cplx);   /* tw, tmp */
  int64_t m = conv_length(n);
  return ((size_t)n + 2 * (size_t)m) * sizeof(cplx) + hlk_fft_plan_bytes(m);   /* chirp, kern, work, sub */
}

HlkFftPlan *hlk_fft_plan_new(int64_t n) {
  HlkFftPlan *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->n = n;
  if (n <= 1) return p;
  if (factor(n, p->fact, &p->nfact)) {
    p->tw = malloc((size_t)n * sizeof *p->tw);
    p->tmp = malloc((size_t)n * sizeof *p->tmp);
    if (!p->tw || !p->tmp) { hlk_fft_plan_free(p); return NULL; }
    for (int64_t k = 0; k < n; k++) p->tw[k] = root(k, n);
    return p;
  }
  /* A large prime factor: Bluestein over the whole length. */
  p->nfact = 0;
  p->m = conv_length(n);
  p->chirp = malloc((size_t)n * sizeof *p->chirp);
  p->kern = calloc((size_t)p->m, sizeof *p->kern);
  p->work = malloc((size_t)p->m * sizeof *p->work);
  p->sub = hlk_fft_plan_new(p->m);
  if (!p->chirp || !p->kern || !p->work || !p->sub) { hlk_fft_plan_free(p); return NULL; }
  for (int64_t k = 0; k < n; k++) {
    /* exp(-i pi k^2/n) = root(k^2 mod 2n, 2n); k^2 computed exactly mod 2n. */
    int64_t k2 = (int64_t)(((unsigned __int128)k * (unsigned __int128)k) % (unsigned __int128)(2 * n));
    p->chirp[k] = root(k2, 2 * n);
  }
  p->kern[0] = conj(p->chirp[0]);
  for (int64_t k = 1; k < n; k++) p->kern[k] = p->kern[p->m - k] = conj(p->chirp[k]);
  hlk_fft_run(p->sub, p->kern, false);
  return p;
}

void hlk_fft_plan_free(HlkFftPlan *p) {
  if (!p) return;
  free(p->tw);
  free(p->tmp);
  free(p->chirp);
  free(p->kern);
  free(p->work);
  hlk_fft_plan_free(p->sub);
  free(p);
}

/* Powers of two from 16: the radix-2 decimation in time of mixed_radix
 * (same butterflies and twiddles; its 2-point leaves multiply by the
 * computed root of -1, these add and subtract, a hair more exact), but
 * iterative over split real and imaginary arrays (the plan's tmp holds
 * both, so the plan's size is unchanged): a bit-reversed load, then
 * log2(n) passes whose butterfly loops vectorize. Only for finite lines:
 * C's complex product recovers some infinite results (Annex G) that these
 * plain products would not. c64[256,4096]: 46 -> 24 ms on one thread;
 * 8.8 -> 6.7 ms since the load goes by cache-line blocks and the store is
 * vector code. */
/* (u, v) <- (u + w v, u - w v), as C's complex product of finite values. */
#define BUTTERFLY(ur, ui, vr, vi, wr, wi)                                        \
  do {                                                                          \
    double tr_ = (vr) * (wr) - (vi) * (wi), ti_ = (vr) * (wi) + (vi) * (wr);    \
    double ar_ = (ur), ai_ = (ui);                                              \
    (ur) = ar_ + tr_;                                                           \
    (ui) = ai_ + ti_;                                                           \
    (vr) = ar_ - tr_;                                                           \
    (vi) = ai_ - ti_;                                                           \
  } while (0)

/* Two radix-2 levels (halves h and 2h) in one pass over blocks of 4h: the
 * same butterflies in the same order per element, half the memory traffic.
 * W1, WA, WB(k): the twiddles of the two levels for position k. */
#define TWO_LEVELS(HALF, W1R, W1I, WAR, WAI, WBR, WBI)                            \
  for (int64_t s = 0; s < n; s += 4 * (HALF)) {                                  \
    double *r0 = re + s, *r1 = r0 + (HALF), *r2 = r1 + (HALF), *r3 = r2 + (HALF); \
    double *i0 = im + s, *i1 = i0 + (HALF), *i2 = i1 + (HALF), *i3 = i2 + (HALF); \
    for (int64_t k = 0; k < (HALF); k++) {                                       \
      double w1r = (W1R), w1i = (W1I), war = (WAR), wai = (WAI);                 \
      double wbr = (WBR), wbi = (WBI);                                           \
      double a0r = r0[k], a0i = i0[k], a1r = r1[k], a1i = i1[k];                 \
      double a2r = r2[k], a2i = i2[k], a3r = r3[k], a3i = i3[k];                 \
      BUTTERFLY(a0r, a0i, a1r, a1i, w1r, w1i);                                   \
      BUTTERFLY(a2r, a2i, a3r, a3i, w1r, w1i);                                   \
      BUTTERFLY(a0r, a0i, a2r, a2i, war, wai);                                   \
      BUTTERFLY(a1r, a1i, a3r, a3i, wbr, wbi);                                   \
      r0[k] = a0r; i0[k] = a0i; r1[k] = a1r; i1[k] = a1i;                        \
      r2[k] = a2r; i2[k] = a2i; r3[k] = a3r; i3[k] = a3i;                        \
    }                                                                            \
  }

/* A pass whose half H is known to the compiler: its twiddles gathered once
 * into contiguous arrays, and its short inner loop unrolled into vector
 * code (across the k of a block) instead of running a few iterations. */
#define SMALL_PASS(H)                                                            \
  {                                                                              \
    double w[6][H];                                                              \
    int64_t s1 = n / (2 * (H)), s2 = n / (4 * (H));                              \
    for (int64_t k = 0; k < (H); k++) {                                          \
      w[0][k] = creal(tw[k * s1]), w[1][k] = cimag(tw[k * s1]);                  \
      w[2][k] = creal(tw[k * s2]), w[3][k] = cimag(tw[k * s2]);                  \
      w[4][k] = creal(tw[(k + (H)) * s2]), w[5][k] = cimag(tw[(k + (H)) * s2]);  \
    }                                                                            \
    TWO_LEVELS(H, w[0][k], w[1][k], w[2][k], w[3][k], w[4][k], w[5][k])          \
  }

HLK_VECTORIZE static void butterflies(double *restrict re, double *restrict im,
                                      const cplx *tw, int64_t n) {
  int64_t half = 1;
  int levels = 0;
  while ((1ll << levels) < n) levels++;
  if (levels % 2) {   /* an odd count: one plain level first */
    double w0r = creal(tw[0]), w0i = cimag(tw[0]);   /* 1 and -0 */
    for (int64_t s = 0; s < n; s += 2) BUTTERFLY(re[s], im[s], re[s + 1], im[s + 1], w0r, w0i);
    half = 2;
  }
  for (; half < n; half *= 4) {
    switch (half) {
    case 1: SMALL_PASS(1) break;
    case 2: SMALL_PASS(2) break;
    case 4: SMALL_PASS(4) break;
    case 8: SMALL_PASS(8) break;
    default: {
      int64_t s1 = n / (2 * half), s2 = n / (4 * half);   /* the two levels' twiddle steps */
      TWO_LEVELS(half, creal(tw[k * s1]), cimag(tw[k * s1]), creal(tw[k * s2]),
                 cimag(tw[k * s2]), creal(tw[(k + half) * s2]), cimag(tw[(k + half) * s2]))
    }
    }
  }
}

/* The 32 bits of v in reverse order, without branches (a carry loop
 * mispredicts about once per element). */
static inline uint32_t bit_reverse32(uint32_t v) {
  v = ((v >> 1) & 0x55555555u) | ((v & 0x55555555u) << 1);
  v = ((v >> 2) & 0x33333333u) | ((v & 0x33333333u) << 2);
  v = ((v >> 4) & 0x0f0f0f0fu) | ((v & 0x0f0f0f0fu) << 4);
  return __builtin_bswap32(v);
}

/* The split working arrays back into a typed line (inverse: conjugated and
 * scaled by 1/n, one rounding each): vector code, one IEEE operation per
 * element. */
HLK_VECTORIZE static void store_line_c64(const double *restrict re, const double *restrict im,
                                         float *restrict o, int64_t n, bool inverse) {
  double s = 1.0 / (double)n;
  if (inverse) {
    for (int64_t i = 0; i < n; i++)
      o[2 * i] = (float)(re[i] * s), o[2 * i + 1] = (float)(-im[i] * s);
  } else {
    for (int64_t i = 0; i < n; i++) o[2 * i] = (float)re[i], o[2 * i + 1] = (float)im[i];
  }
}
HLK_VECTORIZE static void store_line_c128(const double *restrict re, const double *restrict im,
                                          double *restrict o, int64_t n, bool inverse) {
  double s = 1.0 / (double)n;
  if (inverse) {
    for (int64_t i = 0; i < n; i++) o[2 * i] = re[i] * s, o[2 * i + 1] = -im[i] * s;
  } else {
    for (int64_t i = 0; i < n; i++) o[2 * i] = re[i], o[2 * i + 1] = im[i];
  }
}

/* One line of n complex elements of type t (c64 or c128) from src to dst,
 * transformed (inverse: conjugated around the forward transform and scaled,
 * as hlk_fft_run does) straight between the typed arrays and the split
 * working arrays: a power of two from 16 with finite values only (else
 * false, and nothing is written; src may be dst: it is read whole first).
 * The same operations as loading the line into a c128 array and running
 * hlk_fft_run on it, so the same bits. */
static bool pow2_line(HlkFftPlan *p, HloDtype t, const void *src, void *dst, bool inverse) {
  int64_t n = p->n;
  if (n < 16 || n > ((int64_t)1 << 31) || (n & (n - 1)) || !p->nfact) return false;
  double *re = (double *)p->tmp, *im = re + n, sign = inverse ? -1.0 : 1.0;
  const float *sf = src;
  const double *sd = src;
  bool finite = true;
  /* The bit-reversed permutation in blocks of cache lines (COBRA): with
   * n = 2^L, element r = (a, b, c), a and c of q bits, goes to (rev c,
   * rev b, rev a). For each middle b, 2^q runs of 2^q consecutive c are read
   * and as many runs of consecutive rev a written, so each line is used
   * whole while it is cached (q = 3: eight c64 elements, one line). */
  int L = __builtin_ctzll((unsigned long long)n), q = L >= 6 ? 3 : 2, m = L - 2 * q;
  int64_t hs = L - q, side = (int64_t)1 << q, revq[8];
  for (int64_t x = 0; x < side; x++) revq[x] = bit_reverse32((uint32_t)x) >> (32 - q);
  for (int64_t b = 0; b < (int64_t)1 << m; b++) {
    int64_t rb = m ? (int64_t)(bit_reverse32((uint32_t)b) >> (32 - m)) : 0;
    for (int64_t c = 0; c < side; c++) {
      int64_t dbase = revq[c] << hs | rb << q, sbase = b << q | c;
      for (int64_t a = 0; a < side; a++) {
        int64_t si = a << hs | sbase, di = dbase | revq[a];
        double x = t == HLO_C64 ? sf[2 * si] : sd[2 * si];
        double y = t == HLO_C64 ? sf[2 * si + 1] : sd[2 * si + 1];
        finite = finite && isfinite(x) && isfinite(y);
        re[di] = x;
        im[di] = sign * y;   /* conj: exact */
      }
    }
  }
  if (!finite) return false;
  butterflies(re, im, p->tw, n);
  if (t == HLO_C64) store_line_c64(re, im, dst, n, inverse);
  else store_line_c128(re, im, dst, n, inverse);
  return true;
}

static void forward(HlkFftPlan *p, cplx *d) {
  int64_t n = p->n;
  if (n <= 1) return;
  if (pow2_line(p, HLO_C128, d, d, false)) return;   /* a cplx array is c128 */
  if (p->nfact) {
    memcpy(p->tmp, d, (size_t)n * sizeof *d);
    mixed_radix(p, p->tmp, 1, d, n, p->fact, 1);
    return;
  }
  int64_t m = p->m;
  for (int64_t k = 0; k < n; k++) p->work[k] = d[k] * p->chirp[k];
  for (int64_t k = n; k < m; k++) p->work[k] = 0;
  hlk_fft_run(p->sub, p->work, false);
  for (int64_t k = 0; k < m; k++) p->work[k] *= p->kern[k];
  hlk_fft_run(p->sub, p->work, true);
  for (int64_t k = 0; k < n; k++) d[k] = p->work[k] * p->chirp[k];
}

void hlk_fft_run(HlkFftPlan *p, cplx *d, bool inverse) {
  if (!inverse) {
    forward(p, d);
    return;
  }
  /* ifft(x) = conj(fft(conj(x))) / n */
  int64_t n = p->n;
  for (int64_t k = 0; k < n; k++) d[k] = conj(d[k]);
  forward(p, d);
  double s = n ? 1.0 / (double)n : 1.0;
  for (int64_t k = 0; k < n; k++) d[k] = conj(d[k]) * s;
}

/* ---- The fft opcode ----------------------------------------------------- */

/* Load element i of an array (real or complex of any float width) as cplx. */
static inline cplx load_c(HloDtype t, const void *data, int64_t i) {
  switch (t) {
  case HLO_C64: { const float *f = (const float *)data + 2 * i; return f[0] + I * f[1]; }
  case HLO_C128: { const double *f = (const double *)data + 2 * i; return f[0] + I * f[1]; }
  case HLO_F32: return ((const float *)data)[i];
  case HLO_F64: return ((const double *)data)[i];
  default: return 0;
  }
}

static inline void store_c(HloDtype t, void *data, int64_t i, cplx v) {
  switch (t) {
  case HLO_C64: { float *f = (float *)data + 2 * i; f[0] = (float)creal(v); f[1] = (float)cimag(v); return; }
  case HLO_C128: { double *f = (double *)data + 2 * i; f[0] = creal(v); f[1] = cimag(v); return; }
  case HLO_F32: ((float *)data)[i] = (float)creal(v); return;
  case HLO_F64: ((double *)data)[i] = creal(v); return;
  default: return;
  }
}

/* Lines are shared out among threads, a few per task so that plans (n
 * sines and cosines each) stay few next to the work; each worker builds its
 * own plan and line buffer (the plan's scratch is per call), so every line
 * is transformed exactly as on one thread. */
typedef struct LineJob {
  int64_t n;
  bool inverse, oom;
  /* transform_dim: lines of the work array a along a dimension whose
   * elements lie inner apart */
  cplx *a;
  int64_t inner;
  /* transform_direct: the operand's and the result's last-dimension lines,
   * of ns and nd elements of types ts and td */
  HloFftType kind;
  HloDtype ts, td;
  int64_t ns, nd;
  const char *src;
  char *dst;
} LineJob;

/* One line straight from the operand into the result. FFT/IFFT of a power
 * of two go through pow2_line; the rest load a c128 line (RFFT: the real
 * signal; IRFFT: the half spectrum extended by its conjugate symmetry, as
 * run_fft does) and store what the result keeps of it (RFFT: the first
 * n/2+1; IRFFT: the real parts). hi: the end of this worker's lines. */
static void direct_line(const LineJob *j, int64_t l, int64_t hi, HlkFftPlan *p, cplx *line) {
  size_t sbytes = (size_t)j->ns * hlc_dtype_size(j->ts);
  const char *src = j->src + (size_t)l * sbytes;
  char *dst = j->dst + (size_t)l * (size_t)j->nd * hlc_dtype_size(j->td);
  /* The next line into the cache while this one runs: pow2_line reads its
   * line as eight interleaved streams (bit-reversed blocks), which the
   * hardware may not follow. */
  if (l + 1 < hi)
    for (size_t b = 0; b < sbytes; b += 64) __builtin_prefetch(src + sbytes + b, 0, 2);
  bool complex_io = j->kind == HLO_FFT_FFT || j->kind == HLO_FFT_IFFT;
  if (complex_io && pow2_line(p, j->ts, src, dst, j->inverse)) return;
  int64_t n = j->n;
  if (j->kind == HLO_FFT_IRFFT) {
    for (int64_t k = 0; k < n; k++)
      line[k] = k < j->ns ? load_c(j->ts, src, k) : conj(load_c(j->ts, src, n - k));
  } else {
    for (int64_t k = 0; k < n; k++) line[k] = load_c(j->ts, src, k);
  }
  hlk_fft_run(p, line, j->inverse);
  for (int64_t k = 0; k < j->nd; k++) store_c(j->td, dst, k, line[k]);
}

/* hi: the end of this worker's lines. */
static void one_line(const LineJob *j, int64_t l, int64_t hi, HlkFftPlan *p, cplx *line) {
  if (!j->a) {
    direct_line(j, l, hi, p, line);
    return;
  }
  int64_t o = l / j->inner, in = l % j->inner;
  cplx *base = j->a + o * j->n * j->inner + in;
  for (int64_t k = 0; k < j->n; k++) line[k] = base[k * j->inner];
  hlk_fft_run(p, line, j->inverse);
  for (int64_t k = 0; k < j->n; k++) base[k * j->inner] = line[k];
}

static void run_lines_chunk(void *arg, int64_t lo, int64_t hi) {
  LineJob *j = arg;
  HlkFftPlan *p = hlk_fft_plan_new(j->n);
  cplx *line = malloc((size_t)j->n * sizeof *line);
  if (!p || !line) {
    j->oom = true;
  } else {
    for (int64_t l = lo; l < hi; l++) one_line(j, l, hi, p, line);
  }
  hlk_fft_plan_free(p);
  free(line);
}

/* Transform `lines` lines of j; each working thread's plan arrays and line
 * buffer are counted against --max-memory first. -1 after reporting an
 * error. */
static int run_lines(HliExec *x, const HloInstr *ins, LineJob *j, int64_t lines) {
  int64_t min_lines = 65536 / j->n + 1, workers = lines / min_lines;
  if (workers > hli_num_threads(x)) workers = hli_num_threads(x);
  if (workers < 1) workers = 1;
  size_t need = (hlk_fft_plan_bytes(j->n) + (size_t)j->n * sizeof(cplx)) * (size_t)workers;
  if (hli_scratch_reserve(x, ins, need)) return -1;
  hli_parallel_for(x, lines, min_lines, run_lines_chunk, j);
  hli_scratch_unreserve(x, need);
  return j->oom ? hli_fail_nomem(x, ins, "out of memory") : 0;
}

/* A 1-D transform over the whole last dimension (FFT/IFFT: of length n;
 * RFFT: n real values to n/2+1; IRFFT: n/2+1 to n real values): each line
 * straight from the operand into the result (no work arrays, no zero
 * fill, no conversion passes), with the values the general path computes. */
static int transform_direct(HliExec *x, const HloInstr *ins, const HliValue *src, HliValue *out) {
  HloFftType ty = ins->fft_type;
  LineJob j = {.n = ins->fft_length.v[0], .inverse = ty == HLO_FFT_IFFT || ty == HLO_FFT_IRFFT,
               .kind = ty, .ts = src->dtype, .td = out->dtype,
               .ns = src->dims[src->rank - 1], .nd = out->dims[out->rank - 1],
               .src = src->data, .dst = out->data};
  return run_lines(x, ins, &j, src->nelem / j.ns);
}

/* Does the fft run line by line from operand to result (transform_direct)?
 * One transformed dimension, the whole of it (no truncation or padding). */
static bool direct_fits(const HloInstr *ins, const HliValue *src, const HliValue *out) {
  int64_t n = ins->fft_length.v[0], ns = src->dims[src->rank - 1];
  int64_t nd = out->dims[out->rank - 1], h = n / 2 + 1;
  if (ins->fft_length.n != 1 || n <= 0 || src->nelem == 0) return false;
  switch (ins->fft_type) {
  case HLO_FFT_FFT: case HLO_FFT_IFFT: return ns == n && nd == n;
  case HLO_FFT_RFFT: return ns == n && nd == h;
  default: return ns == h && nd == n;
  }
}

/* Transform every line of a row-major complex array of dims d (rank r)
 * along dimension k, in place. */
static int transform_dim(HliExec *x, const HloInstr *ins, cplx *a, const int64_t *d, int32_t r,
                         int32_t k, bool inverse) {
  int64_t n = d[k], outer = 1, inner = 1;
  if (n <= 1) return 0;
  for (int32_t i = 0; i < k; i++) outer *= d[i];
  for (int32_t i = k + 1; i < r; i++) inner *= d[i];
  if (outer * inner == 0) return 0;
  LineJob j = {.n = n, .inverse = inverse, .a = a, .inner = inner};
  return run_lines(x, ins, &j, outer * inner);
}

/* A shape of up to 16 dimensions (the work arrays' extents). */
typedef struct Box { int32_t rank; int64_t dims[16]; } Box;

/* Copy between two arrays of the same rank whose extents may differ:
 * positions inside both are copied, the rest of the destination keeps its
 * (zero) contents. Source and destination are each either a typed array or
 * a complex work array. */
static void copy_common(HloDtype t, const Box *a, const Box *b, const void *src_typed,
                        cplx *src_work, cplx *dst_work, void *dst_typed) {
  int32_t r = a->rank;
  int64_t common[16], sa[16], sb[16], idx[16];
  int64_t total = 1;
  for (int32_t i = 0; i < r; i++) {
    common[i] = a->dims[i] < b->dims[i] ? a->dims[i] : b->dims[i];
    total *= common[i];
    idx[i] = 0;
  }
  hli_strides(a->dims, r, sa);
  hli_strides(b->dims, r, sb);
  for (int64_t n = 0; n < total; n++) {
    int64_t oa = 0, ob = 0;
    for (int32_t i = 0; i < r; i++) { oa += idx[i] * sa[i]; ob += idx[i] * sb[i]; }
    cplx v = src_typed ? load_c(t, src_typed, oa) : src_work[oa];
    if (dst_typed) store_c(t, dst_typed, ob, v);
    else dst_work[ob] = v;
    for (int32_t i = r - 1; i >= 0; i--) {
      if (++idx[i] < common[i]) break;
      idx[i] = 0;
    }
  }
}

static int check_fft(HliExec *x, const HloInstr *ins) {
  const HloShape *in = &ins->ops[0]->shape, *out = &ins->shape;
  int32_t L = ins->fft_length.n;
  if (L < 1 || L > 3) return hli_fail(x, ins, "fft_length must have 1 to 3 entries, has %d", L);
  if (in->rank < L || out->rank != in->rank)
    return hli_fail(x, ins, "operand rank %d does not fit %d transformed dimensions", in->rank, L);
  if (in->rank > 16) return hli_unsupported(x, ins, "fft of rank %d (at most 16)", in->rank);
  if (in->dynamic || out->dynamic) return hli_unsupported(x, ins, "fft with dynamic dimensions");
  for (int32_t i = 0; i < L; i++)
    if (ins->fft_length.v[i] < 0) return hli_fail(x, ins, "negative fft_length");
  HloDtype ti = in->dtype, to = out->dtype;
  bool ok;
  switch (ins->fft_type) {
  case HLO_FFT_FFT: case HLO_FFT_IFFT:
    ok = (ti == HLO_C64 || ti == HLO_C128) && to == ti; break;
  case HLO_FFT_RFFT:
    ok = (ti == HLO_F32 && to == HLO_C64) || (ti == HLO_F64 && to == HLO_C128); break;
  default:
    ok = (ti == HLO_C64 && to == HLO_F32) || (ti == HLO_C128 && to == HLO_F64); break;
  }
  if (!ok)
    return hli_fail(x, ins, "element types %s -> %s do not fit this fft_type",
                    hlc_dtype_name(ti), hlc_dtype_name(to));
  for (int32_t i = 0; i < in->rank - L; i++)
    if (in->dims[i] != out->dims[i]) return hli_fail(x, ins, "batch dimensions differ");
  return 0;
}

static int run_fft(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (check_fft(x, ins)) return -1;
  const HliValue *src = in[0];
  int32_t r = src->rank, L = ins->fft_length.n, b = r - L;
  const int64_t *fl = ins->fft_length.v;
  HloFftType ty = ins->fft_type;
  if (direct_fits(ins, src, out)) return transform_direct(x, ins, src, out);
  memset(out->data, 0, out->nbytes);
  for (int32_t i = 0; i < L; i++)
    if (fl[i] == 0) return 0;
  if (out->nelem == 0) return 0;

  /* Work array: batch dims + transform lengths; for RFFT/IRFFT the last
   * one is the half spectrum at the complex stage. */
  Box sbox = {r, {0}}, obox = {r, {0}}, full = {r, {0}}, half = {r, {0}};
  int64_t last = fl[L - 1], h = last / 2 + 1;
  for (int32_t i = 0; i < r; i++) {
    sbox.dims[i] = src->dims[i];
    obox.dims[i] = out->dims[i];
    full.dims[i] = half.dims[i] = i < b ? src->dims[i] : fl[i - b];
  }
  half.dims[r - 1] = h;
  int64_t nfull = 1, nhalf = 1;
  for (int32_t i = 0; i < r; i++) { nfull *= full.dims[i]; nhalf *= half.dims[i]; }
  /* Work arrays, zeroed (padding), counted against --max-memory. */
  bool real = ty == HLO_FFT_RFFT || ty == HLO_FFT_IRFFT;
  cplx *w = hli_scratch_alloc(x, ins, (size_t)nfull * sizeof *w), *hw = NULL;
  if (!w) return -1;
  if (real && !(hw = hli_scratch_alloc(x, ins, (size_t)nhalf * sizeof *hw))) {
    hli_scratch_free(x, w);
    return -1;
  }
  memset(w, 0, (size_t)nfull * sizeof *w);
  if (hw) memset(hw, 0, (size_t)nhalf * sizeof *hw);
  int rc = 0;
  switch (ty) {
  case HLO_FFT_FFT: case HLO_FFT_IFFT:
    copy_common(src->dtype, &sbox, &full, src->data, NULL, w, NULL);
    for (int32_t k = b; k < r && !rc; k++) rc = transform_dim(x, ins, w, full.dims, r, k, ty == HLO_FFT_IFFT);
    if (!rc) copy_common(out->dtype, &full, &obox, NULL, w, NULL, out->data);
    break;
  case HLO_FFT_RFFT:
    copy_common(src->dtype, &sbox, &full, src->data, NULL, w, NULL);
    rc = transform_dim(x, ins, w, full.dims, r, r - 1, false);
    if (!rc) copy_common(HLO_C128, &full, &half, NULL, w, hw, NULL);
    for (int32_t k = b; k < r - 1 && !rc; k++) rc = transform_dim(x, ins, hw, half.dims, r, k, false);
    if (!rc) copy_common(out->dtype, &half, &obox, NULL, hw, NULL, out->data);
    break;
  case HLO_FFT_IRFFT: {
    copy_common(src->dtype, &sbox, &half, src->data, NULL, hw, NULL);
    for (int32_t k = b; k < r - 1 && !rc; k++) rc = transform_dim(x, ins, hw, half.dims, r, k, true);
    if (rc) break;
    /* Hermitian extension of every last-dimension line, then the inverse
     * transform; the real part is the signal. */
    int64_t lines = nhalf / h;
    for (int64_t li = 0; li < lines; li++) {
      cplx *hl = hw + li * h, *fl_ = w + li * last;
      for (int64_t k = 0; k < last; k++) fl_[k] = k < h ? hl[k] : conj(hl[last - k]);
    }
    rc = transform_dim(x, ins, w, full.dims, r, r - 1, true);
    if (!rc) {
      for (int64_t i = 0; i < nfull; i++) w[i] = creal(w[i]);
      copy_common(out->dtype, &full, &obox, NULL, w, NULL, out->data);
    }
    break;
  }
  }
  hli_scratch_free(x, w);
  hli_scratch_free(x, hw);
  return rc;   /* transform_dim reported any error */
}

void hlk_register_fft(HliOpTable t) { t[HLO_OP_FFT] = (HliOpEntry){run_fft, check_fft}; }
