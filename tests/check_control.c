/* check_control.c: control flow and the other kernels of the control area,
 * end to end through the public API (parse, compile, run): while,
 * conditional (both forms, out-of-range index), call, map, fusion, scan,
 * async wrappers, collectives on one device, batch norm, dynamic sizes and
 * the precise errors for what cannot run.
 *
 * Every expected value is worked out by hand in the comment above its test
 * (counters, sums, branch choices, small batch-norm statistics). */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tests/testlib.h"
#include "interp/interp.h"

static HloCtx *ctx;

static void setup(void) { ctx = tl_ctx_new(1); }
static void teardown(void) { hlo_ctx_free(ctx); }

static void expect(const char *text, const char *want) {
  HloStatus st;
  char *got = tl_run_literal(ctx, text, NULL, 0, &st);
  ck_assert_msg(st == HLO_OK, "status %d: %s", st, hlo_ctx_diagnostics(ctx));
  ck_assert_str_eq(got, want);
  hlo_free(got);
}

static void expect_error(const char *text, const char *fragment) {
  HloStatus st;
  char *got = tl_run_literal(ctx, text, NULL, 0, &st);
  ck_assert_msg(st != HLO_OK, "expected an error, got %s", got ? got : "?");
  ck_assert_msg(strstr(hlo_ctx_diagnostics(ctx), fragment), "diagnostics: %s\nwant: %s",
                hlo_ctx_diagnostics(ctx), fragment);
  hlo_ctx_clear_diagnostics(ctx);
}

/* ---- while ----------------------------------------------------------------- */

#define COUNTER_LOOP(LIMIT, START)                                                \
  "HloModule w\n"                                                                  \
  "cond { p = s32[] parameter(0)\n c = s32[] constant(" LIMIT ")\n"               \
  " ROOT lt = pred[] compare(p, c), direction=LT }\n"                              \
  "body { p = s32[] parameter(0)\n one = s32[] constant(1)\n"                     \
  " ROOT n = s32[] add(p, one) }\n"                                               \
  "ENTRY e { z = s32[] constant(" START ")\n"                                     \
  " ROOT w = s32[] while(z), condition=cond, body=body }\n"

/* Array state: 0 -> 10 in steps of 1; a loop whose condition is false at
 * once returns its initial state. */
START_TEST(while_counter) {
  expect(COUNTER_LOOP("10", "0"), "s32[] 10");
  expect(COUNTER_LOOP("10", "25"), "s32[] 25");
}
END_TEST

/* Tuple state (i, acc): acc += i for i = 1..5 -> (6, 15). */
START_TEST(while_tuple_state) {
  expect("HloModule w\n"
         "cond { p = (s32[], s32[]) parameter(0)\n i = s32[] get-tuple-element(p), index=0\n"
         " c = s32[] constant(5)\n ROOT le = pred[] compare(i, c), direction=LE }\n"
         "body { p = (s32[], s32[]) parameter(0)\n i = s32[] get-tuple-element(p), index=0\n"
         " a = s32[] get-tuple-element(p), index=1\n one = s32[] constant(1)\n"
         " i1 = s32[] add(i, one)\n a1 = s32[] add(a, i)\n"
         " ROOT t = (s32[], s32[]) tuple(i1, a1) }\n"
         "ENTRY e { one = s32[] constant(1)\n z = s32[] constant(0)\n"
         " t = (s32[], s32[]) tuple(one, z)\n"
         " ROOT w = (s32[], s32[]) while(t), condition=cond, body=body }\n",
         "(s32[] 6, s32[] 15)");
}
END_TEST

/* 300000 iterations over an f32[1024] state: live memory stays at a few
 * copies of the state (no growth per iteration). */
