/* check_gather_scatter.c: Check suite for dynamic-slice,
 * dynamic-update-slice, gather and scatter: general dimension numbers,
 * batching dims, implicit index vectors, index types, XLA's out-of-bounds
 * rules (clamp for gather and dynamic slices, skip the whole window for
 * scatter), update order for repeated indices, the typed reducers of every
 * element family. Expected values are worked out by hand from XLA's
 * operation semantics. */
#include "tests/testlib.h"
#include <complex.h>
#include <math.h>

/* ---- dynamic-slice -------------------------------------------------------- */

START_TEST(dynamic_slice_clamps) {
  HloInstr *p = tl_param(0, SH(HLO_S32, 5));
  HloInstr *i32 = tl_param(1, SCALAR(HLO_S32));
  HloInstr *ds = tl_instr(HLO_OP_DYNAMIC_SLICE, SH(HLO_S32, 2), 2, p, i32);
  ds->dynamic_slice_sizes = INTS(2);
  HliValue *op = VAL(p, int32_t, 0, 1, 2, 3, 4);
  int32_t starts[] = { 3, 4, -2, 1 };
  int32_t want[] = { 3, 3, 0, 1 };   /* clamp(start, 0, 5 - 2) */
  for (int k = 0; k < 4; k++) {
    HliValue *in[] = { op, VAL(i32, int32_t, starts[k]) };
    HliValue *out = tl_run(ds, in);
    ck_assert_int_eq(((int32_t *)out->data)[0], want[k]);
    ck_assert_int_eq(((int32_t *)out->data)[1], want[k] + 1);
    hli_value_unref(NULL, out);
    hli_value_unref(NULL, in[1]);
  }
  /* Unsigned start indices are values, not bit patterns: u32 0xffffffff is
   * huge and clamps to the top; u8 200 too. */
  HloInstr *u32 = tl_param(1, SCALAR(HLO_U32));
  HloInstr *dsu = tl_instr(HLO_OP_DYNAMIC_SLICE, SH(HLO_S32, 2), 2, p, u32);
  dsu->dynamic_slice_sizes = INTS(2);
  HliValue *in[] = { op, VAL(u32, uint32_t, 0xffffffffu) };
  HliValue *out = tl_run(dsu, in);
  EXPECT(out, int32_t, 3, 4);
  hli_value_unref(NULL, out);
  hli_value_unref(NULL, in[1]);
  HloInstr *u8 = tl_param(1, SCALAR(HLO_U8));
  HloInstr *ds8 = tl_instr(HLO_OP_DYNAMIC_SLICE, SH(HLO_S32, 2), 2, p, u8);
  ds8->dynamic_slice_sizes = INTS(2);
  HliValue *in8[] = { op, VAL(u8, uint8_t, 200) };
  out = tl_run(ds8, in8);
  EXPECT(out, int32_t, 3, 4);
  hli_value_unref(NULL, out);
  hli_value_unref(NULL, in8[1]);
  hli_value_unref(NULL, op);
  ds->dynamic_slice_sizes = INTS(6);
  tl_refused(ds, "does not fit dimension 0");
}
END_TEST

START_TEST(dynamic_slice_2d) {
  /* [3,4] with (r,c) = 10r+c; size [2,3] at (2,-1) -> clamped (1,0). */
  HloInstr *p = tl_param(0, SH(HLO_S64, 3, 4));
  HloInstr *a = tl_param(1, SCALAR(HLO_S16)), *b = tl_param(2, SCALAR(HLO_S64));
  HloInstr *ds = tl_instr(HLO_OP_DYNAMIC_SLICE, SH(HLO_S64, 2, 3), 3, p, a, b);
  ds->dynamic_slice_sizes = INTS(2, 3);
  HliValue *in[] = { VAL(p, int64_t, 0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23),
                     VAL(a, int16_t, 2), VAL(b, int64_t, -1) };
  HliValue *out = tl_run(ds, in);
  EXPECT(out, int64_t, 10, 11, 12, 20, 21, 22);
  hli_value_unref(NULL, out);
  tl_free(3, in);
}
END_TEST

