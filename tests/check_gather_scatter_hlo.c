/* check_gather_scatter_hlo.c: whole-module tests of the movement and
 * gather/scatter kernels through the public API (parser + executor + thread
 * pool): scatter with reducers that only run through the computation
 * (non-commutative, variadic, sub-byte types), layouts seen by bitcast, and
 * large arrays that take the threaded paths. Values are worked out by hand
 * from XLA's semantics, or from the definition in the test. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/testlib.h"

static HloCtx *ctx;

static void setup(void) { ctx = tl_ctx_new(2); }
static void teardown(void) { hlo_ctx_free(ctx); }

/* Element i of a tuple result. */
static HloBuffer *elem(HloBuffer *t, int i) {
  HloBuffer *e = NULL;
  ck_assert_int_eq(hlo_buffer_tuple_element(ctx, t, i, &e), HLO_OK);
  return e;
}

#define EXPECT_BUF(b, T, ...)                                                         \
  do {                                                                                \
    const T want_[] = { __VA_ARGS__ };                                                \
    size_t n_ = sizeof want_ / sizeof want_[0];                                       \
    ck_assert_int_eq(hlo_buffer_num_elements(b), (int64_t)n_);                        \
    const T *got_ = hlo_buffer_data(b);                                               \
    for (size_t k_ = 0; k_ < n_; k_++)                                                \
      ck_assert_msg(memcmp(&got_[k_], &want_[k_], sizeof(T)) == 0, "element %zu", k_); \
  } while (0)

/* new = update - old, so repeated indices depend on the order: XLA applies
 * updates in row-major order of the scatter dims. At index 1, old 20:
 * 1 - 20 = -19, then 2 - (-19) = 21 (the other order would give 19). */
START_TEST(scatter_non_commutative_order) {
  HloBuffer *r = tl_run_ok(ctx, 
      "HloModule t\n"
      "rsub {\n  p0 = f32[] parameter(0)\n  p1 = f32[] parameter(1)\n"
      "  ROOT r = f32[] subtract(p1, p0)\n}\n"
      "ENTRY e {\n  op = f32[3] constant({10, 20, 30})\n"
      "  idx = s32[3,1] constant({{1}, {1}, {0}})\n  upd = f32[3] constant({1, 2, 4})\n"
      "  ROOT s = f32[3] scatter(op, idx, upd), update_window_dims={}, inserted_window_dims={0},"
      " scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=rsub\n}\n",
      NULL, 0);
  EXPECT_BUF(r, float, -6, 21, 30);
  hlo_buffer_free(r);
}
END_TEST

/* Two operands of different types combined by one computation returning a
 * tuple; index 3 twice, index 9 out of bounds (skipped). */
START_TEST(scatter_variadic) {
  HloBuffer *r = tl_run_ok(ctx, 
      "HloModule t\n"
      "comb {\n  a0 = f32[] parameter(0)\n  a1 = s32[] parameter(1)\n  u0 = f32[] parameter(2)\n"
      "  u1 = s32[] parameter(3)\n  s = f32[] add(a0, u0)\n  m = s32[] maximum(a1, u1)\n"
      "  ROOT t = (f32[], s32[]) tuple(s, m)\n}\n"
      "ENTRY e {\n  o0 = f32[4] constant({1, 2, 3, 4})\n  o1 = s32[4] constant({5, 6, 7, 8})\n"
      "  idx = s32[3] constant({3, 9, 3})\n  u0 = f32[3] constant({10, 99, 20})\n"
      "  u1 = s32[3] constant({9, 99, 1})\n"
      "  ROOT s = (f32[4], s32[4]) scatter(o0, o1, idx, u0, u1), update_window_dims={},"
      " inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1,"
      " to_apply=comb\n}\n",
      NULL, 0);
  ck_assert_int_eq(hlo_buffer_tuple_size(r), 2);
  HloBuffer *a = elem(r, 0), *b = elem(r, 1);
  EXPECT_BUF(a, float, 1, 2, 3, 34);
  EXPECT_BUF(b, int32_t, 5, 6, 7, 9);
  hlo_buffer_free(a);
  hlo_buffer_free(b);
  hlo_buffer_free(r);
}
END_TEST

/* s4 add has no typed loop: the computation runs per element and wraps
 * within 4 bits (7 + 1 = -8, -8 + -1 = 7). Windows of 2 along dim 1 of a
 * [2,3] operand; window (1, 2) would reach column 3 and is skipped. */
