/* rng.c: random numbers: rng-bit-generator (three-fry and philox, bit for
 * bit what XLA's prng library computes), rng (uniform and normal from the
 * run's deterministic random source) and rng-get-and-update-state.
 *
 * rng-bit-generator follows XLA's RngBitGeneratorExpander:
 *   key = state[0]; algorithm rng_default means philox, as on XLA:CPU.
 *   three-fry: counter = state[1]; 32-bit outputs pair up the two threefry
 *     lanes along the first even (or largest) dimension; 64-bit outputs join
 *     the lanes as lo | hi << 32; the counter advances by the number of
 *     threefry blocks used. New state = (key, counter').
 *   philox: the 128-bit counter is (state[1], state[2]) for u64[3] states,
 *     or (state[1], state[0]) for u64[2] states (XLA reverses the state);
 *     each block gives four 32-bit words laid out round-robin. New state =
 *     (key, low') or (key, low', high').
 *   Element types narrower than 32 bits take the low bits of a 32-bit draw.
 *
 * rng does not reproduce XLA's stream: XLA leaves it implementation-defined
 * (its RngExpander draws from a philox state seeded per module). Here it is
 * deterministic under the run's seed (hli_random_u64). */
#include "interp/kernels/control.h"
#include "interp/kernels/register.h"
#include "common/numeric.h"
#include <math.h>
#include <string.h>

/* ---- The block ciphers -------------------------------------------------- */

static inline uint32_t rotl32(uint32_t v, int d) { return (v << d) | (v >> (32 - d)); }

void hlk_threefry2x32(uint32_t k0, uint32_t k1, uint32_t *px0, uint32_t *px1) {
  static const int rot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const uint32_t ks[3] = {k0, k1, 0x1BD11BDAu ^ k0 ^ k1};
  uint32_t x0 = *px0 + ks[0], x1 = *px1 + ks[1];
  /* Five groups of four rounds, each followed by a key injection. */
  for (int g = 0; g < 5; g++) {
    const int *r = rot + (g % 2) * 4;
    for (int i = 0; i < 4; i++) {
      x0 += x1;
      x1 = rotl32(x1, r[i]) ^ x0;
    }
    x0 += ks[(g + 1) % 3];
    x1 += ks[(g + 2) % 3] + (uint32_t)(g + 1);
  }
  *px0 = x0;
  *px1 = x1;
}

