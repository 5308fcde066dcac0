/* sort.c: the sort kernel (k operands sorted together along one dimension by
 * a comparator over 2k scalars) and topk (k largest or smallest along the
 * last dimension, with s32 indices).
 *
 * Sorting is always stable (a radix sort of keys for rows of 256 and more, a
 * merge sort otherwise): a stable result is a valid result for
 * is_stable=false too, and it matches XLA's stable_sort-based evaluator.
 * Recognised comparators (compare LT/GT of operand 0's pair, plain or after
 * JAX's -0/NaN canonicalisation) sort 64-bit keys that order exactly as the
 * comparator does; a FLOAT compare over a row holding NaNs (not a strict
 * weak order) sorts with the float comparison itself. Other comparators run
 * per comparison through hli_call.
 *
 * topk orders floats by total order (-NaN < -inf < ... < -0 < +0 < ... <
 * +inf < +NaN), integers by value; ties keep the lower index first. */
#include "interp/kernels/reducer.h"
#include "interp/kernels/vectorize.h"
#include <stdlib.h>
#include <string.h>

enum { RUN = 24 };   /* insertion-sorted run length before merging */

/* ---- Stable merge sort of (key, index) pairs ------------------------- */

typedef struct KeyIdx { uint64_t key; int64_t idx; } KeyIdx;

static void merge_sort_pairs(KeyIdx *a, KeyIdx *tmp, int64_t n) {
  for (int64_t lo = 0; lo < n; lo += RUN) {
    int64_t hi = lo + RUN < n ? lo + RUN : n;
    for (int64_t i = lo + 1; i < hi; i++) {
      KeyIdx v = a[i];
      int64_t j = i;
      while (j > lo && v.key < a[j - 1].key) { a[j] = a[j - 1]; j--; }
      a[j] = v;
    }
  }
  KeyIdx *src = a, *dst = tmp;
  for (int64_t w = RUN; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      int64_t i = lo, j = mid, o = lo;
      while (i < mid && j < hi) dst[o++] = src[j].key < src[i].key ? src[j++] : src[i++];
      while (i < mid) dst[o++] = src[i++];
      while (j < hi) dst[o++] = src[j++];
    }
    KeyIdx *t = src; src = dst; dst = t;
  }
  if (src != a) memcpy(a, src, (size_t)n * sizeof *a);
}

/* LSD radix sorts: stable like the merge sort, so the same order, in a few
 * linear passes instead of log2(n / RUN) merges. Only the bits that differ
 * between keys are sorted on (the upper half of an f32 key is constant, say):
 * `any` and `all` are the OR and AND of every key. */

/* Keys whose differing bits fit a 32-bit window [lo, lo + width): packed as
 * (window << 32 | position) into 8 bytes, sorted in passes of up to 11 bits
 * (three for f32), then unpacked; bits outside the window are `all`'s. */
/* LSD passes over the n words at SRC (TMP: n more, the same type T): the
 * field of `width` bits at bit SHIFT0 is sorted in the fewest passes of at
 * most DIGIT bits, counted in one sweep; the sorted words end in SRC
 * (copied back when the passes end in TMP). */
