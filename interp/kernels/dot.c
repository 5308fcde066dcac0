/* dot.c: the dot kernel (general dimension numbers, every numeric type) and
 * this area's registrar (dot, convolution).
 *
 * A dot is viewed as a batch of matrix products: B = the batch dims, M = the
 * lhs free dims, N = the rhs free dims, K = the contracting dims (each group
 * flattened row-major in its listed order). The result is [B][M][N]
 * row-major, which is exactly XLA's result order (batch, lhs free, rhs
 * free). Operands are converted to the result type and then to the compute
 * type (hlk_ctype_for). Float compute types go to the blocked GEMM, reading
 * the operands in place through strides when each group collapses to one
 * stride, else from a permuted copy. Integer and pred dots go to the integer
 * GEMM, in 32-bit lanes when the result has at most 32 bits (its low bits
 * are all the store keeps; hlk_int_lanes), else in 64-bit lanes; wrapping
 * multiply-add gives the same bits in any order. Complex dots run an exact
 * reference loop (also kept for every type as the tests' cross-check).
 *
 * ragged-dot is rewritten onto the same dot (see below). Not here:
 * scaled-dot's dequantization (scaled_dot.c, which then runs this dot).
 */
#include "interp/kernels/gemm.h"
#include "interp/kernels/register.h"
#include <complex.h>
#include <stdlib.h>
#include <string.h>

/* ---- Dimension analysis ------------------------------------------------- */

/* The dims of one operand sorted into roles, in the order they flatten. */
typedef struct Roles {
  int64_t batch[HLK_MAX_RANK], free[HLK_MAX_RANK], contract[HLK_MAX_RANK];
  int nbatch, nfree, ncontract;
} Roles;

static bool listed(const HloI64s *l, int64_t d) {
  for (int32_t i = 0; i < l->n; i++)
    if (l->v[i] == d) return true;
  return false;
}

static void roles_of(int rank, const HloI64s *batch, const HloI64s *contract, Roles *r) {
  r->nbatch = batch->n;
  r->ncontract = contract->n;
  for (int i = 0; i < batch->n; i++) r->batch[i] = batch->v[i];
  for (int i = 0; i < contract->n; i++) r->contract[i] = contract->v[i];
  r->nfree = 0;
  for (int d = 0; d < rank; d++)
    if (!listed(batch, d) && !listed(contract, d)) r->free[r->nfree++] = d;
}

static int64_t extent(const int64_t *dims, const int64_t *d, int n) {
  int64_t e = 1;
  for (int i = 0; i < n; i++) e *= dims[d[i]];
  return e;
}

/* The roles of both operands' dims and the product's extents: batch nb,
 * rows m, columns n, shared k. */
typedef struct Product { Roles l, r; int64_t nb, m, n, k; } Product;
static void product_of(const HloDotDims *dn, int lrank, const int64_t *ldims, int rrank,
                       const int64_t *rdims, Product *p) {
  roles_of(lrank, &dn->lhs_batch, &dn->lhs_contracting, &p->l);
  roles_of(rrank, &dn->rhs_batch, &dn->rhs_contracting, &p->r);
  p->nb = extent(ldims, p->l.batch, p->l.nbatch);
  p->m = extent(ldims, p->l.free, p->l.nfree);
  p->n = extent(rdims, p->r.free, p->r.nfree);
  p->k = extent(ldims, p->l.contract, p->l.ncontract);
}

/* Dimension lists must name distinct in-range dims. */
static int check_list(HliExec *x, const HloInstr *ins, const HloI64s *l, int rank,
                      const char *what, bool seen[]) {
  for (int32_t i = 0; i < l->n; i++) {
    int64_t d = l->v[i];
    if (d < 0 || d >= rank)
      return hli_fail(x, ins, "%s dimension %lld out of range for rank %d", what, (long long)d, rank);
    if (seen[d]) return hli_fail(x, ins, "dimension %lld listed twice (%s)", (long long)d, what);
    seen[d] = true;
  }
  return 0;
}

