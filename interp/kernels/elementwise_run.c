/* elementwise_run.c: drives array loops over whole values: splits the work
 * into parallel chunks, runs narrow floats (f16, bf16, f8*, f4e2m1fn)
 * through f32 in small stack blocks (decode, f32 loop, round once), and
 * wraps sub-byte integers to their width after the 8-bit loop ran.
 * Also the narrow-float <-> f32 block conversions everyone here uses.
 * Not here: what any loop computes (elementwise.c and friends). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "common/numeric.h"
#include "interp/kernels/elementwise.h"

bool hlk_is_narrow_float(HloDtype t) {
  return hlc_dtype_is_float(t) && t != HLO_F32 && t != HLO_F64;
}

/* f8 and f4 decode through a 256-entry table per type, built once. */
static float f8_table[HLO_NUM_DTYPES][256];
static pthread_once_t f8_once = PTHREAD_ONCE_INIT;

static void build_f8_tables(void) {
  for (int t = 0; t < HLO_NUM_DTYPES; t++) {
    if (!hlk_is_narrow_float((HloDtype)t) || hlc_dtype_size((HloDtype)t) != 1) continue;
    for (int b = 0; b < 256; b++) {
      /* f4e2m1fn uses the low 4 bits only. */
      uint64_t bits = t == HLO_F4E2M1FN ? (uint64_t)(b & 0xF) : (uint64_t)b;
      f8_table[t][b] = (float)hlc_float_bits_to_f64((HloDtype)t, bits);
    }
  }
}

/* f32 -> an 8-bit float format (the f8 family, f4e2m1fn in a byte) through
 * two tables over the top 16 bits of the f32: none of these formats keeps
 * more than 4 mantissa bits, so the rounding bit of any input lies in its
 * top 16 bits and the low 16 only decide whether anything lies below it:
 * the result is base[top] when the low half is zero, else up[top] (for an
 * infinity's pattern, the NaN with a low payload). Both tables are
 * hlc_float_bits_from_f32's own results. A format builds them (128 KiB,
 * 131072 scalar conversions) once it has converted as many elements the
 * slow way; until then, and if memory runs out, the scalar loop runs. */
enum { F8_TABLE_AFTER = 1 << 17 };
typedef struct F8Enc { uint8_t base[65536], up[65536]; } F8Enc;
static F8Enc *f8_enc[HLO_NUM_DTYPES];
static int64_t f8_done[HLO_NUM_DTYPES];
static pthread_mutex_t f8_mu = PTHREAD_MUTEX_INITIALIZER;

static float f32_of(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static const F8Enc *f8_encoder(HloDtype t, int64_t n) {
  F8Enc *e = __atomic_load_n(&f8_enc[t], __ATOMIC_ACQUIRE);
  if (e || __atomic_add_fetch(&f8_done[t], n, __ATOMIC_RELAXED) < F8_TABLE_AFTER) return e;
  pthread_mutex_lock(&f8_mu);
  e = f8_enc[t];
  if (!e && (e = malloc(sizeof *e)) != NULL) {
    for (uint32_t h = 0; h < 65536; h++) {
      e->base[h] = (uint8_t)hlc_float_bits_from_f32(t, f32_of(h << 16));
      e->up[h] = (uint8_t)hlc_float_bits_from_f32(t, f32_of(h << 16 | 1));
    }
    __atomic_store_n(&f8_enc[t], e, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&f8_mu);
  return e;
}

/* At exit, so leak checkers see nothing held. */
__attribute__((destructor)) static void f8_release(void) {
  for (int t = 0; t < HLO_NUM_DTYPES; t++) {
    free(f8_enc[t]);
    f8_enc[t] = NULL;
  }
}

static void f32_to_f8(HloDtype t, const float *src, uint8_t *d, int64_t n) {
  const F8Enc *e = f8_encoder(t, n);
  if (!e) {
    for (int64_t i = 0; i < n; i++) d[i] = (uint8_t)hlc_float_bits_from_f32(t, src[i]);
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    uint32_t u;
    memcpy(&u, &src[i], 4);
    d[i] = (u & 0xFFFFu) ? e->up[u >> 16] : e->base[u >> 16];
  }
}

/* bf16 is the top half of an f32: widening is a shift (every bit pattern,
 * NaN payloads included, as hlc_bf16_to_f32). */
HLK_VECTORIZE static void bf16_to_f32(const uint16_t *restrict s, float *restrict d, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    uint32_t u = (uint32_t)s[i] << 16;
    memcpy(&d[i], &u, 4);
  }
}

/* Round to nearest even (the same rule as hlc_f32_to_bf16); NaN becomes the
 * quiet NaN with its sign. */
HLK_VECTORIZE static void f32_to_bf16(const float *restrict s, uint16_t *restrict d, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    uint32_t u;
    memcpy(&u, &s[i], 4);
    uint32_t r = (u + 0x7FFF + ((u >> 16) & 1)) >> 16;
    uint32_t q = ((u >> 16) & 0x8000) | 0x7FC0;
    d[i] = (uint16_t)((u & 0x7FFFFFFFu) > 0x7F800000u ? q : r);
  }
}

