/* check_stablehlo.c: unit tests of the StableHLO front end (stablehlo/):
 * the HLO each construct translates to (the opcode and attributes XLA's
 * translation gives it, from xla/hlo/translate/mhlo_to_hlo and StableHLO's
 * spec), dense literals (hex, splat, complex, narrow types), values computed
 * end to end against hand-worked results, the pretty and generic syntax of
 * the same program giving the same HLO, positioned errors for what HLO cannot
 * hold, test files with checks that pass and checks that fail, and hostile
 * input (every truncation, garbage, deep nesting: no crash, no leak).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hlorun.h"
#include "parser/parser.h"
#include "stablehlo/stablehlo.h"
#include "tests/testlib.h"

/* HLO text of an MLIR module; fails the test with the diagnostics if none. */
static char *hlo_of(const char *mlir) {
  HlcDiags d = {0};
  size_t n;
  char *t = shlo_to_hlo_text(mlir, strlen(mlir), "t.mlir", &d, &n);
  if (!t)
    for (int i = 0; i < d.n; i++) fputs(d.v[i].text, stderr);
  ck_assert_ptr_nonnull(t);
  /* the HLO parses and verifies */
  HloModule *m = hlp_parse(t, n, "t.hlo", &d);
  if (!m) {
    fputs(t, stderr);
    for (int i = 0; i < d.n; i++) fputs(d.v[i].text, stderr);
  }
  ck_assert_ptr_nonnull(m);
  if (hlp_verify(m, &d) != 0) {
    fputs(t, stderr);
    for (int i = 0; i < d.n; i++) fputs(d.v[i].text, stderr);
    ck_abort_msg("the translated module does not verify");
  }
  hlp_module_free(m);
  hlc_diags_clear(&d);
  return t;
}

/* The first error's message line ("t.mlir:L:C: error: ..."), or NULL. */
static char *error_of(const char *mlir, size_t len) {
  HlcDiags d = {0};
  size_t n;
  char *t = shlo_to_hlo_text(mlir, len, "t.mlir", &d, &n);
  char *r = NULL;
  for (int i = 0; i < d.n && !r; i++)
    if (d.v[i].sev == HLC_ERROR) r = strndup(d.v[i].text, strcspn(d.v[i].text, "\n"));
  free(t);
  hlc_diags_clear(&d);
  return r;
}

#define HAS(t, s) ck_assert_msg(strstr((t), (s)) != NULL, "missing \"%s\" in:\n%s", (s), (t))

#define MAIN(sig, body) "module @m {\n  func.func public @main" sig " {\n" body "  }\n}\n"

START_TEST(translate_attributes) {
  char *t = hlo_of(MAIN("(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32>",
                        "    %cst = stablehlo.constant dense<0.0> : tensor<f32>\n"
                        "    %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>\n"
                        "    %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<2x4xf32>) -> tensor<4x2xf32>\n"
                        "    %2 = stablehlo.compare GT, %1, %1, TOTALORDER : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xi1>\n"
                        "    %3 = stablehlo.select %2, %1, %1 : tensor<4x2xi1>, tensor<4x2xf32>\n"
                        "    %4 = stablehlo.slice %3 [0:4:2, 1:2] : (tensor<4x2xf32>) -> tensor<2x1xf32>\n"
                        "    %5 = stablehlo.pad %4, %cst, low = [0, 1], high = [0, 2], interior = [0, 0] : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x4xf32>\n"
                        "    %6 = stablehlo.iota dim = 1 : tensor<2x4xf32>\n"
                        "    %7 = stablehlo.add %5, %6 : tensor<2x4xf32>\n"
                        "    return %7 : tensor<2x4xf32>\n"));
  HAS(t, "f32[2,4] dot(");
  HAS(t, "lhs_contracting_dims={1}, rhs_contracting_dims={0}");
  HAS(t, "transpose(");
  HAS(t, "dimensions={1,0}");
  HAS(t, "direction=GT, type=TOTALORDER");
  HAS(t, "slice={[0:4:2], [1:2:1]}");
  HAS(t, "padding=0_0_0x1_2_0");
  HAS(t, "iota(), iota_dimension=1");
  HAS(t, "f32[] constant(0)");
  free(t);
}
END_TEST

START_TEST(translate_regions) {
  /* a reduce (pretty, 'applies'), a while with a captured value, an if */
  char *t = hlo_of(MAIN("(%a: tensor<4xi32>) -> tensor<i32>",
                        "    %zero = stablehlo.constant dense<0> : tensor<i32>\n"
                        "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
                        "    %s = stablehlo.reduce(%a init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<4xi32>, tensor<i32>) -> tensor<i32>\n"
                        "    %r:2 = stablehlo.while(%i = %zero, %acc = %zero) : tensor<i32>, tensor<i32>\n"
                        "     cond {\n"
                        "      %c = stablehlo.compare LT, %i, %s : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
                        "      stablehlo.return %c : tensor<i1>\n"
                        "    } do {\n"
                        "      %n = stablehlo.add %i, %one : tensor<i32>\n"
                        "      %m = stablehlo.add %acc, %i : tensor<i32>\n"
                        "      stablehlo.return %n, %m : tensor<i32>, tensor<i32>\n"
                        "    }\n"
                        "    %p = stablehlo.compare GT, %r#1, %zero : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
                        "    %x = \"stablehlo.if\"(%p) ({\n"
                        "      stablehlo.return %r#1 : tensor<i32>\n"
                        "    }, {\n"
                        "      stablehlo.return %one : tensor<i32>\n"
                        "    }) : (tensor<i1>) -> tensor<i32>\n"
                        "    return %x : tensor<i32>\n"));
  HAS(t, "reduce(");
  HAS(t, "dimensions={0}, to_apply=");
  HAS(t, "s32[] add(");          /* the reducer's body */
  /* %s is captured by the loop: carried in its state after the two values */
  HAS(t, "(s32[], s32[], s32[]) while(");
  HAS(t, "conditional(");
  HAS(t, "true_computation=");
  free(t);
}
END_TEST