int hlk_dot_check(HliExec *x, const HloInstr *ins) {
  if (ins->nops > 2)
    return hli_unsupported(x, ins, "sparse dot (%d operands with sparsity metadata)", ins->nops);
  if (ins->nops != 2) return hli_fail(x, ins, "dot takes 2 operands, got %d", ins->nops);
  for (int32_t i = 0; i < ins->nattrs; i++)
    if (strcmp(ins->attrs[i].name, "sparsity") == 0)
      return hli_unsupported(x, ins, "sparse dot (sparsity attribute)");
  if (hlk_check_operand_types(x, ins, "dot") != 0) return -1;
  const HloShape *ls = &ins->ops[0]->shape, *rs = &ins->ops[1]->shape, *os = &ins->shape;
  if (ls->rank > HLK_MAX_RANK || rs->rank > HLK_MAX_RANK)
    return hli_unsupported(x, ins, "dot operand rank above %d", HLK_MAX_RANK);
  const HloDotDims *dn = &ins->dot;
  if (dn->lhs_batch.n != dn->rhs_batch.n)
    return hli_fail(x, ins, "lhs has %d batch dimensions but rhs has %d", dn->lhs_batch.n,
                    dn->rhs_batch.n);
  if (dn->lhs_contracting.n != dn->rhs_contracting.n)
    return hli_fail(x, ins, "lhs has %d contracting dimensions but rhs has %d",
                    dn->lhs_contracting.n, dn->rhs_contracting.n);
  bool lseen[HLK_MAX_RANK] = {0}, rseen[HLK_MAX_RANK] = {0};
  if (check_list(x, ins, &dn->lhs_batch, ls->rank, "lhs batch", lseen) ||
      check_list(x, ins, &dn->lhs_contracting, ls->rank, "lhs contracting", lseen) ||
      check_list(x, ins, &dn->rhs_batch, rs->rank, "rhs batch", rseen) ||
      check_list(x, ins, &dn->rhs_contracting, rs->rank, "rhs contracting", rseen))
    return -1;
  for (int32_t i = 0; i < dn->lhs_batch.n; i++)
    if (ls->dims[dn->lhs_batch.v[i]] != rs->dims[dn->rhs_batch.v[i]])
      return hli_fail(x, ins, "batch dimension sizes differ: lhs %lld vs rhs %lld",
                      (long long)ls->dims[dn->lhs_batch.v[i]],
                      (long long)rs->dims[dn->rhs_batch.v[i]]);
  for (int32_t i = 0; i < dn->lhs_contracting.n; i++)
    if (ls->dims[dn->lhs_contracting.v[i]] != rs->dims[dn->rhs_contracting.v[i]])
      return hli_fail(x, ins, "contracting dimension sizes differ: lhs %lld vs rhs %lld",
                      (long long)ls->dims[dn->lhs_contracting.v[i]],
                      (long long)rs->dims[dn->rhs_contracting.v[i]]);
  Roles l, r;
  roles_of(ls->rank, &dn->lhs_batch, &dn->lhs_contracting, &l);
  roles_of(rs->rank, &dn->rhs_batch, &dn->rhs_contracting, &r);
  int want = l.nbatch + l.nfree + r.nfree;
  bool ok = os->rank == want;
  for (int i = 0; ok && i < l.nbatch; i++) ok = os->dims[i] == ls->dims[l.batch[i]];
  for (int i = 0; ok && i < l.nfree; i++) ok = os->dims[l.nbatch + i] == ls->dims[l.free[i]];
  for (int i = 0; ok && i < r.nfree; i++)
    ok = os->dims[l.nbatch + l.nfree + i] == rs->dims[r.free[i]];
  if (!ok) return hli_fail(x, ins, "result shape does not match the dot's dimension numbers");
  return 0;
}

/* ---- Operand views ------------------------------------------------------ */

/* An operand as a strided [B][rows][cols] matrix batch of compute-type
 * elements, possibly backed by a scratch copy. */
typedef struct View {
  const void *p;
  int64_t bs, rs, cs;
  int64_t *boff;     /* per-batch offsets when the batch dims do not flatten
                        (owned), else NULL and bs applies */
  uint8_t src;       /* HLK_SRC_*: bf16/f16 data read in place by the GEMM */
  void *owned;       /* scratch to free, or NULL */
} View;

/* Element offset of every batch index (row-major over bd), for batch dims
 * that cannot be walked with one stride. NULL if out of memory. */
static int64_t *batch_offsets(const int64_t *dims, const int64_t *strides, const int64_t *bd,
                              int nb) {
  int64_t total = extent(dims, bd, nb), idx[HLK_MAX_RANK] = {0}, off = 0;
  int64_t *o = malloc((size_t)(total ? total : 1) * sizeof *o);
  if (!o) return NULL;
  for (int64_t t = 0; t < total; t++) {
    o[t] = off;
    for (int i = nb - 1; i >= 0; i--) {
      off += strides[bd[i]];
      if (++idx[i] < dims[bd[i]]) break;
      off -= strides[bd[i]] * dims[bd[i]];
      idx[i] = 0;
    }
  }
  return o;
}

/* Build the view of operand v whose dims play roles (batch, rowdims,
 * coldims). The data is used in place when the operand already holds the
 * compute type and each group collapses to a single stride; otherwise it is
 * converted and, if needed, permuted into a dense [B][rows][cols] copy.
 * lanes: 0 for the compute type, else an integer dot in 32-bit lanes
 * (32: hlk_load_u32) or as int16 values for the pair kernel (16:
 * hlk_load_i16). */