#define LSD_PASSES(T, DIGIT, SRC, TMP, N, SHIFT0, WIDTH)                               \
  do {                                                                                 \
    int npass_ = ((WIDTH) + (DIGIT) - 1) / (DIGIT);                                    \
    int bits_ = ((WIDTH) + npass_ - 1) / npass_;                                       \
    uint32_t dmask_ = (1u << bits_) - 1;                                               \
    uint32_t count_[(32 + (DIGIT) - 1) / (DIGIT)][1 << (DIGIT)];                       \
    memset(count_, 0, sizeof count_);                                                  \
    T *src_ = (SRC), *dst_ = (TMP);                                                    \
    for (int64_t i = 0; i < (N); i++)                                                  \
      for (int k = 0; k < npass_; k++) count_[k][(src_[i] >> ((SHIFT0) + k * bits_)) & dmask_]++; \
    for (int k = 0; k < npass_; k++) {                                                 \
      uint32_t sum_ = 0;                                                               \
      for (uint32_t d = 0; d <= dmask_; d++) {                                         \
        uint32_t c_ = count_[k][d];                                                    \
        count_[k][d] = sum_;                                                           \
        sum_ += c_;                                                                    \
      }                                                                                \
      int sh_ = (SHIFT0) + k * bits_;                                                  \
      for (int64_t i = 0; i < (N); i++) dst_[count_[k][(src_[i] >> sh_) & dmask_]++] = src_[i]; \
      T *t_ = src_; src_ = dst_; dst_ = t_;                                            \
    }                                                                                  \
    if (src_ != (SRC)) memcpy((SRC), src_, (size_t)(N) * sizeof(T));                   \
  } while (0)

static void radix_sort_packed(KeyIdx *a, KeyIdx *tmp, int64_t n, uint64_t all, int lo, int width) {
  uint64_t *p = (uint64_t *)tmp, *q = p + n;   /* tmp holds 2n such words */
  uint64_t wmask = (1ull << width) - 1;
  for (int64_t i = 0; i < n; i++) p[i] = ((a[i].key >> lo) & wmask) << 32 | (uint32_t)a[i].idx;
  LSD_PASSES(uint64_t, 11, p, q, n, 32, width);   /* 11-bit digits: 24 KiB of counts */
  uint64_t keep = all & ~(wmask << lo);
  for (int64_t i = 0; i < n; i++) {
    a[i].key = keep | (p[i] >> 32) << lo;
    a[i].idx = (uint32_t)p[i];
  }
}

/* Any keys: a byte per pass over the 16-byte pairs. */
static void radix_sort_bytes(KeyIdx *a, KeyIdx *tmp, int64_t n, uint64_t vary) {
  int shifts[8], np = 0;
  for (int b = 0; b < 8; b++)
    if (((vary >> (8 * b)) & 0xff) != 0) shifts[np++] = 8 * b;
  uint32_t count[8][256];
  memset(count, 0, sizeof(count[0]) * (size_t)np);
  for (int64_t i = 0; i < n; i++)
    for (int k = 0; k < np; k++) count[k][(a[i].key >> shifts[k]) & 0xff]++;
  KeyIdx *src = a, *dst = tmp;
  for (int k = 0; k < np; k++) {
    uint32_t at[256], sum = 0;
    for (int d = 0; d < 256; d++) {
      at[d] = sum;
      sum += count[k][d];
    }
    for (int64_t i = 0; i < n; i++) dst[at[(src[i].key >> shifts[k]) & 0xff]++] = src[i];
    KeyIdx *t = src; src = dst; dst = t;
  }
  if (src != a) memcpy(a, src, (size_t)n * sizeof *a);
}

/* Stable sort by key of pairs whose idx is their position (0..n-1); tmp has
 * room for n more pairs. */
static void sort_pairs(KeyIdx *a, KeyIdx *tmp, int64_t n) {
  if (n < 256 || n > UINT32_MAX) {
    merge_sort_pairs(a, tmp, n);
    return;
  }
  uint64_t any = 0, all = ~0ull;
  for (int64_t i = 0; i < n; i++) {
    any |= a[i].key;
    all &= a[i].key;
  }
  uint64_t vary = any ^ all;
  if (vary == 0) return;   /* equal keys: already in stable order */
  int lo = __builtin_ctzll(vary), width = 64 - __builtin_clzll(vary) - lo;
  if (width <= 32) radix_sort_packed(a, tmp, n, all, lo, width);
  else radix_sort_bytes(a, tmp, n, vary);
}

/* ---- Stable merge sort of indices with a comparison callback ---------- */

/* less(ctx, a, b): 1 if a must come before b, 0 if not, -1 on error. */
typedef int (*LessFn)(void *ctx, int64_t a, int64_t b);

