/* check_movement.c: Check suite for the data-movement kernels: broadcast,
 * reshape, copy, bitcast (with layouts), transpose, slice, concatenate,
 * reverse, pad, iota. Expected values are worked out by hand from XLA's
 * operation semantics, or computed in the test from the definition (e.g.
 * transpose: out[a][b][c] == in[b][c][a]). */
#include "interp/kernels/stream.h"
#include "tests/testlib.h"
#include <complex.h>
#include <math.h>
#include <stdio.h>

/* ---- broadcast --------------------------------------------------------- */

START_TEST(broadcast_middle_dim) {
  HloInstr *p = tl_param(0, SH(HLO_S32, 3));
  HloInstr *b = tl_instr(HLO_OP_BROADCAST, SH(HLO_S32, 2, 3, 2), 1, p);
  b->dimensions = INTS(1);
  HliValue *in[] = { VAL(p, int32_t, 1, 2, 3) };
  HliValue *out = tl_run(b, in);
  EXPECT(out, int32_t, 1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3);
  tl_free(1, in);
  hli_value_unref(NULL, out);
}
END_TEST

START_TEST(broadcast_outer_and_inner) {
  HloInstr *p = tl_param(0, SH(HLO_S32, 2, 3));
  HloInstr *b = tl_instr(HLO_OP_BROADCAST, SH(HLO_S32, 2, 4, 3), 1, p);
  b->dimensions = INTS(0, 2);
  HliValue *in[] = { VAL(p, int32_t, 1, 2, 3, 4, 5, 6) };
  HliValue *out = tl_run(b, in);
  EXPECT(out, int32_t, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6, 4, 5, 6, 4, 5, 6);
  tl_free(1, in);
  hli_value_unref(NULL, out);
}
END_TEST

START_TEST(broadcast_scalar_each_size) {
  /* A scalar fills the result; once per element size 1, 2, 4, 8, 16. */
  HloDtype types[] = { HLO_U8, HLO_BF16, HLO_F32, HLO_S64, HLO_C128 };
  for (int t = 0; t < 5; t++) {
    HloInstr *p = tl_param(0, SCALAR(types[t]));
    HloInstr *b = tl_instr(HLO_OP_BROADCAST, SH(types[t], 3, 7), 1, p);
    unsigned char v[16];
    for (int i = 0; i < 16; i++) v[i] = (unsigned char)(0x11 * (i + 1));
    HliValue *in[] = { tl_value(&p->shape, v) };
    HliValue *out = tl_run(b, in);
    size_t es = hlc_dtype_size(types[t]);
    ck_assert_int_eq(out->nelem, 21);
    for (int k = 0; k < 21; k++)
      ck_assert(memcmp((char *)out->data + k * es, v, es) == 0);
    tl_free(1, in);
    hli_value_unref(NULL, out);
  }
}
END_TEST

START_TEST(broadcast_refuses_mismatch) {
  HloInstr *p = tl_param(0, SH(HLO_S32, 3));
  HloInstr *b = tl_instr(HLO_OP_BROADCAST, SH(HLO_S32, 2, 4), 1, p);
  b->dimensions = INTS(1);
  tl_refused(b, "does not match result dimension 1");
  b->dimensions = INTS(2);
  tl_refused(b, "out of range");
}
END_TEST

/* ---- reshape, copy, bitcast ------------------------------------------------ */

START_TEST(reshape_and_copy) {
  HloInstr *p = tl_param(0, SH(HLO_S16, 2, 3));
  HloInstr *r = tl_instr(HLO_OP_RESHAPE, SH(HLO_S16, 3, 1, 2), 1, p);
  HliValue *in[] = { VAL(p, int16_t, 1, 2, 3, 4, 5, 6) };
  HliValue *out = tl_run(r, in);
  EXPECT(out, int16_t, 1, 2, 3, 4, 5, 6);
  hli_value_unref(NULL, out);
  HloInstr *c = tl_instr(HLO_OP_COPY, SH(HLO_S16, 2, 3), 1, p);
  c->shape.minor_to_major[0] = 0;   /* a layout-changing copy keeps logical values */
  c->shape.minor_to_major[1] = 1;
  out = tl_run(c, in);
  EXPECT(out, int16_t, 1, 2, 3, 4, 5, 6);
  hli_value_unref(NULL, out);
  /* A copy to another element type converts (XLA evaluator CopyDifferentTypes). */
  HloInstr *cf = tl_instr(HLO_OP_COPY, SH(HLO_F32, 2, 3), 1, p);
  out = tl_run(cf, in);
  EXPECT(out, float, 1, 2, 3, 4, 5, 6);
  hli_value_unref(NULL, out);
  tl_free(1, in);
  HloInstr *cbad = tl_instr(HLO_OP_COPY, SH(HLO_F32, 3, 2), 1, p);
  tl_refused(cbad, "result shape does not match");
  HloInstr *bad = tl_instr(HLO_OP_RESHAPE, SH(HLO_S16, 5), 1, p);
  tl_refused(bad, "result has 5 elements, operand 6");
}
END_TEST