START_TEST(while_long_loop_memory) {
  const char *text =
      "HloModule w\n"
      "cond { p = (s32[], f32[1024]) parameter(0)\n i = s32[] get-tuple-element(p), index=0\n"
      " c = s32[] constant(300000)\n ROOT lt = pred[] compare(i, c), direction=LT }\n"
      "body { p = (s32[], f32[1024]) parameter(0)\n i = s32[] get-tuple-element(p), index=0\n"
      " v = f32[1024] get-tuple-element(p), index=1\n one = s32[] constant(1)\n"
      " i1 = s32[] add(i, one)\n h = f32[] constant(0.5)\n hb = f32[1024] broadcast(h), dimensions={}\n"
      " v1 = f32[1024] multiply(v, hb)\n ROOT t = (s32[], f32[1024]) tuple(i1, v1) }\n"
      "ENTRY e { z = s32[] constant(0)\n o = f32[] constant(1)\n ob = f32[1024] broadcast(o), dimensions={}\n"
      " t = (s32[], f32[1024]) tuple(z, ob)\n"
      " w = (s32[], f32[1024]) while(t), condition=cond, body=body\n"
      " ROOT i = s32[] get-tuple-element(w), index=0 }\n";
  HloModule *m;
  ck_assert_int_eq(hlo_module_parse(ctx, text, strlen(text), "w.hlo", &m), HLO_OK);
  HloExecutable *e;
  ck_assert_int_eq(hlo_compile(ctx, m, NULL, &e), HLO_OK);
  HloBuffer *r;
  ck_assert_int_eq(hlo_execute(e, NULL, 0, &r), HLO_OK);
  ck_assert_int_eq(*(const int32_t *)hlo_buffer_data(r), 300000);
  ck_assert_uint_lt(hlo_executable_peak_memory(e), 64 * 1024);
  hlo_buffer_free(r);
  hlo_executable_free(e);
  hlo_module_free(m);
}
END_TEST

/* ---- conditional --------------------------------------------------------- */

#define PRED_COND(P)                                                              \
  "HloModule c\n"                                                                 \
  "t { p = f32[] parameter(0)\n ROOT n = f32[] negate(p) }\n"                     \
  "f { p = s32[] parameter(0)\n ROOT c = f32[] convert(p) }\n"                    \
  "ENTRY e { b = pred[] constant(" P ")\n x = f32[] constant(2.5)\n"              \
  " y = s32[] constant(7)\n"                                                      \
  " ROOT r = f32[] conditional(b, x, y), true_computation=t, false_computation=f }\n"

/* pred form: true -> negate(2.5) = -2.5; false -> convert(7) = 7. */
START_TEST(conditional_pred) {
  expect(PRED_COND("true"), "f32[] -2.5");
  expect(PRED_COND("false"), "f32[] 7");
}
END_TEST

#define INDEX_COND(I)                                                             \
  "HloModule c\n"                                                                 \
  "b0 { p = s32[] parameter(0)\n ROOT r = s32[] add(p, p) }\n"                    \
  "b1 { p = s32[] parameter(0)\n ROOT r = s32[] multiply(p, p) }\n"               \
  "b2 { p = s32[] parameter(0)\n ROOT r = s32[] negate(p) }\n"                    \
  "ENTRY e { i = s32[] constant(" I ")\n a = s32[] constant(3)\n"                 \
  " b = s32[] constant(4)\n c = s32[] constant(5)\n"                              \
  " ROOT r = s32[] conditional(i, a, b, c), branch_computations={b0, b1, b2} }\n"

/* Index 0 -> 3+3 = 6, 1 -> 4*4 = 16, 2 -> -5; out of range (-1, 3, 1000)
 * runs the last branch: -5. */
START_TEST(conditional_index) {
  expect(INDEX_COND("0"), "s32[] 6");
  expect(INDEX_COND("1"), "s32[] 16");
  expect(INDEX_COND("2"), "s32[] -5");
  expect(INDEX_COND("-1"), "s32[] -5");
  expect(INDEX_COND("3"), "s32[] -5");
  expect(INDEX_COND("1000"), "s32[] -5");
}
END_TEST

/* ---- call, map, fusion ----------------------------------------------------- */

