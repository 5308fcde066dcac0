/* check_conv.c: the convolution kernel.
 *
 * The table cases' expected values come from an independent numpy model of
 * XLA's convolution (explicitly dilating, padding/cropping the input, dilating
 * and reversing the kernel, then a strided valid correlation per group;
 * generator kept out of the tree). Operand values follow fixed formulas:
 * lhs[i] = (7i+3) mod 11 - 5, rhs[i] = (3i+1) mod 7 - 3 (row-major). Each case
 * runs through the GEMM lowering and the reference loop, in f32, s32,
 * s8 -> s32 and bf16 -> f32. A few 1-D cases are worked by hand. Integer convolutions
 * with padding, stride and feature groups are checked against a direct loop
 * over the definition (in int64, truncated), a different program from the
 * kernel's im2col + GEMM.
 */
#include "tests/testlib.h"
#include "interp/kernels/gemm.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct ConvCase {
  const char *name, *labels;
  int rank;
  int64_t ls[6], rs[6], os[6];
  int nwin;
  int64_t win[4][7];   /* size, stride, pad_lo, pad_hi, lhs_dilate, rhs_dilate, reversal */
  int64_t fgc, bgc;
  int64_t nout;
  const float *want;
} ConvCase;

static const ConvCase cases[] = {
  {"1d_pad_stride", "bf0_oi0->bf0", 3, {2, 3, 7}, {4, 3, 3}, {2, 4, 4}, 1, {{3,2,1,2,1,1,0}}, 1, 1, 32, (const float[]){3, -13, -16, 7, 32, -33, -20, 11, 5, 3, -24, -20, -8, 18, 7, -16, -12, -6, 2, 15, -23, -1, 34, 6, -13, 11, 17, 18, 11, -26, 7, 9}},
  {"1d_lhs_dilate", "bf0_oi0->bf0", 3, {1, 2, 4}, {2, 2, 3}, {1, 2, 6}, 1, {{3,1,1,0,2,1,0}}, 1, 1, 12, (const float[]){10, -11, 5, -9, -11, 4, 4, -11, -10, -1, -2, 20}},
  {"1d_rhs_dilate_reverse", "bf0_oi0->bf0", 3, {1, 2, 9}, {2, 2, 3}, {1, 2, 4}, 1, {{3,1,0,1,1,3,1}}, 1, 1, 8, (const float[]){31, -16, -8, 12, -31, 9, 5, 20}},
  {"1d_negative_pad", "bf0_oi0->bf0", 3, {2, 1, 8}, {1, 1, 2}, {2, 1, 4}, 1, {{2,1,-1,-2,1,1,0}}, 1, 1, 8, (const float[]){-9, -5, 10, -8, 12, -6, 9, -9}},
  {"1d_neg_pad_dilated", "b0f_0io->b0f", 3, {1, 6, 2}, {3, 2, 2}, {1, 7, 2}, 1, {{3,2,-2,3,3,2,0}}, 1, 1, 14, (const float[]){4, -12, 12, -4, -8, 4, -1, -12, -13, 11, 17, -1, 0, 0}},
  {"2d_nhwc", "b01f_01io->b01f", 4, {2, 5, 6, 3}, {3, 3, 3, 4}, {2, 5, 3, 4}, 2, {{3,1,1,1,1,1,0}, {3,2,0,1,1,1,0}}, 1, 1, 120, (const float[]){-24, -3, -24, 32, 11, 25, -17, 32, 42, -19, 11, 20, 39, -42, 24, -43, -27, 30, -11, -17, -56, 49, -14, -14, -5, 42, -37, 24, 28, -18, 27, -5, 44, -48, 35, -8, -5, -17, 34, -41, -60, 22, -1, 18, -54, 42, -37, 31, 37, -6, 7, 6, 46, -48, -9, 2, 24, -32, 10, -11, -27, 21, -29, -23, -25, 5, 0, -12, -30, 44, -22, 45, 28, -18, 27, -5, 28, -45, 36, -23, 26, -40, 55, -39, -60, 22, -1, 18, -27, 28, -36, 33, -17, 28, -39, 55, 50, -48, 15, 8, 39, -42, 24, -43, 6, -25, 21, -38, -48, 46, -35, 45, -6, 37, -18, -3, 26, -5, -15, -11}},
  {"2d_everything", "b01f_01io->b01f", 4, {1, 5, 4, 2}, {2, 3, 2, 3}, {1, 5, 1, 3}, 2, {{2,2,2,-1,2,1,1}, {3,1,1,0,1,2,0}}, 1, 1, 15, (const float[]){0, 0, 0, 3, 15, -22, 1, 18, -21, -1, 21, -20, 8, 2, 3}},
  {"3d", "b012f_012io->b012f", 5, {1, 4, 3, 5, 2}, {2, 2, 3, 2, 3}, {1, 4, 3, 3, 3}, 3, {{2,1,0,1,1,1,0}, {2,1,1,0,1,1,0}, {3,2,1,1,1,1,0}}, 1, 1, 108, (const float[]){13, -16, 25, 35, 3, -1, -13, -8, -3, -16, -16, 40, -9, -52, 10, 44, 14, 19, -39, 18, -51, -42, 88, -13, -10, -22, -27, -8, 10, 14, 4, 17, -26, -9, -8, -7, 47, -13, -24, 2, -61, 51, 47, 16, 13, -20, -23, -5, 2, 2, 72, 4, -42, -11, -7, 14, 14, -16, 9, -29, -16, 25, -11, 44, -10, -22, -9, -15, -7, -16, 40, -37, -23, -20, -3, 68, 4, 3, 18, -51, 27, -18, 9, 8, 26, -32, 22, 3, 6, 9, 14, 27, -37, -62, 38, -16, 27, -43, 20, 24, -50, 30, 32, 32, -24, -50, 24, -28}},
  {"grouped", "bf01_oi01->bf01", 4, {2, 4, 4, 4}, {6, 2, 3, 3}, {2, 6, 4, 4}, 2, {{3,1,1,1,1,1,0}, {3,1,1,1,1,1,0}}, 2, 1, 192, (const float[]){4, -7, 37, -45, -37, 52, -53, 19, 23, -27, 33, 7, 5, 18, 19, -15, -31, 32, -22, 7, 28, -17, 8, 21, 13, 6, 42, -44, -3, 27, -76, 29, 18, 15, -11, 31, 23, -44, 62, -40, -32, 39, -75, 31, 17, -6, 18, 3, 14, 9, -44, 23, 9, -39, 27, -17, 13, 16, 16, 1, 20, -27, -18, 26, 23, -44, 9, 14, -5, 27, 42, -43, 23, -12, -63, 34, -8, -19, 40, -12, -10, 15, 41, -44, -5, 37, -76, 22, 5, -19, 33, 4, -15, 24, -21, -22, -45, 37, -7, 4, 32, -13, -41, 36, -40, -4, 23, -20, 18, 16, -16, 7, 15, 19, -46, 18, -3, -56, 46, -18, 4, 33, -19, 5, 27, -75, 20, 13, 26, -76, 41, 4, -10, 41, -7, -37, 34, -63, -12, 23, -13, 23, 14, 5, 17, -6, 18, 3, -26, 5, 5, -26, 22, -17, 16, 14, 18, -34, 30, -43, -12, -18, 35, -44, -19, 41, -10, 23, 31, -75, 39, -32, -47, 50, -12, 13, -27, 40, -11, 14, 23, -56, -4, 9, -44, 42, 6, 13, 7, 15, -19, 20}},
  {"depthwise", "b01f_01io->b01f", 4, {1, 5, 5, 3}, {3, 3, 1, 3}, {1, 5, 3, 3}, 2, {{3,1,1,1,1,1,0}, {3,2,1,1,1,1,0}}, 3, 1, 45, (const float[]){-9, -5, 15, 13, -10, -27, 13, 1, -1, -5, 20, 0, -14, 22, -23, 5, -4, 19, -5, -22, 8, 7, -9, 19, 19, -12, -16, -5, -42, -6, -16, 37, -5, 0, 2, 15, 7, 10, -7, -2, -1, 26, 9, -5, -17}},
  {"depthwise_multiplier", "b01f_01io->b01f", 4, {2, 4, 5, 2}, {2, 3, 1, 4}, {2, 4, 2, 4}, 2, {{2,1,0,1,1,1,1}, {3,2,1,1,1,2,0}}, 2, 1, 64, (const float[]){4, 3, -4, -20, 1, 7, 4, 2, -17, -10, 9, 1, 11, 4, -29, 5, 17, -1, 11, 11, -23, 1, 4, -3, -12, 6, -2, -10, 7, 4, 16, -6, 19, -16, -7, 20, 19, -16, 4, 3, 20, -7, -16, 19, -26, 3, 26, -16, -23, 2, 8, -26, 17, 0, 4, -2, 16, -4, 7, 3, -2, -8, -12, 5}},
  {"batch_group", "bf0_oi0->bf0", 3, {4, 3, 5}, {4, 3, 2}, {2, 4, 4}, 1, {{2,1,0,0,1,1,0}}, 1, 2, 32, (const float[]){17, -8, 0, 19, -8, 10, 17, -9, -23, 22, 1, 2, 16, -17, 5, 5, -6, 2, 21, -37, 9, 16, -43, 19, 14, -29, 5, 17, -17, 16, 5, -17}},
  {"batch_group_nhwc", "b01f_01io->b01f", 4, {6, 3, 3, 2}, {2, 2, 2, 6}, {2, 3, 3, 6}, 2, {{2,1,0,1,1,1,0}, {2,1,1,0,1,1,0}}, 1, 3, 108, (const float[]){7, 6, 8, -26, 13, 0, 4, -21, 1, -22, -7, 21, 9, 4, 14, 11, -9, -15, 16, -25, 14, 3, -20, 4, -14, 21, 18, -22, 31, -21, -20, 2, 31, -22, 18, 9, -2, 9, -8, 4, -10, 3, 7, -7, 2, -10, 26, -12, 2, -7, 7, 0, -4, -4, 1, 1, 4, 6, -20, 12, 16, -16, -25, 22, -25, 5, 21, 9, -12, -22, 17, 2, -1, 3, -23, 2, 13, 5, 9, 4, 14, 11, -9, -15, 14, -15, -6, 11, -22, 4, -14, 3, 14, -12, 13, -12, -16, 15, 3, -8, -13, 27, -10, 15, -14, 13, -10, -9}},
  {"odd_labels", "f01b_i01o->01bf", 4, {3, 4, 5, 2}, {3, 2, 2, 4}, {3, 3, 2, 4}, 2, {{2,1,0,0,1,1,0}, {2,2,1,0,1,1,0}}, 1, 1, 72, (const float[]){0, 5, 10, -13, 22, -16, -5, 6, 36, -22, -31, 30, -11, -18, 24, -18, -9, 16, 13, 3, -1, -2, -31, 10, -11, -7, 25, 1, 0, 5, 10, -13, 6, 18, 2, -21, 36, -22, -31, 30, 5, -21, 2, 18, -9, 16, 13, 3, -11, -8, -26, 26, -11, -7, 25, 1, -35, 3, 13, 16, 6, 18, 2, -21, -14, 30, -31, -22, 5, -21, 2, 18}},
  {"odd_labels2", "0bf1_o1i0->f10b", 4, {4, 2, 3, 3}, {2, 2, 3, 3}, {2, 1, 4, 2}, 2, {{3,1,1,1,1,1,1}, {2,1,0,0,1,2,0}}, 1, 1, 16, (const float[]){10, -6, 8, 20, -56, 11, 14, -16, -41, 19, 36, -25, -20, 18, 7, -24}},
  {"no_spatial", "bf_io->bf", 2, {3, 4}, {4, 5}, {3, 5}, 0, {{0}}, 1, 1, 15, (const float[]){-4, 20, -5, -2, -20, -5, -17, -8, 1, 17, 5, 1, 11, -7, 10}},
  {"window_1x1", "b01f_01io->b01f", 4, {1, 3, 3, 4}, {1, 1, 4, 2}, {1, 2, 2, 2}, 2, {{1,2,0,0,1,1,0}, {1,2,0,0,1,1,0}}, 1, 1, 8, (const float[]){-14, 3, 19, 1, 19, -3, 19, -5}},
  {"empty_input_padded", "bf0_oi0->bf0", 3, {1, 1, 0}, {1, 1, 1}, {1, 1, 2}, 1, {{1,1,1,1,1,1,0}}, 1, 1, 2, (const float[]){0, 0}},
  {"empty_batch", "bf0_oi0->bf0", 3, {0, 2, 3}, {1, 2, 2}, {0, 1, 2}, 1, {{2,1,0,0,1,1,0}}, 1, 1, 0, (const float[]){0}},
};