START_TEST(bitcast_column_major_operand) {
  /* f32[2,3]{0,1} holds [[1,2,3],[4,5,6]] in memory column-major: 1,4,2,5,3,6. */
  HloInstr *p = tl_param(0, SH(HLO_F32, 2, 3));
  p->shape.minor_to_major[0] = 0;
  p->shape.minor_to_major[1] = 1;
  HloInstr *b = tl_instr(HLO_OP_BITCAST, SH(HLO_F32, 6), 1, p);
  HliValue *in[] = { VAL(p, float, 1, 2, 3, 4, 5, 6) };
  HliValue *out = tl_run(b, in);
  EXPECT(out, float, 1, 4, 2, 5, 3, 6);
  hli_value_unref(NULL, out);
  /* ... and read back as f32[3,2]{0,1}: element (i,j) is memory[j*3+i]. */
  HloInstr *b2 = tl_instr(HLO_OP_BITCAST, SH(HLO_F32, 3, 2), 1, p);
  b2->shape.minor_to_major[0] = 0;
  b2->shape.minor_to_major[1] = 1;
  out = tl_run(b2, in);
  EXPECT(out, float, 1, 5, 4, 3, 2, 6);
  hli_value_unref(NULL, out);
  tl_free(1, in);
}
END_TEST

START_TEST(bitcast_column_major_result) {
  /* f32[6]{0} memory 1..6 read as f32[2,3]{0,1}: (i,j) = memory[j*2+i]. */
  HloInstr *p = tl_param(0, SH(HLO_F32, 6));
  HloInstr *b = tl_instr(HLO_OP_BITCAST, SH(HLO_F32, 2, 3), 1, p);
  b->shape.minor_to_major[0] = 0;
  b->shape.minor_to_major[1] = 1;
  HliValue *in[] = { VAL(p, float, 1, 2, 3, 4, 5, 6) };
  HliValue *out = tl_run(b, in);
  EXPECT(out, float, 1, 3, 5, 2, 4, 6);
  hli_value_unref(NULL, out);
  /* Default layouts on both sides: the bytes, reinterpreted (here as s32). */
  HloInstr *b3 = tl_instr(HLO_OP_BITCAST, SH(HLO_S32, 3, 2), 1, p);
  out = tl_run(b3, in);
  ck_assert(memcmp(out->data, in[0]->data, 24) == 0);
  hli_value_unref(NULL, out);
  tl_free(1, in);
  HloInstr *bad = tl_instr(HLO_OP_BITCAST, SH(HLO_F32, 5), 1, p);
  tl_refused(bad, "result has 20 bytes, operand 24");
}
END_TEST

/* ---- transpose ------------------------------------------------------------- */

START_TEST(transpose_3d_permutations) {
  int64_t perms[6][3] = { { 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 }, { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 } };
  int64_t dims[3] = { 2, 3, 4 };
  HloInstr *p = tl_param(0, SH(HLO_S32, 2, 3, 4));
  int32_t v[24];
  for (int i = 0; i < 24; i++) v[i] = i;
  HliValue *in[] = { tl_value(&p->shape, v) };
  for (int t = 0; t < 6; t++) {
    const int64_t *pm = perms[t];
    HloInstr *tr = tl_instr(HLO_OP_TRANSPOSE, SH(HLO_S32, dims[pm[0]], dims[pm[1]], dims[pm[2]]), 1, p);
    tr->dimensions = tl_ints(3, pm);
    HliValue *out = tl_run(tr, in);
    const int32_t *o = out->data;
    int64_t od[3] = { dims[pm[0]], dims[pm[1]], dims[pm[2]] };
    for (int a = 0; a < od[0]; a++)
      for (int b = 0; b < od[1]; b++)
        for (int c = 0; c < od[2]; c++) {
          int64_t idx[3];   /* operand index: dim pm[k] takes the k-th result index */
          idx[pm[0]] = a;
          idx[pm[1]] = b;
          idx[pm[2]] = c;
          ck_assert_int_eq(o[(a * od[1] + b) * od[2] + c], idx[0] * 12 + idx[1] * 4 + idx[2]);
        }
    hli_value_unref(NULL, out);
  }
  tl_free(1, in);
}
END_TEST