/* call of a call: f(a, b) = g(a) * b with g(x) = x + 1: f(2, 5) = 15. */
START_TEST(call_nested) {
  expect("HloModule c\n"
         "g { x = s32[] parameter(0)\n o = s32[] constant(1)\n ROOT r = s32[] add(x, o) }\n"
         "f { a = s32[] parameter(0)\n b = s32[] parameter(1)\n"
         " ga = s32[] call(a), to_apply=g\n ROOT r = s32[] multiply(ga, b) }\n"
         "ENTRY e { a = s32[] constant(2)\n b = s32[] constant(5)\n"
         " ROOT r = s32[] call(a, b), to_apply=f }\n",
         "s32[] 15");
}
END_TEST

/* map with a recognised reducer (add, swapped parameters) and with a general
 * computation x*x + y*z of three operands:
 * {1,2,3}+{10,20,30} = {11,22,33}; {1,2,3}^2 + {10,20,30}*{2,2,2} = {21,44,69}. */
START_TEST(map_fast_and_general) {
  expect("HloModule m\n"
         "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT r = f32[] add(b, a) }\n"
         "ENTRY e { x = f32[3] constant({1, 2, 3})\n y = f32[3] constant({10, 20, 30})\n"
         " ROOT r = f32[3] map(x, y), dimensions={0}, to_apply=add }\n",
         "f32[3] {11, 22, 33}");
  expect("HloModule m\n"
         "g { a = s32[] parameter(0)\n b = s32[] parameter(1)\n c = s32[] parameter(2)\n"
         " aa = s32[] multiply(a, a)\n bc = s32[] multiply(b, c)\n ROOT r = s32[] add(aa, bc) }\n"
         "ENTRY e { x = s32[3] constant({1, 2, 3})\n y = s32[3] constant({10, 20, 30})\n"
         " z = s32[3] constant({2, 2, 2})\n"
         " ROOT r = s32[3] map(x, y, z), dimensions={0}, to_apply=g }\n",
         "s32[3] {21, 44, 69}");
}
END_TEST

/* A map whose computation returns its parameter unchanged (the argument
 * value is then still referenced): {4,5,6} -> {4,5,6}. */
START_TEST(map_identity_computation) {
  expect("HloModule m\n"
         "id { a = u8[] parameter(0)\n ROOT c = u8[] copy(a) }\n"
         "ENTRY e { x = u8[3] constant({4, 5, 6})\n"
         " ROOT r = u8[3] map(x), dimensions={0}, to_apply=id }\n",
         "u8[3] {4, 5, 6}");
}
END_TEST

/* kLoop fusion of (a + b) * a: ({1,2} + {3,4}) * {1,2} = {4, 12}; a kInput
 * fusion with a reduce root: sum {4, 12} = 16 (tuple result). */
START_TEST(fusion_kinds) {
  expect("HloModule f\n"
         "fused { p0 = f32[2] parameter(0)\n p1 = f32[2] parameter(1)\n"
         " s = f32[2] add(p0, p1)\n ROOT m = f32[2] multiply(s, p0) }\n"
         "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT r = f32[] add(a, b) }\n"
         "fused.1 { p0 = f32[2] parameter(0)\n z = f32[] constant(0)\n"
         " ROOT r = f32[] reduce(p0, z), dimensions={0}, to_apply=add }\n"
         "ENTRY e { a = f32[2] constant({1, 2})\n b = f32[2] constant({3, 4})\n"
         " l = f32[2] fusion(a, b), kind=kLoop, calls=fused\n"
         " s = f32[] fusion(l), kind=kInput, calls=fused.1\n"
         " ROOT t = (f32[2], f32[]) tuple(l, s) }\n",
         "(f32[2] {4, 12}, f32[] 16)");
}
END_TEST

/* ---- scan ------------------------------------------------------------------ */

/* Running sum of {1,2,3,4} with carry 0: outputs {1,3,6,10}, carry 10;
 * reversed: outputs {10,9,7,4} (sums from the end), carry 10. */
