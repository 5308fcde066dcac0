/* fmha_ragged.c: cuDNN fused attention with packed (max_seg_per_batch > 1)
 * and paged layouts as standard HLO: the forward (fmha_forward_ragged) and
 * the packed backward (fmha_backward_ragged); the config, masks and scores
 * come from fmha.c.
 * cuda_dnn.cc GetCudnnFlashAttentionOperationGraph (operands after
 * cudnn_custom_call_compiler.cc: (q, k, v, q_seqlen, kv_seqlen, then
 * q_offsets, kv_offsets when packed, page_table_k, page_table_v when
 * paged)). Either turns cuDNN's padding mask on (set_padding_mask(true),
 * whatever mask_type says; CAUSAL/PADDING_CAUSAL add the causal mask).
 * Packed: the batch dimension (the first batch dimension of q, k, v in the
 *   dot dimension numbers) is multiplied by M = max_seg_per_batch
 *   (FixDimsForRaggedOffset): Bc = B*M segments, seq_q/seq_kv hold Bc
 *   lengths, offset_q/offset_kv Bc+1 element offsets (set_ragged_offset on
 *   q, k, v and O). Segment i's element (head n, position t, dim h) of q
 *   is the element offset_q[i] + t*st_t + n*st_n + h*st_h of q's memory
 *   (st_*: the strides of q's layout; the ragged offset replaces the batch
 *   stride), likewise k and v with offset_kv, and O is written the same
 *   way with offset_q and O's strides. Stats are dense [Bc, N, T].
 * Paged: k and v are page containers [blocks, N, block_size, H] (cuDNN's
 *   dims) and page_table_k/v s32[B, 1, nb, 1] (cudnn-frontend's paged
 *   caches: test/python/sdpa/helpers.py create_container_and_page_table);
 *   the logical key position s of batch b is page page_table[b, 0,
 *   s / block_size, 0], row s % block_size; max_seq_len_kv = nb*block_size.
 * Not written by the GPU (hlorun writes 0 there, its choice as for padded
 * rows in fmha_dense.c): O's elements no valid segment row covers, stats
 * of padded rows. Offsets are read as given: an index outside the buffer reads the
 * nearest element (gather clamps) and a write there is dropped; rows past a
 * segment's length read as 0 (the GPU does not read them). */
#include "targets/gpu/fmha.h"
#include <stdlib.h>
#include <string.h>

static void phys_strides(const GpuLeaf *l, int64_t *st) {
  int64_t acc = 1;
  for (int i = 0; i < l->rank; i++) {
    st[l->layout[i]] = acc;
    acc *= l->dims[l->layout[i]];
  }
}

static int64_t elements(const GpuLeaf *l) {
  int64_t n = 1;
  for (int i = 0; i < l->rank; i++) n *= l->dims[i];
  return n;
}

/* Operand i in the physical order of its layout, flattened (compute type). */
static int flat_phys(GpuMod *m, const GpuLeaf *l, int i) {
  int v = hlt_gpu_operand(m, l, i, GPU_ROUND_NONE);
  int64_t perm[GPU_MAX_RANK], pd[GPU_MAX_RANK], e[1] = {elements(l)};
  for (int j = 0; j < l->rank; j++) {
    perm[j] = l->layout[l->rank - 1 - j];
    pd[j] = l->dims[perm[j]];
  }
  int t = hlt_gpu_emit(m, m->ct, pd, l->rank, "transpose(");
  hlc_text_printf(&m->t, "v%d), dimensions=", v);
  hlt_gpu_text_list(&m->t, perm, l->rank);
  hlc_text_printf(&m->t, "\n");
  int f = hlt_gpu_emit(m, m->ct, e, 1, "reshape(");
  hlc_text_printf(&m->t, "v%d)\n", t);
  return f;
}

static int s64_bcast_const(GpuMod *m, int64_t x, const int64_t *dims, int rank) {
  int k = hlt_gpu_emit(m, HLO_S64, NULL, 0, "constant(");
  hlc_text_printf(&m->t, "%lld)\n", (long long)x);
  int b = hlt_gpu_emit(m, HLO_S64, dims, rank, "broadcast(");
  hlc_text_printf(&m->t, "v%d), dimensions={}\n", k);
  return b;
}

static int s64_op(GpuMod *m, const char *op, int a, int b, const int64_t *dims, int rank) {
  int v = hlt_gpu_emit(m, HLO_S64, dims, rank, op);
  hlc_text_printf(&m->t, "v%d, v%d)\n", a, b);
  return v;
}

/* iota along dim d times c. */
static int s64_iota_times(GpuMod *m, const int64_t *dims, int rank, int d, int64_t c) {
  int io = hlt_gpu_emit(m, HLO_S64, dims, rank, "iota(), ");
  hlc_text_printf(&m->t, "iota_dimension=%d\n", d);
  if (c == 1) return io;
  return s64_op(m, "multiply(", io, s64_bcast_const(m, c, dims, rank), dims, rank);
}