/* The same program in pretty and generic syntax gives the same HLO. */
START_TEST(pretty_and_generic_agree) {
  char *a = hlo_of(MAIN("(%a: tensor<2x3xf32>) -> tensor<3xf32>",
                        "    %c = stablehlo.constant dense<1.5> : tensor<f32>\n"
                        "    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<2x3xf32>\n"
                        "    %1 = stablehlo.multiply %a, %0 : tensor<2x3xf32>\n"
                        "    %2 = stablehlo.reduce(%1 init: %c) across dimensions = [0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>\n"
                        "     reducer(%x: tensor<f32>, %y: tensor<f32>)  {\n"
                        "      %s = stablehlo.maximum %x, %y : tensor<f32>\n"
                        "      stablehlo.return %s : tensor<f32>\n"
                        "    }\n"
                        "    return %2 : tensor<3xf32>\n"));
  char *b = hlo_of(MAIN("(%a: tensor<2x3xf32>) -> tensor<3xf32>",
                        "    %c = \"stablehlo.constant\"() <{value = dense<1.5> : tensor<f32>}> : () -> tensor<f32>\n"
                        "    %0 = \"stablehlo.broadcast_in_dim\"(%c) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x3xf32>\n"
                        "    %1 = \"stablehlo.multiply\"(%a, %0) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>\n"
                        "    %2 = \"stablehlo.reduce\"(%1, %c) <{dimensions = array<i64: 0>}> ({\n"
                        "    ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
                        "      %s = \"stablehlo.maximum\"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
                        "      \"stablehlo.return\"(%s) : (tensor<f32>) -> ()\n"
                        "    }) : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>\n"
                        "    \"func.return\"(%2) : (tensor<3xf32>) -> ()\n"));
  ck_assert_str_eq(a, b);
  free(a);
  free(b);
}
END_TEST

/* dense<> literals: each element as XLA prints it. */
static void literal_is(const char *type, const char *dense, const char *want) {
  char mlir[1024];
  snprintf(mlir, sizeof mlir, MAIN("() -> %s", "    %%0 = stablehlo.constant %s : %s\n    return %%0 : %s\n"), type, dense,
           type, type);
  char *t = hlo_of(mlir);
  HAS(t, want);
  free(t);
}

START_TEST(dense_literals) {
  literal_is("tensor<2xf32>", "dense<\"0x0000803F00000040\">", "constant({1, 2})");   /* raw little-endian */
  literal_is("tensor<2x2xi32>", "dense<[[1, -2], [3, 4]]>", "constant({{1, -2}, {3, 4}})");
  literal_is("tensor<3xbf16>", "dense<[0x7F80, 0xFF80, 1.0]>", "constant({inf, -inf, 1})");
  literal_is("tensor<f32>", "dense<0x7FC00000>", "constant(nan)");
  literal_is("tensor<2xcomplex<f32>>", "dense<[(1.5, -2.0), (0.0, 1.0)]>", "constant({(1.5, -2), (0, 1)})");
  literal_is("tensor<2xi1>", "dense<[true, false]>", "constant({true, false})");
  literal_is("tensor<ui64>", "dense<18446744073709551615>", "constant(18446744073709551615)");
  literal_is("tensor<2xi4>", "dense<[-8, 7]>", "constant({-8, 7})");
  literal_is("tensor<f16>", "dense<0x2E66>", "constant(0.099976)");   /* 0x2E66 = 0.0999755859375 */
  /* a splat is a scalar constant broadcast */
  literal_is("tensor<2x3xf32>", "dense<2.5>", "broadcast(");
  literal_is("tensor<2x0xf32>", "dense<>", "constant({{}, {}})");
}
END_TEST

/* Values end to end through the public API. */
static HloBuffer *run_mlir(HloCtx *ctx, const char *mlir, HloBuffer **in, int n) {
  HloModule *m = NULL;
  HloStatus st = hlo_module_parse(ctx, mlir, strlen(mlir), "t.mlir", &m);
  if (st != HLO_OK) fputs(hlo_ctx_diagnostics(ctx), stderr);
  ck_assert_int_eq(st, HLO_OK);
  HloExecutable *e = NULL;
  ck_assert_int_eq(hlo_compile(ctx, m, NULL, &e), HLO_OK);
  HloBuffer *r = NULL;
  ck_assert_int_eq(hlo_execute(e, in, n, &r), HLO_OK);
  hlo_executable_free(e);
  hlo_module_free(m);
  return r;
}

START_TEST(values_end_to_end) {
  HloCtx *ctx = NULL;
  ck_assert_int_eq(hlo_ctx_new(NULL, &ctx), HLO_OK);
  /* sum_{i<n} i for n = sum(a) = 1+2+3+4 = 10: 45; then max(45, a) */
  const char *mlir = MAIN("(%a: tensor<4xi32>) -> tensor<4xi32>",
                          "    %zero = stablehlo.constant dense<0> : tensor<i32>\n"
                          "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
                          "    %s = stablehlo.reduce(%a init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<4xi32>, tensor<i32>) -> tensor<i32>\n"
                          "    %r:2 = stablehlo.while(%i = %zero, %acc = %zero) : tensor<i32>, tensor<i32>\n"
                          "     cond {\n"
                          "      %c = stablehlo.compare LT, %i, %s : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
                          "      stablehlo.return %c : tensor<i1>\n"
                          "    } do {\n"
                          "      %n = stablehlo.add %i, %one : tensor<i32>\n"
                          "      %m = stablehlo.add %acc, %i : tensor<i32>\n"
                          "      stablehlo.return %n, %m : tensor<i32>, tensor<i32>\n"
                          "    }\n"
                          "    %b = stablehlo.broadcast_in_dim %r#1, dims = [] : (tensor<i32>) -> tensor<4xi32>\n"
                          "    %x = stablehlo.maximum %b, %a : tensor<4xi32>\n"
                          "    %y = func.call @twice(%x) : (tensor<4xi32>) -> tensor<4xi32>\n"
                          "    return %y : tensor<4xi32>\n"
                          "  }\n"
                          "  func.func private @twice(%v: tensor<4xi32>) -> tensor<4xi32> {\n"
                          "    %0 = stablehlo.add %v, %v : tensor<4xi32>\n"
                          "    return %0 : tensor<4xi32>\n");
  /* MAIN closes two braces: the private function ends the module */
  int32_t av[4] = {1, 2, 3, 4};
  int64_t dims[1] = {4};
  HloBuffer *a = NULL;
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_S32, dims, 1, av, &a), HLO_OK);
  HloBuffer *r = run_mlir(ctx, mlir, &a, 1);
  const int32_t *rv = hlo_buffer_data(r);
  for (int i = 0; i < 4; i++) ck_assert_int_eq(rv[i], 90);
  hlo_buffer_free(r);
  hlo_buffer_free(a);

  /* dot_general with a batch dimension: [[1,2],[3,4]] . [[5],[6]] = [[17],[39]]; batch 2 negates */
  const char *dot = MAIN("() -> tensor<2x2x1xf32>",
                         "    %a = stablehlo.constant dense<[[[1.0, 2.0], [3.0, 4.0]], [[-1.0, -2.0], [-3.0, -4.0]]]> : tensor<2x2x2xf32>\n"
                         "    %b = stablehlo.constant dense<[[[5.0], [6.0]], [[5.0], [6.0]]]> : tensor<2x2x1xf32>\n"
                         "    %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x2x2xf32>, tensor<2x2x1xf32>) -> tensor<2x2x1xf32>\n"
                         "    return %0 : tensor<2x2x1xf32>\n");
  r = run_mlir(ctx, dot, NULL, 0);
  const float *fv = hlo_buffer_data(r);
  const float want[4] = {17, 39, -17, -39};
  for (int i = 0; i < 4; i++) ck_assert_float_eq(fv[i], want[i]);
  hlo_buffer_free(r);
  hlo_ctx_free(ctx);
}
END_TEST