/* f32 -> bf16 -> f32 in one pass: the f32 value of the rounded bf16. */
HLK_VECTORIZE static void round_bf16(float *restrict d, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    uint32_t u;
    memcpy(&u, &d[i], 4);
    uint32_t r = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000u;
    uint32_t q = (u & 0x80000000u) | 0x7FC00000u;
    u = (u & 0x7FFFFFFFu) > 0x7F800000u ? q : r;
    memcpy(&d[i], &u, 4);
  }
}

/* f16 <-> f32 without branches, so the loops vectorize; the same bits as
 * hlc_f16_to_f32 / hlc_f32_to_f16 for every input (round to nearest even,
 * subnormals, overflow to inf, NaN to the quiet NaN with its sign; widening
 * keeps NaN payloads). Subnormals go through one exact float operation:
 * adding 0.5, whose ULP is the f16 subnormal step 2^-24, rounds a small
 * value to that step (by the FPU's round to nearest even), and subtracting
 * 2^-14 renormalises a widened one. */
static inline uint32_t f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

static inline uint16_t f32_to_f16_one(float f) {
  uint32_t u = f32_bits(f), a = u & 0x7FFFFFFFu, sign = (u >> 16) & 0x8000u;
  uint32_t normal = (a - (112u << 23) + 0xFFFu + ((a >> 13) & 1u)) >> 13;   /* rebias, RNE */
  uint32_t sub = f32_bits(bits_f32(a) + 0.5f) - 0x3F000000u;               /* steps of 2^-24 */
  uint32_t big = a > 0x7F800000u ? 0x7E00u : 0x7C00u;                      /* NaN / inf */
  uint32_t h = a >= 0x47800000u ? big : a >= 0x38800000u ? normal : sub;
  return (uint16_t)(h | sign);
}

static inline float f16_to_f32_one(uint16_t h) {
  uint32_t m = (uint32_t)(h & 0x7FFFu) << 13, e = m & 0x0F800000u;
  uint32_t normal = m + (112u << 23);
  uint32_t special = m + (224u << 23);                                   /* inf, NaN */
  uint32_t sub = f32_bits(bits_f32(m + (113u << 23)) - 0x1p-14f);          /* 0, subnormal */
  uint32_t u = e == 0x0F800000u ? special : e == 0 ? sub : normal;
  return bits_f32(u | (uint32_t)(h & 0x8000u) << 16);
}

HLK_VECTORIZE static void f32_to_f16(const float *restrict s, uint16_t *restrict d, int64_t n) {
  for (int64_t i = 0; i < n; i++) d[i] = f32_to_f16_one(s[i]);
}
HLK_VECTORIZE static void f16_to_f32(const uint16_t *restrict s, float *restrict d, int64_t n) {
  for (int64_t i = 0; i < n; i++) d[i] = f16_to_f32_one(s[i]);
}
/* f32 -> f16 -> f32 in one pass. */
HLK_VECTORIZE static void round_f16(float *restrict d, int64_t n) {
  for (int64_t i = 0; i < n; i++) d[i] = f16_to_f32_one(f32_to_f16_one(d[i]));
}

void hlk_round_narrow(HloDtype t, float *d, int64_t n) {
  if (t == HLO_BF16) {
    round_bf16(d, n);
    return;
  }
  if (t == HLO_F16) {
    round_f16(d, n);
    return;
  }
  enum { B = 512 };
  uint16_t tmp[B];   /* narrow types are at most 2 bytes */
  for (int64_t i = 0; i < n; i += B) {
    int64_t m = n - i < B ? n - i : B;
    hlk_f32_to_narrow(t, d + i, tmp, m);
    hlk_narrow_to_f32(t, tmp, d + i, m);
  }
}