START_TEST(dynamic_update_slice_clamps) {
  HloInstr *p = tl_param(0, SH(HLO_F32, 4));
  HloInstr *u = tl_param(1, SH(HLO_F32, 2));
  HloInstr *s = tl_param(2, SCALAR(HLO_S32));
  HloInstr *d = tl_instr(HLO_OP_DYNAMIC_UPDATE_SLICE, SH(HLO_F32, 4), 3, p, u, s);
  HliValue *in[] = { VAL(p, float, 1, 2, 3, 4), VAL(u, float, 8, 9), VAL(s, int32_t, 3) };
  HliValue *out = tl_run(d, in);
  EXPECT(out, float, 1, 2, 8, 9);   /* start 3 clamps to 2 */
  hli_value_unref(NULL, out);
  EXPECT(in[0], float, 1, 2, 3, 4);   /* the operand is untouched */
  tl_free(3, in);

  /* 2-D [3,3] zeros, update [2,2] at (1,-1) -> (1,0). */
  HloInstr *p2 = tl_param(0, SH(HLO_U16, 3, 3));
  HloInstr *u2 = tl_param(1, SH(HLO_U16, 2, 2));
  HloInstr *r = tl_param(2, SCALAR(HLO_S32)), *c = tl_param(3, SCALAR(HLO_S32));
  HloInstr *d2 = tl_instr(HLO_OP_DYNAMIC_UPDATE_SLICE, SH(HLO_U16, 3, 3), 4, p2, u2, r, c);
  HliValue *in2[] = { VAL(p2, uint16_t, 0, 0, 0, 0, 0, 0, 0, 0, 0), VAL(u2, uint16_t, 1, 2, 3, 4),
                      VAL(r, int32_t, 1), VAL(c, int32_t, -1) };
  out = tl_run(d2, in2);
  EXPECT(out, uint16_t, 0, 0, 0, 1, 2, 0, 3, 4, 0);
  hli_value_unref(NULL, out);
  tl_free(4, in2);
  HloInstr *bad = tl_instr(HLO_OP_DYNAMIC_UPDATE_SLICE, SH(HLO_U16, 3, 3), 3, p2, u2, r);
  tl_refused(bad, "expects 2 start indices");
}
END_TEST

/* ---- gather ------------------------------------------------------------------ */

static HloInstr *gather(HloShape out, HloInstr *op, HloInstr *idx, HloI64s offset,
                        HloI64s collapsed, HloI64s map, int64_t ivd, HloI64s sizes) {
  HloInstr *g = tl_instr(HLO_OP_GATHER, out, 2, op, idx);
  g->gather.offset_dims = offset;
  g->gather.collapsed_slice_dims = collapsed;
  g->gather.start_index_map = map;
  g->gather.index_vector_dim = ivd;
  g->gather.slice_sizes = sizes;
  return g;
}

static HliValue *iota_value(const HloShape *s, int base) {
  HliValue *v = hli_value_new(NULL, s);
  for (int64_t i = 0; i < v->nelem; i++) ((float *)v->data)[i] = (float)(base ? (i / base) * 10 + i % base : i);
  return v;
}

START_TEST(gather_windows_clamped) {
  /* conformance-style: operand [3,10] = 10r+c, rows of 5 from (r, c). */
  HloInstr *p = tl_param(0, SH(HLO_F32, 3, 10));
  HloInstr *ix = tl_param(1, SH(HLO_S64, 3, 2));
  HloInstr *g = gather(SH(HLO_F32, 3, 5), p, ix, INTS(1), INTS(0), INTS(0, 1), 1, INTS(1, 5));
  HliValue *in[] = { iota_value(&p->shape, 10), VAL(ix, int64_t, 0, 1, 1, 5, 2, 8) };
  HliValue *out = tl_run(g, in);
  /* (2,8) clamps to (2,5): 10 - 5. */
  EXPECT(out, float, 1, 2, 3, 4, 5, 15, 16, 17, 18, 19, 25, 26, 27, 28, 29);
  hli_value_unref(NULL, out);
  tl_free(2, in);
}
END_TEST

START_TEST(gather_embedding_rows) {
  /* table [4,3]; s32 indices with an implicit index vector (ivd = rank). */
  HloInstr *p = tl_param(0, SH(HLO_F32, 4, 3));
  HloInstr *ix = tl_param(1, SH(HLO_S32, 5));
  HloInstr *g = gather(SH(HLO_F32, 5, 3), p, ix, INTS(1), INTS(0), INTS(0), 1, INTS(1, 3));
  HliValue *in[] = { iota_value(&p->shape, 0), VAL(ix, int32_t, 3, 0, 3, -1, 7) };
  HliValue *out = tl_run(g, in);
  EXPECT(out, float, 9, 10, 11, 0, 1, 2, 9, 10, 11, 0, 1, 2, 9, 10, 11);
  hli_value_unref(NULL, out);
  tl_free(2, in);
}
END_TEST