/* Operand i (integers, any shape) flattened to s64[n] from its first n
 * elements in row-major order. */
static int s64_lead(GpuMod *m, const GpuLeaf *l, int i, int64_t n) {
  int p = hlt_gpu_emit(m, l->dtype, l->dims, l->rank, "parameter(");
  hlc_text_printf(&m->t, "%d)\n", i);
  int64_t e[1] = {elements(l)};
  int r = hlt_gpu_emit(m, l->dtype, e, 1, "reshape(");
  hlc_text_printf(&m->t, "v%d)\n", p);
  if (n != e[0]) {
    int64_t nn[1] = {n};
    int sl = hlt_gpu_emit(m, l->dtype, nn, 1, "slice(");
    hlc_text_printf(&m->t, "v%d), slice={[0:%lld]}\n", r, (long long)n);
    r = sl;
  }
  int64_t nn[1] = {n};
  int cv = hlt_gpu_emit(m, HLO_S64, nn, 1, "convert(");
  hlc_text_printf(&m->t, "v%d)\n", r);
  return cv;
}

/* [Bc, N, Sc, H] gathered from the flat operand fl: element (b, n, s, h) is
 * fl[base[b, s] + n*st_n + h*st_h] (base: s64[Bc, Sc]); rows s >= len[b]
 * (len: s32[Bc]) are 0: the GPU never reads them, and a non-finite value
 * there must not reach the result through a zero weight. */
static int gather_canon(GpuMod *m, int fl, int base, int64_t Bc, int64_t N, int64_t Sc,
                        int64_t H, int64_t st_n, int64_t st_h, int len) {
  int64_t d4[4] = {Bc, N, Sc, H}, d5[5] = {Bc, N, Sc, H, 1};
  int b = hlt_gpu_emit(m, HLO_S64, d4, 4, "broadcast(");
  hlc_text_printf(&m->t, "v%d), dimensions={0,2}\n", base);
  int idx = s64_op(m, "add(", b, s64_iota_times(m, d4, 4, 1, st_n), d4, 4);
  idx = s64_op(m, "add(", idx, s64_iota_times(m, d4, 4, 3, st_h), d4, 4);
  int i5 = hlt_gpu_emit(m, HLO_S64, d5, 5, "reshape(");
  hlc_text_printf(&m->t, "v%d)\n", idx);
  int g = hlt_gpu_emit(m, m->ct, d4, 4, "gather(");
  hlc_text_printf(&m->t,
               "v%d, v%d), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, "
               "index_vector_dim=4, slice_sizes={1}\n",
               fl, i5);
  int it = hlt_gpu_emit(m, HLO_S32, d4, 4, "iota(), ");
  hlc_text_printf(&m->t, "iota_dimension=2\n");
  int lb = hlt_gpu_emit(m, HLO_S32, d4, 4, "broadcast(");
  hlc_text_printf(&m->t, "v%d), dimensions={0}\n", len);
  int ok = hlt_gpu_emit(m, HLO_PRED, d4, 4, "compare(");
  hlc_text_printf(&m->t, "v%d, v%d), direction=LT\n", it, lb);
  int z = hlt_gpu_emit(m, m->ct, NULL, 0, "constant(0)\n");
  int zb = hlt_gpu_emit(m, m->ct, d4, 4, "broadcast(");
  hlc_text_printf(&m->t, "v%d), dimensions={}\n", z);
  int v = hlt_gpu_emit(m, m->ct, d4, 4, "select(");
  hlc_text_printf(&m->t, "v%d, v%d, v%d)\n", ok, g, zb);
  return v;
}

/* base[b, s] = off[b] + s*st_s (packed). */
static int base_packed(GpuMod *m, int off, int64_t Bc, int64_t Sc, int64_t st_s) {
  int64_t d2[2] = {Bc, Sc};
  int b = hlt_gpu_emit(m, HLO_S64, d2, 2, "broadcast(");
  hlc_text_printf(&m->t, "v%d), dimensions={0}\n", off);
  return s64_op(m, "add(", b, s64_iota_times(m, d2, 2, 1, st_s), d2, 2);
}

/* base[b, s] = table[b, s / bs]*st_blk + (s % bs)*st_s (paged); the table
 * operand i is s32[B, 1, nb, 1]. */