static int make_view(HliExec *x, const HloInstr *ins, const HliValue *v, HloDtype to,
                     const int64_t *bd, int nb, const int64_t *rd, int nr, const int64_t *cd,
                     int nc, bool for_gemm, int lanes, View *out) {
  HlkCType ct = hlk_ctype_for(to);
  size_t es = lanes ? (size_t)lanes / 8 : hlk_ctype_size(ct);
  int64_t strides[HLK_MAX_RANK];
  hli_strides(v->dims, v->rank, strides);
  /* bf16/f16 operands widen exactly to f32 (when the result type keeps
   * them), which the GEMM's packing does on the fly. */
  bool narrow = for_gemm && ct == HLK_CT_F32 && (v->dtype == HLO_BF16 || v->dtype == HLO_F16) &&
                (to == v->dtype || to == HLO_F32);
  out->src = narrow ? (v->dtype == HLO_BF16 ? HLK_SRC_BF16 : HLK_SRC_F16) : HLK_SRC_NATIVE;
  /* Integer operands already of the lane width are their own lanes (modulo
   * 2^32 is all a result of at most 32 bits needs: hlk_load_u32). */
  bool same_int = ct == HLK_CT_I64 && to != HLO_PRED &&
                  (lanes == 16 ? v->dtype == HLO_S16
                   : lanes == 32 ? v->dtype == HLO_S32 || v->dtype == HLO_U32
                   : (v->dtype == HLO_S64 || v->dtype == HLO_U64) && hlc_dtype_bits(to) == 64);
  bool in_place = (ct == HLK_CT_F32 && v->dtype == HLO_F32 && (to == HLO_F32)) ||
                  (ct == HLK_CT_F64 && v->dtype == HLO_F64) || narrow || same_int;
  /* Rows and columns must each flatten to one stride; batch dims that do
   * not (attention's {0,2}, say) get an offset table instead of a copy. */
  bool flat = hlk_collapse_dims(v->dims, strides, rd, nr, &out->rs) &&
              hlk_collapse_dims(v->dims, strides, cd, nc, &out->cs);
  out->owned = NULL;
  out->boff = NULL;
  if (flat && !hlk_collapse_dims(v->dims, strides, bd, nb, &out->bs)) {
    out->boff = batch_offsets(v->dims, strides, bd, nb);
    if (!out->boff) return hli_fail_nomem(x, ins, "out of memory for dot batch offsets");
  }
  if (in_place && flat) { out->p = v->data; return 0; }
  size_t n = (size_t)v->nelem;
  void *conv = hli_scratch_alloc(x, ins, n * es);   /* counted against --max-memory */
  if (!conv) {
    free(out->boff);
    out->boff = NULL;
    return -1;
  }
  if (lanes == 16) hlk_load_i16(v->dtype, to, v->data, (int64_t)n, conv);
  else if (lanes == 32) hlk_load_u32(v->dtype, to, v->data, (int64_t)n, conv);
  else hlk_load_ctype(v->dtype, to, v->data, (int64_t)n, conv);
  out->src = HLK_SRC_NATIVE;
  if (flat) { out->p = out->owned = conv; return 0; }
  int perm[HLK_MAX_RANK], k = 0;
  for (int i = 0; i < nb; i++) perm[k++] = (int)bd[i];
  for (int i = 0; i < nr; i++) perm[k++] = (int)rd[i];
  for (int i = 0; i < nc; i++) perm[k++] = (int)cd[i];
  void *dense = hli_scratch_alloc(x, ins, n * es);
  if (!dense) { hli_scratch_free(x, conv); free(out->boff); out->boff = NULL; return -1; }
  hlk_permute_copy(conv, v->dims, v->rank, perm, es, dense);
  hli_scratch_free(x, conv);
  int64_t rows = extent(v->dims, rd, nr), cols = extent(v->dims, cd, nc);
  out->p = out->owned = dense;
  out->cs = 1;
  out->rs = cols;
  out->bs = rows * cols;
  return 0;
}

/* ---- Reference loops (exact, every compute type) ------------------------ */

/* C[b][i][j] = sum_p A[b][i][p] * B[b][p][j], each sum sequential in p
 * (the evaluator's order). Rows of C are built p-outer so B is read along
 * its rows. Integers multiply and add modulo 2^64 (unsigned arithmetic, so
 * no UB); the store truncates to the result width, which gives XLA's
 * wrap-around. */