/* chlo.top_k in its pretty form (k inside the operand list, "T -> (T, T)")
 * and its generic one: the 2 largest of each row and their indices, equal
 * values in index order. Rows [3,1,3,2] and [0,5,4,5]: values [3,3] and
 * [5,5], indices [0,2] and [1,3] (worked out by hand). */
START_TEST(top_k_forms) {
  HloCtx *ctx = NULL;
  ck_assert_int_eq(hlo_ctx_new(NULL, &ctx), HLO_OK);
  const char *forms[2] = {
      MAIN("() -> (tensor<2x2xi32>, tensor<2x2xi32>)",
           "    %x = stablehlo.constant dense<[[3, 1, 3, 2], [0, 5, 4, 5]]> : tensor<2x4xi32>\n"
           "    %v, %i = chlo.top_k(%x, k = 2) : tensor<2x4xi32> -> (tensor<2x2xi32>, tensor<2x2xi32>)\n"
           "    return %v, %i : tensor<2x2xi32>, tensor<2x2xi32>\n"),
      MAIN("() -> (tensor<2x2xi32>, tensor<2x2xi32>)",
           "    %x = stablehlo.constant dense<[[3, 1, 3, 2], [0, 5, 4, 5]]> : tensor<2x4xi32>\n"
           "    %r:2 = \"chlo.top_k\"(%x) {k = 2 : i64} : (tensor<2x4xi32>) -> (tensor<2x2xi32>, tensor<2x2xi32>)\n"
           "    return %r#0, %r#1 : tensor<2x2xi32>, tensor<2x2xi32>\n")};
  const int32_t want_v[4] = {3, 3, 5, 5}, want_i[4] = {0, 2, 1, 3};
  for (int f = 0; f < 2; f++) {
    HloBuffer *r = run_mlir(ctx, forms[f], NULL, 0);
    ck_assert_int_eq(hlo_buffer_tuple_size(r), 2);
    HloBuffer *v = NULL, *i = NULL;
    ck_assert_int_eq(hlo_buffer_tuple_element(ctx, r, 0, &v), HLO_OK);
    ck_assert_int_eq(hlo_buffer_tuple_element(ctx, r, 1, &i), HLO_OK);
    const int32_t *vv = hlo_buffer_data(v), *iv = hlo_buffer_data(i);
    for (int k = 0; k < 4; k++) {
      ck_assert_int_eq(vv[k], want_v[k]);
      ck_assert_int_eq(iv[k], want_i[k]);
    }
    hlo_buffer_free(v);
    hlo_buffer_free(i);
    hlo_buffer_free(r);
  }
  hlo_ctx_free(ctx);
}
END_TEST

/* CHLO decompositions, exactly: next_after's neighbours are IEEE bit
 * patterns worked out by hand (one ulp of 1.0f is 2^-23: 0x3F800001 above,
 * 0x3F7FFFFF below; from zero toward -1 the smallest negative subnormal);
 * is_inf; a complex asin (no decomposition here) is a positioned error. */
START_TEST(chlo_exact) {
  HloCtx *ctx = NULL;
  ck_assert_int_eq(hlo_ctx_new(NULL, &ctx), HLO_OK);
  const char *mlir = MAIN("() -> tensor<6xf32>",
                          "    %x = stablehlo.constant dense<[1.0, 1.0, 0.0, -1.0, 2.0, 0.0]> : tensor<6xf32>\n"
                          "    %y = stablehlo.constant dense<[2.0, 0.0, -1.0, -2.0, 2.0, 0.0]> : tensor<6xf32>\n"
                          "    %0 = chlo.next_after %x, %y : tensor<6xf32>, tensor<6xf32> -> tensor<6xf32>\n"
                          "    return %0 : tensor<6xf32>\n");
  HloBuffer *r = run_mlir(ctx, mlir, NULL, 0);
  const uint32_t *bits = hlo_buffer_data(r);
  const uint32_t want[6] = {0x3F800001u, 0x3F7FFFFFu, 0x80000001u, 0xBF800001u, 0x40000000u, 0};
  for (int i = 0; i < 6; i++) ck_assert_msg(bits[i] == want[i], "next_after[%d]: %08x, expected %08x", i, bits[i], want[i]);
  hlo_buffer_free(r);
  const char *inf = MAIN("() -> tensor<3xi1>",
                         "    %x = stablehlo.constant dense<[0x7F800000, 0xFF800000, 0x7F7FFFFF]> : tensor<3xf32>\n"
                         "    %0 = chlo.is_inf %x : tensor<3xf32> -> tensor<3xi1>\n"
                         "    return %0 : tensor<3xi1>\n");
  r = run_mlir(ctx, inf, NULL, 0);
  const uint8_t *p = hlo_buffer_data(r);
  ck_assert(p[0] && p[1] && !p[2]);
  hlo_buffer_free(r);
  hlo_ctx_free(ctx);
  /* (complex asin and its kin are decomposed: check_stablehlo_gaps) */
  const char *cx = MAIN("(%a: tensor<2xcomplex<f32>>) -> tensor<2xi1>",
                        "    %0 = chlo.is_inf %a : tensor<2xcomplex<f32>> -> tensor<2xi1>\n"
                        "    return %0 : tensor<2xi1>\n");
  char *e = error_of(cx, strlen(cx));
  ck_assert_ptr_nonnull(e);
  ck_assert_str_eq(e, "t.mlir:3:10: error: chlo.is_inf of complex element type c64 is not supported");
  free(e);
}
END_TEST

