/* blockscaled.c: __cudnn$blockScaledDot (MXFP8 / NVFP4 block-scaled dot)
 * as standard HLO.
 *
 * XLA's BlockScalingRewriter (xla/service/gpu/transforms/
 * block_scaling_rewriter.cc, BuildCudnnScaledDot) emits
 *   (out, u8[0]) custom-call(lhs, rhs, lhs_scale, rhs_scale[, global_scale])
 * lhs [B,]M,K and rhs [B,]N,K (contracting last, batch first when rank 3),
 * out [B,]M,N. The scales have the inputs' shape with K/block_size columns,
 * padded to a multiple of 128 rows and 4 columns and then swizzled for
 * cuDNN: reshape [B, R/128, 4, 32, C/4, 4], transpose {0,1,4,3,2,5}, reshape
 * back. hlorun undoes the swizzle (the transpose is its own inverse), keeps
 * the first M (N) rows and ceil(K/block_size) columns, and computes
 *   out = global_scale * dot(lhs * scale_l, rhs * scale_r)
 * each scale repeated over its block of K; in f32, rounded once. The block
 * size is block_scaled_dot_backend_config.block_size when the config has it,
 * else the one cuDNN's types imply (CudnnMxType: f8e8m0fnu scales: 32,
 * MXFP8; f4e2m1fn inputs with f8e4m3fn scales: 16, NVFP4).
 * Not here: __op$block_scaled_dot before the rewriter (an HLO expansion). */
#include "targets/gpu/gpu.h"
#include <stdlib.h>
#include <string.h>

/* Unswizzled, sliced, dequantized operand i (input) with scale operand j:
 * [B?, rows, K] in f32. */
static int dequant(GpuCall *c, GpuMod *m, int i, int j, int64_t bs) {
  const GpuLeaf *x = &c->ops[i], *s = &c->ops[j];
  int r = x->rank, b = r == 3;
  int64_t B = b ? x->dims[0] : 1, R = s->dims[r - 2], C = s->dims[r - 1];
  int64_t rows = x->dims[r - 2], K = x->dims[r - 1], kb = (K + bs - 1) / bs;
  int vs = hlt_gpu_emit(m, s->dtype, s->dims, s->rank, "parameter(");
  hlc_text_printf(&m->t, "%d)\n", j);
  int64_t d6[6] = {B, R / 128, C / 4, 32, 4, 4}, p6[6] = {0, 1, 4, 3, 2, 5};
  int v6 = hlt_gpu_emit(m, s->dtype, d6, 6, "reshape(");
  hlc_text_printf(&m->t, "v%d)\n", vs);
  int64_t t6[6];
  for (int k = 0; k < 6; k++) t6[k] = d6[p6[k]];
  int vt = hlt_gpu_emit(m, s->dtype, t6, 6, "transpose(");
  hlc_text_printf(&m->t, "v%d), dimensions=", v6);
  hlt_gpu_text_list(&m->t, p6, 6);
  hlc_text_printf(&m->t, "\n");
  int64_t d3[3] = {B, R, C};
  int vu = hlt_gpu_emit(m, s->dtype, d3, 3, "reshape(");
  hlc_text_printf(&m->t, "v%d)\n", vt);
  int64_t sl[3] = {B, rows, kb};
  int vl = hlt_gpu_emit(m, s->dtype, sl, 3, "slice(");
  hlc_text_printf(&m->t, "v%d), slice={[0:%lld], [0:%lld], [0:%lld]}\n", vu, (long long)B,
               (long long)rows, (long long)kb);
  int vc = hlt_gpu_emit(m, HLO_F32, sl, 3, "convert(");
  hlc_text_printf(&m->t, "v%d)\n", vl);
  int64_t d4[4] = {B, rows, kb, bs};
  int vb = hlt_gpu_emit(m, HLO_F32, d4, 4, "broadcast(");
  hlc_text_printf(&m->t, "v%d), dimensions={0,1,2}\n", vc);
  int64_t dk[3] = {B, rows, kb * bs};
  int vr = hlt_gpu_emit(m, HLO_F32, dk, 3, "reshape(");
  hlc_text_printf(&m->t, "v%d)\n", vb);
  if (kb * bs != K) {
    int64_t dz[3] = {B, rows, K};
    int w = hlt_gpu_emit(m, HLO_F32, dz, 3, "slice(");
    hlc_text_printf(&m->t, "v%d), slice={[0:%lld], [0:%lld], [0:%lld]}\n", vr, (long long)B,
                 (long long)rows, (long long)K);
    vr = w;
  }
  int vx = hlt_gpu_emit(m, x->dtype, x->dims, x->rank, "parameter(");
  hlc_text_printf(&m->t, "%d)\n", i);
  int64_t dx[3] = {B, rows, K};
  int vxc = hlt_gpu_emit(m, HLO_F32, x->dims, x->rank, "convert(");
  hlc_text_printf(&m->t, "v%d)\n", vx);
  if (!b) {
    int w = hlt_gpu_emit(m, HLO_F32, dx, 3, "reshape(");
    hlc_text_printf(&m->t, "v%d)\n", vxc);
    vxc = w;
  }
  int v = hlt_gpu_emit(m, HLO_F32, dx, 3, "multiply(");
  hlc_text_printf(&m->t, "v%d, v%d)\n", vxc, vr);
  return v;
}