void hlk_philox4x32(uint32_t k0, uint32_t k1, uint32_t x[4]) {
  for (int round = 0; round < 10; round++) {
    uint64_t p0 = (uint64_t)x[0] * 0xD2511F53u, p1 = (uint64_t)x[2] * 0xCD9E8D57u;
    uint32_t y0 = (uint32_t)(p1 >> 32) ^ x[1] ^ k0, y1 = (uint32_t)p1;
    uint32_t y2 = (uint32_t)(p0 >> 32) ^ x[3] ^ k1, y3 = (uint32_t)p0;
    x[0] = y0; x[1] = y1; x[2] = y2; x[3] = y3;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
}

/* ---- Writing raw bits into an element of any width --------------------- */

/* Store the low bits of v into element i of an array of type t (bit
 * patterns; sub-byte types keep their low bits, signed ones sign-extended
 * into their byte the way hlorun stores them). */
static inline void store_bits(HloDtype t, void *data, int64_t i, uint64_t v) {
  switch (hlc_dtype_size(t)) {
  case 8: ((uint64_t *)data)[i] = v; return;
  case 4: ((uint32_t *)data)[i] = (uint32_t)v; return;
  case 2: ((uint16_t *)data)[i] = (uint16_t)v; return;
  default: {
    int bits = hlc_dtype_bits(t);
    uint8_t b = (uint8_t)v;
    if (bits < 8) {
      b &= (uint8_t)((1u << bits) - 1);
      if (hlc_dtype_kind(t) == HLO_KIND_SINT && (b >> (bits - 1)) & 1)
        b |= (uint8_t)(0xFFu << bits);
    }
    ((uint8_t *)data)[i] = b;
  }
  }
}

/* ---- three-fry ---------------------------------------------------------- */

/* Bits for an output of rank r and dims d (nelem elements) into out. */
static uint64_t threefry_fill(uint64_t key, uint64_t counter, HloDtype t, const int64_t *d,
                              int32_t r, int64_t nelem, void *out) {
  uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
  if (hlc_dtype_bits(t) == 64) {
    for (int64_t i = 0; i < nelem; i++) {
      uint64_t c = counter + (uint64_t)i;
      uint32_t x0 = (uint32_t)c, x1 = (uint32_t)(c >> 32);
      hlk_threefry2x32(k0, k1, &x0, &x1);
      store_bits(t, out, i, (uint64_t)x0 | (uint64_t)x1 << 32);
    }
    return counter + (uint64_t)nelem;
  }
  /* 32 bits or narrower: the shape is split in halves along one dimension
   * (the first even one, else the largest); element k along it comes from
   * lane k % 2 of block k / 2 of the half shape. A scalar uses lane 0 of
   * one block. */
  if (r == 0) {
    uint32_t x0 = (uint32_t)counter, x1 = (uint32_t)(counter >> 32);
    hlk_threefry2x32(k0, k1, &x0, &x1);
    store_bits(t, out, 0, x0);
    return counter + 1;
  }
  int32_t split = -1;
  for (int32_t i = 0; i < r && split < 0; i++)
    if (d[i] % 2 == 0) split = i;
  if (split < 0) {
    split = 0;
    for (int32_t i = 1; i < r; i++)
      if (d[i] > d[split]) split = i;
  }
  int64_t half = (d[split] + 1) / 2;
  int64_t outer = 1, inner = 1;
  for (int32_t i = 0; i < split; i++) outer *= d[i];
  for (int32_t i = split + 1; i < r; i++) inner *= d[i];
  int64_t half_elems = outer * half * inner;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t h = 0; h < half; h++)
      for (int64_t in = 0; in < inner; in++) {
        uint64_t c = counter + (uint64_t)((o * half + h) * inner + in);
        uint32_t x0 = (uint32_t)c, x1 = (uint32_t)(c >> 32);
        hlk_threefry2x32(k0, k1, &x0, &x1);
        int64_t k = 2 * h;
        store_bits(t, out, (o * d[split] + k) * inner + in, x0);
        if (k + 1 < d[split]) store_bits(t, out, (o * d[split] + k + 1) * inner + in, x1);
      }
  return counter + (uint64_t)half_elems;
}

/* ---- philox ------------------------------------------------------------- */

/* One philox block for counter (lo, hi) + i (128-bit add). */
static void philox_block(uint32_t k0, uint32_t k1, uint64_t lo, uint64_t hi, uint64_t i,
                         uint32_t w[4]) {
  uint64_t l = lo + i;
  uint64_t h = l < lo ? hi + 1 : hi;
  w[0] = (uint32_t)l; w[1] = (uint32_t)(l >> 32);
  w[2] = (uint32_t)h; w[3] = (uint32_t)(h >> 32);
  hlk_philox4x32(k0, k1, w);
}

/* Fills nelem elements; returns the number of blocks used. */
static uint64_t philox_fill(uint64_t key, uint64_t lo, uint64_t hi, HloDtype t, int64_t nelem,
                            void *out) {
  uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
  uint32_t w[4];
  if (hlc_dtype_bits(t) == 64) {
    /* Two 64-bit words per block: (w0 | w1 << 32), (w2 | w3 << 32). */
    int64_t blocks = (2 * nelem + 3) / 4;
    for (int64_t b = 0; b < blocks; b++) {
      philox_block(k0, k1, lo, hi, (uint64_t)b, w);
      if (2 * b < nelem) store_bits(t, out, 2 * b, (uint64_t)w[0] | (uint64_t)w[1] << 32);
      if (2 * b + 1 < nelem) store_bits(t, out, 2 * b + 1, (uint64_t)w[2] | (uint64_t)w[3] << 32);
    }
    return (uint64_t)blocks;
  }
  int64_t blocks = (nelem + 3) / 4;
  for (int64_t b = 0; b < blocks; b++) {
    philox_block(k0, k1, lo, hi, (uint64_t)b, w);
    for (int j = 0; j < 4 && 4 * b + j < nelem; j++) store_bits(t, out, 4 * b + j, w[j]);
  }
  return (uint64_t)blocks;
}