/* Large 2-D transposes take the blocked path; check every element size. */
START_TEST(transpose_blocked_each_size) {
  HloDtype types[] = { HLO_U8, HLO_S16, HLO_F32, HLO_F64, HLO_C128 };
  int64_t R = 67, C = 45;
  for (int t = 0; t < 5; t++) {
    size_t es = hlc_dtype_size(types[t]);
    HloInstr *p = tl_param(0, SH(types[t], R, C));
    HloInstr *tr = tl_instr(HLO_OP_TRANSPOSE, SH(types[t], C, R), 1, p);
    tr->dimensions = INTS(1, 0);
    unsigned char *v = malloc((size_t)(R * C) * es);
    for (int64_t i = 0; i < R * C * (int64_t)es; i++) v[i] = (unsigned char)(i * 7 + i / 251);
    HliValue *in[] = { tl_value(&p->shape, v) };
    HliValue *out = tl_run(tr, in);
    for (int64_t i = 0; i < C; i++)
      for (int64_t j = 0; j < R; j++)
        ck_assert(memcmp((char *)out->data + (i * R + j) * (int64_t)es, v + (j * C + i) * (int64_t)es, es) == 0);
    hli_value_unref(NULL, out);
    tl_free(1, in);
    free(v);
  }
}
END_TEST

/* Transposes large enough for the vector path over whole blocks, with
 * ragged edges both ways, written past the cache (8 MB and more), on 1 to 3
 * threads: every element lands at its transposed place, bit for bit (the
 * byte pattern makes NaNs with payloads among the floats). */
START_TEST(transpose_large_streamed) {
  static const struct { HloElementType t; const char *name; size_t es; int64_t r, c; } cs[] = {
      {HLO_TYPE_F32, "f32", 4, 1100, 2050}, {HLO_TYPE_S32, "s32", 4, 2050, 1100},
      {HLO_TYPE_F64, "f64", 8, 700, 1500}, {HLO_TYPE_C64, "c64", 8, 1500, 700}};
  for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
    int64_t R = cs[k].r, C = cs[k].c;
    size_t es = cs[k].es, bytes = (size_t)(R * C) * es;
    unsigned char *v = malloc(bytes);
    for (size_t i = 0; i < bytes; i++) v[i] = (unsigned char)(i * 7 + i / 251);
    char text[256];
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n  x = %s[%lld,%lld] parameter(0)\n"
             "  ROOT t = %s[%lld,%lld] transpose(x), dimensions={1,0}\n}\n",
             cs[k].name, (long long)R, (long long)C, cs[k].name, (long long)C, (long long)R);
    const TlArray in = {cs[k].t, 2, (int64_t[]){R, C}, v};
    for (int threads = 1; threads <= 3; threads++) {
      TlRun run = tl_run_arrays(threads, text, 1, &in);
      const unsigned char *o = hlo_buffer_data(run.result);
      int64_t wrong = 0;
      for (int64_t i = 0; i < C; i++)
        for (int64_t j = 0; j < R; j++)
          wrong += memcmp(o + (size_t)(i * R + j) * es, v + (size_t)(j * C + i) * es, es) != 0;
      ck_assert_msg(wrong == 0, "%s[%lld,%lld], %d threads: %lld elements misplaced", cs[k].name,
                    (long long)R, (long long)C, threads, (long long)wrong);
      tl_run_done(&run);
    }
    free(v);
  }
}
END_TEST

/* Copies of 8 MB and more whose contiguous runs are streamed past the
 * cache with the next run's source prefetched: a transpose keeping the
 * minor dim, a dynamic-update-slice's copy of its operand, and
 * concatenations along both dims (of two 4.9 MB operands: the result's size
 * decides), on 1 to 3 threads. The operands count up from a start that
 * differs per run, so each result element's value says where it came from
 * (and a buffer reused from the last run cannot hold the right answer). */