static int sort_indices(int64_t *a, int64_t *tmp, int64_t n, LessFn less, void *ctx) {
  for (int64_t lo = 0; lo < n; lo += RUN) {
    int64_t hi = lo + RUN < n ? lo + RUN : n;
    for (int64_t i = lo + 1; i < hi; i++) {
      int64_t v = a[i], j = i;
      while (j > lo) {
        int r = less(ctx, v, a[j - 1]);
        if (r < 0) return -1;
        if (!r) break;
        a[j] = a[j - 1];
        j--;
      }
      a[j] = v;
    }
  }
  int64_t *src = a, *dst = tmp;
  for (int64_t w = RUN; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      int64_t i = lo, j = mid, o = lo;
      while (i < mid && j < hi) {
        int r = less(ctx, src[j], src[i]);
        if (r < 0) return -1;
        dst[o++] = r ? src[j++] : src[i++];
      }
      while (i < mid) dst[o++] = src[i++];
      while (j < hi) dst[o++] = src[j++];
    }
    int64_t *t = src; src = dst; dst = t;
  }
  if (src != a) memcpy(a, src, (size_t)n * sizeof *a);
  return 0;
}

/* ---- Keys ---------------------------------------------------------------- */

typedef enum KeyMode { KEY_SIGNED, KEY_UNSIGNED, KEY_TOTAL, KEY_FLOAT, KEY_CANON } KeyMode;

/* Bit pattern of float element p (width bits) and its format's masks. */
static uint64_t float_bits(HloDtype t, const char *p) {
  switch (t) {
  case HLO_F16: case HLO_BF16: { uint16_t v; memcpy(&v, p, 2); return v; }
  case HLO_F32: { uint32_t v; memcpy(&v, p, 4); return v; }
  default: { uint64_t v; memcpy(&v, p, 8); return v; }
  }
}

/* Exponent-all-ones mask (= +inf bits) of a float type. */
static uint64_t inf_bits(HloDtype t) {
  switch (t) {
  case HLO_F16: return 0x7c00;
  case HLO_BF16: return 0x7f80;
  case HLO_F32: return 0x7f800000u;
  default: return 0x7ff0000000000000ull;
  }
}

/* Fills keys[0..n) for the elements at p, p+s, ... (s in bytes). Returns
 * true if the mode is KEY_FLOAT and some element is a NaN (the keys are
 * then not usable). */
static bool make_keys(HloDtype t, KeyMode m, const char *p, int64_t s, int64_t n, KeyIdx *keys) {
  if (m == KEY_SIGNED || m == KEY_UNSIGNED) {
    int w = 8 * (int)hlc_dtype_size(t);
    uint64_t wmask = w == 64 ? ~0ull : (1ull << w) - 1;
    for (int64_t i = 0; i < n; i++, p += s) {
      int64_t v;
      switch (t) {
      case HLO_PRED: case HLO_U8: v = *(const uint8_t *)p; break;
      case HLO_S8: v = *(const int8_t *)p; break;
      case HLO_U16: { uint16_t x; memcpy(&x, p, 2); v = x; break; }
      case HLO_S16: { int16_t x; memcpy(&x, p, 2); v = x; break; }
      case HLO_U32: { uint32_t x; memcpy(&x, p, 4); v = x; break; }
      case HLO_S32: { int32_t x; memcpy(&x, p, 4); v = x; break; }
      default: memcpy(&v, p, 8); break;
      }
      /* signed: offset binary in the type's own width, so keys of narrow
       * types differ only in their low bits (fewer radix passes) */
      keys[i].key = m == KEY_SIGNED ? ((uint64_t)v ^ (1ull << (w - 1))) & wmask : (uint64_t)v;
      keys[i].idx = i;
    }
    return false;
  }
  int bits = hlc_dtype_bits(t);
  uint64_t sign = 1ull << (bits - 1), mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
  uint64_t inf = inf_bits(t), qnan = inf | ((inf >> 1) & ~inf);   /* +inf | top mantissa bit */
  bool nan = false;
  if (t == HLO_F32 && m != KEY_TOTAL) {   /* the common case, without the per-element switch */
    for (int64_t i = 0; i < n; i++, p += s) {
      uint32_t b;
      memcpy(&b, p, 4);
      uint32_t mag = b & 0x7fffffffu;
      if (mag == 0) b = 0;
      if (mag > 0x7f800000u) {
        nan = true;
        b = 0x7fc00000u;
      }
      keys[i].key = b & 0x80000000u ? ~b : b | 0x80000000u;
      keys[i].idx = i;
    }
    return m == KEY_FLOAT && nan;
  }
  for (int64_t i = 0; i < n; i++, p += s) {
    uint64_t b = float_bits(t, p), mag = b & ~sign & mask;
    if (m == KEY_FLOAT || m == KEY_CANON) {
      if (mag == 0) b = 0;                      /* -0 == +0 */
      if (mag > inf) {
        nan = true;
        b = qnan;                               /* CANON: every NaN is +NaN */
      }
    }
    keys[i].key = b & sign ? ~b & mask : b | sign;
    keys[i].idx = i;
  }
  return m == KEY_FLOAT && nan;
}