/* Fill HloConvDims from text like "b01f_01io->b01f". */
static void parse_labels(const char *t, HloConvDims *cd) {
  int64_t sp[3][8];
  int part = 0, pos = 0;
  memset(cd, 0, sizeof *cd);
  int nsp = 0;
  for (const char *p = t; *p; p++) {
    if (*p == '_' || *p == '-') { part++; pos = 0; if (*p == '-') p++; continue; }
    if (*p >= '0' && *p <= '9') { sp[part][*p - '0'] = pos; if (part == 0) nsp++; }
    else if (part == 0) { if (*p == 'b') cd->in_batch = pos; else cd->in_feature = pos; }
    else if (part == 1) { if (*p == 'i') cd->k_in_feature = pos; else cd->k_out_feature = pos; }
    else { if (*p == 'b') cd->out_batch = pos; else cd->out_feature = pos; }
    pos++;
  }
  cd->in_spatial = tl_ints(nsp, sp[0]);
  cd->k_spatial = tl_ints(nsp, sp[1]);
  cd->out_spatial = tl_ints(nsp, sp[2]);
}

static HloInstr *make_conv(const ConvCase *c, HloDtype lt, HloDtype ot) {
  HloInstr *ins = tl_instr(HLO_OP_CONVOLUTION, tl_shape(ot, c->rank, c->os), 2,
                           tl_param(0, tl_shape(lt, c->rank, c->ls)),
                           tl_param(1, tl_shape(lt, c->rank, c->rs)));
  parse_labels(c->labels, &ins->conv);
  ins->window.present = true;
  ins->window.rank = c->nwin;
  ins->window.dims = hlc_arena_alloc(&tl_arena, 4 * sizeof(HloWindowDim));
  for (int i = 0; i < c->nwin; i++) {
    const int64_t *w = c->win[i];
    ins->window.dims[i] = (HloWindowDim){ .size = w[0], .stride = w[1], .pad_lo = w[2],
                                          .pad_hi = w[3], .lhs_dilate = w[4],
                                          .rhs_dilate = w[5], .reversal = w[6] != 0 };
  }
  ins->feature_group_count = c->fgc;
  ins->batch_group_count = c->bgc;
  return ins;
}

/* Operand values of the formulas above, stored as dtype t. */
static HliValue *formula_value(const HloShape *s, int a, int b, int m) {
  HliValue *v = tl_kept(s, NULL);
  for (int64_t i = 0; i < v->nelem; i++) {
    int x = (int)((i * a + b) % m) - m / 2;
    if (s->dtype == HLO_F32) ((float *)v->data)[i] = (float)x;
    else if (s->dtype == HLO_S32) ((int32_t *)v->data)[i] = x;
    else if (s->dtype == HLO_S8) ((int8_t *)v->data)[i] = (int8_t)x;
    else { float f = (float)x; uint32_t u; memcpy(&u, &f, 4); ((uint16_t *)v->data)[i] = (uint16_t)(u >> 16); }
  }
  return v;
}

static void run_case(const ConvCase *c, HloDtype lt, HloDtype ot, bool ref) {
  HloInstr *ins = make_conv(c, lt, ot);
  ck_assert_msg(hlk_conv_check(NULL, ins) == 0, "%s: %s", c->name, hli_last_error());
  HliValue *in[2] = { formula_value(&ins->ops[0]->shape, 7, 3, 11),
                      formula_value(&ins->ops[1]->shape, 3, 1, 7) };
  HliValue *out = tl_kept(&ins->shape, NULL);
  if (out->nbytes) memset(out->data, 0x5a, out->nbytes);
  ck_assert_msg(hlk_conv_run(NULL, ins, in, out, ref) == 0, "%s: %s", c->name, hli_last_error());
  ck_assert_int_eq(out->nelem, c->nout);
  for (int64_t i = 0; i < c->nout; i++) {
    double got = ot == HLO_S32 ? ((int32_t *)out->data)[i] : ((float *)out->data)[i];
    ck_assert_msg(got == c->want[i], "%s (%s->%s, %s) element %lld: got %g want %g", c->name,
                  hlc_dtype_name(lt), hlc_dtype_name(ot), ref ? "ref" : "gemm", (long long)i,
                  got, (double)c->want[i]);
  }
}

START_TEST(t_table) {
  const ConvCase *c = &cases[_i];
  tl_begin();
  /* The GEMM lowering under every micro-kernel the CPU can run. */
  for (TlGemmIsas g = {0}; tl_gemm_isa_next(&g);) {
    run_case(c, HLO_F32, HLO_F32, false);
    run_case(c, HLO_S32, HLO_S32, false);   /* the integer GEMM (32-bit lanes) */
    run_case(c, HLO_S8, HLO_S32, false);    /* the int16-pair kernel (odd k too) */
  }
  run_case(c, HLO_S32, HLO_S32, true);
  run_case(c, HLO_F32, HLO_F32, true);
  run_case(c, HLO_S32, HLO_S32, false);
  run_case(c, HLO_BF16, HLO_F32, false);
  tl_end();
}
END_TEST

/* NHWC with 9 input features (two blocks of four and one left over in the
 * 4x4 register transposes of the patch packing), 3x3 window, padding 1,
 * f32 and s32 (4-byte lanes), under every micro-kernel: against a direct
 * loop over the definition written here, on integer values (exact). */
enum { WN = 2, WH = 5, WW = 7, WC = 9, WO = 5 };
static const ConvCase wide_case = {
  "wide", "b01f_01io->b01f", 4, {WN, WH, WW, WC}, {3, 3, WC, WO}, {WN, WH, WW, WO}, 2,
  {{3, 1, 1, 1, 1, 1, 0}, {3, 1, 1, 1, 1, 1, 0}}, 1, 1, WN * WH * WW * WO, NULL };

/* c in f32 and s32 on the formula operands, under every micro-kernel, must
 * give want (integer values: exact in both types). */
static void expect_every_isa(const ConvCase *cc, const float *want) {
  for (TlGemmIsas g = {0}; tl_gemm_isa_next(&g);) {
    for (int t = 0; t < 2; t++) {
      HloDtype dt = t ? HLO_S32 : HLO_F32;
      HloInstr *c = make_conv(cc, dt, dt);
      HliValue *in[2] = { formula_value(&c->ops[0]->shape, 7, 3, 11),
                          formula_value(&c->ops[1]->shape, 3, 1, 7) };
      HliValue *out = tl_kept(&c->shape, NULL);
      ck_assert_int_eq(hlk_conv_run(NULL, c, in, out, false), 0);
      for (int64_t e = 0; e < out->nelem; e++) {
        double got = t ? ((int32_t *)out->data)[e] : ((float *)out->data)[e];
        ck_assert_msg(got == want[e], "%s %s %s element %lld: got %g want %g", cc->name, g.isa,
                      hlc_dtype_name(dt), (long long)e, got, (double)want[e]);
      }
    }
  }
}