#define DEFINE_REF(SUF, T)                                                                 \
  static void ref_##SUF(const View *a, const View *b, int64_t nb, int64_t m, int64_t n,    \
                        int64_t k, T *restrict c) {                                        \
    const T *A = a->p, *B = b->p;                                                          \
    for (int64_t bi = 0; bi < nb; bi++) {                                                  \
      const T *ab = A + (a->boff ? a->boff[bi] : bi * a->bs);                              \
      const T *bb = B + (b->boff ? b->boff[bi] : bi * b->bs);                              \
      for (int64_t i = 0; i < m; i++) {                                                    \
        T *restrict crow = c + (bi * m + i) * n;                                           \
        for (int64_t j = 0; j < n; j++) crow[j] = 0;                                       \
        for (int64_t p = 0; p < k; p++) {                                                  \
          T av = ab[i * a->rs + p * a->cs];                                                \
          const T *brow = bb + p * b->rs;                                                  \
          if (b->cs == 1)                                                                  \
            for (int64_t j = 0; j < n; j++) crow[j] = crow[j] + av * brow[j];              \
          else                                                                             \
            for (int64_t j = 0; j < n; j++) crow[j] = crow[j] + av * brow[j * b->cs];      \
        }                                                                                  \
      }                                                                                    \
    }                                                                                      \
  }
DEFINE_REF(f32, float)
DEFINE_REF(f64, double)
DEFINE_REF(c64, float complex)
DEFINE_REF(c128, double complex)
DEFINE_REF(u64, uint64_t)

/* ---- The kernel --------------------------------------------------------- */

/* Rounding a large f32 result to bf16/f16 shared out over the threads: done
 * by one thread after the product it cost a bf16 1024^3 matmul ~4% of its
 * time while the other thread waited. Elementwise, so the split changes no
 * bits. */
enum { STORE_CHUNK = 1 << 16 };
typedef struct Store16 { HloDtype to; const float *src; uint16_t *dst; int64_t n; } Store16;

static void store16_chunks(void *arg, int64_t lo, int64_t hi) {
  const Store16 *s = arg;
  int64_t i0 = lo * STORE_CHUNK, i1 = hi * STORE_CHUNK < s->n ? hi * STORE_CHUNK : s->n;
  hlk_store_ctype(s->to, s->src + i0, i1 - i0, s->dst + i0);
}

static void store_result(HliExec *x, HloDtype to, const void *c, int64_t n, void *dst) {
  if ((to == HLO_BF16 || to == HLO_F16) && n >= 2 * STORE_CHUNK) {
    Store16 s = { .to = to, .src = c, .dst = dst, .n = n };
    hli_parallel_for(x, (n + STORE_CHUNK - 1) / STORE_CHUNK, 1, store16_chunks, &s);
  } else {
    hlk_store_ctype(to, c, n, dst);
  }
}