/* FLOAT comparison of two elements, for rows holding NaNs. */
typedef struct FloatCtx { HloDtype t; const char *p; int64_t s; bool desc; } FloatCtx;
static double load_float(HloDtype t, const char *p) {
  switch (t) {
  case HLO_F16: { uint16_t v; memcpy(&v, p, 2); return hlk_f16_to_f32(v); }
  case HLO_BF16: { uint16_t v; memcpy(&v, p, 2); return hlk_bf16_to_f32(v); }
  case HLO_F32: { float v; memcpy(&v, p, 4); return v; }
  default: { double v; memcpy(&v, p, 8); return v; }
  }
}
static int float_less(void *ctx, int64_t a, int64_t b) {
  FloatCtx *c = ctx;
  double x = load_float(c->t, c->p + a * c->s), y = load_float(c->t, c->p + b * c->s);
  return c->desc ? x > y : x < y;
}

static bool key_mode(HloDtype t, HloCmpType ct, HlkCmpKind kind, KeyMode *m) {
  bool isf = t == HLO_F16 || t == HLO_BF16 || t == HLO_F32 || t == HLO_F64;
  bool isi = t == HLO_PRED || t == HLO_S8 || t == HLO_S16 || t == HLO_S32 || t == HLO_S64 ||
             t == HLO_U8 || t == HLO_U16 || t == HLO_U32 || t == HLO_U64;
  if (kind == HLK_CMP_CANON) { *m = KEY_CANON; return isf; }
  if (isf && ct == HLO_CMPT_TOTALORDER) { *m = KEY_TOTAL; return true; }
  if (isf && ct == HLO_CMPT_FLOAT) { *m = KEY_FLOAT; return true; }
  if (isi && ct == HLO_CMPT_SIGNED) { *m = KEY_SIGNED; return true; }
  if (isi && ct == HLO_CMPT_UNSIGNED) { *m = KEY_UNSIGNED; return true; }
  return false;
}

/* ---- Row geometry and permutation ------------------------------------- */

typedef struct SortGeom { int64_t n, stride, rows; } SortGeom;

static int64_t row_base(const SortGeom *g, int64_t r) {
  return (r / g->stride) * g->n * g->stride + r % g->stride;
}