void hlk_narrow_to_f32(HloDtype t, const void *src, float *dst, int64_t n) {
  if (t == HLO_F16) {
    f16_to_f32(src, dst, n);
  } else if (t == HLO_BF16) {
    bf16_to_f32(src, dst, n);
  } else {
    pthread_once(&f8_once, build_f8_tables);
    const uint8_t *s = src;
    const float *tab = f8_table[t];
    for (int64_t i = 0; i < n; i++) dst[i] = tab[s[i]];
  }
}

void hlk_f32_to_narrow(HloDtype t, const float *src, void *dst, int64_t n) {
  if (t == HLO_F16) {
    f32_to_f16(src, dst, n);
  } else if (t == HLO_BF16) {
    f32_to_bf16(src, dst, n);
  } else {
    f32_to_f8(t, src, dst, n);
  }
}

static bool is_subbyte_int(HloDtype t) {
  return hlc_dtype_is_int(t) && hlc_dtype_bits(t) < 8;
}

void hlk_wrap_subbyte(HloDtype t, void *data, int64_t n) {
  int bits = hlc_dtype_bits(t);
  uint8_t *p = data;
  uint8_t mask = (uint8_t)((1u << bits) - 1);
  if (hlc_dtype_kind(t) == HLO_KIND_SINT) {
    /* Sign-extend the low `bits` bits into the byte. */
    int sh = 8 - bits;
    for (int64_t i = 0; i < n; i++) p[i] = (uint8_t)((int8_t)(uint8_t)(p[i] << sh) >> sh);
  } else {
    for (int64_t i = 0; i < n; i++) p[i] &= mask;
  }
}

typedef struct Job {
  HlkUnFn un;
  HlkBinFn bin;
  HloDtype t, ot;          /* operand and result element types */
  const char *a, *b;
  char *o;
  size_t sa, so;           /* element sizes of operand and result */
  int bits;
} Job;

enum { BLOCK = 256 };

static void job_chunk(void *arg, int64_t lo, int64_t hi) {
  const Job *j = arg;
  if (!hlk_is_narrow_float(j->t)) {
    const char *a = j->a + lo * j->sa, *b = j->b ? j->b + lo * j->sa : NULL;
    char *o = j->o + lo * j->so;
    if (j->un)
      j->un(a, o, hi - lo, j->bits);
    else
      j->bin(a, b, o, hi - lo, j->bits);
    if (is_subbyte_int(j->ot)) hlk_wrap_subbyte(j->ot, o, hi - lo);
    return;
  }
  /* Narrow floats: blocks through f32; the result is rounded once. */
  float fa[BLOCK], fb[BLOCK], fo[BLOCK];
  bool narrow_out = hlk_is_narrow_float(j->ot);
  for (int64_t i = lo; i < hi; i += BLOCK) {
    int64_t m = hi - i < BLOCK ? hi - i : BLOCK;
    hlk_narrow_to_f32(j->t, j->a + i * j->sa, fa, m);
    if (j->b) hlk_narrow_to_f32(j->t, j->b + i * j->sa, fb, m);
    void *dst = narrow_out ? (void *)fo : (void *)(j->o + i * j->so);
    if (j->un)
      j->un(fa, dst, m, 32);
    else
      j->bin(fa, fb, dst, m, 32);
    if (narrow_out) hlk_f32_to_narrow(j->ot, fo, j->o + i * j->so, m);
  }
}

static void run_job(HliExec *x, Job *j, int64_t n) {
  j->sa = hlc_dtype_size(j->t);
  j->so = hlc_dtype_size(j->ot);
  j->bits = hlc_dtype_bits(j->t);
  hli_parallel_for(x, n, HLK_CHUNK, job_chunk, j);
}

void hlk_run_unary(HliExec *x, HlkUnFn fn, HloDtype t, const HliValue *a, HliValue *out) {
  Job j = {.un = fn, .t = t, .ot = out->dtype, .a = a->data, .o = out->data};
  run_job(x, &j, out->nelem);
}

void hlk_run_binary(HliExec *x, HlkBinFn fn, HloDtype t, const HliValue *a, const HliValue *b,
                    HliValue *out) {
  Job j = {.bin = fn, .t = t, .ot = out->dtype, .a = a->data, .b = b->data, .o = out->data};
  run_job(x, &j, out->nelem);
}