START_TEST(scatter_s4_windows) {
  HloBuffer *r = tl_run_ok(ctx, 
      "HloModule t\n"
      "add4 {\n  p0 = s4[] parameter(0)\n  p1 = s4[] parameter(1)\n  ROOT r = s4[] add(p0, p1)\n}\n"
      "ENTRY e {\n  op = s4[2,3] constant({{7, -8, 1}, {0, 0, 0}})\n"
      "  idx = s32[2,2] constant({{0, 0}, {1, 2}})\n"
      "  upd = s4[2,2] constant({{1, -1}, {5, 5}})\n"
      "  ROOT s = s4[2,3] scatter(op, idx, upd), update_window_dims={1}, inserted_window_dims={0},"
      " scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=add4\n}\n",
      NULL, 0);
  EXPECT_BUF(r, int8_t, -8, 7, 1, 0, 0, 0);
  hlo_buffer_free(r);
}
END_TEST

/* Layouts matter to bitcast only: f32[2,3]{0,1} holding [[1,2,3],[4,5,6]]
 * lies in memory as 1,4,2,5,3,6. The copy changes the layout, the values
 * stay. */
START_TEST(bitcast_layouts) {
  HloBuffer *r = tl_run_ok(ctx, 
      "HloModule t\n"
      "ENTRY e {\n  c = f32[2,3]{1,0} constant({{1, 2, 3}, {4, 5, 6}})\n"
      "  t = f32[2,3]{0,1} copy(c)\n"
      "  ROOT b = f32[6]{0} bitcast(t)\n}\n",
      NULL, 0);
  EXPECT_BUF(r, float, 1, 4, 2, 5, 3, 6);
  hlo_buffer_free(r);
}
END_TEST

/* Gather through the parser: rows of a table by s64 indices (one clamped),
 * then dynamic-update-slice and pad on the result. */
START_TEST(gather_pipeline) {
  HloBuffer *r = tl_run_ok(ctx, 
      "HloModule t\n"
      "ENTRY e {\n  tab = s32[4,2] constant({{0, 1}, {10, 11}, {20, 21}, {30, 31}})\n"
      "  idx = s64[3] constant({2, 7, 0})\n"
      "  g = s32[3,2] gather(tab, idx), offset_dims={1}, collapsed_slice_dims={0},"
      " start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}\n"
      "  u = s32[1,1] constant({{-1}})\n  i = u32[] constant(5)\n  z = u32[] constant(0)\n"
      "  d = s32[3,2] dynamic-update-slice(g, u, i, z)\n"
      "  pv = s32[] constant(9)\n"
      "  ROOT p = s32[3,3] pad(d, pv), padding=0_0x1_0\n}\n",
      NULL, 0);
  /* g = [[20,21],[30,31],[0,1]]; update at (clamp 5 -> 2, 0); pad a column. */
  EXPECT_BUF(r, int32_t, 9, 20, 21, 9, 30, 31, 9, -1, 1);
  hlo_buffer_free(r);
}
END_TEST

/* Big enough to take the threaded paths: transpose of [300,1000] f32 and a
 * gather of all its rows in reverse, checked against the definition. */
START_TEST(threaded_transpose_and_gather) {
  enum { R = 300, C = 1000 };
  float *v = malloc(sizeof(float) * R * C);
  int32_t *ix = malloc(sizeof(int32_t) * R);
  for (int i = 0; i < R * C; i++) v[i] = (float)i;
  for (int i = 0; i < R; i++) ix[i] = R - 1 - i;
  HloBuffer *in[2];
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_F32, (int64_t[]){ R, C }, 2, v, &in[0]),
                   HLO_OK);
  ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_S32, (int64_t[]){ R }, 1, ix, &in[1]),
                   HLO_OK);
  HloBuffer *r = tl_run_ok(ctx, 
      "HloModule t\n"
      "ENTRY e {\n  a = f32[300,1000] parameter(0)\n  i = s32[300] parameter(1)\n"
      "  t = f32[1000,300] transpose(a), dimensions={1,0}\n"
      "  g = f32[300,1000] gather(a, i), offset_dims={1}, collapsed_slice_dims={0},"
      " start_index_map={0}, index_vector_dim=1, slice_sizes={1,1000}\n"
      "  ROOT r = (f32[1000,300], f32[300,1000]) tuple(t, g)\n}\n",
      in, 2);
  HloBuffer *t = elem(r, 0), *g = elem(r, 1);
  const float *tp = hlo_buffer_data(t), *gp = hlo_buffer_data(g);
  int64_t bad = 0;
  for (int i = 0; i < C; i++)
    for (int j = 0; j < R; j++) bad += tp[i * R + j] != v[j * C + i];
  ck_assert_int_eq(bad, 0);
  for (int i = 0; i < R; i++)
    for (int j = 0; j < C; j++) bad += gp[i * C + j] != v[(R - 1 - i) * C + j];
  ck_assert_int_eq(bad, 0);
  hlo_buffer_free(t);
  hlo_buffer_free(g);
  hlo_buffer_free(r);
  hlo_buffer_free(in[0]);
  hlo_buffer_free(in[1]);
  free(v);
  free(ix);
}
END_TEST


