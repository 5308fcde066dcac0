/* check_rng.c: rng-bit-generator and the block ciphers under it.
 *
 * Expected values: the Random123 known-answer vectors for threefry2x32-20
 * and philox4x32-10 (public test vectors of the algorithms XLA implements),
 * the public conformance case rng_bit_generator_uint64_2 (computed by XLA),
 * and output layouts worked out by hand from XLA's prng library (which
 * block and lane lands in which element, how the state advances). */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "interp/kernels/control.h"
#include "tests/testlib.h"

/* ---- rng-bit-generator by hand ------------------------------------------- */

typedef struct Gen { HliValue *in, *out; } Gen;

/* rng-bit-generator with a u64[nstate] state and bits of type t, dims bd. */
static void gen_run(Gen *g, HloRngAlg alg, const uint64_t *state, int32_t nstate, HloDtype t,
                    int32_t brank, const int64_t *bd, int expect_rc) {
  HloShape parts[2] = {tl_shape(HLO_U64, 1, (int64_t[]){nstate}), tl_shape(t, brank, bd)};
  HloInstr *ins = tl_instr(HLO_OP_RNG_BIT_GENERATOR, tl_tuple(2, parts), 1,
                           tl_param(0, parts[0]));
  ins->rng_algorithm = alg;
  g->in = tl_value(&ins->ops[0]->shape, state);
  g->out = tl_value(&ins->shape, NULL);
  const HliOpEntry *e = &hli_op_table()[HLO_OP_RNG_BIT_GENERATOR];
  ck_assert_ptr_nonnull(e->run);
  int rc = e->run(NULL, ins, &g->in, g->out);
  ck_assert_int_eq(rc, expect_rc);
}

static void gen_free(Gen *g) {
  hli_value_unref(NULL, g->in);
  hli_value_unref(NULL, g->out);
}

static const uint64_t *new_state(Gen *g) { return g->out->tuple[0]->data; }

/* ---- block ciphers ------------------------------------------------------- */

START_TEST(threefry_kat) {
  static const uint32_t kat[3][6] = {
    /* key0, key1, ctr0, ctr1 -> out0, out1 (Random123 kat_vectors) */
    {0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x6b200159, 0x99ba4efe},
    {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x1cb996fc, 0xbb002be7},
    {0x13198a2e, 0x03707344, 0x243f6a88, 0x85a308d3, 0xc4923a9c, 0x483df7a0},
  };
  for (int i = 0; i < 3; i++) {
    uint32_t x0 = kat[i][2], x1 = kat[i][3];
    hlk_threefry2x32(kat[i][0], kat[i][1], &x0, &x1);
    ck_assert_uint_eq(x0, kat[i][4]);
    ck_assert_uint_eq(x1, kat[i][5]);
  }
}
END_TEST