/* out[base + j*stride] = in[base + perm[j]*stride] for j < n (es bytes each). */
static void permute(char *out, const char *in, size_t es, int64_t base, int64_t stride,
                    const KeyIdx *perm, int64_t n) {
  out += (size_t)base * es;
  in += (size_t)base * es;
  size_t st = (size_t)stride * es;
#define PERM_CASE(T)                                                                  \
  for (int64_t j = 0; j < n; j++) memcpy(out + (size_t)j * st, in + (size_t)perm[j].idx * st, sizeof(T)); \
  break;
  switch (es) {
  case 1: PERM_CASE(uint8_t)
  case 2: PERM_CASE(uint16_t)
  case 4: PERM_CASE(uint32_t)
  case 8: PERM_CASE(uint64_t)
  default:
    for (int64_t j = 0; j < n; j++) memcpy(out + (size_t)j * st, in + (size_t)perm[j].idx * st, es);
  }
#undef PERM_CASE
}

/* ---- f32 rows sorted alone: the keys themselves ------------------------- */

/* LSD radix sort of 32-bit keys on the bits that differ among them, in
 * passes of at most 8 bits: a row's keys, their copy and the counts stay
 * in L1 (11-bit digits need 24 KiB of counts and were slower). tmp holds n
 * more. */
static void radix32(uint32_t *a, uint32_t *tmp, int64_t n) {
  uint32_t any = 0, all = ~0u;
  for (int64_t i = 0; i < n; i++) {
    any |= a[i];
    all &= a[i];
  }
  uint32_t vary = any ^ all;
  if (vary == 0) return;
  int lo = __builtin_ctz(vary), width = 32 - __builtin_clz(vary) - lo;
  LSD_PASSES(uint32_t, 8, a, tmp, n, lo, width);
}
HLK_VECTORIZE static bool f32_keys(const uint32_t *restrict in, uint32_t *restrict key,
                                   int64_t n, bool total, uint32_t flip) {
  uint32_t bad = 0;
  for (int64_t i = 0; i < n; i++) {
    uint32_t b = in[i];
    bad |= (uint32_t)(!total) & (((b & 0x7fffffffu) > 0x7f800000u) | (b == 0x80000000u));
    key[i] = (b & 0x80000000u ? ~b : b | 0x80000000u) ^ flip;
  }
  return bad == 0;
}
HLK_VECTORIZE static void f32_from_keys(const uint32_t *restrict key, uint32_t *restrict out,
                                        int64_t n, uint32_t flip) {
  for (int64_t i = 0; i < n; i++) {
    uint32_t k = key[i] ^ flip;
    out[i] = k & 0x80000000u ? k & 0x7fffffffu : ~k;
  }
}
static bool sort_f32_alone(const uint32_t *in, uint32_t *out, int64_t n, KeyMode m, bool desc,
                           uint32_t *buf) {
  uint32_t flip = desc ? ~0u : 0;   /* descending: sort the complements */
  if (!f32_keys(in, buf, n, m == KEY_TOTAL, flip)) return false;
  radix32(buf, buf + n, n);
  f32_from_keys(buf, out, n, flip);
  return true;
}

/* ---- Typed sort --------------------------------------------------------- */

typedef struct SortJob {
  const SortGeom *g;
  int32_t k;
  HliValue *const *in;
  HliValue *const *outs;
  HloDtype t;
  KeyMode m;
  bool desc;
  bool oom;
} SortJob;