int hlk_dot_run(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out,
                bool force_ref) {
  const HliValue *lv = in[0], *rv = in[1];
  Product pr;
  product_of(&ins->dot, lv->rank, lv->dims, rv->rank, rv->dims, &pr);
  const Roles l = pr.l, r = pr.r;
  int64_t nb = pr.nb, m = pr.m, n = pr.n, k = pr.k;
  if (out->nelem == 0) return 0;
  HloDtype to = out->dtype;
  HlkCType ct = hlk_ctype_for(to);
  View a, b;
  bool gemm = (ct == HLK_CT_F32 || ct == HLK_CT_F64 || ct == HLK_CT_I64) && !force_ref;
  bool lanes32 = gemm && ct == HLK_CT_I64 && hlk_int_lanes(to, k) == 32;
  /* Operands that fit in int16 take the pair kernel (twice the products
   * per instruction); the result is still 32-bit lanes. */
  int lanes = !lanes32 ? 0
            : hlk_fits_i16(lv->dtype, to) && hlk_fits_i16(rv->dtype, to) ? 16 : 32;
  if (make_view(x, ins, lv, to, l.batch, l.nbatch, l.free, l.nfree, l.contract, l.ncontract, gemm,
                lanes, &a))
    return -1;
  if (make_view(x, ins, rv, to, r.batch, r.nbatch, r.contract, r.ncontract, r.free, r.nfree, gemm,
                lanes, &b)) {
    hli_scratch_free(x, a.owned);
    free(a.boff);
    return -1;
  }
  /* Results already in the compute type are written in place. */
  bool direct = (ct == HLK_CT_F32 && to == HLO_F32) || (ct == HLK_CT_F64 && to == HLO_F64) ||
                (ct == HLK_CT_C64 && to == HLO_C64) || (ct == HLK_CT_C128 && to == HLO_C128) ||
                (lanes32 && (to == HLO_S32 || to == HLO_U32)) ||
                (!lanes32 && (to == HLO_S64 || to == HLO_U64));
  size_t ces = lanes32 ? 4 : hlk_ctype_size(ct);
  void *c = direct ? out->data : hli_scratch_alloc(x, ins, (size_t)out->nelem * ces);
  int rc = 0;
  if (!c) {
    rc = -1;   /* hli_scratch_alloc said why */
  } else if (gemm) {
    HlkGemm g = { .ins = ins, .batch = nb, .m = m, .n = n, .k = k,
                  .a = a.p, .a_bs = a.bs, .a_rs = a.rs, .a_cs = a.cs,
                  .b = b.p, .b_bs = b.bs, .b_rs = b.rs, .b_cs = b.cs,
                  .c = c, .c_bs = m * n, .ldc = n, .a_boff = a.boff, .b_boff = b.boff,
                  .a_src = a.src, .b_src = b.src };
    if (ct == HLK_CT_F32 && hlk_gemv_f32_applies(&g)) hlk_gemv_f32(x, &g);
    else rc = ct == HLK_CT_F32 ? hlk_gemm_f32(x, &g)
            : ct == HLK_CT_F64 ? hlk_gemm_f64(x, &g)
            : lanes == 16 ? hlk_gemm_i16(x, &g)
            : lanes32 ? hlk_gemm_u32(x, &g) : hlk_gemm_u64(x, &g);
  } else {
    switch (ct) {
    case HLK_CT_F32: ref_f32(&a, &b, nb, m, n, k, c); break;
    case HLK_CT_F64: ref_f64(&a, &b, nb, m, n, k, c); break;
    case HLK_CT_C64: ref_c64(&a, &b, nb, m, n, k, c); break;
    case HLK_CT_C128: ref_c128(&a, &b, nb, m, n, k, c); break;
    default: ref_u64(&a, &b, nb, m, n, k, c); break;
    }
  }
  if (c && !direct) {
    if (rc == 0 && lanes32) hlk_store_u32(to, c, out->nelem, out->data);
    else if (rc == 0 && ct == HLK_CT_F32) store_result(x, to, c, out->nelem, out->data);
    else if (rc == 0) hlk_store_ctype(to, c, out->nelem, out->data);
    hli_scratch_free(x, c);
  }
  hli_scratch_free(x, a.owned);
  hli_scratch_free(x, b.owned);
  free(a.boff);
  free(b.boff);
  return rc;
}

/* ---- The product as a GEMM, for kernels that run parts of it ---------- */

bool hlk_dot_gemm_f32_applies(const HloInstr *ins) {
  HloDtype to = ins->shape.dtype;
  if (ins->op != HLO_OP_DOT || ins->nops != 2 ||
      (to != HLO_F32 && to != HLO_BF16 && to != HLO_F16) || hlk_dot_check(NULL, ins) != 0)
    return false;
  const HloShape *ls = &ins->ops[0]->shape, *rs = &ins->ops[1]->shape;
  Product p;
  product_of(&ins->dot, ls->rank, ls->dims, rs->rank, rs->dims, &p);
  /* f32, bf16 and f16 operands (read in place or converted), and a product
   * the unfused kernel gives to the GEMM, not to the matrix-vector loops
   * (one row or one column: another summation order). */
  for (int i = 0; i < 2; i++) {
    HloDtype t = ins->ops[i]->shape.dtype;
    if (t != HLO_F32 && t != HLO_BF16 && t != HLO_F16) return false;
  }
  return p.m >= 2 && p.n >= 2;
}

int hlk_dot_gemm(HliExec *x, const HloInstr *ins, const HliValue *lhs, const HliValue *rhs,
                 HlkDotGemm *d) {
  memset(d, 0, sizeof *d);
  const HloShape *ls = &ins->ops[0]->shape, *rs = &ins->ops[1]->shape;
  Product p;
  product_of(&ins->dot, ls->rank, ls->dims, rs->rank, rs->dims, &p);
  const Roles l = p.l, r = p.r;
  View a = {0}, b = {0};
  /* The operands as the unfused dot sees them: converted to a bf16/f16
   * result's type first where that rounds them (make_view). */
  HloDtype to = ins->shape.dtype;
  if (lhs && make_view(x, ins, lhs, to, l.batch, l.nbatch, l.free, l.nfree, l.contract,
                       l.ncontract, true, 0, &a))
    return -1;
  if (rhs && make_view(x, ins, rhs, to, r.batch, r.nbatch, r.contract, r.ncontract, r.free,
                       r.nfree, true, 0, &b)) {
    hli_scratch_free(x, a.owned);
    free(a.boff);
    return -1;
  }
  d->g = (HlkGemm){ .ins = ins, .batch = p.nb, .m = p.m, .n = p.n, .k = p.k,
                    .a = a.p, .a_bs = a.bs, .a_rs = a.rs, .a_cs = a.cs,
                    .b = b.p, .b_bs = b.bs, .b_rs = b.rs, .b_cs = b.cs,
                    .c_bs = p.m * p.n, .ldc = p.n, .a_boff = a.boff, .b_boff = b.boff,
                    .a_src = a.src, .b_src = b.src };
  d->owned[0] = a.owned;
  d->owned[1] = b.owned;
  return 0;
}