START_TEST(t_nhwc_wide_features) {
  tl_begin();
  static float want[WN * WH * WW * WO];
  HloInstr *ins = make_conv(&wide_case, HLO_F32, HLO_F32);
  HliValue *x = formula_value(&ins->ops[0]->shape, 7, 3, 11);
  HliValue *k = formula_value(&ins->ops[1]->shape, 3, 1, 7);
  const float *xv = x->data, *kv = k->data;
  for (int b = 0; b < WN; b++)
    for (int y = 0; y < WH; y++)
      for (int xx = 0; xx < WW; xx++)
        for (int o = 0; o < WO; o++) {
          double acc = 0;
          for (int ky = 0; ky < 3; ky++)
            for (int kx = 0; kx < 3; kx++) {
              int iy = y - 1 + ky, ix = xx - 1 + kx;
              if (iy < 0 || iy >= WH || ix < 0 || ix >= WW) continue;
              for (int iz = 0; iz < WC; iz++)
                acc += (double)xv[((b * WH + iy) * WW + ix) * WC + iz] *
                       kv[((ky * 3 + kx) * WC + iz) * WO + o];
            }
          want[((b * WH + y) * WW + xx) * WO + o] = (float)acc;
        }
  expect_every_isa(&wide_case, want);
  tl_end();
}
END_TEST

/* The weight-gradient form XLA emits (f01b_i01o->01bf: the input's batch
 * dimension innermost, a window as large as the output gradient): GEMM rows
 * are ordered (s, b) and slivers within one output position copy runs of
 * consecutive input elements; others take the per-row path. Batch 40 puts
 * both kinds of sliver in every micro-kernel's row blocking. Against a loop
 * over the definition written here, on integer values (exact), f32 and s32. */
enum { GF = 4, GH = 7, GW = 6, GB = 40, GO = 8 };
static const ConvCase wgrad_case = {
  "wgrad", "f01b_i01o->01bf", 4, {GF, GH, GW, GB}, {GF, GH, GW, GO}, {3, 3, GB, GO}, 2,
  {{GH, 1, 1, 1, 1, 1, 0}, {GW, 1, 1, 1, 1, 1, 0}}, 1, 1, 3 * 3 * GB * GO, NULL };

START_TEST(t_weight_gradient_layout) {
  tl_begin();
  static float want[3 * 3 * GB * GO];
  HloInstr *ins = make_conv(&wgrad_case, HLO_F32, HLO_F32);
  HliValue *x = formula_value(&ins->ops[0]->shape, 7, 3, 11);
  HliValue *k = formula_value(&ins->ops[1]->shape, 3, 1, 7);
  const float *xv = x->data, *kv = k->data;
  /* out[ky][kx][b][o] = sum over f, y, x of in[f][ky+y-1][kx+x-1][b] * k[f][y][x][o] */
  for (int ky = 0; ky < 3; ky++)
    for (int kx = 0; kx < 3; kx++)
      for (int b = 0; b < GB; b++)
        for (int o = 0; o < GO; o++) {
          double acc = 0;
          for (int f = 0; f < GF; f++)
            for (int y = 0; y < GH; y++)
              for (int xx = 0; xx < GW; xx++) {
                int iy = ky + y - 1, ix = kx + xx - 1;
                if (iy < 0 || iy >= GH || ix < 0 || ix >= GW) continue;
                acc += (double)xv[((f * GH + iy) * GW + ix) * GB + b] *
                       kv[((f * GH + y) * GW + xx) * GO + o];
              }
          want[((ky * 3 + kx) * GB + b) * GO + o] = (float)acc;
        }
  expect_every_isa(&wgrad_case, want);
  tl_end();
}
END_TEST

/* ---- Integer convolutions ------------------------------------------------ */

/* The integer case: NHWC input [N][H][W][C] (b01f), kernel [3][3][C/G][O]
 * (01io), feature_group_count G = 2, window 3x3 with stride 2x1 and
 * padding 1_1 x 2_0: output [N][4][6][O]. */
enum { IN = 2, IH = 7, IW = 6, IC = 4, IG = 2, IO = 6, OH = 4, OW = 6 };
static const ConvCase int_case = {
  "int", "b01f_01io->b01f", 4, {IN, IH, IW, IC}, {3, 3, IC / IG, IO}, {IN, OH, OW, IO}, 2,
  {{3, 2, 1, 1, 1, 1, 0}, {3, 1, 2, 0, 1, 1, 0}}, IG, 1, IN * OH * OW * IO, NULL };

/* An independent direct loop over the definition, summing modulo 2^64. */
static void int_expect(const int64_t *x, const int64_t *k, uint64_t *want) {
  int cg_in = IC / IG, cg_out = IO / IG;
  for (int b = 0; b < IN; b++)
    for (int y = 0; y < OH; y++)
      for (int xx = 0; xx < OW; xx++)
        for (int o = 0; o < IO; o++) {
          uint64_t acc = 0;
          int g = o / cg_out;
          for (int ky = 0; ky < 3; ky++)
            for (int kx = 0; kx < 3; kx++) {
              int iy = y * 2 - 1 + ky, ix = xx - 2 + kx;
              if (iy < 0 || iy >= IH || ix < 0 || ix >= IW) continue;
              for (int iz = 0; iz < cg_in; iz++)
                acc += (uint64_t)x[((b * IH + iy) * IW + ix) * IC + g * cg_in + iz] *
                       (uint64_t)k[((ky * 3 + kx) * cg_in + iz) * IO + o];
            }
          want[((b * OH + y) * OW + xx) * IO + o] = acc;
        }
}

/* n values of dtype t: small ones, or full-range (bits random) if full. */
static void int_fill(HloDtype t, int64_t n, bool full, uint64_t *seed, void *buf, int64_t *v) {
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = tl_lcg(seed) ^ (tl_lcg(seed) << 40);
    switch (t) {
    case HLO_S8: v[i] = full ? (int8_t)(uint8_t)r : (int64_t)(r % 256) - 128; ((int8_t *)buf)[i] = (int8_t)v[i]; break;
    case HLO_U8: v[i] = (uint8_t)r; ((uint8_t *)buf)[i] = (uint8_t)v[i]; break;
    case HLO_S32: v[i] = (int32_t)(uint32_t)r; ((int32_t *)buf)[i] = (int32_t)v[i]; break;
    default: v[i] = (int64_t)r; ((int64_t *)buf)[i] = v[i]; break;
    }
  }
}

/* The int_case convolution of operands x, k (dtype lt) into dtype ot, by
 * the GEMM lowering or the reference loop: the sums in want, wrapped. */
static void int_conv(HloDtype lt, HloDtype ot, const void *x, const void *k, const uint64_t *want,
                     bool ref) {
  HloInstr *ins = make_conv(&int_case, lt, ot);
  ck_assert_msg(hlk_conv_check(NULL, ins) == 0, "%s", hli_last_error());
  HliValue *in[2] = { tl_kept(&ins->ops[0]->shape, x), tl_kept(&ins->ops[1]->shape, k) };
  HliValue *out = tl_kept(&ins->shape, NULL);
  memset(out->data, 0x5a, out->nbytes);
  ck_assert_int_eq(hlk_conv_run(NULL, ins, in, out, ref), 0);
  char what[64];
  snprintf(what, sizeof what, "%s -> %s%s", hlc_dtype_name(lt), hlc_dtype_name(ot),
           ref ? ", reference loop" : "");
  tl_expect_wrapped(out, want, what);
}

/* Operands of dtype lt into a result of dtype ot, under every instruction
 * set and the reference loop. */
static void int_run(HloDtype lt, HloDtype ot, bool full, uint64_t seed) {
  static int64_t xv[IN * IH * IW * IC], kv[9 * (IC / IG) * IO];
  static uint64_t xb[IN * IH * IW * IC], kb[9 * (IC / IG) * IO], want[IN * OH * OW * IO];
  int_fill(lt, IN * IH * IW * IC, full, &seed, xb, xv);
  int_fill(lt, 9 * (IC / IG) * IO, full, &seed, kb, kv);
  int_expect(xv, kv, want);
  for (TlGemmIsas g = {0}; tl_gemm_isa_next(&g);) int_conv(lt, ot, xb, kb, want, false);
  int_conv(lt, ot, xb, kb, want, true);
}

START_TEST(t_int_grouped_padded) {
  tl_begin();
  int_run(HLO_S8, HLO_S32, false, 1);    /* quantized: s8 x s8 -> s32 */
  int_run(HLO_S8, HLO_S8, false, 2);     /* wraps modulo 2^8 */
  int_run(HLO_U8, HLO_U8, false, 3);
  int_run(HLO_S32, HLO_S32, true, 4);    /* full-range: sums wrap past 2^31 */
  int_run(HLO_S64, HLO_S64, true, 5);    /* full-range 64-bit */
  tl_end();
}
END_TEST

/* The same s8 -> s32 convolution through a module on 1, 2 and 3 threads:
 * the bits of the independent loop every time. */
START_TEST(t_int_threads) {
  tl_begin();
  static int64_t xv[IN * IH * IW * IC], kv[9 * (IC / IG) * IO];
  static int8_t xb[IN * IH * IW * IC], kb[9 * (IC / IG) * IO];
  static uint64_t want[IN * OH * OW * IO];
  uint64_t seed = 9;
  int_fill(HLO_S8, IN * IH * IW * IC, false, &seed, xb, xv);
  int_fill(HLO_S8, 9 * (IC / IG) * IO, false, &seed, kb, kv);
  int_expect(xv, kv, want);
  const char *text =
      "HloModule m\n"
      "ENTRY e {\n"
      "  x = s8[2,7,6,4] parameter(0)\n"
      "  k = s8[3,3,2,6] parameter(1)\n"
      "  ROOT c = s32[2,4,6,6] convolution(x, k), window={size=3x3 stride=2x1 pad=1_1x2_0}, "
      "dim_labels=b01f_01io->b01f, feature_group_count=2\n"
      "}\n";
  const TlArray in[2] = {{HLO_TYPE_S8, 4, (int64_t[]){IN, IH, IW, IC}, xb},
                         {HLO_TYPE_S8, 4, (int64_t[]){3, 3, IC / IG, IO}, kb}};
  for (int threads = 1; threads <= 3; threads++) {
    TlRun r = tl_run_arrays(threads, text, 2, in);
    const int32_t *got = hlo_buffer_data(r.result);
    for (int i = 0; i < IN * OH * OW * IO; i++)
      ck_assert_msg(got[i] == (int32_t)(uint32_t)want[i], "%d threads, element %d: %d, want %d",
                    threads, i, got[i], (int32_t)(uint32_t)want[i]);
    tl_run_done(&r);
  }
  tl_end();
}
END_TEST