static void sort_rows(void *arg, int64_t lo, int64_t hi) {
  SortJob *j = arg;
  const SortGeom *g = j->g;
  int64_t n = g->n;
  KeyIdx *keys = malloc((size_t)n * 2 * sizeof *keys + 1);
  int64_t *ix = malloc((size_t)n * 2 * sizeof *ix + 1);
  if (!keys || !ix) { free(keys); free(ix); j->oom = true; return; }
  size_t es0 = hlc_dtype_size(j->t);
  bool alone = j->k == 1 && j->t == HLO_F32 && g->stride == 1 && n >= 256 &&
               (j->m == KEY_FLOAT || j->m == KEY_CANON || j->m == KEY_TOTAL);
  for (int64_t r = lo; r < hi; r++) {
    int64_t base = row_base(g, r);
    const char *p = (const char *)j->in[0]->data + (size_t)base * es0;
    if (alone && sort_f32_alone((const uint32_t *)(const void *)p,
                                (uint32_t *)j->outs[0]->data + base, n, j->m, j->desc,
                                (uint32_t *)(void *)keys))
      continue;
    if (make_keys(j->t, j->m, p, g->stride * (int64_t)es0, n, keys)) {
      FloatCtx c = {j->t, p, g->stride * (int64_t)es0, j->desc};
      for (int64_t i = 0; i < n; i++) ix[i] = i;
      sort_indices(ix, ix + n, n, float_less, &c);
      for (int64_t i = 0; i < n; i++) keys[i].idx = ix[i];
    } else {
      if (j->desc)
        for (int64_t i = 0; i < n; i++) keys[i].key = ~keys[i].key;
      sort_pairs(keys, keys + n, n);
    }
    for (int32_t i = 0; i < j->k; i++)
      permute(j->outs[i]->data, j->in[i]->data, hlc_dtype_size(j->in[i]->dtype), base,
              g->stride, keys, n);
  }
  free(keys);
  free(ix);
}

/* ---- Generic sort: the comparator per comparison --------------------- */

typedef struct CallCtx {
  HlkScalarCall *sc;
  int32_t k;
  HliValue *const *in;
  int64_t base, stride;
} CallCtx;

static int call_less(void *ctx, int64_t a, int64_t b) {
  CallCtx *c = ctx;
  for (int32_t i = 0; i < c->k; i++) {
    size_t es = hlc_dtype_size(c->in[i]->dtype);
    const char *d = c->in[i]->data;
    memcpy(hlk_scall_arg(c->sc, 2 * i), d + (size_t)(c->base + a * c->stride) * es, es);
    memcpy(hlk_scall_arg(c->sc, 2 * i + 1), d + (size_t)(c->base + b * c->stride) * es, es);
  }
  return hlk_scall_pred(c->sc);
}

static int sort_generic(HliExec *x, const HloInstr *ins, const SortGeom *g, int32_t k,
                        HliValue *const *in, HliValue *const *outs) {
  HloDtype types[2 * HLK_MAX_VARIADIC], pred = HLO_PRED;
  for (int32_t i = 0; i < k; i++) types[2 * i] = types[2 * i + 1] = in[i]->dtype;
  HlkScalarCall sc;
  if (hlk_scall_init(&sc, x, ins, hlk_called(ins, HLO_CALL_TO_APPLY), 2 * k, types, 1, &pred))
    return -1;
  int64_t n = g->n;
  /* Counted against --max-memory (hli_scratch_alloc reports a failure). */
  int64_t *ix = hli_scratch_alloc(x, ins, (size_t)n * 2 * sizeof *ix);
  KeyIdx *perm = ix ? hli_scratch_alloc(x, ins, (size_t)n * sizeof *perm) : NULL;
  int rc = ix && perm ? 0 : -1;
  for (int64_t r = 0; r < g->rows && rc == 0; r++) {
    CallCtx c = {&sc, k, in, row_base(g, r), g->stride};
    for (int64_t i = 0; i < n; i++) ix[i] = i;
    rc = sort_indices(ix, ix + n, n, call_less, &c);
    for (int64_t i = 0; i < n && rc == 0; i++) perm[i].idx = ix[i];
    for (int32_t i = 0; i < k && rc == 0; i++)
      permute(outs[i]->data, in[i]->data, hlc_dtype_size(in[i]->dtype), c.base, g->stride,
              perm, n);
  }
  hli_scratch_free(x, ix);
  hli_scratch_free(x, perm);
  hlk_scall_free(&sc);
  return rc;
}

/* ---- sort kernel ------------------------------------------------------- */