/* Threaded scatter: threads own row ranges of the operand, so windows of 24
 * rows straddle their boundaries; overlapping windows under overwrite (the
 * last one in order wins) and add, some windows out of bounds. Checked
 * against a plain sequential loop over the definition. */
START_TEST(threaded_scatter_windows) {
  enum { N = 64, R = 400, W = 24, C = 200 };
  static const char *mods[2] = { "overwrite", "add" };
  int32_t *ix = malloc(sizeof(int32_t) * N);
  float *u = malloc(sizeof(float) * N * W * C), *want = calloc(R * C, sizeof(float));
  for (int p = 0; p < N; p++) ix[p] = (p * 397) % (R + 20) - 10;   /* -10 .. 409 */
  for (int i = 0; i < N * W * C; i++) u[i] = (float)(i % 1013);
  for (int m = 0; m < 2; m++) {
    char text[1024];
    snprintf(text, sizeof text,
             "HloModule t\n"
             "comb {\n  p0 = f32[] parameter(0)\n%s}\n"
             "ENTRY e {\n  z = f32[] constant(0)\n  op = f32[%d,%d] broadcast(z), dimensions={}\n"
             "  i = s32[%d,1] parameter(0)\n  u = f32[%d,%d,%d] parameter(1)\n"
             "  ROOT s = f32[%d,%d] scatter(op, i, u), update_window_dims={1,2},"
             " inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1,"
             " to_apply=comb\n}\n",
             m == 0 ? "  ROOT p1 = f32[] parameter(1)\n"
                    : "  p1 = f32[] parameter(1)\n  ROOT r = f32[] add(p0, p1)\n",
             R, C, N, N, W, C, R, C);
    HloBuffer *in[2];
    ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_S32, (int64_t[]){ N, 1 }, 2, ix, &in[0]),
                     HLO_OK);
    ck_assert_int_eq(hlo_buffer_new_array(ctx, HLO_TYPE_F32, (int64_t[]){ N, W, C }, 3, u,
                                          &in[1]), HLO_OK);
    HloBuffer *r = tl_run_ok(ctx, text, in, 2);
    memset(want, 0, sizeof(float) * R * C);
    for (int p = 0; p < N; p++) {
      if (ix[p] < 0 || ix[p] > R - W) continue;
      for (int a = 0; a < W; a++)
        for (int c = 0; c < C; c++) {
          float v = u[(p * W + a) * C + c];
          float *o = &want[(ix[p] + a) * C + c];
          *o = m == 0 ? v : *o + v;
        }
    }
    const float *got = hlo_buffer_data(r);
    int bad = -1;
    for (int i = 0; i < R * C && bad < 0; i++)
      if (got[i] != want[i]) bad = i;
    ck_assert_msg(bad < 0, "%s: element %d is %g, want %g", mods[m], bad, got[bad < 0 ? 0 : bad],
                  want[bad < 0 ? 0 : bad]);
    hlo_buffer_free(r);
    hlo_buffer_free(in[0]);
    hlo_buffer_free(in[1]);
  }
  free(ix);
  free(u);
  free(want);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("gather_scatter_hlo");
  TCase *tc = tcase_create("modules");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, scatter_non_commutative_order);
  tcase_add_test(tc, scatter_variadic);
  tcase_add_test(tc, scatter_s4_windows);
  tcase_add_test(tc, bitcast_layouts);
  tcase_add_test(tc, gather_pipeline);
  tcase_add_test(tc, threaded_transpose_and_gather);
  tcase_add_test(tc, threaded_scatter_windows);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return tl_main(suite()); }