START_TEST(gather_offset_dim_first) {
  /* operand [3,4] = 4r+c; columns 2 and 0 gathered into result [3,2]
   * whose dim 0 is the offset (row) dim and dim 1 the batch dim. */
  HloInstr *p = tl_param(0, SH(HLO_F32, 3, 4));
  HloInstr *ix = tl_param(1, SH(HLO_U8, 2, 1));
  HloInstr *g = gather(SH(HLO_F32, 3, 2), p, ix, INTS(0), INTS(1), INTS(1), 1, INTS(3, 1));
  HliValue *in[] = { iota_value(&p->shape, 0), VAL(ix, uint8_t, 2, 0) };
  HliValue *out = tl_run(g, in);
  EXPECT(out, float, 2, 0, 6, 4, 10, 8);
  hli_value_unref(NULL, out);
  tl_free(2, in);
}
END_TEST

START_TEST(gather_index_vector_dim_0) {
  /* operand [2,2,3] = i; indices s32[1] {1} with ivd 0: operand[:, :, 1]. */
  HloInstr *p = tl_param(0, SH(HLO_F32, 2, 2, 3));
  HloInstr *ix = tl_param(1, SH(HLO_S32, 1));
  HloInstr *g = gather(SH(HLO_F32, 2, 2), p, ix, INTS(0, 1), INTS(2), INTS(2), 0, INTS(2, 2, 1));
  HliValue *in[] = { iota_value(&p->shape, 0), VAL(ix, int32_t, 1) };
  HliValue *out = tl_run(g, in);
  EXPECT(out, float, 1, 4, 7, 10);
  hli_value_unref(NULL, out);
  tl_free(2, in);
}
END_TEST

START_TEST(gather_batching_dims) {
  /* operand [2,4] = 10b+c; per batch b, 3 lookups along dim 1:
   * out[b][j] = operand[b][clamp(idx[b][j])]. */
  HloInstr *p = tl_param(0, SH(HLO_F32, 2, 4));
  HloInstr *ix = tl_param(1, SH(HLO_S32, 2, 3));
  HloInstr *g = gather(SH(HLO_F32, 2, 3), p, ix, NOINTS, INTS(1), INTS(1), 2, INTS(1, 1));
  g->gather.operand_batching_dims = INTS(0);
  g->gather.start_indices_batching_dims = INTS(0);
  HliValue *in[] = { iota_value(&p->shape, 4), VAL(ix, int32_t, 3, 0, 1, 2, 2, 9) };
  HliValue *out = tl_run(g, in);
  EXPECT(out, float, 3, 0, 1, 12, 12, 13);
  hli_value_unref(NULL, out);
  tl_free(2, in);
}
END_TEST


START_TEST(gather_index_vector_dim_first) {
  /* indices [2,3] with ivd 0: the index vectors are the columns.
   * operand [4,5] = 10r+c; (0,4), (3,0), (1,2). */
  HloInstr *p = tl_param(0, SH(HLO_F32, 4, 5));
  HloInstr *ix = tl_param(1, SH(HLO_S32, 2, 3));
  HloInstr *g = gather(SH(HLO_F32, 3), p, ix, NOINTS, INTS(0, 1), INTS(0, 1), 0, INTS(1, 1));
  HliValue *in[] = { iota_value(&p->shape, 5), VAL(ix, int32_t, 0, 3, 1, 4, 0, 2) };
  HliValue *out = tl_run(g, in);
  EXPECT(out, float, 4, 30, 12);
  hli_value_unref(NULL, out);
  tl_free(2, in);
}
END_TEST

START_TEST(gather_batching_with_windows) {
  /* operand [2,5,3] = i; per batch b a window of 2 rows x 3 from row
   * clamp(idx[b], 0, 3): b0 rows 3,4 (4 clamps), b1 rows 1,2. */
  HloInstr *p = tl_param(0, SH(HLO_F32, 2, 5, 3));
  HloInstr *ix = tl_param(1, SH(HLO_S64, 2, 1));
  HloInstr *g = gather(SH(HLO_F32, 2, 2, 3), p, ix, INTS(1, 2), NOINTS, INTS(1), 1, INTS(1, 2, 3));
  g->gather.operand_batching_dims = INTS(0);
  g->gather.start_indices_batching_dims = INTS(0);
  HliValue *in[] = { iota_value(&p->shape, 0), VAL(ix, int64_t, 4, 1) };
  HliValue *out = tl_run(g, in);
  EXPECT(out, float, 9, 10, 11, 12, 13, 14, 18, 19, 20, 21, 22, 23);
  hli_value_unref(NULL, out);
  tl_free(2, in);
}
END_TEST