/* The module text on operands b (x, k) gives want's bytes on 1 to 3 threads. */
static void expect_threads(const char *text, const TlArray *b, const HliValue *want,
                           const char *what) {
  for (int threads = 1; threads <= 3; threads++) {
    TlRun r = tl_run_arrays(threads, text, 2, b);
    ck_assert_msg(memcmp(hlo_buffer_data(r.result), want->data, want->nbytes) == 0,
                  "%s, %d threads: differs from the reference loop", what, threads);
    tl_run_done(&r);
  }
}

/* A depthwise f32 convolution (one input feature per group, features
 * innermost: the direct depthwise loop) through a module on 1 to 3 threads
 * gives the reference loop's values; an infinity in the kernel reaches only
 * the outputs whose windows use it (padding is skipped, not multiplied). */
START_TEST(t_depthwise_threads) {
  tl_begin();
  ConvCase c = {"dw", "b01f_01io->b01f", 4, {2, 9, 7, 40}, {3, 3, 1, 40}, {2, 5, 7, 40}, 2,
                {{3, 2, 1, 1, 1, 1, 0}, {3, 1, 1, 1, 1, 1, 0}}, 40, 1, 2 * 5 * 7 * 40, NULL};
  HloInstr *ins = make_conv(&c, HLO_F32, HLO_F32);
  HliValue *in[2] = {formula_value(&ins->ops[0]->shape, 7, 3, 11),
                     formula_value(&ins->ops[1]->shape, 3, 1, 7)};
  ((float *)in[1]->data)[0] = INFINITY;   /* window (0,0) of feature 0 */
  HliValue *want = tl_kept(&ins->shape, NULL);
  ck_assert_int_eq(hlk_conv_run(NULL, ins, in, want, true), 0);
  const float *w = want->data;
  /* output (0,1,1), feature 0: its (0,0) tap reads input (1,0), which is 0 (0 * inf = NaN) */
  ck_assert(isnan(w[(1 * 7 + 1) * 40]));
  ck_assert(isfinite(w[0]));   /* output (0,0,0): its (0,0) tap is padding, skipped */
  const char *text =
      "HloModule m\n"
      "ENTRY e {\n"
      "  x = f32[2,9,7,40] parameter(0)\n"
      "  k = f32[3,3,1,40] parameter(1)\n"
      "  ROOT c = f32[2,5,7,40] convolution(x, k), window={size=3x3 stride=2x1 pad=1_1x1_1}, "
      "dim_labels=b01f_01io->b01f, feature_group_count=40\n"
      "}\n";
  const TlArray b[2] = {{HLO_TYPE_F32, 4, (int64_t[]){2, 9, 7, 40}, in[0]->data},
                        {HLO_TYPE_F32, 4, (int64_t[]){3, 3, 1, 40}, in[1]->data}};
  expect_threads(text, b, want, "depthwise");
  tl_end();
}
END_TEST

/* Small feature groups take the direct loop: 32 groups of 4 (vector
 * shuffles, four blocks at once), 8 groups of 2 -> 8 (shuffles, fewer
 * inputs than outputs per group), 8 groups of 8 -> 4 and 6 groups of 4 with
 * 24 outputs (the gather loop). On 1 to 3 threads every element has the
 * bits of the reference loop (the same sums in the same order: values with
 * many fraction bits make any other order show), and an infinity in the
 * kernel reaches only windows that use it. */
START_TEST(t_small_groups_threads) {
  tl_begin();
  static const int64_t cfg[4][3] = {{32, 4, 4}, {8, 2, 8}, {8, 8, 4}, {6, 4, 4}};   /* groups, cin_g, cout_g */
  for (int c = 0; c < 4; c++) {
    int64_t groups = cfg[c][0], cin = groups * cfg[c][1], cout = groups * cfg[c][2];
    ConvCase cc = {"groups", "b01f_01io->b01f", 4, {2, 9, 7, cin}, {3, 3, cfg[c][1], cout},
                   {2, 5, 7, cout}, 2, {{3, 2, 1, 1, 1, 1, 0}, {3, 1, 1, 1, 1, 1, 0}}, groups, 1,
                   2 * 5 * 7 * cout, NULL};
    HloInstr *ins = make_conv(&cc, HLO_F32, HLO_F32);
    HliValue *in[2] = {formula_value(&ins->ops[0]->shape, 7, 3, 11),
                       formula_value(&ins->ops[1]->shape, 3, 1, 7)};
    for (int k = 0; k < 2; k++) {
      float *v = in[k]->data;
      for (int64_t i = 0; i < in[k]->nelem; i++) v[i] *= k ? 0.3711f : 1.0137f;
    }
    ((float *)in[1]->data)[5] = INFINITY;   /* window (0,0), input 0 of output feature 5 */
    HliValue *want = tl_kept(&ins->shape, NULL);
    ck_assert_int_eq(hlk_conv_run(NULL, ins, in, want, true), 0);
    char text[512];
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n  x = f32[2,9,7,%lld] parameter(0)\n"
             "  k = f32[3,3,%lld,%lld] parameter(1)\n"
             "  ROOT c = f32[2,5,7,%lld] convolution(x, k), window={size=3x3 stride=2x1 pad=1_1x1_1}, "
             "dim_labels=b01f_01io->b01f, feature_group_count=%lld\n}\n",
             (long long)cin, (long long)cfg[c][1], (long long)cout, (long long)cout,
             (long long)groups);
    const TlArray b[2] = {{HLO_TYPE_F32, 4, (int64_t[]){2, 9, 7, cin}, in[0]->data},
                          {HLO_TYPE_F32, 4, (int64_t[]){3, 3, cfg[c][1], cout}, in[1]->data}};
    char what[64];
    snprintf(what, sizeof what, "groups %lld of %lld -> %lld", (long long)groups,
             (long long)cfg[c][1], (long long)cfg[c][2]);
    expect_threads(text, b, want, what);
  }
  tl_end();
}
END_TEST

/* 1x1 convolutions whose input is its own patch matrix (read in place by
 * the GEMM, per feature group), and a strided one that is not: on 1 to 3
 * threads, the reference loop's values (integer-valued operands, so every
 * sum is exact in any order). */
START_TEST(t_pointwise_threads) {
  tl_begin();
  static const struct { int64_t groups, stride, oh, ow; } cfg[3] = {
      {1, 1, 5, 7}, {2, 1, 5, 7}, {1, 2, 3, 4}};
  for (int c = 0; c < 3; c++) {
    int64_t g = cfg[c].groups, st = cfg[c].stride;
    ConvCase cc = {"pointwise", "b01f_01io->b01f", 4, {3, 5, 7, 48}, {1, 1, 48 / g, 40},
                   {3, cfg[c].oh, cfg[c].ow, 40}, 2, {{1, st, 0, 0, 1, 1, 0}, {1, st, 0, 0, 1, 1, 0}},
                   g, 1, 3 * cfg[c].oh * cfg[c].ow * 40, NULL};
    HloInstr *ins = make_conv(&cc, HLO_F32, HLO_F32);
    HliValue *in[2] = {formula_value(&ins->ops[0]->shape, 7, 3, 11),
                       formula_value(&ins->ops[1]->shape, 5, 2, 9)};
    HliValue *want = tl_kept(&ins->shape, NULL);
    ck_assert_int_eq(hlk_conv_run(NULL, ins, in, want, true), 0);
    char text[512];
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n  x = f32[3,5,7,48] parameter(0)\n  k = f32[1,1,%lld,40] parameter(1)\n"
             "  ROOT c = f32[3,%lld,%lld,40] convolution(x, k), window={size=1x1 stride=%lldx%lld}, "
             "dim_labels=b01f_01io->b01f, feature_group_count=%lld\n}\n",
             (long long)(48 / g), (long long)cfg[c].oh, (long long)cfg[c].ow, (long long)st,
             (long long)st, (long long)g);
    const TlArray b[2] = {{HLO_TYPE_F32, 4, (int64_t[]){3, 5, 7, 48}, in[0]->data},
                          {HLO_TYPE_F32, 4, (int64_t[]){1, 1, 48 / g, 40}, in[1]->data}};
    char what[32];
    snprintf(what, sizeof what, "pointwise case %d", c);
    expect_threads(text, b, want, what);
  }
  tl_end();
}
END_TEST

/* ins on operands in, under every micro-kernel, gives the reference loop's
 * bytes. */
static void expect_ref_every_isa(HloInstr *ins, HliValue *const *in, const char *what) {
  HliValue *want = tl_kept(&ins->shape, NULL), *got = tl_kept(&ins->shape, NULL);
  ck_assert_int_eq(hlk_conv_run(NULL, ins, in, want, true), 0);
  for (TlGemmIsas g = {0}; tl_gemm_isa_next(&g);) {
    memset(got->data, 0xA5, got->nbytes);
    ck_assert_int_eq(hlk_conv_run(NULL, ins, in, got, false), 0);
    ck_assert_msg(memcmp(got->data, want->data, want->nbytes) == 0,
                  "%s, %s: differs from the reference loop", what, g.isa);
  }
}

/* NCHW (features outside the spatial dims): slivers of rows along the width
 * copy runs of input elements per window position and input feature, or
 * gather them (stride 2, padding at the line's ends). Width 40 holds
 * several slivers of every micro-kernel; dilation, stride and padding
 * variants, plain and with two feature groups, under every ISA, equal the
 * reference loop (integer values: exact). */