START_TEST(philox_kat) {
  static const uint32_t kat[3][10] = {
    /* key0, key1, ctr[4] -> out[4] (Random123 kat_vectors) */
    {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
    {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
     0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
    {0xa4093822, 0x299f31d0, 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344,
     0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1},
  };
  for (int i = 0; i < 3; i++) {
    uint32_t x[4] = {kat[i][2], kat[i][3], kat[i][4], kat[i][5]};
    hlk_philox4x32(kat[i][0], kat[i][1], x);
    for (int j = 0; j < 4; j++) ck_assert_uint_eq(x[j], kat[i][6 + j]);
  }
}
END_TEST

/* ---- rng-bit-generator ---------------------------------------------------- */

/* The public conformance case: three-fry, state {3, 3}, u64[] bits. */
START_TEST(threefry_u64_scalar_conformance) {
  Gen g;
  const uint64_t st[2] = {3, 3};
  gen_run(&g, HLO_RNG_THREE_FRY, st, 2, HLO_U64, 0, NULL, 0);
  ck_assert_uint_eq(new_state(&g)[0], 3);
  ck_assert_uint_eq(new_state(&g)[1], 4);
  ck_assert_uint_eq(*(uint64_t *)g.out->tuple[1]->data, 3349939604322698703ull);
  gen_free(&g);
}
END_TEST

/* Block of counter c: threefry(key, (lo32(c), hi32(c))). */
static void tf_block(uint64_t key, uint64_t c, uint32_t *x0, uint32_t *x1) {
  *x0 = (uint32_t)c;
  *x1 = (uint32_t)(c >> 32);
  hlk_threefry2x32((uint32_t)key, (uint32_t)(key >> 32), x0, x1);
}

/* u32[3]: no even dimension, so dimension 0 is halved to 2 blocks;
 * element k comes from lane k%2 of block k/2; the counter advances by 2. */
START_TEST(threefry_u32_odd_vector) {
  Gen g;
  const uint64_t st[2] = {0x0123456789abcdefull, 41};
  const int64_t d[1] = {3};
  gen_run(&g, HLO_RNG_THREE_FRY, st, 2, HLO_U32, 1, d, 0);
  uint32_t a0, a1, b0, b1;
  tf_block(st[0], 41, &a0, &a1);
  tf_block(st[0], 42, &b0, &b1);
  const uint32_t *o = g.out->tuple[1]->data;
  ck_assert_uint_eq(o[0], a0);
  ck_assert_uint_eq(o[1], a1);
  ck_assert_uint_eq(o[2], b0);
  ck_assert_uint_eq(new_state(&g)[0], st[0]);
  ck_assert_uint_eq(new_state(&g)[1], 43);
  gen_free(&g);
}
END_TEST

/* u32[3,4]: dimension 1 is the first even one; half shape [3,2]; element
 * (i, k) = lane k%2 of block i*2 + k/2. */
START_TEST(threefry_u32_matrix_split) {
  Gen g;
  const uint64_t st[2] = {7, 100};
  const int64_t d[2] = {3, 4};
  gen_run(&g, HLO_RNG_THREE_FRY, st, 2, HLO_U32, 2, d, 0);
  const uint32_t *o = g.out->tuple[1]->data;
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 4; k++) {
      uint32_t x0, x1;
      tf_block(7, 100 + (uint64_t)(i * 2 + k / 2), &x0, &x1);
      ck_assert_uint_eq(o[i * 4 + k], k % 2 ? x1 : x0);
    }
  ck_assert_uint_eq(new_state(&g)[1], 106);
  gen_free(&g);
}
END_TEST

/* u16 takes the low 16 bits of the u32 draw. */
START_TEST(threefry_u16_low_bits) {
  Gen g;
  const uint64_t st[2] = {5, 0};
  const int64_t d[1] = {2};
  gen_run(&g, HLO_RNG_THREE_FRY, st, 2, HLO_U16, 1, d, 0);
  uint32_t x0, x1;
  tf_block(5, 0, &x0, &x1);
  const uint16_t *o = g.out->tuple[1]->data;
  ck_assert_uint_eq(o[0], (uint16_t)x0);
  ck_assert_uint_eq(o[1], (uint16_t)x1);
  ck_assert_uint_eq(new_state(&g)[1], 1);
  gen_free(&g);
}
END_TEST

static void ph_block(uint64_t key, uint64_t lo, uint64_t hi, uint32_t w[4]) {
  w[0] = (uint32_t)lo; w[1] = (uint32_t)(lo >> 32);
  w[2] = (uint32_t)hi; w[3] = (uint32_t)(hi >> 32);
  hlk_philox4x32((uint32_t)key, (uint32_t)(key >> 32), w);
}

/* Philox with a u64[2] state: XLA reverses it, so the counter is
 * (low = state[1], high = state[0]); 4 words per block, round-robin; the new
 * state is (key, low + blocks). rng_default is philox on CPU. */
START_TEST(philox_u32_two_word_state) {
  Gen g;
  const uint64_t st[2] = {0xdeadbeefcafef00dull, 9};
  const int64_t d[1] = {6};
  gen_run(&g, HLO_RNG_DEFAULT, st, 2, HLO_U32, 1, d, 0);
  uint32_t b0[4], b1[4];
  ph_block(st[0], 9, st[0], b0);
  ph_block(st[0], 10, st[0], b1);
  const uint32_t *o = g.out->tuple[1]->data;
  for (int j = 0; j < 4; j++) ck_assert_uint_eq(o[j], b0[j]);
  ck_assert_uint_eq(o[4], b1[0]);
  ck_assert_uint_eq(o[5], b1[1]);
  ck_assert_uint_eq(new_state(&g)[0], st[0]);
  ck_assert_uint_eq(new_state(&g)[1], 11);
  gen_free(&g);
}
END_TEST

/* u64[3] state: counter (state[1], state[2]), with the carry into the high
 * word; u64 elements are (w0 | w1 << 32), (w2 | w3 << 32) per block. */
START_TEST(philox_u64_three_word_state_carry) {
  Gen g;
  const uint64_t st[3] = {42, UINT64_MAX, 7};
  const int64_t d[1] = {3};
  gen_run(&g, HLO_RNG_PHILOX, st, 3, HLO_U64, 1, d, 0);
  uint32_t b0[4], b1[4];
  ph_block(42, UINT64_MAX, 7, b0);
  ph_block(42, 0, 8, b1);   /* counter + 1 carries into the high word */
  const uint64_t *o = g.out->tuple[1]->data;
  ck_assert_uint_eq(o[0], (uint64_t)b0[0] | (uint64_t)b0[1] << 32);
  ck_assert_uint_eq(o[1], (uint64_t)b0[2] | (uint64_t)b0[3] << 32);
  ck_assert_uint_eq(o[2], (uint64_t)b1[0] | (uint64_t)b1[1] << 32);
  ck_assert_uint_eq(new_state(&g)[0], 42);
  ck_assert_uint_eq(new_state(&g)[1], 1);   /* UINT64_MAX + 2 blocks */
  ck_assert_uint_eq(new_state(&g)[2], 8);
  gen_free(&g);
}
END_TEST

START_TEST(bad_states_are_errors) {
  Gen g;
  const uint64_t st[4] = {1, 2, 3, 4};
  const int64_t d[1] = {2};
  gen_run(&g, HLO_RNG_THREE_FRY, st, 3, HLO_U32, 1, d, -1);
  ck_assert_ptr_nonnull(strstr(hli_last_error(), "three-fry needs a u64[2] state"));
  gen_free(&g);
  gen_run(&g, HLO_RNG_PHILOX, st, 4, HLO_U32, 1, d, -1);
  ck_assert_ptr_nonnull(strstr(hli_last_error(), "philox needs a u64[2] or u64[3] state"));
  gen_free(&g);
  gen_run(&g, HLO_RNG_PHILOX, st, 2, HLO_PRED, 1, d, -1);
  ck_assert_ptr_nonnull(strstr(hli_last_error(), "not supported: random bits of element type pred"));
  gen_free(&g);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("rng");
  TCase *t = tcase_create("ciphers");
  tcase_add_test(t, threefry_kat);
  tcase_add_test(t, philox_kat);
  suite_add_tcase(s, t);
  t = tcase_create("rng-bit-generator");
  tcase_add_checked_fixture(t, tl_begin, tl_end);
  tcase_add_test(t, threefry_u64_scalar_conformance);
  tcase_add_test(t, threefry_u32_odd_vector);
  tcase_add_test(t, threefry_u32_matrix_split);
  tcase_add_test(t, threefry_u16_low_bits);
  tcase_add_test(t, philox_u32_two_word_state);
  tcase_add_test(t, philox_u64_three_word_state_carry);
  tcase_add_test(t, bad_states_are_errors);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tl_main(suite()); }