START_TEST(copies_large_streamed) {
  enum { A = 64, B = 256, C = 130, R = 2048, K = 600 };
  int32_t *x = malloc(sizeof(int32_t) * A * B * C), *y = malloc(sizeof(int32_t) * R * K);
  const TlArray tin = {HLO_TYPE_S32, 3, (int64_t[]){A, B, C}, x};
  const TlArray cin[2] = {{HLO_TYPE_S32, 2, (int64_t[]){R, K}, y},
                          {HLO_TYPE_S32, 2, (int64_t[]){R, K}, y}};
  for (int threads = 1; threads <= 3; threads++) {
    for (int32_t i = 0; i < A * B * C; i++) x[i] = i + threads;
    for (int32_t i = 0; i < R * K; i++) y[i] = -1 - i - threads;
    TlRun t = tl_run_arrays(threads,
                            "HloModule m\nENTRY e {\n  x = s32[64,256,130] parameter(0)\n"
                            "  ROOT t = s32[256,64,130] transpose(x), dimensions={1,0,2}\n}\n",
                            1, &tin);
    const int32_t *o = hlo_buffer_data(t.result);
    int64_t wrong = 0;
    for (int64_t b = 0; b < B; b++)
      for (int64_t a = 0; a < A; a++)
        for (int64_t c = 0; c < C; c++)
          wrong += o[(b * A + a) * C + c] != (a * B + b) * C + c + threads;
    ck_assert_msg(wrong == 0, "transpose, %d threads: %lld wrong", threads, (long long)wrong);
    tl_run_done(&t);
    /* dynamic-update-slice copies its operand whole (still needed by the
     * add after it), then writes the update (a 1x1x2 block of zeros at
     * [5, 7, 9]). */
    t = tl_run_arrays(threads,
                      "HloModule m\nENTRY e {\n  x = s32[64,256,130] parameter(0)\n"
                      "  z = s32[] constant(0)\n  u = s32[1,1,2] broadcast(z), dimensions={}\n"
                      "  i = s32[] constant(5)\n  j = s32[] constant(7)\n  k = s32[] constant(9)\n"
                      "  d = s32[64,256,130] dynamic-update-slice(x, u, i, j, k)\n"
                      "  ROOT r = s32[64,256,130] add(d, x)\n}\n",
                      1, &tin);
    o = hlo_buffer_data(t.result);
    wrong = 0;
    for (int64_t i = 0; i < A * B * C; i++) {
      bool upd = i == (5 * B + 7) * C + 9 || i == (5 * B + 7) * C + 10;
      wrong += o[i] != (upd ? 0 : i + threads) + i + threads;
    }
    ck_assert_msg(wrong == 0, "dynamic-update-slice, %d threads: %lld wrong", threads,
                  (long long)wrong);
    tl_run_done(&t);
    for (int dim = 0; dim < 2; dim++) {
      char text[256];
      snprintf(text, sizeof text,
               "HloModule m\nENTRY e {\n  a = s32[2048,600] parameter(0)\n"
               "  b = s32[2048,600] parameter(1)\n"
               "  ROOT c = s32[%d,%d] concatenate(a, b), dimensions={%d}\n}\n",
               dim ? R : 2 * R, dim ? 2 * K : K, dim);
      TlRun r = tl_run_arrays(threads, text, 2, cin);
      const int32_t *q = hlo_buffer_data(r.result);
      wrong = 0;
      for (int64_t i = 0; i < 2 * R * K; i++) {   /* element i of the result: operand row, col */
        int64_t row = dim ? i / (2 * K) : i / K % R, col = dim ? i % (2 * K) % K : i % K;
        wrong += q[i] != -1 - (row * K + col) - threads;
      }
      ck_assert_msg(wrong == 0, "concatenate along %d, %d threads: %lld wrong", dim, threads,
                    (long long)wrong);
      tl_run_done(&r);
    }
  }
  free(x);
  free(y);
}
END_TEST

/* The streaming copy (stream.h): each store width this CPU has copies 0 to
 * 5 whole lines into an aligned destination from every source offset mod
 * 8; hlk_stream_copy (a plain head up to the first line boundary, lines,
 * a plain tail) every length from 0 to 300 bytes into a destination at
 * each of a few offsets. The bytes around a copy stay as they were. */
START_TEST(stream_copy_each_width) {
#if defined(HLK_STREAM_NT)
  enum { N = 300, PAD = 64 };
  static unsigned char src[N + 64];   /* 5 lines from offset 7 fit too */
  static _Alignas(64) unsigned char dst[N + 3 * PAD];
  for (int i = 0; i < N + 64; i++) src[i] = (unsigned char)(i * 7 + 1);
  for (int w = 0; w < 3; w++) {
    HlkStreamLinesFn *fn = hlk_stream_lines_variant(w);
    int64_t wrong = 0;
    for (int lines = 0; lines <= 5; lines++)
      for (int so = 0; so < 8; so++) {
        memset(dst, 0xee, sizeof dst);
        fn((char *)dst + PAD, (const char *)src + so, (size_t)lines);
        hlk_stream_fence();
        for (int i = 0; i < (int)sizeof dst; i++) {
          int k = i - PAD;
          wrong += dst[i] != (k >= 0 && k < 64 * lines ? src[so + k] : 0xee);
        }
      }
    ck_assert_msg(wrong == 0, "stream copy variant %d: %lld bytes wrong", w, (long long)wrong);
  }
  int64_t wrong = 0;
  for (int n = 0; n <= N; n++)
    for (int d0 = 0; d0 < 64; d0 += 21) {
      memset(dst, 0xee, sizeof dst);
      hlk_stream_copy(dst + PAD + d0, src + 5, (size_t)n);
      hlk_stream_fence();
      for (int i = 0; i < (int)sizeof dst; i++) {
        int k = i - PAD - d0;
        wrong += dst[i] != (k >= 0 && k < n ? src[5 + k] : 0xee);
      }
    }
  ck_assert_msg(wrong == 0, "hlk_stream_copy: %lld bytes wrong", (long long)wrong);
#endif
}
END_TEST

START_TEST(transpose_size_zero_and_refusal) {
  HloInstr *p = tl_param(0, SH(HLO_F32, 0, 3));
  HloInstr *tr = tl_instr(HLO_OP_TRANSPOSE, SH(HLO_F32, 3, 0), 1, p);
  tr->dimensions = INTS(1, 0);
  HliValue *in[] = { tl_value(&p->shape, NULL) };
  HliValue *out = tl_run(tr, in);
  ck_assert_int_eq(out->nelem, 0);
  hli_value_unref(NULL, out);
  tl_free(1, in);
  tr->dimensions = INTS(1, 1);
  tl_refused(tr, "repeated");
  tr->dimensions = INTS(0, 1);
  tl_refused(tr, "result shape does not match");
}
END_TEST