START_TEST(t_nchw_lines) {
  tl_begin();
  static const int64_t win[3][2][7] = {
      {{3, 1, 1, 1, 1, 1, 0}, {3, 1, 1, 1, 1, 1, 0}},   /* runs, padded line ends */
      {{3, 2, 1, 1, 1, 1, 0}, {3, 2, 1, 1, 1, 1, 0}},   /* stride 2: gathers */
      {{2, 1, 0, 0, 1, 2, 0}, {3, 1, 2, 2, 1, 2, 1}}};  /* dilated, reversed, wide pads */
  static const int64_t ow[3] = {40, 20, 40}, oh[3] = {5, 3, 3};
  for (int c = 0; c < 3; c++)
    for (int64_t fgc = 1; fgc <= 2; fgc++) {
      ConvCase cc = {"nchw", "bf01_oi01->bf01", 4, {2, 4, 5, 40}, {6, 4 / fgc, win[c][0][0], win[c][1][0]},
                     {2, 6, oh[c], ow[c]}, 2, {{0}}, fgc, 1, 2 * 6 * oh[c] * ow[c], NULL};
      memcpy(cc.win, win[c], sizeof win[c]);
      HloInstr *ins = make_conv(&cc, HLO_F32, HLO_F32);
      ck_assert_msg(hlk_conv_check(NULL, ins) == 0, "%s", hli_last_error());
      HliValue *in[2] = {formula_value(&ins->ops[0]->shape, 7, 3, 11),
                         formula_value(&ins->ops[1]->shape, 3, 1, 7)};
      char what[48];
      snprintf(what, sizeof what, "window %d, %lld groups", c, (long long)fgc);
      expect_ref_every_isa(ins, in, what);
    }
  tl_end();
}
END_TEST

/* Input-dilated (transposed) convolutions run phase by phase: each residue
 * class of the outputs multiplies only the taps that meet real inputs. 2-D
 * NHWC and NCHW, dilation 2 and 3, windows 3 and 4 with and without
 * reversal, padding on either side, a 1-wide window (a phase with no taps:
 * zeros), two feature groups, outputs fewer than the dilation: under every
 * micro-kernel, the reference loop's values (integer values, exact). */
START_TEST(t_transposed_phases) {
  tl_begin();
  static const struct {
    const char *labels;
    int64_t ls[4], rs[4], fgc;
    int64_t win[2][7];
  } cfg[5] = {
      {"b01f_01io->b01f", {2, 5, 6, 4}, {3, 3, 4, 6}, 1, {{3, 1, 1, 1, 2, 1, 0}, {3, 1, 2, 1, 2, 1, 1}}},
      {"b01f_01io->b01f", {1, 4, 5, 4}, {4, 3, 2, 6}, 2, {{4, 1, 2, 3, 2, 1, 1}, {3, 1, 0, 2, 3, 1, 0}}},
      {"bf01_oi01->bf01", {2, 4, 5, 6}, {5, 4, 3, 3}, 1, {{3, 1, 2, 2, 2, 1, 0}, {3, 1, 1, 2, 2, 1, 0}}},
      {"b01f_01io->b01f", {1, 3, 3, 2}, {1, 2, 2, 3}, 1, {{1, 1, 0, 0, 2, 1, 0}, {2, 1, 1, 0, 2, 1, 0}}},
      {"b01f_01io->b01f", {1, 1, 2, 2}, {1, 2, 2, 3}, 1, {{1, 1, 0, 0, 3, 1, 0}, {2, 1, 0, 0, 3, 1, 1}}}};
  for (int c = 0; c < 5; c++) {
    bool nchw = cfg[c].labels[1] == 'f';
    int64_t os[4];
    int fi = nchw ? 1 : 3, sp0 = nchw ? 2 : 1;
    int ko = nchw ? 0 : 3;
    os[0] = cfg[c].ls[0];
    os[fi] = cfg[c].rs[ko];
    for (int i = 0; i < 2; i++) {
      const int64_t *w = cfg[c].win[i];
      int64_t in = cfg[c].ls[sp0 + i], dil = (in - 1) * w[4] + 1 + w[2] + w[3];
      os[sp0 + i] = dil - w[0] + 1;
    }
    ConvCase cc = {"transposed", cfg[c].labels, 4, {0}, {0}, {0}, 2, {{0}}, cfg[c].fgc, 1,
                   os[0] * os[1] * os[2] * os[3], NULL};
    memcpy(cc.ls, cfg[c].ls, sizeof cfg[c].ls);
    memcpy(cc.rs, cfg[c].rs, sizeof cfg[c].rs);
    memcpy(cc.os, os, sizeof os);
    memcpy(cc.win, cfg[c].win, sizeof cfg[c].win);
    HloInstr *ins = make_conv(&cc, HLO_F32, HLO_F32);
    ck_assert_msg(hlk_conv_check(NULL, ins) == 0, "case %d: %s", c, hli_last_error());
    HliValue *in[2] = {formula_value(&ins->ops[0]->shape, 7, 3, 11),
                       formula_value(&ins->ops[1]->shape, 3, 1, 7)};
    char what[32];
    snprintf(what, sizeof what, "transposed case %d", c);
    expect_ref_every_isa(ins, in, what);
  }
  tl_end();
}
END_TEST

/* Convolutions whose patch matrix passes the size limit sum their window in
 * parts of a few taps of its first dim, adding into the result: with the
 * limit lowered to 512 bytes, NHWC and NCHW convolutions, the weight-
 * gradient layout (a window as large as the image), a transposed one (parts
 * within phases) and a grouped one equal the reference loop under every
 * micro-kernel (integer values: exact). */
START_TEST(t_window_in_parts) {
  tl_begin();
  hlk_conv_patch_max(512);
  ConvCase cases_in_parts[5] = {
      {"nhwc", "b01f_01io->b01f", 4, {2, 7, 6, 5}, {3, 3, 5, 6}, {2, 7, 6, 6}, 2,
       {{3, 1, 1, 1, 1, 1, 0}, {3, 1, 1, 1, 1, 1, 1}}, 1, 1, 2 * 7 * 6 * 6, NULL},
      {"nchw", "bf01_oi01->bf01", 4, {2, 5, 7, 6}, {4, 5, 4, 3}, {2, 4, 4, 6}, 2,
       {{4, 1, 0, 0, 1, 1, 0}, {3, 1, 1, 1, 1, 1, 0}}, 1, 1, 2 * 4 * 4 * 6, NULL},
      {"wgrad", "f01b_i01o->01bf", 4, {3, 9, 8, 12}, {3, 9, 8, 5}, {3, 3, 12, 5}, 2,
       {{9, 1, 1, 1, 1, 1, 0}, {8, 1, 1, 1, 1, 1, 0}}, 1, 1, 3 * 3 * 12 * 5, NULL},
      {"transposed", "b01f_01io->b01f", 4, {1, 4, 5, 4}, {4, 3, 4, 6}, {1, 9, 10, 6}, 2,
       {{4, 1, 2, 3, 2, 1, 1}, {3, 1, 1, 2, 2, 1, 0}}, 1, 1, 1 * 9 * 10 * 6, NULL},
      {"grouped", "b01f_01io->b01f", 4, {2, 6, 6, 40}, {3, 3, 20, 6}, {2, 6, 6, 6}, 2,
       {{3, 1, 1, 1, 1, 1, 0}, {3, 1, 1, 1, 1, 1, 0}}, 2, 1, 2 * 6 * 6 * 6, NULL}};
  for (int c = 0; c < 5; c++) {
    HloInstr *ins = make_conv(&cases_in_parts[c], HLO_F32, HLO_F32);
    ck_assert_msg(hlk_conv_check(NULL, ins) == 0, "%s: %s", cases_in_parts[c].name,
                  hli_last_error());
    HliValue *in[2] = {formula_value(&ins->ops[0]->shape, 7, 3, 11),
                       formula_value(&ins->ops[1]->shape, 3, 1, 7)};
    expect_ref_every_isa(ins, in, cases_in_parts[c].name);
  }
  hlk_conv_patch_max(0);
  tl_end();
}
END_TEST

/* f32 convolutions with contiguous input features and a (b, s..., f)
 * result read the input rows in place per window tap (conv_rows.c). Cases
 * with 16+ features on both sides: 3x3 SAME with an output width that is
 * no multiple of any micro-kernel's rows and output features that are no
 * multiple of its columns; stride 2 with asymmetric padding; dilated and
 * reversed taps whose in-range outputs are fewer than a tile (the copied
 * rows); negative padding; 1-D and 3-D; an input whose spatial dims are
 * stored in the other order. Under every micro-kernel they equal the
 * reference loop (integer values: exact), and the module on 1 to 3
 * threads gives the same bits. */
