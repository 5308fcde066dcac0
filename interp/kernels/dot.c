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
 * stride, else from a permuted copy; integer, pred and complex dots run an
 * exact reference loop.
 *
 * Not here: ragged-dot and scaled-dot (no kernel: reported at plan time).
 */
#include "interp/kernels/gemm.h"
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
  if (ins->nops != 2) return hli_fail(x, ins, "dot takes 2 operands, got %d", ins->nops);
  const HloShape *ls = &ins->ops[0]->shape, *rs = &ins->ops[1]->shape, *os = &ins->shape;
  if (!hlc_dtype_is_array(ls->dtype) || !hlc_dtype_is_array(rs->dtype) ||
      !hlc_dtype_is_array(os->dtype))
    return hli_fail(x, ins, "dot operands and result must be arrays");
  if (!hlk_operand_convertible(ls->dtype, os->dtype) ||
      !hlk_operand_convertible(rs->dtype, os->dtype))
    return hli_unsupported(x, ins, "dot of %s and %s to %s", hlc_dtype_name(ls->dtype),
                           hlc_dtype_name(rs->dtype), hlc_dtype_name(os->dtype));
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
  void *owned;       /* scratch to free, or NULL */
} View;

/* Build the view of operand v whose dims play roles (batch, rowdims,
 * coldims). The data is used in place when the operand already holds the
 * compute type and each group collapses to a single stride; otherwise it is
 * converted and, if needed, permuted into a dense [B][rows][cols] copy. */
static int make_view(HliExec *x, const HloInstr *ins, const HliValue *v, HloDtype to,
                     const int64_t *bd, int nb, const int64_t *rd, int nr, const int64_t *cd,
                     int nc, View *out) {
  HlkCType ct = hlk_ctype_for(to);
  size_t es = hlk_ctype_size(ct);
  int64_t strides[HLK_MAX_RANK];
  hli_strides(v->dims, v->rank, strides);
  bool in_place = (ct == HLK_CT_F32 && v->dtype == HLO_F32 && (to == HLO_F32)) ||
                  (ct == HLK_CT_F64 && v->dtype == HLO_F64);
  bool flat = hlk_collapse_dims(v->dims, strides, bd, nb, &out->bs) &&
              hlk_collapse_dims(v->dims, strides, rd, nr, &out->rs) &&
              hlk_collapse_dims(v->dims, strides, cd, nc, &out->cs);
  out->owned = NULL;
  if (in_place && flat) { out->p = v->data; return 0; }
  size_t n = (size_t)v->nelem;
  void *conv = malloc(n ? n * es : 1);
  if (!conv) return hli_fail(x, ins, "out of memory converting a dot operand");
  hlk_load_ctype(v->dtype, to, v->data, (int64_t)n, conv);
  if (flat) { out->p = out->owned = conv; return 0; }
  int perm[HLK_MAX_RANK], k = 0;
  for (int i = 0; i < nb; i++) perm[k++] = (int)bd[i];
  for (int i = 0; i < nr; i++) perm[k++] = (int)rd[i];
  for (int i = 0; i < nc; i++) perm[k++] = (int)cd[i];
  void *dense = malloc(n ? n * es : 1);
  if (!dense) { free(conv); return hli_fail(x, ins, "out of memory permuting a dot operand"); }
  hlk_permute_copy(conv, v->dims, v->rank, perm, es, dense);
  free(conv);
  int64_t rows = extent(v->dims, rd, nr), cols = extent(v->dims, cd, nc);
  out->p = out->owned = dense;
  out->cs = 1;
  out->rs = cols;
  out->bs = rows * cols;
  return 0;
}

/* ---- Reference loops (exact, every compute type) ------------------------ */

/* C[b][i][j] = sum_p A[b][i][p] * B[b][p][j], sequential in p. Integers
 * multiply and add modulo 2^64 (unsigned arithmetic, so no UB); the store
 * truncates to the result width, which gives XLA's wrap-around. */