START_TEST(scan_forward_reverse) {
  const char *fwd =
      "HloModule s\n"
      "f { x = s32[] parameter(0)\n c = s32[] parameter(1)\n s = s32[] add(x, c)\n"
      " ROOT t = (s32[], s32[]) tuple(s, s) }\n"
      "ENTRY e { in = s32[4] constant({1, 2, 3, 4})\n z = s32[] constant(0)\n"
      " ROOT r = (s32[4], s32[]) scan(in, z), dimensions={0}, num_carries=1, to_apply=f }\n";
  expect(fwd, "(s32[4] {1, 3, 6, 10}, s32[] 10)");
  const char *rev =
      "HloModule s\n"
      "f { x = s32[] parameter(0)\n c = s32[] parameter(1)\n s = s32[] add(x, c)\n"
      " ROOT t = (s32[], s32[]) tuple(s, s) }\n"
      "ENTRY e { in = s32[4] constant({1, 2, 3, 4})\n z = s32[] constant(0)\n"
      " ROOT r = (s32[4], s32[]) scan(in, z), dimensions={0}, num_carries=1, is_reverse=true,"
      " to_apply=f }\n";
  expect(rev, "(s32[4] {10, 9, 7, 4}, s32[] 10)");
}
END_TEST

/* Scan along dimension 1 of a 2x3 matrix, carrying a row vector that the
 * computation returns as its own parameter (the carry aliases the input
 * slice): outputs are the running sums per row {{1,3,6},{4,9,15}}; the final
 * carry is the last input column {3, 6}. */
START_TEST(scan_dim1_carry_aliases_input) {
  expect("HloModule s\n"
         "f { x = s32[2] parameter(0)\n c = s32[2] parameter(1)\n acc = s32[2] parameter(2)\n"
         " s = s32[2] add(x, acc)\n ROOT t = (s32[2], s32[2], s32[2]) tuple(s, x, s) }\n"
         "ENTRY e { in = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})\n z = s32[2] constant({0, 0})\n"
         " ROOT r = (s32[2,3], s32[2], s32[2]) scan(in, z, z), dimensions={1}, num_carries=2,"
         " to_apply=f }\n",
         "(s32[2,3] {{1, 3, 6}, {4, 9, 15}}, s32[2] {3, 6}, s32[2] {6, 15})");
}
END_TEST

/* ---- async wrappers ----------------------------------------------------- */

/* Explicit async-start/-update/-done around a computation (x * 2 of 21 = 42),
 * and copy-start/copy-done of {1, 2}. */
START_TEST(async_and_copy_start) {
  expect("HloModule a\n"
         "w { p = s32[] parameter(0)\n two = s32[] constant(2)\n ROOT m = s32[] multiply(p, two) }\n"
         "ENTRY e { x = s32[] constant(21)\n"
         " s = ((s32[]), s32[], u32[]) async-start(x), calls=w\n"
         " u = ((s32[]), s32[], u32[]) async-update(s), calls=w\n"
         " d = s32[] async-done(u), calls=w\n"
         " v = f32[2] constant({1, 2})\n"
         " cs = (f32[2], f32[2], u32[]) copy-start(v)\n"
         " cd = f32[2] copy-done(cs)\n"
         " ROOT t = (s32[], f32[2]) tuple(d, cd) }\n",
         "(s32[] 42, f32[2] {1, 2})");
}
END_TEST

/* ---- collectives on one device ------------------------------------------- */

/* all-reduce over a group of one returns the operand; collective-permute
 * with pair {0,0} delivers it, with no pair targeting 0 gives zeros;
 * replica-id and partition-id are 0. */
START_TEST(collectives_one_device) {
  expect("HloModule c\n"
         "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT r = f32[] add(a, b) }\n"
         "ENTRY e { x = f32[2] constant({1.5, -2})\n"
         " ar = f32[2] all-reduce(x), replica_groups={{0}}, to_apply=add\n"
         " ag = f32[2] all-gather(x), replica_groups={}, dimensions={0}\n"
         " cp = f32[2] collective-permute(x), source_target_pairs={{0,0}}\n"
         " cz = f32[2] collective-permute(x), source_target_pairs={}\n"
         " r = u32[] replica-id()\n p = u32[] partition-id()\n"
         " ROOT t = (f32[2], f32[2], f32[2], f32[2], u32[], u32[]) tuple(ar, ag, cp, cz, r, p) }\n",
         "(f32[2] {1.5, -2}, f32[2] {1.5, -2}, f32[2] {1.5, -2}, f32[2] {0, 0}, u32[] 0, u32[] 0)");
}
END_TEST