/* ---- slice ------------------------------------------------------------------ */

static HloSliceDim *slices(int n, const HloSliceDim *s) {
  return hlc_arena_memdup(&tl_arena, s, sizeof *s * (size_t)n);
}

START_TEST(slice_strided) {
  HloInstr *p = tl_param(0, SH(HLO_S32, 10));
  HloInstr *s = tl_instr(HLO_OP_SLICE, SH(HLO_S32, 3), 1, p);
  s->slice = slices(1, (HloSliceDim[]){ { 1, 8, 3 } });
  HliValue *in[] = { VAL(p, int32_t, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9) };
  HliValue *out = tl_run(s, in);
  EXPECT(out, int32_t, 1, 4, 7);
  hli_value_unref(NULL, out);
  tl_free(1, in);

  HloInstr *p2 = tl_param(0, SH(HLO_S32, 4, 5));
  HloInstr *s2 = tl_instr(HLO_OP_SLICE, SH(HLO_S32, 2, 3), 1, p2);
  s2->slice = slices(2, (HloSliceDim[]){ { 1, 4, 2 }, { 0, 5, 2 } });
  int32_t v[20];
  for (int i = 0; i < 20; i++) v[i] = i;
  HliValue *in2[] = { tl_value(&p2->shape, v) };
  out = tl_run(s2, in2);
  EXPECT(out, int32_t, 5, 7, 9, 15, 17, 19);
  hli_value_unref(NULL, out);
  tl_free(1, in2);

  HloInstr *s3 = tl_instr(HLO_OP_SLICE, SH(HLO_S32, 0, 5), 1, p2);  /* empty */
  s3->slice = slices(2, (HloSliceDim[]){ { 2, 2, 1 }, { 0, 5, 1 } });
  HliValue *in3[] = { tl_value(&p2->shape, v) };
  out = tl_run(s3, in3);
  ck_assert_int_eq(out->nelem, 0);
  hli_value_unref(NULL, out);
  tl_free(1, in3);
  s3->slice = slices(2, (HloSliceDim[]){ { 2, 5, 1 }, { 0, 5, 1 } });
  tl_refused(s3, "invalid for dimension 0");
  s3->slice = slices(2, (HloSliceDim[]){ { 1, 4, INT64_MAX }, { 0, 5, INT64_MAX } });
  s3->shape.dims[0] = 1;   /* huge strides take the first element only */
  s3->shape.dims[1] = 1;
  HliValue *in4[] = { tl_value(&p2->shape, v) };
  out = tl_run(s3, in4);
  EXPECT(out, int32_t, 5);
  hli_value_unref(NULL, out);
  tl_free(1, in4);
}
END_TEST

/* ---- concatenate -------------------------------------------------------------- */

START_TEST(concatenate_each_dim) {
  HloInstr *a = tl_param(0, SH(HLO_F64, 2, 2));
  HloInstr *b = tl_param(1, SH(HLO_F64, 2, 1));
  HloInstr *e = tl_param(2, SH(HLO_F64, 2, 0));
  HloInstr *c = tl_instr(HLO_OP_CONCATENATE, SH(HLO_F64, 2, 3), 3, a, e, b);
  c->dimensions = INTS(1);
  HliValue *in[] = { VAL(a, double, 1, 2, 3, 4), tl_value(&e->shape, NULL), VAL(b, double, 5, 6) };
  HliValue *out = tl_run(c, in);
  EXPECT(out, double, 1, 2, 5, 3, 4, 6);
  hli_value_unref(NULL, out);

  HloInstr *d = tl_param(3, SH(HLO_F64, 1, 2));
  HloInstr *c0 = tl_instr(HLO_OP_CONCATENATE, SH(HLO_F64, 5, 2), 3, a, d, a);
  c0->dimensions = INTS(0);
  HliValue *in0[] = { in[0], VAL(d, double, 7, 8), in[0] };
  out = tl_run(c0, in0);
  EXPECT(out, double, 1, 2, 3, 4, 7, 8, 1, 2, 3, 4);
  hli_value_unref(NULL, out);
  hli_value_unref(NULL, in0[1]);
  tl_free(3, in);
  c0->dimensions = INTS(1);
  tl_refused(c0, "differs in dimension 0");
}
END_TEST

/* ---- reverse ------------------------------------------------------------------- */