START_TEST(errors_positioned) {
  struct { const char *mlir; const char *want; } cases[] = {
    {MAIN("(%a: tensor<?x4xf32>) -> tensor<?x4xf32>", "    return %a : tensor<?x4xf32>\n"),
     "t.mlir:2:37: error: dynamic dimension '?' is not supported"},
    {MAIN("(%a: tensor<4x!quant.uniform<i8:f32, 0.1>>) -> tensor<4xf32>", "    return %a : tensor<4xf32>\n"),
     "t.mlir:2:39: error: quantized element type !quant.uniform is not supported"},
    {MAIN("(%a: tensor<4xf32, #stablehlo.bounds<8>>) -> tensor<4xf32>", "    return %a : tensor<4xf32>\n"),
     "t.mlir:2:44: error: bounded dynamic shape (#stablehlo.bounds) is not supported"},
    {MAIN("(%a: tensor<4xf32>) -> tensor<4xf32>", "    %0 = stablehlo.frobnicate %a : tensor<4xf32>\n    return %0 : tensor<4xf32>\n"),
     "t.mlir:3:10: error: unsupported operation stablehlo.frobnicate"},
    {MAIN("(%a: tensor<4xf32>) -> tensor<4xf32>", "    %0 = stablehlo.add %a, %b : tensor<4xf32>\n    return %0 : tensor<4xf32>\n"),
     "t.mlir:3:28: error: value %b is used but not defined"},
    {MAIN("(%a: tensor<4xf32>) -> tensor<4xf32>",
          "    %0 = stablehlo.add %1, %a : tensor<4xf32>\n    %1 = stablehlo.add %a, %a : tensor<4xf32>\n    return %0 : tensor<4xf32>\n"),
     "t.mlir:3:24: error: value %1 is used but not defined"},
    {MAIN("(%a: tensor<4xf32>) -> tensor<4xf32>",
          "    %0 = stablehlo.abs %a : (tensor<4xi32>) -> tensor<4xf32>\n    return %0 : tensor<4xf32>\n"),
     "t.mlir:3:30: error: stablehlo.abs: operand 0 has type f32[4], not s32[4] as written"},
    {"module @m {\n  func.func public @main() -> tensor<f32> {\n    %0 = stablehlo.constant dense<1.0> : tensor<f32>\n",
     "t.mlir:4:1: error: unexpected end of input"},
    {"module @m {\n  func.func public @main() -> tensor<f32> {\n    %0 = stablehlo.constant dense<1.0> : tensor<f32>)\n  }\n}\n",
     "t.mlir:3:53: error: unbalanced ')'"},
    {MAIN("() -> tensor<2xf32>", "    %0 = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<2xf32>\n    return %0 : tensor<2xf32>\n"),
     "t.mlir:3:34: error: dense literal has 3 elements; its type has 2"},
    {MAIN("() -> tensor<i8>", "    %0 = stablehlo.constant dense<300> : tensor<i8>\n    return %0 : tensor<i8>\n"),
     "t.mlir:3:35: error: 300 is out of range for s8"},
    /* Text after the module's closing brace (line 7) was dropped; a second
     * function outside the module too. */
    {MAIN("() -> tensor<f32>", "    %0 = stablehlo.constant dense<1.0> : tensor<f32>\n    return %0 : tensor<f32>\n") "x junk\n",
     "t.mlir:7:1: error: unexpected text after the module's closing brace"},
    {MAIN("() -> tensor<f32>", "    %0 = stablehlo.constant dense<1.0> : tensor<f32>\n    return %0 : tensor<f32>\n")
     "func.func @g() {\n  return\n}\n",
     "t.mlir:7:1: error: 'func.func' outside the module"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char *e = error_of(cases[i].mlir, strlen(cases[i].mlir));
    ck_assert_msg(e != NULL, "case %zu translated", i);
    ck_assert_msg(strncmp(e, cases[i].want, strlen(cases[i].want)) == 0, "case %zu: got\n%s\nwant\n%s", i, e,
                  cases[i].want);
    free(e);
  }
}
END_TEST

/* JAX's typed-FFI calls: api_version 1 (or none) with the attributes in
 * mhlo.backend_config become api_version 4 with that dictionary as the
 * backend_config (XLA's fixupMhloBackendConfig); an empty string
 * backend_config beside it is allowed, anything else is an error. */
#define POTRF(attrs) MAIN("(%a: tensor<2x2xf32>) -> tensor<2x2xf32>", \
  "    %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%a) {" attrs "} : (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<i32>)\n" \
  "    return %0#0 : tensor<2x2xf32>\n")
/* Dynamic ops whose shape operands are constants become their static ops,
 * as XLA's shape refinement makes them (splats repeated); any other
 * operand there is an error at the op. */