/* hlo_execute runs one device; a module on a grid (its header's, or the
 * one its ids need) runs with hlo_execute_devices (check_devices.c). */
START_TEST(collectives_need_one_device) {
  expect_error("HloModule c, replica_count=2\n"
               "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT r = f32[] add(a, b) }\n"
               "ENTRY e { x = f32[2] constant({1, 2})\n"
               " ROOT ar = f32[2] all-reduce(x), replica_groups={{0,1}}, to_apply=add }\n",
               "the module runs on 2 devices: run it with hlo_execute_devices");
  expect_error("HloModule c\n"
               "ENTRY e { x = f32[2] constant({1, 2})\n"
               " ROOT cp = f32[2] collective-permute(x), source_target_pairs={{0,1},{1,0}} }\n",
               "the module runs on 2 devices: run it with hlo_execute_devices");
}
END_TEST

START_TEST(host_transfer_is_error) {
  expect_error("HloModule s\n"
               "ENTRY e { t = token[] after-all()\n"
               " ROOT i = (f32[2], token[]) infeed(t) }\n",
               "infeed has no meaning on one CPU process without a host transfer");
}
END_TEST

/* ---- batch norm ------------------------------------------------------------ */

/* x = {{1,2},{3,4}}, feature_index=1: feature 0 = {1,3} (mean 2, var 1),
 * feature 1 = {2,4} (mean 3, var 1); scale {2,3}, offset {10,20}, eps 0:
 * y = {{-1*2+10, -1*3+20}, {1*2+10, 1*3+20}} = {{8,17},{12,23}}. Inference
 * with the same mean and variance gives the same y. */
START_TEST(batch_norm_training_inference) {
  expect("HloModule b\n"
         "ENTRY e { x = f32[2,2] constant({{1, 2}, {3, 4}})\n s = f32[2] constant({2, 3})\n"
         " o = f32[2] constant({10, 20})\n"
         " ROOT t = (f32[2,2], f32[2], f32[2]) batch-norm-training(x, s, o), epsilon=0, feature_index=1 }\n",
         "(f32[2,2] {{8, 17}, {12, 23}}, f32[2] {2, 3}, f32[2] {1, 1})");
  expect("HloModule b\n"
         "ENTRY e { x = f32[2,2] constant({{1, 2}, {3, 4}})\n s = f32[2] constant({2, 3})\n"
         " o = f32[2] constant({10, 20})\n m = f32[2] constant({2, 3})\n v = f32[2] constant({1, 1})\n"
         " ROOT y = f32[2,2] batch-norm-inference(x, s, o, m, v), epsilon=0, feature_index=1 }\n",
         "f32[2,2] {{8, 17}, {12, 23}}");
}
END_TEST

/* x = {-1, 0, 1} (one feature, shape [3,1]), mean 0, variance 0.75, eps 0.25
 * (so var + eps = 1), scale 2, dy = {1, 0, 0}: grad_offset = sum dy = 1,
 * grad_scale = sum dy (x - mean) = -1, c = mean(dy (x - mean)) = -1/3,
 * grad_x = 2 (dy - 1/3 + (x - mean)/3) = {2/3, -2/3, 0}. */