void hlk_dot_gemm_free(HliExec *x, HlkDotGemm *d) {
  hli_scratch_free(x, d->owned[0]);
  hli_scratch_free(x, d->owned[1]);
  free((void *)d->g.a_boff);
  free((void *)d->g.b_boff);
  memset(d, 0, sizeof *d);
}

/* ---- ragged-dot ---------------------------------------------------------- */

/* ragged-dot(lhs, rhs, group_sizes) is run as a dot over a densified lhs
 * (and rhs), the way XLA's ragged-dot rewriter defines it: group_sizes has
 * shape [p..., g], its leading dims matching lhs's leading dims; the operand
 * gets a group dim inserted at position rank(group_sizes)-1, and element
 * (.., gi, .., r, ..) keeps the operand's value when start(gi) <= r <
 * end(gi) along the ragged dim (cumulative group sizes), else zero.
 *   ragged non-contracting dim: lhs densified, the new dim is contracted
 *     with rhs's group dim: rows outside every group give zeros;
 *   ragged contracting dim: lhs and rhs densified, the new dim becomes the
 *     first batch dim: result [g, batch..., lhs free, rhs free];
 *   ragged batch dim: a plain dot. */
typedef enum { RAGGED_NONCONTRACTING, RAGGED_CONTRACTING, RAGGED_BATCH } RaggedMode;

typedef struct Ragged {
  RaggedMode mode;
  int gpos;                       /* where the group dim is inserted */
  int64_t ngroups;
  int64_t lrag, rrag;             /* ragged dim of lhs (and of rhs, contracting mode) */
  HloDotDims dn;                  /* dimension numbers of the equivalent dot */
  int64_t v[6][HLK_MAX_RANK + 1]; /* storage for dn's lists */
  int64_t ldims[HLK_MAX_RANK + 1], rdims[HLK_MAX_RANK + 1];   /* dense operand dims */
  int lrank, rrank;
} Ragged;

/* dims with a group dim of size g inserted at pos. */
static void insert_dim(const int64_t *dims, int rank, int pos, int64_t g, int64_t *out) {
  for (int i = 0, k = 0; i <= rank; i++) out[i] = i == pos ? g : dims[k++];
}

/* List l with every dim >= pos shifted by one (a dim was inserted), with
 * `first` (if >= 0) put in front; written to st, described in *o. */
static void shift_list(const HloI64s *l, int pos, int64_t first, int64_t *st, HloI64s *o) {
  int n = 0;
  if (first >= 0) st[n++] = first;
  for (int32_t i = 0; i < l->n; i++) st[n++] = l->v[i] >= pos ? l->v[i] + 1 : l->v[i];
  o->n = n;
  o->v = st;
}