START_TEST(dynamic_ops_refined) {
#define DPAD(low) MAIN("(%a: tensor<5x4xi64>, %l: tensor<2xi64>) -> tensor<8x6xi64>",                                  \
  "    %p = stablehlo.constant dense<-1> : tensor<i64>\n"                                                            \
  "    %lo = stablehlo.constant dense<[1, -1]> : tensor<2xi64>\n"                                                    \
  "    %hi = stablehlo.constant dense<[2, 0]> : tensor<2xi64>\n"                                                     \
  "    %in = stablehlo.constant dense<[0, 1]> : tensor<2xi64>\n"                                                     \
  "    %0 = stablehlo.dynamic_pad %a, %p, " low ", %hi, %in : (tensor<5x4xi64>, tensor<i64>, tensor<2xi64>, "        \
  "tensor<2xi64>, tensor<2xi64>) -> tensor<8x6xi64>\n"                                                            \
  "    return %0 : tensor<8x6xi64>\n")
  char *t = hlo_of(DPAD("%lo"));
  HAS(t, "s64[8,6] pad(Arg_0.2, constant.4), padding=1_2_0x-1_0_1\n");
  free(t);
  const char *bad = DPAD("%l");
  char *e = error_of(bad, strlen(bad));
  ck_assert_ptr_nonnull(e);
  ck_assert_str_eq(e, "t.mlir:7:10: error: stablehlo.dynamic_pad: its edge_padding_low must be a constant of 2 "
                      "integers (XLA refines only that to a static pad)");
  free(e);
#undef DPAD
  /* a splat padding: every entry 1 */
  t = hlo_of(MAIN("(%x: tensor<1x4x4x1xf32>, %k: tensor<3x3x1x1xf32>) -> tensor<1x4x4x1xf32>",
                  "    %pad = stablehlo.constant dense<1> : tensor<2x2xi64>\n"
                  "    %0 = \"stablehlo.dynamic_conv\"(%x, %k, %pad) {dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, "
                  "batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>, tensor<2x2xi64>) -> tensor<1x4x4x1xf32>\n"
                  "    return %0 : tensor<1x4x4x1xf32>\n"));
  HAS(t, "convolution(Arg_0.2, Arg_1.3), window={size=3x3 stride=1x1 pad=1_1x1_1 lhs_dilate=1x1 rhs_dilate=1x1}, dim_labels=b01f_01io->b01f");
  free(t);
  bad = MAIN("(%x: tensor<3x4xf32>, %i: tensor<2x1xi64>, %s: tensor<2xi64>) -> tensor<2x4xf32>",
             "    %0 = \"stablehlo.dynamic_gather\"(%x, %i, %s) {dimension_numbers = #stablehlo.gather<offset_dims = [1], "
             "collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>} : (tensor<3x4xf32>, tensor<2x1xi64>, "
             "tensor<2xi64>) -> tensor<2x4xf32>\n"
             "    return %0 : tensor<2x4xf32>\n");
  e = error_of(bad, strlen(bad));
  ck_assert_ptr_nonnull(e);
  ck_assert_str_eq(e, "t.mlir:3:10: error: stablehlo.dynamic_gather: its slice_sizes must be a constant of 2 "
                      "integers (XLA refines only that to a static gather)");
  free(e);
}
END_TEST