START_TEST(gather_refusals) {
  HloInstr *p = tl_param(0, SH(HLO_F32, 3, 10));
  HloInstr *ix = tl_param(1, SH(HLO_S64, 3, 2));
  HloInstr *g = gather(SH(HLO_F32, 3, 5), p, ix, INTS(1), INTS(0), INTS(0, 1), 1, INTS(1, 11));
  tl_refused(g, "slice size 11 does not fit");
  g = gather(SH(HLO_F32, 3, 5), p, ix, INTS(1), INTS(0), INTS(0), 1, INTS(1, 5));
  tl_refused(g, "start_index_map has 1 entries but the index vector has 2");
  g = gather(SH(HLO_F32, 3, 4), p, ix, INTS(1), INTS(0), INTS(0, 1), 1, INTS(1, 5));
  tl_refused(g, "result shape does not match");
  HloInstr *fx = tl_param(1, SH(HLO_F32, 3, 2));
  g = gather(SH(HLO_F32, 3, 5), p, fx, INTS(1), INTS(0), INTS(0, 1), 1, INTS(1, 5));
  tl_refused(g, "indices must have an integer type");
}
END_TEST

/* ---- scatter ------------------------------------------------------------------ */

static HloInstr *scatter(HloShape out, HloInstr *op, HloInstr *idx, HloInstr *upd, HloI64s win,
                         HloI64s inserted, HloI64s map, int64_t ivd, HloOpcode reducer) {
  HloInstr *s = tl_instr(HLO_OP_SCATTER, out, 3, op, idx, upd);
  s->scatter.update_window_dims = win;
  s->scatter.inserted_window_dims = inserted;
  s->scatter.scatter_dims_to_operand_dims = map;
  s->scatter.index_vector_dim = ivd;
  tl_call(s, HLO_CALL_TO_APPLY, tl_binop(reducer, op->shape.dtype));
  return s;
}

START_TEST(scatter_add_repeated_rows) {
  /* rows 2, 0, 2 of [3,2] get += update rows. */
  HloInstr *p = tl_param(0, SH(HLO_F32, 3, 2));
  HloInstr *ix = tl_param(1, SH(HLO_S32, 3));
  HloInstr *u = tl_param(2, SH(HLO_F32, 3, 2));
  HloInstr *s = scatter(SH(HLO_F32, 3, 2), p, ix, u, INTS(1), INTS(0), INTS(0), 1, HLO_OP_ADD);
  HliValue *in[] = { VAL(p, float, 1, 2, 3, 4, 5, 6), VAL(ix, int32_t, 2, 0, 2),
                     VAL(u, float, 10, 20, 30, 40, 50, 60) };
  HliValue *out = tl_run(s, in);
  EXPECT(out, float, 31, 42, 3, 4, 65, 86);
  hli_value_unref(NULL, out);
  EXPECT(in[0], float, 1, 2, 3, 4, 5, 6);
  tl_free(3, in);
}
END_TEST

START_TEST(scatter_skips_out_of_bounds_windows) {
  /* Windows of 2 into [5]: start 3 fits (3..4); start 4 would cover 4..5,
   * so the whole window is dropped, as is start -1. */
  HloInstr *p = tl_param(0, SH(HLO_S32, 5));
  HloInstr *ix = tl_param(1, SH(HLO_S64, 3, 1));
  HloInstr *u = tl_param(2, SH(HLO_S32, 3, 2));
  HloOpcode ops[] = { HLO_OP_ADD, HLO_OP_PARAMETER };
  for (int k = 0; k < 2; k++) {
    HloInstr *s = scatter(SH(HLO_S32, 5), p, ix, u, INTS(1), NOINTS, INTS(0), 1, ops[k]);
    HliValue *in[] = { VAL(p, int32_t, 0, 0, 0, 0, 0), VAL(ix, int64_t, 3, 4, -1),
                       VAL(u, int32_t, 1, 2, 3, 4, 5, 6) };
    HliValue *out = tl_run(s, in);
    EXPECT(out, int32_t, 0, 0, 0, 1, 2);
    hli_value_unref(NULL, out);
    tl_free(3, in);
  }
}
END_TEST