static int base_paged(GpuMod *m, const GpuLeaf *pt, int i, int64_t B, int64_t nb, int64_t bs,
                      int64_t st_blk, int64_t st_s) {
  int64_t d2[2] = {B, nb}, d3[3] = {B, nb, bs}, ds[2] = {B, nb * bs};
  int p = hlt_gpu_emit(m, pt->dtype, pt->dims, pt->rank, "parameter(");
  hlc_text_printf(&m->t, "%d)\n", i);
  int r = hlt_gpu_emit(m, pt->dtype, d2, 2, "reshape(");
  hlc_text_printf(&m->t, "v%d)\n", p);
  int c = hlt_gpu_emit(m, HLO_S64, d2, 2, "convert(");
  hlc_text_printf(&m->t, "v%d)\n", r);
  int b3 = hlt_gpu_emit(m, HLO_S64, d3, 3, "broadcast(");
  hlc_text_printf(&m->t, "v%d), dimensions={0,1}\n", c);
  int blk = s64_op(m, "multiply(", b3, s64_bcast_const(m, st_blk, d3, 3), d3, 3);
  int row = s64_op(m, "add(", blk, s64_iota_times(m, d3, 3, 2, st_s), d3, 3);
  int out = hlt_gpu_emit(m, HLO_S64, ds, 2, "reshape(");
  hlc_text_printf(&m->t, "v%d)\n", row);
  return out;
}

/* The canonical value x [Bc, N, L, D] written to result leaf r (logical dims
 * [B, N, L, D]) the ragged way: row (i, n, t, h) to element off[i] + t*st_t
 * + n*st_n + h*st_h of r's memory (r's layout) for the valid rows t <
 * len[i]; every other element 0; an index past the end drops the write. */
static int scatter_ragged(GpuMod *m, int x, const GpuLeaf *r, int off, int len, int64_t Bc,
                          int64_t N, int64_t L, int64_t D) {
  int64_t so[4], E = elements(r), oc[4] = {Bc, N, L, D}, o5[5] = {Bc, N, L, D, 1}, e1[1] = {E};
  phys_strides(r, so);
  int ob = hlt_gpu_emit(m, HLO_S64, oc, 4, "broadcast(");
  hlc_text_printf(&m->t, "v%d), dimensions={0}\n", off);
  int idx = s64_op(m, "add(", ob, s64_iota_times(m, oc, 4, 2, so[2]), oc, 4);
  idx = s64_op(m, "add(", idx, s64_iota_times(m, oc, 4, 1, so[1]), oc, 4);
  idx = s64_op(m, "add(", idx, s64_iota_times(m, oc, 4, 3, so[3]), oc, 4);
  int it = hlt_gpu_emit(m, HLO_S32, oc, 4, "iota(), ");
  hlc_text_printf(&m->t, "iota_dimension=2\n");
  int lb = hlt_gpu_emit(m, HLO_S32, oc, 4, "broadcast(");
  hlc_text_printf(&m->t, "v%d), dimensions={0}\n", len);
  int ok = hlt_gpu_emit(m, HLO_PRED, oc, 4, "compare(");
  hlc_text_printf(&m->t, "v%d, v%d), direction=LT\n", it, lb);
  int past = s64_bcast_const(m, E, oc, 4);
  int sel = hlt_gpu_emit(m, HLO_S64, oc, 4, "select(");
  hlc_text_printf(&m->t, "v%d, v%d, v%d)\n", ok, idx, past);
  int i5 = hlt_gpu_emit(m, HLO_S64, o5, 5, "reshape(");
  hlc_text_printf(&m->t, "v%d)\n", sel);
  int z = hlt_gpu_emit(m, m->ct, NULL, 0, "constant(0)\n");
  int zf = hlt_gpu_emit(m, m->ct, e1, 1, "broadcast(");
  hlc_text_printf(&m->t, "v%d), dimensions={}\n", z);
  int fl = hlt_gpu_emit(m, m->ct, e1, 1, "scatter(");
  hlc_text_printf(&m->t,
               "v%d, v%d, v%d), update_window_dims={}, inserted_window_dims={0}, "
               "scatter_dims_to_operand_dims={0}, index_vector_dim=4, to_apply=pick\n",
               zf, i5, x);
  int64_t perm[4], pd[4], inv[4];
  for (int j = 0; j < 4; j++) {
    perm[j] = r->layout[3 - j];
    pd[j] = r->dims[perm[j]];
    inv[perm[j]] = j;
  }
  int rs = hlt_gpu_emit(m, m->ct, pd, 4, "reshape(");
  hlc_text_printf(&m->t, "v%d)\n", fl);
  int out = hlt_gpu_emit(m, m->ct, r->dims, 4, "transpose(");
  hlc_text_printf(&m->t, "v%d), dimensions=", rs);
  hlt_gpu_text_list(&m->t, inv, 4);
  hlc_text_printf(&m->t, "\n");
  return out;
}

/* dimension of a rank-4 operand that is none of a, b, c. */
static int other_dim(int64_t a, int64_t b, int64_t c) {
  for (int i = 0; i < 4; i++)
    if (i != a && i != b && i != c) return i;
  return -1;
}