START_TEST(reverse_dims) {
  HloInstr *p = tl_param(0, SH(HLO_S8, 2, 3));
  HloInstr *r = tl_instr(HLO_OP_REVERSE, SH(HLO_S8, 2, 3), 1, p);
  HliValue *in[] = { VAL(p, int8_t, 0, 1, 2, 3, 4, 5) };
  r->dimensions = INTS(0, 1);
  HliValue *out = tl_run(r, in);
  EXPECT(out, int8_t, 5, 4, 3, 2, 1, 0);
  hli_value_unref(NULL, out);
  r->dimensions = INTS(1);
  out = tl_run(r, in);
  EXPECT(out, int8_t, 2, 1, 0, 5, 4, 3);
  hli_value_unref(NULL, out);
  r->dimensions = NOINTS;
  out = tl_run(r, in);
  EXPECT(out, int8_t, 0, 1, 2, 3, 4, 5);
  hli_value_unref(NULL, out);
  tl_free(1, in);

  /* 3-D, reversing dims 0 and 2 of [2,2,3]: out[a][b][c] = in[1-a][b][2-c]. */
  HloInstr *p3 = tl_param(0, SH(HLO_C64, 2, 2, 3));
  HloInstr *r3 = tl_instr(HLO_OP_REVERSE, SH(HLO_C64, 2, 2, 3), 1, p3);
  r3->dimensions = INTS(2, 0);
  float complex v[12];
  for (int i = 0; i < 12; i++) v[i] = (float)i + (float)(100 + i) * I;
  HliValue *in3[] = { tl_value(&p3->shape, v) };
  out = tl_run(r3, in3);
  const float complex *o = out->data;
  for (int a = 0; a < 2; a++)
    for (int b = 0; b < 2; b++)
      for (int c = 0; c < 3; c++)
        ck_assert(o[(a * 2 + b) * 3 + c] == v[((1 - a) * 2 + b) * 3 + (2 - c)]);
  hli_value_unref(NULL, out);
  tl_free(1, in3);

  /* Rows long enough for the vector loop (and a tail), each element type
   * that has one: out[r][c] = in[r][W-1-c], bit for bit. */
  enum { R = 3, W = 1001 };
  HloDtype types[] = {HLO_U8, HLO_S16, HLO_F32, HLO_F64, HLO_C128};
  for (int t = 0; t < 5; t++) {
    size_t es = hlc_dtype_size(types[t]);
    HloInstr *pl = tl_param(0, SH(types[t], R, W));
    HloInstr *rl = tl_instr(HLO_OP_REVERSE, SH(types[t], R, W), 1, pl);
    rl->dimensions = INTS(1);
    unsigned char *bytes = malloc((size_t)(R * W) * es);
    for (size_t i = 0; i < (size_t)(R * W) * es; i++) bytes[i] = (unsigned char)(i * 13 + i / 7);
    HliValue *inl[] = { tl_value(&pl->shape, bytes) };
    out = tl_run(rl, inl);
    int64_t wrong = 0;
    for (int64_t r = 0; r < R; r++)
      for (int64_t c = 0; c < W; c++)
        wrong += memcmp((char *)out->data + (size_t)(r * W + c) * es,
                        bytes + (size_t)(r * W + W - 1 - c) * es, es) != 0;
    ck_assert_msg(wrong == 0, "%s: %lld elements misplaced", hlc_dtype_name(types[t]),
                  (long long)wrong);
    hli_value_unref(NULL, out);
    tl_free(1, inl);
    free(bytes);
  }
}
END_TEST

/* ---- pad ---------------------------------------------------------------------------- */

static HloPadDim *pads(int n, const HloPadDim *p) {
  return hlc_arena_memdup(&tl_arena, p, sizeof *p * (size_t)n);
}