START_TEST(t_rows_in_place) {
  tl_begin();
  ConvCase rows_cases[7] = {
      {"same", "b01f_01io->b01f", 4, {2, 4, 29, 16}, {3, 3, 16, 40}, {2, 4, 29, 40}, 2,
       {{3, 1, 1, 1, 1, 1, 0}, {3, 1, 1, 1, 1, 1, 0}}, 1, 1, 2 * 4 * 29 * 40, NULL},
      {"stride2", "b01f_01io->b01f", 4, {1, 6, 26, 17}, {3, 3, 17, 16}, {1, 3, 13, 16}, 2,
       {{3, 2, 0, 1, 1, 1, 0}, {3, 2, 0, 1, 1, 1, 0}}, 1, 1, 3 * 13 * 16, NULL},
      {"dilated_short", "b01f_01io->b01f", 4, {1, 3, 14, 16}, {2, 3, 16, 33}, {1, 4, 12, 33}, 2,
       {{2, 1, 1, 1, 1, 1, 1}, {3, 1, 1, 5, 1, 4, 1}}, 1, 1, 4 * 12 * 33, NULL},
      {"negative_pad", "b01f_01io->b01f", 4, {1, 5, 30, 16}, {3, 3, 16, 16}, {1, 3, 26, 16}, 2,
       {{3, 1, 0, 0, 1, 1, 0}, {3, 1, -2, 0, 1, 1, 0}}, 1, 1, 3 * 26 * 16, NULL},
      {"1d", "b0f_0io->b0f", 3, {3, 40, 20}, {5, 20, 18}, {3, 38, 18}, 1,
       {{5, 1, 2, 0, 1, 1, 0}}, 1, 1, 3 * 38 * 18, NULL},
      {"3d", "b012f_012io->b012f", 5, {1, 3, 4, 13, 16}, {2, 3, 3, 16, 16}, {1, 2, 4, 13, 16}, 3,
       {{2, 1, 0, 0, 1, 1, 0}, {3, 1, 1, 1, 1, 1, 0}, {3, 1, 1, 1, 1, 1, 0}}, 1, 1,
       2 * 4 * 13 * 16, NULL},
      {"input_10", "b10f_01io->b01f", 4, {2, 25, 3, 16}, {3, 3, 16, 20}, {2, 3, 25, 20}, 2,
       {{3, 1, 1, 1, 1, 1, 0}, {3, 1, 1, 1, 1, 1, 0}}, 1, 1, 2 * 3 * 25 * 20, NULL}};
  for (int c = 0; c < 7; c++) {
    HloInstr *ins = make_conv(&rows_cases[c], HLO_F32, HLO_F32);
    ck_assert_msg(hlk_conv_check(NULL, ins) == 0, "%s: %s", rows_cases[c].name, hli_last_error());
    HliValue *in[2] = {formula_value(&ins->ops[0]->shape, 7, 3, 11),
                       formula_value(&ins->ops[1]->shape, 3, 1, 7)};
    expect_ref_every_isa(ins, in, rows_cases[c].name);
  }
  /* The first case as a module on 1 to 3 threads. */
  HloInstr *ins = make_conv(&rows_cases[0], HLO_F32, HLO_F32);
  HliValue *in[2] = {formula_value(&ins->ops[0]->shape, 7, 3, 11),
                     formula_value(&ins->ops[1]->shape, 3, 1, 7)};
  HliValue *want = tl_kept(&ins->shape, NULL);
  ck_assert_int_eq(hlk_conv_run(NULL, ins, in, want, true), 0);
  const char *text =
      "HloModule m\n"
      "ENTRY e {\n"
      "  x = f32[2,4,29,16] parameter(0)\n"
      "  k = f32[3,3,16,40] parameter(1)\n"
      "  ROOT c = f32[2,4,29,40] convolution(x, k), window={size=3x3 pad=1_1x1_1}, "
      "dim_labels=b01f_01io->b01f\n"
      "}\n";
  const TlArray b[2] = {{HLO_TYPE_F32, 4, (int64_t[]){2, 4, 29, 16}, in[0]->data},
                        {HLO_TYPE_F32, 4, (int64_t[]){3, 3, 16, 40}, in[1]->data}};
  expect_threads(text, b, want, "rows in place");
  tl_end();
}
END_TEST

/* ---- The no-patch paths against their documented order ------------------
 * conv.h documents how conv_rows.c (per tap: the micro-kernel's chain over
 * the group's input features from +0, fused where the micro-kernel fuses,
 * then added to the output's sum) and conv_dw.c (the evaluator's acc = acc
 * + x * k per tap, two roundings) sum. The loop below computes exactly
 * that from the definition of a convolution, on values with many fraction
 * bits (any other order or rounding shows); bf16/f16 results are rounded
 * once from it. */
typedef enum { ORD_DW, ORD_ROWS } Order;

/* Does the micro-kernel in use fuse its multiply-adds? Two steps whose
 * fused and unfused sums differ: -1 + (1 + 2^-12)^2 is 2^-11 + 2^-24 fused,
 * 2^-11 when the square is rounded first. */
static bool ukr_fuses(void) {
  const HlkUkrTable *u = hlk_gemm_ukr();
  static _Alignas(64) float b[2 * 64], c[32 * 64];
  float a[32 * 2];
  ck_assert(u->mr_f32 <= 32 && u->nr_f32 <= 64);
  for (int i = 0; i < u->mr_f32; i++) a[2 * i] = 1, a[2 * i + 1] = 1 + 0x1p-12f;
  for (int j = 0; j < u->nr_f32; j++) b[j] = -1, b[u->nr_f32 + j] = 1 + 0x1p-12f;
  u->f32_rows(2, a, 2, b, c, u->nr_f32, 0);
  ck_assert(c[0] == 0x1p-11f || c[0] == 0x1p-11f + 0x1p-24f);
  return c[0] != 0x1p-11f;
}

static int64_t out_extent_of(int64_t in, const int64_t *w) {
  int64_t base = w[2] + (in ? (in - 1) * w[4] + 1 : 0) + w[3], win = (w[0] - 1) * w[5] + 1;
  return win > base ? 0 : (base - win) / w[1] + 1;
}

/* c's output shape and size from its operands and window. */
static void fill_out_shape(ConvCase *c) {
  HloConvDims cd;
  parse_labels(c->labels, &cd);
  c->os[cd.out_batch] = c->ls[cd.in_batch] / c->bgc;
  c->os[cd.out_feature] = c->rs[cd.k_out_feature];
  for (int i = 0; i < c->nwin; i++)
    c->os[cd.out_spatial.v[i]] = out_extent_of(c->ls[cd.in_spatial.v[i]], c->win[i]);
  c->nout = 1;
  for (int i = 0; i < c->rank; i++) c->nout *= c->os[i];
}

static float fma_or_not(float x, float k, float t, bool fused) {
  if (fused) return fmaf(x, k, t);
  volatile float p = x * k;   /* rounded on its own */
  return t + p;
}

/* The documented order for ins on f32 operands x, k (row-major), into o. */
__attribute__((optimize("fp-contract=off")))
static void ref_order(const HloInstr *ins, const float *x, const float *k, float *o, Order ord,
                      bool fused) {
  const HloShape *ls = &ins->ops[0]->shape, *rs = &ins->ops[1]->shape, *os = &ins->shape;
  const HloConvDims *cd = &ins->conv;
  int n = cd->in_spatial.n, r = os->rank;
  int64_t lstr[8], kstr[8], idx[8], w[8], total = 1, wtotal = 1;
  hli_strides(ls->dims, r, lstr);
  hli_strides(rs->dims, r, kstr);
  for (int i = 0; i < r; i++) total *= os->dims[i];
  for (int i = 0; i < n; i++) wtotal *= ins->window.dims[i].size;
  int64_t cin_g = rs->dims[cd->k_in_feature], cg = os->dims[cd->out_feature] / ins->feature_group_count;
  for (int64_t e = 0; e < total; e++) {
    int64_t rem = e;
    for (int i = r - 1; i >= 0; i--) idx[i] = rem % os->dims[i], rem /= os->dims[i];
    int64_t f = idx[cd->out_feature], grp = f / cg;
    int64_t lb = idx[cd->out_batch] * lstr[cd->in_batch], kb = f * kstr[cd->k_out_feature];
    float acc = 0;
    for (int64_t q = 0; q < wtotal; q++) {
      int64_t qr = q, loff = lb, koff = kb;
      bool in = true;
      for (int i = n - 1; i >= 0; i--) w[i] = qr % ins->window.dims[i].size, qr /= ins->window.dims[i].size;
      for (int i = 0; i < n && in; i++) {
        const HloWindowDim *wd = &ins->window.dims[i];
        int64_t pos = idx[cd->out_spatial.v[i]] * wd->stride - wd->pad_lo + w[i] * wd->rhs_dilate;
        in = pos >= 0 && pos % wd->lhs_dilate == 0 &&
             pos / wd->lhs_dilate < ls->dims[cd->in_spatial.v[i]];
        loff += pos / wd->lhs_dilate * lstr[cd->in_spatial.v[i]];
        koff += (wd->reversal ? wd->size - 1 - w[i] : w[i]) * kstr[cd->k_spatial.v[i]];
      }
      if (!in) continue;
      if (ord == ORD_DW) {
        int64_t fin = f / (os->dims[cd->out_feature] / ls->dims[cd->in_feature]);
        acc = acc + x[loff + fin * lstr[cd->in_feature]] * k[koff];
        continue;
      }
      float t = 0;
      for (int64_t iz = 0; iz < cin_g; iz++)
        t = fma_or_not(x[loff + (grp * cin_g + iz) * lstr[cd->in_feature]],
                       k[koff + iz * kstr[cd->k_in_feature]], t, fused);
      acc = acc + t;
    }
    o[e] = acc;
  }
}

static HloElementType etype(HloDtype t) {
  return t == HLO_BF16 ? HLO_TYPE_BF16 : t == HLO_F16 ? HLO_TYPE_F16 : HLO_TYPE_F32;
}

/* The module text of convolution c. */
static void case_text(const ConvCase *c, HloDtype lt, HloDtype ot, char *buf, size_t size) {
  const int64_t *sh[3] = {c->ls, c->rs, c->os};
  char shp[3][64], win[256] = "";
  for (int k = 0; k < 3; k++) {
    int at = snprintf(shp[k], sizeof shp[k], "%s[", hlc_dtype_name(k < 2 ? lt : ot));
    for (int i = 0; i < c->rank; i++)
      at += snprintf(shp[k] + at, sizeof shp[k] - (size_t)at, "%s%lld", i ? "," : "", (long long)sh[k][i]);
    snprintf(shp[k] + at, sizeof shp[k] - (size_t)at, "]");
  }
  static const char *const key[7] = {"size", "stride", "pad", "", "lhs_dilate", "rhs_dilate", "rhs_reversal"};
  for (int f = 0; f < 7; f++) {
    if (f == 3) continue;
    size_t at = strlen(win);
    at += (size_t)snprintf(win + at, sizeof win - at, "%s%s=", at ? " " : "", key[f]);
    for (int i = 0; i < c->nwin; i++) {
      if (f == 2)
        at += (size_t)snprintf(win + at, sizeof win - at, "%s%lld_%lld", i ? "x" : "",
                               (long long)c->win[i][2], (long long)c->win[i][3]);
      else
        at += (size_t)snprintf(win + at, sizeof win - at, "%s%lld", i ? "x" : "", (long long)c->win[i][f]);
    }
  }
  snprintf(buf, size,
           "HloModule m\nENTRY e {\n  x = %s parameter(0)\n  k = %s parameter(1)\n"
           "  ROOT c = %s convolution(x, k), window={%s}, dim_labels=%s, feature_group_count=%lld\n}\n",
           shp[0], shp[1], shp[2], win, c->labels, (long long)c->fgc);
}