static int ragged_plan(HliExec *x, const HloInstr *ins, const HloShape *ls, const HloShape *rs,
                       const HloShape *gs, Ragged *rg) {
  const HloDotDims *d = &ins->dot;
  if (d->lhs_ragged.n != 1)
    return hli_unsupported(x, ins, "ragged-dot with %d lhs ragged dimensions (1 supported)",
                           d->lhs_ragged.n);
  if (!hlc_dtype_is_int(gs->dtype) || gs->rank < 1)
    return hli_fail(x, ins, "group_sizes must be an integer array of rank >= 1");
  if (ls->rank > HLK_MAX_RANK - 1 || rs->rank > HLK_MAX_RANK - 1)
    return hli_unsupported(x, ins, "ragged-dot operand rank above %d", HLK_MAX_RANK - 1);
  int64_t lr = d->lhs_ragged.v[0];
  if (lr < 0 || lr >= ls->rank) return hli_fail(x, ins, "lhs ragged dimension out of range");
  rg->lrag = lr;
  rg->rrag = -1;
  rg->mode = listed(&d->lhs_contracting, lr) ? RAGGED_CONTRACTING
           : listed(&d->lhs_batch, lr) ? RAGGED_BATCH : RAGGED_NONCONTRACTING;
  rg->gpos = gs->rank - 1;
  rg->ngroups = gs->dims[gs->rank - 1];
  if (rg->gpos > lr)
    return hli_fail(x, ins, "group_sizes has more leading dimensions than lhs has before its "
                    "ragged dimension");
  for (int i = 0; i < rg->gpos; i++)
    if (gs->dims[i] != ls->dims[i])
      return hli_fail(x, ins, "group_sizes dimension %d (%lld) does not match lhs (%lld)", i,
                      (long long)gs->dims[i], (long long)ls->dims[i]);
  HloDotDims *n = &rg->dn;
  memset(n, 0, sizeof *n);
  int g = rg->gpos;
  rg->lrank = ls->rank + 1;
  insert_dim(ls->dims, ls->rank, g, rg->ngroups, rg->ldims);
  rg->rrank = rs->rank;
  memcpy(rg->rdims, rs->dims, (size_t)rs->rank * sizeof(int64_t));
  switch (rg->mode) {
  case RAGGED_NONCONTRACTING:
    if (d->rhs_group.n != 1)
      return hli_fail(x, ins, "ragged-dot with a ragged non-contracting dimension needs one "
                      "rhs group dimension");
    if (d->rhs_group.v[0] < 0 || d->rhs_group.v[0] >= rs->rank ||
        rs->dims[d->rhs_group.v[0]] != rg->ngroups)
      return hli_fail(x, ins, "rhs group dimension must exist and have %lld groups",
                      (long long)rg->ngroups);
    shift_list(&d->lhs_batch, g, -1, rg->v[0], &n->lhs_batch);
    shift_list(&d->lhs_contracting, g, g, rg->v[1], &n->lhs_contracting);
    shift_list(&d->rhs_batch, INT32_MAX, -1, rg->v[2], &n->rhs_batch);
    shift_list(&d->rhs_contracting, INT32_MAX, d->rhs_group.v[0], rg->v[3], &n->rhs_contracting);
    break;
  case RAGGED_CONTRACTING: {
    if (d->rhs_group.n != 0)
      return hli_fail(x, ins, "ragged-dot with a ragged contracting dimension takes no rhs group "
                      "dimension");
    int32_t at = 0;
    while (d->lhs_contracting.v[at] != lr) at++;
    rg->rrag = d->rhs_contracting.v[at];
    if (rg->rrag < g)
      return hli_unsupported(x, ins, "ragged-dot: rhs ragged dimension before the group "
                             "position");
    for (int i = 0; i < g; i++)
      if (rs->dims[i] != gs->dims[i])
        return hli_fail(x, ins, "group_sizes dimension %d (%lld) does not match rhs (%lld)", i,
                        (long long)gs->dims[i], (long long)rs->dims[i]);
    rg->rrank = rs->rank + 1;
    insert_dim(rs->dims, rs->rank, g, rg->ngroups, rg->rdims);
    shift_list(&d->lhs_batch, g, g, rg->v[0], &n->lhs_batch);
    shift_list(&d->lhs_contracting, g, -1, rg->v[1], &n->lhs_contracting);
    shift_list(&d->rhs_batch, g, g, rg->v[2], &n->rhs_batch);
    shift_list(&d->rhs_contracting, g, -1, rg->v[3], &n->rhs_contracting);
    break;
  }
  case RAGGED_BATCH:
    if (d->rhs_group.n != 0)
      return hli_fail(x, ins, "ragged-dot with a ragged batch dimension takes no rhs group "
                      "dimension");
    rg->lrank = ls->rank;
    memcpy(rg->ldims, ls->dims, (size_t)ls->rank * sizeof(int64_t));
    n->lhs_batch = d->lhs_batch;
    n->lhs_contracting = d->lhs_contracting;
    n->rhs_batch = d->rhs_batch;
    n->rhs_contracting = d->rhs_contracting;
    break;
  }
  return 0;
}

static int ragged_check(HliExec *x, const HloInstr *ins) {
  if (ins->nops != 3) return hli_fail(x, ins, "ragged-dot takes 3 operands, got %d", ins->nops);
  Ragged rg;
  const HloShape *ls = &ins->ops[0]->shape, *rs = &ins->ops[1]->shape, *gs = &ins->ops[2]->shape;
  if (!hlc_dtype_is_array(ls->dtype) || !hlc_dtype_is_array(rs->dtype) ||
      !hlc_dtype_is_array(gs->dtype))
    return hli_fail(x, ins, "ragged-dot operands must be arrays");
  if (ragged_plan(x, ins, ls, rs, gs, &rg)) return -1;
  /* The equivalent dot must check out. */
  HloInstr dot = *ins, l = *ins->ops[0], r = *ins->ops[1];
  HloInstr *ops[2] = { &l, &r };
  l.shape.rank = rg.lrank;
  l.shape.dims = rg.ldims;
  r.shape.rank = rg.rrank;
  r.shape.dims = rg.rdims;
  dot.nops = 2;
  dot.ops = ops;
  dot.dot = rg.dn;
  return hlk_dot_check(x, &dot);
}