/* The q and kv sequence lengths of the Bc segments: operands first and
 * first + 1 (s32, Bc elements), as parameters reshaped to s32[Bc]. */
static void seq_lens(GpuMod *m, const GpuCall *c, int first, int64_t Bc, int lens[2]) {
  for (int i = 0; i < 2; i++) {
    int64_t n1[1] = {Bc};
    int p = hlt_gpu_emit(m, HLO_S32, c->ops[first + i].dims, c->ops[first + i].rank, "parameter(");
    hlc_text_printf(&m->t, "%d)\n", first + i);
    lens[i] = hlt_gpu_emit(m, HLO_S32, n1, 1, "reshape(");
    hlc_text_printf(&m->t, "v%d)\n", p);
  }
}

char *fmha_forward_ragged(GpuCall *c, const Cfg *f) {
  bool packed = f->segs > 1;
  const char *kind = packed ? "packed attention (max_seg_per_batch > 1)" : "paged attention";
  if (packed && f->paged)
    return hlt_gpu_fail(c,
                        "backend_config fields cudnn_fmha_backend_config.max_seg_per_batch and "
                        "is_paged_attention: hlorun does not run packed and paged attention "
                        "together"),
           NULL;
  if (strstr(c->target, "ScaleBias"))
    return hlt_gpu_fail(c, "hlorun runs %s without a bias only (%s has a bias operand)", kind,
                        c->target),
           NULL;
  if (c->nops != 7 || c->nres < 1 || c->nres > 3)
    return hlt_gpu_fail(c,
                        "has %d operands and %d results; %s with %s takes (q, k, v, q_seqlen, "
                        "kv_seqlen, %s) and gives (O[, stats], u8 workspace)",
                        c->nops, c->nres, c->target, kind,
                        packed ? "q_offsets, kv_offsets" : "page_table_k, page_table_v"),
           NULL;
  const GpuLeaf *q = &c->ops[0], *k = &c->ops[1], *v = &c->ops[2], *O = &c->res[0];
  const Dims *d1 = &f->d1, *d2 = &f->d2;
  if (q->rank != 4 || k->rank != 4 || v->rank != 4 || d1->nlb != 2 || d1->nrb != 2 ||
      d1->nlc != 1 || d1->nrc != 1 || d2->nlb != 2 || d2->nrb != 2 || d2->nlc != 1 ||
      d2->nrc != 1 || d2->lb[0] != 0 || d2->lb[1] != 1 || d2->lc[0] != 3)
    return hlt_gpu_fail(c,
                        "backend_config fields cudnn_fmha_backend_config.bmm1_/bmm2_dot_dimension_"
                        "numbers: %s takes rank-4 q, k and v with two batch dimensions (batch, "
                        "heads) and one contracting dimension each (cuDNN's [b, h, s, d]), and "
                        "bmm2 reading the scores as [b, h, q, k]",
                        kind),
           NULL;
  int qb = (int)d1->lb[0], qn = (int)d1->lb[1], qh = (int)d1->lc[0];
  int kb = (int)d1->rb[0], kn = (int)d1->rb[1], kh = (int)d1->rc[0];
  int vb = (int)d2->rb[0], vn = (int)d2->rb[1], vs = (int)d2->rc[0];
  int qt = other_dim(qb, qn, qh), ks = other_dim(kb, kn, kh), vh = other_dim(vb, vn, vs);
  if (qt < 0 || ks < 0 || vh < 0)
    return hlt_gpu_fail(c,
                        "backend_config fields cudnn_fmha_backend_config.bmm1_/bmm2_dot_dimension_"
                        "numbers name one dimension twice"),
           NULL;
  int64_t B = q->dims[qb], N = q->dims[qn], T = q->dims[qt], H = q->dims[qh], Hv = v->dims[vh];
  int64_t M = packed ? f->segs : 1, Bc = B * M, Sc, nb = 0, bs = 0;
  if (k->dims[kn] != N || v->dims[vn] != N || k->dims[kh] != H || k->dims[kb] != v->dims[vb] ||
      k->dims[ks] != v->dims[vs])
    return hlt_gpu_fail(c,
                        "q, k and v do not agree on the heads, the head size, or k and v on "
                        "their batch (or blocks) and sequence (or block) sizes"),
           NULL;
  if (packed) {
    if (k->dims[kb] != B)
      return hlt_gpu_fail(c, "k and v must have q's batch size %lld", (long long)B), NULL;
    Sc = k->dims[ks];
  } else {
    const GpuLeaf *pk = &c->ops[5], *pv = &c->ops[6];
    bs = k->dims[ks];
    nb = pk->rank == 4 ? pk->dims[2] : 0;
    for (int i = 5; i < 7; i++) {
      const GpuLeaf *pt = &c->ops[i];
      if (pt->dtype != HLO_S32 || pt->rank != 4 || pt->dims[0] != B || pt->dims[1] != 1 ||
          pt->dims[3] != 1 || pt->dims[2] != nb || nb < 1)
        return hlt_gpu_fail(c,
                            "operand %d (%s) must be s32[%lld,1,nb,1] (one page index per "
                            "logical block of each batch), as page_table_k",
                            i, i == 5 ? "page_table_k" : "page_table_v", (long long)B),
               NULL;
    }
    (void)pv;
    Sc = nb * bs;
  }
  int64_t od[4] = {B, N, T, Hv};
  if (!fmha_same_dims(od, 4, O))
    return hlt_gpu_fail(c,
                        "result 0 (O) must be [%lld,%lld,%lld,%lld] (batch, heads, queries, "
                        "head size: bmm2's output)",
                        (long long)B, (long long)N, (long long)T, (long long)Hv),
           NULL;
  bool stats = c->nres == 3 || (c->nres == 2 && c->res[1].dtype == HLO_F32 && c->res[1].rank == 3);
  int64_t sd[3] = {Bc, N, T};
  if (stats && (c->res[1].dtype != HLO_F32 || !fmha_same_dims(sd, 3, &c->res[1])))
    return hlt_gpu_fail(c,
                        "result 1 (stats) must be f32[%lld,%lld,%lld] (one row per segment, "
                        "head and query)",
                        (long long)Bc, (long long)N, (long long)T),
           NULL;
  for (int i = 3; i < 5; i++)
    if (c->ops[i].dtype != HLO_S32 || elements(&c->ops[i]) != Bc)
      return hlt_gpu_fail(c, "operand %d (%s) must be s32 with %lld elements (one length per %s)",
                          i, i == 3 ? "q_seqlen" : "kv_seqlen", (long long)Bc,
                          packed ? "segment: batch times max_seg_per_batch" : "batch"),
             NULL;
  if (packed)
    for (int i = 5; i < 7; i++)
      if (c->ops[i].dtype != HLO_S32 || elements(&c->ops[i]) < Bc + 1)
        return hlt_gpu_fail(c,
                            "operand %d (%s) must be s32 with at least %lld elements (the "
                            "element offset of each of the %lld segments, and one more)",
                            i, i == 5 ? "q_offsets" : "kv_offsets", (long long)(Bc + 1),
                            (long long)Bc),
               NULL;
  int64_t sq[4], sk[4], sv[4];
  phys_strides(q, sq);
  phys_strides(k, sk);
  phys_strides(v, sv);
  GpuMod m = {0};
  m.ct = (q->dtype == HLO_F64) ? HLO_F64 : HLO_F32;
  m.rank = 4;
  m.dims[0] = Bc; m.dims[1] = N; m.dims[2] = T; m.dims[3] = Sc;
  fmha_prelude(&m);
  int lens[2];
  seq_lens(&m, c, 3, Bc, lens);
  int vq, vk, vv, offq = -1;
  if (packed) {
    offq = s64_lead(&m, &c->ops[5], 5, Bc);
    int offkv = s64_lead(&m, &c->ops[6], 6, Bc);
    vq = gather_canon(&m, flat_phys(&m, q, 0), base_packed(&m, offq, Bc, T, sq[qt]), Bc, N, T, H,
                      sq[qn], sq[qh], lens[0]);
    vk = gather_canon(&m, flat_phys(&m, k, 1), base_packed(&m, offkv, Bc, Sc, sk[ks]), Bc, N, Sc,
                      H, sk[kn], sk[kh], lens[1]);
    vv = gather_canon(&m, flat_phys(&m, v, 2), base_packed(&m, offkv, Bc, Sc, sv[vs]), Bc, N, Sc,
                      Hv, sv[vn], sv[vh], lens[1]);
  } else {
    int x = hlt_gpu_operand(&m, q, 0, GPU_ROUND_NONE);
    int64_t qd[4] = {B, N, T, H}, perm[4] = {qb, qn, qt, qh};
    vq = hlt_gpu_emit(&m, m.ct, qd, 4, "transpose(");
    hlc_text_printf(&m.t, "v%d), dimensions=", x);
    hlt_gpu_text_list(&m.t, perm, 4);
    hlc_text_printf(&m.t, "\n");
    vk = gather_canon(&m, flat_phys(&m, k, 1), base_paged(&m, &c->ops[5], 5, B, nb, bs, sk[kb], sk[ks]),
                      B, N, Sc, H, sk[kn], sk[kh], lens[1]);
    vv = gather_canon(&m, flat_phys(&m, v, 2), base_paged(&m, &c->ops[6], 6, B, nb, bs, sv[vb], sv[vs]),
                      B, N, Sc, Hv, sv[vn], sv[vh], lens[1]);
  }
  Cfg fc = *f;
  fc.padding = true;
  Mask mk = fmha_build_mask_lens(&m, &fc, -1, lens);
  Dims cd1 = {{0, 1}, {0, 1}, {3}, {3}, 2, 2, 1, 1}, cd2 = {{0, 1}, {0, 1}, {3}, {2}, 2, 2, 1, 1};
  int sc = fmha_scores(c, &m, &fc, vq, vk, &cd1, -1, &mk);
  if (sc < 0) { free(m.t.p); return NULL; }
  int mx = fmha_row_reduce(&m, sc, -__builtin_inf(), "max");
  int e = hlt_gpu_unary(&m, "exponential",
                        hlt_gpu_binary(&m, "subtract", sc, fmha_row_broadcast(&m, mx)));
  int sum = fmha_row_reduce(&m, e, 0, "sum");
  int p = hlt_gpu_binary(&m, "divide", e, fmha_row_broadcast(&m, sum));
  p = fmha_select_v(&m, mk.qvalid, p, hlt_gpu_splat(&m, 0));
  int64_t oc[4] = {Bc, N, T, Hv};
  int o = fmha_dot(&m, p, vv, oc, 4, &cd2);
  int outs[2] = {o, 0};
  if (packed) outs[0] = scatter_ragged(&m, o, O, offq, lens[0], Bc, N, T, Hv);
  if (stats) {
    int lg = hlt_gpu_emit(&m, m.ct, sd, 3, "log(");
    hlc_text_printf(&m.t, "v%d)\n", sum);
    int st = hlt_gpu_emit(&m, m.ct, sd, 3, "add(");
    hlc_text_printf(&m.t, "v%d, v%d)\n", mx, lg);
    int zz = hlt_gpu_emit(&m, m.ct, NULL, 0, "constant(0)\n");
    int zb = hlt_gpu_emit(&m, m.ct, sd, 3, "broadcast(");
    hlc_text_printf(&m.t, "v%d), dimensions={}\n", zz);
    outs[1] = hlt_gpu_emit(&m, m.ct, sd, 3, "select(");
    hlc_text_printf(&m.t, "v%d, v%d, v%d)\n", mk.qrow, st, zb);
  }
  if (hlt_gpu_finish(&m, c->res, outs, stats ? 2 : 1)) {
    free(m.t.p);
    hlt_gpu_fail(c, "out of memory");
    return NULL;
  }
  return m.t.p;
}