int hlk_sort_check(HliExec *x, const HloInstr *ins) {
  int32_t k = ins->nops;
  if (k < 1 || k > HLK_MAX_VARIADIC)
    return hli_unsupported(x, ins, "sort of %d operands (1 to %d supported)", k, HLK_MAX_VARIADIC);
  const HloShape *s0 = &ins->ops[0]->shape;
  if (ins->dimensions.n != 1 || ins->dimensions.v[0] < 0 || ins->dimensions.v[0] >= s0->rank)
    return hli_fail(x, ins, "sort needs one dimension within the operand rank");
  if ((k == 1) != (ins->shape.dtype != HLO_TUPLE) || (k > 1 && ins->shape.ntuple != k))
    return hli_fail(x, ins, "result shape does not match %d operands", k);
  HloDtype types[2 * HLK_MAX_VARIADIC], pred = HLO_PRED;
  for (int32_t i = 0; i < k; i++) {
    const HloShape *s = &ins->ops[i]->shape;
    const HloShape *o = k == 1 ? &ins->shape : &ins->shape.tuple[i];
    if (!hlc_dtype_is_array(s->dtype) || s->rank != s0->rank || o->rank != s0->rank ||
        o->dtype != s->dtype)
      return hli_fail(x, ins, "operand %d and its result must be arrays of the same shape", i);
    for (int32_t d = 0; d < s->rank; d++)
      if (s->dims[d] != s0->dims[d] || o->dims[d] != s0->dims[d])
        return hli_fail(x, ins, "operands must have the same dimensions");
    types[2 * i] = types[2 * i + 1] = s->dtype;
  }
  return hlk_check_signature(x, ins, hlk_called(ins, HLO_CALL_TO_APPLY), 2 * k, types, 1, &pred);
}

int hlk_sort(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  int32_t k = ins->nops;
  HliValue *outs[HLK_MAX_VARIADIC];
  for (int32_t i = 0; i < k; i++) outs[i] = k == 1 ? out : out->tuple[i];
  int64_t d = ins->dimensions.v[0];
  SortGeom g = {in[0]->dims[d], 1, 0};
  for (int32_t i = (int32_t)d + 1; i < in[0]->rank; i++) g.stride *= in[0]->dims[i];
  if (in[0]->nelem == 0) return 0;
  g.rows = in[0]->nelem / g.n;
  HlkComparator cmp;
  KeyMode m;
  if (hlk_match_comparator(hlk_called(ins, HLO_CALL_TO_APPLY), k, &cmp) &&
      key_mode(in[0]->dtype, cmp.type, cmp.kind, &m)) {
    SortJob j = {&g, k, in, outs, in[0]->dtype, m, cmp.descending, false};
    /* Each thread sorting rows holds two key tables of a row (sort_rows):
     * count them against --max-memory (limits.c) before they exist. */
    int64_t par = g.rows < hli_num_threads(x) ? g.rows : hli_num_threads(x);
    size_t work = (size_t)par * (size_t)g.n * 2 * (sizeof(KeyIdx) + sizeof(int64_t));
    if (hli_scratch_reserve(x, ins, work)) return -1;
    hli_parallel_for(x, g.rows, 65536 / (g.n + 1) + 1, sort_rows, &j);
    hli_scratch_unreserve(x, work);
    return j.oom ? hli_fail_nomem(x, ins, "out of memory") : 0;
  }
  return sort_generic(x, ins, &g, k, in, outs);
}

/* ---- topk -------------------------------------------------------------- */