START_TEST(scatter_overwrite_order) {
  /* Repeated index under overwrite: the last update in row-major order of
   * the scatter dims wins. Indices [2,2] = {{1,0},{1,2}}, scalar windows. */
  HloInstr *p = tl_param(0, SH(HLO_U64, 3));
  HloInstr *ix = tl_param(1, SH(HLO_U16, 2, 2));
  HloInstr *u = tl_param(2, SH(HLO_U64, 2, 2));
  HloInstr *s = scatter(SH(HLO_U64, 3), p, ix, u, NOINTS, INTS(0), INTS(0), 2, HLO_OP_PARAMETER);
  HliValue *in[] = { VAL(p, uint64_t, 7, 7, 7), VAL(ix, uint16_t, 1, 0, 1, 2),
                     VAL(u, uint64_t, 10, 20, 30, 40) };
  HliValue *out = tl_run(s, in);
  EXPECT(out, uint64_t, 20, 30, 40);
  hli_value_unref(NULL, out);
  tl_free(3, in);
}
END_TEST

START_TEST(scatter_conformance_shape) {
  /* As scatter_add_*_3_5_4_*_3_2_4: operand [3,5,4], indices s64[2,1]
   * both 1, updates [3,2,4], update_window_dims {0,2}, inserted {1}:
   * out[a][1][c] = op + upd[a][0][c] + upd[a][1][c]. */
  HloInstr *p = tl_param(0, SH(HLO_F32, 3, 5, 4));
  HloInstr *ix = tl_param(1, SH(HLO_S64, 2, 1));
  HloInstr *u = tl_param(2, SH(HLO_F32, 3, 2, 4));
  HloInstr *s = scatter(SH(HLO_F32, 3, 5, 4), p, ix, u, INTS(0, 2), INTS(1), INTS(1), 1,
                        HLO_OP_ADD);
  HliValue *in[] = { iota_value(&p->shape, 0), VAL(ix, int64_t, 1, 1), iota_value(&u->shape, 0) };
  HliValue *out = tl_run(s, in);
  const float *o = out->data;
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 5; b++)
      for (int c = 0; c < 4; c++) {
        float want = (float)((a * 5 + b) * 4 + c);
        if (b == 1) want += (float)((a * 2 + 0) * 4 + c) + (float)((a * 2 + 1) * 4 + c);
        ck_assert_float_eq(o[(a * 5 + b) * 4 + c], want);
      }
  hli_value_unref(NULL, out);
  tl_free(3, in);
}
END_TEST

/* One scalar-window scatter at indices {0,1,2} of a 3-element operand. */
static HliValue *scatter3(HloDtype t, HloOpcode op, const void *operand, const void *updates) {
  HloInstr *p = tl_param(0, SH(t, 3));
  HloInstr *ix = tl_param(1, SH(HLO_S32, 3));
  HloInstr *u = tl_param(2, SH(t, 3));
  HloInstr *s = scatter(SH(t, 3), p, ix, u, NOINTS, INTS(0), INTS(0), 1, op);
  HliValue *in[] = { tl_value(&p->shape, operand), VAL(ix, int32_t, 0, 1, 2),
                     tl_value(&u->shape, updates) };
  HliValue *out = tl_run(s, in);
  tl_free(3, in);
  return out;
}