/* Packed backward: GetCudnnFlashAttentionBackwardOperationGraph applies
 * the same ragged offsets (offset_q on q, O, dO and dQ; offset_kv on k, v,
 * dK and dV), stats dense [B*M, N, T], and the padding mask (operands (q, k,
 * v, stats, dO, O, q_seqlen, kv_seqlen, q_offsets, kv_offsets)); the
 * gradients are fmha_backward()'s (fmha_dense.c), per segment. */

/* Operand i (roles: batch b, heads n, sequence sq, head size h) gathered to
 * [Bc, N, L, D] the ragged way with offsets off. */
static int gather_ragged(GpuMod *m, const GpuLeaf *l, int i, int n, int sq, int h, int off,
                         int len, int64_t Bc, int64_t N, int64_t L, int64_t D) {
  int64_t st[4];
  phys_strides(l, st);
  return gather_canon(m, flat_phys(m, l, i), base_packed(m, off, Bc, L, st[sq]), Bc, N, L, D,
                      st[n], st[h], len);
}

char *fmha_backward_ragged(GpuCall *c, const Cfg *f) {
  if (strstr(c->target, "ScaleBias"))
    return hlt_gpu_fail(c,
                        "hlorun runs packed attention (max_seg_per_batch > 1) without a bias only "
                        "(%s has a bias operand)",
                        c->target),
           NULL;
  if (c->nops != 10 || c->nres != 4)
    return hlt_gpu_fail(
               c,
               "has %d operands and %d results; %s with packed attention "
               "(max_seg_per_batch > 1) takes (q, k, v, stats, dO, O, q_seqlen, kv_seqlen, "
               "q_offsets, kv_offsets) and gives (dQ, dK, dV, u8 workspace)",
               c->nops, c->nres, c->target),
           NULL;
  const GpuLeaf *q = &c->ops[0], *k = &c->ops[1], *v = &c->ops[2], *st = &c->ops[3],
                *dO = &c->ops[4], *O = &c->ops[5];
  const Dims *g11 = &f->g11, *g12 = &f->g12, *g21 = &f->g21, *g22 = &f->g22;
  const Dims *all[4] = {g11, g12, g21, g22};
  bool ok = q->rank == 4 && k->rank == 4 && v->rank == 4 && dO->rank == 4;
  for (int i = 0; ok && i < 4; i++)
    ok = all[i]->nlb == 2 && all[i]->nrb == 2 && all[i]->nlc == 1 && all[i]->nrc == 1;
  ok = ok && g11->lb[0] == 0 && g11->lb[1] == 1 && g11->lc[0] == 2 && g12->lb[0] == 0 &&
       g12->lb[1] == 1 && g12->lc[0] == 3 && g21->lb[0] == 0 && g21->lb[1] == 1 &&
       g21->lc[0] == 2 && g22->lb[0] == g21->rb[0] && g22->lb[1] == g21->rb[1];
  if (!ok)
    return hlt_gpu_fail(c,
                        "backend_config fields cudnn_fmha_backend_config.bmm*_grad_gemm*_dot_"
                        "dimension_numbers: packed attention takes rank-4 q, k, v and dO with two "
                        "batch dimensions (batch, heads) and one contracting dimension each "
                        "(cuDNN's [b, h, s, d]), the gradients of the scores read as [b, h, q, k]"),
           NULL;
  int qb = (int)g11->rb[0], qn = (int)g11->rb[1], qt = (int)g11->rc[0];
  int kb = (int)g12->rb[0], kn = (int)g12->rb[1], ks = (int)g12->rc[0];
  int vb = (int)g22->rb[0], vn = (int)g22->rb[1], vh = (int)g22->rc[0];
  int db = (int)g21->rb[0], dn = (int)g21->rb[1], dt = (int)g21->rc[0];
  int qh = other_dim(qb, qn, qt), kh = other_dim(kb, kn, ks), vs = other_dim(vb, vn, vh);
  int dh = other_dim(db, dn, dt);
  if (qh < 0 || kh < 0 || vs < 0 || dh < 0 || g22->lc[0] != dh)
    return hlt_gpu_fail(c,
                        "backend_config fields cudnn_fmha_backend_config.bmm*_grad_gemm*_dot_"
                        "dimension_numbers name one dimension twice or disagree on dO's head "
                        "size dimension"),
           NULL;
  int64_t B = q->dims[qb], N = q->dims[qn], T = q->dims[qt], H = q->dims[qh];
  int64_t S = k->dims[ks], Hv = v->dims[vh], Bc = B * f->segs;
  bool okO = O->rank == 4;
  for (int i = 0; okO && i < 4; i++) okO = O->dims[i] == dO->dims[i];
  if (k->dims[kb] != B || v->dims[vb] != B || dO->dims[db] != B || k->dims[kn] != N ||
      v->dims[vn] != N || dO->dims[dn] != N || k->dims[kh] != H || v->dims[vs] != S ||
      dO->dims[dt] != T || dO->dims[dh] != Hv || !okO)
    return hlt_gpu_fail(c,
                        "q, k, v, dO and O do not agree on the batch, heads, sequence or head "
                        "sizes (O must have dO's shape)"),
           NULL;
  int64_t sd[3] = {Bc, N, T};
  if (st->dtype != HLO_F32 || !fmha_same_dims(sd, 3, st))
    return hlt_gpu_fail(c,
                        "operand 3 (stats) must be f32[%lld,%lld,%lld] (one row per segment, head "
                        "and query)",
                        (long long)Bc, (long long)N, (long long)T),
           NULL;
  int64_t rd[3][4] = {{B, N, T, H}, {B, N, S, H}, {B, N, S, Hv}};
  static const char *const rn[3] = {"dQ", "dK", "dV"};
  for (int i = 0; i < 3; i++)
    if (!fmha_same_dims(rd[i], 4, &c->res[i]))
      return hlt_gpu_fail(c,
                          "result %d (%s) must be [%lld,%lld,%lld,%lld] (batch, heads, sequence, "
                          "head size)",
                          i, rn[i], (long long)rd[i][0], (long long)rd[i][1], (long long)rd[i][2],
                          (long long)rd[i][3]),
             NULL;
  for (int i = 6; i < 8; i++)
    if (c->ops[i].dtype != HLO_S32 || elements(&c->ops[i]) != Bc)
      return hlt_gpu_fail(c,
                          "operand %d (%s) must be s32 with %lld elements (one length per "
                          "segment: batch times max_seg_per_batch)",
                          i, i == 6 ? "q_seqlen" : "kv_seqlen", (long long)Bc),
             NULL;
  for (int i = 8; i < 10; i++)
    if (c->ops[i].dtype != HLO_S32 || elements(&c->ops[i]) < Bc + 1)
      return hlt_gpu_fail(c,
                          "operand %d (%s) must be s32 with at least %lld elements (the element "
                          "offset of each of the %lld segments, and one more)",
                          i, i == 8 ? "q_offsets" : "kv_offsets", (long long)(Bc + 1),
                          (long long)Bc),
             NULL;
  GpuMod m = {0};
  m.ct = (q->dtype == HLO_F64) ? HLO_F64 : HLO_F32;
  m.rank = 4;
  m.dims[0] = Bc; m.dims[1] = N; m.dims[2] = T; m.dims[3] = S;
  fmha_prelude(&m);
  int lens[2];
  seq_lens(&m, c, 6, Bc, lens);
  int offq = s64_lead(&m, &c->ops[8], 8, Bc), offkv = s64_lead(&m, &c->ops[9], 9, Bc);
  int vq = gather_ragged(&m, q, 0, qn, qt, qh, offq, lens[0], Bc, N, T, H);
  int vk = gather_ragged(&m, k, 1, kn, ks, kh, offkv, lens[1], Bc, N, S, H);
  int vv = gather_ragged(&m, v, 2, vn, vs, vh, offkv, lens[1], Bc, N, S, Hv);
  int vdo = gather_ragged(&m, dO, 4, dn, dt, dh, offq, lens[0], Bc, N, T, Hv);
  int vo = gather_ragged(&m, O, 5, dn, dt, dh, offq, lens[0], Bc, N, T, Hv);
  int vs_ = hlt_gpu_operand(&m, st, 3, GPU_ROUND_NONE);
  Cfg fc = *f;
  fc.padding = true;
  Mask mk = fmha_build_mask_lens(&m, &fc, -1, lens);
  Dims cqk = {{0, 1}, {0, 1}, {3}, {3}, 2, 2, 1, 1}, cpd = {{0, 1}, {0, 1}, {2}, {2}, 2, 2, 1, 1},
       csk = {{0, 1}, {0, 1}, {3}, {2}, 2, 2, 1, 1};
  int sc = fmha_scores(c, &m, &fc, vq, vk, &cqk, -1, &mk);
  if (sc < 0) { free(m.t.p); return NULL; }
  int p = hlt_gpu_unary(&m, "exponential",
                        hlt_gpu_binary(&m, "subtract", sc, fmha_row_broadcast(&m, vs_)));
  p = fmha_select_v(&m, mk.valid, p, hlt_gpu_splat(&m, 0));
  int dp = fmha_dot(&m, vdo, vv, m.dims, 4, &cqk);
  int64_t dvd[4] = {Bc, N, T, Hv};
  int e = hlt_gpu_emit(&m, m.ct, dvd, 4, "multiply(");
  hlc_text_printf(&m.t, "v%d, v%d)\n", vdo, vo);
  int z = hlt_gpu_emit(&m, m.ct, NULL, 0, "constant(0)\n");
  int dd = hlt_gpu_emit(&m, m.ct, sd, 3, "reduce(");
  hlc_text_printf(&m.t, "v%d, v%d), dimensions={3}, to_apply=sum\n", e, z);
  int ds = hlt_gpu_binary(&m, "multiply", p,
                          hlt_gpu_binary(&m, "subtract", dp, fmha_row_broadcast(&m, dd)));
  int64_t qd[4] = {Bc, N, T, H}, kd[4] = {Bc, N, S, H}, vd[4] = {Bc, N, S, Hv};
  int gq = fmha_dot(&m, ds, vk, qd, 4, &csk), gk = fmha_dot(&m, ds, vq, kd, 4, &cpd);
  int gv = fmha_dot(&m, p, vdo, vd, 4, &cpd);
  if (f->scale != 1) {
    int gs[2] = {gq, gk};
    for (int i = 0; i < 2; i++) {
      const int64_t *d = i ? kd : qd;
      int k0 = hlt_gpu_emit(&m, m.ct, NULL, 0, "constant(");
      hlt_gpu_text_double(&m.t, f->scale);
      hlc_text_printf(&m.t, ")\n");
      int kb2 = hlt_gpu_emit(&m, m.ct, d, 4, "broadcast(");
      hlc_text_printf(&m.t, "v%d), dimensions={}\n", k0);
      int y = hlt_gpu_emit(&m, m.ct, d, 4, "multiply(");
      hlc_text_printf(&m.t, "v%d, v%d)\n", gs[i], kb2);
      gs[i] = y;
    }
    gq = gs[0];
    gk = gs[1];
  }
  int outs[3];
  outs[0] = scatter_ragged(&m, gq, &c->res[0], offq, lens[0], Bc, N, T, H);
  outs[1] = scatter_ragged(&m, gk, &c->res[1], offkv, lens[1], Bc, N, S, H);
  outs[2] = scatter_ragged(&m, gv, &c->res[2], offkv, lens[1], Bc, N, S, Hv);
  if (hlt_gpu_finish(&m, c->res, outs, 3)) {
    free(m.t.p);
    hlt_gpu_fail(c, "out of memory");
    return NULL;
  }
  return m.t.p;
}