int hlk_topk_check(HliExec *x, const HloInstr *ins) {
  if (ins->nops != 1) return hli_fail(x, ins, "topk takes one operand");
  const HloShape *s = &ins->ops[0]->shape;
  KeyMode m;
  HloCmpType ct = hlc_dtype_is_float(s->dtype) ? HLO_CMPT_TOTALORDER
                                               : hlk_default_cmp_type(s->dtype);
  if (!key_mode(s->dtype, ct, HLK_CMP_PLAIN, &m))
    return hli_unsupported(x, ins, "topk of element type %s", hlc_dtype_name(s->dtype));
  if (s->rank < 1) return hli_fail(x, ins, "topk needs an operand of rank >= 1");
  const HloShape *r = &ins->shape;
  if (r->dtype != HLO_TUPLE || r->ntuple != 2 || r->tuple[0].dtype != s->dtype ||
      r->tuple[1].dtype != HLO_S32)
    return hli_fail(x, ins, "topk result must be (%s values, s32 indices)",
                    hlc_dtype_name(s->dtype));
  if (ins->k < 0 || ins->k > s->dims[s->rank - 1])
    return hli_fail(x, ins, "k=%lld is outside [0, %lld]", (long long)ins->k,
                    (long long)s->dims[s->rank - 1]);
  for (int32_t t = 0; t < 2; t++) {
    const HloShape *o = &r->tuple[t];
    if (o->rank != s->rank) return hli_fail(x, ins, "topk result %d has the wrong rank", t);
    for (int32_t d = 0; d < s->rank; d++)
      if (o->dims[d] != (d == s->rank - 1 ? ins->k : s->dims[d]))
        return hli_fail(x, ins, "topk result %d has the wrong dimensions", t);
  }
  return 0;
}

typedef struct TopkJob {
  const HliValue *in;
  char *ov;
  int32_t *oi;
  int64_t n, k;
  KeyMode m;
  bool largest, oom;
} TopkJob;

/* The key table of topk_rows: a row's keys and the merge sort's buffer. */
static size_t topk_row_bytes(int64_t n) { return (size_t)n * 2 * sizeof(KeyIdx) + 1; }

static void topk_rows(void *arg, int64_t lo, int64_t hi) {
  TopkJob *j = arg;
  size_t es = hlc_dtype_size(j->in->dtype);
  KeyIdx *keys = malloc(topk_row_bytes(j->n));
  if (!keys) { j->oom = true; return; }
  for (int64_t r = lo; r < hi; r++) {
    const char *p = (const char *)j->in->data + (size_t)(r * j->n) * es;
    make_keys(j->in->dtype, j->m, p, (int64_t)es, j->n, keys);
    if (j->largest)
      for (int64_t i = 0; i < j->n; i++) keys[i].key = ~keys[i].key;
    sort_pairs(keys, keys + j->n, j->n);
    for (int64_t i = 0; i < j->k; i++) {
      memcpy(j->ov + (size_t)(r * j->k + i) * es, p + (size_t)keys[i].idx * es, es);
      j->oi[r * j->k + i] = (int32_t)keys[i].idx;
    }
  }
  free(keys);
}

int hlk_topk(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  const HliValue *v = in[0];
  int64_t n = v->dims[v->rank - 1];
  KeyMode m;
  HloCmpType ct = hlc_dtype_is_float(v->dtype) ? HLO_CMPT_TOTALORDER
                                               : hlk_default_cmp_type(v->dtype);
  if (!key_mode(v->dtype, ct, HLK_CMP_PLAIN, &m))
    return hli_unsupported(x, ins, "topk of element type %s", hlc_dtype_name(v->dtype));
  if (v->nelem == 0 || ins->k == 0) return 0;
  TopkJob j = {v, out->tuple[0]->data, out->tuple[1]->data, n, ins->k, m, ins->largest, false};
  /* Each thread sorting rows holds a key table of two rows (topk_rows):
   * count them against --max-memory before they exist. */
  int64_t rows = v->nelem / n;
  int64_t par = rows < hli_num_threads(x) ? rows : hli_num_threads(x);
  size_t work = (size_t)par * topk_row_bytes(n);
  if (hli_scratch_reserve(x, ins, work)) return -1;
  hli_parallel_for(x, rows, 65536 / (n + 1) + 1, topk_rows, &j);
  hli_scratch_unreserve(x, work);
  return j.oom ? hli_fail_nomem(x, ins, "out of memory") : 0;
}