START_TEST(scatter_float_reducers) {
  HliValue *out = scatter3(HLO_F32, HLO_OP_MAXIMUM, (float[]){ 1, NAN, 3 }, (float[]){ NAN, 2, 5 });
  ck_assert(isnan(((float *)out->data)[0]) && isnan(((float *)out->data)[1]));
  ck_assert_float_eq(((float *)out->data)[2], 5);
  hli_value_unref(NULL, out);
  out = scatter3(HLO_F64, HLO_OP_MINIMUM, (double[]){ 1, NAN, 3 }, (double[]){ NAN, 2, 5 });
  ck_assert(isnan(((double *)out->data)[0]) && isnan(((double *)out->data)[1]));
  ck_assert_double_eq(((double *)out->data)[2], 3);
  hli_value_unref(NULL, out);
  out = scatter3(HLO_F64, HLO_OP_MULTIPLY, (double[]){ 1.5, -2, 0 }, (double[]){ 2, 3, 7 });
  EXPECT(out, double, 3, -6, 0);
  hli_value_unref(NULL, out);
  /* bf16: 1 + 1 = 2, 1.5 + 2 = 3.5, -1 + 0.5 = -0.5; then maximum. */
  out = scatter3(HLO_BF16, HLO_OP_ADD, (uint16_t[]){ 0x3f80, 0x3fc0, 0xbf80 },
                 (uint16_t[]){ 0x3f80, 0x4000, 0x3f00 });
  EXPECT(out, uint16_t, 0x4000, 0x4060, 0xbf00);   /* 2, 3.5, -0.5 */
  hli_value_unref(NULL, out);
  out = scatter3(HLO_BF16, HLO_OP_MAXIMUM, (uint16_t[]){ 0x3f80, 0x3fc0, 0xbf80 },
                 (uint16_t[]){ 0x3f80, 0x4000, 0x3f00 });
  EXPECT(out, uint16_t, 0x3f80, 0x4000, 0x3f00);
  hli_value_unref(NULL, out);
  /* f16: 1 + 0.5 = 1.5, 2 * 3 = 6, min(-1, 1) = -1. */
  out = scatter3(HLO_F16, HLO_OP_ADD, (uint16_t[]){ 0x3c00, 0, 0 }, (uint16_t[]){ 0x3800, 0, 0 });
  EXPECT(out, uint16_t, 0x3e00, 0, 0);
  hli_value_unref(NULL, out);
  out = scatter3(HLO_F16, HLO_OP_MULTIPLY, (uint16_t[]){ 0x4000, 0, 0 }, (uint16_t[]){ 0x4200, 0, 0 });
  EXPECT(out, uint16_t, 0x4600, 0, 0);
  hli_value_unref(NULL, out);
  out = scatter3(HLO_F16, HLO_OP_MINIMUM, (uint16_t[]){ 0xbc00, 0, 0 }, (uint16_t[]){ 0x3c00, 0, 0 });
  EXPECT(out, uint16_t, 0xbc00, 0, 0);
  hli_value_unref(NULL, out);
  /* c64: (1+2i)(3+4i) = -5+10i; add. */
  out = scatter3(HLO_C64, HLO_OP_MULTIPLY, (float complex[]){ 1 + 2 * I, 1, 0 },
                 (float complex[]){ 3 + 4 * I, 1, 0 });
  EXPECT(out, float complex, -5 + 10 * I, 1, 0);
  hli_value_unref(NULL, out);
  out = scatter3(HLO_C128, HLO_OP_ADD, (double complex[]){ 1 + 2 * I, 1, 0 },
                 (double complex[]){ 3 + 4 * I, I, 0 });
  EXPECT(out, double complex, 4 + 6 * I, 1 + I, 0);
  hli_value_unref(NULL, out);
}
END_TEST

START_TEST(scatter_integer_reducers) {
  HliValue *out = scatter3(HLO_U8, HLO_OP_ADD, (uint8_t[]){ 250, 1, 0 }, (uint8_t[]){ 10, 2, 0 });
  EXPECT(out, uint8_t, 4, 3, 0);   /* 260 wraps */
  hli_value_unref(NULL, out);
  out = scatter3(HLO_S16, HLO_OP_MULTIPLY, (int16_t[]){ 300, -3, 1 }, (int16_t[]){ 300, 5, 1 });
  EXPECT(out, int16_t, 24464, -15, 1);   /* 90000 - 65536 */
  hli_value_unref(NULL, out);
  out = scatter3(HLO_S8, HLO_OP_MAXIMUM, (int8_t[]){ -5, 3, 0 }, (int8_t[]){ -7, 4, 0 });
  EXPECT(out, int8_t, -5, 4, 0);
  hli_value_unref(NULL, out);
  out = scatter3(HLO_U32, HLO_OP_MINIMUM, (uint32_t[]){ 0xffffffffu, 3, 0 },
                 (uint32_t[]){ 7, 4, 0 });
  EXPECT(out, uint32_t, 7, 3, 0);
  hli_value_unref(NULL, out);
  out = scatter3(HLO_S64, HLO_OP_ADD, (int64_t[]){ INT64_MAX, -1, 0 }, (int64_t[]){ 1, -1, 0 });
  EXPECT(out, int64_t, INT64_MIN, -2, 0);
  hli_value_unref(NULL, out);
  out = scatter3(HLO_U16, HLO_OP_XOR, (uint16_t[]){ 0xff00, 1, 0 }, (uint16_t[]){ 0x0ff0, 1, 0 });
  EXPECT(out, uint16_t, 0xf0f0, 0, 0);
  hli_value_unref(NULL, out);
  /* pred: add is OR, multiply AND, and/or as named. */
  out = scatter3(HLO_PRED, HLO_OP_ADD, (uint8_t[]){ 0, 1, 0 }, (uint8_t[]){ 1, 1, 0 });
  EXPECT(out, uint8_t, 1, 1, 0);
  hli_value_unref(NULL, out);
  out = scatter3(HLO_PRED, HLO_OP_AND, (uint8_t[]){ 0, 1, 1 }, (uint8_t[]){ 1, 1, 0 });
  EXPECT(out, uint8_t, 0, 1, 0);
  hli_value_unref(NULL, out);
  out = scatter3(HLO_PRED, HLO_OP_MULTIPLY, (uint8_t[]){ 1, 1, 0 }, (uint8_t[]){ 0, 1, 1 });
  EXPECT(out, uint8_t, 0, 1, 0);
  hli_value_unref(NULL, out);
}
END_TEST