/* Operand values in [-1, 1) with many fraction bits, as dtype t (rounded
 * once from f32), and the f32 values the convolution computes with. */
static HliValue *order_value(const HloShape *s, HloDtype ot, uint64_t *seed, float **f32) {
  HliValue *v = tl_kept(s, NULL);
  float *tmp = malloc((size_t)(v->nelem + 1) * sizeof(float));
  for (int64_t i = 0; i < v->nelem; i++)
    tmp[i] = (float)((double)tl_lcg(seed) / 0x1p53 * 2 - 1);
  hlk_store_ctype(s->dtype, tmp, v->nelem, v->data);
  *f32 = malloc((size_t)(v->nelem + 1) * sizeof(float));
  hlk_load_ctype(s->dtype, ot, v->data, v->nelem, *f32);
  free(tmp);
  return v;
}

/* c through hlk_conv_run under every micro-kernel, and as a module on 1 to
 * 3 threads, equals ref_order's bytes. */
static void expect_order(ConvCase c, HloDtype lt, HloDtype ot, Order ord) {
  fill_out_shape(&c);
  HloInstr *ins = make_conv(&c, lt, ot);
  ck_assert_msg(hlk_conv_check(NULL, ins) == 0, "%s: %s", c.name, hli_last_error());
  uint64_t seed = 12345;
  float *xf, *kf;
  HliValue *in[2] = {order_value(&ins->ops[0]->shape, ot, &seed, &xf),
                     order_value(&ins->ops[1]->shape, ot, &seed, &kf)};
  HliValue *want = tl_kept(&ins->shape, NULL), *got = tl_kept(&ins->shape, NULL);
  float *w32 = malloc((size_t)(c.nout + 1) * sizeof(float));
  for (TlGemmIsas g = {0}; tl_gemm_isa_next(&g);) {
    ref_order(ins, xf, kf, w32, ord, ukr_fuses());
    hlk_store_ctype(ot, w32, c.nout, want->data);
    memset(got->data, 0xA5, got->nbytes);
    ck_assert_int_eq(hlk_conv_run(NULL, ins, in, got, false), 0);
    for (int64_t e = 0; e < c.nout; e++)
      ck_assert_msg(memcmp((char *)got->data + e * (int64_t)got->nbytes / c.nout,
                           (char *)want->data + e * (int64_t)want->nbytes / c.nout,
                           (size_t)got->nbytes / (size_t)c.nout) == 0,
                    "%s (%s -> %s), %s: element %lld differs from the documented order", c.name,
                    hlc_dtype_name(lt), hlc_dtype_name(ot), g.isa, (long long)e);
  }
  ref_order(ins, xf, kf, w32, ord, ukr_fuses());
  hlk_store_ctype(ot, w32, c.nout, want->data);
  char text[1024];
  case_text(&c, lt, ot, text, sizeof text);
  const TlArray b[2] = {{etype(lt), c.rank, c.ls, in[0]->data}, {etype(lt), c.rank, c.rs, in[1]->data}};
  expect_threads(text, b, want, c.name);
  free(w32);
  free(xf);
  free(kf);
}

/* conv_rows.c beyond NHWC: input dilation (phases), feature groups (with
 * stride, window dilation, negative padding, reversal), NCHW (the input and
 * result transposed), a result in another layout only, 3-D, bf16 and f16
 * operands. */
START_TEST(t_rows_order) {
  tl_begin();
  ConvCase g1 = {"grouped", "b01f_01io->b01f", 4, {2, 7, 30, 32}, {3, 3, 16, 40}, {0}, 2,
                 {{3, 2, 1, 0, 1, 1, 0}, {3, 1, 1, 1, 1, 1, 0}}, 2, 1, 0, NULL};
  ConvCase g2 = {"grouped_dilated", "b01f_01io->b01f", 4, {1, 6, 33, 51}, {2, 3, 17, 48}, {0}, 2,
                 {{2, 1, 0, 1, 1, 2, 1}, {3, 2, -1, 2, 1, 2, 0}}, 3, 1, 0, NULL};
  ConvCase n1 = {"nchw", "bf01_oi01->bf01", 4, {2, 24, 5, 31}, {20, 24, 3, 3}, {0}, 2,
                 {{3, 1, 1, 1, 1, 1, 0}, {3, 2, 2, 1, 1, 1, 0}}, 1, 1, 0, NULL};
  ConvCase n2 = {"nchw_grouped", "bf01_oi01->bf01", 4, {1, 32, 4, 26}, {32, 16, 3, 3}, {0}, 2,
                 {{3, 1, 1, 1, 1, 1, 0}, {3, 1, 1, 1, 1, 1, 1}}, 2, 1, 0, NULL};
  ConvCase o1 = {"result_bf01", "b01f_01io->bf01", 4, {2, 4, 27, 16}, {3, 3, 16, 18}, {0}, 2,
                 {{3, 1, 1, 1, 1, 1, 0}, {3, 1, 1, 1, 1, 1, 0}}, 1, 1, 0, NULL};
  ConvCase d3 = {"3d", "b012f_012io->b012f", 5, {1, 3, 4, 14, 16}, {2, 3, 3, 16, 16}, {0}, 3,
                 {{2, 1, 0, 0, 1, 1, 0}, {3, 1, 1, 1, 1, 1, 0}, {3, 1, 1, 1, 1, 1, 0}}, 1, 1, 0, NULL};
  /* Input-dilated (transposed): phase by phase, holes skipped; a phase
   * with no taps along the 1-wide dim gives zeros. */
  ConvCase t1 = {"transposed", "b01f_01io->b01f", 4, {2, 4, 14, 32}, {3, 4, 16, 40}, {0}, 2,
                 {{3, 1, 1, 1, 2, 1, 0}, {4, 1, 2, 2, 2, 1, 1}}, 2, 1, 0, NULL};
  ConvCase t2 = {"transposed_nchw_d3", "bf01_oi01->bf01", 4, {1, 16, 3, 13}, {18, 16, 1, 3}, {0}, 2,
                 {{1, 1, 0, 0, 2, 1, 0}, {3, 1, 2, 1, 3, 1, 0}}, 1, 1, 0, NULL};
  /* The shape of bench/e_conv_block's convolutions, one image row band:
   * 56 outputs per line are whole tiles and a short last one (AVX-512: 4 x
   * 12 + 8; the padded taps 4 x 12 + 7), run by the short-tile kernels. */
  ConvCase w56 = {"width56", "b01f_01io->b01f", 4, {1, 3, 56, 64}, {3, 3, 64, 64}, {0}, 2,
                  {{3, 1, 1, 1, 1, 1, 0}, {3, 1, 1, 1, 1, 1, 0}}, 1, 1, 0, NULL};
  expect_order(w56, HLO_F32, HLO_F32, ORD_ROWS);
  expect_order(t1, HLO_F32, HLO_F32, ORD_ROWS);
  expect_order(t2, HLO_F32, HLO_F32, ORD_ROWS);
  expect_order(t1, HLO_BF16, HLO_BF16, ORD_ROWS);
  expect_order(g1, HLO_F32, HLO_F32, ORD_ROWS);
  expect_order(g2, HLO_F32, HLO_F32, ORD_ROWS);
  expect_order(n1, HLO_F32, HLO_F32, ORD_ROWS);
  expect_order(n2, HLO_F32, HLO_F32, ORD_ROWS);
  expect_order(o1, HLO_F32, HLO_F32, ORD_ROWS);
  expect_order(d3, HLO_F32, HLO_F32, ORD_ROWS);
  expect_order(g1, HLO_BF16, HLO_BF16, ORD_ROWS);
  expect_order(n1, HLO_F16, HLO_F32, ORD_ROWS);
  expect_order(g2, HLO_BF16, HLO_F32, ORD_ROWS);
  tl_end();
}
END_TEST

/* The short-tile kernels conv_rows.c uses for a line's last tile: under
 * every micro-kernel, f32_rows_edge[r] adds to (or stores in) the first r
 * rows of C exactly the chain the documented order gives (from +0 over the
 * shared dim, fused where the kernel fuses) and touches no other C row. */
START_TEST(t_rows_edge_kernels) {
  tl_begin();
  enum { KC = 37, LDA = 41, LDC = 70 };
  static _Alignas(64) float b[KC * 64];
  float a[32 * LDA], c[33 * LDC], c0[33 * LDC];
  uint64_t seed = 99;
  for (int i = 0; i < 32 * LDA; i++) a[i] = (float)((double)tl_lcg(&seed) / 0x1p53 * 2 - 1);
  for (int i = 0; i < KC * 64; i++) b[i] = (float)((double)tl_lcg(&seed) / 0x1p53 * 2 - 1);
  for (int i = 0; i < 33 * LDC; i++) c0[i] = (float)((double)tl_lcg(&seed) / 0x1p53 * 2 - 1);
  for (TlGemmIsas g = {0}; tl_gemm_isa_next(&g);) {
    const HlkUkrTable *u = hlk_gemm_ukr();
    bool fused = ukr_fuses();
    int nr = u->nr_f32;
    ck_assert(u->mr_f32 <= 32 && nr <= 64);
    for (int r = 1; r < u->mr_f32; r++)
      for (int accumulate = 0; accumulate <= 1; accumulate++) {
        ck_assert_msg(u->f32_rows_edge[r] != NULL, "%s: no %d-row kernel", g.isa, r);
        memcpy(c, c0, sizeof c);
        u->f32_rows_edge[r](KC, a, LDA, b, c, LDC, accumulate);
        for (int i = 0; i < 33; i++)
          for (int j = 0; j < LDC; j++) {
            float want = c0[i * LDC + j];
            if (i < r && j < nr) {
              float t = 0;
              for (int p = 0; p < KC; p++) t = fma_or_not(a[i * LDA + p], b[p * nr + j], t, fused);
              want = accumulate ? want + t : t;
            }
            ck_assert_msg(memcmp(&c[i * LDC + j], &want, sizeof want) == 0,
                          "%s: %d-row kernel (accumulate %d), C[%d][%d] is %a, want %a", g.isa, r,
                          accumulate, i, j, (double)c[i * LDC + j], (double)want);
          }
      }
  }
  tl_end();
}
END_TEST