/* ---- rng-bit-generator -------------------------------------------------- */

static bool bits_type_ok(HloDtype t) {
  HloKind k = hlc_dtype_kind(t);
  return k == HLO_KIND_SINT || k == HLO_KIND_UINT || k == HLO_KIND_FLOAT;
}

static int check_rng_bit_generator(HliExec *x, const HloInstr *ins) {
  const HloShape *s = &ins->shape;
  const HloShape *st = &ins->ops[0]->shape;
  if (s->dtype != HLO_TUPLE || s->ntuple != 2)
    return hli_fail(x, ins, "result must be a tuple (state, bits)");
  if (st->dtype != HLO_U64 || st->rank != 1)
    return hli_fail(x, ins, "state must be a u64 vector, got %s", hlc_dtype_name(st->dtype));
  if (!hlp_shape_compatible(&s->tuple[0], st))
    return hli_fail(x, ins, "result state shape differs from the operand's");
  HloDtype t = s->tuple[1].dtype;
  if (!bits_type_ok(t))
    return hli_unsupported(x, ins, "random bits of element type %s (XLA generates integer and "
                           "floating-point bits only)", hlc_dtype_name(t));
  if (s->tuple[1].dynamic)
    return hli_unsupported(x, ins, "dynamic dimensions in the random bits shape");
  HloRngAlg alg = ins->rng_algorithm == HLO_RNG_DEFAULT ? HLO_RNG_PHILOX : ins->rng_algorithm;
  int64_t n = st->dims[0];
  if (alg == HLO_RNG_THREE_FRY && n != 2)
    return hli_fail(x, ins, "three-fry needs a u64[2] state (key, counter), got u64[%lld]",
                    (long long)n);
  if (alg == HLO_RNG_PHILOX && n != 2 && n != 3)
    return hli_fail(x, ins, "philox needs a u64[2] or u64[3] state, got u64[%lld]", (long long)n);
  return 0;
}

static int run_rng_bit_generator(HliExec *x, const HloInstr *ins, HliValue *const *in,
                                 HliValue *out) {
  if (check_rng_bit_generator(x, ins)) return -1;
  const uint64_t *st = in[0]->data;
  uint64_t *nst = out->tuple[0]->data;
  HliValue *bits = out->tuple[1];
  HloRngAlg alg = ins->rng_algorithm == HLO_RNG_DEFAULT ? HLO_RNG_PHILOX : ins->rng_algorithm;
  uint64_t key = st[0];
  if (alg == HLO_RNG_THREE_FRY) {
    uint64_t c = threefry_fill(key, st[1], bits->dtype, bits->dims, bits->rank, bits->nelem,
                               bits->data);
    nst[0] = key;
    nst[1] = c;
    return 0;
  }
  bool three = in[0]->nelem == 3;
  uint64_t lo = st[1], hi = three ? st[2] : st[0];
  uint64_t used = philox_fill(key, lo, hi, bits->dtype, bits->nelem, bits->data);
  uint64_t nlo = lo + used, nhi = nlo < lo ? hi + 1 : hi;
  nst[0] = key;
  nst[1] = nlo;
  if (three) nst[2] = nhi;
  return 0;
}

/* ---- rng ---------------------------------------------------------------- */

/* Uniform double in [0, 1) from 53 random bits. */
static inline double unit_double(HliExec *x) {
  return (double)(hli_random_u64(x) >> 11) * 0x1.0p-53;
}