char *hlt_gpu_build_block_scaled(GpuCall *c) {
  int64_t bs = 0;
  json_t *cfg = c->config ? json_object_get(c->config, "block_scaled_dot_backend_config") : NULL;
  if (cfg) {
    if (!json_is_object(cfg)) {
      hlt_gpu_fail(c, "backend_config field block_scaled_dot_backend_config: expected an object");
      return NULL;
    }
    if (hlt_gpu_json_int(c, cfg, "block_size", "block_scaled_dot_backend_config.block_size", 0,
                         &bs))
      return NULL;
    if (bs <= 0) {
      hlt_gpu_fail(c,
                   "backend_config field block_scaled_dot_backend_config.block_size is %lld: "
                   "expected a positive block size",
                   (long long)bs);
      return NULL;
    }
  }
  if (c->nops < 4 || c->nops > 5 || c->nres < 1 || c->nres > 2) {
    hlt_gpu_fail(c,
                 "has %d operands and %d results; __cudnn$blockScaledDot takes (lhs, rhs, "
                 "lhs_scale, rhs_scale[, global_scale]) and gives (out, u8 workspace)",
                 c->nops, c->nres);
    return NULL;
  }
  const GpuLeaf *l = &c->ops[0], *r = &c->ops[1], *out = &c->res[0];
  int rk = l->rank;
  if ((rk != 2 && rk != 3) || r->rank != rk || l->dims[rk - 1] != r->dims[rk - 1] ||
      (rk == 3 && l->dims[0] != r->dims[0])) {
    hlt_gpu_fail(c,
                 "operands 0 and 1 (lhs, rhs) must be [B,]M,K and [B,]N,K with the same K "
                 "(and B)");
    return NULL;
  }
  if (!bs) {
    HloDtype st = c->ops[2].dtype, it = l->dtype;
    if (st == HLO_F8E8M0FNU) bs = 32;
    else if (st == HLO_F8E4M3FN && it == HLO_F4E2M1FN) bs = 16;
    else {
      hlt_gpu_fail(c,
                   "the block size is not in the backend_config (block_scaled_dot_backend_config."
                   "block_size) and the types (%s input, %s scale) are neither MXFP8 (f8e8m0fnu "
                   "scales) nor NVFP4 (f4e2m1fn with f8e4m3fn scales)",
                   hlc_dtype_name(it), hlc_dtype_name(st));
      return NULL;
    }
  }
  for (int i = 0; i < 2; i++) {
    const GpuLeaf *x = &c->ops[i], *s = &c->ops[2 + i];
    int64_t kb = (x->dims[rk - 1] + bs - 1) / bs;
    if (s->rank != rk || (rk == 3 && s->dims[0] != x->dims[0]) || s->dims[rk - 2] % 128 ||
        s->dims[rk - 1] % 4 || s->dims[rk - 2] < x->dims[rk - 2] || s->dims[rk - 1] < kb) {
      hlt_gpu_fail(c,
                   "operand %d (%s scale) is %s[...] of rank %d; cuDNN's swizzled scale must have "
                   "the input's rank, at least its %lld rows (a multiple of 128) and %lld "
                   "columns of block %lld (a multiple of 4)",
                   2 + i, i ? "rhs" : "lhs", hlc_dtype_name(s->dtype), s->rank,
                   (long long)x->dims[rk - 2], (long long)kb, (long long)bs);
      return NULL;
    }
  }
  bool ok = out->rank == rk && hlc_dtype_is_float(out->dtype) &&
            out->dims[rk - 2] == l->dims[rk - 2] && out->dims[rk - 1] == r->dims[rk - 2] &&
            (rk == 2 || out->dims[0] == l->dims[0]);
  if (!ok) {
    hlt_gpu_fail(c, "result 0 must be a float [B,]M,N (lhs rows by rhs rows)");
    return NULL;
  }
  if (c->nops == 5 && (c->ops[4].rank != 0 || c->ops[4].dtype != out->dtype)) {
    hlt_gpu_fail(c, "operand 4 (global_scale) must be a scalar of the result's type %s",
                 hlc_dtype_name(out->dtype));
    return NULL;
  }
  GpuMod m = {0};
  m.ct = HLO_F32;
  m.rank = out->rank;
  memcpy(m.dims, out->dims, sizeof m.dims);
  hlc_text_printf(&m.t, "HloModule gpu_equivalent\n\nENTRY e {\n");
  int a = dequant(c, &m, 0, 2, bs), b = dequant(c, &m, 1, 3, bs);
  int64_t B = rk == 3 ? l->dims[0] : 1, od[3] = {B, l->dims[rk - 2], r->dims[rk - 2]};
  int y = hlt_gpu_emit(&m, HLO_F32, od, 3, "dot(");
  hlc_text_printf(&m.t,
               "v%d, v%d), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
               "rhs_contracting_dims={2}\n",
               a, b);
  if (rk == 2) {
    int w = hlt_gpu_emit(&m, HLO_F32, out->dims, 2, "reshape(");
    hlc_text_printf(&m.t, "v%d)\n", y);
    y = w;
  }
  if (c->nops == 5) {
    int g = hlt_gpu_operand(&m, &c->ops[4], 4, GPU_ROUND_NONE);
    int gb = hlt_gpu_emit(&m, HLO_F32, out->dims, out->rank, "broadcast(");
    hlc_text_printf(&m.t, "v%d), dimensions={}\n", g);
    y = hlt_gpu_binary(&m, "multiply", y, gb);
  }
  if (hlt_gpu_finish(&m, c->res, &y, 1)) {
    free(m.t.p);
    hlt_gpu_fail(c, "out of memory");
    return NULL;
  }
  return m.t.p;
}