#define DEFINE_REF(SUF, T, MUL)                                                            \
  static void ref_##SUF(const View *a, const View *b, int64_t nb, int64_t m, int64_t n,    \
                        int64_t k, T *c) {                                                 \
    const T *A = a->p, *B = b->p;                                                          \
    for (int64_t bi = 0; bi < nb; bi++)                                                    \
      for (int64_t i = 0; i < m; i++)                                                      \
        for (int64_t j = 0; j < n; j++) {                                                  \
          T acc = 0;                                                                       \
          const T *ap = A + bi * a->bs + i * a->rs, *bp = B + bi * b->bs + j * b->cs;      \
          for (int64_t p = 0; p < k; p++) {                                                \
            T av = ap[p * a->cs], bv = bp[p * b->rs];                                      \
            acc = acc + (MUL);                                                             \
          }                                                                                \
          c[(bi * m + i) * n + j] = acc;                                                   \
        }                                                                                  \
  }
DEFINE_REF(f32, float, av * bv)
DEFINE_REF(f64, double, av * bv)
DEFINE_REF(c64, float complex, av * bv)
DEFINE_REF(c128, double complex, av * bv)
DEFINE_REF(u64, uint64_t, av * bv)

/* ---- The kernel --------------------------------------------------------- */

int hlk_dot_run(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out,
                bool force_ref) {
  const HliValue *lv = in[0], *rv = in[1];
  const HloDotDims *dn = &ins->dot;
  Roles l, r;
  roles_of(lv->rank, &dn->lhs_batch, &dn->lhs_contracting, &l);
  roles_of(rv->rank, &dn->rhs_batch, &dn->rhs_contracting, &r);
  int64_t nb = extent(lv->dims, l.batch, l.nbatch), m = extent(lv->dims, l.free, l.nfree);
  int64_t n = extent(rv->dims, r.free, r.nfree), k = extent(lv->dims, l.contract, l.ncontract);
  if (out->nelem == 0) return 0;
  HloDtype to = out->dtype;
  HlkCType ct = hlk_ctype_for(to);
  View a, b;
  if (make_view(x, ins, lv, to, l.batch, l.nbatch, l.free, l.nfree, l.contract, l.ncontract, &a))
    return -1;
  if (make_view(x, ins, rv, to, r.batch, r.nbatch, r.contract, r.ncontract, r.free, r.nfree, &b)) {
    free(a.owned);
    return -1;
  }
  /* Results already in the compute type are written in place. */
  bool direct = (ct == HLK_CT_F32 && to == HLO_F32) || (ct == HLK_CT_F64 && to == HLO_F64) ||
                (ct == HLK_CT_C64 && to == HLO_C64) || (ct == HLK_CT_C128 && to == HLO_C128);
  void *c = direct ? out->data : malloc((size_t)out->nelem * hlk_ctype_size(ct));
  int rc = 0;
  if (!c) {
    rc = hli_fail(x, ins, "out of memory for the dot result");
  } else if ((ct == HLK_CT_F32 || ct == HLK_CT_F64) && !force_ref) {
    HlkGemm g = { .batch = nb, .m = m, .n = n, .k = k,
                  .a = a.p, .a_bs = a.bs, .a_rs = a.rs, .a_cs = a.cs,
                  .b = b.p, .b_bs = b.bs, .b_rs = b.rs, .b_cs = b.cs,
                  .c = c, .c_bs = m * n, .ldc = n };
    rc = ct == HLK_CT_F32 ? hlk_gemm_f32(x, &g) : hlk_gemm_f64(x, &g);
    if (rc) hli_fail(x, ins, "matrix multiply failed");
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
    if (rc == 0) hlk_store_ctype(to, c, out->nelem, out->data);
    free(c);
  }
  free(a.owned);
  free(b.owned);
  return rc;
}

static int dot_run(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  return hlk_dot_run(x, ins, in, out, false);
}

static int conv_run(HliExec *x, const HloInstr *ins, HliValue *const *in, HliValue *out) {
  return hlk_conv_run(x, ins, in, out, false);
}

void hli_register_dot_conv(HliOpTable t) {
  t[HLO_OP_DOT] = (HliOpEntry){ .run = dot_run, .check = hlk_dot_check };
  t[HLO_OP_CONVOLUTION] = (HliOpEntry){ .run = conv_run, .check = hlk_conv_check };
}