START_TEST(scatter_batching_dims) {
  /* operand [2,3]; per batch b two scalar updates at column idx[b][j]. */
  HloInstr *p = tl_param(0, SH(HLO_S32, 2, 3));
  HloInstr *ix = tl_param(1, SH(HLO_S32, 2, 2));
  HloInstr *u = tl_param(2, SH(HLO_S32, 2, 2));
  HloInstr *s = scatter(SH(HLO_S32, 2, 3), p, ix, u, NOINTS, INTS(1), INTS(1), 2, HLO_OP_ADD);
  s->scatter.input_batching_dims = INTS(0);
  s->scatter.scatter_indices_batching_dims = INTS(0);
  HliValue *in[] = { VAL(p, int32_t, 0, 0, 0, 0, 0, 0), VAL(ix, int32_t, 0, 2, 1, 1),
                     VAL(u, int32_t, 1, 2, 3, 4) };
  HliValue *out = tl_run(s, in);
  EXPECT(out, int32_t, 1, 0, 2, 0, 7, 0);
  hli_value_unref(NULL, out);
  tl_free(3, in);
}
END_TEST

START_TEST(scatter_empty_and_refusals) {
  HloInstr *p = tl_param(0, SH(HLO_F32, 3, 2));
  HloInstr *ix = tl_param(1, SH(HLO_S32, 0));
  HloInstr *u = tl_param(2, SH(HLO_F32, 0, 2));
  HloInstr *s = scatter(SH(HLO_F32, 3, 2), p, ix, u, INTS(1), INTS(0), INTS(0), 1, HLO_OP_ADD);
  HliValue *in[] = { VAL(p, float, 1, 2, 3, 4, 5, 6), tl_value(&ix->shape, NULL),
                     tl_value(&u->shape, NULL) };
  HliValue *out = tl_run(s, in);
  EXPECT(out, float, 1, 2, 3, 4, 5, 6);
  hli_value_unref(NULL, out);
  tl_free(3, in);
  HloInstr *u3 = tl_param(2, SH(HLO_F32, 0, 3));
  s = scatter(SH(HLO_F32, 3, 2), p, ix, u3, INTS(1), INTS(0), INTS(0), 1, HLO_OP_ADD);
  tl_refused(s, "update window dimension 1 (size 3) exceeds operand dimension 1 (size 2)");
  HloInstr *ub = tl_param(2, SH(HLO_F32, 1, 2));
  s = scatter(SH(HLO_F32, 3, 2), p, ix, ub, INTS(1), INTS(0), INTS(0), 1, HLO_OP_ADD);
  tl_refused(s, "update scatter dimension 0 (size 1) differs from indices dimension 0 (size 0)");
  s = scatter(SH(HLO_F32, 3, 2), p, ix, u, INTS(1), INTS(0), INTS(0), 1, HLO_OP_ADD);
  s->called[0].comp = tl_binop(HLO_OP_ADD, HLO_S64);   /* a reducer of the wrong type */
  tl_refused(s, "parameter 0 must be a f32 scalar");
}
END_TEST