START_TEST(pad_negative_and_interior) {
  /* [1,2,3] interior 1 -> 1 0 2 0 3; lo -1 drops the 1; hi 2 appends 0 0. */
  HloInstr *p = tl_param(0, SH(HLO_S32, 3));
  HloInstr *z = tl_param(1, SCALAR(HLO_S32));
  HloInstr *pd = tl_instr(HLO_OP_PAD, SH(HLO_S32, 6), 2, p, z);
  pd->padding = pads(1, (HloPadDim[]){ { -1, 2, 1 } });
  HliValue *in[] = { VAL(p, int32_t, 1, 2, 3), VAL(z, int32_t, 0) };
  HliValue *out = tl_run(pd, in);
  EXPECT(out, int32_t, 0, 2, 0, 3, 0, 0);
  hli_value_unref(NULL, out);

  /* Everything cut off: lo -5 on 3 elements, hi 3 -> one pad element. */
  HloInstr *pc = tl_instr(HLO_OP_PAD, SH(HLO_S32, 1), 2, p, z);
  pc->padding = pads(1, (HloPadDim[]){ { -5, 3, 0 } });
  HliValue *nine[] = { in[0], VAL(z, int32_t, 9) };
  out = tl_run(pc, nine);
  EXPECT(out, int32_t, 9);
  hli_value_unref(NULL, out);
  hli_value_unref(NULL, nine[1]);

  /* hi cuts into the interior padding: 1 0 2 0 3 with hi -2 -> 1 0 2. */
  HloInstr *ph = tl_instr(HLO_OP_PAD, SH(HLO_S32, 3), 2, p, z);
  ph->padding = pads(1, (HloPadDim[]){ { 0, -2, 1 } });
  out = tl_run(ph, in);
  EXPECT(out, int32_t, 1, 0, 2);
  hli_value_unref(NULL, out);
  tl_free(2, in);

  /* 2-D: rows lo 1 interior 1, cols hi -1: [[1,2],[3,4]] -> [[9],[1],[9],[3]]. */
  HloInstr *p2 = tl_param(0, SH(HLO_F32, 2, 2));
  HloInstr *z2 = tl_param(1, SCALAR(HLO_F32));
  HloInstr *pd2 = tl_instr(HLO_OP_PAD, SH(HLO_F32, 4, 1), 2, p2, z2);
  pd2->padding = pads(2, (HloPadDim[]){ { 1, 0, 1 }, { 0, -1, 0 } });
  HliValue *in2[] = { VAL(p2, float, 1, 2, 3, 4), VAL(z2, float, 9) };
  out = tl_run(pd2, in2);
  EXPECT(out, float, 9, 1, 9, 3);
  hli_value_unref(NULL, out);
  tl_free(2, in2);
  pd2->padding = pads(2, (HloPadDim[]){ { 1, 0, 1 }, { 0, 0, 0 } });
  tl_refused(pd2, "result shape does not match");
  pd2->padding = pads(2, (HloPadDim[]){ { 0, 0, INT64_MAX }, { 0, 0, 0 } });
  tl_refused(pd2, "padding of dimension 0 beyond 2^62");
  pd2->padding = pads(2, (HloPadDim[]){ { 0, 0, 0 }, { INT64_C(1) << 62, INT64_C(1) << 62, 0 } });
  tl_refused(pd2, "padding of dimension 1 overflows");
}
END_TEST

/* The definition of pad, element by element: result index o of a dim holds
 * operand index (o - lo) / (interior + 1) when that divides and lands in the
 * operand, else the padding value. */
static int64_t pad_src_index(int64_t o, int64_t lo, int64_t g, int64_t n) {
  int64_t r = o - lo;
  return r < 0 || r % g || r / g >= n ? -1 : r / g;
}

/* A 4-D pad big enough to run on several threads, with padding in the
 * outer dims (negative, interior), the innermost padded dim (interior and
 * a cut) and unpadded trailing dims, for 1- to 8-byte elements on 1 to 3
 * threads: every element is the definition's. */
START_TEST(pad_large_matches_definition) {
  tl_begin();
  static const int64_t a[4] = {5, 33, 17, 24};
  /* Second case: only interior padding, in the innermost dim. */
  static const HloPadDim cases[2][4] = {{{1, -2, 2}, {-3, 4, 0}, {2, 3, 1}, {0, 0, 0}},
                                        {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 1}}};
  static const struct { HloElementType t; const char *name; size_t es; } types[] = {
      {HLO_TYPE_U8, "u8", 1}, {HLO_TYPE_BF16, "bf16", 2}, {HLO_TYPE_F32, "f32", 4},
      {HLO_TYPE_S64, "s64", 8}};
  int64_t na = a[0] * a[1] * a[2] * a[3];
  unsigned char *src = malloc((size_t)na * 8), val[8];
  uint64_t seed = 5;
  for (int64_t i = 0; i < na * 8; i++) src[i] = (unsigned char)(tl_lcg(&seed) >> 24);
  for (int i = 0; i < 8; i++) val[i] = (unsigned char)(0xa0 + i);
  for (int c = 0; c < 2; c++) {
    const HloPadDim *p = cases[c];
    int64_t o[4];
    char spec[128];
    int at_spec = 0;
    for (int i = 0; i < 4; i++) {
      o[i] = p[i].lo + p[i].hi + a[i] + (a[i] - 1) * p[i].interior;
      at_spec += snprintf(spec + at_spec, sizeof spec - (size_t)at_spec, "%s%lld_%lld_%lld",
                          i ? "x" : "", (long long)p[i].lo, (long long)p[i].hi,
                          (long long)p[i].interior);
    }
    int64_t no = o[0] * o[1] * o[2] * o[3];
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
      char text[512];
      snprintf(text, sizeof text,
               "HloModule m\nENTRY e {\n  x = %s[5,33,17,24] parameter(0)\n  v = %s[] parameter(1)\n"
               "  ROOT y = %s[%lld,%lld,%lld,%lld] pad(x, v), padding=%s\n}\n",
               types[t].name, types[t].name, types[t].name, (long long)o[0], (long long)o[1],
               (long long)o[2], (long long)o[3], spec);
      const TlArray in[2] = {{types[t].t, 4, a, src}, {types[t].t, 0, NULL, val}};
      size_t es = types[t].es;
      for (int threads = 1; threads <= 3; threads++) {
        TlRun r = tl_run_arrays(threads, text, 2, in);
        ck_assert_int_eq(hlo_buffer_num_elements(r.result), no);
        const unsigned char *got = hlo_buffer_data(r.result);
        int64_t at = 0, idx[4], bad = -1;
        for (idx[0] = 0; idx[0] < o[0]; idx[0]++)
          for (idx[1] = 0; idx[1] < o[1]; idx[1]++)
            for (idx[2] = 0; idx[2] < o[2]; idx[2]++)
              for (idx[3] = 0; idx[3] < o[3]; idx[3]++, at++) {
                int64_t s = 0;
                for (int d = 0; d < 4 && s >= 0; d++) {
                  int64_t k = pad_src_index(idx[d], p[d].lo, p[d].interior + 1, a[d]);
                  s = k < 0 ? -1 : s * a[d] + k;
                }
                const unsigned char *want = s < 0 ? val : src + s * (int64_t)es;
                if (bad < 0 && memcmp(got + at * (int64_t)es, want, es) != 0) bad = at;
              }
        /* One assertion per run: Check reports every assertion to its parent. */
        ck_assert_msg(bad < 0, "case %d, %s, %d threads: element %lld differs", c, types[t].name,
                      threads, (long long)bad);
        tl_run_done(&r);
      }
    }
  }
  free(src);
  tl_end();
}
END_TEST