START_TEST(batch_norm_grad) {
  const char *text =
      "HloModule b\n"
      "ENTRY e { x = f64[3,1] constant({{-1}, {0}, {1}})\n s = f64[1] constant({2})\n"
      " m = f64[1] constant({0})\n v = f64[1] constant({0.75})\n dy = f64[3,1] constant({{1}, {0}, {0}})\n"
      " ROOT t = (f64[3,1], f64[1], f64[1]) batch-norm-grad(x, s, m, v, dy), epsilon=0.25,"
      " feature_index=1 }\n";
  HloModule *mod;
  ck_assert_int_eq(hlo_module_parse(ctx, text, strlen(text), "b.hlo", &mod), HLO_OK);
  HloBuffer *r, *gx, *gs, *go;
  ck_assert_msg(hlo_run(ctx, mod, NULL, 0, &r) == HLO_OK, "%s", hlo_ctx_diagnostics(ctx));
  ck_assert_int_eq(hlo_buffer_tuple_element(ctx, r, 0, &gx), HLO_OK);
  ck_assert_int_eq(hlo_buffer_tuple_element(ctx, r, 1, &gs), HLO_OK);
  ck_assert_int_eq(hlo_buffer_tuple_element(ctx, r, 2, &go), HLO_OK);
  const double *x = hlo_buffer_data(gx);
  ck_assert_double_eq_tol(x[0], 2.0 / 3, 1e-15);
  ck_assert_double_eq_tol(x[1], -2.0 / 3, 1e-15);
  ck_assert_double_eq_tol(x[2], 0, 1e-15);
  ck_assert_double_eq_tol(*(const double *)hlo_buffer_data(gs), -1, 1e-15);
  ck_assert_double_eq_tol(*(const double *)hlo_buffer_data(go), 1, 1e-15);
  hlo_buffer_free(gx);
  hlo_buffer_free(gs);
  hlo_buffer_free(go);
  hlo_buffer_free(r);
  hlo_module_free(mod);
}
END_TEST

/* ---- dynamic dimension sizes --------------------------------------------- */

/* set-dimension-size to 3 of s32[4], through an add and a negate: 3; a
 * static dimension: its size 4; dynamic-reshape of 6 elements to sizes
 * (2, 3) inside bounds [<=4, 3]: size of dimension 0 is 2. */
START_TEST(dimension_sizes) {
  expect("HloModule d\n"
         "ENTRY e { n = s32[] constant(3)\n x = s32[4] constant({1, 2, 3, 4})\n"
         " d = s32[<=4] set-dimension-size(x, n), dimensions={0}\n"
         " s = s32[<=4] add(d, x)\n g = s32[<=4] negate(s)\n"
         " a = s32[] get-dimension-size(g), dimensions={0}\n"
         " b = s32[] get-dimension-size(x), dimensions={0}\n"
         " ROOT t = (s32[], s32[]) tuple(a, b) }\n",
         "(s32[] 3, s32[] 4)");
  expect("HloModule d\n"
         "ENTRY e { x = f32[6] constant({1, 2, 3, 4, 5, 6})\n two = s32[] constant(2)\n"
         " three = s32[] constant(3)\n"
         " r = f32[<=4,3] dynamic-reshape(x, two, three)\n"
         " ROOT a = s32[] get-dimension-size(r), dimensions={0} }\n",
         "s32[] 2");
}
END_TEST

START_TEST(dimension_size_errors) {
  expect_error("HloModule d\n"
               "ENTRY e { n = s32[] constant(5)\n x = s32[4] constant({1, 2, 3, 4})\n"
               " ROOT d = s32[<=4] set-dimension-size(x, n), dimensions={0} }\n",
               "size 5 is outside [0, 4], the bound of dimension 0");
  expect_error("HloModule d\n"
               "ENTRY e { x = s32[<=4] parameter(0)\n"
               " ROOT a = s32[] get-dimension-size(x), dimensions={0} }\n",
               "comes from outside its computation (parameter 0)");
}
END_TEST

/* ---- rng ------------------------------------------------------------------ */

/* rng_uniform in [2, 3) for f32 and [-5, 5) for s32: every value in range;
 * rng-get-and-update-state twice with delta 7: the second state is the
 * first plus 7 (low word; the high word is unchanged unless it carried). */