START_TEST(mhlo_backend_config) {
  const char *ok[] = {POTRF("mhlo.backend_config = {uplo = 76 : ui8}"),
                      POTRF("api_version = 1 : i32, backend_config = \"\", mhlo.backend_config = {uplo = 76 : ui8}")};
  for (size_t i = 0; i < 2; i++) {
    char *t = hlo_of(ok[i]);
    HAS(t, "custom_call_target=\"lapack_spotrf_ffi\", api_version=API_VERSION_TYPED_FFI");
    HAS(t, "backend_config={uplo = 76 : ui8}");
    free(t);
  }
  struct { const char *mlir; const char *want; } bad[] = {
    {POTRF("api_version = 2 : i32, mhlo.backend_config = {uplo = 76 : ui8}"),
     "t.mlir:3:103: error: stablehlo.custom_call: mhlo.backend_config needs api_version 1 (it becomes the typed FFI's), got 2"},
    {POTRF("backend_config = \"x\", mhlo.backend_config = {uplo = 76 : ui8}"),
     "t.mlir:3:75: error: stablehlo.custom_call: both backend_config and mhlo.backend_config are given"},
    {POTRF("mhlo.backend_config = \"uplo\""),
     "t.mlir:3:80: error: stablehlo.custom_call: mhlo.backend_config must be a dictionary"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char *e = error_of(bad[i].mlir, strlen(bad[i].mlir));
    ck_assert_msg(e != NULL, "case %zu translated", i);
    ck_assert_msg(strcmp(e, bad[i].want) == 0, "case %zu: got\n%s\nwant\n%s", i, e, bad[i].want);
    free(e);
  }
}
END_TEST

START_TEST(test_files) {
  char path[] = "/tmp/check_stablehlo.XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  const char *text =
      "func.func @good() {\n"
      "  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>\n"
      "  %1 = stablehlo.add %0, %0 : tensor<2xi32>\n"
      "  check.expect_eq_const %1, dense<[2, 4]> : tensor<2xi32>\n"
      "  %2 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
      "  %3 = stablehlo.constant dense<[1.00001, 2.0]> : tensor<2xf32>\n"
      "  check.expect_almost_eq %2, %3 : tensor<2xf32>\n"
      "  func.return\n"
      "}\n"
      "\n// -----\n\n"
      "func.func @bad() {\n"
      "  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>\n"
      "  %1 = stablehlo.multiply %0, %0 : tensor<2xi32>\n"
      "  check.expect_eq_const %1, dense<[1, 5]> : tensor<2xi32>\n"
      "  func.return\n"
      "}\n"
      "func.func private @not_run() {\n"
      "  func.return\n"
      "}\n";
  ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
  HloCtx *ctx = NULL;
  ck_assert_int_eq(hlo_ctx_new(NULL, &ctx), HLO_OK);
  ck_assert(hlo_is_test_file(text, strlen(text)));
  int passed = -1, failed = -1;
  char *report = NULL;
  ck_assert_int_eq(hlo_run_test_file(ctx, path, NULL, &passed, &failed, &report), HLO_OK);
  ck_assert_int_eq(passed, 2);
  ck_assert_int_eq(failed, 1);
  char want[256];
  snprintf(want, sizeof want, "%s:16: check.expect_eq_const failed in @bad:\n  [1]: got 4, expected 5\n", path);
  ck_assert_str_eq(report, want);
  hlo_free(report);
  hlo_ctx_free(ctx);
  unlink(path);
}
END_TEST

/* Every prefix of a valid module, and garbage: an error or a module, never a crash. */
START_TEST(hostile_input) {
  const char *ok = MAIN("(%a: tensor<2xf32>) -> tensor<2xf32>",
                        "    %c = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
                        "    %0 = \"stablehlo.reduce\"(%a, %c) <{dimensions = array<i64>}> ({\n"
                        "    ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
                        "      stablehlo.return %x : tensor<f32>\n"
                        "    }) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
                        "    return %0 : tensor<2xf32>\n");
  size_t n = strlen(ok);
  for (size_t k = 0; k < n; k++) {
    HlcDiags d = {0};
    size_t m;
    char *t = shlo_to_hlo_text(ok, k, "t.mlir", &d, &m);
    free(t);
    hlc_diags_clear(&d);
  }
  char junk[512];
  unsigned s = 12345;
  for (int r = 0; r < 200; r++) {
    for (size_t i = 0; i < sizeof junk; i++) {
      s = s * 1103515245u + 12345u;
      const char *alphabet = "%^@#!{}()[]<>,:=\"x0123456789.- \nabcfi";
      junk[i] = alphabet[(s >> 16) % strlen(alphabet)];
    }
    HlcDiags d = {0};
    size_t m;
    free(shlo_to_hlo_text(junk, sizeof junk, "junk.mlir", &d, &m));
    hlc_diags_clear(&d);
  }
  /* nesting deeper than the limit is an error, not a stack overflow */
  size_t deep = 100000;
  char *p = malloc(deep + 64);
  strcpy(p, "module @m {\n  %0 = stablehlo.constant dense<");
  size_t o = strlen(p);
  memset(p + o, '[', deep);
  p[o + deep] = 0;
  char *e = error_of(p, strlen(p));
  ck_assert_ptr_nonnull(e);
  ck_assert_ptr_nonnull(strstr(e, "nested too deeply"));
  free(e);
  free(p);
}
END_TEST

/* Shardy: a 2x4 mesh (x major: device 4x + y). Each sharding worked out by
 * hand: tile counts per dimension, the unused axes' product replicating,
 * and the device order the mesh transposed to the axes' order of use. */
#define SDY_MESH "module @m attributes {mhlo.num_partitions = 8 : i32} {\n  sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]>\n"
#define SDY_ARG(n, dims) "%" n ": tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [" dims "]>}"
START_TEST(shardy_shardings) {
  char *t = hlo_of(SDY_MESH
                   "  func.func public @main(" SDY_ARG("a", "{\"x\"}, {\"y\"}") ", " SDY_ARG("b", "{\"y\"}, {\"x\"}") ", "
                   SDY_ARG("c", "{\"x\"}, {}") ", " SDY_ARG("d", "{}, {\"y\"}") ", " SDY_ARG("e", "{}, {}") ", "
                   SDY_ARG("f", "{\"y\", \"x\"}, {?}") ", "
                   "%g: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}p0, {}], replicated={\"y\"}>})"
                   " -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {\"y\"}]>}) {\n"
                   "    %0 = sdy.sharding_constraint %a <@mesh, [{\"y\"}, {}]> : tensor<8x16xf32>\n"
                   "    %1 = \"sdy.sharding_constraint\"(%0) {sharding = #sdy.sharding<@mesh, [{}, {\"x\", \"y\"}]>} : (tensor<8x16xf32>) -> tensor<8x16xf32>\n"
                   "    return %1 : tensor<8x16xf32>\n  }\n}\n");
  HAS(t, "parameter(0), sharding={devices=[2,4]<=[8]}\n");
  HAS(t, "parameter(1), sharding={devices=[4,2]<=[2,4]T(1,0)}\n");
  HAS(t, "parameter(2), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}\n");
  HAS(t, "parameter(3), sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}\n");
  HAS(t, "parameter(4), sharding={replicated}\n");
  HAS(t, "parameter(5), sharding={devices=[8,1]<=[2,4]T(1,0)}\n");
  HAS(t, "parameter(6), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}\n");
  HAS(t, "custom_call_target=\"Sharding\", sharding={devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
  HAS(t, "custom_call_target=\"Sharding\", sharding={devices=[1,8]<=[8]}");
  HAS(t, "ROOT copy.11 = f32[8,16] copy(custom-call.10), sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}\n");
  free(t);
  struct { const char *mlir; const char *want; } bad[] = {
    {SDY_MESH "  func.func public @main(" SDY_ARG("a", "{\"z\"}, {}") ") -> tensor<8x16xf32> {\n    return %a : tensor<8x16xf32>\n  }\n}\n",
     "t.mlir:3:86: error: sdy.sharding: mesh @mesh has no axis \"z\""},
    {SDY_MESH "  func.func public @main(" SDY_ARG("a", "{\"x\"}, {\"x\"}") ") -> tensor<8x16xf32> {\n    return %a : tensor<8x16xf32>\n  }\n}\n",
     "t.mlir:3:93: error: sdy.sharding: axis \"x\" is used twice"},
    {SDY_MESH "  func.func public @main(" SDY_ARG("a", "{\"x\"}") ") -> tensor<8x16xf32> {\n    return %a : tensor<8x16xf32>\n  }\n}\n",
     "t.mlir:3:84: error: sdy.sharding: 1 dimension shardings for a value of rank 2"},
    {SDY_MESH "  func.func public @main(" SDY_ARG("a", "{\"x\":(1)2}, {}") ") -> tensor<8x16xf32> {\n    return %a : tensor<8x16xf32>\n  }\n}\n",
     "t.mlir:3:89: error: sdy.sharding: sub-axes (\"x\":(1)2) are not supported"},
    {"module @m {\n  sdy.mesh @mesh = <[\"x\"=2], device_ids=[1, 0]>\n  func.func public @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n    return %a : tensor<2xf32>\n  }\n}\n",
     "t.mlir:2:30: error: sdy.mesh @mesh: device_ids (a mesh not numbered row-major) is not supported"},
    {"module @m {\n  func.func public @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@nomesh, [{}]>}) -> tensor<8xf32> {\n    return %a : tensor<8xf32>\n  }\n}\n",
     "t.mlir:2:74: error: sdy.sharding: no sdy.mesh @nomesh in this module"},
    {SDY_MESH "  func.func public @main(%a: tensor<8xf32>) -> tensor<8xf32> {\n"
              "    %0 = sdy.manual_computation(%a) in_shardings=[<@mesh, [{\"x\"}]>] out_shardings=[<@mesh, [{\"x\"}]>] manual_axes={\"x\"} (%b: tensor<2xf32>) {\n"
              "      sdy.return %b : tensor<2xf32>\n    } : (tensor<8xf32>) -> tensor<8xf32>\n    return %0 : tensor<8xf32>\n  }\n}\n",
     "t.mlir:4:51: error: sdy.manual_computation: operand 0 is f32[8] globally, so its shard over the manual axes cannot be f32[2]"},
    {SDY_MESH "  func.func public @main(%a: tensor<8xf32>) -> tensor<8xf32> {\n"
              "    %0 = sdy.manual_computation(%a) in_shardings=[<@mesh, [{\"x\"}]>] out_shardings=[<@mesh, [{\"x\"}]>] manual_axes={\"z\"} (%b: tensor<4xf32>) {\n"
              "      sdy.return %b : tensor<4xf32>\n    } : (tensor<8xf32>) -> tensor<8xf32>\n    return %0 : tensor<8xf32>\n  }\n}\n",
     "t.mlir:4:115: error: sdy.manual_computation: manual axis \"z\" is not an axis of the mesh"},
    {SDY_MESH "  func.func public @main(%a: tensor<8xf32>) -> tensor<8xf32> {\n"
              "    %0 = sdy.manual_computation(%a) in_shardings=[<@mesh, [{\"x\"}]>] out_shardings=[<@mesh, [{\"x\"}]>] manual_axes={\"x\"} (%b: tensor<4xf32>) {\n"
              "      sdy.return %b : tensor<4xf32>\n    } : (tensor<8xf32>) -> tensor<16xf32>\n    return %0 : tensor<16xf32>\n  }\n}\n",
     "t.mlir:4:84: error: sdy.manual_computation: result 0 is f32[16] globally, so its shard over the manual axes cannot be f32[4]"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char *e = error_of(bad[i].mlir, strlen(bad[i].mlir));
    ck_assert_msg(e != NULL, "case %zu: no error", i);
    ck_assert_str_eq(e, bad[i].want);
    free(e);
  }
}
END_TEST

/* sdy.manual_computation as XLA's Shardy export writes it: the operand's
 * sharding over the manual axes only (here "x"; the "y" after it is left to
 * the automatic partitioner, so rows are split in 2, not 8) on a copy, the
 * SPMDFullToShardShape custom call to the body's shard type, the body as a
 * called computation, and SPMDShardToFullShape by the out sharding ({}, {"x"}:
 * columns in 2, y replicating). */
START_TEST(shardy_manual_computation) {
  char *t = hlo_of(SDY_MESH
                   "  func.func public @main(%a: tensor<8x16xf32>, %w: tensor<16xf32>) -> (tensor<8x16xf32>, tensor<16xf32>) {\n"
                   "    %0:2 = sdy.manual_computation(%a, %w) in_shardings=[<@mesh, [{\"x\", \"y\"}, {}]>, <@mesh, [{}]>] "
                   "out_shardings=[<@mesh, [{}, {\"x\"}]>, <@mesh, [{}], replicated={\"x\"}>] manual_axes={\"x\"} "
                   "(%b: tensor<4x16xf32>, %v: tensor<16xf32>) {\n"
                   "      %1 = stablehlo.transpose %b, dims = [1, 0] : (tensor<4x16xf32>) -> tensor<16x4xf32>\n"
                   "      %2 = stablehlo.reshape %1 : (tensor<16x4xf32>) -> tensor<8x8xf32>\n"
                   "      sdy.return %2, %v : tensor<8x8xf32>, tensor<16xf32>\n"
                   "    } : (tensor<8x16xf32>, tensor<16xf32>) -> (tensor<8x16xf32>, tensor<16xf32>)\n"
                   "    return %0#0, %0#1 : tensor<8x16xf32>, tensor<16xf32>\n  }\n}\n");
  HAS(t, "copy.4 = f32[8,16] copy(Arg_0.2), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}\n");
  HAS(t, "custom-call.5 = f32[4,16] custom-call(copy.4), custom_call_target=\"SPMDFullToShardShape\", sharding={manual}\n");
  HAS(t, "copy.6 = f32[16] copy(Arg_1.3), sharding={replicated}\n");
  HAS(t, "custom-call.7 = f32[16] custom-call(copy.6), custom_call_target=\"SPMDFullToShardShape\", sharding={manual}\n");
  HAS(t, "(f32[8,8], f32[16]) call(custom-call.5, custom-call.7), to_apply=shmap_body.");
  HAS(t, "= f32[8,8] copy(get-tuple-element.");
  HAS(t, "f32[8,16] custom-call(copy.");
  HAS(t, "custom_call_target=\"SPMDShardToFullShape\", sharding={devices=[1,2,4]<=[8] last_tile_dim_replicate}\n");
  HAS(t, "f32[16] custom-call(copy.");
  HAS(t, "custom_call_target=\"SPMDShardToFullShape\", sharding={replicated}\n");
  free(t);
}
END_TEST

/* An op's own sharding lands on the instruction holding its result:
 * mhlo.sharding as written, #sdy.sharding_per_value by the mesh, a tuple
 * sharding split over a multi-result op's results; a malformed one is an
 * error at its string. */
START_TEST(op_shardings) {
#define OPS(third)                                                                                          \
  SDY_MESH "  func.func public @main(%a: tensor<8x16xf32>, %b: tensor<8xi32>) -> tensor<8x16xf32> {\n"     \
  "    %0 = stablehlo.add %a, %a {mhlo.sharding = \"{devices=[2,1,4]<=[8] last_tile_dim_replicate}\"} : tensor<8x16xf32>\n" \
  "    %1 = stablehlo.multiply %0, %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {\"y\"}]>]>} : tensor<8x16xf32>\n" \
  "    %2:2 = stablehlo.optimization_barrier %1, %b {mhlo.sharding = \"" third "\"} : tensor<8x16xf32>, tensor<8xi32>\n" \
  "    return %2#0 : tensor<8x16xf32>\n  }\n}\n"
  char *t = hlo_of(OPS("{{replicated}, {maximal device=3}}"));
  HAS(t, "add.4 = f32[8,16] add(Arg_0.2, Arg_0.2), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}\n");
  HAS(t, "multiply.5 = f32[8,16] multiply(add.4, add.4), sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}\n");
  HAS(t, "get-tuple-element.8 = f32[8,16] get-tuple-element(opt-barrier.7), index=0, sharding={replicated}\n");
  HAS(t, "get-tuple-element.9 = s32[8] get-tuple-element(opt-barrier.7), index=1, sharding={maximal device=3}\n");
  free(t);
  const char *bad = OPS("{{replicated}, {maximal device=3}");
  char *e = error_of(bad, strlen(bad));
  ck_assert_ptr_nonnull(e);
  ck_assert_str_eq(e, "t.mlir:6:67: error: mhlo.sharding: bad sharding: expected '}' at ''");
  free(e);
  bad = OPS("{{replicated}}");
  e = error_of(bad, strlen(bad));
  ck_assert_ptr_nonnull(e);
  ck_assert_str_eq(e, "t.mlir:6:67: error: mhlo.sharding: a tuple of 1 shardings for 2 results");
  free(e);
#undef OPS
}
END_TEST

/* A function lowered on its first call, from inside the caller's while
 * body, sees only its own values: its while's %iterArg is its own counter,
 * not the caller's (which it used to take as a capture, and the
 * translation failed). g adds 10 three times; main calls it twice: 60. */
START_TEST(function_scope) {
  HloCtx *ctx;
  ck_assert_int_eq(hlo_ctx_new(NULL, &ctx), HLO_OK);
  const char *mlir =
    "module @m {\n"
    "  func.func public @main() -> tensor<i64> {\n"
    "    %c = stablehlo.constant dense<0> : tensor<i64>\n"
    "    %0:2 = stablehlo.while(%iterArg = %c, %iterArg_1 = %c) : tensor<i64>, tensor<i64>\n"
    "     cond {\n"
    "      %k = stablehlo.constant dense<2> : tensor<i64>\n"
    "      %1 = stablehlo.compare  LT, %iterArg, %k,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
    "      stablehlo.return %1 : tensor<i1>\n"
    "    } do {\n"
    "      %2 = func.call @g(%iterArg_1) : (tensor<i64>) -> tensor<i64>\n"
    "      %one = stablehlo.constant dense<1> : tensor<i64>\n"
    "      %3 = stablehlo.add %iterArg, %one : tensor<i64>\n"
    "      stablehlo.return %3, %2 : tensor<i64>, tensor<i64>\n"
    "    }\n"
    "    return %0#1 : tensor<i64>\n"
    "  }\n"
    "  func.func private @g(%a: tensor<i64>) -> tensor<i64> {\n"
    "    %c = stablehlo.constant dense<0> : tensor<i64>\n"
    "    %0:2 = stablehlo.while(%iterArg = %c, %iterArg_1 = %a) : tensor<i64>, tensor<i64>\n"
    "     cond {\n"
    "      %k = stablehlo.constant dense<3> : tensor<i64>\n"
    "      %1 = stablehlo.compare  LT, %iterArg, %k,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
    "      stablehlo.return %1 : tensor<i1>\n"
    "    } do {\n"
    "      %one = stablehlo.constant dense<1> : tensor<i64>\n"
    "      %2 = stablehlo.add %iterArg, %one : tensor<i64>\n"
    "      %ten = stablehlo.constant dense<10> : tensor<i64>\n"
    "      %3 = stablehlo.add %iterArg_1, %ten : tensor<i64>\n"
    "      stablehlo.return %2, %3 : tensor<i64>, tensor<i64>\n"
    "    }\n"
    "    return %0#1 : tensor<i64>\n"
    "  }\n"
    "}\n";
  HloBuffer *r = run_mlir(ctx, mlir, NULL, 0);
  ck_assert_int_eq(*(const int64_t *)hlo_buffer_data(r), 60);
  hlo_buffer_free(r);
  /* A value of the caller is not visible inside the function. */
  const char *leak = "module @m {\n  func.func public @main(%x: tensor<i64>) -> tensor<i64> {\n"
                     "    %0 = func.call @g() : () -> tensor<i64>\n    return %0 : tensor<i64>\n  }\n"
                     "  func.func private @g() -> tensor<i64> {\n    return %x : tensor<i64>\n  }\n}\n";
  char *e = error_of(leak, strlen(leak));
  ck_assert_ptr_nonnull(e);
  ck_assert_str_eq(e, "t.mlir:7:12: error: value %x is used but not defined (or defined later)");
  free(e);
  hlo_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("stablehlo");
  struct { const char *name; const TTest *tests[16]; } groups[] = {
    {"translate", {translate_attributes, translate_regions, pretty_and_generic_agree, mhlo_backend_config, dynamic_ops_refined}},
    {"shardy", {shardy_shardings, shardy_manual_computation, op_shardings}},
    {"literals", {dense_literals}},
    {"values", {values_end_to_end, chlo_exact, top_k_forms, function_scope}},
    {"errors", {errors_positioned}},
    {"testfiles", {test_files}},
    {"hostile", {hostile_input}},
  };
  for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
    TCase *tc = tcase_create(groups[g].name);
    tcase_set_timeout(tc, 60);
    for (int i = 0; groups[g].tests[i]; i++) tcase_add_test(tc, groups[g].tests[i]);
    suite_add_tcase(s, tc);
  }
  return tl_main(s);
}