START_TEST(scatter_index_vector_dim_first) {
  /* indices [2,3] with ivd 0: columns (0,1), (2,3), (0,1); scalar adds. */
  HloInstr *p = tl_param(0, SH(HLO_S32, 3, 4));
  HloInstr *ix = tl_param(1, SH(HLO_S32, 2, 3));
  HloInstr *u = tl_param(2, SH(HLO_S32, 3));
  HloInstr *s = scatter(SH(HLO_S32, 3, 4), p, ix, u, NOINTS, INTS(0, 1), INTS(0, 1), 0, HLO_OP_ADD);
  HliValue *in[] = { VAL(p, int32_t, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
                     VAL(ix, int32_t, 0, 2, 0, 1, 3, 1), VAL(u, int32_t, 1, 2, 4) };
  HliValue *out = tl_run(s, in);
  EXPECT(out, int32_t, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2);
  hli_value_unref(NULL, out);
  tl_free(3, in);
}
END_TEST

START_TEST(scatter_batching_with_windows) {
  /* operand [2,4,2]; per batch b a 2x2 window at row idx[b]: b0 at row 2
   * fits; b1 at row 3 would reach row 4 and is skipped. */
  HloInstr *p = tl_param(0, SH(HLO_F64, 2, 4, 2));
  HloInstr *ix = tl_param(1, SH(HLO_U32, 2, 1));
  HloInstr *u = tl_param(2, SH(HLO_F64, 2, 2, 2));
  HloInstr *s = scatter(SH(HLO_F64, 2, 4, 2), p, ix, u, INTS(1, 2), NOINTS, INTS(1), 1,
                        HLO_OP_PARAMETER);
  s->scatter.input_batching_dims = INTS(0);
  s->scatter.scatter_indices_batching_dims = INTS(0);
  HliValue *in[] = { tl_value(&p->shape, (double[16]){ 0 }), VAL(ix, uint32_t, 2, 3),
                     VAL(u, double, 1, 2, 3, 4, 5, 6, 7, 8) };
  HliValue *out = tl_run(s, in);
  EXPECT(out, double, 0, 0, 0, 0, 1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0);
  hli_value_unref(NULL, out);
  tl_free(3, in);
}
END_TEST


/* If the executor runs scatter in place (the result shares the operand's
 * buffer) and that value is also the updates or the indices, the kernel
 * must read them as they were before the operand copy. */
START_TEST(scatter_result_shares_inputs) {
  HloInstr *p = tl_param(0, SH(HLO_F32, 3));
  HloInstr *ix = tl_param(1, SH(HLO_S32, 3));
  HloInstr *u = tl_param(2, SH(HLO_F32, 3));
  HloInstr *s = scatter(SH(HLO_F32, 3), p, ix, u, NOINTS, INTS(0), INTS(0), 1, HLO_OP_ADD);
  ck_assert_int_eq(hli_op_table()[HLO_OP_SCATTER].check(NULL, s), 0);
  HliValue *in[] = { VAL(p, float, 1, 2, 3), VAL(ix, int32_t, 2, 0, 1), VAL(u, float, 10, 20, 30) };
  ck_assert_int_eq(hli_op_table()[HLO_OP_SCATTER].run(NULL, s, in, in[2]), 0);
  EXPECT(in[2], float, 21, 32, 13);
  tl_free(3, in);

  HloInstr *q = tl_param(0, SH(HLO_S64, 3));
  HloInstr *v = tl_param(2, SH(HLO_S64, 3));
  HloInstr *s2 = scatter(SH(HLO_S64, 3), q, q, v, NOINTS, INTS(0), INTS(0), 1, HLO_OP_ADD);
  ck_assert_int_eq(hli_op_table()[HLO_OP_SCATTER].check(NULL, s2), 0);
  HliValue *qv = VAL(q, int64_t, 2, 0, 1);
  HliValue *in2[] = { qv, qv, VAL(v, int64_t, 10, 20, 30) };
  ck_assert_int_eq(hli_op_table()[HLO_OP_SCATTER].run(NULL, s2, in2, qv), 0);
  EXPECT(qv, int64_t, 22, 30, 11);
  hli_value_unref(NULL, qv);
  hli_value_unref(NULL, in2[2]);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("gather_scatter");
  TCase *tc = tcase_create("gather_scatter");
  tcase_add_checked_fixture(tc, tl_begin, tl_end);
  tcase_add_test(tc, dynamic_slice_clamps);
  tcase_add_test(tc, dynamic_slice_2d);
  tcase_add_test(tc, dynamic_update_slice_clamps);
  tcase_add_test(tc, gather_windows_clamped);
  tcase_add_test(tc, gather_embedding_rows);
  tcase_add_test(tc, gather_offset_dim_first);
  tcase_add_test(tc, gather_index_vector_dim_0);
  tcase_add_test(tc, gather_batching_dims);
  tcase_add_test(tc, gather_index_vector_dim_first);
  tcase_add_test(tc, gather_batching_with_windows);
  tcase_add_test(tc, scatter_index_vector_dim_first);
  tcase_add_test(tc, scatter_batching_with_windows);
  tcase_add_test(tc, gather_refusals);
  tcase_add_test(tc, scatter_add_repeated_rows);
  tcase_add_test(tc, scatter_skips_out_of_bounds_windows);
  tcase_add_test(tc, scatter_overwrite_order);
  tcase_add_test(tc, scatter_conformance_shape);
  tcase_add_test(tc, scatter_float_reducers);
  tcase_add_test(tc, scatter_integer_reducers);
  tcase_add_test(tc, scatter_batching_dims);
  tcase_add_test(tc, scatter_empty_and_refusals);
  tcase_add_test(tc, scatter_result_shares_inputs);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return tl_main(suite()); }