/* conv_dw.c: 80 features (a block of 64 and one of 16), a channel
 * multiplier of 3 on 19 features (57 outputs: blocks and a scalar tail)
 * with dilation, negative padding and reversal, NCHW (transposed), input
 * dilation (holes skipped), 3-D, bf16 and f16. */
START_TEST(t_depthwise_order) {
  tl_begin();
  ConvCase d1 = {"dw", "b01f_01io->b01f", 4, {2, 9, 31, 80}, {3, 3, 1, 80}, {0}, 2,
                 {{3, 2, 1, 1, 1, 1, 0}, {3, 1, 1, 1, 1, 1, 0}}, 80, 1, 0, NULL};
  ConvCase d2 = {"dw_multiplier", "b01f_01io->b01f", 4, {1, 7, 20, 19}, {3, 5, 1, 57}, {0}, 2,
                 {{3, 1, 1, 1, 1, 2, 1}, {5, 2, -1, 3, 1, 2, 0}}, 19, 1, 0, NULL};
  ConvCase d3 = {"dw_nchw", "bf01_oi01->bf01", 4, {2, 24, 9, 12}, {24, 1, 3, 3}, {0}, 2,
                 {{3, 2, 1, 1, 1, 1, 0}, {3, 2, 1, 1, 1, 1, 0}}, 24, 1, 0, NULL};
  ConvCase d4 = {"dw_lhs_dilated", "b01f_01io->b01f", 4, {1, 5, 6, 32}, {3, 3, 1, 32}, {0}, 2,
                 {{3, 1, 1, 1, 2, 1, 0}, {3, 1, 2, 2, 2, 1, 1}}, 32, 1, 0, NULL};
  ConvCase d5 = {"dw_3d", "b012f_012io->b012f", 5, {1, 3, 4, 9, 16}, {2, 3, 3, 1, 16}, {0}, 3,
                 {{2, 1, 0, 1, 1, 1, 0}, {3, 1, 1, 1, 1, 1, 0}, {3, 2, 0, 0, 1, 1, 0}}, 16, 1, 0, NULL};
  expect_order(d1, HLO_F32, HLO_F32, ORD_DW);
  expect_order(d2, HLO_F32, HLO_F32, ORD_DW);
  expect_order(d3, HLO_F32, HLO_F32, ORD_DW);
  expect_order(d4, HLO_F32, HLO_F32, ORD_DW);
  expect_order(d5, HLO_F32, HLO_F32, ORD_DW);
  expect_order(d1, HLO_BF16, HLO_BF16, ORD_DW);
  expect_order(d3, HLO_F16, HLO_F16, ORD_DW);
  tl_end();
}
END_TEST

/* Hand-worked 1-D cases: x = [1,2,3,4,5], kernel [1,0,-1] (bf0_oi0->bf0). */
static void hand(int64_t size, int64_t stride, int64_t lo, int64_t hi, int64_t ld, int64_t rd,
                 int64_t rev, int64_t nout, const float *want) {
  ConvCase c = { "hand", "bf0_oi0->bf0", 3, {1, 1, 5}, {1, 1, 3}, {1, 1, nout}, 1,
                 {{size, stride, lo, hi, ld, rd, rev}}, 1, 1, nout, want };
  float x[] = {1, 2, 3, 4, 5}, k[] = {1, 0, -1};
  for (int ref = 0; ref < 2; ref++) {
    HloInstr *ins = make_conv(&c, HLO_F32, HLO_F32);
    ck_assert_msg(hlk_conv_check(NULL, ins) == 0, "%s", hli_last_error());
    HliValue *in[2] = { tl_kept(&ins->ops[0]->shape, x), tl_kept(&ins->ops[1]->shape, k) };
    HliValue *out = tl_kept(&ins->shape, NULL);
    ck_assert_int_eq(hlk_conv_run(NULL, ins, in, out, ref), 0);
    tl_expect_f32_near(out, want, nout, 0);
  }
}

START_TEST(t_hand_1d) {
  tl_begin();
  /* valid: x[i] - x[i+2] */
  hand(3, 1, 0, 0, 1, 1, 0, 3, (float[]){-2, -2, -2});
  /* pad 1_1: [0,1,2,3,4,5,0] */
  hand(3, 1, 1, 1, 1, 1, 0, 5, (float[]){-2, -2, -2, -2, 4});
  /* pad 1_1, stride 2 */
  hand(3, 2, 1, 1, 1, 1, 0, 3, (float[]){-2, -2, 4});
  /* window dilation 2: x[i] - x[i+4] */
  hand(3, 1, 0, 0, 1, 2, 0, 1, (float[]){-4});
  /* base dilation 2: [1,0,2,0,3,0,4,0,5] */
  hand(3, 1, 0, 0, 2, 1, 0, 7, (float[]){-1, 0, -1, 0, -1, 0, -1});
  /* negative low padding -1: [2,3,4,5] */
  hand(3, 1, -1, 0, 1, 1, 0, 2, (float[]){-2, -2});
  /* reversal: kernel [-1,0,1] */
  hand(3, 1, 0, 0, 1, 1, 1, 3, (float[]){2, 2, 2});
  tl_end();
}
END_TEST

START_TEST(t_inf_kernel_skips_padding) {
  tl_begin();
  /* x = [1, 2], kernel [inf, 1], pad 1_0: the first window covers the pad
   * and x0, and XLA skips the pad (no 0 * inf): [1*1, 1*inf + 2*1] = [1, inf] */
  ConvCase c = { "inf", "bf0_oi0->bf0", 3, {1, 1, 2}, {1, 1, 2}, {1, 1, 2}, 1,
                 {{2, 1, 1, 0, 1, 1, 0}}, 1, 1, 2, NULL };
  float x[] = {1, 2}, k[] = {INFINITY, 1};
  HloInstr *ins = make_conv(&c, HLO_F32, HLO_F32);
  ck_assert_int_eq(hlk_conv_check(NULL, ins), 0);
  HliValue *in[2] = { tl_kept(&ins->ops[0]->shape, x), tl_kept(&ins->ops[1]->shape, k) };
  HliValue *out = tl_kept(&ins->shape, NULL);
  ck_assert_int_eq(hlk_conv_run(NULL, ins, in, out, false), 0);
  ck_assert(((float *)out->data)[0] == 1.0f);
  ck_assert(isinf(((float *)out->data)[1]) && ((float *)out->data)[1] > 0);
  tl_end();
}
END_TEST

START_TEST(t_check_errors) {
  tl_begin();
  ConvCase c = cases[0];
  c.os[2] = 5;   /* the window gives 4 */
  HloInstr *ins = make_conv(&c, HLO_F32, HLO_F32);
  ck_assert_int_ne(hlk_conv_check(NULL, ins), 0);
  ck_assert_ptr_nonnull(strstr(hli_last_error(), "result spatial dimension 0 is 5, the window gives 4"));
  c = cases[0];
  c.fgc = 2;     /* 3 input features do not split in 2 groups */
  ins = make_conv(&c, HLO_F32, HLO_F32);
  ck_assert_int_ne(hlk_conv_check(NULL, ins), 0);
  ck_assert_ptr_nonnull(strstr(hli_last_error(), "feature_group_count"));
  c = cases[0];
  c.win[0][1] = 0;
  ins = make_conv(&c, HLO_F32, HLO_F32);
  ck_assert_int_ne(hlk_conv_check(NULL, ins), 0);
  ck_assert_ptr_nonnull(strstr(hli_last_error(), "must be positive"));
  c = cases[0];
  ins = make_conv(&c, HLO_C64, HLO_F32);
  ck_assert_int_ne(hlk_conv_check(NULL, ins), 0);
  ck_assert_ptr_nonnull(strstr(hli_last_error(), "not supported: convolution of c64"));
  tl_end();
}
END_TEST

int main(void) {
  Suite *s = suite_create("conv");
  TCase *tc = tcase_create("cases");
  /* The documented-order cases run every micro-kernel ISA and several thread
   * counts: Check's 4 s default timed them out on a loaded host (load 15 on
   * 2 cores). */
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, t_table, 0, (int)(sizeof cases / sizeof *cases));
  tcase_add_test(tc, t_hand_1d);
  tcase_add_test(tc, t_inf_kernel_skips_padding);
  tcase_add_test(tc, t_check_errors);
  tcase_add_test(tc, t_nhwc_wide_features);
  tcase_add_test(tc, t_int_grouped_padded);
  tcase_add_test(tc, t_int_threads);
  tcase_add_test(tc, t_depthwise_threads);
  tcase_add_test(tc, t_small_groups_threads);
  tcase_add_test(tc, t_pointwise_threads);
  tcase_add_test(tc, t_nchw_lines);
  tcase_add_test(tc, t_transposed_phases);
  tcase_add_test(tc, t_window_in_parts);
  tcase_add_test(tc, t_rows_in_place);
  tcase_add_test(tc, t_rows_order);
  tcase_add_test(tc, t_rows_edge_kernels);
  tcase_add_test(tc, t_depthwise_order);
  tcase_add_test(tc, t_weight_gradient_layout);
  suite_add_tcase(s, tc);
  return tl_main(s);
}