/* Copy of operand v with the group dim inserted and rows outside each group
 * zeroed (see above). starts/ends: [prefix][group] row ranges. */
static HliValue *densify(HliExec *x, const HliValue *v, const Ragged *rg, int64_t rag,
                         const int64_t *starts, const int64_t *ends, const int64_t *dims,
                         int rank, HloShape *shape) {
  shape->dtype = v->dtype;
  shape->rank = rank;
  shape->dims = (int64_t *)dims;
  HliValue *d = hli_value_zeros(x, shape);
  if (!d) return NULL;
  size_t es = hlc_dtype_size(v->dtype);
  int g = rg->gpos;
  int64_t sstr[HLK_MAX_RANK], dstr[HLK_MAX_RANK + 1], idx[HLK_MAX_RANK] = {0};
  hli_strides(v->dims, v->rank, sstr);
  hli_strides(dims, rank, dstr);
  /* Walk the operand; each element lands in the groups whose range holds
   * its ragged index. */
  for (int64_t e = 0; e < v->nelem; e++) {
    int64_t prefix = 0, base = 0;
    for (int i = 0; i < v->rank; i++) {
      if (i < g) prefix = prefix * v->dims[i] + idx[i];
      base += idx[i] * dstr[i < g ? i : i + 1];
    }
    int64_t row = idx[rag];
    for (int64_t gi = 0; gi < rg->ngroups; gi++) {
      int64_t k = prefix * rg->ngroups + gi;
      if (starts[k] <= row && row < ends[k])
        memcpy((char *)d->data + (size_t)(base + gi * dstr[g]) * es,
               (const char *)v->data + (size_t)e * es, es);
    }
    for (int i = v->rank - 1; i >= 0; i--) {
      if (++idx[i] < v->dims[i]) break;
      idx[i] = 0;
    }
  }
  (void)sstr;
  return d;
}

static int ragged_run(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  Ragged rg;
  if (ragged_plan(x, ins, in[0]->shape, in[1]->shape, in[2]->shape, &rg)) return -1;
  HloInstr dot = *ins;
  dot.dot = rg.dn;
  if (rg.mode == RAGGED_BATCH) return hlk_dot_run(x, &dot, in, out, false);
  /* Group row ranges from cumulative sizes, per prefix. */
  int64_t ng = in[2]->nelem;
  int64_t *sizes = malloc((size_t)(ng ? ng : 1) * 3 * sizeof(int64_t));
  if (!sizes) return hli_fail_nomem(x, ins, "out of memory for ragged-dot groups");
  int64_t *starts = sizes + ng, *ends = starts + ng;
  hlk_load_ctype(in[2]->dtype, HLO_S64, in[2]->data, ng, sizes);
  for (int64_t p = 0; rg.ngroups && p < ng / rg.ngroups; p++) {
    int64_t acc = 0;
    for (int64_t gi = 0; gi < rg.ngroups; gi++) {
      int64_t k = p * rg.ngroups + gi;
      starts[k] = acc;
      acc += sizes[k];
      ends[k] = acc;
    }
  }
  HloShape lsh, rsh;
  HliValue *l = densify(x, in[0], &rg, rg.lrag, starts, ends, rg.ldims, rg.lrank, &lsh);
  HliValue *r = in[1];
  bool own_r = false;
  if (l && rg.mode == RAGGED_CONTRACTING) {
    r = densify(x, in[1], &rg, rg.rrag, starts, ends, rg.rdims, rg.rrank, &rsh);
    own_r = true;
  }
  int rc;
  if (!l || !r) {
    rc = hli_fail_nomem(x, ins, "out of memory densifying ragged-dot operands");
  } else {
    HliValue *ops[2] = { l, r };
    rc = hlk_dot_run(x, &dot, ops, out, false);
  }
  if (own_r) hli_value_unref(x, r);
  hli_value_unref(x, l);
  free(sizes);
  return rc;
}

static int dot_run(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  return hlk_dot_run(x, ins, in, out, false);
}

static int conv_run(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  return hlk_conv_run(x, ins, in, out, false);
}

void hlk_register_dot_conv(HliOpTable t) {
  t[HLO_OP_DOT] = (HliOpEntry){ .run = dot_run, .check = hlk_dot_check };
  t[HLO_OP_CONVOLUTION] = (HliOpEntry){ .run = conv_run, .check = hlk_conv_check };
  t[HLO_OP_RAGGED_DOT] = (HliOpEntry){ .run = ragged_run, .check = ragged_check };
}