static int check_rng(HliExec *x, const HloInstr *ins) {
  HloDtype t = ins->shape.dtype;
  if (ins->nops != 2) return hli_fail(x, ins, "rng takes two scalar operands");
  for (int i = 0; i < 2; i++)
    if (ins->ops[i]->shape.dtype != t || ins->ops[i]->shape.rank != 0)
      return hli_fail(x, ins, "operand %d must be a %s scalar", i, hlc_dtype_name(t));
  if (ins->distribution == HLO_RNG_NORMAL && !hlc_dtype_is_float(t))
    return hli_fail(x, ins, "rng_normal needs a floating-point type, got %s", hlc_dtype_name(t));
  if (ins->distribution == HLO_RNG_UNIFORM && !hlc_dtype_is_float(t) && !hlc_dtype_is_int(t) &&
      t != HLO_PRED)
    return hli_unsupported(x, ins, "rng_uniform of element type %s", hlc_dtype_name(t));
  return 0;
}

static int run_rng(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  if (check_rng(x, ins)) return -1;
  HloDtype t = out->dtype;
  size_t es = hlc_dtype_size(t);
  char *o = out->data;
  if (hlc_dtype_is_float(t)) {
    double a = hlc_load_f64(t, in[0]->data), b = hlc_load_f64(t, in[1]->data);
    for (int64_t i = 0; i < out->nelem; i++) {
      double v;
      if (ins->distribution == HLO_RNG_NORMAL) {
        /* Box-Muller; u1 in (0, 1] keeps log finite. */
        double u1 = 1.0 - unit_double(x), u2 = unit_double(x);
        v = a + b * sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
      } else {
        v = a + (b - a) * unit_double(x);
      }
      hlc_store_f64(t, o + (size_t)i * es, v);
      /* Rounding to a narrow type may land on b: draw again from [a, b). */
      if (ins->distribution == HLO_RNG_UNIFORM && b > a &&
          hlc_load_f64(t, o + (size_t)i * es) >= b)
        hlc_store_f64(t, o + (size_t)i * es, a);
    }
    return 0;
  }
  /* Integers and pred: a + bits mod (b - a), the range taken unsigned; an
   * empty range gives a. */
  int64_t a = hlc_load_i64(t, in[0]->data), b = hlc_load_i64(t, in[1]->data);
  bool uns = hlc_dtype_kind(t) != HLO_KIND_SINT;
  bool nonempty = uns ? (uint64_t)b > (uint64_t)a : b > a;
  uint64_t range = (uint64_t)b - (uint64_t)a;
  for (int64_t i = 0; i < out->nelem; i++) {
    uint64_t r = hli_random_u64(x);
    int64_t v = nonempty ? (int64_t)((uint64_t)a + r % range) : a;
    hlc_store_i64(t, o + (size_t)i * es, v);
  }
  return 0;
}

/* ---- rng-get-and-update-state ------------------------------------------ */

/* XLA keeps one 128-bit counter per module, starting at an implementation-
 * defined value, and each rng-get-and-update-state returns it and adds
 * delta. Here the counter lives with the run: its start value comes from
 * the run's random source; it advances by delta on each call. */
static _Thread_local struct { const HliExec *owner; uint64_t lo, hi; } rng_counter;

static int run_rng_state(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  (void)in;
  if (out->dtype != HLO_U64 || out->nelem != 2)
    return hli_fail(x, ins, "result must be u64[2]");
  if (rng_counter.owner != x || !x) {
    rng_counter.owner = x;
    rng_counter.lo = hli_random_u64(x);
    rng_counter.hi = hli_random_u64(x);
  }
  uint64_t *o = out->data;
  o[0] = rng_counter.lo;
  o[1] = rng_counter.hi;
  uint64_t d = (uint64_t)ins->rng_delta;
  uint64_t nlo = rng_counter.lo + d;
  if (nlo < rng_counter.lo) rng_counter.hi++;
  rng_counter.lo = nlo;
  return 0;
}

void hlk_register_rng(HliOpTable t) {
  t[HLO_OP_RNG_BIT_GENERATOR] = (HliOpEntry){run_rng_bit_generator, check_rng_bit_generator};
  t[HLO_OP_RNG] = (HliOpEntry){run_rng, check_rng};
  t[HLO_OP_RNG_GET_AND_UPDATE_STATE] = (HliOpEntry){run_rng_state, NULL};
}