/* ---- iota ------------------------------------------------------------------------------ */

START_TEST(iota_types) {
  HloInstr *i1 = tl_instr(HLO_OP_IOTA, SH(HLO_S32, 2, 3), 0);
  i1->iota_dimension = 1;
  HliValue *out = tl_run(i1, NULL);
  EXPECT(out, int32_t, 0, 1, 2, 0, 1, 2);
  hli_value_unref(NULL, out);

  HloInstr *i2 = tl_instr(HLO_OP_IOTA, SH(HLO_F32, 3, 2), 0);
  i2->iota_dimension = 0;
  out = tl_run(i2, NULL);
  EXPECT(out, float, 0, 0, 1, 1, 2, 2);
  hli_value_unref(NULL, out);

  HloInstr *i3 = tl_instr(HLO_OP_IOTA, SH(HLO_BF16, 4), 0);
  out = tl_run(i3, NULL);
  EXPECT(out, uint16_t, 0x0000, 0x3f80, 0x4000, 0x4040);   /* 0, 1, 2, 3 */
  hli_value_unref(NULL, out);

  HloInstr *i4 = tl_instr(HLO_OP_IOTA, SH(HLO_F16, 3), 0);
  out = tl_run(i4, NULL);
  EXPECT(out, uint16_t, 0x0000, 0x3c00, 0x4000);
  hli_value_unref(NULL, out);

  HloInstr *i5 = tl_instr(HLO_OP_IOTA, SH(HLO_PRED, 3), 0);
  out = tl_run(i5, NULL);
  EXPECT(out, uint8_t, 0, 1, 1);
  hli_value_unref(NULL, out);

  HloInstr *i6 = tl_instr(HLO_OP_IOTA, SH(HLO_U8, 2, 300), 0);
  i6->iota_dimension = 1;
  out = tl_run(i6, NULL);
  ck_assert_int_eq(((uint8_t *)out->data)[300 + 257], 1);   /* 257 wraps to 1 */
  ck_assert_int_eq(((uint8_t *)out->data)[255], 255);
  hli_value_unref(NULL, out);

  HloInstr *i7 = tl_instr(HLO_OP_IOTA, SH(HLO_C64, 2), 0);
  out = tl_run(i7, NULL);
  EXPECT(out, float complex, 0, 1);
  hli_value_unref(NULL, out);

  i6->iota_dimension = 2;
  tl_refused(i6, "iota_dimension=2 out of range");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("movement");
  TCase *tc = tcase_create("movement");
  tcase_add_checked_fixture(tc, tl_begin, tl_end);
  tcase_add_test(tc, broadcast_middle_dim);
  tcase_add_test(tc, broadcast_outer_and_inner);
  tcase_add_test(tc, broadcast_scalar_each_size);
  tcase_add_test(tc, broadcast_refuses_mismatch);
  tcase_add_test(tc, reshape_and_copy);
  tcase_add_test(tc, bitcast_column_major_operand);
  tcase_add_test(tc, bitcast_column_major_result);
  tcase_add_test(tc, transpose_3d_permutations);
  tcase_add_test(tc, transpose_blocked_each_size);
  tcase_add_test(tc, transpose_large_streamed);
  tcase_add_test(tc, copies_large_streamed);
  tcase_add_test(tc, stream_copy_each_width);
  tcase_add_test(tc, transpose_size_zero_and_refusal);
  tcase_add_test(tc, slice_strided);
  tcase_add_test(tc, concatenate_each_dim);
  tcase_add_test(tc, reverse_dims);
  tcase_add_test(tc, pad_negative_and_interior);
  tcase_add_test(tc, pad_large_matches_definition);
  tcase_add_test(tc, iota_types);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return tl_main(suite()); }