START_TEST(rng_ranges_and_state) {
  const char *text =
      "HloModule r\n"
      "ENTRY e { a = f32[] constant(2)\n b = f32[] constant(3)\n"
      " u = f32[1000] rng(a, b), distribution=rng_uniform\n"
      " c = s32[] constant(-5)\n d = s32[] constant(5)\n"
      " v = s32[1000] rng(c, d), distribution=rng_uniform\n"
      " s1 = u64[2] rng-get-and-update-state(), delta=7\n"
      " s2 = u64[2] rng-get-and-update-state(), delta=7\n"
      " ROOT t = (f32[1000], s32[1000], u64[2], u64[2]) tuple(u, v, s1, s2) }\n";
  HloModule *m;
  ck_assert_int_eq(hlo_module_parse(ctx, text, strlen(text), "r.hlo", &m), HLO_OK);
  HloBuffer *r, *u, *v, *s1, *s2;
  ck_assert_msg(hlo_run(ctx, m, NULL, 0, &r) == HLO_OK, "%s", hlo_ctx_diagnostics(ctx));
  ck_assert_int_eq(hlo_buffer_tuple_element(ctx, r, 0, &u), HLO_OK);
  ck_assert_int_eq(hlo_buffer_tuple_element(ctx, r, 1, &v), HLO_OK);
  ck_assert_int_eq(hlo_buffer_tuple_element(ctx, r, 2, &s1), HLO_OK);
  ck_assert_int_eq(hlo_buffer_tuple_element(ctx, r, 3, &s2), HLO_OK);
  const float *uf = hlo_buffer_data(u);
  const int32_t *vi = hlo_buffer_data(v);
  for (int i = 0; i < 1000; i++) {
    ck_assert(uf[i] >= 2.0f && uf[i] < 3.0f);
    ck_assert(vi[i] >= -5 && vi[i] < 5);
  }
  const uint64_t *a = hlo_buffer_data(s1), *b = hlo_buffer_data(s2);
  /* Either call may run first: the two states are 7 apart. */
  uint64_t lo = a[0] < b[0] ? a[0] : b[0], hi = a[0] < b[0] ? b[0] : a[0];
  if (hi - lo != 7) ck_assert_uint_eq(lo + (UINT64_MAX - hi) + 1, 7);   /* wrapped */
  hlo_buffer_free(u);
  hlo_buffer_free(v);
  hlo_buffer_free(s1);
  hlo_buffer_free(s2);
  hlo_buffer_free(r);
  hlo_module_free(m);
}
END_TEST

/* Every opcode runs or fails with a reason: each has a kernel entry, except
 * the ones the executor evaluates itself (parameter, constant, tuple,
 * get-tuple-element, and after-all/add-dependency without a kernel) and
 * custom-call (registered by the FFI layer). */
START_TEST(every_opcode_has_an_entry) {
  const HliOpEntry *t = hli_op_table();
  for (int op = 0; op < HLO_NUM_OPCODES; op++) {
    switch (op) {
    case HLO_OP_PARAMETER: case HLO_OP_CONSTANT: case HLO_OP_TUPLE: case HLO_OP_GET_TUPLE_ELEMENT:
    case HLO_OP_AFTER_ALL: case HLO_OP_ADD_DEPENDENCY:
      continue;
    default:
      ck_assert_msg(t[op].run != NULL, "opcode %s has no entry", hlp_opcode_name((HloOpcode)op));
    }
  }
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("control");
  TCase *t = tcase_create("flow");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_set_timeout(t, 60);
  tcase_add_test(t, while_counter);
  tcase_add_test(t, while_tuple_state);
  tcase_add_test(t, while_long_loop_memory);
  tcase_add_test(t, conditional_pred);
  tcase_add_test(t, conditional_index);
  tcase_add_test(t, call_nested);
  tcase_add_test(t, map_fast_and_general);
  tcase_add_test(t, map_identity_computation);
  tcase_add_test(t, fusion_kinds);
  tcase_add_test(t, scan_forward_reverse);
  tcase_add_test(t, scan_dim1_carry_aliases_input);
  tcase_add_test(t, async_and_copy_start);
  suite_add_tcase(s, t);
  t = tcase_create("other");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_add_test(t, collectives_one_device);
  tcase_add_test(t, collectives_need_one_device);
  tcase_add_test(t, host_transfer_is_error);
  tcase_add_test(t, batch_norm_training_inference);
  tcase_add_test(t, batch_norm_grad);
  tcase_add_test(t, dimension_sizes);
  tcase_add_test(t, dimension_size_errors);
  tcase_add_test(t, rng_ranges_and_state);
  tcase_add_test(t, every_opcode_has_an_entry);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tl_main(suite()); }
